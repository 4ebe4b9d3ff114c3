"""'Did you mean ...?' — one place that picks the name a typo was aiming at."""

from __future__ import annotations

import difflib
from functools import lru_cache
from typing import Iterable


def _initials(name: str) -> str:
    return "".join(part[0] for part in name.replace("-", "_").split("_") if part)


def closest(name: str, candidates: Iterable[object], cutoff: float = 0.6) -> str | None:
    """The candidate ``name`` most likely meant: same text ignoring case, an abbreviation
    (``lr`` for ``learning_rate``, either way round), else the closest spelling."""
    return _closest(name, tuple(str(c) for c in candidates), cutoff)


# Rules ask about the same keys in file after file (is `comptue` a misspelt `compute`?), and a
# spelling comparison costs tens of microseconds.
@lru_cache(maxsize=4096)
def _closest(name: str, options: tuple[str, ...], cutoff: float) -> str | None:
    lowered = name.lower()
    for option in options:
        if option.lower() == lowered:
            return option
    for option in options:
        if "_" in name and _initials(name).lower() == option.lower():
            return option
        if "_" in option and _initials(option).lower() == lowered:
            return option
    found = difflib.get_close_matches(name, options, n=1, cutoff=cutoff)
    return found[0] if found else None
