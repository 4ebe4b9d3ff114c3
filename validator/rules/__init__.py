"""The rule registry: every code amllab can report, in one plain dict (no discovery magic).

A family module declares its rules on import; to add a family, write the module and list it
below. Codes are stable once released (families in shared/DESIGN.md).

The families with check functions are imported when a file of a kind they check is linted
(:func:`checks_for`): `aml-lint job.yml` on a command job needs five of the nine, and importing
the others was a tenth of its time. :data:`RULES`, which holds every rule with its documentation,
imports them all on first use.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import import_module
from typing import Iterator

from ._base import ALL_KINDS, REGISTRY, Rule, documented
from . import (  # noqa: F401  (each module registers its rules on import)
    file_level,     # AML000-AML013  reading, YAML, kind detection, suppressions
    schema,         # AML101-AML107  shape, against the bundled JSON Schemas
)

_JOBS_AND_COMPONENTS = frozenset({"commandJob", "sweepJob", "pipelineJob", "commandComponent",
                                  "pipelineComponent"})
_PIPELINES = frozenset({"pipelineJob", "pipelineComponent"})

# Each family with check functions, and the kinds of file its checks apply to
# (tests/validator/test_rule_registry.py holds this table to the rules' own `kinds`).
FAMILIES: dict[str, frozenset[str]] = {
    "expressions": ALL_KINDS,          # AML201-AML206  expression syntax, undeclared references in commands
    "inputs": frozenset({"commandJob", "sweepJob", "pipelineJob", "commandComponent"}),
                                       # AML207-AML229  inputs and outputs: optional blocks, types, modes, paths, names
    "sweep": _PIPELINES | {"sweepJob"},  # AML301-AML399  sampling, search space, objective, limits, policies
    "compute": _JOBS_AND_COMPONENTS,   # AML401-AML499  compute, resources, distribution, queue settings
    "pipeline": _PIPELINES,            # AML501-AML529  steps, bindings, graph, settings, referenced components
    "components": _PIPELINES | {"commandComponent"},
                                       # AML530-AML599  component definitions: names, versions, ports, commands
    "schedule": frozenset({"schedule"}),  # AML601-AML699  triggers, cron, recurrence, times, create_job
    "training_code": _JOBS_AND_COMPONENTS,  # AML701-AML799  the training script: metrics, flags, outputs
    "assets": ALL_KINDS,               # AML801-AML899  azureml: references, local paths, workspace registry
    "python_source": frozenset({"python"}),  # AML901-AML999  jobs written in Python: what only the source shows
}


def _import_families(kind: str | None = None) -> None:
    """Import the families that check ``kind`` (every family when ``kind`` is None)."""
    for family, kinds in FAMILIES.items():
        if kind is None or kind in kinds:
            import_module(f".{family}", __name__)


@lru_cache(maxsize=None)
def _all_rules() -> dict[str, Rule]:
    _import_families()
    from ._service import SERVICE  # generated: tools/sdk_verdicts.py

    return {code: documented(rule, SERVICE.get(code)) for code, rule in sorted(REGISTRY.items())}


def __getattr__(name: str) -> object:
    # RULES is built on first use (PEP 562): linting a file needs only its kind's families.
    if name == "RULES":
        return _all_rules()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


RULES: dict[str, Rule]  # every rule, by code (built by __getattr__ on first use)


@lru_cache(maxsize=None)
def checks_for(kind: str) -> tuple[Rule, ...]:
    """The rules with a check function that apply to ``kind``, in code order."""
    _import_families(kind)
    return tuple(rule for _, rule in sorted(REGISTRY.items()) if rule.function is not None and kind in rule.kinds)


def declared(code: str) -> Rule | None:
    """The rule of ``code`` (its severity and name as declared), reading every family only when
    none imported so far declares it."""
    return REGISTRY.get(code) or _all_rules().get(code)


class AllCodes:
    """Every rule code, as an iterable that imports the families only when it is read: the
    configuration names codes to check against it, but most runs have no configuration."""

    def __iter__(self) -> Iterator[str]:
        return iter(_all_rules())

    def __contains__(self, code: object) -> bool:
        return code in _all_rules()

    def __len__(self) -> int:
        return len(_all_rules())


CODES = AllCodes()

__all__ = ["ALL_KINDS", "CODES", "FAMILIES", "RULES", "Rule", "checks_for", "declared"]
