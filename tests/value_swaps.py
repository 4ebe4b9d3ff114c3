"""Typed-value swaps for the linter's robustness test (tests/validator/test_value_swaps.py) and its
exhaustive run (tools/value_swaps.py): every value of every valid fixture and golden case
replaced, one at a time, by a value of another type, then linted. A rule that assumes a type
crashes there, and the engine turns the crash into an AML000 internal error."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

import yaml

from validator.config import Config
from validator.engine import FileReport, lint_text

ROOT = Path(__file__).resolve().parent.parent

# One of each type a YAML value can take, plus the strings that make path handling fail
# (a name over the file system's 255-byte limit, `..`, odd characters).
SWAPS: tuple[Any, ...] = (
    [], {}, None, 0, -1, 1.5, True, "", "x" * 300, "../..//odd name\t*?[]{}$%:\\~'\"\u00e9",
    [{"a": [{"b": 1}], "type": "uri_file"}, {"path": ["x"]}],
)


def source_files() -> list[Path]:
    """The valid fixtures and the golden cases that parse as one mapping."""
    found = sorted((ROOT / "tests" / "fixtures").rglob("*.y*ml")) + sorted((ROOT / "tests" / "golden").rglob("*.y*ml"))
    # The loader's own limits (alias bombs, nesting, size) are AML007/AML009's golden cases, not
    # values for rules: those folders are left out.
    # A golden case's `.fixed.yml` (what --fix makes of it) adds nothing the case does not have.
    return [p for p in found if p.suffix in (".yml", ".yaml") and p.parent.name not in ("AML007", "AML009")
            and not p.name.endswith(".fixed.yml") and isinstance(_load(p), dict)]


@lru_cache(maxsize=None)
def _load(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError, UnicodeDecodeError, ValueError):
        return None


def value_paths(data: Any, where: tuple = ()) -> Iterator[tuple]:
    """Every path to a value (not the root) in ``data``, parents before children."""
    if isinstance(data, dict):
        items: Any = data.items()
    elif isinstance(data, list):
        items = enumerate(data)
    else:
        return
    for key, value in items:
        yield where + (key,)
        yield from value_paths(value, where + (key,))


def swapped(data: Any, where: tuple, value: Any) -> Any:
    """A copy of ``data`` with the value at ``where`` replaced by ``value``."""
    if not where:
        return value
    head, rest = where[0], where[1:]
    if isinstance(data, dict):
        copy: Any = dict(data)
    else:
        copy = list(data)
    copy[head] = swapped(data[head], rest, value)
    return copy


def cases() -> Iterator[tuple[Path, tuple, int]]:
    """(file, path, index into SWAPS) for every swap: the exhaustive list."""
    for path in source_files():
        for where in value_paths(_load(path)):
            for index in range(len(SWAPS)):
                yield path, where, index


def lint_swap(path: Path, where: tuple, index: int) -> tuple[str, FileReport]:
    """Lint ``path`` with the value at ``where`` swapped for ``SWAPS[index]``, as if the file
    sat where ``path`` does (its references resolve), and return the text linted and the report."""
    text = yaml.safe_dump(swapped(_load(path), where, SWAPS[index]), sort_keys=False, allow_unicode=True)
    shown = path.relative_to(ROOT).as_posix()
    return text, lint_text(text, shown, Config(root=ROOT), base_dir=path.parent)


def crashes(report: FileReport) -> list[str]:
    """The internal errors in ``report`` (what no input may cause)."""
    return [d.message for d in report.diagnostics if d.code == "AML000" and "internal error" in d.message]
