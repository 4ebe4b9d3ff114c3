"""A job's inputs and outputs on this machine.

Planning (at ``job create``, before anything runs) resolves every input to a source and fails
with one clear message when it cannot exist: an unregistered asset, a missing local file, a
file given where a folder is declared, cloud storage this machine cannot reach. Materialising
(at Preparing, in the supervisor) makes each input appear in the run folder as the service's
modes would:

- ``ro_mount`` (the default; also ``mount`` and ``eval_mount``): a real folder of hard links to
  the source's files, the local counterpart of a read-only mount (nothing is copied, and the
  path resolves inside the input folder, as a mount's does);
- ``download`` (``eval_download``): a copy, made read-only;
- ``direct``: the URI itself, for the script to open.

A literal input becomes Python's ``str()`` of its value (``true`` → ``True``, SPEC §3.2).
A remote URI that the workspace's data map names (``aml-run data map``, :mod:`runner.datamap`)
is read from its local copy; an unmapped ``https://`` file is downloaded once into
``cache/downloads`` (keyed by URL) at Preparing, and other unmapped cloud storage is refused
with the command that would map it.
``azureml://datastores/<d>/paths/<p>`` is ``<workspace>/datastores/<d>/<p>``, and so is its long
form ``azureml://subscriptions/<sub>/resourcegroups/<rg>/workspaces/<ws>/datastores/<d>/paths/<p>``
whatever workspace it names: the local workspace stands for it (read as an input, written as
an output, or mapped with ``aml-run data map``).

Declared outputs get ``outputs/<name>/`` in the run folder (a ``uri_file`` output a file path
inside it), or their datastore path; an output with ``name`` is registered as a data asset
when the job completes, as the service does.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
from pathlib import Path
from typing import Any

from validator.references import datastore_path, datastore_uri_prefix, is_arm_id
from validator.spec import JobInput, JobOutput

from . import datamap
from .errors import InputError
from .workspace import Workspace, check_name

MOUNT_MODES = ("ro_mount", "mount", "eval_mount", "rw_mount")
COPY_MODES = ("download", "eval_download")
FOLDER_TYPES = ("uri_folder", "mltable", "mlflow_model", "custom_model", "triton_model")
# `.../workspaces/<ws>/data/<name>/versions/<version>` (or models/...): the asset an ARM id names.
_ARM_ASSET = re.compile(r"/(?:data|models)/([^/]+)/versions/([^/]+)$", re.IGNORECASE)
_CLOUD_SCHEMES = ("wasbs://", "wasb://", "abfss://", "abfs://", "adl://", "s3://", "gs://")


NOT_A_DATASTORE_PATH = ("is not a datastore path: write azureml://datastores/<datastore>/paths/<path> (or "
                        "azureml://subscriptions/<sub>/resourcegroups/<rg>/workspaces/<ws>/datastores/<datastore>/"
                        "paths/<path>)")


def is_datastore_like(uri: str) -> bool:
    """``uri`` starts as a datastore URI does, in either form (what :func:`datastore_path` then
    fails to read is a malformed one, to refuse rather than guess)."""
    return datastore_uri_prefix(uri).startswith("azureml://datastores/")


def plan_input(job_input: JobInput, spec_dir: Path, workspace: Workspace) -> dict[str, Any]:
    """Where input ``job_input`` comes from, checked to exist; JSON-ready for the run folder."""
    if job_input.is_literal:
        return {"type": "literal", "value": job_input.literal_text()}
    name, kind = job_input.name, job_input.type
    mode = job_input.mode or "ro_mount"
    planned: dict[str, Any] = {"type": kind, "mode": mode, "uri": job_input.path}
    path = job_input.path
    if path is None:
        return {**planned, "type": "literal", "value": None}  # an optional input left empty
    mapped = datamap.resolve(workspace, path) if datamap.is_remote(path) else None
    if mapped is not None:
        # A local copy stands for the remote URI (`aml-run data map`); the spec is unchanged.
        prefix, source = mapped
        origin = f"local copy of {prefix} (aml-run data map)"
        if not source.exists():
            raise InputError(f"input '{name}': {path} is mapped to {source}, which does not exist; copy the "
                             f"data there, or change the map: `aml-run data map --uri-prefix {prefix} --path <folder>`")
        _check_exists(name, kind, path, source, origin)
        return {**planned, "source": str(source), "origin": origin}
    if path.startswith(("https://", "http://")):
        if kind != "uri_file":
            raise InputError(f"input '{name}': {path} is a URL, which can only be a uri_file input "
                             "here (a folder cannot be listed over http); map it to a local copy: "
                             f"`{datamap.suggestion(path.rstrip('/') + '/x')}`")
        return {**planned, "source": path, "origin": "https"}
    if path.startswith(_CLOUD_SCHEMES):
        raise InputError(f"input '{name}': {path} is cloud storage, which a local workspace cannot "
                         f"reach; map it to a local copy: `{datamap.suggestion(path)}`")
    found = datastore_path(path)
    if found is not None:
        source = workspace.datastore_path(found.datastore, found.path, uri=path)
        origin = f"datastore {found.datastore}"
        if not source.exists():
            raise InputError(f"input '{name}': {path} does not exist (datastore {found.datastore}: {source}); put "
                             f"the data there, or map the URI to a local copy: `{datamap.suggestion(path)}`")
    elif is_datastore_like(path):
        raise InputError(f"input '{name}': {path} {NOT_A_DATASTORE_PATH}")
    elif path.startswith("azureml:") and not path.startswith("azureml://"):
        asset_name, version, entry = workspace.lookup("data", path)
        if not entry.get("path"):
            raise InputError(f"input '{name}': data asset {asset_name}:{version} has no path in the workspace registry")
        source = workspace.resolve_path(str(entry["path"]))
        origin = f"data asset {asset_name}:{version}"
        planned["asset"] = f"{asset_name}:{version}"
    elif path.startswith("azureml://"):
        raise InputError(f"input '{name}': {path} points into an Azure ML registry or workspace that a "
                         "local workspace cannot reach; register a local copy with `aml-run data create`")
    elif is_arm_id(path):
        # The service takes an asset's ARM id as an input path (the SDK passes it on unchanged).
        asset = _ARM_ASSET.search(path.strip())
        local = f"azureml:{asset.group(1)}:{asset.group(2)}" if asset else "azureml:<name>:<version>"
        raise InputError(f"input '{name}': {path} is the ARM id of an asset in an Azure ML workspace, "
                         "which a local workspace cannot reach; register a local copy with `aml-run data "
                         f"create` and write `path: {local}`")
    else:
        local = path[len("file:"):] if path.startswith("file:") else path
        source = (spec_dir / local)
        origin = "local path"
    source = Path(os.path.abspath(source))
    _check_exists(name, kind, path, source, origin)
    return {**planned, "source": str(source), "origin": origin}


def _check_exists(name: str, kind: str, written: str, source: Path, origin: str) -> None:
    shown = written if written == str(source) else f"{written} (resolved to {source})"
    if not source.exists():
        raise InputError(f"input '{name}': {shown} does not exist ({origin}); create it, or fix the path")
    if kind == "uri_file" and not source.is_file():
        raise InputError(f"input '{name}' is a uri_file but {shown} is a folder; declare it "
                         "`type: uri_folder`, or point at one file")
    if kind in FOLDER_TYPES and not source.is_dir():
        raise InputError(f"input '{name}' is a {kind} but {shown} is a file; declare it "
                         "`type: uri_file`, or point at its folder")
    if kind == "mltable" and not (source / "MLTable").is_file():
        raise InputError(f"input '{name}' is an mltable but {shown} has no MLTable file")


def materialise_input(name: str, planned: dict[str, Any], run_dir: Path, cache: Path) -> str | None:
    """Make input ``name`` available to the job; return the text that replaces
    ``${{inputs.name}}``."""
    if planned["type"] == "literal":
        return planned.get("value")
    mode = planned["mode"]
    if mode == "direct":
        if planned.get("origin") == "https":
            return planned["source"]
        return Path(planned["source"]).as_uri()
    source = Path(planned["source"])
    if planned.get("origin") == "https":
        source = _download(planned["source"], cache)
    target_dir = run_dir / "inputs" / name
    target_dir.mkdir(parents=True, exist_ok=True)
    # A file keeps its name, as it would on a mount; a folder is the input folder itself.
    target = target_dir / source.name if source.is_file() else target_dir
    if mode in COPY_MODES:
        if source.is_dir():
            shutil.rmtree(target_dir)
            shutil.copytree(source, target_dir, symlinks=False)
        else:
            shutil.copy2(source, target)
        _make_read_only(target)
    else:
        # A real folder of hard links, not a symbolic link: a link that resolves outside the
        # folder the script was given makes libraries that check where a path resolves refuse
        # it (mlflow.<flavor>.load_model: "resolved path is outside the artifact directory").
        # Nothing is copied unless the source is on another file system.
        if source.is_dir():
            shutil.rmtree(target_dir)
            link_tree(source, target_dir)
        else:
            _link_or_copy(source, target)
    return str(target)


def _link_or_copy(source: Path, target: Path) -> None:
    """Hard-link ``source`` at ``target``; copy it, read-only, when a link cannot be made
    (another file system, one without hard links). A hard link keeps the source's mode: making
    it read-only would make the source read-only too."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)
        _make_read_only(target)


def link_tree(source: Path, target: Path) -> None:
    """``target`` as a folder tree of hard links to ``source``'s files. A symbolic link in
    ``source`` stays a link with the same text (``latest.pt -> checkpoint-99.pt`` points into the
    new tree, as it did into the old one), whether it resolves, dangles or loops."""
    def link(src: str, dst: str) -> str:
        _link_or_copy(Path(src), Path(dst))
        return dst

    shutil.copytree(source, target, symlinks=True, copy_function=link)


def _make_read_only(path: Path) -> None:
    """Files read-only, as a downloaded input is; folders stay writable so that the run folder
    can still be deleted by its owner (a read-only folder would make `rm -rf` fail)."""
    clear = ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    files = [path] if path.is_file() else [Path(folder) / name for folder, _, names in os.walk(path) for name in names]
    for file in files:
        if not file.is_symlink():
            file.chmod(file.stat().st_mode & clear)


def _download(url: str, cache: Path) -> Path:
    """Fetch ``url`` once into the cache (atomically: a partial download never counts)."""
    import urllib.error
    import urllib.parse
    import urllib.request

    key = hashlib.sha256(url.encode()).hexdigest()[:24]
    name = Path(urllib.parse.urlparse(url).path).name or "download"
    folder = cache / "downloads" / key
    target = folder / name
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".{name}.{os.getpid()}.part"
    try:
        with urllib.request.urlopen(url, timeout=30) as response, open(partial, "wb") as out:
            shutil.copyfileobj(response, out)
        os.replace(partial, target)
    except (urllib.error.URLError, OSError, ValueError) as error:
        partial.unlink(missing_ok=True)
        reason = getattr(error, "reason", None) or error
        raise InputError(f"cannot download {url}: {reason}. Offline? Put a copy of it on this machine and "
                         f"map it: `{datamap.suggestion(url)}`") from None
    return target


def expand_output_path(path: str, job_name: str, output_name: str) -> str:
    """An output path's ``${{name}}`` (the job's name) and ``${{output_name}}``, as the service
    expands them (https://learn.microsoft.com/azure/machine-learning/how-to-read-write-data-v2)."""
    return path.replace("${{name}}", job_name).replace("${{output_name}}", output_name)


def plan_output(output: JobOutput, run_dir: Path, workspace: Workspace, job_name: str) -> dict[str, Any]:
    """Where output ``output`` is written; its folder is created at Preparing."""
    # An output with `name` is registered when the job completes: a name the registry would
    # refuse then is refused now, before anything runs.
    if output.asset_name is not None:
        check_name("data", str(output.asset_name))
    if output.asset_version is not None:
        check_name("version", str(output.asset_version))
    written = expand_output_path(output.path, job_name, output.name) if output.path else None
    found = datastore_path(written) if written else None
    if found is not None:
        location = workspace.datastore_path(found.datastore, found.path, uri=written)
    elif written and is_datastore_like(written):
        # Not silently the run folder: the next job reading this URI would find nothing there.
        raise InputError(f"output '{output.name}': {output.path} {NOT_A_DATASTORE_PATH}")
    else:
        location = run_dir / "outputs" / output.name
    if output.type == "uri_file":
        location = location / output.name if not location.suffix else location
    return {"type": output.type, "mode": output.mode or "rw_mount", "path": str(location),
            "asset_name": output.asset_name, "asset_version": output.asset_version}


def prepare_output(planned: dict[str, Any]) -> str:
    location = Path(planned["path"])
    folder = location.parent if planned["type"] == "uri_file" else location
    folder.mkdir(parents=True, exist_ok=True)
    return str(location)
