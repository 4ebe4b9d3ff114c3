"""Offline data: remote URIs mapped to local copies, without editing the spec.

A spec names its data where the service reads it (``https://...``, ``wasbs://...``,
``abfss://...``, ``azureml://datastores/<d>/paths/...``). This machine cannot reach cloud
storage, so the workspace keeps a map from a URI prefix to a local folder
(``aml-run data map --uri-prefix https://host/datasets/ --path ./local-copy``): an input whose
URI starts with a mapped prefix is read from the folder, the rest of the URI being the path
inside it. The longest matching prefix wins. The map is ``data-maps.json`` in the workspace,
changed under a lock and replaced atomically. A datastore URI's long form
(``azureml://subscriptions/<sub>/resourcegroups/<rg>/workspaces/<ws>/datastores/...``) names the
same path as its short form, so either is read, and kept, as the short form: a map made with
one form serves URIs written in the other.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

from validator.references import datastore_uri_prefix

from .errors import InputError, NotFound, RunnerError
from .status import write_json_atomic
from .workspace import Workspace

FILE = "data-maps.json"
# The URIs a map can stand for: what a job can name but this machine cannot fetch by itself
# (an https file is downloaded when it is not mapped; a datastore path is a workspace folder).
REMOTE_SCHEMES = ("https://", "http://", "wasbs://", "wasb://", "abfss://", "abfs://", "adl://", "s3://", "gs://",
                  "azureml://datastores/")


def is_remote(uri: str) -> bool:
    return datastore_uri_prefix(uri).startswith(REMOTE_SCHEMES)


def load(workspace: Workspace) -> dict[str, str]:
    """URI prefix -> local folder (absolute)."""
    path = workspace.folder / FILE
    if not path.is_file():
        return {}
    try:
        maps = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise RunnerError(f"{path}: cannot read the data map ({error}); fix or delete the file, then map "
                          "again with `aml-run data map`") from None
    if not isinstance(maps, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in maps.items()):
        raise RunnerError(f"{path}: the data map is not an object of URI prefix to folder; fix or delete the file")
    return maps


def _change(workspace: Workspace, prefix: str, folder: str | None) -> dict[str, str]:
    workspace.ensure()
    with open(workspace.folder / (FILE + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two `data map` at once: neither loses the other's entry
        maps = load(workspace)
        if folder is None:
            if prefix not in maps:
                raise NotFound(f"no data map for '{prefix}' (aml-run data map --list shows them)")
            del maps[prefix]
        else:
            maps[prefix] = folder
        write_json_atomic(workspace.folder / FILE, dict(sorted(maps.items())))
    return maps


def add(workspace: Workspace, prefix: str, path: str | Path) -> dict[str, str]:
    """Map URIs starting with ``prefix`` to the local folder ``path``; returns the entry."""
    if not is_remote(prefix):
        raise RunnerError(f"--uri-prefix {prefix}: not a remote URI; map one that starts with "
                          f"{', '.join(REMOTE_SCHEMES)}")
    prefix = datastore_uri_prefix(prefix)
    folder = Path(os.path.abspath(path))
    if not folder.is_dir():
        raise NotFound(f"--path {path}: no such folder; copy the data there first (the URI's rest is the path "
                       "inside it)")
    _change(workspace, prefix, str(folder))
    return {"uri_prefix": prefix, "path": str(folder)}


def remove(workspace: Workspace, prefix: str) -> dict[str, str]:
    prefix = datastore_uri_prefix(prefix)
    _change(workspace, prefix, None)
    return {"uri_prefix": prefix, "path": ""}


def rows(workspace: Workspace) -> list[dict[str, Any]]:
    return [{"uri_prefix": prefix, "path": folder} for prefix, folder in load(workspace).items()]


def resolve(workspace: Workspace, uri: str) -> tuple[str, Path] | None:
    """The mapped prefix and the local path for ``uri``, or None when no prefix maps it. The rest
    of the URI may not climb out of the folder (`..`)."""
    short = datastore_uri_prefix(uri)
    maps = load(workspace)
    matches = [prefix for prefix in maps if short.startswith(prefix)]
    if not matches:
        return None
    prefix = max(matches, key=len)
    rest = short[len(prefix):].split("?", 1)[0].strip("/")
    if any(part in ("..", ".") for part in rest.split("/")):
        raise InputError(f"{uri}: a path with a '.' or '..' segment after the mapped prefix {prefix} is refused")
    return prefix, Path(maps[prefix]) / rest if rest else Path(maps[prefix])


def suggestion(uri: str) -> str:
    """The command that would map ``uri``: its folder as the prefix."""
    uri = datastore_uri_prefix(uri)
    folder = uri.rsplit("/", 1)[0] + "/" if "/" in uri[uri.index("//") + 2:] else uri
    return f"aml-run data map --uri-prefix {folder} --path <local copy of that folder>"
