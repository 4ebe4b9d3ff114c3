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

import errno
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
from .loader import DEFAULT_MAX_BYTES, read_limited

FORMAT_KEY = "aml-lint-baseline"
FORMAT_VERSION = 1
HASH_LENGTH = 12  # hex digits: told apart within one file, code and pointer, that is plenty
# A baseline may be this many times the largest spec (``max-file-size``, 1 MiB by default): 64 MiB
# by default. An entry is about 200 bytes, so that is some 300,000 findings, more than a large
# repository has on the day it adopts aml-lint; parsing a baseline that size takes seconds and a
# few hundred MB, where an unbounded one (a file given by mistake, a generated one gone wrong)
# could take minutes and gigabytes. Tied to max-file-size, so a repository of big specs that
# raised that limit gets room for their findings too.
SIZE_FACTOR = 64
# The longest file or folder name most file systems take (NAME_MAX); a recorded path with a
# longer part names no file that could have had a finding.
MAX_NAME = 255


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
        fields = {"code": code, "path": path, "pointer": pointer, "value": value,
                  "line": self.line, "message": self.message}
        text = json.dumps(fields, ensure_ascii=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            # A file name that is not UTF-8 (its bytes as surrogates) or a lone surrogate read
            # from a baseline: escaped, it is still JSON, and reads back as the same string.
            return json.dumps(fields)
        return text


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
    """What writing a baseline did: entries now in the file, and the change from the old file
    (``new``: there was none)."""

    entries: int
    added: int
    dropped: int
    new: bool = False


class _Invalid(Exception):
    """A baseline file that cannot be read as one: ``where`` (the file, or file:line:col) and
    what is wrong. Reading and writing add their own fix."""

    def __init__(self, where: str, reason: str):
        super().__init__(f"{where}: {reason}")


class _TooBig(Exception):
    """A file over the size limit for a baseline (its message says so, and what to do)."""


def _fix(file: Path | str) -> str:
    return f"fix it, or delete it and write it again with `aml-lint --write-baseline {file} PATH`"


def size_limit(config: Config | None = None) -> int:
    """The largest baseline file read: :data:`SIZE_FACTOR` times the configured max-file-size."""
    return SIZE_FACTOR * (config.max_file_size if config is not None else DEFAULT_MAX_BYTES)


def load(file: Path, max_bytes: int | None = None) -> Baseline:
    """Read a baseline file (at most ``max_bytes``, default :func:`size_limit`); every problem
    with it is one :class:`UsageError` naming the file and the fix."""
    try:
        return _read(file, max_bytes)
    except FileNotFoundError:
        raise UsageError(f"{file}: baseline file not found; create it with "
                         f"`aml-lint --write-baseline {file} PATH`") from None
    except OSError as error:
        raise UsageError(f"{file}: cannot read the baseline: {error.strerror or error}") from None
    except _TooBig as error:
        raise UsageError(str(error)) from None
    except _Invalid as error:
        raise UsageError(f"{error}; {_fix(file)}") from None


def read_previous(file: Path, max_bytes: int | None = None) -> Baseline | None:
    """The baseline a write replaces, or None where there is none yet. A file that is there but
    cannot be read as a baseline is refused rather than overwritten: it may be another file
    given by mistake."""
    try:
        return _read(file, max_bytes)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise UsageError(f"{file}: cannot read the baseline: {error.strerror or error}") from None
    except _TooBig as error:
        raise UsageError(str(error)) from None
    except _Invalid as error:
        raise UsageError(f"{error}; --write-baseline overwrites only a baseline: delete the file "
                         "first, or name another one") from None


def _read(file: Path, max_bytes: int | None = None) -> Baseline:
    limit = max_bytes if max_bytes is not None else size_limit()
    # Never more than the limit in memory; a FIFO or a device is refused, not read.
    raw, size = read_limited(file, limit)
    if len(raw) > limit:
        raise _TooBig(f"{file}: the baseline is {size:,} bytes, over the {limit:,}-byte limit for a baseline "
                      f"({SIZE_FACTOR} times max-file-size); if it is one, raise `max-file-size`, else name "
                      "the right file")
    try:
        document = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise _Invalid(str(file), f"the baseline is not UTF-8 text (byte {error.start})") from None
    except json.JSONDecodeError as error:
        # A merge conflict in the baseline ends here too.
        raise _Invalid(f"{file}:{error.lineno}:{error.colno}", f"the baseline is not valid JSON ({error.msg})") from None
    except RecursionError:
        raise _Invalid(str(file), "the baseline is nested too deeply to be one (its entries are flat objects)") from None
    except ValueError:
        # Python refuses to convert an integer of more than 4,300 digits (a denial-of-service guard).
        raise _Invalid(str(file), "the baseline holds a number too long to read") from None
    if not isinstance(document, dict) or FORMAT_KEY not in document:
        raise _Invalid(str(file), f"not an aml-lint baseline (expected a JSON object with "
                       f"\"{FORMAT_KEY}\": {FORMAT_VERSION} and a list of \"entries\")")
    version = document[FORMAT_KEY]
    if type(version) is not int or version != FORMAT_VERSION:
        raise _Invalid(str(file), f"baseline format {_shown(version)} is not one this aml-lint reads "
                       f"({FORMAT_VERSION}; a newer amllab may read it)")
    items = document.get("entries")
    if not isinstance(items, list):
        raise _Invalid(str(file), "\"entries\" must be a list of findings")
    return Baseline(Path(file), tuple(_entry(item, number, file) for number, item in enumerate(items, 1)))


def _shown(value: Any) -> str:
    """A JSON value, short, for a message (a nested one is cut, never walked to its end)."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return json.dumps(value)[:60]


def _excerpt(item: dict) -> str:
    """The start of an entry, to find it by in the file."""
    try:
        return json.dumps(item)[:120]
    except (RecursionError, ValueError):  # nested deeper than the encoder goes
        return "{" + ", ".join(f"{json.dumps(key)}: {_shown(value)}" for key, value in list(item.items())[:4]) + "}"


def _entry(item: Any, number: int, file: Path) -> Entry:
    where = f"entry {number} of \"entries\""
    if not isinstance(item, dict):
        raise _Invalid(str(file), f"{where} is not an object")
    for key in Fingerprint._fields:
        if not isinstance(item.get(key), str):
            raise _Invalid(str(file), f"{where} has no text \"{key}\" ({_excerpt(item)})")
    problem = _path_problem(item["path"])
    if problem:
        raise _Invalid(str(file), f"{where}: its path {problem}")
    line = item.get("line", 0)
    message = item.get("message", "")
    return Entry(Fingerprint(*(item[key] for key in Fingerprint._fields)),
                 line if isinstance(line, int) and not isinstance(line, bool) else 0,
                 message if isinstance(message, str) else "")


def _path_problem(path: str) -> str | None:
    """Why a recorded path names no file that could have had a finding, or None."""
    if "\0" in path:
        return "holds a NUL character"
    longest = max(path.split("/"), key=len)
    if len(longest) > MAX_NAME:
        return f"has a part of {len(longest):,} characters (a file or folder name has at most {MAX_NAME})"
    return None


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
            # A notebook's findings are placed in its code cells joined, not in its JSON.
            source = self.report.source if self.report.source is not None else self.report.text
            self._lines = (source or "").splitlines()
        return self._lines

    def data(self) -> Any:
        if not self._parsed:
            self._parsed = True
            if self.report.text is not None and self.report.source is None \
                    and not self.report.path.endswith((".py", ".ipynb")):
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
        if path in self.linted or path.startswith("<"):
            return False
        try:
            os.stat(self.folder / path)
        except ValueError:  # a name no file can have here (not encodable)
            return True
        except OSError as error:
            # Gone, or a path no file can have; any other error (a folder we may not read)
            # may hide a file that is there: its entries are kept.
            return isinstance(error, (FileNotFoundError, NotADirectoryError)) \
                or error.errno in (errno.ENAMETOOLONG, errno.ELOOP)
        return False


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


def write(file: Path, result: LintResult, config: Config) -> Written:
    """Record this run's findings in ``file``. Entries of the baseline already there that this
    run did not check (another file, a rule not selected) are kept; those of files that are gone
    are dropped, like those of fixed findings.

    The file is read, merged and written under a lock (:func:`validator.paths.locked_beside`),
    so that two runs writing one baseline at once (on different files) both keep their
    entries; it is written through a symbolic link to its target, the link kept, with its mode
    (a new one gets a new file's), atomically (:func:`validator.paths.rewrite_file`). Raises
    UsageError when the file there is no baseline, OSError when it cannot be written."""
    from .paths import locked_beside, rewrite_file

    folder = Path(os.path.abspath(file)).parent
    entries = [Entry(fingerprint, diagnostic.line, diagnostic.message)
               for report in result.files for diagnostic, fingerprint in fingerprints(report, folder)]
    scope = _Scope(result, config, folder)
    with locked_beside(file):
        previous = read_previous(file, size_limit(config))
        old = list(previous.entries) if previous is not None else []
        entries += [e for e in old if not (scope.checked(e.fingerprint) or scope.gone(e.fingerprint))]
        rewrite_file(file, render(entries).encode("utf-8"))
    before = Counter(e.fingerprint for e in old)
    after = Counter(e.fingerprint for e in entries)
    return Written(len(entries), sum((after - before).values()), sum((before - after).values()), previous is None)
