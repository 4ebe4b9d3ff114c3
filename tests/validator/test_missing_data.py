"""Data that is not in git: a missing local data input is AML806's warning, which the
configuration (`warnings-as-errors = ["AML806"]`) or `--strict` turns into an error, while a
missing source path (code, conda file, include) stays AML803's error. Run as a user would."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import BIN
from validator.diagnostic import Severity
from validator.engine import lint_text

JOB = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
type: command
code: ./src
command: python fit.py --rows ${{inputs.rows}}
inputs:
  rows:
    type: TYPE
    path: PATH
environment: azureml:AzureML-sklearn-1.5@latest
compute: azureml:cpu-cluster
"""
SCRIPT = """\
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--rows", required=True)
parser.parse_args()
"""


def job(kind: str, path: str) -> str:
    return JOB.replace("TYPE", kind).replace("PATH", path)


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "aml-lint"), "--color", "never", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "fit.py").write_text(SCRIPT)
    (tmp_path / "job.yml").write_text(job("uri_folder", "./downloads/rows"))
    return tmp_path


def codes(text: str, base: Path) -> dict[str, Severity]:
    report = lint_text(text, str(base / "job.yml"), base_dir=base)
    return {d.code: d.severity for d in report.diagnostics}


def test_missing_data_input_is_a_warning_and_lint_passes(project: Path) -> None:
    result = run("job.yml", cwd=project)
    assert result.returncode == 0, result.stdout
    assert "job.yml:8:11: AML806 warning: input 'rows': local path './downloads/rows' does not exist " \
           "yet: the job would fail if submitted now" in result.stdout
    assert result.stdout.rstrip().endswith("Found 0 errors and 1 warning (1 spec checked).")


def test_configuration_switch_makes_it_an_error(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.amllab.lint]\nwarnings-as-errors = ["AML806"]\n')
    result = run("job.yml", cwd=project)
    assert result.returncode == 1, result.stdout
    assert "AML806 error: input 'rows'" in result.stdout
    # Only that warning: another one (the deprecated single-brace form) stays a warning.
    (project / "other.yml").write_text(job("uri_folder", "./src").replace(
        "${{inputs.rows}}", "{inputs.rows}"))
    other = run("other.yml", cwd=project)
    assert other.returncode == 0 and "AML205 warning" in other.stdout, other.stdout


def test_strict_makes_it_an_error_and_ignore_drops_it(project: Path) -> None:
    strict = run("--strict", "job.yml", cwd=project)
    assert strict.returncode == 1 and "AML806 error" in strict.stdout, strict.stdout
    ignored = run("--ignore", "AML806", "job.yml", cwd=project)
    assert ignored.returncode == 0 and ignored.stdout.strip() == "All clean: 1 spec checked."


def test_once_the_data_is_there_nothing_is_reported(project: Path) -> None:
    (project / "downloads" / "rows").mkdir(parents=True)
    result = run("--strict", "job.yml", cwd=project)
    assert result.returncode == 0 and result.stdout.strip() == "All clean: 1 spec checked."


@pytest.mark.parametrize("kind,path", [
    ("uri_file", "./downloads/rows.csv"),
    ("uri_file", "file:./downloads/rows.csv"),
    ("uri_folder", "downloads"),
    ("mltable", "./downloads/rows-mltable"),
    ("custom_model", "./models/baseline"),
    ("mlflow_model", "/mnt/shared/models/baseline"),
])
def test_every_data_and_model_type_is_a_warning(project: Path, kind: str, path: str) -> None:
    found = codes(job(kind, path), project)
    assert found.get("AML806") is Severity.WARNING, found
    assert "AML803" not in found


def test_missing_source_stays_an_error(project: Path) -> None:
    text = job("uri_folder", "./src").replace("code: ./src", "code: ./source")
    assert codes(text, project) == {"AML803": Severity.ERROR}
    conda = job("uri_folder", "./src").replace(
        "environment: azureml:AzureML-sklearn-1.5@latest",
        "environment:\n  image: mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu22.04\n  conda_file: ./env/conda.yml")
    assert codes(conda, project) == {"AML803": Severity.ERROR}


def test_an_arm_id_input_is_a_reference_and_a_cut_short_one_an_error(project: Path) -> None:
    # azure-ai-ml passes an asset's ARM id through to the service as the input's path.
    workspace = "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/ws"
    assert codes(job("uri_folder", workspace + "/data/rows/versions/1"), project) == {}
    assert codes(job("uri_folder", workspace), project) == {"AML803": Severity.ERROR}


def test_pipeline_and_step_inputs_are_checked_alike(project: Path) -> None:
    pipeline = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:cpu-cluster
inputs:
  rows:
    type: uri_folder
    path: ./downloads/rows
jobs:
  fit:
    type: command
    code: ./src
    command: python fit.py --rows ${{inputs.rows}} && ls ${{inputs.extra}}
    environment: azureml:AzureML-sklearn-1.5@latest
    inputs:
      rows: ${{parent.inputs.rows}}
      extra:
        type: uri_file
        path: ./downloads/extra.csv
"""
    report = lint_text(pipeline, str(project / "pipeline.yml"), base_dir=project)
    found = [(d.code, d.severity, d.pointer) for d in report.diagnostics]
    assert found == [("AML806", Severity.WARNING, "/inputs/rows/path"),
                     ("AML806", Severity.WARNING, "/jobs/fit/inputs/extra/path")]
