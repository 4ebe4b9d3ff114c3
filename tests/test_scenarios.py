"""Every scenario's specs lint exactly as its scenario.yml expects."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from validator.engine import lint_file

SCENARIOS = sorted(p.parent for p in (ROOT / "scenarios").glob("*/scenario.yml"))


@pytest.mark.parametrize("folder", SCENARIOS, ids=lambda p: p.name)
def test_scenario_lint_expectations(folder: Path) -> None:
    meta = yaml.safe_load((folder / "scenario.yml").read_text())
    expected = sorted(meta["expect"]["lint"])
    specs = [meta["spec"], *meta.get("components", [])]
    found = sorted(d.code for spec in specs for d in lint_file(folder / spec).diagnostics)
    assert found == expected


def test_seed_scenarios_exist() -> None:
    names = {p.name for p in SCENARIOS}
    assert {"command-job", "sweep-random-bandit", "distributed-job", "pipeline", "schedule", "broken-spec"} <= names


# Labs whose run a test file of their own checks in depth (and runs once): not run twice.
RUN_ELSEWHERE = {"distributed-pytorch": "test_distributed.py", "checkpoint-resume": "test_distributed.py",
                 "distributed-tensorflow": "test_distributed_frameworks.py",
                 "distributed-mpi": "test_distributed_frameworks.py"}
RUNNABLE = [folder for folder in SCENARIOS if folder.name not in RUN_ELSEWHERE
            and "status" in (yaml.safe_load((folder / "scenario.yml").read_text()).get("expect") or {})]


def test_labs_run_elsewhere_are_run_there() -> None:
    for name, test_file in RUN_ELSEWHERE.items():
        assert (ROOT / "scenarios" / name / "scenario.yml").is_file()
        assert f'"{name}"' in (ROOT / "tests" / test_file).read_text()


@pytest.mark.parametrize("folder", RUNNABLE, ids=lambda p: p.name)
def test_scenario_runs_as_it_promises(folder: Path, tmp_path: Path) -> None:
    """The lab as a learner runs it: its setup commands, then `aml-run job create --stream`;
    what it must produce holds, and MLflow's own API sees the run with its metrics."""
    import shutil

    from runner import scenarios
    from runner.sweep.sampling import format_value
    from runner.workspace import Workspace

    # The whole scenarios folder: a lab may use another's code (the sweep labs share one trainer).
    shutil.copytree(folder.parent, tmp_path / "scenarios", ignore=shutil.ignore_patterns(".amllab", "data"))
    lab = tmp_path / "scenarios" / folder.name
    workspace = Workspace.locate(tmp_path / ".amllab")
    shown = scenarios.run(lab, workspace)
    assert scenarios.check(lab, shown) == [], Path(shown["log_path"]).read_text()[-3000:]

    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=shown["mlflow"]["tracking_uri"])
    run = client.get_run(shown["mlflow"]["run_id"])
    assert run.info.status == "FINISHED"
    if shown["type"] == "sweep":
        # The sweep's run is the parent of one run per trial; its best trial's run holds the
        # metrics and the outputs.
        children = client.search_runs([run.info.experiment_id],
                                      f"tags.mlflow.parentRunId = '{run.info.run_id}'", max_results=2000)
        assert len(children) == len(shown["trials"])
        assert run.data.tags["best_child_run_id"] == shown["best_trial"]["name"]
        best = next(child for child in children if child.data.tags["amllab.job"] == shown["best_trial"]["name"])
        assert best.data.params == {key: format_value(value) for key, value in shown["best_trial"]["params"].items()}
        run = best
    elif shown["type"] == "pipeline":
        # The pipeline's run is the parent of one run per step that ran; each holds its metrics.
        children = client.search_runs([run.info.experiment_id],
                                      f"tags.mlflow.parentRunId = '{run.info.run_id}'", max_results=2000)
        ran = {node["name"]: node for node in shown["jobs"].values() if not node["reused"]}
        assert sorted(child.data.tags["amllab.job"] for child in children) == sorted(ran)
        for child in children:
            assert child.info.status == "FINISHED"
            assert child.data.metrics == ran[child.data.tags["amllab.job"]]["metrics"]
        assert all(node["status"] == "Completed" for node in shown["jobs"].values())
    else:
        assert run.data.metrics == shown["metrics"] and shown["metrics"]
    logged = {a.path for a in client.list_artifacts(run.info.run_id, "outputs")}
    for name in (yaml.safe_load((folder / "scenario.yml").read_text())["expect"].get("files") or {}).get("default", []):
        assert f"outputs/{name}" in logged
