"""Generated artefacts are committed, and must match their generators."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT


def test_schemas_are_up_to_date() -> None:
    result = subprocess.run([sys.executable, "tools/build_schemas.py", "--check"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout


def test_rules_doc_is_up_to_date() -> None:
    result = subprocess.run([sys.executable, "tools/build_docs.py", "--check"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout


def test_schemas_are_valid_draft_2020_12() -> None:
    from jsonschema import Draft202012Validator

    from validator.kinds import KINDS
    from validator.schema_check import load_schema

    for kind in KINDS:
        Draft202012Validator.check_schema(load_schema(kind))
