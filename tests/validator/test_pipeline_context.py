"""Issue 10, patterns 2-4: what a pipeline's context changes about its steps and components.

- A step with no compute anywhere runs on serverless compute (AML517 is an info); a spark step
  takes `resources` instead of a compute, and without either it is an error (AML520).
- A component file named by a step is registered anonymously: its own `name`/`version` problems
  are not errors of the pipeline (AML516), while the file linted on its own keeps them.
- Booleans in enums: `enum: [True, False]` with `default: 'true'` is no error; booleans and their
  spellings compare case-insensitively (AML535, AML519), unquoted ones only warn (AML547).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from validator.diagnostic import Diagnostic, Severity
from validator.engine import lint_file, lint_text
from validator.rules import RULES
from validator.rules.components import enum_contains, enum_text
from validator.rules.pipeline import breaks_the_pipeline


def _findings(text: str, tmp_path: Path, name: str = "spec.yml") -> list[Diagnostic]:
    path = tmp_path / name
    path.write_text(text)
    return lint_file(path).diagnostics


def _by_code(findings: list[Diagnostic]) -> dict[str, list[Diagnostic]]:
    grouped: dict[str, list[Diagnostic]] = {}
    for finding in findings:
        grouped.setdefault(finding.code, []).append(finding)
    return grouped


# ----------------------------------------------------------------------------- serverless steps
STEP = """\
  {name}:
    type: command
    command: echo {name}
    environment: azureml:sklearn-train:2
"""
SPARK = """\
  {name}:
    type: spark
    code: azureml:spark-src:1
    entry:
      file: job.py
    conf:
      spark.driver.cores: 1
      spark.driver.memory: 2g
      spark.executor.cores: 2
      spark.executor.memory: 2g
      spark.executor.instances: 2
"""
RESOURCES = """\
    resources:
      instance_type: standard_e4s_v3
      runtime_version: "3.4"
"""


def _pipeline(*steps: str, header: str = "") -> str:
    return ("$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json\n"
            "type: pipeline\n" + header + "jobs:\n" + "".join(steps))


def test_steps_without_any_compute_are_an_info_not_an_error(tmp_path: Path) -> None:
    assert RULES["AML517"].severity is Severity.INFO
    findings = _findings(_pipeline(STEP.format(name="prep"), STEP.format(name="train")), tmp_path)
    assert [(d.code, d.severity) for d in findings] == [("AML517", Severity.INFO)] * 2
    assert all("serverless" in d.message and "azureml:serverless" in (d.hint or "") for d in findings)


@pytest.mark.parametrize("header", ["compute: azureml:cpu-cluster\n",
                                    "settings:\n  default_compute: azureml:serverless\n",
                                    "settings:\n  default_compute: azureml:cpu-cluster\n"])
def test_a_pipeline_compute_covers_every_step(header: str, tmp_path: Path) -> None:
    text = _pipeline(STEP.format(name="prep"), SPARK.format(name="wrangle"), header=header)
    assert not {"AML517", "AML520"} & {d.code for d in _findings(text, tmp_path)}


def test_serverless_spark_step_needs_no_compute(tmp_path: Path) -> None:
    findings = _findings(_pipeline(SPARK.format(name="wrangle") + RESOURCES), tmp_path)
    assert not {"AML517", "AML520"} & {d.code for d in findings}


def test_spark_step_with_neither_compute_nor_resources_is_an_error(tmp_path: Path) -> None:
    findings = _by_code(_findings(_pipeline(SPARK.format(name="wrangle"), STEP.format(name="report")),
                                  tmp_path))
    assert [d.severity for d in findings["AML520"]] == [Severity.ERROR]
    assert "wrangle" in findings["AML520"][0].message
    assert [d.message.split("'")[1] for d in findings["AML517"]] == ["report"]  # the command step


def test_spark_step_with_its_own_compute_is_fine(tmp_path: Path) -> None:
    text = _pipeline(SPARK.format(name="wrangle") + "    compute: azureml:synapse-pool\n")
    assert "AML520" not in {d.code for d in _findings(text, tmp_path)}


# ----------------------------------------------------------------------------- anonymous components
COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
type: command
{identity}inputs:
  rows:
    type: uri_folder
  fraction:
    type: number
    default: {default}
    max: 1.0
command: python sample.py --rows ${{{{inputs.rows}}}} --fraction ${{{{inputs.fraction}}}}
environment: azureml:sklearn-train:2
"""
USES_IT = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:cpu-cluster
jobs:
  sample:
    type: command
    component: ./component.yml
    inputs:
      rows:
        type: uri_folder
        path: azureml:rows:1
"""
IDENTITIES = {
    "no name": "",
    "display-style name": "name: Sample-Rows\n",
    "name too long": "name: " + "s" * 300 + "\n",
    "empty name": "name: ''\n",
    "float version": "name: sample_rows\nversion: 1.10\n",
    "list as version": "name: sample_rows\nversion: [1]\n",
}


@pytest.mark.parametrize("identity", IDENTITIES, ids=list(IDENTITIES))
def test_name_and_version_of_a_step_component_do_not_break_the_pipeline(identity: str, tmp_path: Path) -> None:
    component = tmp_path / "component.yml"
    component.write_text(COMPONENT.format(identity=IDENTITIES[identity], default=0.5))
    own = [d for d in lint_file(component).diagnostics if d.severity is Severity.ERROR]
    pipeline = _findings(USES_IT, tmp_path, "pipeline.yml")
    assert "AML516" not in {d.code for d in pipeline}
    if identity != "float version":  # an unquoted decimal version is a warning even on its own
        assert own and all(d.pointer.split("/")[1] in ("name", "version") for d in own), own
    # Now that a pipeline beside it uses the file, its name and version errors are AML549 warnings.
    again = lint_file(component).diagnostics
    assert not [d for d in again if d.severity is Severity.ERROR], again
    assert {d.code for d in again if d.severity is Severity.WARNING} <= {"AML549", "AML531"}
    assert ("AML549" in {d.code for d in again}) == (identity != "float version")


def test_a_component_no_pipeline_nearby_uses_keeps_its_errors(tmp_path: Path) -> None:
    # Used from a pipeline three folders up: too far to be looked for; registered on its own.
    folder = tmp_path / "a" / "b" / "c"
    folder.mkdir(parents=True)
    (folder / "component.yml").write_text(COMPONENT.format(identity="name: Sample-Rows\n", default=0.5))
    (tmp_path / "pipeline.yml").write_text(USES_IT.replace("./component.yml", "./a/b/c/component.yml"))
    assert "AML530" in {d.code for d in lint_file(folder / "component.yml").diagnostics}
    (folder.parent / "pipeline.yml").write_text(USES_IT.replace("./component.yml", "./c/component.yml"))
    assert "AML549" in {d.code for d in lint_file(folder / "component.yml").diagnostics}


def test_a_pipeline_that_names_the_file_but_uses_another_does_not_count(tmp_path: Path) -> None:
    (tmp_path / "component.yml").write_text(COMPONENT.format(identity="", default=0.5))
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "component.yml").write_text(COMPONENT.format(identity="name: sample\n", default=0.5))
    # The word component.yml appears, but the step's component is other/component.yml.
    (tmp_path / "pipeline.yml").write_text(USES_IT.replace("./component.yml", "./other/component.yml"))
    assert "AML102" in {d.code for d in lint_file(tmp_path / "component.yml").diagnostics}


def test_other_errors_of_a_nameless_step_component_still_count(tmp_path: Path) -> None:
    (tmp_path / "component.yml").write_text(COMPONENT.format(identity="", default=1.5))
    findings = _by_code(_findings(USES_IT, tmp_path, "pipeline.yml"))
    assert len(findings["AML516"]) == 1
    assert "has 1 error" in findings["AML516"][0].message and "above its max" in findings["AML516"][0].message


@pytest.mark.parametrize("pointer,breaks", [
    ("/name", False), ("/version", False), ("/version/0", False), ("", True), ("/inputs/x/default", True),
    ("/names", True), ("/display_name", True), ("/command", True),
])
def test_only_name_and_version_findings_are_forgiven(pointer: str, breaks: bool) -> None:
    diagnostic = Diagnostic("c.yml", 1, 1, "AML000", "x", pointer=pointer)
    assert breaks_the_pipeline(diagnostic) is breaks


# ----------------------------------------------------------------------------- booleans in enums
SPELLINGS = [True, "true", "True", "TRUE", " tRuE "]
FALSE_SPELLINGS = [False, "false", "False", "FALSE"]


@pytest.mark.parametrize("enum_value,default", list(itertools.product(SPELLINGS, SPELLINGS))
                         + list(itertools.product(FALSE_SPELLINGS, FALSE_SPELLINGS)))
def test_boolean_spellings_are_one_value(enum_value: object, default: object) -> None:
    assert enum_contains([enum_value, "other"], default)


@pytest.mark.parametrize("options,value", [
    (["Adam", "sgd"], "adam"),          # other text keeps its case
    ([True, False], "yes"),
    ([True], False),
    (["1"], True),
    ([True, False], 1),                 # 1 == True in Python, not in an enum
])
def test_other_values_compare_exactly(options: list, value: object) -> None:
    assert not enum_contains(options, value)


def test_enum_text_shows_numbers_as_yaml_wrote_them() -> None:
    assert [enum_text(v) for v in (2, 2.5, 1.0, "Binary")] == ["2", "2.5", "1.0", "Binary"]


BOOL_ENUM_COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
type: command
name: flags
version: "1"
inputs:
  shuffle:
    type: {kind}
    enum: {enum}
    default: {default}
command: echo ${{{{inputs.shuffle}}}}
environment: azureml:sklearn-train:2
"""


@pytest.mark.parametrize("kind", ["string", "boolean"])
@pytest.mark.parametrize("enum", ["[True, False]", "['True', 'False']", "[true, false]", "['true', 'false']"])
@pytest.mark.parametrize("default", ["'true'", "true", "'False'", "FALSE", "'TRUE'"])
def test_boolean_enum_is_never_an_error(kind: str, enum: str, default: str) -> None:
    report = lint_text(BOOL_ENUM_COMPONENT.format(kind=kind, enum=enum, default=default), "c.yml")
    assert [d for d in report.diagnostics if d.severity is Severity.ERROR] == []
    warned = {d.code for d in report.diagnostics if d.severity is Severity.WARNING}
    assert warned == ({"AML547"} if "'" not in enum else set())


def test_a_default_outside_a_boolean_enum_is_still_an_error() -> None:
    text = BOOL_ENUM_COMPONENT.format(kind="string", enum="['True']", default="'false'")
    assert "AML535" in {d.code for d in lint_text(text, "c.yml").diagnostics}


def test_numbers_in_an_enum_are_still_refused() -> None:
    text = BOOL_ENUM_COMPONENT.format(kind="string", enum="[1, 2]", default="'1'")
    assert "AML103" in {d.code for d in lint_text(text, "c.yml").diagnostics}
