"""validator.spec: the typed model the runner consumes, and `--set` overrides as az reads them."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from validator.errors import UsageError
from validator.spec import SpecError, apply_overrides, load_spec, parse_overrides

JOB = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
code: src
command: python train.py --data ${{inputs.data}} --lr ${{inputs.lr}} --flag ${{inputs.flag}}
inputs:
  data: {type: uri_folder, path: ./data, mode: download}
  lr: 0.01
  flag: true
outputs:
  model: {type: uri_folder, name: churn-model, version: 2}
environment: azureml:sklearn-train:2
experiment_name: churn
limits:
  timeout: 120
"""


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text("import argparse\np = argparse.ArgumentParser()\n"
                                                "p.add_argument('--data'); p.add_argument('--lr')\n"
                                                "p.add_argument('--flag')\np.parse_args()\n")
    (tmp_path / "data").mkdir()
    path = tmp_path / "job.yml"
    path.write_text(JOB)
    return path


def test_command_job_model(spec_file: Path) -> None:
    job = load_spec(spec_file).command_job()
    assert job.code == spec_file.parent / "src"
    assert job.inputs["data"].path == "./data" and job.inputs["data"].mode == "download"
    assert job.inputs["lr"].literal_text() == "0.01" and job.inputs["flag"].literal_text() == "True"
    assert job.outputs["model"].asset_name == "churn-model" and job.outputs["model"].asset_version == "2"
    assert job.timeout == 120 and job.experiment_name == "churn"


def test_overrides_are_linted_again(spec_file: Path) -> None:
    spec = load_spec(spec_file, ["inputs.lr=0.5", "inputs.data=./data", "experiment_name=other"])
    job = spec.command_job()
    assert job.inputs["lr"].value == 0.5 and job.experiment_name == "other"
    assert job.inputs["data"].mode == "download"  # --set on a data input replaces only its path
    with pytest.raises(SpecError) as error:
        load_spec(spec_file, ["comptue=azureml:cpu"])
    assert "AML101" in error.value.render() and "(with --set comptue=azureml:cpu)" in error.value.render()


def test_lint_errors_refuse_the_spec_with_positions(spec_file: Path) -> None:
    spec_file.write_text(JOB.replace("experiment_name", "experment_name"))
    with pytest.raises(SpecError) as error:
        load_spec(spec_file)
    assert str(error.value).startswith(f"{spec_file}:11:1: AML101")
    assert "did you mean 'experiment_name'" in error.value.render()


@pytest.mark.parametrize("pair", ["novalue", "=3", "inputs..lr=1"])
def test_malformed_overrides_are_usage_errors(pair: str) -> None:
    with pytest.raises(UsageError, match="KEY=VALUE"):
        parse_overrides([pair])


def test_override_values_are_json_else_text() -> None:
    parsed = dict((".".join(k), v) for k, v in parse_overrides(
        ["a=0.1", "b=no", "c=azureml:x:1", "d=[1, 2]", "e=true", "f=", 'g="3"']))
    assert parsed == {"a": 0.1, "b": "no", "c": "azureml:x:1", "d": [1, 2], "e": True, "f": "", "g": "3"}


def test_override_through_a_scalar_is_refused() -> None:
    with pytest.raises(UsageError, match="`command` is not a mapping"):
        apply_overrides({"command": "echo"}, ["command.x=1"])


keys = st.lists(st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True), min_size=1, max_size=4)
scalars = st.one_of(st.integers(-10**6, 10**6), st.booleans(),
                    st.from_regex(r"[a-z][a-z0-9_.:/-]{0,12}", fullmatch=True).filter(
                        lambda text: text not in ("true", "false", "null")))


@given(st.dictionaries(st.from_regex(r"[a-z]{1,5}", fullmatch=True), st.integers(), max_size=4), keys, scalars)
def test_an_override_sets_exactly_its_path(base: dict, path: list[str], value: object) -> None:
    text = str(value) if not isinstance(value, bool) else ("true" if value else "false")
    try:
        result = apply_overrides(base, [".".join(path) + "=" + text])
    except UsageError:
        return  # the path runs through an existing scalar
    target = result
    for part in path[:-1]:
        target = target[part]
    assert target[path[-1]] == value
    assert {k: v for k, v in result.items() if k != path[0]} == {k: v for k, v in base.items() if k != path[0]}
