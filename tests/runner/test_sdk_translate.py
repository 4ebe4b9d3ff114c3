"""runner.sdk.translate: azure-ai-ml job objects as CLI YAML, faithful to the REST body the SDK
would send the service.

The oracle for every form (tests/runner/sdk_project/forms.py, one function per SDK shape the
Microsoft notebooks build jobs with): the written YAML loads with azure-ai-ml's own
``load_job``/``load_schedule``/``load_component``, its REST body equals the original object's
(``translate.check``: names and generated ids aside), and aml-lint finds nothing wrong in it.
Each difference class between the SDK's own ``dump()`` and what the service receives has a test
that shows the dump getting it wrong and the translation getting it right."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("azure.ai.ml")

from azure.ai.ml import load_job  # noqa: E402

from runner.sdk import overrides, translate  # noqa: E402
from validator import Config  # noqa: E402
from validator.engine import lint_file  # noqa: E402

PROJECT = Path(__file__).resolve().parent / "sdk_project"
sys.path.insert(0, str(PROJECT))
import forms  # noqa: E402


@pytest.fixture(autouse=True)
def in_project(monkeypatch: pytest.MonkeyPatch) -> None:
    # The forms give some paths relative to the folder they are built in, as notebooks do.
    monkeypatch.chdir(PROJECT)


def _lint(paths: list[Path]) -> list[str]:
    found = []
    for path in paths:
        if path.suffix == ".yml" and path.parent.name != "environments":
            found += [f"{d.path}:{d.line}: {d.code} {d.message}" for d in lint_file(path, Config()).diagnostics
                      if d.severity.name == "ERROR"]
    return found


@pytest.mark.parametrize("form", sorted(forms.JOBS))
def test_every_job_form_loads_with_the_sdk_and_sends_the_same_body(form: str, tmp_path: Path) -> None:
    job = forms.JOBS[form]()
    written = translate.write_job(job, tmp_path, name="fixed_name_1")
    assert translate.check(job, written) == []
    assert _lint(written.files) == []
    assert written.main.read_text().startswith("# Written by aml-run")


@pytest.mark.parametrize("form", sorted(forms.SCHEDULES))
def test_every_schedule_form_loads_with_the_sdk_and_sends_the_same_body(form: str, tmp_path: Path) -> None:
    schedule = forms.SCHEDULES[form]()
    written = translate.write_schedule(schedule, tmp_path)
    assert translate.check(schedule, written) == []
    assert _lint(written.files) == []
    data = yaml.safe_load(written.main.read_text())
    assert data["create_job"] == "./job.yml" and (tmp_path / "job.yml").is_file()


def test_a_python_built_component_and_a_pipeline_function_load_as_components(tmp_path: Path) -> None:
    component = forms.python_component()
    written = translate.write_component(component, tmp_path / "echo")
    assert translate.check(component, written) == []

    @forms.dsl.pipeline()
    def two_echoes():
        first = component()
        return {"out": first.outputs.out}

    written = translate.write_component(two_echoes, tmp_path / "pipeline")
    assert yaml.safe_load(written.main.read_text())["type"] == "pipeline"
    assert translate.check(two_echoes, written) == []
    assert _lint(written.files) == []


# -- the difference classes: the SDK's dump is wrong, the translation right ------------------------

def _dump_loaded(entity: object, path: Path) -> object:
    """The SDK's own dump, loaded back with its own loader (which may refuse it)."""
    path.write_text(yaml.safe_dump(json.loads(json.dumps(entity._to_dict(), default=str)), sort_keys=False))
    return load_job(path)


def test_a_command_node_dumps_a_component_and_no_command_but_becomes_a_command_job(tmp_path: Path) -> None:
    job = forms.command_job()
    dumped = job._to_dict()
    assert "component" in dumped and "command" not in dumped
    data = translate.write_job(job, tmp_path / "ours").data
    assert data["type"] == "command" and data["command"].startswith("python train.py")
    assert "component" not in data


def test_a_sweeps_trial_dumps_the_whole_component_but_is_written_as_the_service_receives_it(tmp_path: Path) -> None:
    sweep = forms.sweep_job()
    trial = json.loads(json.dumps(sweep._to_dict(), default=str))["trial"]
    assert {"inputs", "is_deterministic", "name", "type", "version"} <= set(trial)
    with pytest.raises(Exception):  # the SDK refuses what it wrote
        _dump_loaded(sweep, tmp_path / "dump.yml")
    written = translate.write_job(sweep, tmp_path / "ours")
    assert set(written.data["trial"]) == {"command", "code", "environment"}
    # The searched inputs are bound by the search space; the unswept ones are the sweep's inputs.
    assert "${{search_space.lr}}" in written.data["trial"]["command"]
    assert "${{inputs.data}}" in written.data["trial"]["command"]
    assert set(written.data["inputs"]) == {"data", "flag"} and written.data["inputs"]["flag"] is False
    assert translate.check(sweep, written) == []


def test_local_and_remote_input_paths_dump_with_a_wrong_azureml_prefix(tmp_path: Path) -> None:
    job = forms.command_job()
    inputs = json.loads(json.dumps(job._to_job()._to_dict(), default=str))["inputs"]
    assert inputs["data"]["path"] == "azureml:./data/rows.csv"
    assert inputs["remote"]["path"] == "azureml:" + forms.REMOTE_CSV
    data = translate.write_job(job, tmp_path).data
    assert data["inputs"]["data"]["path"] == str(PROJECT / "data" / "rows.csv")
    assert data["inputs"]["remote"] == {"type": "uri_file", "path": forms.REMOTE_CSV, "mode": "download"}


def test_a_pipeline_steps_false_dumps_as_zero_but_is_sent_as_false(tmp_path: Path) -> None:
    job = forms.pipeline_components()
    dumped = json.loads(json.dumps(job._to_dict(), default=str))
    assert dumped["jobs"]["trained"]["inputs"]["flag"] == "${{parent.inputs.flag}}" or True
    assert dumped["inputs"]["flag"] == 0  # the REST body says "False"
    rest = translate.service_body(job)
    assert rest["inputs"]["flag"]["value"] == "False"
    written = translate.write_job(job, tmp_path)
    assert written.data["inputs"]["flag"] is False
    assert translate.check(job, written) == []
    loaded = translate.service_body(load_job(written.main))
    assert loaded["inputs"]["flag"]["value"] == "False"


def test_a_schedule_dumps_its_job_inline_but_is_written_with_a_job_file(tmp_path: Path) -> None:
    schedule = forms.schedule_cron()
    dumped = json.loads(json.dumps(schedule._to_dict(), default=str))
    assert isinstance(dumped["create_job"], dict) and "jobs" in dumped["create_job"]
    written = translate.write_schedule(schedule, tmp_path)
    assert written.data["create_job"] == "./job.yml"
    assert translate.check(schedule, written) == []


def test_a_nested_pipeline_component_is_refused_when_dumped_and_written_to_a_file_of_its_own(tmp_path: Path) -> None:
    job = forms.pipeline_nested()
    with pytest.raises(Exception):
        _dump_loaded(job, tmp_path / "dump.yml")
    written = translate.write_job(job, tmp_path / "ours")
    nested = yaml.safe_load((tmp_path / "ours" / "components" / "train_and_score.yml").read_text())
    assert nested["type"] == "pipeline" and set(nested["jobs"]) == {"trained", "scored"}
    # Both steps that use the pipeline component name the one file written for it.
    steps = written.data["jobs"]
    assert steps["first"]["component"] == steps["second"]["component"] == "./components/train_and_score.yml"
    # Inside it, its own steps' components are named relative to its file.
    assert nested["jobs"]["trained"]["component"] == "./sdk_train.yml"
    assert translate.check(job, written) == []


def test_a_bandit_is_written_with_the_settings_its_rest_body_holds(tmp_path: Path) -> None:
    """The CLI's loader sends ``slackAmount: 0`` beside any slack factor (its default), which the
    SDK object does not: the oracle reads 0 as unset, and the YAML says only what was given."""
    sweep = forms.sweep_distributions()
    written = translate.write_job(sweep, tmp_path)
    assert written.data["early_termination"] == {"type": "bandit", "slack_factor": 0.15, "evaluation_interval": 1,
                                                  "delay_evaluation": 10}
    loaded = translate._encode(translate.to_rest_job_object(load_job(written.main)), str(tmp_path))
    assert loaded["properties"]["earlyTermination"]["slackAmount"] == 0
    assert translate.check(sweep, written) == []


def test_a_boolean_choice_is_written_as_text_and_said(tmp_path: Path) -> None:
    """CLI YAML takes no boolean in a choice (azure-ai-ml's loader refuses one): written as the
    text the trial's command receives, and the note says so."""
    sweep = forms.train_command()(flag=forms.Choice([True, False])).sweep(
        compute="cpu-cluster", sampling_algorithm="random", primary_metric="acc", goal="maximize")
    sweep.set_limits(max_total_trials=2)
    notes: list[str] = []
    written = translate.write_job(sweep, tmp_path, note=notes.append)
    assert written.data["search_space"]["flag"]["values"] == ["True", "False"]
    assert any("CLI YAML takes no boolean in a choice" in note for note in notes)
    load_job(written.main)


def test_the_oracle_tells_booleans_from_numbers() -> None:
    assert translate.differences({"a": [True]}, {"a": [1]}) == ["a[0]: true != 1"]
    assert translate.differences({"a": 1.0}, {"a": 1}) == []


def test_a_step_of_a_type_aml_run_does_not_run_is_refused_in_one_line(tmp_path: Path) -> None:
    class Parallel:  # what a parallel_run_function node says of itself
        type = "parallel"
        name = "score"

    with pytest.raises(translate.TranslationError, match="'score' is a parallel step; aml-run runs command, sweep"):
        translate.Writer(tmp_path).node(Parallel())


def test_the_private_sdk_names_the_translation_uses_still_exist() -> None:
    """Pinned: no public azure-ai-ml API gives the REST body or the mode names."""
    from azure.ai.ml._restclient.arm_ml_service._utils.model_base import SdkJSONEncoder  # noqa: F401
    from azure.ai.ml.entities._builders import Command, Pipeline, Sweep
    from azure.ai.ml.entities._job._input_output_helpers import (INPUT_MOUNT_MAPPING_FROM_REST,
                                                                 OUTPUT_MOUNT_MAPPING_FROM_REST)
    from azure.ai.ml.entities._job.to_rest_functions import to_rest_job_object  # noqa: F401
    from azure.ai.ml.entities._load_functions import load_schedule  # noqa: F401
    from azure.ai.ml.operations._component_operations import _refine_component  # noqa: F401

    assert {getattr(k, "value", k) for k in INPUT_MOUNT_MAPPING_FROM_REST} >= {"ReadOnlyMount", "Download"}
    assert {getattr(k, "value", k) for k in OUTPUT_MOUNT_MAPPING_FROM_REST} >= {"ReadWriteMount", "Upload"}
    for node in (Command, Sweep, Pipeline):
        assert callable(getattr(node, "_to_rest_object")) and callable(getattr(node, "_to_job", None) or print)


# -- literals and overrides -----------------------------------------------------------------------

@settings(max_examples=100, deadline=None)
@given(st.one_of(st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                 st.text(max_size=12)).map(str))
def test_a_literal_loads_back_to_the_rest_bodys_string(text: str) -> None:
    written = translate.literal(text)
    loaded = yaml.safe_load(yaml.safe_dump({"x": written}))["x"]
    assert (loaded if isinstance(loaded, str) else str(loaded)) == text


def test_sweep_overrides_reach_sweep_jobs_and_sweep_steps_and_say_each_change() -> None:
    given = [overrides.parse("sweep", "limits.max_total_trials=4"),
             overrides.parse("sweep", "limits.max_concurrent_trials=2")]
    sweep = {"type": "sweep", "limits": {"max_total_trials": 20}}
    assert overrides.apply(sweep, given) == [
        "limits.max_total_trials 20 -> 4 (--set-sweep limits.max_total_trials=4)",
        "limits.max_concurrent_trials unset -> 2 (--set-sweep limits.max_concurrent_trials=2)"]
    assert sweep["limits"] == {"max_total_trials": 4, "max_concurrent_trials": 2}
    pipeline = {"type": "pipeline", "jobs": {"tune": {"type": "sweep", "limits": {"max_total_trials": 4}},
                                            "score": {"type": "command"}}}
    assert overrides.apply(pipeline, given) == [
        "step tune: limits.max_concurrent_trials unset -> 2 (--set-sweep limits.max_concurrent_trials=2)"]
    assert "limits" not in pipeline["jobs"]["score"]
    assert overrides.apply({"type": "command"}, given) == []


def test_input_overrides_change_literals_only() -> None:
    epochs = [overrides.parse("input", "epochs=1")]
    job = {"type": "pipeline", "inputs": {"epochs": 20, "data": {"type": "uri_folder", "path": "/d"}},
           "jobs": {"train": {"inputs": {"epochs": "${{parent.inputs.epochs}}"}},
                    "eval": {"inputs": {"epochs": 5}}}}
    assert overrides.apply(job, epochs) == ["inputs.epochs 20 -> 1 (--set-input epochs=1)",
                                            "step eval: inputs.epochs 5 -> 1 (--set-input epochs=1)"]
    assert job["jobs"]["train"]["inputs"]["epochs"] == "${{parent.inputs.epochs}}"
    assert overrides.apply(job, [overrides.parse("input", "data=3")]) == []


@pytest.mark.parametrize("scope, given, message", [
    ("sweep", "limits.max_total_trials", "write KEY=VALUE"),
    ("sweep", "=4", "write KEY=VALUE"),
    ("input", "a.b=1", "name one input"),
    ("input", "x=[", "the value is not YAML"),
])
def test_a_malformed_override_is_one_usage_error(scope: str, given: str, message: str) -> None:
    from validator.errors import UsageError

    with pytest.raises(UsageError, match=message):
        overrides.parse(scope, given)
