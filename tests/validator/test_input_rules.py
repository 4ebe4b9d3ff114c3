"""AML207-AML220 (validator/rules/inputs.py): the rules never raise on arbitrary port shapes,
and the finer points of their verdicts (what YAML coerces, what counts as using an input)."""

from __future__ import annotations

import textwrap

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from validator.engine import lint_text
from validator.loader import parse
from validator.rules import RULES

CODES = [f"AML{n}" for n in range(207, 221)]
KINDS = ("commandJob", "sweepJob", "pipelineJob", "commandComponent")

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
                    st.sampled_from(["${{inputs.x}}", "$[[--a ${{inputs.a}}]]", "s3://b/k/", "./data/",
                                     "azureml://datastores/d/paths/${{name}}/", "file:.", ".", "uri_file",
                                     "mount", "eval_mount", "${{parent.jobs.a.outputs.b}}"]))
port_keys = st.sampled_from(["type", "path", "mode", "value", "name", "version", "optional"])
ports = st.one_of(scalars, st.dictionaries(port_keys, scalars, max_size=5), st.lists(scalars, max_size=2))
port_maps = st.one_of(scalars, st.dictionaries(st.sampled_from(["a", "b", "A", "x-y", "1n", "a.b"]), ports,
                                               max_size=4))
commands = st.one_of(scalars, st.sampled_from([
    "python t.py ${{inputs.a}} $[[--b ${{inputs.b}}]] ${{outputs.A}}", "", "${{inputs.a", "{inputs.b}"]))
env_vars = st.one_of(scalars, st.dictionaries(st.text(min_size=1, max_size=5), scalars, max_size=3))
nodes = st.fixed_dictionaries({}, optional={
    "command": commands, "component": scalars, "inputs": port_maps, "outputs": port_maps,
    "environment_variables": env_vars, "type": st.sampled_from(["command", "sweep", 3])})
documents = st.fixed_dictionaries({}, optional={
    "command": commands, "inputs": port_maps, "outputs": port_maps, "environment_variables": env_vars,
    "trial": st.one_of(scalars, st.fixed_dictionaries({}, optional={"command": commands,
                                                                     "environment_variables": env_vars})),
    "jobs": st.one_of(scalars, st.dictionaries(st.sampled_from(["p", "q"]), st.one_of(scalars, nodes),
                                               max_size=2)),
    "component": scalars,
})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.sampled_from(KINDS))
def test_rules_never_raise_on_arbitrary_ports(data: dict, kind: str) -> None:
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    document, _ = parse("fuzz.yml", text)
    document.kind = kind
    line_count = max(1, len(text.splitlines()) + 1)
    for code in CODES:
        rule = RULES[code]
        if kind not in rule.kinds:
            continue
        for diagnostic in rule.check(document):
            assert diagnostic.code == code
            assert 1 <= diagnostic.line <= line_count and diagnostic.column >= 1, diagnostic


JOB = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
type: command
command: python train.py --x ${{inputs.x}}
environment: azureml:sklearn-train:2
compute: azureml:cpu-cluster
"""


def codes_for(text: str) -> list[str]:
    return [d.code for d in lint_text(textwrap.dedent(text), "job.yml").diagnostics]


@pytest.mark.parametrize("written,reported", [
    ("yes", True), ("Off", True), ("010", True), ("-017", True), ("1:30", True), ("0o17", False),
    ("true", False), ("False", False), ("007", False), ("0x1F", False), ("1.50", False),
    ("3", False), ('"yes"', False), ("'010'", False), ("1e-3", False),
])
def test_literal_input_coercion(written: str, reported: bool) -> None:
    assert ("AML213" in codes_for(JOB + f"inputs:\n  x: {written}\n")) is reported


@pytest.mark.parametrize("written,reported", [
    ("true", True), ("yes", True), ("3.10", True), ("0755", True), ("0x1F", True), ("1.0e+3", True), ("1.0e3", False),
    ("True", False), ("1", False), ("0.5", False), ('"true"', False), ("hello", False),
])
def test_environment_variable_coercion(written: str, reported: bool) -> None:
    text = JOB + f"inputs:\n  x: 1\nenvironment_variables:\n  V: {written}\n"
    assert ("AML213" in codes_for(text)) is reported


def test_value_form_and_anchor_are_read_from_the_source() -> None:
    assert "AML213" in codes_for(JOB + "inputs:\n  x: {value: on}\n")
    assert "AML213" not in codes_for(JOB + "inputs:\n  x: &seed 7\n")


@pytest.mark.parametrize("extra,reported", [
    ("  y: 3\n", True),
    ("  y: 3\nenvironment_variables:\n  Y: ${{inputs.y}}\n", False),
    ("  y: ${{parent.jobs.a.outputs.b}}\n", True),
])
def test_unused_input(extra: str, reported: bool) -> None:
    assert ("AML209" in codes_for(JOB + "inputs:\n  x: 1\n" + extra)) is reported


def test_unused_input_named_in_an_azure_ml_variable_counts_as_used() -> None:
    text = JOB.replace("--x ${{inputs.x}}", "--x ${{inputs.x}} --y $AZURE_ML_INPUT_y")
    assert "AML209" not in codes_for(text + "inputs:\n  x: 1\n  y:\n    type: uri_folder\n"
                                            "    path: azureml:d:1\n")


def test_unused_input_is_left_to_the_reference_rules_when_the_command_is_broken() -> None:
    typo = JOB.replace("${{inputs.x}}", "${{inputs.x_typo}}") + "inputs:\n  x: 1\n"
    unclosed = JOB.replace("${{inputs.x}}", "${{inputs.x") + "inputs:\n  x: 1\n"
    assert "AML209" not in codes_for(typo) and "AML202" in codes_for(typo)
    assert "AML209" not in codes_for(unclosed) and "AML201" in codes_for(unclosed)


def test_optional_block_needs_every_input_valued() -> None:
    block = JOB.replace("--x ${{inputs.x}}", "$[[--x ${{inputs.x}}]]")
    assert "AML212" in codes_for(block + "inputs:\n  x: 1\n")
    # A data input without a path has no value: the block can be dropped.
    assert "AML212" not in codes_for(block + "inputs:\n  x:\n    type: uri_folder\n    optional: true\n")


def test_pipeline_input_bound_only_through_a_step_compute_or_legacy_binding_is_used() -> None:
    text = """\
    $schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
    type: pipeline
    settings:
      default_compute: azureml:cpu-cluster
    inputs:
      where: azureml:gpu-cluster
      lr: 0.1
      unused: 3
    jobs:
      train:
        type: command
        component: azureml:train:1
        compute: ${{parent.inputs.where}}
        inputs:
          learning_rate: ${{inputs.lr}}
    """
    found = [d for d in lint_text(textwrap.dedent(text), "p.yml").diagnostics if d.code == "AML211"]
    assert [d.message.split("'")[1] for d in found] == ["unused"]


@pytest.mark.parametrize("path,reported", [
    ("s3://b/k", True), ("gs://b/k", True), ("git+https://x/y", True),
    ("wasbs://c@a.blob.core.windows.net/k", False), ("abfss://c@a.dfs.core.windows.net/k", False),
    ("adl://a.azuredatalakestore.net/k", False), ("https://x/y.csv", False),
    ("azureml://datastores/d/paths/k", False), ("azureml:d:1", False), ("C://data", False),
])
def test_path_schemes(path: str, reported: bool) -> None:
    text = JOB + f"inputs:\n  x:\n    type: uri_folder\n    path: {path}\n"
    assert ("AML218" in codes_for(text)) is reported
