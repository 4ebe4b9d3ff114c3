"""The code snapshot the local runner takes of a job's ``code:`` before running it.

Azure ML runs a command job from a copy of its ``code`` folder, not from the folder itself, so
a script that reads or writes next to itself sees only what was uploaded. ``take_snapshot``
builds that copy locally with the same selection rules.

Rules, and where each comes from:

* The whole ``code`` folder is copied ("Azure Machine Learning runs training scripts by copying
  the entire source directory", learn.microsoft.com, *Where to save and write files for Azure
  Machine Learning experiments*, how-to-save-write-experiment-files). ``code`` may also be a
  single file; it is copied into ``dest`` under its own name.
* A ``.amlignore`` or ``.gitignore`` file in the root of ``code`` excludes files, with gitignore
  syntax; if both exist ``.amlignore`` is used and ``.gitignore`` is not (same page, and the
  shared include ``machine-learning-amlignore-gitignore.md``).
* Only the ignore file at the root of ``code`` counts. Ignore files in sub-folders are copied
  like any other file but their patterns are NOT applied: azure-ai-ml's ``get_ignore_file``
  looks in the root folder only, and its docstring says "The ignore file must be in the root
  directory" (azure/ai/ml/_utils/_asset_utils.py). This differs from git, which reads every
  ``.gitignore`` on the way down.
* Patterns follow git (https://git-scm.com/docs/gitignore), matched by ``pathspec``'s
  ``GitIgnoreSpec``: the last matching pattern wins, ``!`` re-includes, a trailing ``/`` matches
  folders only, a pattern with an inner ``/`` is anchored to the root of ``code``. A folder that
  is excluded is not descended into, so nothing beneath it can be re-included ("It is not
  possible to re-include a file if a parent directory of that file is excluded"). Note that
  azure-ai-ml itself tests each file path on its own, so for ``build/`` followed by
  ``!build/keep.txt`` the service may upload ``build/keep.txt`` where git (and this module)
  leave it out; write ``build/*`` instead of ``build/`` to get the same answer from both.
* ``.git`` (at any depth) is never copied, nor anything under a path in ``exclude``, nor
  ``dest`` itself when it lies inside ``code``.
* Regular files are copied with their metadata (``shutil.copy2``). Symbolic links are
  recreated as links with the same target, never followed, so a link to a large folder costs
  nothing and a dangling link stays dangling. (azure-ai-ml follows links when it uploads; a
  job that needs the linked content on the service must not rely on the link.) Other special
  files (FIFOs, sockets, devices) are skipped with a warning.
* Empty folders are not recreated: the uploaded snapshot is a set of files (azure-ai-ml
  enumerates the file lists of ``os.walk``), so a folder the job expects to exist must be
  created by the job.
* The service refuses a snapshot over 300 MB or over 2000 files (how-to-save-write-experiment-
  files: "The storage limit for experiment snapshots is 300 MB and/or 2000 files"; azureml-core
  checks ``size > 300 * 1024 * 1024`` and ``count > 2000``). The local copy is still made, and
  each limit exceeded adds a warning. ``bytes`` counts regular files only, as copied.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import RunnerError

# Module-level so tests (and a caller that knows better) can lower them.
MAX_SNAPSHOT_FILES = 2000
MAX_SNAPSHOT_BYTES = 300 * 1024 * 1024
_MB = 1024 * 1024

IGNORE_FILES = (".amlignore", ".gitignore")  # in order of precedence
NEVER_COPIED = ".git"


class SnapshotError(RunnerError, OSError):
    """The snapshot cannot be taken; the message names the path and the reason. A RunnerError,
    so the CLI prints it as one line; an OSError, because that is what it wraps."""

    def __init__(self, message: str, path: str | os.PathLike[str] | None = None,
                 errno: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = None if path is None else os.fspath(path)
        # filename/strerror stay unset: OSError.__str__ would replace the message with "[Errno n] ...".
        self.errno = errno

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class SnapshotReport:
    files: int
    bytes: int
    ignored: int
    ignore_file: str | None
    warnings: list[str] = field(default_factory=list)


def take_snapshot(code: Path, dest: Path, *, exclude: Iterable[Path] = ()) -> SnapshotReport:
    """Copy ``code`` (a folder or a single file) into ``dest`` as Azure ML would upload it.

    ``dest`` must not exist or must be an empty folder; it is created, with its parents.
    ``exclude`` holds paths (made absolute against the current folder) that are never copied,
    however the ignore file reads; the runner passes its own workspace when it lies inside
    ``code``. The selection rules are in the module docstring.

    Returns a ``SnapshotReport``: ``files`` copied (regular files and links), ``bytes`` of the
    regular files, ``ignored`` (top-most files and folders left out by the ignore file),
    ``ignore_file`` used (".amlignore", ".gitignore" or None) and ``warnings``.

    Raises ``SnapshotError`` when ``code`` is missing, ``dest`` is not empty, or a file or
    folder that belongs in the snapshot cannot be read or written.
    """
    code = Path(code)
    dest = Path(dest)
    try:
        source_stat = code.stat()
    except OSError as e:
        raise _error("cannot read the code path", code, e) from e
    if not (stat.S_ISREG(source_stat.st_mode) or stat.S_ISDIR(source_stat.st_mode)):
        raise SnapshotError(f"cannot snapshot {code}: it is neither a file nor a folder", code)
    _prepare_dest(dest)

    if stat.S_ISREG(source_stat.st_mode):
        _copy_file(code, dest / code.name, follow=True)
        return SnapshotReport(1, source_stat.st_size, 0, None,
                              _limit_warnings(1, source_stat.st_size, None))

    root = os.path.realpath(code)
    skip = _excluded_paths([*exclude, dest])
    ignore_name, ignore = _load_ignore_file(root)
    walk = _Walk(root, os.fspath(dest), skip, ignore)
    walk.run()
    warnings = ignore.warnings + walk.warnings + _limit_warnings(walk.files, walk.bytes, ignore_name)
    return SnapshotReport(walk.files, walk.bytes, walk.ignored, ignore_name, warnings)


def _error(doing: str, path: str | os.PathLike[str], e: OSError) -> SnapshotError:
    reason = e.strerror or str(e)
    return SnapshotError(f"{doing} {os.fspath(path)}: {reason}", path, e.errno)


def _prepare_dest(dest: Path) -> None:
    try:
        if dest.is_dir() and not dest.is_symlink():
            with os.scandir(dest) as entries:
                if next(entries, None) is not None:
                    raise SnapshotError(f"the snapshot folder {dest} is not empty", dest)
            return
        if dest.exists() or dest.is_symlink():
            raise SnapshotError(f"the snapshot folder {dest} exists and is not a folder", dest)
        dest.mkdir(parents=True)
    except SnapshotError:
        raise
    except OSError as e:
        raise _error("cannot create the snapshot folder", dest, e) from e


def _excluded_paths(paths: Iterable[Path]) -> frozenset[str]:
    # The walk runs over the real path of code and never enters a link, so every path it meets
    # is real up to its last component; resolve the parent only, so an excluded link stays itself.
    out: set[str] = set()
    for p in paths:
        absolute = os.path.abspath(p)
        out.add(os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute)))
        out.add(os.path.realpath(absolute))
    return frozenset(out)


class _Ignore:
    """Root ignore file, queried with paths relative to code's root, "/"-separated."""

    def __init__(self, lines: list[str], source: str | None) -> None:
        self.warnings: list[str] = []
        self.active = any(line.strip() for line in lines)
        if not self.active:
            return
        from pathspec import GitIgnoreSpec
        from pathspec.patterns.gitignore.spec import GitIgnorePatternError, GitIgnoreSpecPattern

        file_patterns: list[Any] = []
        dir_patterns: list[Any] = []
        for number, line in enumerate(lines, 1):
            try:
                as_file = GitIgnoreSpecPattern(line)
                as_dir = GitIgnoreSpecPattern(_as_folder_pattern(line))
            except GitIgnorePatternError as e:
                # git skips a pattern it cannot use instead of refusing the whole file.
                self.warnings.append(f"{source} line {number}: {e}; the line is ignored")
                continue
            file_patterns.append(as_file)
            dir_patterns.append(as_dir)
        self._files = GitIgnoreSpec(file_patterns)
        # pathspec answers for files: queried with "dir/", a folder matched by "*" beats a later
        # "!*/", and "a/**" matches the folder "a" itself. git drops a pattern's trailing "/" and
        # only remembers that it wants a folder, so for a folder we ask about its path as if it
        # were a file, with every pattern stripped of that slash.
        self._dirs = GitIgnoreSpec(dir_patterns)

    def file_ignored(self, rel: str) -> bool:
        return self.active and self._files.match_file(rel)

    def dir_ignored(self, rel: str) -> bool:
        return self.active and self._dirs.match_file(rel)


def _as_folder_pattern(line: str) -> str:
    # The same trimming as git's parse of a pattern line: trailing blanks go unless escaped.
    text = line.rstrip("\r\n")
    if not text.endswith("\\ "):
        text = text.rstrip()
    body = text[1:] if text.startswith("!") else text
    if len(body) > 1 and body.endswith("/"):
        return text[:-1]
    return text


def _load_ignore_file(root: str) -> tuple[str | None, _Ignore]:
    for name in IGNORE_FILES:
        path = os.path.join(root, name)
        if not os.path.isfile(path):
            continue
        try:
            # utf-8-sig: git skips a UTF-8 byte-order mark; surrogateescape keeps a non-UTF-8
            # pattern comparable with os.fsdecode'd file names.
            with open(path, encoding="utf-8-sig", errors="surrogateescape") as fh:
                lines = fh.read().splitlines()
        except OSError as e:
            raise _error("cannot read the ignore file", path, e) from e
        return name, _Ignore(lines, name)
    return None, _Ignore([], None)


class _Walk:
    def __init__(self, root: str, dest: str, skip: frozenset[str], ignore: _Ignore) -> None:
        self.root = root
        self.dest = dest
        self.skip = skip
        self.ignore = ignore
        self.files = 0
        self.bytes = 0
        self.ignored = 0
        self.warnings: list[str] = []
        self._made: dict[str, str] = {}  # rel folder -> its source, for copystat at the end

    def run(self) -> None:
        stack = [""]
        while stack:
            rel_dir = stack.pop()
            src_dir = os.path.join(self.root, *rel_dir.split("/")) if rel_dir else self.root
            try:
                with os.scandir(src_dir) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError as e:
                raise _error("cannot list the folder", src_dir, e) from e
            subdirs = []
            for entry in entries:
                if entry.name == NEVER_COPIED or entry.path in self.skip:
                    continue
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError as e:
                    raise _error("cannot read", entry.path, e) from e
                if is_dir:
                    if self.ignore.dir_ignored(rel):
                        self.ignored += 1  # the walk never enters it: git's "parent excluded" rule
                    else:
                        subdirs.append(rel)
                    continue
                if self.ignore.file_ignored(rel):
                    self.ignored += 1
                    continue
                self._copy(entry, rel)
            stack.extend(reversed(subdirs))
        # Children before parents, so writing a child does not touch a parent's copied times.
        for rel_dir in sorted(self._made, key=len, reverse=True):
            try:
                shutil.copystat(self._made[rel_dir], os.path.join(self.dest, *rel_dir.split("/")))
            except OSError as e:
                raise _error("cannot copy the metadata of", self._made[rel_dir], e) from e

    def _copy(self, entry: os.DirEntry[str], rel: str) -> None:
        target = os.path.join(self.dest, *rel.split("/"))
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError as e:
            raise _error("cannot read", entry.path, e) from e
        if stat.S_ISLNK(mode):
            self._ensure_parent(rel)
            try:
                link = os.readlink(entry.path)
                os.symlink(link, target, target_is_directory=os.path.isdir(entry.path))
            except OSError as e:
                raise _error("cannot recreate the symbolic link", entry.path, e) from e
            self.files += 1
        elif stat.S_ISREG(mode):
            self._ensure_parent(rel)
            _copy_file(entry.path, target, follow=False)
            self.bytes += entry.stat(follow_symlinks=False).st_size
            self.files += 1
        else:
            self.warnings.append(f"{rel} is not a regular file, a folder or a link; it is not copied")

    def _ensure_parent(self, rel: str) -> None:
        parts = rel.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            rel_dir = "/".join(parts[:depth])
            if rel_dir in self._made:
                continue
            try:
                os.mkdir(os.path.join(self.dest, *parts[:depth]))
            except OSError as e:
                raise _error("cannot create the snapshot folder", os.path.join(self.dest, *parts[:depth]), e) from e
            self._made[rel_dir] = os.path.join(self.root, *parts[:depth])


def _copy_file(src: str | os.PathLike[str], dst: str | os.PathLike[str], *, follow: bool) -> None:
    try:
        shutil.copy2(src, dst, follow_symlinks=follow)
    except OSError as e:
        raise _error("cannot copy", src, e) from e


def _limit_warnings(files: int, size: int, ignore_file: str | None) -> list[str]:
    remedy = f"list what the job does not need in {ignore_file or '.amlignore'}, or move data to a datastore"
    out = []
    if files > MAX_SNAPSHOT_FILES:
        out.append(f"the snapshot holds {files:,} files; Azure ML refuses more than "
                   f"{MAX_SNAPSHOT_FILES:,} ({remedy})")
    if size > MAX_SNAPSHOT_BYTES:
        out.append(f"the snapshot holds {size / _MB:,.1f} MB; Azure ML refuses more than "
                   f"{MAX_SNAPSHOT_BYTES / _MB:,.0f} MB ({remedy})")
    return out
