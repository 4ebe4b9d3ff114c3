"""The local workspace: the folder that plays the service's part on this machine.

    .amllab/
      workspace.yml      the registry: data assets, environments, components, computes
                         (format in validator/workspace.py; written only through register())
      runs/<job>/        one folder per job (see runner/command.py for its layout)
      cache/downloads/   downloaded https inputs
      step-cache/        completed pipeline steps, for reuse (runner/step_cache.py)
      components/        registered command components: their YAML and a snapshot of their code
      schedules/         one record per schedule, with its history (runner/schedules.py)
      computes/          which instances of each registered compute are taken
      datastores/<d>/    what azureml://datastores/<d>/paths/... means here (and its long form)
      mlflow.db          MLflow's embedded store, unless MLFLOW_TRACKING_URI is set
      mlruns/            MLflow artifacts for that store
      logs/              the tracking agent's log

Which folder: ``--workspace`` or ``AMLLAB_WORKSPACE``; else the nearest ``.amllab/`` in the
current directory or one of its parents; else a new ``.amllab/`` beside the spec (or in the
current directory when there is no spec).
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from validator import workspace as registry_format
from validator.names import name_problem

from .errors import NotFound, RunnerError

if TYPE_CHECKING:
    from .tracking import Tracking

FOLDER_NAME = ".amllab"
SECTION_OF = {"data": "data", "environment": "environments", "component": "components",
              "compute": "computes"}

# The service names jobs like "frosty_lamp_9d7h4q5k": two words and a random suffix.
_ADJECTIVES = ("amber", "bold", "brave", "calm", "clever", "crisp", "eager", "frosty", "gentle",
               "happy", "jolly", "keen", "lively", "lucid", "mellow", "nimble", "quiet", "sharp",
               "shiny", "sincere", "steady", "sunny", "swift", "tidy", "witty", "zesty")
_NOUNS = ("apple", "bird", "brook", "cabbage", "cloud", "comet", "dream", "feather", "garden",
          "lamp", "leaf", "lemon", "moon", "night", "ocean", "pepper", "river", "seed", "spoon",
          "star", "stone", "tail", "tiger", "tree", "wave", "yacht")
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
# The datastore a `${{default_datastore}}` in an output path means: a workspace's default
# is workspaceblobstore (https://learn.microsoft.com/en-us/cli/azure/ml/datastore).
DEFAULT_DATASTORE = "workspaceblobstore"


def check_name(kind: str, name: str) -> str:
    """``name`` if it is a valid ``kind`` name (validator.names: the service's rules, which
    also keep every name that becomes a folder here inside the workspace); else one error."""
    problem = name_problem(kind, name)
    if problem is not None:
        raise RunnerError(problem)
    return name


def check_job_name(name: str) -> str:
    return check_name("job", name)


# A folder built aside and renamed into place (a step-cache entry, a registered component's
# snapshot) is named <prefix><pid>-<random>: the pid tells whether its writer still lives.
TEMP_PREFIX = ".tmp-"
# A temporary whose writer cannot be told (an older name without a pid, or a pid that now
# belongs to another process) is stale once it is this old; no copy takes a day.
STALE_AFTER = 24 * 3600.0


def temporary_name() -> str:
    return f"{TEMP_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"


def remove_stale_temporaries(folder: Path, now: float | None = None) -> list[Path]:
    """Remove what interrupted writers (a killed step, a killed ``component create``) left in
    ``folder``: ``.tmp-<pid>-*`` entries whose process is gone, and any ``.tmp-*`` entry older
    than :data:`STALE_AFTER`. A live writer's temporary is never touched. Returns what was removed."""
    import shutil
    import time

    from .process import pid_alive

    removed = []
    now = time.time() if now is None else now
    try:
        entries = [entry for entry in os.scandir(folder) if entry.name.startswith(TEMP_PREFIX)]
    except OSError:
        return removed
    for entry in entries:
        writer = entry.name[len(TEMP_PREFIX):].split("-", 1)[0]
        try:
            age = now - entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue  # renamed or removed by its writer meanwhile
        dead = writer.isdigit() and int(writer) != os.getpid() and not pid_alive(int(writer))
        if dead or age > STALE_AFTER:
            path = Path(entry.path)
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            removed.append(path)
    return removed


@dataclass(frozen=True)
class Workspace:
    folder: Path

    # -- where ---------------------------------------------------------------------------------

    @classmethod
    def locate(cls, explicit: str | Path | None = None, spec: Path | None = None,
               create: bool = True, must_exist: bool = True) -> "Workspace":
        """``create``: make the folders now. Otherwise the folder must exist, unless
        ``must_exist`` is False (a command that creates it only once it has succeeded)."""
        chosen = explicit or os.environ.get("AMLLAB_WORKSPACE") or None
        if chosen:
            folder = Path(chosen)
        else:
            folder = _nearest(Path.cwd()) or ((spec.resolve().parent if spec else Path.cwd()) / FOLDER_NAME)
        workspace = cls(folder.resolve())
        if create:
            workspace.ensure()
        elif must_exist and not folder.is_dir():
            below = [str(f) for f in _workspaces_below(Path.cwd())] if not chosen else []
            raise NotFound(f"no workspace at {folder} ("
                           + (f"workspaces below here: {', '.join(below)}; pass one with --workspace)" if below
                              else "run a job or `aml-run data create` there first, or point --workspace at one)"))
        return workspace

    @classmethod
    def for_job(cls, name: str, explicit: str | Path | None = None) -> "Workspace":
        """The workspace that holds job ``name``: the one named, else the nearest, else one
        below the current directory that has it (a job created with ``--file sub/dir/job.yml``
        lives beside its spec, and ``job show NAME`` should still find it from here)."""
        if explicit or os.environ.get("AMLLAB_WORKSPACE"):
            return cls.locate(explicit, create=False)
        nearest = _nearest(Path.cwd())
        if nearest is not None and cls(nearest).run_dir(name).is_dir():
            return cls(nearest.resolve())
        for folder in _workspaces_below(Path.cwd()):
            if cls(folder).run_dir(name).is_dir():
                return cls(folder.resolve())
        if nearest is not None:
            return cls(nearest.resolve())  # find_run then says it is not there, with suggestions
        found = [str(f) for f in _workspaces_below(Path.cwd())]
        raise NotFound(f"no job named '{name}' in any workspace here"
                       + (f" (workspaces found: {', '.join(found)}; pass one with --workspace)" if found
                          else " (no .amllab/ workspace in this folder, its parents or below)"))

    def ensure(self) -> None:
        try:
            for sub in ("runs", "cache", "logs"):
                (self.folder / sub).mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise RunnerError(f"cannot create the workspace at {self.folder}: {error.strerror}") from None
        registry_format.clean_stale_temporaries(self.folder)  # a killed `... create`'s half-written registry
        ignore = self.folder / ".gitignore"
        if not ignore.exists():
            # Teams keep job YAML in git: the registry may be shared, the runs never.
            ignore.write_text("# Written by aml-run: runs, caches and the MLflow store stay local.\n"
                              "runs/\ncache/\nstep-cache/\ncomponents/\nschedules/\ncomputes/\nlogs/\nmlflow.db\n"
                              "mlruns/\n*.lock\n")

    @property
    def runs(self) -> Path:
        return self.folder / "runs"

    @property
    def cache(self) -> Path:
        return self.folder / "cache"

    @property
    def tracking_uri(self) -> str:
        return absolute_tracking_uri(os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{self.folder / 'mlflow.db'}")

    @property
    def artifact_root(self) -> Path:
        return self.folder / "mlruns"

    def tracking(self, tracking_uri: str | None = None) -> "Tracking":
        """The MLflow handle for this workspace (for ``tracking_uri``: a job keeps the URI it
        was submitted with, even if the environment has changed since)."""
        from .tracking import Tracking

        return Tracking(self.folder, tracking_uri or self.tracking_uri, self.artifact_root)

    def run_dir(self, name: str) -> Path:
        """A job's run folder; a sweep's trial ``<sweep>_<n>`` lives inside its sweep's, and a
        pipeline's step ``<pipeline>--<step>`` inside its pipeline's."""
        direct = self.runs / name
        if direct.exists():
            return direct
        if "--" in name:
            pipeline, _, step = name.rpartition("--")  # a pipeline's step <pipeline>--<step>
            nested = self.run_dir(pipeline) / "steps" / step
            if nested.exists():
                return nested
        parent, separator, index = name.rpartition("_")
        if separator and index.isdigit() and parent:
            trial = self.run_dir(parent) / "trials" / name  # a sweep's, or a sweep step's, trial
            if trial.exists():
                return trial
        return direct

    @property
    def datastores(self) -> Path:
        return self.folder / "datastores"

    def datastore_path(self, datastore: str, path: str, uri: str | None = None) -> Path:
        """Where ``azureml://datastores/<datastore>/paths/<path>`` is here, which must be inside
        that datastore's folder: a spec can reach the runner with the linter's AML807 suppressed
        or through `--set`, and a `..` would otherwise read or write anywhere. Links the user
        made inside the datastore folder are theirs, and are followed."""
        shown = uri or f"azureml://datastores/{datastore}/paths/{path}"
        if datastore == "${{default_datastore}}":
            datastore = DEFAULT_DATASTORE
        problem = name_problem("datastore", datastore)
        if problem is not None:
            raise RunnerError(f"{shown}: {problem}")
        root = self.datastores / datastore
        location = Path(os.path.normpath(root / path.lstrip("/")))
        if ".." in path.replace("\\", "/").split("/") or (location != root and root not in location.parents):
            raise RunnerError(f"{shown} leaves the datastore: a datastore path is a location inside datastore "
                              f"'{datastore}' ({root} here), written from its root without '..' segments")
        if datastore == DEFAULT_DATASTORE and path.lstrip("/").split("/")[0] == "azureml":
            # The service keeps jobs' files under the default datastore's azureml/ folder, so it
            # exists in every workspace, and Microsoft's examples mount it as a job's input.
            (root / "azureml").mkdir(parents=True, exist_ok=True)
        return location

    # -- jobs ----------------------------------------------------------------------------------

    def new_job_name(self) -> str:
        while True:
            suffix = "".join(secrets.choice(_ALPHABET) for _ in range(8))
            name = f"{secrets.choice(_ADJECTIVES)}_{secrets.choice(_NOUNS)}_{suffix}"
            if not self.run_dir(name).exists():
                return name

    def job_names(self) -> list[str]:
        if not self.runs.is_dir():
            return []
        return sorted(p.name for p in self.runs.iterdir() if (p / "status.json").is_file())

    def find_run(self, name: str) -> Path:
        folder = self.run_dir(check_job_name(name))
        if not (folder / "status.json").is_file():
            from validator.suggest import closest

            close = closest(name, self.job_names())
            hint = f"; did you mean {close}?" if close else " (aml-run job list shows the jobs)"
            raise NotFound(f"no job named '{name}' in the workspace {self.folder}{hint}")
        return folder

    # -- the registry --------------------------------------------------------------------------

    def registry(self) -> registry_format.Registry:
        return registry_format.load_registry(self.folder)

    def register(self, kind: str, name: str, version: str | None, entry: dict[str, Any]) -> str:
        self.ensure()
        return registry_format.register(self.folder, SECTION_OF[kind], name, version, entry)

    def lookup(self, kind: str, reference: str) -> tuple[str, str | None, dict[str, Any]]:
        """Resolve ``azureml:name:version``, ``azureml:name@latest`` or ``azureml:name`` (the
        latest version) to (name, version, entry); an unknown one names the command that
        registers it."""
        section = SECTION_OF[kind]
        parsed = registry_format.parse_reference(reference)
        if parsed is None:
            raise NotFound(f"{kind} '{reference}' is not a reference this workspace can hold; write "
                           f"azureml:<name>:<version> or azureml:<name>@latest")
        name, version, label = parsed
        registry = self.registry()
        entries = registry.assets.get(section, {}).get(name)
        command = registry_format.REGISTER_COMMANDS[section].format(name=name, version=version or "1")
        where = f" --workspace {self.folder}"
        if entries is None:
            raise NotFound(f"{registry_format.TITLES[section]} '{name}' is not registered in the "
                           f"workspace {self.folder}; register it: `{command}{where}`")
        if section == "computes":
            return name, None, dict(entries)
        if version is None:
            if label not in (None, "latest"):
                labelled = [v for v, e in entries.items() if label in (e.get("labels") or [])]
                if not labelled:
                    raise NotFound(f"{registry_format.TITLES[section]} '{name}' has no version "
                                   f"labelled '{label}'; registered: {', '.join(entries)}")
                version = labelled[-1]
            else:
                version = registry_format.latest(registry, section, name)
        if version not in entries:
            raise NotFound(f"{registry_format.TITLES[section]} '{name}' has no version {version} in "
                           f"the workspace {self.folder} (registered: {', '.join(entries)}); "
                           f"register it: `{command}{where}`")
        return name, version, dict(entries[version])

    def resolve_path(self, value: str) -> Path:
        """A registry entry's path: relative ones are relative to the workspace folder."""
        path = Path(value)
        return path if path.is_absolute() else (self.folder / path)


def absolute_tracking_uri(uri: str) -> str:
    """A store given relative to the current directory (``sqlite:///mlflow.db``, ``./mlruns``,
    ``file:mlruns``) made absolute: the job, its supervisor and the tracking agent each run in
    another folder, and must all reach the store the user meant."""
    if uri.startswith("sqlite:///") and not uri.startswith("sqlite:////") and uri != "sqlite:///:memory:":
        return f"sqlite:///{Path(uri[len('sqlite:///'):]).resolve()}"
    if uri.startswith("file:") and not uri.startswith("file:/"):
        return Path(uri[len("file:"):]).resolve().as_uri()
    if "://" not in uri and not uri.startswith(("databricks", "file:")):
        return Path(uri).resolve().as_uri()
    return uri


_SKIP_WHEN_SEARCHING = {".git", ".venv", "venv", "node_modules", "__pycache__", "site-packages", FOLDER_NAME}


def _workspaces_below(start: Path, depth: int = 3) -> list[Path]:
    found = []
    stack = [(start, 0)]
    while stack:
        folder, level = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                continue
            if entry.name == FOLDER_NAME:
                found.append(Path(entry.path))
            elif level < depth and entry.name not in _SKIP_WHEN_SEARCHING:
                stack.append((Path(entry.path), level + 1))
    return sorted(found)


def _nearest(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        candidate = folder / FOLDER_NAME
        if candidate.is_dir():
            return candidate
    return None
