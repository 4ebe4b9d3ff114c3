"""Pipeline step reuse: a content-addressed cache of completed steps, and the reasons behind
every decision.

A step's key is a hash over everything that decides its result (the service's criteria, from
"Debug pipeline reuse issues"): the command as written, the environment and run settings as
resolved (compute, resources, distribution, environment variables, timeout), the content of
the code folder file by file, the content of every data input (a file, or a folder file by
file; an upstream step's output counts by the job that produced it, so a reused upstream
keeps its consumers reusable and one that ran again makes them run too), every literal input
value, and the outputs' settings. The name of the pipeline, of the job, or when it ran do not
count.

``<workspace>/step-cache/<key>/`` holds a completed step: ``entry.json`` (the job it came
from, the key's parts, its metrics), its outputs and its logs. An entry is built in a
``.tmp-<pid>-*`` folder beside it and renamed into place, so a step killed while it is being
stored leaves nothing a later run would trust; the next store removes the temporaries whose
writer is gone. Outputs are copied without following links: a link that points inside its
output folder is kept as a (relative) link, dangling or not; a link out of it makes the step
not storable (it stays Completed, and says why), so nothing outside the output is ever read
into the cache. ``index/<identity>.json`` remembers the key parts of
the last stored run of each step (identity: the pipeline file and the step's name), which is
what ``--why`` compares with to say what changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import status
from .plans import CommandPlan
from .workspace import Workspace, remove_stale_temporaries, temporary_name

FOLDER = "step-cache"
_SKIPPED_PARTS = {"__pycache__", ".git", ".ipynb_checkpoints"}


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def tree_digests(root: Path) -> dict[str, str]:
    """Every file under ``root`` (relative path -> content digest); a file alone as ``{name: digest}``."""
    if root.is_file():
        return {root.name: file_digest(root)}
    found = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if path.is_file() and not _SKIPPED_PARTS.intersection(relative.parts) and path.suffix != ".pyc":
            found[relative.as_posix()] = file_digest(path)
    return found


def _combine(parts: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


@dataclass
class Decision:
    identity: str                            # the step across runs: its pipeline file and name
    key: str
    fields: dict[str, str]                   # command, environment, run settings, outputs: digests
    files: dict[str, str]                    # code folder: relative path -> digest
    inputs: dict[str, str]                   # input -> "value: ..." or a content digest
    reasons: list[str] = field(default_factory=list)
    hit: dict[str, Any] | None = None
    storable: bool = True

    def record(self) -> dict[str, Any]:
        return {"key": self.key, "decision": "reused" if self.hit else "ran", "reasons": self.reasons}

    def summary(self) -> str:
        return self.reasons[0] if self.reasons else ""


def key_parts(plan: CommandPlan, origins: dict[str, str] | None = None
              ) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    environment = {k: plan.environment.get(k) for k in ("label", "requirements", "python_version")}
    # The interpreter itself, whichever name (python, python3, a venv link) reached it.
    environment["python"] = os.path.realpath(plan.environment.get("python") or "")
    run_settings = {"compute": plan.compute.get("name"), "distribution": plan.distribution,
                    "environment_variables": plan.environment_variables, "timeout": plan.timeout}
    outputs = {name: {k: value.get(k) for k in ("type", "mode", "asset_name", "asset_version")}
               for name, value in plan.outputs.items()}
    fields = {"command": _combine({"command": plan.command}),
              "environment": _combine(environment),
              "run settings": _combine(run_settings),
              "outputs": _combine(outputs)}
    files = tree_digests(Path(plan.code)) if plan.code else {}
    inputs = {}
    for name, planned in plan.inputs.items():
        if origins and name in origins:
            inputs[name] = origins[name]
        elif planned["type"] == "literal":
            inputs[name] = f"value: {planned.get('value')}"
        elif planned.get("source") and Path(planned["source"]).exists():
            inputs[name] = _combine(tree_digests(Path(planned["source"])))
        else:
            inputs[name] = f"uri: {planned.get('source') or planned.get('uri')}"
    return fields, files, inputs


def _root(workspace: Workspace) -> Path:
    return workspace.folder / FOLDER


def _index_path(workspace: Workspace, identity: str) -> Path:
    return _root(workspace) / "index" / (hashlib.sha256(identity.encode()).hexdigest()[:32] + ".json")


def decide(workspace: Workspace, identity: str, plan: CommandPlan, step: dict[str, Any],
           force_rerun: bool, origins: dict[str, str] | None = None) -> Decision:
    """Reuse or run, and why. ``origins``: inputs that count by where they came from (an
    upstream step's output: the job that produced it) rather than by their content."""
    fields, files, inputs = key_parts(plan, origins)
    key = _combine({**fields, "code": _combine(files), **{f"input {k}": v for k, v in inputs.items()}})
    decision = Decision(identity, key, fields, files, inputs)
    if not step.get("is_deterministic", True):
        decision.storable = False
        decision.reasons.append("its component has is_deterministic: false, so it always runs and is never "
                                "reused")
        return decision
    if force_rerun:
        decision.storable = False
        decision.reasons.append("the pipeline's settings.force_rerun is true: every step runs, and none of them "
                                "can serve as a reuse source later")
        return decision
    entry_file = _root(workspace) / key / "entry.json"
    if entry_file.is_file():
        decision.hit = json.loads(entry_file.read_text())
        decision.reasons.append(f"nothing that decides its result changed since {decision.hit['job']}: the same "
                                f"command, environment, run settings, code ({len(files)} file(s)), inputs "
                                f"({', '.join(sorted(inputs)) or 'none'}) and output settings")
        return decision
    previous = _index_path(workspace, identity)
    if not previous.is_file():
        decision.reasons.append("first run of this step here: there is no earlier completed run to reuse")
        return decision
    decision.reasons.extend(_changes(json.loads(previous.read_text()), decision))
    if not decision.reasons:
        decision.reasons.append("no completed run with exactly these inputs is in the cache (a run with them "
                                "did not complete)")
    return decision


def _changes(before: dict[str, Any], now: Decision) -> list[str]:
    """What differs from the step's last completed run, field by field, in the user's words."""
    reasons = []
    for name in ("command", "environment", "run settings", "outputs"):
        if before["fields"].get(name) != now.fields.get(name):
            reasons.append(f"{name if name != 'outputs' else 'output settings'} changed")
    old_files, new_files = before.get("files", {}), now.files
    changed = sorted(p for p in new_files if p in old_files and old_files[p] != new_files[p])
    added = sorted(set(new_files) - set(old_files))
    removed = sorted(set(old_files) - set(new_files))
    for label, paths in (("code changed", changed), ("code added", added), ("code removed", removed)):
        if paths:
            shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
            reasons.append(f"{label}: {shown}")
    old_inputs = before.get("inputs", {})
    for name, value in now.inputs.items():
        if name not in old_inputs:
            reasons.append(f"input {name} is new")
        elif old_inputs[name] != value:
            if value.startswith("value: ") and old_inputs[name].startswith("value: "):
                reasons.append(f"input {name} changed: {old_inputs[name][7:]} -> {value[7:]}")
            elif value.startswith("output ") and old_inputs[name].startswith("output "):
                reasons.append(f"input {name} changed: it is now {value}, which ran again (it was "
                               f"{old_inputs[name]})")
            else:
                reasons.append(f"input {name} changed (its content differs)")
    for name in old_inputs:
        if name not in now.inputs:
            reasons.append(f"input {name} is no longer given")
    return reasons


class NotStorable(Exception):
    """A completed step's outputs that the cache cannot hold faithfully; ``str()`` says which
    file and why. The step stays Completed; it is only not kept for reuse."""


def _copy(source: Path, target: Path) -> None:
    """Copy a cache entry's files back: links stay links (the cache holds only links that
    point inside their own output folder, written relative)."""
    if source.is_symlink() or source.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
    elif source.is_dir():
        shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)


def _keep(source: Path, target: Path, shown: str) -> None:
    """Copy one output (a file or a folder) into the entry being built without following a
    single link: a link inside the folder that points inside it is kept as a relative link
    (dangling or looping ones included: they are the step's data); a link out of it, or
    something that is not a file, a folder or a link, makes the step :class:`NotStorable`."""
    if source.is_symlink():
        raise NotStorable(f"{shown} is itself a link (to {os.readlink(source)})")
    if not source.exists():
        return  # the step wrote nothing there
    if source.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
        return
    root = os.path.abspath(source)
    target.mkdir(parents=True, exist_ok=True)
    for folder, folders, files in os.walk(root, onerror=_raise):  # never descends into a link
        here = Path(target) / os.path.relpath(folder, root)
        for name in sorted(folders + files):
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root)
            copy = here / name
            if os.path.islink(path):
                written = os.readlink(path)
                points_to = os.path.normpath(os.path.join(folder, written))
                if points_to != root and not points_to.startswith(root + os.sep):
                    raise NotStorable(f"{shown}/{relative} is a link to {written}, outside the output folder; "
                                      "a reused copy could not hold what it points to (make it a copy, or a "
                                      "link inside the output folder)")
                os.symlink(os.path.relpath(points_to, folder), copy)
            elif os.path.isdir(path):
                copy.mkdir(exist_ok=True)
            elif os.path.isfile(path):
                shutil.copy2(path, copy, follow_symlinks=False)
            else:
                raise NotStorable(f"{shown}/{relative} is not a file, a folder or a link (a pipe, socket or device)")


def _raise(error: OSError) -> None:
    raise error


def store(workspace: Workspace, decision: Decision, plan: CommandPlan, run_dir: Path, job: str) -> None:
    """Keep a completed step for reuse: built aside, then renamed into place in one step.
    Raises :class:`NotStorable` or ``OSError`` with the reason when it cannot; nothing is left."""
    root = _root(workspace)
    root.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(root)
    final = root / decision.key
    if final.exists():
        return
    building = root / temporary_name()
    try:
        for name, planned in plan.outputs.items():
            _keep(Path(planned["path"]), building / "outputs" / name, f"output '{name}'")
        _keep(run_dir / "wd" / "outputs", building / "default", "./outputs")
        _keep(run_dir / "user_logs", building / "user_logs", "user_logs")
        record = status.read(run_dir)
        entry = {"job": job, "key": decision.key, "fields": decision.fields, "files": decision.files,
                 "inputs": decision.inputs, "metrics": record.get("metrics") or {},
                 "outputs": {name: planned["type"] for name, planned in plan.outputs.items()},
                 "stored": status.now()}
        building.mkdir(parents=True, exist_ok=True)
        status.write_json_atomic(building / "entry.json", entry)
        os.rename(building, final)
    except (OSError, NotStorable):
        shutil.rmtree(building, ignore_errors=True)
        if not final.exists():
            raise
        return  # another run stored the same key first: theirs is as good
    index = _index_path(workspace, decision.identity)
    index.parent.mkdir(parents=True, exist_ok=True)
    status.write_json_atomic(index, {"job": job, "key": decision.key, "fields": decision.fields,
                                     "files": decision.files, "inputs": decision.inputs})


def restore(workspace: Workspace, entry: dict[str, Any], plan: CommandPlan, run_dir: Path) -> dict[str, Any]:
    """A reused step gets the original's outputs, ./outputs and logs; returns its status fields."""
    from . import inputs

    source = _root(workspace) / entry["key"]
    for name, planned in plan.outputs.items():
        inputs.prepare_output(planned)
        _copy(source / "outputs" / name, Path(planned["path"]))
    _copy(source / "default", run_dir / "wd" / "outputs")
    _copy(source / "user_logs", run_dir / "user_logs")
    return {"metrics": entry.get("metrics") or {}}
