"""The two routes of the Python face agree. aml-lint reads a file of SDK v2 code as a syntax tree
and never runs it (validator/python_jobs); aml-run runs the same code, lets azure-ai-ml build the
jobs, and writes them as CLI YAML (runner/sdk/translate.py, itself checked against the REST body
the SDK sends). On each fixture here, one per SDK form, clean or with one mistake azure-ai-ml
lets through, the findings of the first route are the findings of the YAML the second writes."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("azure.ai.ml")

from validator.diagnostic import Severity  # noqa: E402
from validator.engine import lint_file  # noqa: E402

HEADER = """\
from azure.ai.ml import Input, MLClient, Output, PyTorchDistribution, command, load_component
from azure.ai.ml.dsl import pipeline
from azure.ai.ml.entities import CronTrigger, JobSchedule, RecurrencePattern, RecurrenceTrigger
from azure.ai.ml.sweep import Choice, Uniform
from azure.identity import DefaultAzureCredential

ml_client = MLClient.from_config(credential=DefaultAzureCredential())
"""

JOB = """\
job = command(
    code="./src",
    command="python train.py --lr ${{inputs.lr}} --data ${{inputs.data}}",
    environment="azureml:sklearn-train:2",
    inputs={"lr": 0.01, "data": Input(type="uri_folder", path="azureml:churn:1")},
    compute="cpu-cluster",
)
"""

COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
name: train_model
version: "1"
type: command
inputs:
  data: {type: uri_folder}
  lr: {type: number, default: 0.01}
outputs:
  model: {type: uri_folder}
code: ./src
command: python train.py --data ${{inputs.data}} --lr ${{inputs.lr}} --model ${{outputs.model}}
environment: azureml:sklearn-train:2
"""

SCRIPT = """\
import argparse, mlflow
parser = argparse.ArgumentParser()
for flag in ("--data", "--lr", "--model"):
    parser.add_argument(flag)
parser.parse_args()
for epoch in range(5):
    mlflow.log_metric("auc", 0.5 + epoch / 10, step=epoch)
"""

FIXTURES = {
    "command": JOB + "ml_client.jobs.create_or_update(job)\n",
    "command, undeclared input": JOB.replace("--lr ${{inputs.lr}}", "--lr ${{inputs.rate}}")
    + "ml_client.jobs.create_or_update(job)\n",
    "distributed command": JOB.replace('    compute="cpu-cluster",\n', '    compute="cpu-cluster",\n    instance_count=2,\n'
                                       '    distribution=PyTorchDistribution(process_count_per_instance=1),\n')
    + "ml_client.jobs.create_or_update(job)\n",
    "distributed command, no nodes": JOB.replace('    compute="cpu-cluster",\n', '    compute="cpu-cluster",\n'
                                                 '    instance_count=0,\n')
    + "ml_client.jobs.create_or_update(job)\n",
    "sweep": JOB + """\
sweep = job(lr=Uniform(min_value=0.001, max_value=0.1)).sweep(primary_metric="auc", goal="Maximize")
sweep.set_limits(max_total_trials=8, max_concurrent_trials=2)
ml_client.jobs.create_or_update(sweep)
""",
    "sweep, grid over a uniform and too much concurrency": JOB + """\
sweep = job(lr=Uniform(min_value=0.001, max_value=0.1)).sweep(
    primary_metric="auc", goal="Maximize", sampling_algorithm="grid")
sweep.set_limits(max_total_trials=2, max_concurrent_trials=4)
ml_client.jobs.create_or_update(sweep)
""",
    "pipeline of components": """\
train = load_component(source="./train.yml")

@pipeline(default_compute="cpu-cluster")
def training(data, rate=0.1):
    first = train(data=data, lr=rate)
    second = train(data=first.outputs.model)
    return {"model": second.outputs.model}

ml_client.jobs.create_or_update(training(data=Input(type="uri_folder", path="azureml:churn:1")))
""",
    "pipeline of command steps, an undeclared output": """\
prep = command(
    code="./src",
    command="python train.py --data ${{inputs.data}} --model ${{outputs.prepared}}",
    environment="azureml:sklearn-train:2",
    inputs={"data": Input(type="uri_folder")},
    outputs={"model": Output(type="uri_folder")},
)

@pipeline(default_compute="cpu-cluster")
def preparing(data):
    step = prep(data=data)
    return {"out": step.outputs.model}

ml_client.jobs.create_or_update(preparing(data=Input(type="uri_folder", path="azureml:churn:1")))
""",
    "cron schedule": JOB + """\
schedule = JobSchedule(name="nightly", create_job=job,
                       trigger=CronTrigger(expression="30 2 * * *", time_zone="W. Europe Standard Time"))
ml_client.schedules.begin_create_or_update(schedule)
""",
    "cron schedule, minute 61": JOB + """\
schedule = JobSchedule(name="nightly", create_job=job, trigger=CronTrigger(expression="61 2 * * *"))
ml_client.schedules.begin_create_or_update(schedule)
""",
    "recurrence schedule": JOB + """\
schedule = JobSchedule(name="weekly", create_job=job, trigger=RecurrenceTrigger(
    frequency="week", interval=1, schedule=RecurrencePattern(hours=2, minutes=30, week_days=["sunday"])))
ml_client.schedules.begin_create_or_update(schedule)
""",
}


class Recording:
    """What stands in for MLClient here: it keeps what the code submits (the service it would
    send it to is not reachable from a test)."""

    submitted: list[Any] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.jobs = self.schedules = self

    @classmethod
    def from_config(cls, *args: Any, **kwargs: Any) -> "Recording":
        return cls()

    def create_or_update(self, entity: Any, **kwargs: Any) -> Any:
        Recording.submitted.append(entity)
        return entity

    begin_create_or_update = create_or_update


# What only the layout of the files the translation writes shows: it writes a step's command as a
# component file of its own, whose findings the pipeline repeats (AML516), and whose name and
# version a pipeline's anonymous registration ignores (AML549). The source route checks the step
# where it is written.
LAYOUT = frozenset({"AML516", "AML549"})


def _shown(path: Path) -> set[str]:
    """The codes of the errors and warnings aml-lint reports on a file, less what only a Python
    source can show (AML9xx) and what only the translation's layout shows."""
    return {d.code for d in lint_file(path).diagnostics
            if d.severity >= Severity.WARNING and not d.code.startswith("AML9") and d.code not in LAYOUT}


def _translated(source: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Run the source with azure-ai-ml (MLClient replaced), write each submitted job as CLI YAML
    and lint what was written."""
    import azure.ai.ml

    from runner.sdk.translate import write_job, write_schedule

    from azure.ai.ml.exceptions import ValidationException

    Recording.submitted = []
    monkeypatch.setattr(azure.ai.ml, "MLClient", Recording)
    monkeypatch.chdir(source.parent)
    try:
        exec(compile(source.read_text(), str(source), "exec"), {"__name__": "__main__", "__file__": str(source)})
    except ValidationException as refused:  # the SDK builds no job of it: nothing to translate
        return {f"refused by azure-ai-ml: {refused.message}"}
    found: set[str] = set()
    for number, entity in enumerate(Recording.submitted):
        target = folder / str(number)
        try:
            written = (write_schedule(entity, target) if type(entity).__name__ == "JobSchedule"
                       else write_job(entity, target))
        except ValidationException as refused:  # what the SDK sends is checked as it is built
            return {f"refused by azure-ai-ml: {refused.message}"}
        for path in (written.main, *(p for p in written.files if p.suffix == ".yml")):
            found |= _shown(path)
    return found


@pytest.mark.parametrize("fixture", sorted(FIXTURES))
def test_reading_the_source_finds_what_the_yaml_the_sdk_builds_shows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixture: str) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "train.py").write_text(SCRIPT)
    (project / "train.yml").write_text(COMPONENT)
    source = project / "jobs.py"
    source.write_text(HEADER + textwrap.dedent(FIXTURES[fixture]))
    read = _shown(source)
    run = _translated(source, tmp_path / "yaml", monkeypatch)
    if any(code.startswith("refused by azure-ai-ml") for code in run):
        # A mistake the SDK catches itself when it builds the object: the source route reports it
        # before anything runs.
        assert read, run
    else:
        assert read == run, f"source: {sorted(read)}, translated YAML: {sorted(run)}"
    assert bool(read) == ("," in fixture), read  # each mistake is found; each clean fixture is clean
