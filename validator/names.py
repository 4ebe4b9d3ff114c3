"""The names Azure ML gives its resources, checked by one function.

The service refuses a resource whose name breaks its pattern (the ARM template reference lists
each pattern: https://learn.microsoft.com/en-us/azure/templates/microsoft.machinelearningservices/workspaces/computes
and .../workspaces/data, .../workspaces/environments, .../workspaces/models,
.../workspaces/components, .../workspaces/datastores, .../workspaces/jobs,
.../workspaces/schedules). On this machine those names also become folder and file names
(`runs/<job>/`, `runs/<pipeline>/steps/<step>/`, `computes/<compute>/slot-0.lock`, `components/<name>-<hash>/`,
`schedules/<name>.json`, `datastores/<datastore>/`), so the same patterns keep every one of
them inside the workspace: none of them admits `/`, `\\` or a name made only of dots.

A component defined in a file is stricter: the SDK loads it only if its name starts with a
lower-case letter and holds lower-case letters, digits and underscores (rule AML530).
"""

from __future__ import annotations

import re

# Data, environments, models, datastores, jobs, schedules and registered component containers.
ASSET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,254}")
# Curated environments are named with dots (AzureML-sklearn-1.5); registering one locally
# says what it means on this machine, so that name is accepted for an environment here.
CURATED_ENVIRONMENT = re.compile(r"AzureML-[A-Za-z0-9][A-Za-z0-9._-]{0,246}")
# A compute: 3 to 24 characters, a letter first, and not ending in a hyphen and digits (the
# service keeps "-<n>" for the nodes of a cluster).
COMPUTE_NAME = re.compile(r"[A-Za-z](?![A-Za-z0-9-]*-\d+$)[A-Za-z0-9-]{2,23}")
# A pipeline's step: a Python identifier in the SDK, lower case (rule AML501); a folder here.
STEP_NAME = re.compile(r"[a-z_][a-z0-9_]*")
# What azure-ai-ml accepts as a component's own `name`.
COMPONENT_NAME = re.compile(r"[a-z][a-z0-9_]*")
MAX_COMPONENT_NAME = 255
# Versions have no pattern in the service's API; the local registry keeps them to the
# characters versions are written with (3, 1.0.2, 2024-06-01, v2_rc1).
VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,254}")

_ASSET_RULE = "use letters, digits, '-' and '_', starting with a letter or digit (at most 255 characters)"
_RULES: dict[str, tuple[re.Pattern[str], str]] = {
    "data": (ASSET_NAME, _ASSET_RULE),
    "environment": (ASSET_NAME, _ASSET_RULE),
    "model": (ASSET_NAME, _ASSET_RULE),
    "datastore": (ASSET_NAME, _ASSET_RULE),
    "job": (ASSET_NAME, _ASSET_RULE),
    "schedule": (ASSET_NAME, _ASSET_RULE),
    "component": (ASSET_NAME, _ASSET_RULE),
    "component definition": (COMPONENT_NAME, "start with a lower-case letter and use only lower-case letters, "
                                             f"digits and '_' (at most {MAX_COMPONENT_NAME} characters)"),
    "step": (STEP_NAME, "use lower-case letters, digits and '_', starting with a letter or '_'"),
    "compute": (COMPUTE_NAME, "use 3 to 24 letters, digits and '-', starting with a letter and not ending "
                              "in '-' followed by digits"),
    "version": (VERSION, "use letters, digits, '.', '-' and '_', starting with a letter or digit (at most "
                         "255 characters)"),
}
KINDS = tuple(_RULES)


def name_problem(kind: str, name: object) -> str | None:
    """Why ``name`` is not a valid name for a ``kind`` (one of :data:`KINDS`), as one sentence
    that names the rule; None when it is valid."""
    pattern, rule = _RULES[kind]
    what = "version" if kind == "version" else f"{kind} name"
    if not isinstance(name, str) or not name:
        return f"{what} {name!r} is not valid: {rule}"
    if kind == "environment" and CURATED_ENVIRONMENT.fullmatch(name):
        return None
    if kind == "component definition" and len(name) > MAX_COMPONENT_NAME:
        return f"{what} is {len(name)} characters long; the limit is {MAX_COMPONENT_NAME}"
    if not pattern.fullmatch(name):
        return f"{what} {name!r} is not valid: {rule}"
    return None
