"""Apply the fixes findings carry: ``aml-lint --fix``, ``--unsafe-fixes`` and ``--diff``, and the
API a language server uses for code actions.

A fix (:class:`validator.diagnostic.Fix`) is a few text edits at the finding's span, so the
rest of the file (comments, key order, quoting, line endings) is kept byte for byte. Safe fixes
keep what the spec means; unsafe ones change a value's meaning and are applied only on request.
One fix can reveal another finding (a key renamed into a mapping whose values were not checked
before), so :func:`fix_text` lints again after each pass, up to :data:`MAX_PASSES` passes.

For a language server::

    from validator.fixes import apply_fixes, fixes_for

    for diagnostic, fix in fixes_for(text, "job.yml"):          # each finding that has a fix
        ...  # offer fix.edits (1-based line/column, end exclusive) as a code action, titled fix.title
    fixed = apply_fixes(text, [diagnostic])                      # or apply them here

A server that already holds a file's diagnostics (from ``validator.lint_text``) reads each one's
``fix`` directly. Edit columns count characters (code points), as a Diagnostic's do; LSP counts
UTF-16 units by default, so convert where a line has characters outside the BMP.
"""

from __future__ import annotations

import difflib
import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from .config import Config
from .diagnostic import Diagnostic, Edit, Fix
from .edits import line_starts, line_text
from .engine import FileReport, LintResult, lint_file, lint_text
from .paths import FileChanged, content_digest, rewrite_file
from .report import printable

MAX_PASSES = 5

_BOM = "\ufeff"


@dataclass
class FixResult:
    """What fixing one text did: the new text, the findings fixed (over every pass) and the
    report of the fixed text."""

    text: str
    fixed: list[Diagnostic] = field(default_factory=list)
    report: FileReport | None = None
    original: str = ""

    @property
    def changed(self) -> bool:
        return self.text != self.original


def applicable(diagnostic: Diagnostic, unsafe: bool = False) -> bool:
    """Whether ``diagnostic`` has a fix that ``--fix`` (``unsafe``: with ``--unsafe-fixes``) applies."""
    return diagnostic.fix is not None and bool(diagnostic.fix.edits) and (unsafe or diagnostic.fix.safe)


def _offsets(text: str, starts: list[int], edit: Edit) -> tuple[int, int] | None:
    """(start, end) offsets of an edit, or None when it does not fit the text."""
    line, column, end_line, end_column, _ = edit
    first, last = line_text(text, starts, line), line_text(text, starts, end_line)
    if first is None or last is None or not 0 < column <= len(first) + 1 or not 0 < end_column <= len(last) + 1:
        return None
    start, end = starts[line - 1] + column - 1, starts[end_line - 1] + end_column - 1
    return (start, end) if start <= end else None


def _apply(text: str, diagnostics: Iterable[Diagnostic], unsafe: bool) -> tuple[str, list[Diagnostic]]:
    """``text`` with the fixes of ``diagnostics`` applied, and the diagnostics whose fix was.
    A fix whose edits overlap one already taken waits for the next pass (the text is linted
    again in between); a fix with the very same edits as one taken counts as applied."""
    starts = line_starts(text)
    taken: dict[tuple[int, int], str] = {}
    applied: list[Diagnostic] = []
    for diagnostic in sorted(diagnostics, key=lambda d: (d.line, d.column, d.code, d.message)):
        if not applicable(diagnostic, unsafe):
            continue
        assert diagnostic.fix is not None
        ranges = []
        for edit in diagnostic.fix.edits:
            span = _offsets(text, starts, edit)
            if span is None:
                break
            ranges.append((span, edit[4]))
        else:
            if all(taken.get(span) == new for span, new in ranges):
                applied.append(diagnostic)  # the same repair, found by two rules
                continue
            if any(_overlap(span, other) for span, _ in ranges for other in taken):
                continue
            taken.update(ranges)
            applied.append(diagnostic)
    for (start, end), new in sorted(taken.items(), reverse=True):
        text = text[:start] + new + text[end:]
    return text, applied


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    # Two insertions at one offset conflict too (their order would be a guess).
    return a[0] < b[1] and b[0] < a[1] or a == b or (a[0] == a[1] == b[0]) or (b[0] == b[1] == a[0])


def apply_fixes(text: str, diagnostics: Iterable[Diagnostic], unsafe: bool = False) -> str:
    """``text`` with the fixes of ``diagnostics`` (findings on that very text) applied: the safe
    ones, and with ``unsafe`` the unsafe ones too. Overlapping fixes: the first (by position)
    wins; :func:`fix_text` lints again and applies the rest."""
    return _apply(text, diagnostics, unsafe)[0]


def fixes_for(text: str, path: str = "<stdin>", config: Config | None = None,
              base_dir: Path | None = None) -> list[tuple[Diagnostic, Fix]]:
    """Each finding on ``text`` (linted as ``path``, relative paths resolved from ``base_dir``,
    default its folder) that carries a fix, safe or not, with that fix: what a language server
    offers as code actions. ``Fix.edits`` are (line, column, end_line, end_column, new_text),
    1-based, end exclusive, columns in characters; ``Fix.safe`` tells a quick fix from a change
    of meaning; ``Fix.title`` names it."""
    report = lint_text(text, path, config, base_dir)
    return [(d, d.fix) for d in report.diagnostics if d.fix is not None and d.fix.edits]


def fix_text(text: str, path: str = "<stdin>", config: Config | None = None,
             base_dir: Path | None = None, *, unsafe: bool = False,
             report: FileReport | None = None) -> FixResult:
    """Apply fixes to ``text`` until none is left (at most :data:`MAX_PASSES` passes); ``report``
    is its lint report when the caller has it already. A finding fixed once and found again is
    not fixed twice (its fix did not hold: a bug of ours, not a reason to loop)."""
    report = report if report is not None else lint_text(text, path, config, base_dir)
    result = FixResult(text, report=report, original=text)
    done: set[tuple[str, str, str]] = set()
    for _ in range(MAX_PASSES):
        # Only this file's findings: their edits are positions in this text.
        candidates = [d for d in report.diagnostics
                      if d.path == report.path and (d.code, d.pointer, d.message) not in done]
        new, applied = _apply(result.text, candidates, unsafe)
        if not applied or new == result.text:
            break
        done.update((d.code, d.pointer, d.message) for d in applied)
        result.fixed.extend(applied)
        result.text = new
        report = result.report = lint_text(new, path, config, base_dir)
    return result


def unified_diff(before: str, after: str, path: str) -> str:
    """A unified diff of one file, as ``--diff`` prints it (``--- path`` / ``+++ path``)."""
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=path, tofile=path))


def _read_as(report: FileReport) -> tuple[str, bool]:
    """The digest of the bytes a report's text was read from, and whether they start with a
    byte-order mark. Decoding is strict UTF-8 and drops one mark, so the text and the mark give
    back those very bytes. A report of :func:`~validator.engine.lint_text` does not say whether
    there was a mark: the file's first bytes are taken at their word."""
    assert report.text is not None
    bom = report.bom
    if bom is None:
        try:
            with open(report.path, "rb") as handle:
                bom = handle.read(len(_BOM.encode())) == _BOM.encode()
        except FileNotFoundError:
            raise FileChanged(f"{report.path} is gone") from None
    plain = report.text.encode("utf-8")
    return content_digest(_BOM.encode() + plain if bom else plain), bom


def write_fixed_text(path: Path, text: str, bom: bool = False, *, expected_digest: str | None = None) -> None:
    """Write a fixed ``text`` (UTF-8, its own line endings, after a byte-order mark with ``bom``)
    to the file at ``path``, as :func:`validator.paths.rewrite_file` does: through a symbolic
    link to its target, keeping the file's mode, owner and hard links, atomically where that
    keeps them; a file the user cannot write is refused (PermissionError). With
    ``expected_digest``, only while the file still holds the bytes of that digest
    (:class:`validator.paths.FileChanged` otherwise)."""
    rewrite_file(path, ((_BOM if bom else "") + text).encode("utf-8"), expected_digest=expected_digest)


def fix_report(report: FileReport, config: Config | None = None, *, unsafe: bool = False,
               write: bool = True, base_dir: Path | None = None) -> FixResult | None:
    """Fix the file a lint report is about (its text is the report's; relative paths in it are
    resolved from ``base_dir``, default the file's folder), and write it back when something
    changed and ``write``; None when nothing in it is fixable.

    The fixed text is made from the report's text, so it is written only while the file still
    holds the bytes that text was read from (compared by their SHA-256 just before the write):
    raises :class:`validator.paths.FileChanged` otherwise, and writes nothing. Raises OSError
    (PermissionError for a read-only file) when it cannot write."""
    if report.text is None or not any(applicable(d, unsafe) for d in report.diagnostics):
        return None
    path = Path(report.path)
    result = fix_text(report.text, report.path, config, base_dir or path.parent, unsafe=unsafe, report=report)
    if write and result.changed:
        digest, bom = _read_as(report)
        write_fixed_text(path, result.text, bom=bom, expected_digest=digest)
    return result


# ----------------------------------------------------------------------------- the command line
def fixable_notice(shown: list[Diagnostic], unsafe: bool = False) -> str:
    """The line after a report that says how many findings ``--fix`` would repair ("" if none)."""
    safe = sum(1 for d in shown if applicable(d))
    more = sum(1 for d in shown if applicable(d, unsafe=True)) - safe
    if not safe and not more:
        return ""
    if unsafe:
        return f"{safe + more} fixable with `aml-lint --fix --unsafe-fixes`.\n"
    text = f"{safe} fixable with `aml-lint --fix`" if safe else "none fixable with `aml-lint --fix`"
    if more:
        text += f" ({more} more with `--unsafe-fixes`)"
    return text + ".\n"


@dataclass
class FixSummary:
    """What ``aml-lint --fix`` (or ``--diff``) did over a run: findings fixed (or that would be),
    and files it could not write (read-only, a failed write: the run must not pass)."""

    fixed: int = 0
    unwritable: int = 0


def _outside(path: str, named: list[str]) -> str | None:
    """Where ``path`` really leads, when that is outside every path in ``named`` (real paths of
    the files and folders given on the command line); None when it is inside one."""
    real = os.path.realpath(path)
    for root in named:
        if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
            return None
    return real


def fix_paths(result: LintResult, config: Config, *, unsafe: bool = False, diff: bool = False,
              within: Iterable[str | Path] | None = None) -> FixSummary:
    """``aml-lint --fix`` / ``--diff`` over a lint result: fix each file that has fixes, and
    either write it and put its new report in ``result`` (``--fix``) or print its diff
    (``--diff``).

    ``within``: the paths named on the command line. A file is fixed only where it really is
    inside one of them: a symbolic link met in a named folder that leads out of it is reported
    with a warning and left alone (a folder's links are written through to a target inside
    the folders named; a file named itself is written through wherever it leads). A file that
    changed since it was linted is skipped with a warning (rewriting it from the old text would
    undo that change); one that cannot be written is an error. Neither counts as fixed."""
    named = [os.path.realpath(p) for p in within] if within is not None else None
    summary = FixSummary()
    written: set[str] = set()
    for index, report in enumerate(result.files):
        if report.text is None or not any(applicable(d, unsafe) for d in report.diagnostics):
            continue
        if not diff and os.path.realpath(report.path) in written:
            # The same file under a second name (a link beside it): fixed already, so its
            # report is of the old text; what is left is the fixed file's report.
            result.files[index] = lint_file(Path(report.path), config, display=report.path)
            continue
        if named is not None:
            real = _outside(report.path, named)
            if real is not None:
                sys.stderr.write(printable(f"aml-lint: warning: {report.path} not fixed: it is a link to {real}, "
                                           "outside the paths named on the command line; name the file itself "
                                           "to fix it") + "\n")
                continue
        try:
            outcome = fix_report(report, config, unsafe=unsafe, write=not diff)
        except FileChanged:
            sys.stderr.write(printable(f"aml-lint: warning: {report.path} not fixed: it changed while aml-lint "
                                       "ran; run aml-lint again") + "\n")
            continue
        except OSError as error:
            summary.unwritable += 1
            sys.stderr.write(printable(f"aml-lint: error: cannot write {report.path}: {_why_not(error, report.path)}")
                             + "\n")
            continue
        if outcome is None or not outcome.changed:
            continue
        summary.fixed += len(outcome.fixed)
        written.add(os.path.realpath(report.path))
        if diff:
            sys.stdout.write(unified_diff(outcome.original, outcome.text, report.path))
        elif outcome.report is not None:
            result.files[index] = outcome.report
    if diff:
        sys.stdout.flush()
        sys.stderr.write(f"Would fix {summary.fixed} finding{'' if summary.fixed == 1 else 's'}.\n")
    return summary


def _why_not(error: OSError, path: str) -> str:
    reason = error.strerror or str(error)
    if isinstance(error, PermissionError):
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except OSError:
            return f"{reason}; the file is left as it was"
        return f"{reason} (mode {mode:04o}): it is read-only for you, and left as it was"
    return f"{reason}; the file is left as it was"


def fix_stdin(raw: bytes, result: LintResult, config: Config, *, unsafe: bool = False,
              diff: bool = False, verbose: bool = False) -> int:
    """``aml-lint --fix -``: the fixed text on standard output (``--diff``: its diff), what
    remains on standard error. Exit status as for a lint: 1 when errors remain (``--diff``:
    when there is a diff)."""
    from . import report as reporting
    from .diagnostic import Severity

    file_report = result.files[0]
    outcome = fix_report(file_report, config, unsafe=unsafe, write=False)
    remaining = outcome.report if outcome is not None and outcome.report is not None else file_report
    if diff:
        changed = outcome is not None and outcome.changed
        if changed:
            assert outcome is not None
            sys.stdout.write(unified_diff(outcome.original, outcome.text, file_report.path))
        count = len(outcome.fixed) if changed and outcome is not None else 0
        sys.stderr.write(f"Would fix {count} finding{'' if count == 1 else 's'}.\n")
        return 1 if changed else 0
    if outcome is not None and outcome.changed:
        bom = raw.startswith(_BOM.encode())
        data = ((_BOM if bom else "") + outcome.text).encode("utf-8")
    else:
        data = raw  # unchanged, byte for byte (also when it could not be read as text)
    # As bytes: the text's own line endings, whatever the platform's text mode would make of them.
    sys.stdout.flush()
    if hasattr(sys.stdout, "buffer"):
        sys.stdout.buffer.write(data)
    else:  # a test's StringIO
        sys.stdout.write(data.decode("utf-8", "replace"))
    sys.stdout.flush()
    floor = Severity.INFO if verbose else Severity.WARNING
    shown = [d for d in remaining.diagnostics if d.severity >= floor]
    reporting.write_text(LintResult([remaining]), shown, sys.stderr, color=False, verbose=verbose)
    count = len(outcome.fixed) if outcome is not None else 0
    sys.stderr.write(f"Fixed {count} finding{'' if count == 1 else 's'} ({len(shown)} remaining).\n")
    return 1 if any(d.severity is Severity.ERROR for d in remaining.diagnostics) else 0
