"""A baseline: the findings a repository had when it adopted aml-lint, recorded in a JSON file so
that a run reports only the findings that are not in it.

A finding is recorded by its *fingerprint*, never by its line, so that editing a file elsewhere
does not bring its recorded findings back:

- the rule code;
- the file, as a POSIX path relative to the baseline's own folder (so the baseline works from
  any working directory);
- the JSON pointer of the offending key or value in the document (``Diagnostic.pointer``);
- a short hash of the offending value: the text under the diagnostic's span where it has one
  (a key, a scalar, a reference inside a command), else the scalar at the pointer; a finding
  about a whole mapping or list (a required key missing from it) hashes nothing, and is told
  apart by its code and pointer alone.

Fingerprints are a multiset: two identical findings in the baseline suppress at most two today.
An entry that matches nothing any more is *stale*; it is counted only where this run could have
matched it (its file was linted, its rule was enabled) or its file is gone, so that linting one
file, or one rule, does not call the rest of the baseline stale. Writing the baseline again keeps
what this run did not check and replaces the rest with today's findings: the file shrinks as
findings are fixed.

The file holds one entry per line, sorted, so that it diffs and merges like source::

    {
      "aml-lint-baseline": 1,
      "entries": [
        {"code": "AML101", "path": "jobs/train.yml", "pointer": "/comptue", "value": "5d0c7a5f4a1e", "line": 5, "message": "..."}
      ]
    }

``line`` and ``message`` are for the humans reading it; matching ignores them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, NamedTuple

from .config import Config
from .diagnostic import Diagnostic
from .engine import FileReport, LintResult
from .errors import UsageError

FORMAT_KEY = "aml-lint-baseline"
FORMAT_VERSION = 1
HASH_LENGTH = 12  # hex digits: told apart within one file, code and pointer, that is plenty


class Fingerprint(NamedTuple):
    """What identifies a finding across edits of its file (see the module docstring)."""

    path: str
    code: str
    pointer: str
    value: str


@dataclass(frozen=True)
class Entry:
    fingerprint: Fingerprint
    line: int = 0
    message: str = ""

    def to_json(self) -> str:
        path, code, pointer, value = self.fingerprint
        return json.dumps({"code": code, "path": path, "pointer": pointer, "value": value,
                           "line": self.line, "message": self.message}, ensure_ascii=False)


@dataclass(frozen=True)
class Baseline:
    file: Path
    entries: tuple[Entry, ...] = ()

    @property
    def folder(self) -> Path:
        return Path(os.path.abspath(self.file)).parent


@dataclass(frozen=True)
class Match:
    """What applying a baseline to a run did."""

    suppressed: int
    stale: int


@dataclass(frozen=True)
class Written:
    """What writing a baseline did: entries now in the file, and the change from the old file."""

    entries: int
    added: int
    dropped: int


class _Invalid(Exception):
    """A baseline file that cannot be read as one: ``where`` (the file, or file:line:col) and
    what is wrong. Reading and writing add their own fix."""

    def __init__(self, where: str, reason: str):
        super().__init__(f"{where}: {reason}")


def _fix(file: Path | str) -> str:
    return f"fix it, or delete it and write it again with `aml-lint --write-baseline {file} PATH`"


def load(file: Path) -> Baseline:
    """Read a baseline file; every problem with it is one :class:`UsageError` naming the file
    and the fix."""
    try:
        return _read(file)
    except FileNotFoundError:
        raise UsageError(f"{file}: baseline file not found; create it with "
                         f"`aml-lint --write-baseline {file} PATH`") from None
    except OSError as error:
        raise UsageError(f"{file}: cannot read the baseline: {error.strerror or error}") from None
    except _Invalid as error:
        raise UsageError(f"{error}; {_fix(file)}") from None


def read_previous(file: Path) -> Baseline | None:
    """The baseline a write replaces, or None where there is none yet. A file that is there but
    cannot be read as a baseline is refused rather than overwritten: it may be another file
    given by mistake."""
    try:
        return _read(file)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise UsageError(f"{file}: cannot read the baseline: {error.strerror or error}") from None
    except _Invalid as error:
        raise UsageError(f"{error}; --write-baseline overwrites only a baseline: delete the file "
                         "first, or name another one") from None


def _read(file: Path) -> Baseline:
    raw = Path(file).read_bytes()
    try:
        document = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise _Invalid(str(file), f"the baseline is not UTF-8 text (byte {error.start})") from None
    except json.JSONDecodeError as error:
        # A merge conflict in the baseline ends here too.
        raise _Invalid(f"{file}:{error.lineno}:{error.colno}", f"the baseline is not valid JSON ({error.msg})") from None
    if not isinstance(document, dict) or FORMAT_KEY not in document:
        raise _Invalid(str(file), f"not an aml-lint baseline (expected a JSON object with "
                       f"\"{FORMAT_KEY}\": {FORMAT_VERSION} and a list of \"entries\")")
    version = document[FORMAT_KEY]
    if version != FORMAT_VERSION:
        raise _Invalid(str(file), f"baseline format {version!r} is not one this aml-lint reads "
                       f"({FORMAT_VERSION}; a newer amllab may read it)")
    items = document.get("entries")
    if not isinstance(items, list):
        raise _Invalid(str(file), "\"entries\" must be a list of findings")
    return Baseline(Path(file), tuple(_entry(item, number, file) for number, item in enumerate(items, 1)))


def _entry(item: Any, number: int, file: Path) -> Entry:
    where = f"entry {number} of \"entries\""
    if not isinstance(item, dict):
        raise _Invalid(str(file), f"{where} is not an object")
    for key in Fingerprint._fields:
        if not isinstance(item.get(key), str):
            raise _Invalid(str(file), f"{where} has no text \"{key}\" ({json.dumps(item)[:120]})")
    line = item.get("line", 0)
    message = item.get("message", "")
    return Entry(Fingerprint(*(item[key] for key in Fingerprint._fields)),
                 line if isinstance(line, int) and not isinstance(line, bool) else 0,
                 message if isinstance(message, str) else "")


def relative_path(shown: str, folder: Path) -> str:
    """The path a report shows, as recorded in a baseline kept in ``folder``. ``abspath``, not
    ``resolve``: a spec reached through a link is recorded where the user sees it."""
    if shown.startswith("<"):  # <stdin> without --stdin-filename
        return shown
    try:
        return Path(os.path.relpath(os.path.abspath(shown), folder)).as_posix()
    except ValueError:  # another drive (Windows): no relative path exists
        return Path(os.path.abspath(shown)).as_posix()


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_LENGTH]


def _at_pointer(data: Any, pointer: str) -> Any:
    """The value at an RFC 6901 pointer, or None where it leads nowhere."""
    if not pointer:
        return data
    for token in pointer[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(data, dict):
            if token in data:
                data = data[token]
                continue
            data = next((v for k, v in data.items() if str(k) == token), None)
        elif isinstance(data, list) and token.isdigit() and int(token) < len(data):
            data = data[int(token)]
        else:
            return None
    return data


class _Values:
    """The offending value of each finding in one file; the file is parsed again only when a
    finding has no span on one line (a block scalar, a mapping)."""

    def __init__(self, report: FileReport):
        self.report = report
        self._lines: list[str] | None = None
        self._data: Any = None
        self._parsed = False

    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = (self.report.text or "").splitlines()
        return self._lines

    def data(self) -> Any:
        if not self._parsed:
            self._parsed = True
            if self.report.text is not None:
                from .loader import parse

                self._data = parse(self.report.path, self.report.text)[0].data
        return self._data

    def of(self, diagnostic: Diagnostic) -> str:
        lines = self.lines()
        if diagnostic.end_column > diagnostic.column and 0 < diagnostic.line <= len(lines):
            return lines[diagnostic.line - 1][diagnostic.column - 1:diagnostic.end_column - 1]
        value = _at_pointer(self.data(), diagnostic.pointer)
        if isinstance(value, (dict, list)) or value is None:
            return ""
        return value if isinstance(value, str) else json.dumps(value)


def recordable(diagnostic: Diagnostic) -> bool:
    """Whether a finding may be recorded or suppressed: a failure of amllab itself may not."""
    return not (diagnostic.code == "AML000" and "internal error" in diagnostic.message)


def fingerprints(report: FileReport, folder: Path) -> Iterator[tuple[Diagnostic, Fingerprint]]:
    """Each recordable finding of ``report`` with its fingerprint, for a baseline in ``folder``."""
    path = relative_path(report.path, folder)
    values = _Values(report)
    for diagnostic in report.diagnostics:
        if recordable(diagnostic):
            yield diagnostic, Fingerprint(path, diagnostic.code, diagnostic.pointer,
                                          _short_hash(values.of(diagnostic)))


class _Scope:
    """Which baseline entries this run could have matched."""

    def __init__(self, result: LintResult, config: Config, folder: Path):
        self.folder = folder
        self.config = config
        self.linted = {relative_path(f.path, folder): f.path for f in result.files}

    def checked(self, fingerprint: Fingerprint) -> bool:
        shown = self.linted.get(fingerprint.path)
        return shown is not None and self.config.enabled(fingerprint.code, shown)

    def gone(self, fingerprint: Fingerprint) -> bool:
        path = fingerprint.path
        return fingerprint.path not in self.linted and not path.startswith("<") \
            and not (self.folder / path).exists()


def apply(baseline: Baseline, result: LintResult, config: Config) -> Match:
    """Take the findings the baseline records out of ``result`` (each entry suppresses one
    finding) and count the entries that matched nothing this run could have found."""
    folder = baseline.folder
    remaining = Counter(entry.fingerprint for entry in baseline.entries)
    suppressed = 0
    for report in result.files:
        if not report.diagnostics:
            continue
        hidden: set[int] = set()
        for diagnostic, fingerprint in fingerprints(report, folder):
            if remaining[fingerprint] > 0:
                remaining[fingerprint] -= 1
                hidden.add(id(diagnostic))
        if hidden:
            suppressed += len(hidden)
            report.diagnostics = [d for d in report.diagnostics if id(d) not in hidden]
    scope = _Scope(result, config, folder)
    stale = sum(count for fingerprint, count in remaining.items()
                if count > 0 and (scope.checked(fingerprint) or scope.gone(fingerprint)))
    return Match(suppressed, stale)


def render(entries: Iterable[Entry]) -> str:
    ordered = sorted(entries, key=lambda e: (e.fingerprint, e.line, e.message))
    head = f"{{\n  \"{FORMAT_KEY}\": {FORMAT_VERSION},\n  \"entries\": ["
    if not ordered:
        return head + "]\n}\n"
    return head + "\n" + ",\n".join("    " + e.to_json() for e in ordered) + "\n  ]\n}\n"


def _readable_like_source(file: Path) -> None:
    """The atomic write's temporary file is private (0600); a baseline is committed and shared
    like the specs, so it gets the mode a new file gets here."""
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.chmod(file, 0o666 & ~umask)
    except OSError:
        pass  # a file system without modes: nothing to share


def write(file: Path, result: LintResult, config: Config, previous: Baseline | None = None) -> Written:
    """Record this run's findings in ``file`` (atomically). Entries of ``previous`` that this run
    did not check (another file, a rule not selected) are kept; those of files that are gone are
    dropped, like those of fixed findings."""
    from .paths import write_text_atomic

    folder = Path(os.path.abspath(file)).parent
    entries = [Entry(fingerprint, diagnostic.line, diagnostic.message)
               for report in result.files for diagnostic, fingerprint in fingerprints(report, folder)]
    old = list(previous.entries) if previous is not None else []
    scope = _Scope(result, config, folder)
    entries += [e for e in old if not (scope.checked(e.fingerprint) or scope.gone(e.fingerprint))]
    write_text_atomic(Path(file), render(entries))
    _readable_like_source(Path(file))
    before = Counter(e.fingerprint for e in old)
    after = Counter(e.fingerprint for e in entries)
    return Written(len(entries), sum((after - before).values()), sum((before - after).values()))
