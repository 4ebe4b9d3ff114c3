"""Shared by the golden tests and their update mode: lint one case exactly as
`aml-lint --isolated --color never <case>` prints it from the repository root."""

from __future__ import annotations

import io
import shlex
from pathlib import Path

from validator.config import Config
from validator.diagnostic import Severity
from validator.engine import LintResult, lint_file
from validator.report import write_text

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"


def case_files() -> list[Path]:
    return sorted(p for p in GOLDEN.rglob("*") if p.suffix in (".yml", ".yaml"))


def render(case: Path) -> str:
    """What `aml-lint --isolated --color never [ARGS] <case>` prints, where ARGS come from an
    optional <case>.args file (only -v, --max-file-size and --workspace, relative to the case's
    folder, are understood)."""
    config = Config(root=ROOT)
    args: list[str] = []
    args_file = case.with_suffix(".args")
    if args_file.exists():
        args = shlex.split(args_file.read_text())
        if "--max-file-size" in args:
            config = config.with_overrides(max_file_size=int(args[args.index("--max-file-size") + 1]))
        if "--workspace" in args:
            folder = case.parent / args[args.index("--workspace") + 1]
            config = config.with_overrides(workspace=folder.relative_to(ROOT))
    verbose = "-v" in args
    relative = case.relative_to(ROOT).as_posix()
    report = lint_file(case, config, display=relative)
    floor = Severity.INFO if verbose else Severity.WARNING
    shown = [d for d in report.diagnostics if d.severity >= floor]
    out = io.StringIO()
    write_text(LintResult([report]), shown, out, color=False, verbose=verbose)
    return out.getvalue()
