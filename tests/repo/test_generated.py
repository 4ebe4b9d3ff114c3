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


def test_cli_doc_is_up_to_date() -> None:
    result = subprocess.run([sys.executable, "tools/build_cli_docs.py", "--check"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_command_line_argument_says_what_it_is_for() -> None:
    """docs/cli.md and `--help` show each argument's help: none of the three commands may leave one
    blank, and every group and verb of aml-run says what it does."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import build_cli_docs as cli_docs
    finally:
        sys.path.remove(str(ROOT / "tools"))
    for prog, parser in cli_docs.parsers().items():
        for words, leaf in cli_docs.leaves(parser):
            where = " ".join((prog, *words))
            if words:
                assert cli_docs._help_of(parser, words).strip(), f"{where} has no help"
            for action in cli_docs.arguments(leaf):
                assert (action.help or "").strip(), f"{where} {cli_docs.label(action)} has no help"


def test_schemas_are_valid_draft_2020_12() -> None:
    from jsonschema import Draft202012Validator

    from validator.kinds import KINDS
    from validator.schema_check import load_schema

    for kind in KINDS:
        Draft202012Validator.check_schema(load_schema(kind))
