"""Shared by the golden tests and their update mode: lint one case exactly as
`aml-lint --isolated --color never <case>` prints it from the repository root."""

from __future__ import annotations

import io
import shlex
from pathlib import Path

from validator.config import Config
from validator.diagnostic import Severity
from validator.engine import LintResult, lint_file
from validator.fixes import FixResult, fix_report
from validator.report import write_text

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"


# Beside a fixable case `fail_x.yml`, `fail_x.fixed.yml` holds what `aml-lint --fix` makes of it
# (tests/validator/test_fixes.py): an expected result, not a case of its own.
FIXED_SUFFIX = ".fixed.yml"


def is_fixed_file(path: Path) -> bool:
    return path.name.endswith(FIXED_SUFFIX)


def fixed_file(case: Path) -> Path:
    """Where the expected result of fixing ``case`` is kept."""
    return case.with_name(case.name[: -len(case.suffix)] + FIXED_SUFFIX)


# A case is a YAML spec, or Python source building jobs with the SDK v2 (a file or a notebook)
# right in a rule's folder: the Python below it (src/train.py) is what the specs run.
YAML_CASES = (".yml", ".yaml")
PYTHON_CASES = (".py", ".ipynb")


def case_files(folder: Path = GOLDEN) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if not is_fixed_file(p) and (
        p.suffix in YAML_CASES or (p.suffix in PYTHON_CASES and p.parent.parent == GOLDEN)))


def case_config(case: Path) -> tuple[Config, list[str]]:
    """The configuration a case is linted with, and the arguments of its optional .args file
    (only -v, --max-file-size and --workspace, relative to the case's folder, are understood)."""
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
    return config, args


def fix_case(case: Path, unsafe: bool = False) -> FixResult | None:
    """What `aml-lint --isolated --fix [--unsafe-fixes] [ARGS] <case>` makes of a case (None:
    nothing to fix), without writing it."""
    config, _ = case_config(case)
    report = lint_file(case, config, display=case.relative_to(ROOT).as_posix())
    return fix_report(report, config, unsafe=unsafe, write=False, base_dir=case.parent)


def render(case: Path) -> str:
    """What `aml-lint --isolated --color never [ARGS] <case>` prints, ARGS from its .args file."""
    config, args = case_config(case)
    verbose = "-v" in args
    relative = case.relative_to(ROOT).as_posix()
    report = lint_file(case, config, display=relative)
    floor = Severity.INFO if verbose else Severity.WARNING
    shown = [d for d in report.diagnostics if d.severity >= floor]
    out = io.StringIO()
    write_text(LintResult([report]), shown, out, color=False, verbose=verbose)
    return out.getvalue()
