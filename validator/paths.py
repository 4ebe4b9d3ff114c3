"""File-system facts for the linter, cached for one lint run.

A tree of specs asks about the same files and folders thousands of times: a pipeline's
components, each script's `import numpy` (is there a `numpy.py` beside it?), every step's
`code` folder. Within one run (:func:`one_run`, which the engine enters for every public lint
call, and which forked workers inherit) each path is `stat`-ed once and each folder resolved
once, as mypy's file-system cache does for a type-checking run. Outside a run nothing is cached,
so a long-lived process (the quiz, the runner) sees a file created between two lint calls.

`Path.resolve()` (`os.path.realpath`) costs a system call per path component; :func:`resolved`
resolves each folder once and then costs one `lstat` per new file.

The writes of the linter (``--fix``, ``--write-baseline``) live here too: :func:`rewrite_file`
and :func:`locked_beside`."""

from __future__ import annotations

import errno
import os
import stat as stat_module
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

_depth = 0
_cwd: str | None = None


class RunCache(dict):
    """A dict that keeps what is stored in it until the outermost run ends, and stores nothing
    outside a run: for answers that depend on files other than the one in the key (a component's
    problems, a script's local modules, a spec's analysis, which reads its code folder)."""

    def __setitem__(self, key: object, value: object) -> None:
        if _depth:
            super().__setitem__(key, value)

    def setdefault(self, key: object, default: object = None) -> object:
        raise TypeError("RunCache: use cache[key] = value, which is dropped outside a run")

    def update(self, *args: object, **kwargs: object) -> None:
        raise TypeError("RunCache: use cache[key] = value, which is dropped outside a run")


_RUN_CACHES: list[RunCache] = []


def run_cache() -> RunCache:
    cache = RunCache()
    _RUN_CACHES.append(cache)
    return cache


_STAT: RunCache = run_cache()
_REAL: RunCache = run_cache()


@contextmanager
def one_run() -> Iterator[None]:
    """Cache file-system facts until the outermost ``one_run`` ends (runs nest: linting a
    pipeline lints its components inside the same run)."""
    global _depth, _cwd
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            for cache in _RUN_CACHES:
                cache.clear()
            _cwd = None


def stat(path: Path | str) -> os.stat_result | None:
    """``os.stat(path)`` (following symbolic links), or ``None`` when it cannot be read."""
    text = os.fspath(path)
    if _depth and text in _STAT:
        return _STAT[text]
    try:
        found: os.stat_result | None = os.stat(text)
    except (OSError, ValueError):
        found = None
    _STAT[text] = found
    return found


def is_file(path: Path | str) -> bool:
    found = stat(path)
    return found is not None and stat_module.S_ISREG(found.st_mode)


def is_dir(path: Path | str) -> bool:
    found = stat(path)
    return found is not None and stat_module.S_ISDIR(found.st_mode)


def exists(path: Path | str) -> bool:
    return stat(path) is not None


def _real(text: str) -> str:
    global _cwd
    if not _depth:
        return os.path.realpath(text)
    hit = _REAL.get(text)
    if hit is not None:
        return hit
    if text.startswith("/"):
        absolute = text
    else:
        if _cwd is None:
            _cwd = os.getcwd()
        absolute = os.path.join(_cwd, text)
    head, tail = os.path.split(absolute)
    # The folder-at-a-time shortcut holds for a plain path whose last part is not a link;
    # anything else (`..`, `.`, `//`, a link, the root) takes the standard library's walk.
    if (not tail or tail in (".", "..") or "/./" in absolute or "/../" in absolute or "//" in absolute
            or absolute.endswith(("/.", "/.."))):
        found = os.path.realpath(text)
    else:
        try:
            is_link = stat_module.S_ISLNK(os.lstat(absolute).st_mode)
        except (OSError, ValueError):
            is_link = False
        if is_link:
            found = os.path.realpath(absolute)
        else:
            found = os.path.join(_real(head) if head != "/" else "/", tail)
    _REAL[text] = found
    return found


_RESOLVED: RunCache = run_cache()


def resolved(path: Path | str) -> Path:
    """``Path(path).resolve()``: within a run each folder is resolved once (a symbolic link
    changed while the run goes on is not noticed), and the same path object is handed out again
    (building one costs more than the lookup)."""
    text = os.fspath(path)
    found = _RESOLVED.get(text)
    if found is None:
        found = Path(_real(text))
        _RESOLVED[text] = found
    return found


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, flush it to disk, and rename it over
    ``path``: a reader sees the old file or the new one, never a mix, and a crash leaves no
    half-written file behind."""
    import tempfile

    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def content_digest(data: bytes) -> str:
    """The SHA-256 of a file's bytes: what tells "the file is as it was read" before a rewrite."""
    import hashlib

    return hashlib.sha256(data).hexdigest()


class FileChanged(Exception):
    """The file is no longer the bytes it was read as (another program wrote it meanwhile):
    rewriting it from the old text would undo that write."""


def _read_all(descriptor: int) -> bytes:
    chunks, offset = [], 0
    while True:
        chunk = os.pread(descriptor, 1 << 20, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def _new_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _prepared_copy(real: str, data: bytes, status: os.stat_result | None) -> str:
    """A temporary file beside ``real`` holding ``data`` on disk, with the mode (and owner and
    group) of the file it is to replace, or a new file's mode. Raises PermissionError where the
    folder takes no new file or the owner cannot be given back (a user rewriting another user's
    file): only a write in place keeps such a file as it was."""
    import tempfile

    folder, name = os.path.split(real)
    descriptor, temporary = tempfile.mkstemp(dir=folder or ".", prefix=f".{name}.", suffix=".tmp")
    try:
        try:
            if status is not None:
                mine = os.fstat(descriptor)
                if (mine.st_uid, mine.st_gid) != (status.st_uid, status.st_gid):
                    os.fchown(descriptor, status.st_uid, status.st_gid)
                os.fchmod(descriptor, stat_module.S_IMODE(status.st_mode))
            else:
                os.fchmod(descriptor, _new_file_mode())
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view):]
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return temporary


def rewrite_file(path: Path | str, data: bytes, *, expected_digest: str | None = None) -> None:
    """Put ``data`` in the file ``path`` names, keeping what the file is besides its bytes.

    - A symbolic link is written through: its target gets the bytes and the link stays a link
      (as editors and ``sed -i --follow-symlinks`` do). Which links may be followed is the
      caller's rule (``aml-lint --fix`` writes no file outside the paths it was given).
    - A file the user may not write is refused (PermissionError, or OSError EROFS), although
      the folder's write bit would let a rename replace it: a read-only file stays as it was.
    - The file is normally replaced atomically (a temporary file beside it, renamed over it),
      with its mode, owner and group. Where a rename would lose something the file has (it
      has other hard links, its owner is another user, its folder takes no new file), it is
      written in place instead: every name and the owner are kept, at the cost of atomicity
      (a crash in the middle of the write leaves part of it).
    - ``expected_digest`` (see :func:`content_digest`): the file must still hold the bytes that
      digest was taken of, checked just before the write; :class:`FileChanged` otherwise, and
      nothing is written. A missing file is changed too.

    Without ``expected_digest`` a missing file is created (mode as for any new file)."""
    real = os.path.realpath(path)
    try:
        descriptor = os.open(real, os.O_RDWR | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        if expected_digest is not None:
            raise FileChanged(f"{path} is gone") from None
        temporary = _prepared_copy(real, data, None)
        try:
            os.replace(temporary, real)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return
    temporary = None
    try:
        status = os.fstat(descriptor)
        if not stat_module.S_ISREG(status.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        in_place = status.st_nlink > 1
        if not in_place:
            try:
                # Written before the check, so that only a rename follows it.
                temporary = _prepared_copy(real, data, status)
            except PermissionError:
                in_place = True
        if expected_digest is not None:
            if content_digest(_read_all(descriptor)) != expected_digest:
                raise FileChanged(f"{path} changed since it was read")
            try:
                now = os.stat(real, follow_symlinks=False)
            except FileNotFoundError:
                now = None
            if now is None or (now.st_dev, now.st_ino) != (status.st_dev, status.st_ino):
                # Another program saved a new file under the name (an editor's own rename): the
                # file checked is not the one the name leads to any more.
                raise FileChanged(f"{path} was replaced since it was read")
        # What remains: a program that writes the file between the checks above and the write
        # below (a few system calls) is overwritten; so is one that keeps the file open and
        # writes to it later (after a rename, its write goes to the old file). Editors do not
        # lock files, so no lock of ours could keep them out.
        if in_place:
            view, offset = memoryview(data), 0
            while offset < len(data):
                offset += os.pwrite(descriptor, view[offset:], offset)
            os.ftruncate(descriptor, len(data))
            os.fsync(descriptor)
        else:
            assert temporary is not None
            os.replace(temporary, real)
            temporary = None
    finally:
        os.close(descriptor)
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)


@contextmanager
def locked_beside(path: Path | str) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` names (through links, its target) for a
    read-modify-write, so that two processes doing it at once do not lose each other's change.

    The lock is a hidden file beside it (``.NAME.lock``, flock), removed when the lock is
    released, so no lock file is left among a repository's files. Removing it is safe because
    a process that got the lock checks that the name still leads to the file it locked, and
    tries again otherwise (one that waited on a removed file would be alone on it)."""
    import fcntl

    real = os.path.realpath(path)
    folder, name = os.path.split(real)
    lock = os.path.join(folder, f".{name}.lock")
    while True:
        descriptor = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            held = os.fstat(descriptor)
            try:
                named = os.stat(lock)
            except FileNotFoundError:
                named = None
            if named is not None and (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino):
                break
        except BaseException:
            os.close(descriptor)
            raise
        os.close(descriptor)
    try:
        yield
    finally:
        try:
            os.unlink(lock)  # while it is held: see above
        finally:
            os.close(descriptor)
