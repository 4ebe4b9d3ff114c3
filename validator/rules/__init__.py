"""The rule registry: every code amllab can report, in one plain dict (no discovery magic).

A family module declares its rules on import; to add a family, write the module and list it
below. Codes are stable once released (families in shared/DESIGN.md).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from ._base import ALL_KINDS, REGISTRY, Rule
from . import (  # noqa: F401  (each module registers its rules on import)
    file_level,     # AML000-AML013  reading, YAML, kind detection, suppressions
    schema,         # AML101-AML107  shape, against the bundled JSON Schemas
    expressions,    # AML201-AML206  expression syntax, undeclared references in commands
    inputs,         # AML207-AML229  inputs and outputs: optional blocks, types, modes, paths, names
    sweep,          # AML301-AML399  sampling, search space, objective, limits, policies
    compute,        # AML401-AML499  compute, resources, distribution, queue settings
    pipeline,       # AML501-AML529  steps, bindings, graph, settings, referenced components
    components,     # AML530-AML599  component definitions: names, versions, ports, commands
    schedule,       # AML601-AML699  triggers, cron, recurrence, times, create_job
    training_code,  # AML701-AML799  the training script: metrics, flags, outputs
    assets,         # AML801-AML899  azureml: references, local paths, workspace registry
)

from ._service import SERVICE  # noqa: E402  (generated: tools/sdk_verdicts.py)

RULES: dict[str, Rule] = {code: replace(rule, service=SERVICE.get(code)) for code, rule in sorted(REGISTRY.items())}


@lru_cache(maxsize=None)
def checks_for(kind: str) -> tuple[Rule, ...]:
    """The rules with a check function that apply to ``kind``, in code order."""
    return tuple(rule for rule in RULES.values() if rule.function is not None and kind in rule.kinds)


__all__ = ["ALL_KINDS", "RULES", "Rule", "checks_for"]
