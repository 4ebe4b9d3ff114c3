"""Local files a spec points at: a pipeline step's component file, a sweep step's trial, a
pipeline component, a schedule's create_job. Rules read them through here, so each referenced
file is parsed once however many specs (or steps) use it (validator.loader shares that parse
with the engine when it lints the file in its own right), and so a file's problems are linted
once per lint run (validator.paths.one_run) and then pointed at from the reference. The
linting itself is the engine's: it hands this module a callback (:func:`set_linter`), since the
engine sits above the rules that import this module. The other way round, :func:`step_users`
finds the pipelines that use a component file."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable, NamedTuple

from .diagnostic import Diagnostic
from .kinds import detect
from .loader import DEFAULT_MAX_BYTES, Document, load_path, read_limited
from . import paths as fs
from .paths import resolved


class Referenced(NamedTuple):
    """A referenced local file: its document (``None`` when it could not be read or parsed),
    its resolved path, and the diagnostics of linting it as a spec in its own right."""

    path: Path
    document: Document | None
    exists: bool

    @property
    def data(self) -> object:
        return self.document.data if self.document else None

    @property
    def kind(self) -> str | None:
        return self.document.kind if self.document else None

    def problems(self) -> list[Diagnostic]:
        """Errors found when the referenced file is linted on its own (cached)."""
        cached = _PROBLEMS.get(self.path)
        if cached is None:
            if _linter is None:
                raise RuntimeError("no linter for referenced files: import validator.engine, which sets it")
            with fs.one_run():  # the mark below must hold while the file is linted
                # Marked before linting: a file that (through others) references itself ends here.
                _PROBLEMS[self.path] = []
                cached = [d for d in _linter(self.path) if d.severity >= 3]
                _PROBLEMS[self.path] = cached
        return cached


# For one lint run (a referenced file's problems depend on the files it references in turn).
_CACHE: dict[tuple[Path, int, int], Referenced] = fs.run_cache()
_PROBLEMS: dict[Path, list[Diagnostic]] = fs.run_cache()

# How a referenced file is linted in its own right: the engine's whole pipeline with the default
# configuration, handed in by validator.engine when it loads (set_linter). The engine imports the
# rules, which import this module, so a call back up goes through this callback, never an import.
Linter = Callable[[Path], list[Diagnostic]]
_linter: Linter | None = None


def set_linter(linter: Linter) -> None:
    """Install the function that lints a referenced file (the diagnostics of all severities)."""
    global _linter
    _linter = linter


def is_local_path(reference: object) -> bool:
    """A reference that names a local file (not azureml:, a URL or a datastore URI)."""
    if not isinstance(reference, str) or not reference.strip():
        return False
    text = reference.strip()
    if text.startswith(("azureml:", "http://", "https://", "wasbs://", "abfss://", "adl://", "git+",
                        "${{")):
        return False
    return True


# A workspace-level Azure ML ARM id, as azure-ai-ml 1.35.2 recognises one
# (`_utils/_arm_id_utils.is_ARM_id_for_resource`: `/subscriptions/<sub>/resourceGroups/<rg>/
# providers/Microsoft.MachineLearningServices/workspaces/<ws>/<type>/<name>...`, any case, matched
# from the start). Here each segment must be non-empty.
_ARM_ID = re.compile(r"^/subscriptions/[^/]+/resourcegroups/[^/]+/providers/microsoft\.machinelearningservices/"
                     r"workspaces/[^/]+/[^/]+/[^/]+", re.IGNORECASE)


def is_arm_id(text: str) -> bool:
    """``text`` is an Azure ML asset's ARM id (without the 'azureml:' prefix). As a job input's
    `path` the SDK passes it to the service unchanged (`_resolve_job_input`), which is how the
    service stores registered data and models; as `code`, `environment`, a step's `component` or
    a schedule's `create_job` the SDK refuses it or reads it as a local path."""
    return bool(_ARM_ID.match(text.strip()))


# The workspace a long-form `azureml://` URI names before the asset or datastore path:
# `subscriptions/<sub>/resourcegroups/<rg>/workspaces/<ws>/` (azure-ai-ml's LONG_URI_FORMAT;
# `resourceGroups` is as common), read in any case and with or without the ARM provider segment,
# as the linter has always accepted it.
WORKSPACE_URI = (r"subscriptions/[^/]+/resourcegroups/[^/]+/(?:providers/microsoft\.machinelearningservices/)?"
                 r"workspaces/[^/]+/")
# `azureml://datastores/<datastore>/paths/<path>`, or the long form with the workspace first.
# Both name the same datastore path: azure-ai-ml reads either into one datastore and path
# (`AzureMLDatastorePathUri` in azure/ai/ml/_utils/_storage_utils.py, whose `to_short_uri` and
# `to_long_uri` convert between them), and Microsoft's examples write outputs to the long form
# (https://github.com/Azure/azureml-examples, sdk/python/jobs/single-step/pytorch/distributed-training).
_DATASTORE_URI = re.compile(r"azureml://(?:(?i:" + WORKSPACE_URI + r"))?datastores/(?P<datastore>[^/]+)/paths"
                            r"(?:/(?P<path>.*))?", re.DOTALL)


class DatastorePath(NamedTuple):
    """A datastore path, whichever form of URI named it."""

    datastore: str
    path: str


def datastore_path(uri: str) -> DatastorePath | None:
    """The datastore and path that ``uri`` names (``azureml://datastores/<d>/paths/<p>`` or
    ``azureml://subscriptions/<sub>/resourcegroups/<rg>/workspaces/<ws>/datastores/<d>/paths/<p>``);
    None for anything else."""
    match = _DATASTORE_URI.fullmatch(uri.strip())
    if match is None:
        return None
    return DatastorePath(match.group("datastore"), match.group("path") or "")


def datastore_uri_prefix(text: str) -> str:
    """``text`` with a long-form workspace part before ``datastores/`` taken off (the start of a
    URI, as a data map's prefix is): the short form's start. Other text is returned as it is."""
    match = re.match(r"azureml://(?i:" + WORKSPACE_URI + r")(?=datastores/)", text.strip())
    return "azureml://" + text.strip()[match.end():] if match else text


def _target(base_dir: Path, reference: str) -> Path:
    """The file a local ``reference`` (`./x.yml`, `file:./x.yml`) names, seen from ``base_dir``."""
    text = reference[len("file:"):] if reference.startswith("file:") else reference
    return resolved(Path(base_dir) / text)


def resolve(document: Document, reference: str) -> Referenced:
    """Load ``reference`` relative to the folder of ``document`` (as the SDK resolves it)."""
    path = _target(document.base_dir, reference)
    status = fs.stat(path)
    if status is None:
        return Referenced(path, None, False)
    key = (path, status.st_mtime_ns, status.st_size)
    found = _CACHE.get(key)
    if found is None:
        if fs.is_dir(path):
            found = Referenced(path, None, True)
        else:
            loaded, problems = load_path(path, max_bytes=DEFAULT_MAX_BYTES)
            if loaded is not None and loaded.data is not None:
                loaded.kind = detect(loaded).kind
            else:
                loaded = None
            found = Referenced(path, loaded, True)
        _CACHE[key] = found
    return found


STEP_USERS_LEVELS = 2
_STEP_USERS: dict[Path, list[Path]] = fs.run_cache()
# Per folder, for the lint run: the component files its pipelines' steps use, and which
# pipelines use each (in file-name order).
_FOLDER_USERS: dict[Path, dict[Path, list[Path]]] = fs.run_cache()


def step_users(path: Path, levels: int = STEP_USERS_LEVELS) -> list[Path]:
    """Pipeline files (jobs and pipeline components) whose steps use the file ``path`` as
    their component (`component:`, or a sweep step's `trial:`), looked for in the file's folder
    and up to ``levels`` folders above it, where example repositories keep the pipeline next
    to its components (`pipeline.yml` + `component.yml`, or `components/train/train.yml`).
    A pipeline counts when its text mentions ``path``'s name. Cached for the lint run."""
    target = resolved(path)
    cached = _STEP_USERS.get(target)
    if cached is not None:
        return list(cached)
    users: list[Path] = []
    folder = target.parent
    for _ in range(levels + 1):
        users.extend(user for user in folder_users(folder).get(target, ()) if user != target)
        if folder.parent == folder:
            break
        folder = folder.parent
    _STEP_USERS[target] = users
    return users


def folder_users(folder: Path) -> dict[Path, list[Path]]:
    """The local files that the steps of the pipeline files directly in ``folder`` use, each
    with the pipelines that use it, in file-name order. Every YAML file of the folder is read
    once per lint run, however many of its components ask (a flat folder of thousands of
    components asked once per component, and read every sibling each time)."""
    cached = _FOLDER_USERS.get(folder)
    if cached is not None:
        return cached
    index: dict[Path, list[Path]] = {}
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        names = []
    for name in names:
        if not name.endswith((".yml", ".yaml")):
            continue
        candidate = folder / name
        try:
            # Only regular files, at most the size limit: a FIFO named `x.yml` beside the
            # component would block the read, a huge file fill the memory.
            raw, _ = read_limited(candidate, DEFAULT_MAX_BYTES)
        except OSError:
            continue
        if len(raw) > DEFAULT_MAX_BYTES or b"jobs" not in raw:  # no pipeline without a `jobs:` key: leave the file unparsed
            continue
        for used in _step_targets(candidate, raw):
            # As the pipeline is found from the component: by the component's name in its text.
            if used.name.encode() in raw:
                index.setdefault(used, []).append(candidate)
    _FOLDER_USERS[folder] = index
    return index


def _step_targets(candidate: Path, raw: bytes) -> list[Path]:
    """The resolved local files the steps of ``candidate`` use (none unless it is a pipeline)."""
    document, _ = load_path(candidate, max_bytes=DEFAULT_MAX_BYTES, raw=raw)
    if document is None or not isinstance(document.data, dict):
        return []
    if detect(document).kind not in ("pipelineJob", "pipelineComponent"):
        return []
    targets: dict[Path, None] = {}  # in step order, each once
    jobs = document.data.get("jobs")
    for step in (jobs.values() if isinstance(jobs, dict) else ()):
        if not isinstance(step, dict):
            continue
        for key in ("component", "trial"):
            reference = step.get(key)
            if not is_local_path(reference):
                continue
            try:
                used = _target(candidate.parent, reference.strip())
            except (OSError, ValueError):
                continue
            targets[used] = None
    return list(targets)
