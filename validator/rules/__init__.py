"""The rule registry: every code amllab can report, in one plain dict (no discovery magic).

A family module declares its rules on import; to add a family, write the module and list it
below. Codes are stable once released (families in shared/DESIGN.md).
"""

from __future__ import annotations

from ._base import ALL_KINDS, REGISTRY, Rule
from . import file_level, schema, expressions  # noqa: F401  (each registers its rules)

RULES: dict[str, Rule] = dict(sorted(REGISTRY.items()))


def checks_for(kind: str) -> list[Rule]:
    """The rules with a check function that apply to ``kind``, in code order."""
    return [rule for rule in RULES.values() if rule.check is not None and kind in rule.kinds]


__all__ = ["ALL_KINDS", "RULES", "Rule", "checks_for"]
