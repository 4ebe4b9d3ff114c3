"""``aml-quiz``: the Textual app, ``--plain`` line prompts, or ``--check`` (prove the bank)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .errors import QuizError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aml-quiz",
        description="Train for the exam's questions on Azure ML training jobs, sweeps, distributed "
                    "training, pipelines and schedules, with answers amllab itself proves.")
    parser.add_argument("--check", action="store_true",
                        help="load the bank and run every question's machine check; exit 1 if any fails")
    parser.add_argument("--plain", action="store_true",
                        help="line-based prompts instead of the full-screen app (screen readers, dumb terminals)")
    parser.add_argument("--mode", choices=("practice", "exam", "review", "drill", "missed"),
                        help="start this mode directly (with --plain, or to skip the home screen)")
    parser.add_argument("--domain", help="the domain for drill mode (command, sweep, distributed, pipeline, "
                                         "schedule, cli_sdk)")
    parser.add_argument("--count", type=int, help="questions in a session (exam default 40)")
    parser.add_argument("--data-dir", type=Path,
                        help="where progress is kept (default: the user data directory)")
    parser.add_argument("--reset-damaged-progress", action="store_true",
                        help="if the progress database is damaged, move it aside (progress.sqlite3.damaged-<time>) "
                             "and start fresh without asking")
    parser.add_argument("--bank", type=Path, action="append",
                        help="a bank file or folder instead of the built-in bank (repeatable)")
    parser.add_argument("-v", "--verbose", action="store_true", help="with --check: one line per check")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.check:
            return run_check(args.bank, verbose=args.verbose)
        from . import session_runner

        return session_runner.start(args)
    except QuizError as error:
        sys.stderr.write(f"aml-quiz: error: {error}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("\naml-quiz: stopped; every answer given so far is saved\n")
        return 130


def run_check(paths: list[Path] | None, *, verbose: bool = False, out=None) -> int:
    from .bank import DOMAINS, TYPES, counts, load_bank
    from .checks import run_checks

    out = out or sys.stdout
    bank = load_bank(paths)
    results = run_checks(bank)
    for result in results:
        if result.status == "failed" or verbose:
            out.write(f"{result.where}: {result.kind} {result.status.upper()}: {result.detail}\n")
    by_status = {status: [r for r in results if r.status == status] for status in ("passed", "failed", "skipped")}
    by_domain = counts(bank.questions, "domain")
    by_type = counts(bank.questions, "type")
    out.write(f"{len(bank)} questions: "
              + ", ".join(f"{d} {by_domain[d]}" for d in DOMAINS if d in by_domain) + "\n")
    out.write("by type: " + ", ".join(f"{t} {by_type[t]}" for t in TYPES if t in by_type) + "\n")
    kinds: dict[str, int] = {}
    for result in by_status["passed"]:
        kinds[result.kind] = kinds.get(result.kind, 0) + 1
    out.write(f"machine-checked: {len(by_status['passed'])} passed"
              + (f" ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))})" if kinds else "")
              + f", {len(by_status['failed'])} failed, {len(by_status['skipped'])} skipped")
    skipped_labs = sorted({r.detail.split("'")[1] for r in by_status["skipped"] if "'" in r.detail})
    out.write(f" (labs not runnable yet: {', '.join(skipped_labs)})\n" if skipped_labs else "\n")
    return 1 if by_status["failed"] else 0
