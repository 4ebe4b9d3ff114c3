"""Reading values that may have any type: rules run even where the schema check failed."""

from __future__ import annotations

import math
from typing import Any


def mapping(value: Any) -> dict:
    """``value`` when it is a mapping, else an empty one."""
    return value if isinstance(value, dict) else {}


def text(value: Any) -> str | None:
    """``value`` when it is a string, else None: for a value compared with a set of names (a
    list or a mapping written where a name belongs cannot be looked up in a set)."""
    return value if isinstance(value, str) else None


def sdk_number(value: Any) -> float | None:
    """The value as the SDK reads a numeric field (``float(value)``: numbers, and strings that
    parse as numbers, such as PyYAML's string '1e-3'), or None. Booleans are not numbers."""
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):
            return float(value.strip())
    except (ValueError, OverflowError):
        if isinstance(value, int):
            return math.inf if value > 0 else -math.inf
    return None


def enum_name(value: Any, known: tuple[str, ...]) -> str | None:
    """The name in ``known`` that ``value`` spells, as the SDK compares these enums:
    case-insensitively, CamelCase accepted (`MedianStopping`, `QUniform`), SPEC §1.2; None when
    it spells none of them."""
    if not isinstance(value, str):
        return None
    squashed = value.replace("_", "").lower()
    for name in known:
        if name.replace("_", "") == squashed:
            return name
    return None
