"""`aml-lint`: the command-line face of the validator.

Exit codes: 0 no errors; 1 errors found (or warnings, with --strict); 2 usage, configuration
or internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, Sequence

from . import __version__

if TYPE_CHECKING:
    from .config import Config
    from .engine import LintResult

EPILOG = """\
examples:
  aml-lint jobs/                     lint every Azure ML spec under jobs/
  aml-lint --format sarif . > a.sarif
  cat job.yml | aml-lint - --stdin-filename jobs/job.yml
  aml-lint --explain AML101          what a rule checks, with a bad and a good example
  aml-lint --write-baseline b.json . record today's findings in b.json, then
  aml-lint --baseline b.json .       report only the findings not recorded there
  aml-lint --diff jobs/              show what --fix would change, change nothing
  aml-lint --fix jobs/               apply the safe fixes in place, then report what is left

configuration: [tool.amllab.lint] in pyproject.toml (select, ignore, per-file-ignores,
warnings-as-errors, max-file-size, baseline); inline: `# amllab: ignore[AML101]`,
`# amllab: ignore-file`.
"""


def _codes(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [c.strip().upper() if c.strip().upper() != "ALL" else "ALL" for c in text.split(",") if c.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aml-lint", description="Strict, offline checker for Azure ML v2 job, component and "
        "schedule YAML.", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="files or directories (default: .); '-' reads standard input")
    parser.add_argument("--format", choices=("text", "json", "github", "sarif"),
                        help="output format (default: text, or github (workflow annotations) when "
                             "GITHUB_ACTIONS=true; sarif is SARIF 2.1.0)")
    parser.add_argument("--select", metavar="CODES",
                        help="only these codes or prefixes, comma-separated (AML3, AML301, ALL)")
    parser.add_argument("--extend-select", metavar="CODES", help="add codes to the configured selection")
    parser.add_argument("--ignore", metavar="CODES", help="skip these codes or prefixes")
    parser.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    parser.add_argument("--fix", action="store_true",
                        help="apply safe fixes in place (edits at each finding; comments and "
                             "formatting elsewhere are kept), then report what remains; with '-', "
                             "print the fixed text")
    parser.add_argument("--unsafe-fixes", action="store_true",
                        help="with --fix or --diff: also apply fixes that change a value's meaning "
                             "(the closest allowed value for an invalid one)")
    parser.add_argument("--diff", action="store_true",
                        help="print a unified diff of what --fix would change and write nothing "
                             "(exit 1 when there is a diff)")
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="read [tool.amllab.lint] from FILE instead of the nearest pyproject.toml")
    parser.add_argument("--isolated", action="store_true", help="ignore configuration files")
    parser.add_argument("--stdin-filename", metavar="PATH",
                        help="with '-': the path to report, and to resolve relative paths from")
    parser.add_argument("--max-file-size", type=int, metavar="BYTES", help="largest file to read (default: 1 MiB)")
    parser.add_argument("--workspace", type=Path, metavar="DIR",
                        help="a local aml-run workspace: referenced data, environments, components "
                             "and computes must be registered there, and AML805 says how to register "
                             "what is missing (default: $AMLLAB_WORKSPACE)")
    adopting = parser.add_mutually_exclusive_group()
    adopting.add_argument("--baseline", type=Path, metavar="FILE",
                          help="report only the findings not recorded in FILE, a baseline written by "
                               "--write-baseline (default: `baseline` in the configuration)")
    adopting.add_argument("--write-baseline", type=Path, metavar="FILE",
                          help="record this run's findings in FILE instead of reporting them, and "
                               "exit 0; writing it again drops the findings fixed since")
    adopting.add_argument("--no-baseline", action="store_true",
                          help="report every finding, also those the configured baseline records")
    parser.add_argument("-j", "--jobs", type=int, default=0, metavar="N",
                        help="worker processes for large trees, one per 250 files (default: up to one per core)")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour in text output (auto: on a terminal, when NO_COLOR is unset)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also show info findings, and which files were checked or skipped, and why")
    parser.add_argument("--explain", metavar="CODE",
                        help="print a rule's documentation (a bad and a good example) and exit")
    parser.add_argument("--list-rules", action="store_true", help="list every rule and exit")
    parser.add_argument("--lsp", action="store_true",
                        help="run as a language server over standard input and output, for editors "
                             "(needs the lsp extra: pip install 'amllab[lsp]')")
    parser.add_argument("--version", action="version", version=f"aml-lint {__version__}",
                        help="print the version and exit")
    return parser


def _collect_garbage_less_often() -> None:
    """A lint run allocates hundreds of thousands of objects (YAML nodes, syntax trees) and frees
    them all at exit; the default collector walks them every 700 allocations, about a tenth of
    the run. Collect less often, as mypy does."""
    import gc

    gc.set_threshold(200_000, 30, 30)


def _freeze_what_is_imported() -> None:
    """Leave the objects of the imported modules out of later collections (they live until exit),
    which also keeps forked workers from copying the pages a collection would touch."""
    import gc

    gc.freeze()


def main(argv: Sequence[str] | None = None) -> int:
    """aml-lint on ``argv`` (default: the command line); returns the exit status."""
    return _main(argv, as_program=False)


def run() -> NoReturn:
    """The ``aml-lint`` program: :func:`main` on the command line, tuned for one short process
    (fewer garbage collections), and a fast exit: the output is flushed and the process ends
    without freeing every object one by one, which took 13 ms of a 350 ms run (mypy's
    ``--fast-exit`` does the same). Nothing else needs cleaning up: the worker pool has ended."""
    _collect_garbage_less_often()
    status = _main(None, as_program=True)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):
            pass  # the reader left (`aml-lint . | head`): not an error of ours
    os._exit(status)


def _main(argv: Sequence[str] | None, as_program: bool) -> int:
    for stream in (sys.stdout, sys.stderr):
        # A file name that is not valid UTF-8 (os.fsdecode keeps its bytes as surrogates) must
        # not end the run under a strict UTF-8 locale; the reports print such names escaped.
        try:
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            pass  # not a text stream of ours (a test's StringIO)
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return _run(args, parser, as_program)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `aml-lint . | head`: the reader left; that is not an error of ours.
        sys.stderr = open(os.devnull, "w")
        return 0


def _present(path: str) -> bool:
    """Whether ``path`` names something: a path inside a folder that cannot be read is present
    (linting it says why it cannot be read), one that does not exist is not."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return True


def _fail(message: str) -> int:
    sys.stderr.write(f"aml-lint: error: {message}\n")
    return 2


def _serve_lsp() -> int:
    try:
        from .lsp.server import serve  # pygls: only on this path, never for a plain lint
    except ImportError as error:
        missing = (error.name or "pygls").split(".")[0]
        return _fail(f"--lsp needs the lsp extra ({missing} is missing): pip install 'amllab[lsp]'")
    return serve()


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser, as_program: bool = False) -> int:
    from . import config as config_module
    from .diagnostic import Severity
    from .engine import LintResult, lint_bytes, lint_paths
    from .errors import AmllabError
    from .rules import CODES
    from . import report

    if as_program:
        _freeze_what_is_imported()

    if args.lsp:
        return _serve_lsp()

    if args.list_rules:
        from .rules import RULES  # every family, for their documentation

        for code, rule in RULES.items():
            print(f"{code}  {rule.name:<28} {str(rule.severity):<8} {rule.summary}")
        return 0
    if args.explain:
        from .rules import RULES

        code = args.explain.strip().upper()
        rule = RULES.get(code)
        if rule is None:
            from .suggest import closest

            close = closest(code, RULES, cutoff=0.8)
            return _fail(f"unknown rule code '{args.explain}'" + (f"; did you mean {close}?" if close else "")
                         + " (aml-lint --list-rules shows them all)")
        sys.stdout.write(rule.explain())
        return 0

    try:
        if args.isolated:
            config = config_module.Config()
        else:
            config = config_module.load(Path.cwd(), CODES, args.config)
        overrides = {}
        for flag in ("select", "ignore", "extend_select"):
            codes = _codes(getattr(args, flag))
            if codes is not None:
                # Validate like the configuration file, so a typo gets one clear message.
                config_module._codes(codes, "--" + flag.replace("_", "-"), Path("command line"), CODES)
                overrides[flag] = tuple(codes)
        if "extend_select" in overrides:
            overrides["select"] = tuple(overrides.get("select", config.select)) + overrides.pop("extend_select")
        if args.strict:
            overrides["warnings_as_errors"] = ("ALL",)
        workspace_folder = args.workspace or (Path(os.environ["AMLLAB_WORKSPACE"])
                                              if os.environ.get("AMLLAB_WORKSPACE") else None)
        if workspace_folder is not None:
            from .workspace import load_registry

            load_registry(workspace_folder)  # a missing or broken workspace is a usage error
            overrides["workspace"] = workspace_folder
        if args.max_file_size is not None:
            if args.max_file_size <= 0:
                return _fail("--max-file-size must be a positive number of bytes")
            overrides["max_file_size"] = args.max_file_size
        config = config.with_overrides(**overrides)

        # The baseline is read before the lint, so that a bad one fails at once.
        baseline = None
        if args.write_baseline:
            from . import baseline as baselines

            baselines.read_previous(args.write_baseline, baselines.size_limit(config))
        elif not args.no_baseline and (args.baseline or config.baseline):
            from . import baseline as baselines

            baseline = baselines.load(args.baseline or config.baseline, baselines.size_limit(config))

        paths = args.paths or ["."]
        if "-" in paths:
            if len(paths) > 1:
                return _fail("'-' (standard input) cannot be combined with other paths")
            display = args.stdin_filename or "<stdin>"
            base = Path(args.stdin_filename).parent if args.stdin_filename else Path.cwd()
            from .loader import read_stream_limited

            # At most the limit and one byte: `aml-lint - </dev/zero` must not fill the memory.
            raw = read_stream_limited(sys.stdin.buffer, config.max_file_size)
            result = LintResult([lint_bytes(raw, display, config, base)])
            if args.fix or args.diff:
                from .fixes import fix_stdin

                return fix_stdin(raw, result, config, unsafe=args.unsafe_fixes, diff=args.diff,
                                 verbose=args.verbose)
        else:
            missing = [p for p in paths if not _present(p)]
            if missing:
                return _fail(f"no such file or directory: {missing[0]}")
            jobs = args.jobs or (os.cpu_count() or 1)
            result = lint_paths(paths, config, jobs=jobs)
    except AmllabError as error:
        return _fail(str(error))

    for sentence in result.unreadable:
        sys.stderr.write(report.printable(f"aml-lint: warning: {sentence}") + "\n")
    fixed = fixing = None
    if args.fix or args.diff:
        # Fixed first: a baseline then records, or hides, what the fixes left.
        from .fixes import fix_paths

        fixing = fix_paths(result, config, unsafe=args.unsafe_fixes, diff=args.diff, within=paths)
        fixed = fixing.fixed
        if args.diff:
            return 1 if fixed else 0
    if args.write_baseline:
        status = _write_baseline(args.write_baseline, result, config)
        return 2 if fixing is not None and fixing.unwritable else status
    if baseline is not None:
        match = baselines.apply(baseline, result, config)
        result.baselined = (match.suppressed, match.stale)
    floor = Severity.INFO if args.verbose else Severity.WARNING
    shown = [d for d in result.diagnostics if d.severity >= floor]
    fmt = args.format or report.default_format()
    out = sys.stdout
    if fmt == "text":
        color = args.color == "always" or (args.color == "auto" and out.isatty()
                                           and "NO_COLOR" not in os.environ)
        report.write_text(result, shown, out, color=color, verbose=args.verbose)
    elif fmt == "json":
        report.write_json(result, shown, out)
    elif fmt == "github":
        report.write_github(shown, out)
        sys.stderr.write(report.summary(result, shown) + "\n")
    else:
        report.write_sarif(shown, out)
        if result.baselined is not None:  # SARIF has no summary: say what the baseline hid
            sys.stderr.write(report.summary(result, shown) + "\n")
    out.flush()
    if fixed is not None:
        sys.stderr.write(f"Fixed {fixed} finding{'' if fixed == 1 else 's'} ({len(shown)} remaining).\n")
    elif any(d.fix is not None for d in shown):
        from .fixes import fixable_notice

        sys.stderr.write(fixable_notice(shown, args.unsafe_fixes))

    if result.internal_errors or (fixing is not None and fixing.unwritable):
        return 2  # a file --fix could not write is not a pass, whatever its findings
    return 1 if any(d.severity is Severity.ERROR for d in result.diagnostics) else 0


def _write_baseline(file: Path, result: "LintResult", config: "Config") -> int:
    from . import baseline as baselines
    from .errors import UsageError

    try:
        # Read again under its lock, merged and written: another run may have written it since.
        written = baselines.write(file, result, config)
    except UsageError as error:
        return _fail(str(error))
    except OSError as error:
        return _fail(f"{file}: cannot write the baseline: {error.strerror or error}")
    change = ("a new baseline" if written.new
              else f"{written.added} new, {written.dropped} fixed or gone dropped")
    sys.stderr.write(f"aml-lint: {_plural(written.entries, 'finding')} recorded in {file} ({change}); "
                     f"`aml-lint --baseline {file}` reports only findings not recorded there\n")
    if result.internal_errors:
        sys.stderr.write("aml-lint: error: amllab failed on some files, and a failure is never recorded: "
                         "run without --write-baseline to see it\n")
        return 2
    return 0


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"
