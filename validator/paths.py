"""File-system facts for the linter, cached for one lint run.

A tree of specs asks about the same files and folders thousands of times: a pipeline's
components, each script's `import numpy` (is there a `numpy.py` beside it?), every step's
`code` folder. Within one run (:func:`one_run`, which the engine enters for every public lint
call, and which forked workers inherit) each path is `stat`-ed once and each folder resolved
once, as mypy's file-system cache does for a type-checking run. Outside a run nothing is cached,
so a long-lived process (the quiz, the runner) sees a file created between two lint calls.

`Path.resolve()` (`os.path.realpath`) costs a system call per path component; :func:`resolved`
resolves each folder once and then costs one `lstat` per new file."""

from __future__ import annotations

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
