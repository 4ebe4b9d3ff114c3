"""Every lab keeps its contract: its specs lint as it says, it runs as a learner runs it and
produces what it promises, and it links to the quiz questions it proves."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from amlrun import default_signals
from conftest import ROOT
from runner import scenarios

LABS = scenarios.labs(ROOT / "scenarios")


def meta_of(folder: Path) -> dict:
    return yaml.safe_load((folder / "scenario.yml").read_text())


@pytest.mark.parametrize("folder", LABS, ids=lambda p: p.name)
def test_scenario_lint_expectations(folder: Path) -> None:
    assert scenarios.lint_expectations(folder), "a lab says what aml-lint reports on its specs"
    assert scenarios.check_lint(folder) == []


@pytest.mark.parametrize("folder", LABS, ids=lambda p: p.name)
def test_every_lab_says_what_it_teaches_and_which_exam_question_it_answers(folder: Path) -> None:
    meta = meta_of(folder)
    for key in ("title", "teaches", "question"):
        assert isinstance(meta.get(key), str) and meta[key].strip(), f"{folder.name} needs a {key}"
    assert meta.get("notice"), f"{folder.name}: what to notice once it ran"
    # Steps parse, and a trigger names a schedule step before it.
    seen = set()
    for step in scenarios.steps(meta):
        if step.kind == "trigger":
            assert step.target in seen
        seen.add(step.id)


def test_at_least_fourteen_labs_cover_every_block_of_the_seed() -> None:
    names = {folder.name for folder in LABS}
    assert len(names) >= 14
    assert {"worked-example", "command-job", "serverless-job", "distributed-pytorch", "distributed-tensorflow",
            "distributed-mpi", "checkpoint-resume", "pipeline-prep-train-eval", "weekly-retrain"} <= names
    sweeps = [name for name in names if name.startswith("sweep-")]
    assert len(sweeps) >= 4
    lint_labs = [folder for folder in LABS if meta_of(folder).get("fixed")]
    assert len(lint_labs) >= 3, "lint labs: a broken spec, its codes and the fixed one beside it"


def test_the_quiz_and_the_labs_link_both_ways() -> None:
    """A question whose check names a lab is listed by that lab, and a lab lists only questions
    that exist and name it."""
    from quiz.bank import load_bank

    named: dict[str, set[str]] = {}
    for question in load_bank().questions:
        lab = ((question.check or {}).get("scenario") or {}).get("name")
        if lab:
            named.setdefault(lab, set()).add(question.id)
    assert set(named) <= {folder.name for folder in LABS}
    # ... and each lab a question leans on runs (so the suite proves it), not only lints.
    assert all(scenarios.steps(meta_of(ROOT / "scenarios" / lab)) for lab in named)
    for folder in LABS:
        assert set(meta_of(folder).get("questions") or []) == named.get(folder.name, set()), folder.name


# Labs whose run a test file of their own checks in depth (and runs once): not run twice.
RUN_ELSEWHERE = {"distributed-pytorch": "runner/test_distributed_pytorch.py",
                 "checkpoint-resume": "runner/test_distributed_pytorch.py",
                 "distributed-tensorflow": "runner/test_distributed_tf_mpi.py",
                 "distributed-mpi": "runner/test_distributed_tf_mpi.py"}
RUNNABLE = [folder for folder in LABS if folder.name not in RUN_ELSEWHERE and scenarios.steps(meta_of(folder))]


def test_labs_run_elsewhere_are_run_there() -> None:
    for name, test_file in RUN_ELSEWHERE.items():
        assert (ROOT / "scenarios" / name / "scenario.yml").is_file()
        assert f'"{name}"' in (ROOT / "tests" / test_file).read_text()


def test_only_lint_labs_do_not_run() -> None:
    """Every lab runs, except those that teach with a broken spec (the fixed one lints clean)."""
    for folder in LABS:
        if not scenarios.steps(meta_of(folder)):
            assert meta_of(folder).get("fixed"), f"{folder.name} neither runs nor is a lint lab"


@pytest.mark.lab
@pytest.mark.parametrize("folder", RUNNABLE, ids=lambda p: p.name)
def test_scenario_runs_as_it_promises(folder: Path, tmp_path: Path) -> None:
    """The lab as a learner runs it: its setup commands, then each step; what it must produce
    holds, and MLflow's own API sees each job's run with its metrics."""
    # The whole scenarios folder: a lab may use another's code (the sweep labs share one trainer).
    shutil.copytree(folder.parent, tmp_path / "scenarios",
                    ignore=shutil.ignore_patterns(".amllab", "data", "promoted", "*.png"))
    lab = tmp_path / "scenarios" / folder.name
    workspace = scenarios.fresh_workspace(lab, tmp_path / "workspace")
    result = scenarios.execute(lab, workspace, open(tmp_path / "lab.log", "w"))
    assert result["passed"], (result["problems"], (tmp_path / "lab.log").read_text()[-4000:])
    for step in result["steps"]:
        if step["run_dir"]:
            from runner import jobs

            check_tracking(jobs.show(workspace, step["name"]))


def check_tracking(shown: dict) -> None:
    from mlflow import MlflowClient

    from runner.sweep.sampling import format_value

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
        assert {a.path for a in client.list_artifacts(best.info.run_id)} >= {"outputs"}
    elif shown["type"] == "pipeline":
        # The pipeline's run is the parent of one run per step that ran; each holds its metrics.
        children = client.search_runs([run.info.experiment_id],
                                      f"tags.mlflow.parentRunId = '{run.info.run_id}'", max_results=2000)
        ran = {node["name"]: node for node in shown["jobs"].values() if not node["reused"]}
        assert sorted(child.data.tags["amllab.job"] for child in children) == sorted(ran)
        for child in children:
            assert child.info.status == "FINISHED"
            assert child.data.metrics == ran[child.data.tags["amllab.job"]]["metrics"]
    else:
        assert run.data.metrics == shown["metrics"] and shown["metrics"]
        logged = {a.path for a in client.list_artifacts(run.info.run_id, "outputs")}
        assert {f"outputs/{path.name}" for path in Path(shown["outputs"]["default"]).iterdir()} <= logged


def test_the_lab_guide_is_generated_from_the_labs() -> None:
    import subprocess
    import sys

    result = subprocess.run([sys.executable, str(ROOT / "tools" / "build_scenario_docs.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_scenario_list_and_run_from_the_command_line(tmp_path: Path) -> None:
    """`aml-run scenario list|run` as a learner types them: a lab that holds exits 0 with its
    report, one whose expectation fails exits 1 naming it, an unknown lab exits 2 in one line."""
    import json

    from amlrun import aml_run

    listing = aml_run("scenario", "list", "-o", "json", cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    rows = {row["name"]: row for row in json.loads(listing.stdout)}
    assert set(rows) == {folder.name for folder in LABS}
    assert rows["worked-example"]["runs"] == "job, run, schedule, trigger"
    assert rows["broken-sweep"]["runs"] == "lint only"

    shown = aml_run("scenario", "show", "worked-example", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "Run it: aml-run scenario run worked-example" in shown.stdout
    assert "aml-run schedule trigger churn-weekly-retrain" in shown.stdout  # the schedule's name, not the step's id
    assert "Quiz questions it proves: pipeline-worked-promote-best" in shown.stdout
    lint_lab = json.loads(aml_run("scenario", "show", "broken-sweep", "-o", "json", cwd=tmp_path).stdout)
    assert {"files": ["fixed.yml"], "codes": []} in lint_lab["lint"]

    shutil.copytree(ROOT / "scenarios" / "weekly-retrain", tmp_path / "weekly-retrain")
    shutil.copytree(ROOT / "scenarios" / "pipeline", tmp_path / "pipeline", ignore=shutil.ignore_patterns(".amllab"))
    held = aml_run("scenario", "run", str(tmp_path / "weekly-retrain"), cwd=tmp_path)
    assert held.returncode == 0, held.stdout + held.stderr
    assert "weekly-retrain: every expectation holds" in held.stdout
    assert "What to notice:" in held.stdout and "$ aml-run schedule create --file schedule.yml" in held.stdout

    meta = tmp_path / "weekly-retrain" / "scenario.yml"
    meta.write_text(meta.read_text().replace('"2026-04-12T02:30:00"', '"2026-04-12T03:30:00"'))
    failed = aml_run("scenario", "run", str(tmp_path / "weekly-retrain"), "-o", "json", cwd=tmp_path)
    assert failed.returncode == 1, failed.stderr
    report = json.loads(failed.stdout)
    assert report["passed"] is False and len(report["problems"]) == 1
    assert "2026-04-12T02:30:00" in report["problems"][0] and "expected" in report["problems"][0]

    # A lab runs in an empty workspace: a folder that holds something is refused, not mixed in.
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "workspace.yml").write_text("version: 1\n")
    busy = aml_run("scenario", "run", str(tmp_path / "weekly-retrain"), "--workspace", str(tmp_path / "busy"),
                   cwd=tmp_path)
    assert busy.returncode == 2 and "is not empty" in busy.stderr and "Traceback" not in busy.stderr
    (tmp_path / "typo").mkdir()
    (tmp_path / "typo" / "scenario.yml").write_text("title: a typo\nsteps:\n  - jbo: job.yml\n")
    typo = aml_run("scenario", "run", str(tmp_path / "typo"), cwd=tmp_path)
    assert typo.returncode == 2 and typo.stderr.count("\n") == 1, typo.stderr
    assert "scenario.yml: steps[0] needs exactly one of run, job, schedule, trigger (it has: jbo)" in typo.stderr
    assert not (tmp_path / "typo" / ".amllab").exists()
    unknown = aml_run("scenario", "run", "no-such-lab", cwd=tmp_path)
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1 and "worked-example" in unknown.stderr


def test_ctrl_c_cancels_the_running_step_and_stops_the_lab(tmp_path: Path) -> None:
    """Ctrl-C during a lab's job: that job is canceled with every process it started, the
    steps after it do not run, and scenario run exits 130."""
    import signal
    import subprocess

    from amlrun import group_gone, write_job
    from conftest import BIN
    from runner import status
    from runner.workspace import Workspace

    lab = tmp_path / "lab"
    write_job(lab, "job", "command: echo started; sleep 300\n")
    (lab / "scenario.yml").write_text(
        "title: interrupted\nteaches: Ctrl-C.\nquestion: What does Ctrl-C do?\nnotice: [nothing]\n"
        "steps:\n  - job: job.yml\n    expect: {status: Completed}\n  - run: touch after\n")
    running = subprocess.Popen([str(BIN / "aml-run"), "scenario", "run", str(lab), "--workspace",
                                str(tmp_path / "ws")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True, preexec_fn=default_signals)
    assert running.stdout is not None
    for line in running.stdout:
        if line.strip() == "started":
            break
    running.send_signal(signal.SIGINT)
    out, err = running.communicate(timeout=60)
    assert running.returncode == 130, out + err
    assert "Ctrl-C: canceled" in out and "the lab stops here" in out
    assert not (lab / "after").exists()
    workspace = Workspace.locate(tmp_path / "ws", create=False)
    (name,) = workspace.job_names()
    record = status.read(workspace.run_dir(name))
    assert record["status"] == "Canceled" and group_gone(record["pgid"])


def test_each_expectation_says_what_it_found_when_it_does_not_hold(tmp_path: Path) -> None:
    """The checks a lab's expect runs, on job records made by hand: each one that fails names
    what was found and what was expected (the lab runs above show them holding)."""
    (tmp_path / "outputs").mkdir()
    (tmp_path / "outputs" / "model.json").write_text("{}")
    command_job = {"type": "command", "status": "Failed", "error": {"message": "exit 1"},
                   "metrics": {"auc": 0.7}, "outputs": {"default": str(tmp_path / "outputs"),
                                                       "logs": str(tmp_path / "logs")}}
    assert scenarios.check_job({"metrics": {"auc": {"min": 0.6}}, "files": {"default": ["model.json"]}},
                               command_job) == []
    problems = scenarios.check_job({"status": "Completed", "metrics": {"auc": {"min": 0.8}, "loss": None},
                                    "logs": ["progress.log"]}, command_job)
    assert problems == [
        "status is Failed, expected Completed ({'message': 'exit 1'})",
        "metric auc is 0.7, expected at least 0.8",
        "metric 'loss' was not logged (logged: ['auc'])",
        f"output logs has no progress.log (in {tmp_path / 'logs'})"]

    pipeline = {"type": "pipeline", "status": "Completed", "metrics": {}, "outputs": {},
                "jobs": {"prep": {"reused": True, "status": "Completed", "metrics": {}},
                         "train": {"reused": True, "status": "Completed", "metrics": {}},
                         "evaluate": {"reused": False, "status": "Completed", "metrics": {"test_auc": 0.71}}}}
    assert scenarios.check_job({"reused": ["prep"], "ran": ["evaluate", "train"],
                                "steps": {"evaluate": {"metrics": {"test_auc": {"min": 0.78}}}, "score": {}}},
                               pipeline) == [
        "steps reused: ['prep', 'train'], expected ['prep']",
        "steps ran: ['evaluate'], expected ['evaluate', 'train']",
        "step evaluate: metric test_auc is 0.71, expected at least 0.78",
        "the pipeline has no step 'score' (steps: ['evaluate', 'prep', 'train'])"]

    sweep = {"type": "sweep", "status": "Completed", "metrics": {}, "outputs": {},
             "trials": [{"name": "s_0", "stopped_by": None, "metrics": {"auc": 0.8}},
                        {"name": "s_1", "stopped_by": {"policy": "bandit"}, "metrics": {"auc": 0.5}}],
             "best_trial": {"name": "s_0", "metric": 0.8, "params": {"lr": 0.1}}}
    assert scenarios.check_job({"trials": 3, "canceled_by_policy": {"min": 2},
                                "best_trial": {"metric": {"max": 0.7}, "params": {"lr": 0.01}}}, sweep) == [
        "the sweep ran 2 trials, expected 3",
        "trials canceled by the policy is 1, expected at least 2",
        "the best trial's metric is 0.8, expected at most 0.7",
        "the best trial has lr=0.1, expected 0.01"]
