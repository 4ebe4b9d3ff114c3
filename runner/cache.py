"""This machine's cache for what aml-run builds once and reuses across workspaces: things that
depend only on the versions installed, never on a workspace or a job. Removing it is always
safe; it is rebuilt on use.

Where: ``AMLLAB_CACHE_DIR``, else ``$XDG_CACHE_HOME/amllab``, else ``~/.cache/amllab``.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    explicit = os.environ.get("AMLLAB_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "amllab"
