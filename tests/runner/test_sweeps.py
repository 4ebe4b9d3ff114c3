"""Sweep jobs through `aml-run` as a user runs them: real trials (command jobs in processes of
their own), MLflow's real SQLite store, real signals. The early-termination decisions of a
whole sweep are checked against a table computed by hand below."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from amlrun import aml_run, default_signals, finish, group_gone, lab, pid_gone, show, submit, wait_for  # noqa: F401
from conftest import BIN
from runner import status
from runner.workspace import Workspace

HEADER = "$schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json\ntype: sweep\n"
ENVIRONMENT = "  environment:\n    image: python:3.11-slim\n"
# The learning curves of the hand-computed table: shape x scale, one value per interval.
CURVES = """\
import argparse, time
import mlflow

SHAPES = {
    "steady": [0.50, 0.60, 0.70, 0.80, 0.85, 0.90],
    "early":  [0.70, 0.75, 0.78, 0.80, 0.81, 0.82],
    "late":   [0.20, 0.30, 0.45, 0.65, 0.85, 0.95],
}
parser = argparse.ArgumentParser()
parser.add_argument("--shape")
parser.add_argument("--scale", type=float)
args = parser.parse_args()
for step, value in enumerate(SHAPES[args.shape], start=1):
    mlflow.log_metric("score", round(args.scale * value, 6), step=step)
    time.sleep(0.3)
"""


CURVES_TRIAL = """\
trial:
  code: ./src
  command: python curves.py --shape ${{search_space.shape}} --scale ${{search_space.scale}}
"""


def write_sweep(folder: Path, name: str, body: str, script: str | None = None, script_name: str = "main.py") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if script is not None:
        (folder / "src").mkdir(exist_ok=True)
        (folder / "src" / script_name).write_text(textwrap.dedent(script))
    body = textwrap.dedent(body)
    if "environment:" not in body:
        body = body.replace("trial:\n", "trial:\n" + ENVIRONMENT, 1)
    path = folder / f"{name}.yml"
    path.write_text(HEADER + body)
    return path




def trial_records(folder: Path, shown: dict) -> list[dict]:
    workspace = Workspace(folder / ".amllab")
    return [status.read(workspace.run_dir(row["name"])) for row in shown["trials"]]


# -- the held-out style check: a grid sweep, a bandit policy, cancellations computed by hand ---

def test_bandit_cancels_exactly_the_trials_computed_by_hand(lab: Path) -> None:
    """Grid order is the Cartesian product with the last key fastest: trial k has
    shape = SHAPES[k // 3], scale = [1.0, 0.9, 0.7][k % 3]. One trial at a time, so every
    earlier trial has ended when a trial is evaluated. Bandit, slack_factor 0.15 (threshold
    B/1.15), evaluation_interval 1, delay_evaluation 2: each trial is checked at intervals
    2, 3, ...; B is the best, over the trials that reached interval N, of their best value up
    to N; a stopped trial counts with its values up to its stopping interval.

    Values (scale x shape):
      t0 steady 1.0 : .50 .60 .70 .80 .85 .90
      t1 steady 0.9 : .45 .54 .63 .72 .765 .81
      t2 steady 0.7 : .35 .42 .49 .56 .595 .63
      t3 early  1.0 : .70 .75 .78 .80 .81 .82
      t4 early  0.9 : .63 .675 .702 .72 .729 .738
      t5 early  0.7 : .49 .525 .546 .56 .567 .574
      t6 late   1.0 : .20 .30 .45 .65 .85 .95
      t7 late   0.9 : .18 .27 .405 .585 .765 .855
      t8 late   0.7 : .14 .21 .315 .455 .595 .665

    t0: alone, B is its own value: runs to the end.
    t1: N2 B=.60 thr .5217 (.54 kept); N3 B=.70 thr .6087 (.63); N4 B=.80 thr .6957 (.72);
        N5 B=.85 thr .7391 (.765); N6 B=.90 thr .7826 (.81): runs to the end.
    t2: N2 B=.60 thr .5217; best .42 < thr: CANCELED at 2.
    t3: N2 B=.75 (itself) thr .6522; N3 B=.78 thr .6783; N4 B=.80 thr .6957; N5 B=.85 (t0)
        thr .7391 (.81); N6 B=.90 thr .7826 (.82): runs to the end.
    t4: N2 B=.75 (t3) thr .6522 (.675 kept); N3 B=.78 thr .6783 (.702); N4 B=.80 (t0, first
        to hold it) thr .6957 (.72); N5 B=.85 (t0) thr .7391; best .729 < thr: CANCELED at 5.
    t5: N2 B=.75 thr .6522; best .525: CANCELED at 2.
    t6: N2 B=.75 thr .6522; best .30: CANCELED at 2.
    t7: N2 best .27: CANCELED at 2.     t8: N2 best .21: CANCELED at 2.
    Best trial: t0 (.90).
    """
    spec = write_sweep(lab / "bandit", "sweep", CURVES_TRIAL + textwrap.dedent("""\
        sampling_algorithm: grid
        search_space:
          shape: {type: choice, values: [steady, early, late]}
          scale: {type: choice, values: [1.0, 0.9, 0.7]}
        objective: {goal: maximize, primary_metric: score}
        limits: {max_total_trials: 9, max_concurrent_trials: 1}
        early_termination: {type: bandit, slack_factor: 0.15, evaluation_interval: 1, delay_evaluation: 2}
        """), CURVES, "curves.py")
    name = submit(lab, spec)
    shown = finish(lab, name, timeout=300)
    assert shown["status"] == "Completed", shown["error"]
    rows = shown["trials"]
    assert [(row["params"]["shape"], row["params"]["scale"]) for row in rows] == [
        (shape, scale) for shape in ("steady", "early", "late") for scale in (1.0, 0.9, 0.7)]
    stopped = {int(row["name"].rsplit("_", 1)[1]): row["stopped_by"] for row in rows if row["stopped_by"]}
    assert {index: entry["interval"] for index, entry in stopped.items()} == {2: 2, 4: 5, 5: 2, 6: 2, 7: 2, 8: 2}
    assert {int(row["name"].rsplit("_", 1)[1]): row["status"] for row in rows} == {
        0: "Completed", 1: "Completed", 2: "Canceled", 3: "Completed", 4: "Canceled", 5: "Canceled",
        6: "Canceled", 7: "Canceled", 8: "Canceled"}
    # The numbers compared, as the canceled trial's status says them.
    t4 = stopped[4]
    assert t4["policy"] == "bandit"
    assert t4["numbers"]["best"] == pytest.approx(0.729)
    assert t4["numbers"]["reference"] == pytest.approx(0.85)
    assert t4["numbers"]["threshold"] == pytest.approx(0.85 / 1.15)
    assert t4["numbers"]["reference_trial"] == f"{name}_0"
    assert "interval 5" in t4["reason"] and "0.729" in t4["reason"]
    t2 = stopped[2]
    assert (t2["numbers"]["best"], t2["numbers"]["reference"]) == (pytest.approx(0.42), pytest.approx(0.60))
    for index in (5, 6, 7, 8):
        assert stopped[index]["numbers"]["reference"] == pytest.approx(0.75)
        assert stopped[index]["numbers"]["reference_trial"] == f"{name}_3"
    assert shown["best_trial"]["name"] == f"{name}_0"
    assert shown["best_trial"]["metric"] == pytest.approx(0.90)
    assert shown["best_trial"]["params"] == {"shape": "steady", "scale": 1.0}
    # The trial's own record says it too, with the reason in its error.
    t4_record = trial_records(lab, shown)[4]
    assert t4_record["status"] == "Canceled"
    assert t4_record["stopped_by"]["interval"] == 5
    assert "bandit policy at interval 5" in t4_record["error"]["message"]


# -- sampling ----------------------------------------------------------------------------------

SAMPLED = """\
trial:
  command: echo ${{search_space.lr}} ${{search_space.units}} ${{search_space.act}}
sampling_algorithm: %s
search_space:
  lr: {type: loguniform, min_value: -7, max_value: -1}
  units: {type: randint, upper: 512}
  act: {type: choice, values: [relu, tanh, gelu]}
objective: {goal: maximize, primary_metric: score}
limits: {max_total_trials: 6, max_concurrent_trials: 3}
"""
GRID = """\
trial:
  command: echo ${{search_space.a}} ${{search_space.b}}
sampling_algorithm: grid
search_space:
  a: {type: choice, values: [1, 2]}
  b: {type: choice, values: [x, y, z]}
objective: {goal: maximize, primary_metric: score}
limits: {max_total_trials: 6, max_concurrent_trials: 3}
"""


@pytest.mark.parametrize("body", [SAMPLED % "{type: random, seed: 7}", SAMPLED % "{type: random, rule: sobol, seed: 7}",
                                  GRID], ids=["random", "sobol", "grid"])
def test_same_seed_same_trial_parameters(lab: Path, body: str) -> None:
    spec = write_sweep(lab / "seeded", "sweep", body)
    runs = []
    for _ in range(2):
        shown = finish(lab, submit(lab, spec))
        assert shown["status"] == "Completed", shown["error"]
        runs.append([row["params"] for row in shown["trials"]])
    assert runs[0] == runs[1]
    assert len(runs[0]) == 6 and len({json.dumps(p, sort_keys=True) for p in runs[0]}) == 6
    if "grid" in body:
        assert runs[0] == [{"a": a, "b": b} for a in (1, 2) for b in ("x", "y", "z")]
    else:
        for params in runs[0]:
            assert 0 <= params["units"] < 512 and params["act"] in ("relu", "tanh", "gelu")


def test_a_seedless_random_sweep_records_the_seed_it_drew(lab: Path) -> None:
    spec = write_sweep(lab / "seedless", "sweep", SAMPLED % "random")
    shown = finish(lab, submit(lab, spec))
    again = write_sweep(lab / "seedless", "again", SAMPLED % f"{{type: random, seed: {shown['sampling_algorithm']['seed']}}}")
    replay = finish(lab, submit(lab, again))
    assert shown["sampling_algorithm"]["seed_given"] is False
    assert [row["params"] for row in replay["trials"]] == [row["params"] for row in shown["trials"]]


def test_random_sampling_stops_when_the_search_space_is_exhausted(lab: Path) -> None:
    """3 x 4 choices are 12 configurations: the service never repeats one, so a sweep that
    allows 20 trials runs 12."""
    spec = write_sweep(lab / "exhausted", "sweep", """\
        trial:
          command: echo ${{search_space.lr}} ${{search_space.depth}}
        sampling_algorithm: random
        search_space:
          lr: {type: choice, values: [0.001, 0.01, 0.1]}
          depth: {type: choice, values: [4, 6, 8, 10]}
        objective: {goal: maximize, primary_metric: auc}
        limits: {max_total_trials: 20, max_concurrent_trials: 4}
        """)
    shown = finish(lab, submit(lab, spec))
    assert shown["status"] == "Completed"
    configurations = {(row["params"]["lr"], row["params"]["depth"]) for row in shown["trials"]}
    assert len(shown["trials"]) == 12 == len(configurations)
    assert shown["properties"]["space_size"] == 12
    log = Path(shown["system_log_path"]).read_text()
    assert "the search space is exhausted after 12 distinct configuration(s)" in log


# -- limits ------------------------------------------------------------------------------------

def _spans(records: list[dict]) -> list[tuple[float, float]]:
    from datetime import datetime

    def at(record: dict, state: str) -> float:
        return next(datetime.fromisoformat(e["time"]).timestamp() for e in record["history"] if e["status"] == state)

    return [(at(r, "Running"), at(r, "Finalizing")) for r in records]


def test_max_concurrent_trials_is_never_exceeded(lab: Path) -> None:
    spec = write_sweep(lab / "concurrency", "sweep", """\
        trial:
          command: sleep 0.6 && echo ${{search_space.i}}
        sampling_algorithm: grid
        search_space:
          i: {type: choice, values: [0, 1, 2, 3, 4, 5, 6, 7]}
        objective: {goal: maximize, primary_metric: score}
        limits: {max_total_trials: 8, max_concurrent_trials: 3}
        """)
    shown = finish(lab, submit(lab, spec))
    assert shown["status"] == "Completed"
    spans = _spans(trial_records(lab, shown))
    instants = sorted({t for span in spans for t in span})
    overlap = max(sum(1 for start, end in spans if start <= t < end) for t in instants)
    assert overlap == 3  # used, and never more


def test_trial_timeout_cancels_the_trial_and_the_sweep_goes_on(lab: Path) -> None:
    spec = write_sweep(lab / "trial-timeout", "sweep", """\
        trial:
          command: if [ ${{search_space.slow}} = yes ]; then sleep 60; fi
        sampling_algorithm: grid
        search_space:
          slow: {type: choice, values: ["yes", "no"]}
        objective: {goal: maximize, primary_metric: score}
        limits: {max_total_trials: 2, max_concurrent_trials: 2, trial_timeout: 2}
        """)
    result = aml_run("job", "create", "--file", str(spec), "-o", "json", cwd=lab, env={"AMLLAB_MIN_SWEEP_TIMEOUT": "1"})
    assert result.returncode == 0, result.stderr
    name = json.loads(result.stdout)["name"]
    shown = finish(lab, name)
    assert shown["status"] == "Completed"
    by_value = {row["params"]["slow"]: row for row in shown["trials"]}
    assert by_value["yes"]["status"] == "Canceled"
    assert by_value["yes"]["error"]["code"] == "TrialTimeout"
    assert by_value["no"]["status"] == "Completed"
    assert shown["limits"]["trial_timeout"] == 2


def test_the_sweep_timeout_cancels_it_and_its_running_trials(lab: Path) -> None:
    spec = write_sweep(lab / "timeout", "sweep", """\
        trial:
          command: sleep 60 # ${{search_space.i}}
        sampling_algorithm: grid
        search_space:
          i: {type: choice, values: [1, 2, 3]}
        objective: {goal: maximize, primary_metric: score}
        limits: {max_total_trials: 3, max_concurrent_trials: 2, timeout: 2}
        """)
    result = aml_run("job", "create", "--file", str(spec), "-o", "json", cwd=lab, env={"AMLLAB_MIN_SWEEP_TIMEOUT": "1"})
    name = json.loads(result.stdout)["name"]
    shown = finish(lab, name)
    assert shown["status"] == "Canceled"
    assert shown["error"]["code"] == "SweepTimeout"
    assert [row["status"] for row in shown["trials"]] == ["Canceled", "Canceled"]  # the third never started
    for record in trial_records(lab, shown):
        assert group_gone(record["pgid"])


def test_timeouts_below_a_minute_are_raised_as_the_sdk_does(lab: Path) -> None:
    spec = write_sweep(lab / "floor", "sweep", """\
        trial:
          command: echo ${{search_space.i}}
        sampling_algorithm: grid
        search_space:
          i: {type: choice, values: [1]}
        objective: {goal: maximize, primary_metric: score}
        limits: {max_total_trials: 1, timeout: 30, trial_timeout: 20}
        """)
    shown = finish(lab, submit(lab, spec))
    assert shown["limits"]["timeout"] == 60 and shown["limits"]["trial_timeout"] == 60
    assert "raised to the SDK's minimum: timeout 30 -> 60, trial_timeout 20 -> 60" in Path(
        shown["system_log_path"]).read_text()


def test_exclude_finished_jobs_is_honoured_where_its_lint_finding_is_suppressed(lab: Path) -> None:
    body = """\
        trial:
          command: echo ${{search_space.i}}
        sampling_algorithm: grid
        search_space:
          i: {type: choice, values: [1]}
        objective: {goal: maximize, primary_metric: score}
        limits: {max_total_trials: 1}
        early_termination:
          type: truncation_selection
          truncation_percentage: 20
          exclude_finished_jobs: true%s
        """
    refused = aml_run("job", "create", "--file", str(write_sweep(lab / "exclude", "refused", body % "")), cwd=lab)
    assert refused.returncode == 1 and "AML101" in refused.stderr and "ignore[AML101]" in refused.stderr
    spec = write_sweep(lab / "exclude", "sweep", body % "  # amllab: ignore[AML101]")
    shown = finish(lab, submit(lab, spec))
    assert shown["early_termination"]["exclude_finished_jobs"] is True
    assert "exclude_finished_jobs true" in Path(shown["system_log_path"]).read_text()


# -- what a trial sees, and where it is tracked -------------------------------------------------

def test_trials_see_their_values_in_the_command_and_the_environment_and_are_child_runs(lab: Path) -> None:
    (lab / "env" / "data").mkdir(parents=True)
    (lab / "env" / "data" / "rows.csv").write_text("a,b\n1,2\n")
    spec = write_sweep(lab / "env", "sweep", """\
        inputs:
          rows: {type: uri_file, path: ./data/rows.csv}
          note: hello
        outputs:
          model: {type: uri_folder}
        trial:
          code: ./src
          command: python main.py --lr ${{search_space.lr}} --rows ${{inputs.rows}} --note ${{inputs.note}} --out ${{outputs.model}}
        sampling_algorithm: grid
        search_space:
          lr: {type: choice, values: [0.1, 0.01]}
        objective: {goal: minimize, primary_metric: loss}
        limits: {max_total_trials: 2}
        """, """\
        import argparse, json, os, pathlib
        import mlflow
        parser = argparse.ArgumentParser()
        for flag in ("--lr", "--rows", "--note", "--out"):
            parser.add_argument(flag)
        args = parser.parse_args()
        seen = {k: v for k, v in os.environ.items() if k.startswith("AZUREML_SWEEP_")}
        pathlib.Path(args.out, "seen.json").write_text(json.dumps({"args": vars(args), "env": seen}))
        mlflow.log_metric("loss", float(args.lr) * 10)
        """)
    shown = finish(lab, submit(lab, spec))
    assert shown["status"] == "Completed", shown["error"]
    assert shown["best_trial"]["params"] == {"lr": 0.01}
    assert shown["best_trial"]["metric"] == pytest.approx(0.1)
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=shown["mlflow"]["tracking_uri"])
    parent = client.get_run(shown["mlflow"]["run_id"])
    assert parent.info.status == "FINISHED"
    assert parent.data.tags["best_child_run_id"] == shown["best_trial"]["name"]
    for row, record in zip(shown["trials"], trial_records(lab, shown)):
        seen = json.loads((Path(show(lab, row["name"])["outputs"]["model"]) / "seen.json").read_text())
        lr = str(row["params"]["lr"])
        assert seen["args"]["lr"] == lr and seen["args"]["note"] == "hello"
        assert Path(seen["args"]["rows"]).read_text() == "a,b\n1,2\n"
        assert seen["env"]["AZUREML_SWEEP_lr"] == lr
        assert seen["env"]["AZUREML_SWEEP_note"] == "hello"
        assert seen["env"]["AZUREML_SWEEP_rows"] == seen["args"]["rows"]
        assert seen["env"]["AZUREML_SWEEP_model"] == seen["args"]["out"]
        child = client.get_run(record["mlflow"]["run_id"])
        assert child.data.tags["mlflow.parentRunId"] == parent.info.run_id
        assert child.data.params == {"lr": lr}
        assert child.data.metrics == {"loss": pytest.approx(float(lr) * 10)}
        assert child.info.status == "FINISHED"


def test_job_show_lists_the_trials_and_the_best_one(lab: Path) -> None:
    spec = write_sweep(lab / "shape", "sweep", """\
        trial:
          code: ./src
          command: python main.py ${{search_space.x}}
        sampling_algorithm: grid
        search_space:
          x: {type: choice, values: [1, 3, 2]}
        objective: {goal: maximize, primary_metric: acc}
        limits: {max_total_trials: 3}
        """, """\
        import sys, mlflow
        for step in range(1, 4):
            mlflow.log_metric("acc", int(sys.argv[1]) * step / 10, step=step)
        mlflow.log_metric("loss", 1.0)
        """)
    name = submit(lab, spec)
    shown = finish(lab, name)
    assert shown["type"] == "sweep" and shown["status"] == "Completed"
    for row in shown["trials"]:
        assert {"name", "status", "params", "metrics", "intervals", "stopped_by"} <= set(row)
        assert row["intervals"] == 3 and row["stopped_by"] is None
        assert set(row["metrics"]) == {"acc", "loss"}
    assert shown["best_trial"] == {"name": f"{name}_1", "params": {"x": 3}, "metric": pytest.approx(0.9)}
    assert shown["properties"]["best_child_run_id"] == f"{name}_1"
    trial = show(lab, f"{name}_1")
    assert trial["parent_job_name"] == name and trial["params"] == {"x": 3}
    listed = aml_run("job", "list", "--parent-job-name", name, "-o", "json", cwd=lab)
    assert [row["name"] for row in json.loads(listed.stdout)] == [f"{name}_0", f"{name}_1", f"{name}_2"]
    top = json.loads(aml_run("job", "list", "-o", "json", cwd=lab).stdout)
    assert name in {row["name"] for row in top} and f"{name}_1" not in {row["name"] for row in top}
    downloaded = aml_run("job", "download", name, "--all", "--download-path", str(lab / "dl"), cwd=lab)
    assert downloaded.returncode == 0, downloaded.stderr
    assert (lab / "dl" / "artifacts" / "sweep_logs" / "amllab.log").is_file()
    assert "python main.py 3" in (lab / "dl" / "artifacts" / "system_logs" / "amllab.log").read_text()


def test_job_plot_draws_the_trials(lab: Path) -> None:
    spec = write_sweep(lab / "plot", "sweep", CURVES_TRIAL + textwrap.dedent("""\
        sampling_algorithm: grid
        search_space:
          shape: {type: choice, values: [steady, late]}
          scale: {type: choice, values: [1.0, 0.5]}
        objective: {goal: maximize, primary_metric: score}
        limits: {max_total_trials: 4, max_concurrent_trials: 1}
        early_termination: {type: bandit, slack_amount: 0.2, delay_evaluation: 2}
        """), CURVES, "curves.py")
    name = submit(lab, spec)
    shown = finish(lab, name)
    assert any(row["stopped_by"] for row in shown["trials"])
    result = aml_run("job", "plot", name, "--file", str(lab / "plot.png"), cwd=lab)
    assert result.returncode == 0, result.stderr
    picture = (lab / "plot.png").read_bytes()
    assert picture.startswith(b"\x89PNG\r\n\x1a\n") and len(picture) > 20_000
    refused = aml_run("job", "plot", f"{name}_0", cwd=lab)
    assert refused.returncode == 2 and "draws a sweep's trials" in refused.stderr


# -- failure and stopping ------------------------------------------------------------------------

def test_a_failing_trial_fails_alone_and_a_sweep_of_failures_fails(lab: Path) -> None:
    spec = write_sweep(lab / "failing", "sweep", """\
        trial:
          command: test ${{search_space.x}} != 2
        sampling_algorithm: grid
        search_space:
          x: {type: choice, values: [1, 2, 3]}
        objective: {goal: maximize, primary_metric: score}
        limits: {max_total_trials: 3}
        """)
    shown = finish(lab, submit(lab, spec))
    assert shown["status"] == "Completed"
    assert [row["status"] for row in shown["trials"]] == ["Completed", "Failed", "Completed"]
    assert shown["trials"][1]["error"]["code"] == "UserError"
    every = write_sweep(lab / "failing", "all", """\
        trial:
          command: exit ${{search_space.x}}
        sampling_algorithm: grid
        search_space:
          x: {type: choice, values: [3, 4]}
        objective: {goal: maximize, primary_metric: score}
        limits: {max_total_trials: 2}
        """)
    shown = finish(lab, submit(lab, every))
    assert shown["status"] == "Failed" and shown["error"]["code"] == "AllTrialsFailed"


SLEEPERS = """\
trial:
  command: (setsid sleep 300 &) ; sleep 300 # ${{search_space.i}}
sampling_algorithm: grid
search_space:
  i: {type: choice, values: [1, 2, 3, 4]}
objective: {goal: maximize, primary_metric: score}
limits: {max_total_trials: 4, max_concurrent_trials: 2}
"""


def _running_trials(folder: Path, name: str, count: int) -> list[dict]:
    workspace = Workspace(folder / ".amllab")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        records = [status.read(p) for p in sorted((workspace.run_dir(name) / "trials").glob("*"))
                   if (p / "status.json").is_file()]
        running = [r for r in records if r["status"] == "Running" and r.get("pgid")]
        if len(running) >= count:
            return running
        time.sleep(0.1)
    raise AssertionError("the trials never ran")


def _escapees(run_dir: Path) -> list[int]:
    from runner import process

    return process.processes_marked("AMLLAB_RUN_DIR", str(run_dir))


def test_cancel_ends_every_trial_and_every_process(lab: Path) -> None:
    spec = write_sweep(lab / "cancel", "sweep", SLEEPERS)
    name = submit(lab, spec)
    running = _running_trials(lab, name, 2)
    run_dir = Workspace(lab / ".amllab").run_dir(name)
    assert len(_escapees(run_dir)) >= 4  # two sleeps (and their setsid twins) per trial
    result = aml_run("job", "cancel", name, "-o", "json", cwd=lab)
    assert result.returncode == 0, result.stderr
    shown = show(lab, name)
    assert shown["status"] == "Canceled"
    assert [row["status"] for row in shown["trials"]] == ["Canceled", "Canceled"]
    for record in running:
        assert group_gone(record["pgid"])
    assert _escapees(run_dir) == []


def test_ctrl_c_while_streaming_a_sweep_cancels_it(lab: Path) -> None:
    spec = write_sweep(lab / "ctrlc", "sweep", SLEEPERS)
    env = dict(os.environ, AMLLAB_PLAIN_STREAM="1")
    streaming = subprocess.Popen([str(BIN / "aml-run"), "job", "create", "--file", str(spec), "--stream"], cwd=lab,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                 preexec_fn=default_signals)
    name = None
    deadline = time.monotonic() + 60
    assert streaming.stdout is not None
    while name is None and time.monotonic() < deadline:
        line = streaming.stdout.readline()
        if line.startswith("RunId: "):
            name = line.split(": ", 1)[1].strip()
    assert name
    running = _running_trials(lab, name, 2)
    streaming.send_signal(signal.SIGINT)
    out, err = streaming.communicate(timeout=90)
    assert streaming.returncode == 1, err
    assert "Status: Canceled" in out
    for record in running:
        assert group_gone(record["pgid"])
    assert _escapees(Workspace(lab / ".amllab").run_dir(name)) == []


def test_cancel_one_trial_and_the_sweep_goes_on(lab: Path) -> None:
    spec = write_sweep(lab / "one", "sweep", """\
        trial:
          command: if [ ${{search_space.i}} = 1 ]; then sleep 300; else sleep 1; fi
        sampling_algorithm: grid
        search_space:
          i: {type: choice, values: [1, 2, 3]}
        objective: {goal: maximize, primary_metric: score}
        limits: {max_total_trials: 3, max_concurrent_trials: 2}
        """)
    name = submit(lab, spec)
    _running_trials(lab, name, 1)
    result = aml_run("job", "cancel", f"{name}_0", "-o", "json", cwd=lab)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "Canceled"
    shown = finish(lab, name)
    assert shown["status"] == "Completed"
    assert [row["status"] for row in shown["trials"]] == ["Canceled", "Completed", "Completed"]


def test_a_killed_sweep_supervisor_takes_its_trials_down(lab: Path) -> None:
    spec = write_sweep(lab / "killed", "sweep", SLEEPERS)
    name = submit(lab, spec)
    running = _running_trials(lab, name, 2)
    workspace = Workspace(lab / ".amllab")
    supervisor = status.read(workspace.run_dir(name))["supervisor"]["pid"]
    os.kill(supervisor, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while not pid_gone(supervisor) and time.monotonic() < deadline:
        time.sleep(0.05)
    shown = show(lab, name)
    assert shown["status"] == "Failed" and shown["error"]["code"] == "RunnerDied"
    for record in running:
        assert group_gone(record["pgid"])
        assert status.read(workspace.run_dir(record["name"]))["status"] == "Failed"
    assert _escapees(workspace.run_dir(name)) == []


def test_after_its_supervisor_dies_a_sweeps_show_and_its_trial_list_agree(lab: Path) -> None:
    """`job show SWEEP` used to print the controller's last table (trials Running or Preparing
    for ever) while `job list -p SWEEP` read each trial and said Failed."""
    spec = write_sweep(lab / "agree", "sweep", SLEEPERS)
    name = submit(lab, spec)
    _running_trials(lab, name, 2)
    workspace = Workspace(lab / ".amllab")
    supervisor = status.read(workspace.run_dir(name))["supervisor"]["pid"]
    os.kill(supervisor, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while not pid_gone(supervisor) and time.monotonic() < deadline:
        time.sleep(0.05)
    shown = show(lab, name)  # looked at first: the sweep notices, and ends its trials
    listed = aml_run("job", "list", "-p", name, "-o", "json", cwd=lab)
    assert listed.returncode == 0, listed.stderr
    in_list = {row["name"]: row["status"] for row in json.loads(listed.stdout)}
    assert {row["name"]: row["status"] for row in shown["trials"]} == in_list
    # The trials were running: their runtime died with the supervisor, so they failed with it.
    assert set(in_list.values()) == {"Failed"}
    assert all(row["error"]["code"] == "RunnerDied" for row in shown["trials"])
