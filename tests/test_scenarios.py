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
    assert {"command-job", "sweep-job", "distributed-job", "pipeline", "schedule", "broken-spec"} <= names


RUNNABLE = [folder for folder in SCENARIOS
            if "status" in (yaml.safe_load((folder / "scenario.yml").read_text()).get("expect") or {})]


@pytest.mark.parametrize("folder", RUNNABLE, ids=lambda p: p.name)
def test_scenario_runs_as_it_promises(folder: Path, tmp_path: Path) -> None:
    """The lab as a learner runs it: its setup commands, then `aml-run job create --stream`;
    what it must produce holds, and MLflow's own API sees the run with its metrics."""
    import shutil

    from runner import scenarios
    from runner.workspace import Workspace

    lab = tmp_path / folder.name
    shutil.copytree(folder, lab, ignore=shutil.ignore_patterns(".amllab", "data"))
    workspace = Workspace.locate(tmp_path / ".amllab")
    shown = scenarios.run(lab, workspace)
    assert scenarios.check(lab, shown) == [], Path(shown["log_path"]).read_text()[-3000:]

    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=shown["mlflow"]["tracking_uri"])
    run = client.get_run(shown["mlflow"]["run_id"])
    assert run.info.status == "FINISHED"
    assert run.data.metrics == shown["metrics"] and shown["metrics"]
    logged = {a.path for a in client.list_artifacts(run.info.run_id, "outputs")}
    for name in (yaml.safe_load((folder / "scenario.yml").read_text())["expect"].get("files") or {}).get("default", []):
        assert f"outputs/{name}" in logged
