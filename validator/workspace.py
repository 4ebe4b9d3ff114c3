"""The local workspace's registry: what `azureml:<name>:<version>` means on this machine.

A workspace is a folder (the runner's default is `.amllab/`) holding `workspace.yml`. The
runner's `aml-run data|environment|component|compute create` write it; `aml-lint --workspace
DIR` reads it to check that every referenced asset is registered, as the service would refuse
a job whose data asset or compute does not exist. The format (version 1):

    version: 1
    data:                         # data assets: name -> version -> entry
      churn-raw:
        "3": {type: uri_folder, path: data/churn-raw}
    environments:
      sklearn-train:
        "2": {python: /usr/bin/python3}
    components:
      prep_data:
        "1": {path: components/prep_data.yml}
    computes:                     # computes have no versions: name -> entry
      cpu-cluster: {type: cpu, max_instances: 4}

Versions are strings. An entry may carry `labels: [...]` besides the implicit `latest` (the
most recently registered version, i.e. the last listed). Only the validator reads YAML; the
runner gets a :class:`Registry`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import UsageError
from .names import name_problem

FILE_NAME = "workspace.yml"
VERSIONED = ("data", "environments", "components")
SECTIONS = VERSIONED + ("computes",)

# How `aml-run` registers each kind (shown in the fix for an unregistered reference).
REGISTER_COMMANDS = {
    "data": "aml-run data create --name {name} --version {version} --path <local path>",
    "environments": "aml-run environment create --name {name} --version {version} --file <environment.yml>",
    "components": "aml-run component create --file <component.yml>",
    "computes": "aml-run compute create --name {name}",
}
TITLES = {"data": "data asset", "environments": "environment", "components": "component",
          "computes": "compute"}
# Curated environments exist in every workspace, prebuilt by Microsoft and named `AzureML-...`
# (https://learn.microsoft.com/azure/machine-learning/resource-curated-environments), so a
# reference such as `azureml:AzureML-sklearn-1.5@latest` needs no registration.
CURATED_PREFIX = "AzureML-"


def is_curated_environment(name: str) -> bool:
    return name.startswith(CURATED_PREFIX)


# The kind of name (validator.names) each section holds.
NAME_KINDS = {"data": "data", "environments": "environment", "components": "component", "computes": "compute"}


@dataclass(frozen=True)
class Registry:
    folder: Path
    assets: dict[str, dict[str, Any]] = field(default_factory=dict)

    def versions(self, section: str, name: str) -> list[str]:
        entries = self.assets.get(section, {}).get(name)
        return list(entries) if isinstance(entries, dict) else []

    def has(self, section: str, name: str, version: str | None = None, label: str | None = None) -> bool:
        """Whether ``name`` (at ``version`` or ``label``; any version when both are None) is
        registered. Computes have no versions."""
        entries = self.assets.get(section, {}).get(name)
        if entries is None:
            return False
        if section == "computes" or (version is None and label is None):
            return True
        if version is not None:
            return version in entries
        if label == "latest":
            return bool(entries)
        return any(isinstance(e, dict) and label in (e.get("labels") or []) for e in entries.values())


def load_registry(folder: Path) -> Registry:
    """Read ``folder/workspace.yml``; a problem with it is one :class:`UsageError` line."""
    path = folder / FILE_NAME
    if not folder.is_dir():
        raise UsageError(f"workspace folder {folder} does not exist (create one with `aml-run`, or "
                         "point --workspace at the folder that holds workspace.yml)")
    if not path.is_file():
        return Registry(folder, {section: {} for section in SECTIONS})
    try:
        data = yaml.safe_load(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise UsageError(f"{path}: cannot read the workspace registry: {error}") from None
    data = data or {}
    if not isinstance(data, dict):
        raise UsageError(f"{path}: the workspace registry must be a mapping with "
                         f"{', '.join(SECTIONS)}")
    assets: dict[str, dict[str, Any]] = {}
    for section in SECTIONS:
        entries = data.get(section) or {}
        if not isinstance(entries, dict):
            raise UsageError(f"{path}: `{section}` must be a mapping of names")
        if section in VERSIONED:
            for name, versions in entries.items():
                if not isinstance(versions, dict):
                    raise UsageError(f"{path}: `{section}.{name}` must map versions to entries")
            assets[section] = {str(n): {str(v): e for v, e in vs.items()} for n, vs in entries.items()}
        else:
            assets[section] = {str(n): e for n, e in entries.items()}
    return Registry(folder, assets)


def parse_reference(reference: str) -> tuple[str, str | None, str | None] | None:
    """`azureml:<name>[:<version>|@<label>]` -> (name, version, label); None for other forms
    (registry and datastore URIs, ARM ids), which a local workspace cannot hold."""
    if not reference.startswith("azureml:") or reference.startswith("azureml://") \
            or reference.startswith("azureml:/"):
        return None
    body = reference[len("azureml:"):]
    if "@" in body:
        name, label = body.split("@", 1)
        return (name, None, label) if name and label else None
    if ":" in body:
        name, version = body.split(":", 1)
        return (name, version, None) if name and version else None
    return (body, None, None) if body else None


def register(folder: Path, section: str, name: str, version: str | None, entry: dict[str, Any]) -> str:
    """Add ``name`` (at ``version``; computes have none) to ``folder/workspace.yml`` and return
    the version registered. The registry is read, changed and written under an exclusive lock
    and replaced atomically, so two concurrent ``aml-run ... create`` never lose an entry and a
    reader never sees half a file. A version without an explicit number gets the next integer,
    like the service's auto-increment."""
    import fcntl

    from .paths import write_text_atomic

    if section not in SECTIONS:
        raise UsageError(f"unknown registry section {section!r}")
    # Names become folders of the workspace (computes/<name>/, components/<name>-<hash>/) and
    # are what the service would accept; one check keeps `../x` out of the registry.
    problem = name_problem(NAME_KINDS[section], name) or (
        name_problem("version", version) if version is not None and section in VERSIONED else None)
    if problem is not None:
        raise UsageError(f"cannot register {TITLES[section]} {name!r}: {problem}")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / FILE_NAME
    with open(folder / (FILE_NAME + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _remove_temporaries(folder)
        registry = load_registry(folder)
        assets = {s: dict(registry.assets.get(s, {})) for s in SECTIONS}
        if section in VERSIONED:
            versions = dict(assets[section].get(name, {}))
            following = str(max((int(v) for v in versions if v.isdigit()), default=0) + 1)
            if version is None:
                version = following
            existing = versions.get(version)
            if existing is not None:
                # Versions are immutable, as in the service: a job pinned to churn-raw:3 must
                # not quietly get other data. Registering the same thing again is a no-op.
                if existing == entry:
                    return version
                raise UsageError(f"{TITLES[section]} {name}:{version} is already registered with other "
                                 f"contents; versions do not change: register version {following} "
                                 "(or leave the version out)")
            versions[version] = entry
            assets[section][name] = versions
        else:
            assets[section][name] = entry
        text = yaml.safe_dump({"version": 1, **assets}, sort_keys=False, allow_unicode=True)
        write_text_atomic(path, "# The local registry of aml-run (see validator/workspace.py). "
                                "Written by `aml-run ... create`.\n" + text)
    return version or ""


def latest(registry: Registry, section: str, name: str) -> str | None:
    """The most recently registered version of ``name`` (the one `@latest` means)."""
    versions = registry.versions(section, name)
    return versions[-1] if versions else None


def _temporaries(folder: Path) -> list[Path]:
    """What an interrupted write of workspace.yml leaves (validator.paths.write_text_atomic)."""
    return sorted(folder.glob(f".{FILE_NAME}.*.tmp"))


def _remove_temporaries(folder: Path) -> None:
    # Only called under the registry's lock, which every writer holds while it writes: a
    # temporary file seen here belongs to a writer that died before its rename.
    for temporary in _temporaries(folder):
        temporary.unlink(missing_ok=True)


def clean_stale_temporaries(folder: Path) -> bool:
    """Remove the temporary files of interrupted registry writes, if the registry's lock is free
    now (a writer holding it may be mid-write: its file is left alone, and cleaned next time).
    True when there was nothing left to clean."""
    import fcntl

    if not _temporaries(folder):
        return True
    try:
        lock = open(folder / (FILE_NAME + ".lock"), "a")
    except OSError:
        return False
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        _remove_temporaries(folder)
    return True
