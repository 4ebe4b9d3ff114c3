"""The valid fixture set (written from shared/SPEC.md and the public docs' examples) lints
clean, and specs in the patterns Microsoft's own examples use get no error."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT
from validator.diagnostic import Severity
from validator.engine import lint_file
from validator.kinds import KINDS

VALID = ROOT / "tests" / "fixtures" / "valid"
ACCEPTED = ROOT / "tests" / "fixtures" / "accepted"
VALID_FILES = sorted(VALID.rglob("*.yml"))
TOP_LEVEL = [p for p in VALID_FILES if p.parent.parent == VALID]


def test_fixture_set_covers_every_kind_with_at_least_40_specs() -> None:
    per_kind = {kind: len([p for p in TOP_LEVEL if p.parent.name == kind]) for kind in KINDS}
    assert all(count >= 6 for count in per_kind.values()), per_kind
    assert sum(per_kind.values()) >= 40, per_kind


@pytest.mark.parametrize("path", VALID_FILES, ids=lambda p: p.relative_to(VALID).as_posix())
def test_valid_fixture_is_clean(path: Path) -> None:
    """Clean means no error and no warning; an info line (a fact such as "serverless") is fine."""
    report = lint_file(path)
    assert [d for d in report.diagnostics if d.severity >= Severity.WARNING] == []
    if path in TOP_LEVEL:
        assert report.kind == path.parent.name


ACCEPTED_FILES = sorted(p for p in ACCEPTED.glob("*.yml"))


@pytest.mark.parametrize("path", ACCEPTED_FILES, ids=lambda p: p.name)
def test_service_accepted_pattern_has_no_error(path: Path) -> None:
    """Patterns that Microsoft's own examples use and the service runs (tests/fixtures/accepted/
    README.md cites each): an error on one is a bug of ours. A warning, such as the deprecated
    `{search_space.lr}` form the SDK's own tests use, is fair."""
    report = lint_file(path)
    assert report.kind is not None, report.skipped
    assert [d for d in report.diagnostics if d.severity is Severity.ERROR] == []
