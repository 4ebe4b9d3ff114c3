"""The offline ``MLClient``: azure-ai-ml's client, answered by the local workspace.

A notebook or script run by ``aml-run notebook``/``aml-run script`` gets this class wherever it
imports ``azure.ai.ml.MLClient`` (runner/sdk/hook.py). It takes the same arguments (a
credential, subscription, resource group and workspace names, or ``from_config``) and is bound
to aml-run's workspace whatever they say. Its operations have the SDK's names and return the
SDK's own entity objects (``Job``, ``AmlCompute``, ``Environment``, ``JobSchedule``...), so
``returned_job.name``, ``.studio_url``, ``.status``, ``schedule.is_enabled`` read as in Azure:

* ``jobs``: create_or_update (the object translated to CLI YAML, checked against what the SDK
  would send, linted and submitted as ``aml-run job create`` does; the YAML is written beside
  the run), stream, get, list, begin_cancel, download, validate;
* ``compute``: get (a missing compute is ``ResourceNotFoundError``, as the service answers, with
  the command that registers it), begin_create_or_update, list;
* ``environments``, ``data``, ``components``: create_or_update (registered as ``aml-run ...
  create`` registers), get, list;
* ``schedules``: begin_create_or_update, begin_enable, begin_disable, get, list, begin_delete,
  trigger;
* ``models``: the workspace's MLflow model registry (get, list, create_or_update);
* ``workspaces``: get and list answer with this workspace.

A verb that needs Azure (endpoints, deployments, registries, AutoML, Spark...) raises
:class:`CloudOnlyError`, one line naming it. Nothing here reaches the network.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable

from azure.ai.ml import load_component, load_job
from azure.ai.ml.entities import (
    AmlCompute,
    Component,
    Compute,
    Data,
    Environment,
    Job,
    JobSchedule,
    JobService,
    Model,
    Workspace as WorkspaceEntity,
)
from azure.ai.ml.entities._builders import BaseNode
from azure.ai.ml.entities._load_functions import load_schedule
from azure.ai.ml.exceptions import JobException, ValidationException
from azure.core.exceptions import ResourceNotFoundError

from ..errors import NotFound, RunnerError
from ..workspace import Workspace
from . import overrides as overriding
from . import session, translate

# The Azure names a job's processes see here (runner/command.py's job environment): the same
# in the ids this client hands out.
SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
RESOURCE_GROUP = "amllab-local"
TERMINAL = ("Completed", "Failed", "Canceled", "NotResponding", "Paused")
SPECS = "sdk"  # <workspace>/sdk/<job>/job.yml: the YAML each submission became


class CloudOnlyError(Exception):
    """A verb that needs Azure Machine Learning's cloud: one line, no traceback in a notebook."""

    def __init__(self, verb: str, why: str = "") -> None:
        self.verb = verb
        reason = why or "it needs Azure Machine Learning's cloud"
        super().__init__(f"{verb}: {reason}; aml-run runs jobs, schedules and the assets they use on this "
                         "machine (what the offline client covers: docs/python.md)")
        session.record({"event": "cloud", "verb": verb, "message": str(self)})

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of the traceback
        return [f"CloudOnlyError: {self}"]


class SubmissionRefused(Exception):
    """What ``aml-run job create`` (or ``schedule|component create``) refuses, in its words: the
    lint findings, or the one line saying what is missing (an unregistered asset, unmapped data)."""

    def _render_traceback_(self) -> list[str]:
        return str(self).splitlines()


class Poller:
    """What ``begin_*`` returns: the work is done by the time it returns; ``result()`` gives it."""

    def __init__(self, value: Any) -> None:
        self._value = value

    def result(self, timeout: float | None = None) -> Any:
        return self._value

    def done(self) -> bool:
        return True

    def wait(self, timeout: float | None = None) -> None:
        return None

    def status(self) -> str:
        return "Succeeded"


def _say(message: str) -> None:
    sys.stdout.write(f"[aml-run] {message}\n")
    sys.stdout.flush()


def bound_workspace() -> Workspace:
    """The workspace aml-run named (``AMLLAB_WORKSPACE``), else the nearest one, else a new
    ``.amllab/`` here."""
    return Workspace.locate(os.environ.get(session.WORKSPACE) or None, create=True)


class _Operations:
    """Every operation group: the verbs it has, and one clear refusal for the others."""

    group = ""
    covered: tuple[str, ...] = ()

    def __init__(self, client: "OfflineMLClient") -> None:
        self._client = client

    @property
    def _workspace(self) -> Workspace:
        return self._client._workspace

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        verb = f"ml_client.{self.group}.{name}"

        def refuse(*args: Any, **kwargs: Any) -> Any:
            raise CloudOnlyError(verb, "the offline client has no such verb here; it covers "
                                 + ", ".join(self.covered))

        return refuse


class _CloudOperations(_Operations):
    """An operation group that exists only in Azure (endpoints, deployments, registries...)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        verb = f"ml_client.{self.group}.{name}"

        def refuse(*args: Any, **kwargs: Any) -> Any:
            raise CloudOnlyError(verb)

        return refuse


def _arm_id(workspace_name: str, kind: str, name: str, version: str | None = None) -> str:
    base = (f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{RESOURCE_GROUP}/providers/"
            f"Microsoft.MachineLearningServices/workspaces/{workspace_name}/{kind}/{name}")
    return f"{base}/versions/{version}" if version is not None else base


# -- jobs ------------------------------------------------------------------------------------------

class JobOperations(_Operations):
    group = "jobs"
    covered = ("create_or_update", "validate", "stream", "get", "list", "begin_cancel", "download")

    def create_or_update(self, job: Any, *, description: str | None = None, compute: str | None = None,
                         tags: dict | None = None, experiment_name: str | None = None,
                         skip_validation: bool = False, **kwargs: Any) -> Job:
        """Submit ``job`` as ``ml_client.jobs.create_or_update`` would: the same settings applied
        to it first, the SDK's own validation, then the CLI YAML it becomes, linted and run."""
        if isinstance(job, BaseNode) and type(job).__name__ not in ("Command", "Spark"):
            job = job._to_job()
        _refuse_cloud_job(job)
        if description is not None:
            job.description = description
        if compute is not None:
            job.compute = compute
        if tags is not None:
            job.tags = tags
        if experiment_name is not None:
            job.experiment_name = experiment_name
        if not skip_validation:
            _validate(job)
        workspace = self._workspace
        name = job.name or workspace.new_job_name()
        folder = workspace.folder / SPECS / name
        written = _translate(lambda note: translate.write_job(job, folder, name=name, note=note), job)
        changes = _apply_overrides(written)
        submitted = _submit(workspace, written.main, name)
        kind = written.data.get("type")
        _say(f"job {submitted} ({kind}) submitted; the YAML it became: {written.main}")
        for change in changes:
            _say(f"override for job {submitted}: {change}")
        session.record({"event": "job", "job": submitted, "type": kind, "spec": str(written.main),
                        "overrides": changes})
        return self.get(submitted)

    def validate(self, job: Any, *, raise_on_failure: bool = False, **kwargs: Any) -> Any:
        if isinstance(job, BaseNode) and type(job).__name__ not in ("Command", "Spark"):
            job = job._to_job()
        return job._validate(raise_error=raise_on_failure)

    def get(self, name: str) -> Job:
        from .. import jobs

        workspace = self._workspace
        try:
            shown = jobs.show(workspace, name)
        except NotFound as error:
            raise ResourceNotFoundError(str(error)) from None
        return _job_entity(workspace, self._client._local_name, shown)

    def list(self, *, parent_job_name: str | None = None, **kwargs: Any) -> Iterator[Job]:
        from .. import jobs

        workspace = self._workspace
        try:
            rows = jobs.list_jobs(workspace, parent_job_name)
        except NotFound as error:
            raise ResourceNotFoundError(str(error)) from None
        for row in rows:
            if row.get("status") == "Damaged":
                continue
            try:
                yield _job_entity(workspace, self._client._local_name, jobs.show(workspace, row["name"]))
            except (RunnerError, OSError):
                continue

    def stream(self, name: str) -> None:
        """Follow the job's log until it ends, as the SDK does; a failed job raises the SDK's
        JobException with its error, and Ctrl-C stops following (the job goes on)."""
        from .. import jobs

        workspace = self._workspace
        try:
            workspace.find_run(name)
        except NotFound as error:
            raise ResourceNotFoundError(str(error)) from None
        code = jobs.follow(workspace, name, sys.stdout, cancel_on_interrupt=False, live=False)
        if code == 130:
            raise JobException(message="The output streaming for the run interrupted.\nBut the run is still "
                               f"executing here: aml-run job cancel {name} --workspace {workspace.folder} stops it.",
                               no_personal_data_message="streaming interrupted")
        shown = jobs.show(workspace, name)
        session.record({"event": "streamed", "job": name, "status": shown["status"]})
        if shown["status"] == "Failed":
            import json

            error = shown.get("error") or "Detailed error not set on the Run. Please check the logs for details."
            raise JobException(message="Exception : \n {} ".format(json.dumps(error, indent=4)),
                               no_personal_data_message="Exception raised on failed job.")

    def begin_cancel(self, name: str, **kwargs: Any) -> Poller:
        from .. import jobs

        try:
            jobs.cancel(self._workspace, name)
        except NotFound as error:
            raise ResourceNotFoundError(str(error)) from None
        return Poller(None)

    def download(self, name: str, *, download_path: str | os.PathLike = ".", output_name: str | None = None,
                 all: bool = False) -> None:
        from .. import jobs

        try:
            written = jobs.download(self._workspace, name, Path(download_path), output_name, all)
        except NotFound as error:
            raise ResourceNotFoundError(str(error)) from None
        for path in written:
            _say(f"downloaded {path}")


def _refuse_cloud_job(job: Any) -> None:
    kind = str(getattr(job, "type", "") or type(job).__name__)
    module = type(job).__module__
    if ".automl" in module or kind.lower() == "automl":
        raise CloudOnlyError("ml_client.jobs.create_or_update(AutoML job)", "AutoML runs only in Azure Machine "
                             "Learning's cloud")
    if kind.lower() in ("spark", "import", "data_transfer", "fine_tuning", "finetuning", "distillation"):
        raise CloudOnlyError(f"ml_client.jobs.create_or_update({kind} job)", f"a {kind} job runs only in Azure "
                             "Machine Learning's cloud")


def _validate(entity: Any) -> None:
    """The SDK's own client-side validation, as create_or_update runs it: what it refuses is
    refused here, in its words."""
    validate = getattr(entity, "_validate", None)
    if validate is None:
        return
    result = validate()
    if not result.passed:
        message = "; ".join(f"{key}: {value}" for key, value in result.error_messages.items())
        raise ValidationException(message=message, no_personal_data_message="validation failed")


def _translate(write: Callable[[translate.Note], translate.Written], original: Any) -> translate.Written:
    """Write the CLI YAML, then prove it: azure-ai-ml loads it and sends the same body. A
    difference is said (it would be a translation's defect), never hidden."""
    try:
        written = write(lambda message: _say(message))
    except translate.TranslationError as error:
        raise CloudOnlyError("ml_client.jobs.create_or_update", str(error)) from None
    try:
        found = translate.check(original, written)
    except Exception as error:  # the SDK's loader refusing the YAML is a translation defect to show
        found = [f"azure-ai-ml's loader refuses the YAML: {str(error).strip().splitlines()[0]}"]
    for line in found:
        _say(f"warning: {written.main} differs from what azure-ai-ml would send: {line}")
    return written


def _apply_overrides(written: translate.Written) -> list[str]:
    given = overriding.from_json(session.settings().get("overrides") or [])
    if not given or written.kind not in ("command", "sweep", "pipeline"):
        return []
    changes = overriding.apply(written.data, given)
    if changes:
        import yaml
        from validator.paths import write_text_atomic

        text = written.main.read_text(encoding="utf-8")
        header = "".join(line + "\n" for line in text.splitlines() if line.startswith("#"))
        header += "# Overridden by aml-run (printed when submitted): " + "; ".join(changes) + "\n"
        write_text_atomic(written.main, header + yaml.safe_dump(translate.plain(written.data), sort_keys=False,
                                                                allow_unicode=True, width=100))
    return changes


def _submit(workspace: Workspace, spec: Path, name: str) -> str:
    from .. import jobs

    ignore = [str(code) for code in session.settings().get("ignore") or []]
    with _refusals(spec):
        return jobs.submit(spec, workspace, name, warn=sys.stderr, ignore=ignore)


@contextmanager
def _refusals(spec: Path | None = None) -> Iterator[None]:
    """What aml-run refuses, as the SDK would raise it: an unknown asset as ResourceNotFoundError,
    lint errors and the rest as one SubmissionRefused with aml-run's own words."""
    from validator.errors import AmllabError
    from validator.spec import SpecError

    try:
        yield
    except SpecError as error:
        raise SubmissionRefused(error.render(color=False) + "aml-run: the spec has lint errors, so it was not "
                                f"submitted ({spec or error.path}):\n" + error.refusal()) from None
    except NotFound as error:
        raise ResourceNotFoundError(str(error)) from None
    except AmllabError as error:
        raise SubmissionRefused(f"aml-run: {error}" + (f" (the YAML: {spec})" if spec else "")) from None


def _job_entity(workspace: Workspace, workspace_name: str, shown: dict[str, Any]) -> Job:
    """The SDK entity of a job as ``jobs.get`` returns it: its spec loaded with azure-ai-ml, and
    its name, status, services (the Studio link is the run folder here) and, for a sweep, the
    best trial in ``properties`` as the service records it."""
    from azure.ai.ml.entities import CommandJob

    from .. import contract

    run_dir = Path(shown["run_dir"])
    entity: Job | None = None
    if not _status(run_dir).get("parent"):  # a trial or a step has no spec of its own
        try:
            plan = contract.read_plan(run_dir)
            if plan.spec and Path(plan.spec).is_file():
                entity = load_job(plan.spec)
        except Exception:  # a spec the SDK cannot load (aml-run's own extensions): the short form
            entity = None
    if entity is None or str(entity.type) != str(shown.get("type")):
        entity = CommandJob(command=shown.get("command") or "", display_name=shown.get("display_name"),
                            experiment_name=shown.get("experiment_name"))
    entity.name = shown["name"]
    entity.display_name = shown.get("display_name") or entity.display_name
    entity.experiment_name = shown.get("experiment_name") or entity.experiment_name
    entity._status = shown.get("status")
    entity._id = _arm_id(workspace_name, "jobs", shown["name"])
    services = dict(entity.services or {}) if isinstance(entity.services, dict) else {}
    services["Studio"] = JobService(endpoint=run_dir.as_uri())
    entity.services = services
    properties = dict(entity.properties or {})
    best = shown.get("best_trial")
    if isinstance(best, dict) and best.get("name"):
        properties["best_child_run_id"] = best["name"]
        if best.get("metric") is not None:
            properties["score"] = str(best["metric"])
    mlflow = shown.get("mlflow") or {}
    if mlflow.get("run_id"):
        properties["mlflow.runId"] = mlflow["run_id"]
    entity.properties = properties
    return entity


def _status(run_dir: Path) -> dict[str, Any]:
    from .. import status

    return status.read(run_dir)


# -- compute ---------------------------------------------------------------------------------------

class ComputeOperations(_Operations):
    group = "compute"
    covered = ("get", "list", "begin_create_or_update")

    def get(self, name: str) -> Compute:
        try:
            _, _, entry = self._workspace.lookup("compute", f"azureml:{name}")
        except NotFound:
            raise ResourceNotFoundError(
                f"compute '{name}' is not registered in the workspace {self._workspace.folder}: create it in "
                f"the notebook (ml_client.compute.begin_create_or_update) or with `aml-run compute create "
                f"--name {name} --workspace {self._workspace.folder}`") from None
        return _compute_entity(self._client._local_name, name, entry)

    def list(self, **kwargs: Any) -> Iterator[Compute]:
        from .. import assets

        for row in assets.list_assets(self._workspace, "compute"):
            yield _compute_entity(self._client._local_name, row["name"], row)

    def begin_create_or_update(self, compute: Compute, **kwargs: Any) -> Poller:
        from .. import assets

        kind = str(getattr(compute, "type", "") or "").lower()
        if kind not in ("amlcompute", "computeinstance", ""):
            raise CloudOnlyError(f"ml_client.compute.begin_create_or_update({kind})",
                                 f"a {kind} compute is a resource of Azure's")
        instances = getattr(compute, "max_instances", None) or 1
        size = getattr(compute, "size", None)
        label = "gpu" if size and any(part in str(size).upper() for part in ("_NC", "_ND", "_NV")) else "cpu"
        assets.create_compute(self._workspace, compute.name, max_instances=int(instances), type_=label,
                              size=str(size) if size else None)
        _say(f"compute {compute.name} registered: at most {instances} job(s) or node(s) at once on this machine")
        return Poller(self.get(compute.name))


def _compute_entity(workspace_name: str, name: str, entry: dict[str, Any]) -> Compute:
    compute = AmlCompute(name=name, size=entry.get("size") or "local", min_instances=0,
                         max_instances=int(entry.get("max_instances") or 1))
    compute._id = _arm_id(workspace_name, "computes", name)
    compute._provisioning_state = "Succeeded"
    return compute


# -- environments, data, components ----------------------------------------------------------------

def _not_found(error: NotFound) -> ResourceNotFoundError:
    return ResourceNotFoundError(str(error))


def _lookup(workspace: Workspace, kind: str, name: str, version: str | None, label: str | None
            ) -> tuple[str, str | None, dict[str, Any]]:
    reference = f"azureml:{name}" + (f":{version}" if version else f"@{label}" if label else "")
    try:
        return workspace.lookup(kind, reference)
    except NotFound as error:
        raise _not_found(error) from None


class EnvironmentOperations(_Operations):
    group = "environments"
    covered = ("create_or_update", "get", "list")

    def create_or_update(self, environment: Environment, **kwargs: Any) -> Environment:
        from .. import assets

        if environment.build is not None:
            raise CloudOnlyError("ml_client.environments.create_or_update(build=...)",
                                 "an environment built from a Docker context is built in Azure; register one "
                                 "with a conda file or an image")
        conda = None
        if environment.conda_file:
            folder = self._workspace.folder / SPECS / "environments"
            folder.mkdir(parents=True, exist_ok=True)
            import yaml
            from validator.paths import write_text_atomic

            import hashlib

            content = environment.conda_file
            if isinstance(content, str) and Path(content).is_file():
                content = yaml.safe_load(Path(content).read_text(encoding="utf-8"))
            text = yaml.safe_dump(translate.plain(content), sort_keys=False)
            # Named by content: the same environment registered again is the same entry.
            conda = folder / f"{environment.name}-{hashlib.sha256(text.encode()).hexdigest()[:12]}.conda.yml"
            write_text_atomic(conda, text)
        with _refusals():
            entry = assets.create_environment(self._workspace, None, environment.name,
                                              str(environment.version) if environment.version else None,
                                              conda_file=str(conda) if conda else None, image=environment.image)
        _say(f"environment {entry['name']}:{entry['version']} registered")
        return self.get(entry["name"], version=entry["version"])

    def get(self, name: str, version: str | None = None, label: str | None = None, **kwargs: Any) -> Environment:
        found_name, found_version, entry = _lookup(self._workspace, "environment", name, version, label)
        return _environment_entity(self._client._local_name, found_name, found_version, entry)

    def list(self, name: str | None = None, **kwargs: Any) -> Iterator[Environment]:
        from .. import assets

        for row in assets.list_assets(self._workspace, "environment"):
            if name is None or row["name"] == name:
                yield _environment_entity(self._client._local_name, row["name"], row["version"], row)


def _environment_entity(workspace_name: str, name: str, version: str | None, entry: dict[str, Any]) -> Environment:
    environment = Environment(name=name, version=version, image=entry.get("image"),
                              conda_file=entry.get("conda_file"))
    environment._id = _arm_id(workspace_name, "environments", name, version)
    return environment


class DataOperations(_Operations):
    group = "data"
    covered = ("create_or_update", "get", "list")

    def create_or_update(self, data: Data, **kwargs: Any) -> Data:
        from .. import assets

        path = str(data.path)
        if translate.is_local(path):
            path = translate.absolute(path, getattr(data, "base_path", None) or os.getcwd())
        with _refusals():
            entry = assets.create_data(self._workspace, None, data.name, str(data.version) if data.version else None,
                                       path, str(data.type) if data.type else None, data.description)
        _say(f"data {entry['name']}:{entry['version']} registered ({entry['path']})")
        return self.get(entry["name"], version=entry["version"])

    def get(self, name: str, version: str | None = None, label: str | None = None, **kwargs: Any) -> Data:
        found_name, found_version, entry = _lookup(self._workspace, "data", name, version, label)
        return _data_entity(self._client._local_name, found_name, found_version, entry)

    def list(self, name: str | None = None, **kwargs: Any) -> Iterator[Data]:
        from .. import assets

        for row in assets.list_assets(self._workspace, "data"):
            if name is None or row["name"] == name:
                yield _data_entity(self._client._local_name, row["name"], row["version"], row)


def _data_entity(workspace_name: str, name: str, version: str | None, entry: dict[str, Any]) -> Data:
    data = Data(name=name, version=version, path=entry.get("path"), type=entry.get("type"),
                description=entry.get("description"))
    data._id = _arm_id(workspace_name, "data", name, version)
    return data


class ComponentOperations(_Operations):
    group = "components"
    covered = ("create_or_update", "get", "list")

    def create_or_update(self, component: Any, version: str | None = None, **kwargs: Any) -> Component:
        from .. import assets

        component = translate.as_component(component)
        if version is not None:
            component.version = version
        if not component.name:
            raise ValidationException(message="a component needs a name to be registered",
                                      no_personal_data_message="component without a name")
        if component.version is None:
            versions = self._workspace.registry().versions("components", component.name)
            component.version = str(max((int(v) for v in versions if v.isdigit()), default=0) + 1)
        _validate(component)
        folder = self._workspace.folder / SPECS / "components" / f"{component.name}-{component.version}"
        written = _translate(lambda note: translate.write_component(component, folder, note=note), component)
        with _refusals(written.main):
            entry = assets.create_component(self._workspace, str(written.main))
        _say(f"component {entry['name']}:{entry['version']} registered; the YAML it became: {written.main}")
        return self.get(entry["name"], version=entry["version"])

    def get(self, name: str, version: str | None = None, label: str | None = None, **kwargs: Any) -> Component:
        found_name, found_version, entry = _lookup(self._workspace, "component", name, version, label)
        return _component_entity(self._workspace, self._client._local_name, found_name, found_version, entry)

    def list(self, name: str | None = None, **kwargs: Any) -> Iterator[Component]:
        from .. import assets

        for row in assets.list_assets(self._workspace, "component"):
            if name is None or row["name"] == name:
                yield _component_entity(self._workspace, self._client._local_name, row["name"], row["version"], row)


def _component_entity(workspace: Workspace, workspace_name: str, name: str, version: str | None,
                      entry: dict[str, Any]) -> Component:
    component = load_component(workspace.resolve_path(entry["path"]))
    component.name = name
    component.version = version
    # Registered: a pipeline that uses it names it (azureml:name:version), as the service's id.
    component._id = _arm_id(workspace_name, "components", name, version)
    return component


# -- schedules -------------------------------------------------------------------------------------

class ScheduleOperations(_Operations):
    group = "schedules"
    covered = ("begin_create_or_update", "begin_enable", "begin_disable", "get", "list", "begin_delete", "trigger")

    def begin_create_or_update(self, schedule: JobSchedule, **kwargs: Any) -> Poller:
        from .. import schedules

        if not isinstance(schedule, JobSchedule):
            raise CloudOnlyError(f"ml_client.schedules.begin_create_or_update({type(schedule).__name__})",
                                 "aml-run schedules jobs (a JobSchedule); monitoring and data-import schedules "
                                 "run in Azure")
        if not isinstance(schedule.create_job, str):
            _refuse_cloud_job(schedule.create_job)
        folder = self._workspace.folder / SPECS / "schedules" / schedule.name
        written = _translate(lambda note: translate.write_schedule(schedule, folder, note=note), schedule)
        job_file = written.main.parent / "job.yml"
        import yaml

        job = yaml.safe_load(job_file.read_text(encoding="utf-8"))
        given = overriding.from_json(session.settings().get("overrides") or [])
        changes = overriding.apply(job, given) if given else []
        if changes:
            from validator.paths import write_text_atomic

            write_text_atomic(job_file, "# Overridden by aml-run: " + "; ".join(changes) + "\n"
                              + yaml.safe_dump(job, sort_keys=False, allow_unicode=True, width=100))
        with _refusals(written.main):
            schedules.create(self._workspace, written.main, warn=sys.stderr)
        if schedule.is_enabled is False:
            schedules.disable(self._workspace, schedule.name)
        _say(f"schedule {schedule.name} registered; the YAML it became: {written.main} (it fires while "
             f"`aml-run scheduler --workspace {self._workspace.folder}` runs)")
        for change in changes:
            _say(f"override for schedule {schedule.name}'s job: {change}")
        session.record({"event": "schedule", "schedule": schedule.name, "spec": str(written.main)})
        return Poller(self.get(schedule.name))

    def get(self, name: str, **kwargs: Any) -> JobSchedule:
        from .. import schedules

        try:
            shown = schedules.show(self._workspace, name)
        except NotFound as error:
            raise _not_found(error) from None
        return _schedule_entity(self._client._local_name, shown)

    def list(self, **kwargs: Any) -> Iterator[JobSchedule]:
        from .. import schedules

        for name in schedules.names(self._workspace):
            try:
                yield self.get(name)
            except (ResourceNotFoundError, RunnerError):
                continue

    def begin_enable(self, name: str, **kwargs: Any) -> Poller:
        from .. import schedules

        try:
            schedules.enable(self._workspace, name)
        except NotFound as error:
            raise _not_found(error) from None
        return Poller(self.get(name))

    def begin_disable(self, name: str, **kwargs: Any) -> Poller:
        from .. import schedules

        try:
            schedules.disable(self._workspace, name)
        except NotFound as error:
            raise _not_found(error) from None
        return Poller(self.get(name))

    def begin_delete(self, name: str, **kwargs: Any) -> Poller:
        from .. import schedules

        try:
            schedules.delete(self._workspace, name)
        except NotFound as error:
            raise _not_found(error) from None
        return Poller(None)

    def trigger(self, name: str, **kwargs: Any) -> Any:
        from .. import schedules

        try:
            job = schedules.trigger(self._workspace, name, warn=sys.stderr)
        except NotFound as error:
            raise _not_found(error) from None
        session.record({"event": "job", "job": job, "type": "scheduled", "spec": None, "overrides": []})
        _say(f"schedule {name} triggered: job {job}")
        return self._client.jobs.get(job)


def _schedule_entity(workspace_name: str, shown: dict[str, Any]) -> JobSchedule:
    """The JobSchedule as the service returns it: its spec (the job file it creates, found where
    aml-run recorded it), enabled or not."""
    import io

    import yaml

    data = dict(shown.get("spec") or {})
    job_file = shown.get("create_job")
    if isinstance(data.get("create_job"), dict):
        data["create_job"] = {**data["create_job"], "job": job_file}
    else:
        data["create_job"] = job_file
    if not job_file or not Path(job_file).is_file():
        raise ResourceNotFoundError(f"schedule {shown['name']}: the job file it creates ({job_file}) is gone")
    trigger = dict(data.get("trigger") or {})
    if shown.get("start_time") and not trigger.get("start_time"):
        trigger["start_time"] = shown["start_time"]
    data["trigger"] = trigger
    schedule = load_schedule(io.StringIO(yaml.safe_dump(data, sort_keys=False)),
                             relative_origin=str(Path(job_file).parent))
    schedule._is_enabled = bool(shown.get("is_enabled"))
    schedule._provisioning_state = "Succeeded"
    schedule._id = _arm_id(workspace_name, "schedules", shown["name"])
    return schedule


# -- models ----------------------------------------------------------------------------------------

class ModelOperations(_Operations):
    """The workspace's models are MLflow's model registry (what ``mlflow.<flavor>.log_model(...,
    registered_model_name=...)`` writes in a job, as in Azure, whose workspaces are MLflow
    registries too)."""

    group = "models"
    covered = ("create_or_update", "get", "list")

    def _mlflow(self) -> Any:
        from mlflow.tracking import MlflowClient

        return MlflowClient(tracking_uri=self._workspace.tracking_uri, registry_uri=self._workspace.tracking_uri)

    def create_or_update(self, model: Model, **kwargs: Any) -> Model:
        source = self._source(str(model.path))
        client = self._mlflow()
        from mlflow.exceptions import MlflowException

        try:
            client.get_registered_model(model.name)
        except MlflowException:
            client.create_registered_model(model.name, description=model.description)
        created = client.create_model_version(model.name, source, description=model.description,
                                              tags={"type": str(model.type or "custom_model")})
        if model.version is not None and str(model.version) != str(created.version):
            _say(f"model {model.name}: version {model.version} asked, MLflow's registry numbers versions itself: "
                 f"registered as version {created.version}")
        _say(f"model {model.name}:{created.version} registered from {source}")
        return self.get(model.name, version=str(created.version))

    def _source(self, path: str) -> str:
        """A model's path as MLflow's registry takes it: a job's output
        (``azureml://jobs/<job>/outputs/artifacts/paths/<p>``) is that job's file here, its
        ``./outputs`` folder or its MLflow run's artifacts; a local path is made absolute."""
        import re

        found = re.match(r"^azureml://jobs/([^/]+)/outputs/artifacts/paths/(.*)$", path)
        if found:
            from .. import jobs

            job, inside = found.group(1), found.group(2).strip("/")
            try:
                shown = jobs.show(self._workspace, job)
            except NotFound as error:
                raise _not_found(error) from None
            local = Path(shown["run_dir"]) / "wd" / inside
            if local.exists():
                return str(local)
            run_id = (shown.get("mlflow") or {}).get("run_id")
            if run_id:
                return f"runs:/{run_id}/{inside}"
            raise ResourceNotFoundError(f"job {job} has no file {inside}")
        if translate.is_local(path):
            local = Path(translate.absolute(path, os.getcwd()))
            if not local.exists():
                raise ResourceNotFoundError(f"model path {local} does not exist")
            return str(local)
        if path.startswith(("runs:/", "models:/")):
            return path
        raise CloudOnlyError(f"ml_client.models.create_or_update(path={path})",
                             "a model in remote storage is registered in Azure")

    def get(self, name: str, version: str | None = None, label: str | None = None, **kwargs: Any) -> Model:
        from mlflow.exceptions import MlflowException

        client = self._mlflow()
        try:
            if version is None:
                versions = client.search_model_versions(f"name='{name}'")
                if not versions:
                    raise ResourceNotFoundError(f"model {name} is not registered in the workspace's MLflow registry")
                found = max(versions, key=lambda v: int(v.version))
            else:
                found = client.get_model_version(name, str(version))
        except MlflowException as error:
            raise ResourceNotFoundError(f"model {name}: {error.message}") from None
        return _model_entity(self._client._local_name, found)

    def list(self, name: str | None = None, **kwargs: Any) -> Iterator[Model]:
        client = self._mlflow()
        if name is None:
            for registered in client.search_registered_models():
                versions = client.search_model_versions(f"name='{registered.name}'")
                if versions:
                    yield _model_entity(self._client._local_name, max(versions, key=lambda v: int(v.version)))
        else:
            for found in client.search_model_versions(f"name='{name}'"):
                yield _model_entity(self._client._local_name, found)


def _model_entity(workspace_name: str, version: Any) -> Model:
    kind = (version.tags or {}).get("type") or "mlflow_model"
    model = Model(name=version.name, version=str(version.version), path=version.source, type=kind,
                  description=version.description or None)
    model._id = _arm_id(workspace_name, "models", version.name, str(version.version))
    return model


# -- workspaces ------------------------------------------------------------------------------------

class WorkspaceOperations(_Operations):
    group = "workspaces"
    covered = ("get", "list")

    def get(self, name: str | None = None, **kwargs: Any) -> WorkspaceEntity:
        return self._client._workspace_entity()

    def list(self, **kwargs: Any) -> list[WorkspaceEntity]:
        return [self._client._workspace_entity()]


# -- the client ------------------------------------------------------------------------------------

CLOUD_GROUPS = ("online_endpoints", "online_deployments", "batch_endpoints", "batch_deployments", "registries",
                "connections", "datastores", "feature_stores", "feature_sets", "feature_store_entities",
                "serverless_endpoints", "marketplace_subscriptions", "indexes", "evaluators", "capability_hosts",
                "workspace_outbound_rules", "workspace_connections", "azure_openai_deployments")


class OfflineMLClient:
    """``azure.ai.ml.MLClient`` for a notebook or script run by aml-run: bound to the local
    workspace, whatever subscription, resource group and workspace names it is given (they are
    kept, for what the notebook prints)."""

    def __init__(self, credential: Any = None, subscription_id: str | None = None,
                 resource_group_name: str | None = None, workspace_name: str | None = None,
                 registry_name: str | None = None, **kwargs: Any) -> None:
        self._credential = credential
        self._workspace = bound_workspace()
        self.subscription_id = subscription_id or SUBSCRIPTION
        self.resource_group_name = resource_group_name or RESOURCE_GROUP
        # Ids name the local workspace as a job's processes see it (AZUREML_ARM_* in
        # runner/command.py): all-zero subscription, resource group amllab-local.
        self._local_name = self._workspace.folder.parent.name or "amllab"
        self.workspace_name = workspace_name or self._local_name
        if registry_name:
            raise CloudOnlyError(f"MLClient(registry_name={registry_name!r})",
                                 "a registry is shared through Azure; the local workspace holds no registry")
        self.jobs = JobOperations(self)
        self.compute = ComputeOperations(self)
        self.environments = EnvironmentOperations(self)
        self.data = DataOperations(self)
        self.components = ComponentOperations(self)
        self.schedules = ScheduleOperations(self)
        self.models = ModelOperations(self)
        self.workspaces = WorkspaceOperations(self)
        for group in CLOUD_GROUPS:
            operations = _CloudOperations(self)
            operations.group = group
            setattr(self, group, operations)
        _say(f"MLClient bound to the local workspace {self._workspace.folder} (aml-run's offline client; "
             "nothing reaches Azure)")

    @classmethod
    def from_config(cls, credential: Any = None, *, path: Any = None, file_name: str | None = None,
                    **kwargs: Any) -> "OfflineMLClient":
        """As the SDK's ``from_config``, without reading config.json: the workspace is aml-run's."""
        return cls(credential, **kwargs)

    def _workspace_entity(self) -> WorkspaceEntity:
        entity = WorkspaceEntity(name=self._local_name, location="local", resource_group=RESOURCE_GROUP,
                                 description=f"aml-run's local workspace {self._workspace.folder}")
        entity._id = (f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{RESOURCE_GROUP}/providers/"
                      f"Microsoft.MachineLearningServices/workspaces/{self._local_name}")
        entity._mlflow_tracking_uri = self._workspace.tracking_uri
        return entity

    def create_or_update(self, entity: Any, **kwargs: Any) -> Any:
        """The SDK's dispatch by type: a job, an environment, data, a component, a model."""
        if isinstance(entity, (Job, BaseNode)):
            return self.jobs.create_or_update(entity, **kwargs)
        if isinstance(entity, Environment):
            return self.environments.create_or_update(entity, **kwargs)
        if isinstance(entity, Data):
            return self.data.create_or_update(entity, **kwargs)
        if isinstance(entity, Component) or translate.is_component_function(entity):
            return self.components.create_or_update(entity, **kwargs)
        if isinstance(entity, Model):
            return self.models.create_or_update(entity, **kwargs)
        raise CloudOnlyError(f"ml_client.create_or_update({type(entity).__name__})")

    def begin_create_or_update(self, entity: Any, **kwargs: Any) -> Poller:
        if isinstance(entity, Compute):
            return self.compute.begin_create_or_update(entity, **kwargs)
        if isinstance(entity, JobSchedule):
            return self.schedules.begin_create_or_update(entity, **kwargs)
        raise CloudOnlyError(f"ml_client.begin_create_or_update({type(entity).__name__})")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise CloudOnlyError(f"ml_client.{name}", "the offline client has no such attribute here")

    def __repr__(self) -> str:
        return (f"MLClient(offline, workspace={self._workspace.folder}, subscription_id={self.subscription_id!r}, "
                f"resource_group_name={self.resource_group_name!r}, workspace_name={self.workspace_name!r})")
