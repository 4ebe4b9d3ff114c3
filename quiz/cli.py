"""``aml-quiz``: the Textual app, ``--plain`` line prompts, or ``--check`` (prove the bank)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .errors import QuizError


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"a session has at least 1 question, not {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aml-quiz",
        description="Train for the exam's questions on Azure ML training jobs, sweeps, distributed "
                    "training, pipelines and schedules, with answers amllab itself proves.")
    parser.add_argument("--check", action="store_true",
                        help="load the bank and run every question's machine check; print the counts, the fairness "
                             "figures and what each kind of check proves; exit 1 if any fails")
    parser.add_argument("--plain", action="store_true",
                        help="line-based prompts instead of the full-screen app (screen readers, dumb terminals)")
    parser.add_argument("--mode", choices=("practice", "exam", "review", "drill", "missed", "custom"),
                        help="start this mode directly (with --plain, or to skip the home screen)")
    parser.add_argument("--domain", help="the domain for drill mode (assets, command, tracking, sweep, distributed, pipeline, "
                                         "schedule)")
    parser.add_argument("--count", type=_positive, metavar="N",
                        help="questions in a session, at least 1 (exam default 40)")
    parser.add_argument("--data-dir", type=Path, metavar="DIR",
                        help="where progress is kept (default: the user data directory)")
    parser.add_argument("--reset-damaged-progress", action="store_true",
                        help="if the progress database is damaged, move it aside (progress.sqlite3.damaged-<UTC "
                             "time>, with its -wal and -shm files) and start fresh without asking")
    parser.add_argument("--bank", type=Path, action="append", metavar="PATH",
                        help="a bank file or folder instead of the built-in bank (repeatable)")
    parser.add_argument("-v", "--verbose", action="store_true", help="with --check: one line per check")
    parser.add_argument("--import", dest="import_file", type=Path, metavar="FILE",
                        help="check a file of your own cards (the bank's format; any source) and add it to your "
                             "questions, kept in the data folder")
    parser.add_argument("--fit", action="store_true",
                        help="fit the spaced-repetition scheduler (FSRS) to your own answers, from 512 spaced "
                             "answers on (needs torch and pandas: amllab[quiz,run])")
    parser.add_argument("--retention", type=float, metavar="R",
                        help="the recall the schedule aims for, 0.7-0.97 (FSRS's default 0.9): higher reviews "
                             "sooner and more often")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.check:
            return run_check(args.bank, verbose=args.verbose)
        if args.import_file or args.fit or args.retention is not None:
            return settings(args)
        from . import session_runner

        return session_runner.start(args)
    except QuizError as error:
        sys.stderr.write(f"aml-quiz: error: {error}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("\naml-quiz: stopped; every answer given so far is saved\n")
        return 130
    except BrokenPipeError:
        # The reader went away (`aml-quiz --plain | head`): nothing more can be shown; every
        # answer given is saved. Python would report the pipe again when it flushes at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def settings(args: argparse.Namespace) -> int:
    """--import, --fit, --retention: change the learner's questions or scheduler, say what changed."""
    from .bank import import_cards, load_with_cards
    from .fitting import describe, fit, set_retention
    from .store import Progress, default_data_dir

    folder = args.data_dir or default_data_dir()
    if args.import_file:
        cards = import_cards(args.import_file, folder)
        print(f"imported {len(cards)} card{'' if len(cards) == 1 else 's'} from {args.import_file}; every mode "
              f"asks them now (kept in {folder / 'cards'})")
    progress = Progress(folder, reset_damaged=args.reset_damaged_progress)
    try:
        if args.retention is not None:
            set_retention(progress, args.retention)
        if args.fit:
            fitted = fit(progress, load_with_cards(folder))
            print(f"fitted FSRS's {len(fitted.parameters)} parameters to your {fitted.reviews} answers "
                  f"({fitted.cards} questions)")
        print(describe(progress))
    finally:
        progress.close()
    return 0


CHECK_PROVES = {
    "lint": "aml-lint's verdict on the question's YAML",
    "lint_options": "aml-lint's verdict on each option's YAML",
    "grid_size": "the search-space model aml-lint and aml-run share counts the configurations",
    "next_fires": "the trigger calculator lists the fire times",
    "pipeline_order": "the validator's pipeline graph orders the steps",
    "scenario": "the claim is among a lab's expectations, which the test suite proves by running the lab "
                "(--check does not run labs)",
}


def run_check(paths: list[Path] | None, *, verbose: bool = False, out=None) -> int:
    """Load the bank, run every machine check, print what the bank holds and what each check proved."""
    from .bank import DOMAINS, EVIDENCE, TOPICS, TYPES, counts, load_bank
    from .checks import run_checks
    from .fairness import report

    out = out or sys.stdout
    bank = load_bank(paths)
    results = run_checks(bank)
    for result in results:
        if result.status == "failed" or verbose:
            out.write(f"{result.where}: {result.kind} {result.status.upper()}: {result.detail}\n")
    questions = bank.questions
    by_domain = counts(questions, "domain")
    by_type = counts(questions, "type")
    by_topic = counts(questions, "topic")
    by_evidence = counts(questions, "evidence")
    out.write(f"{len(bank)} questions: "
              + ", ".join(f"{d} {by_domain[d]}" for d in DOMAINS if d in by_domain) + "\n")
    out.write("by type: " + ", ".join(f"{t} {by_type[t]}" for t in TYPES if t in by_type) + "\n")
    groups = bank.groups()
    for kind, label in (("series", "yes/no series"), ("case", "case studies")):
        members = [g for g in groups.values() if g[0].group is not None and g[0].group.kind == kind]
        if members:
            out.write(f"{label}: {len(members)} ({sum(len(g) for g in members)} questions)\n")
    if any(t in by_topic for t in TOPICS):
        out.write("by topic: " + ", ".join(f"{t} {by_topic[t]}" for t in TOPICS if t in by_topic) + "\n")
    out.write("by evidence: " + ", ".join(f"{e} {by_evidence[e]} ({EVIDENCE[e]})" for e in EVIDENCE
                                         if e in by_evidence) + "\n")
    arithmetic = {d: sum(q.arithmetic for q in bank.in_domain(d)) for d in DOMAINS if by_domain.get(d)}
    out.write("arithmetic: " + ", ".join(f"{d} {n}/{by_domain[d]}" for d, n in arithmetic.items()) + "\n")
    pages = {source for q in questions for source in q.sources}
    out.write(f"sources: every question cites one or more; {len(pages)} distinct\n")
    for line in report(questions):
        out.write(f"fairness: {line}\n")
    by_status = {status: [r for r in results if r.status == status] for status in ("passed", "failed", "skipped")}
    out.write(f"machine checks: {len(by_status['passed'])} passed, {len(by_status['failed'])} failed, "
              f"{len(by_status['skipped'])} skipped; they prove amllab agrees with the answer, not that the "
              "service does (the sources do)\n")
    kinds = counts([r for r in results if r.status == "passed"], "kind")
    for kind, proves in CHECK_PROVES.items():
        if kind in kinds:
            out.write(f"  {kind} {kinds[kind]}: {proves}\n")
    skipped_labs = sorted({r.detail.split("'")[1] for r in by_status["skipped"] if "'" in r.detail})
    if skipped_labs:
        out.write(f"  labs not runnable yet: {', '.join(skipped_labs)}\n")
    return 1 if by_status["failed"] else 0
