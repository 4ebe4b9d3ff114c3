"""Jobs written in Python with the SDK v2, linted without running a line of them: the mistakes
azure-ai-ml's own `_validate()` lets through are caught at their line in the source, a notebook's
findings say their cell, IPython's syntax is understood, a value known only at run time is
skipped rather than guessed, and nothing in the file is ever executed."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from amllint import run
from conftest import ROOT
from validator.engine import lint_file

HEADER = """\
from azure.ai.ml import Input, MLClient, command, load_component
from azure.ai.ml.dsl import pipeline
from azure.ai.ml.entities import CronTrigger, JobSchedule, RecurrencePattern, RecurrenceTrigger
from azure.ai.ml.sweep import Choice, MedianStoppingPolicy, Uniform
from azure.identity import DefaultAzureCredential

ml_client = MLClient.from_config(credential=DefaultAzureCredential())
"""

JOB = """\
job = command(
    command="python train.py --lr ${{inputs.lr}}",
    environment="sklearn-train:2",
    inputs={"lr": 0.01},
    compute="cpu-cluster",
)
"""


def findings(tmp_path: Path, body: str, name: str = "jobs.py") -> list[tuple[str, int]]:
    """(code, line) of each error and warning aml-lint reports on HEADER + body."""
    path = tmp_path / name
    path.write_text(HEADER + textwrap.dedent(body))
    report = lint_file(path)
    return [(d.code, d.line) for d in report.diagnostics if str(d.severity) != "info"]


def line_of(body: str, needle: str) -> int:
    """The line of ``needle`` in HEADER + body (1-based)."""
    text = HEADER + textwrap.dedent(body)
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


# Each a mistake azure-ai-ml's local `_validate()` lets through, and where aml-lint must point.
PLANTED = {
    "undeclared input": (JOB.replace("--lr ${{inputs.lr}}", "--lr ${{inputs.learning_rate}}")
                         + "ml_client.jobs.create_or_update(job)\n", "AML202", "${{inputs.learning_rate}}"),
    "grid over a uniform": (JOB + """\
sweep = job(lr=Uniform(min_value=0.001, max_value=0.1)).sweep(
    sampling_algorithm="grid", primary_metric="auc", goal="Maximize")
ml_client.jobs.create_or_update(sweep)
""", "AML302", "Uniform("),
    "no nodes": (JOB.replace('    compute="cpu-cluster",\n', '    compute="cpu-cluster",\n    instance_count=0,\n')
                 + "ml_client.jobs.create_or_update(job)\n", "AML401", "instance_count=0"),
    "concurrency above total": (JOB + """\
sweep = job(lr=Choice(values=[0.01, 0.1])).sweep(primary_metric="auc", goal="Maximize")
sweep.set_limits(max_total_trials=2, max_concurrent_trials=4)
ml_client.jobs.create_or_update(sweep)
""", "AML317", "max_concurrent_trials=4"),
    "cron minute 61": (JOB + """\
schedule = JobSchedule(name="nightly", trigger=CronTrigger(expression="61 2 * * *"), create_job=job)
ml_client.schedules.begin_create_or_update(schedule)
""", "AML602", "61 2"),
    "time zone not a Windows name": (JOB + """\
schedule = JobSchedule(name="nightly", create_job=job,
                       trigger=CronTrigger(expression="0 2 * * *", time_zone="Europe/Berlin"))
ml_client.schedules.begin_create_or_update(schedule)
""", "AML621", "Europe/Berlin"),
    "time zone that does not exist": (JOB + """\
schedule = JobSchedule(name="nightly", create_job=job,
                       trigger=CronTrigger(expression="0 2 * * *", time_zone="Central Europe"))
ml_client.schedules.begin_create_or_update(schedule)
""", "AML620", "Central Europe"),
    "a keyword the SDK drops": (JOB.replace('compute="cpu-cluster"', 'comptue="cpu-cluster"')
                                + "ml_client.jobs.create_or_update(job)\n", "AML901", "comptue="),
}


@pytest.mark.parametrize("case", sorted(PLANTED))
def test_each_planted_mistake_is_reported_at_its_line(tmp_path: Path, case: str) -> None:
    body, code, needle = PLANTED[case]
    found = findings(tmp_path, body)
    assert (code, line_of(body, needle)) in found, found


def test_a_clean_job_sweep_and_schedule_have_no_finding(tmp_path: Path) -> None:
    body = JOB + """\
ml_client.jobs.create_or_update(job)
sweep = job(lr=Uniform(min_value=0.001, max_value=0.1)).sweep(primary_metric="auc", goal="Maximize")
sweep.set_limits(max_total_trials=8, max_concurrent_trials=2)
sweep.early_termination = MedianStoppingPolicy(delay_evaluation=2, evaluation_interval=1)
ml_client.jobs.create_or_update(sweep)
schedule = JobSchedule(name="nightly", create_job=job, trigger=RecurrenceTrigger(
    frequency="week", interval=1, schedule=RecurrencePattern(hours=2, minutes=30, week_days=["sunday"]),
    time_zone="W. Europe Standard Time"))
ml_client.schedules.begin_create_or_update(schedule)
"""
    assert findings(tmp_path, body) == []


COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
name: train_model
type: command
inputs:
  training_data: {type: uri_folder}
  lr: {type: number, default: 0.01}
outputs:
  model: {type: uri_folder}
command: python -c "print(1)" --data ${{inputs.training_data}} --lr ${{inputs.lr}} --model ${{outputs.model}}
environment: azureml:sklearn-train:2
"""


def test_a_pipeline_is_checked_against_its_components_files(tmp_path: Path) -> None:
    (tmp_path / "train.yml").write_text(COMPONENT)
    body = """\
train = load_component(source="./train.yml")

@pipeline(default_compute="cpu-cluster")
def training(data, rate=0.1):
    first = train(training_data=data, lr=rate)
    train(training_data=first.outputs.model, learning_rate=rate)
    return {"model": first.outputs.model}

job = training(data=Input(type="uri_folder", path="azureml:churn:1"))
ml_client.jobs.create_or_update(job)
"""
    found = findings(tmp_path, body)
    # The second (anonymous) step binds an input its component does not declare.
    assert found == [("AML511", line_of(body, "learning_rate=rate"))], found


def test_a_step_swept_in_a_pipeline_is_the_pipelines_sweep_step(tmp_path: Path) -> None:
    (tmp_path / "train.yml").write_text(COMPONENT.replace('python -c "print(1)"', "python train.py")
                                        .replace("command:", "code: ./src\ncommand:"))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(
        "import argparse, mlflow\nparser = argparse.ArgumentParser()\n"
        "for flag in ('--data', '--lr', '--model'):\n    parser.add_argument(flag)\nparser.parse_args()\n"
        "for epoch in range(5):\n    mlflow.log_metric('auc', 0.5 + epoch / 10, step=epoch)\n")
    body = """\
train = load_component(source="./train.yml")

@pipeline(default_compute="cpu-cluster")
def tuned(data):
    trial = train(training_data=data, lr=Uniform(min_value=0.001, max_value=0.1))
    sweep_step = trial.sweep(primary_metric="auc", goal="maximize", sampling_algorithm="grid")
    sweep_step.set_limits(max_total_trials=4)
    return {"model": sweep_step.outputs.model}

job = tuned(data=Input(type="uri_folder", path="azureml:churn:1"))
ml_client.jobs.create_or_update(job)
"""
    # Grid sampling needs a choice: the sweep step is checked as the YAML sweep step would be.
    assert findings(tmp_path, body) == [("AML302", line_of(body, "lr=Uniform"))]


def test_a_notebook_finding_names_its_cell_and_ipython_syntax_is_understood(tmp_path: Path) -> None:
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# A notebook"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["%pip install azure-ai-ml\n", "files = !ls\n", HEADER]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["%%bash\n", "echo {not python}\n"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": [JOB.replace("compute=", "comptue="), "ml_client.jobs.create_or_update(job)\n"]},
    ]
    path = tmp_path / "train.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    result = run("--isolated", str(path.name), cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "train.ipynb:cell 4:5:5: AML901 error: command() does not use the keyword 'comptue'" in result.stdout
    assert "5 |     comptue=" in result.stdout  # the excerpt numbers the line in its cell
    shown = json.loads(run("--isolated", "--format", "json", path.name, cwd=tmp_path).stdout)["diagnostics"]
    assert [(d["code"], d["cell"], d["cell_line"]) for d in shown] == [("AML901", 4, 5)]


def test_a_folder_a_notebook_writes_before_it_submits_is_not_missing(tmp_path: Path) -> None:
    cells = [
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": [HEADER, "import os\n", "os.makedirs('src')\n"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["%%writefile src/train.py\n", "print('hi')\n"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": [
            JOB.replace("    compute=", '    code="./src",\n    compute='), "ml_client.jobs.create_or_update(job)\n"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": [
            JOB.replace("    compute=", '    code="./elsewhere",\n    compute='), "ml_client.jobs.create_or_update(job)\n"]},
    ]
    path = tmp_path / "writes.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    found = [(d.code, d.message) for d in lint_file(path).diagnostics if str(d.severity) == "error"]
    assert [code for code, _ in found] == ["AML803"] and "'./elsewhere'" in found[0][1], found


def test_values_known_only_at_run_time_are_skipped_not_guessed(tmp_path: Path) -> None:
    body = """\
import os, sys
compute = "cpu-cluster" if len(sys.argv) > 1 else "gpu-cluster"
if os.environ.get("BIG"):
    environment = "sklearn-train:3"
else:
    environment = "sklearn-train:2"
job = command(command="python train.py --data ${{inputs.data}}", environment=environment,
              inputs=dict(**{"data": Input(type="uri_folder", path="azureml:churn:1")}), compute=compute)
ml_client.jobs.create_or_update(job)
"""
    path = tmp_path / "dynamic.py"
    path.write_text(HEADER + textwrap.dedent(body))
    report = lint_file(path)
    assert [d.code for d in report.diagnostics if str(d.severity) != "info"] == []
    said = " ".join(d.message for d in report.diagnostics if d.code == "AML902")
    assert "'compute' is not checked" in said and "'environment' is not checked" in said and "'inputs'" in said


def test_linting_never_runs_the_code(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    (tmp_path / "job.py").write_text(HEADER + f"open({str(marker)!r}, 'w').write('x')\n"
                                     "__import__('os').system('touch ran2')\n" + JOB
                                     + "ml_client.jobs.create_or_update(job)\n")
    result = run("--isolated", "job.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not marker.exists() and not (tmp_path / "ran2").exists()


def test_a_python_file_that_builds_no_job_is_skipped_silently(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import sklearn\nprint('training')\n")
    (tmp_path / "broken.py").write_text("def f(:\n")  # not Azure ML: not this linter's business
    result = run("--isolated", "-v", ".", cwd=tmp_path)
    assert result.returncode == 0 and "AML" not in result.stdout, result.stdout


def test_pre_commit_hands_python_files_and_notebooks_to_the_hook() -> None:
    import yaml

    hook = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())[0]
    assert set(hook["types_or"]) == {"yaml", "python", "jupyter"}


@pytest.mark.skipif(importlib.util.find_spec("azure.ai.ml") is None, reason="azure-ai-ml is not installed here")
def test_the_table_of_sdk_keywords_is_what_the_installed_sdk_uses() -> None:
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "sdk_signatures.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
