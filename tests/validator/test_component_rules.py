"""Component-definition rules (AML530-AML546): edge cases the golden files do not pin down, and
properties over arbitrary values in the places these rules read."""

from __future__ import annotations

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from validator.engine import lint_text
from validator.rules.components import COMPONENT, PIPELINE

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def codes(text: str) -> list[str]:
    return [d.code for d in lint_text(text, "component.yml").diagnostics]


def component_codes(text: str) -> list[str]:
    return [c for c in codes(text) if "AML530" <= c <= "AML599"]


def test_examples_are_clean() -> None:
    assert codes(COMPONENT) == []
    assert codes(PIPELINE) == []


def test_unquoted_integer_version_is_fine() -> None:
    assert component_codes(COMPONENT.replace('version: "1"', "version: 2")) == []


def test_float_version_names_what_it_becomes() -> None:
    report = lint_text(COMPONENT.replace('version: "1"', "version: 1.10"), "c.yml")
    [finding] = [d for d in report.diagnostics if d.code == "AML531"]
    assert '"1.1"' in finding.message and "1.10" in finding.message
    assert (finding.line, finding.column) == (5, 10)


def test_exponent_defaults_read_as_strings_are_numbers() -> None:
    text = COMPONENT.replace("default: 0.01", "default: 1e-3")
    assert yaml.safe_load(text)["inputs"]["learning_rate"]["default"] == "1e-3"
    assert component_codes(text) == []


def test_boolean_defaults_in_any_case() -> None:
    base = COMPONENT.replace("  max_epochs:\n", "  shuffle:\n    type: boolean\n    default: DEFAULT\n"
                                                "  max_epochs:\n").replace(
        "  $[[", "  --shuffle ${{inputs.shuffle}}\n  $[[")
    for good in ("true", "False", '"TRUE"', "'false'"):
        assert component_codes(base.replace("DEFAULT", good)) == [], good
    for bad in ("maybe", '"yes please"', '"1"'):
        assert component_codes(base.replace("DEFAULT", bad)) == ["AML532"], bad
    assert "AML532" not in codes(base.replace("DEFAULT", "1"))  # the schema's finding


def test_integer_default_that_is_a_whole_float_is_fine() -> None:
    text = COMPONENT.replace("    optional: true\n    min: 1\n", "    default: 20.0\n    min: 1\n").replace(
        "$[[--max-epochs ${{inputs.max_epochs}}]]", "--max-epochs ${{inputs.max_epochs}}")
    assert component_codes(text) == []


def test_optional_block_rules_do_not_overlap() -> None:
    # Only required inputs in the block: AML540 once, not AML539 too.
    text = COMPONENT.replace("  --learning-rate ${{inputs.learning_rate}}\n",
                             "  $[[--learning-rate ${{inputs.learning_rate}}]]\n")
    assert component_codes(text) == ["AML540"]
    # An undeclared input in a block is AML202's finding alone.
    text = COMPONENT.replace("$[[--max-epochs ${{inputs.max_epochs}}]]", "$[[--epochs ${{inputs.epochs}}]]")
    assert "AML540" not in codes(text) and "AML202" in codes(text)


def test_misspelt_reference_is_not_also_an_unused_input() -> None:
    text = COMPONENT.replace("${{inputs.learning_rate}}", "${{inputs.learning_rat}}")
    found = codes(text)
    assert "AML202" in found and "AML545" not in found


def test_environment_variable_counts_as_use() -> None:
    text = COMPONENT.replace("  --learning-rate ${{inputs.learning_rate}}\n",
                             "  --learning-rate $AZURE_ML_INPUT_learning_rate\n")
    assert "AML545" not in codes(text)


def test_escaped_space_on_purpose_is_not_a_continuation() -> None:
    text = COMPONENT.replace("python train.py", r"python My\ Scripts/train.py")
    assert "AML544" not in codes(text)


def test_literal_block_backslash_is_one_finding_at_the_first_line() -> None:
    text = COMPONENT.replace("command: >-\n  python train.py\n", "command: |\n  python train.py \\\n").replace(
        "${{inputs.training_data}}\n", "${{inputs.training_data}} \\\n")
    report = lint_text(text, "c.yml")
    [finding] = [d for d in report.diagnostics if d.code == "AML544"]
    assert finding.line == text.splitlines().index("  python train.py \\") + 1
    assert "2 lines" in finding.message


def test_inline_component_in_pipeline_is_checked_but_its_name_is_not() -> None:
    text = PIPELINE.replace("      command:", "      name: Not-Checked\n      version: 1.10\n      command:").replace(
        "default: hello", "default: hello\n          enum: [hi, hey]")
    assert component_codes(text) == ["AML535"]


def test_pipeline_component_ports_are_checked_without_command_rules() -> None:
    text = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineComponent.schema.json
type: pipeline
name: prep_pipeline
inputs:
  raw:
    type: uri_folder
  unused_here:
    type: integer
    default: 3
  RAW:
    type: uri_folder
jobs:
  prep:
    type: command
    component: azureml:prep:1
    inputs:
      data: ${{parent.inputs.raw}}
"""
    assert component_codes(text) == ["AML542"]


# ----------------------------------------------------------------------------- properties
scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**9, 10**9),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
                    st.sampled_from(["1e-3", "nan", "inf", "-inf", " 5 ", "TRUE", "maybe", "1_000"]))
values = st.one_of(scalars, st.lists(scalars, max_size=3), st.dictionaries(st.text(max_size=5), scalars, max_size=3))
port_types = st.one_of(st.sampled_from(["integer", "number", "string", "boolean", "uri_folder", "mlflow_model",
                                        "Integer", "path"]), scalars)
ports = st.fixed_dictionaries({"type": port_types}, optional={
    "default": values, "min": values, "max": values, "enum": values, "optional": values,
    "early_available": values, "is_control": values})
names = st.one_of(st.sampled_from(["lr", "LR", "path", "Home", "a-b", "x y", "1x", "_ok"]), st.text(max_size=8),
                  st.integers(0, 5))
commands = st.one_of(
    st.text(max_size=60),
    st.lists(st.sampled_from(["python t.py", "${{inputs.lr}}", "$[[", "]]", "${{inputs.LR}}", "\\\n", "\\ ",
                              "--x", "${{outputs.lr}}", "[", "]", "${{inputs.path}}", "\n", " "]),
             max_size=12).map("".join),
    values)


@SETTINGS
@given(inputs=st.one_of(st.dictionaries(names, st.one_of(ports, values), max_size=4), values),
       outputs=st.one_of(st.dictionaries(names, st.one_of(ports, values), max_size=3), values),
       command=commands, version=values, name=values, inline=st.booleans())
def test_arbitrary_component_values_never_break_a_rule(inputs, outputs, command, version, name, inline) -> None:
    component = {"name": name, "version": version, "command": command,
                 "environment": "azureml:env:1", "inputs": inputs, "outputs": outputs}
    if inline:
        document = {"$schema": "https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json",
                    "type": "pipeline", "settings": {"default_compute": "azureml:cpu"},
                    "jobs": {"step": {"type": "command", "component": component}}}
    else:
        document = {"$schema": "https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json",
                    "type": "command", **component}
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    report = lint_text(text, "fuzz.yml")
    line_count = len(text.splitlines()) + 1
    for d in report.diagnostics:
        assert "internal error" not in d.message, d
        assert 1 <= d.line <= line_count and d.column >= 1, d
