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
