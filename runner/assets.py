"""Registering assets in the workspace, as ``az ml data|environment|component|compute create``
register them in the service. Each function checks what it registers (the data exists, the
conda file parses, the component lints clean) and returns the entry as ``show`` prints it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from validator.spec import load_asset, load_spec

from . import environments
from .errors import NotFound, RunnerError
from .workspace import SECTION_OF, TEMP_PREFIX, Workspace, check_name, remove_stale_temporaries

DATA_TYPES = ("uri_file", "uri_folder", "mltable")


def _from_file(file: str | Path | None) -> tuple[dict[str, Any], Path]:
    if file is None:
        return {}, Path.cwd()
    path = Path(file)
    if not path.is_file():
        raise NotFound(f"{path}: no such file")
    return load_asset(path), path.resolve().parent


def _name_version(fields: dict[str, Any], name: str | None, version: str | None, what: str,
                  kind: str) -> tuple[str, str | None]:
    """The name and version to register, checked before anything is copied or written."""
    name = name or fields.get("name")
    if not name:
        raise RunnerError(f"{what} needs a name: give --name or `name:` in the file")
    chosen = version if version is not None else fields.get("version")
    check_name(kind, str(name))
    if chosen is not None:
        check_name("version", str(chosen))
    return str(name), None if chosen is None else str(chosen)


def create_data(workspace: Workspace, file: str | None = None, name: str | None = None,
                version: str | None = None, path: str | None = None, type_: str | None = None,
                description: str | None = None) -> dict[str, Any]:
    fields, base = _from_file(file)
    name, version = _name_version(fields, name, version, "a data asset", "data")
    kind = type_ or fields.get("type") or "uri_folder"
    if kind not in DATA_TYPES:
        raise RunnerError(f"data asset type '{kind}' is not one of {', '.join(DATA_TYPES)}")
    written = path or fields.get("path")
    if not written:
        raise RunnerError("a data asset needs a path: give --path or `path:` in the file")
    written = str(written)
    if written.startswith(("https://", "http://", "azureml://", "wasbs://", "abfss://")):
        raise RunnerError(f"data path {written} is remote; a local workspace registers local files and folders")
    local = Path(written[len("file:"):] if written.startswith("file:") else written)
    source = (local if local.is_absolute() else base / local).resolve()
    if not source.exists():
        raise NotFound(f"data path {source} does not exist")
    if kind == "uri_file" and not source.is_file():
        raise RunnerError(f"a uri_file data asset must be a file, and {source} is a folder (use --type uri_folder)")
    if kind != "uri_file" and not source.is_dir():
        raise RunnerError(f"a {kind} data asset must be a folder, and {source} is a file (use --type uri_file)")
    entry = {"type": kind, "path": str(source)}
    if description or fields.get("description"):
        entry["description"] = str(description or fields.get("description"))
    version = workspace.register("data", name, version, entry)
    return {"name": name, "version": version, **entry}


def create_environment(workspace: Workspace, file: str | None = None, name: str | None = None,
                       version: str | None = None, python: str | None = None,
                       conda_file: str | None = None, image: str | None = None) -> dict[str, Any]:
    fields, base = _from_file(file)
    if file and ("dependencies" in fields or "channels" in fields) and not (
            fields.get("image") or fields.get("conda_file") or fields.get("build")):
        # `az ml environment create --file` reads an environment spec; azure-ai-ml refuses a conda
        # file there ("It looks like you are trying to specify a conda file for the --file/-f
        # argument ... please use --conda-file/-c"): the same here, with both ways that work.
        raise RunnerError(f"{file} is a conda file, not an environment spec: register it with "
                          f"`aml-run environment create --name <name> --version 1 --conda-file {file}`, "
                          "or write an environment YAML with `name:`, `version:` and `conda_file: "
                          f"{Path(file).name}` and pass that to --file")
    name, version = _name_version(fields, name, version, "an environment", "environment")
    entry: dict[str, Any] = {}
    image = image or fields.get("image")
    if image:
        entry["image"] = str(image)
    conda = conda_file or fields.get("conda_file")
    if conda:
        conda_path = (Path.cwd() if conda_file else base) / str(conda)
        if not conda_path.is_file():
            raise NotFound(f"conda file {conda_path} does not exist")
        found = environments.conda_dependencies(load_asset(conda_path), conda_path.resolve().parent)
        entry.update(conda_file=str(conda_path.resolve()), pip=list(found.pip))
        if found.python_pin:
            entry["python_version"] = found.python_pin
        if found.conda_only:
            entry["conda_only"] = list(found.conda_only)
    if python:
        resolved, _ = environments.python_from(python, Path.cwd())
        entry["python"] = str(Path(python).expanduser().resolve()) if Path(python).is_dir() else resolved
    version = workspace.register("environment", name, version, entry)
    return {"name": name, "version": version, **entry}


def create_component(workspace: Workspace, file: str) -> dict[str, Any]:
    spec = load_spec(file, workspace=workspace.folder)
    if spec.kind not in ("commandComponent", "pipelineComponent"):
        raise RunnerError(f"{file} is a {spec.kind}, not a component")
    name, version = _name_version(spec.data, None, None, "a component", "component")
    entry = {"type": spec.data.get("type", "command"), "path": str(spec.path)}
    if spec.kind == "commandComponent":
        entry = _frozen_component(workspace, spec.data, spec.path, name)
    version = workspace.register("component", name, version, entry)
    return {"name": name, "version": version, **entry}


def _frozen_component(workspace: Workspace, data: dict[str, Any], source: Path, name: str) -> dict[str, Any]:
    """A registered command component keeps the code it was registered with: `az ml component
    create` uploads the code folder, and a job that names azureml:train_model:1 runs that upload,
    whatever the folder holds today. So the YAML and a snapshot of its ``code`` (same selection
    rules as a job's) are copied to ``<workspace>/components/<name>-<content hash>/``; the entry
    points there. The same content registered again is the same entry (a no-op); other content
    under a version that exists is refused, as versions do not change."""
    import hashlib
    import shutil
    import tempfile

    import yaml

    from .snapshot import take_snapshot

    frozen = dict(data)
    base = source.resolve().parent
    store = workspace.folder / "components"
    store.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(store)
    staging = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-", dir=store))
    try:
        code = data.get("code")
        if isinstance(code, str) and not code.startswith(("azureml:", "http:", "https:", "git+")):
            take_snapshot(base / code, staging / "code", exclude=[workspace.folder])
            frozen["code"] = "./code"
        environment = frozen.get("environment")
        if isinstance(environment, str) and environment.startswith("file:"):
            frozen["environment"] = "file:" + str(base / environment[len("file:"):])
        elif isinstance(environment, dict) and isinstance(environment.get("conda_file"), str):
            frozen["environment"] = {**environment, "conda_file": str(base / environment["conda_file"])}
        text = (f"# {name}, as registered from {source} by `aml-run component create`.\n"
                + yaml.safe_dump(frozen, sort_keys=False, allow_unicode=True))
        (staging / "component.yml").write_text(text)
        digest = hashlib.sha256(text.encode())
        for path in sorted(p for p in (staging / "code").rglob("*") if p.is_file()):
            digest.update(path.relative_to(staging).as_posix().encode() + b"\0" + path.read_bytes())
        target = store / f"{name}-{digest.hexdigest()[:16]}"
        if not target.exists():
            staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {"type": "command", "path": str(target / "component.yml"), "source": str(source)}


def create_compute(workspace: Workspace, name: str, max_instances: int = 4, type_: str = "cpu",
                   size: str | None = None, address: str | None = None) -> dict[str, Any]:
    check_name("compute", name)  # it names the folder of the compute's instance locks
    if max_instances < 1:
        raise RunnerError("--max-instances must be at least 1")
    entry: dict[str, Any] = {"type": type_, "max_instances": max_instances}
    if type_ == "ray":
        from . import cluster

        if not address:
            raise RunnerError("a ray compute needs --address HOST:PORT, the head of the cluster "
                              f"(`{cluster.START_HEAD}` prints it)")
        entry["address"] = cluster.check_address(address)
    elif address:
        raise RunnerError(f"--address is the head of a Ray cluster; a {type_} compute runs on this machine "
                          "(--type ray for a cluster)")
    if size:
        entry["size"] = size
    workspace.register("compute", name, None, entry)
    return {"name": name, **entry}


def list_assets(workspace: Workspace, kind: str) -> list[dict[str, Any]]:
    section = SECTION_OF[kind]
    entries = workspace.registry().assets.get(section, {})
    if section == "computes":
        return [{"name": name, **entry} for name, entry in entries.items()]
    return [{"name": name, "version": version, **entry}
            for name, versions in entries.items() for version, entry in versions.items()]


def show_asset(workspace: Workspace, kind: str, name: str, version: str | None = None,
               label: str | None = None) -> dict[str, Any]:
    reference = f"azureml:{name}" + (f":{version}" if version else f"@{label}" if label else "")
    found_name, found_version, entry = workspace.lookup(kind, reference)
    shown = {"name": found_name, **entry}
    if found_version is not None:
        shown = {"name": found_name, "version": found_version, **entry}
    return shown
