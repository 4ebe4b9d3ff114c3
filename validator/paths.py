"""Resolved paths, cached: a tree of specs asks for the same folders thousands of times, and each
`Path.resolve()` is a system call per path component."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=65536)
def _real(text: str) -> str:
    return os.path.realpath(text)


def resolved(path: Path | str) -> Path:
    """``Path(path).resolve()``, cached for the life of the process (a linter run: a symlink
    changed while it runs is not noticed)."""
    return Path(_real(os.fspath(path)))


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
