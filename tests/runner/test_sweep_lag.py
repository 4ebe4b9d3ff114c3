"""An early-termination decision takes effect within about one interval: a trial the policy
stops logs at most about one more value after the interval it was stopped at, and a trial whose
command ended before the cancel reached it is Completed, the decision kept as
``would_have_stopped``. Asserted on the logged intervals (MLflow's metric history), never on
times."""

from __future__ import annotations

import io
import json
import statistics
import textwrap
from pathlib import Path

from amlrun import aml_run, lab, submit  # noqa: F401
from runner import status
from runner.sweep import view
from runner.workspace import Workspace

HEADER = "$schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json\ntype: sweep\n"
# Logs ``accuracy`` at fixed ticks of --pace seconds from its start, so an interval is the pace
# however long a log call takes. --quit-after N: the N-th value is logged while the supervisor
# (the trial's parent, where the controller reads the store) is held stopped, and the command
# exits before a detached helper lets the supervisor go on; so the controller first reads that
# value when the command has already ended, whatever the timing of this machine.
TRAINER = """\
import argparse, math, os, signal, subprocess, sys, time
import mlflow

parser = argparse.ArgumentParser()
parser.add_argument("--quality", type=float)
parser.add_argument("--pace", type=float)
parser.add_argument("--epochs", type=int)
parser.add_argument("--quit-after", type=int, default=0)
args = parser.parse_args()
mlflow.log_metric("warm_up", 0.0)  # MLflow's store opened before the clock starts
start = time.monotonic()
for epoch in range(1, args.epochs + 1):
    time.sleep(max(0.0, start + epoch * args.pace - time.monotonic()))
    last = epoch == args.quit_after
    if last:
        supervisor = os.getppid()
        assert b"runner.supervisor" in open(f"/proc/{supervisor}/cmdline", "rb").read()
        os.kill(supervisor, signal.SIGSTOP)
        while open(f"/proc/{supervisor}/stat").read().rsplit(")", 1)[1].split()[0] != "T":
            time.sleep(0.001)
    mlflow.log_metric("accuracy", args.quality * (1 - math.exp(-epoch / 2)), step=epoch)
    if last:
        subprocess.Popen([sys.executable, "-c", "import os, signal, time; time.sleep(0.3); "
                          f"os.kill({supervisor}, signal.SIGCONT)"], start_new_session=True)
        os._exit(0)
"""


def write_sweep(folder: Path, command_tail: str, body: str) -> Path:
    (folder / "src").mkdir(parents=True, exist_ok=True)
    (folder / "src" / "trainer.py").write_text(TRAINER)
    spec = folder / "sweep.yml"
    spec.write_text(HEADER + textwrap.dedent("""\
        trial:
          code: ./src
          command: python trainer.py --quality ${{search_space.quality}} %s
          environment:
            image: python:3.11-slim
        """) % command_tail + textwrap.dedent(body))
    return spec


def finish(folder: Path, name: str) -> dict:
    result = aml_run("job", "stream", name, cwd=folder, timeout=300)
    assert "Traceback" not in result.stdout + result.stderr
    shown = aml_run("job", "show", name, "-o", "json", cwd=folder)
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def histories(folder: Path, shown: dict) -> dict[str, list[list[float]]]:
    """Each trial's accuracy history as MLflow holds it: [step, value, timestamp] per value."""
    workspace = Workspace(folder / ".amllab")
    tracking = workspace.tracking(shown["mlflow"]["tracking_uri"])
    found = {}
    for row in shown["trials"]:
        record = status.read(workspace.run_dir(row["name"]))
        found[row["name"]] = tracking.metric_history(record["mlflow"]["run_id"], "accuracy")
    return found


def test_a_canceled_trial_logs_at_most_about_one_interval_after_the_decision(lab: Path) -> None:
    """A value every 50 ms, bandit from interval 3: the weak trials are canceled, each having
    logged at most 2 values past the interval the policy stopped it at, and half of them at
    most 1 (with the metrics read every 0.2 s, they logged 3 to 7)."""
    spec = write_sweep(lab / "lag", "--pace 0.05 --epochs 24", """\
        sampling_algorithm: grid
        search_space:
          quality: {type: choice, values: [0.9, 0.2, 0.15, 0.1, 0.12, 0.05, 0.08]}
        objective: {goal: maximize, primary_metric: accuracy}
        limits: {max_total_trials: 7, max_concurrent_trials: 3}
        early_termination: {type: bandit, slack_factor: 0.1, evaluation_interval: 1, delay_evaluation: 3}
        """)
    name = submit(lab, spec)
    shown = finish(lab, name)
    assert shown["status"] == "Completed", shown.get("error")
    logged = histories(lab, shown)
    stopped = [row for row in shown["trials"] if row["stopped_by"]]
    assert len(stopped) >= 4, [(row["name"], row["status"]) for row in shown["trials"]]
    past = {row["name"]: len(logged[row["name"]]) - row["stopped_by"]["interval"] for row in stopped}
    assert max(past.values()) <= 2, past
    assert statistics.median(past.values()) <= 1, past
    for row in stopped:
        assert row["status"] == "Canceled", row
        assert row["logged_after_stop"] == past[row["name"]]
        assert row["intervals"] == len(logged[row["name"]])


def test_a_trial_whose_command_ended_before_the_cancel_is_completed_and_the_decision_kept(lab: Path) -> None:
    """The weak trial quits the instant it has logged interval 3, the interval bandit stops it
    at: nothing is left to cancel. It is Completed, not canceled by the policy, and
    the decision is kept as would_have_stopped (its record, its row, the table)."""
    spec = write_sweep(lab / "ended", "--pace 0.1 --epochs 3 --quit-after 3", """\
        sampling_algorithm: grid
        search_space:
          quality: {type: choice, values: [0.9, 0.1]}
        objective: {goal: maximize, primary_metric: accuracy}
        limits: {max_total_trials: 2, max_concurrent_trials: 1}
        early_termination: {type: bandit, slack_factor: 0.1, evaluation_interval: 1, delay_evaluation: 3}
        """)
    name = submit(lab, spec)
    shown = finish(lab, name)
    assert shown["status"] == "Completed", shown.get("error")
    first, weak = shown["trials"]
    assert first["status"] == "Completed" and first["stopped_by"] is None and first["would_have_stopped"] is None
    assert weak["status"] == "Completed", weak
    assert weak["stopped_by"] is None
    decided = weak["would_have_stopped"]
    assert decided["policy"] == "bandit" and decided["interval"] == 3, decided
    assert len(histories(lab, shown)[weak["name"]]) == 3
    record = status.read(Workspace(lab / ".amllab").run_dir(weak["name"]))
    assert record["status"] == "Completed" and record.get("error") is None
    assert record["would_have_stopped"]["interval"] == 3
    out = io.StringIO()
    view.summary_table(shown, out)
    line = next(line for line in out.getvalue().splitlines() if weak["name"] in line)
    assert "ended before the bandit policy's cancel" in line, line  # "(decided at interval 3)", wrapped
    log = (Workspace(lab / ".amllab").run_dir(name) / "system_logs" / "amllab.log").read_text()
    assert f"[CONTROLLER] canceling trial {weak['name']}:" not in log
    assert f"[CONTROLLER] not canceling trial {weak['name']}: its command had already ended" in log


def _table(rows: list[dict]) -> str:
    shown = {
        "name": "calm_moon_x1", "status": "Running", "type": "sweep",
        "objective": {"goal": "maximize", "primary_metric": "auc"},
        "limits": {"max_total_trials": 4}, "properties": {"space_size": None},
        "sampling_algorithm": {"algorithm": "random", "rule": "random"},
        "early_termination": {"type": "bandit"}, "best_trial": None, "trials": rows,
    }
    out = io.StringIO()
    view.summary_table(shown, out)
    return out.getvalue()


def test_the_table_ends_a_canceled_trials_intervals_where_the_policy_decided() -> None:
    canceled = {"name": "calm_moon_x1_1", "status": "Canceled", "params": {"lr": 0.001}, "intervals": 7,
                "metric": 0.51, "error": {"code": "Canceled", "message": "canceled by the bandit policy"},
                "stopped_by": {"policy": "bandit", "interval": 5, "reason": "...",
                               "numbers": {"best": 0.51, "threshold": 0.7384}},
                "logged_after_stop": 2}
    on_time = dict(canceled, name="calm_moon_x1_2", intervals=5, logged_after_stop=0)
    text = _table([canceled, on_time])
    line = next(line for line in text.splitlines() if "calm_moon_x1_1" in line)
    assert " 5 +2 " in line and " 7 " not in line, line
    assert "(2 more logged" in line  # "before the cancel landed", wrapped
    line = next(line for line in text.splitlines() if "calm_moon_x1_2" in line)
    assert " 5 " in line and "+" not in line and "more logged" not in line, line


def test_the_plot_draws_what_a_trial_logged_after_the_decision_apart() -> None:
    judged, after = view.curve_parts([0.1, 0.2, 0.3, 0.35, 0.4, 0.41, 0.42], {"interval": 5})
    assert judged == ([1, 2, 3, 4, 5], [0.1, 0.2, 0.3, 0.35, 0.4])
    # Dotted from the cross on, so the two parts join.
    assert after == ([5, 6, 7], [0.4, 0.41, 0.42])
    assert view.curve_parts([0.1, 0.2], {"interval": 5}) == (([1, 2], [0.1, 0.2]), ([], []))
    assert view.curve_parts([0.1, 0.2], None) == (([1, 2], [0.1, 0.2]), ([], []))


def test_the_controllers_own_read_of_the_store_is_mlflows(tmp_path: Path) -> None:
    """The controller reads its trials' metrics from the SQLite store with a query of its own:
    the same values in the same order as MLflow's get_metric_history (NaN, infinities, steps
    logged out of order, another metric, another run), and the watch sees each commit."""
    from mlflow import MlflowClient

    from runner.tracking import StoreWatch

    workspace = Workspace(tmp_path / ".amllab")
    workspace.folder.mkdir()
    uri = workspace.tracking_uri
    tracking = workspace.tracking(uri)
    runs = [tracking.start_run("watch", f"r{i}", {})["run_id"] for i in range(3)]
    watch = StoreWatch(uri)
    assert watch.watchable and not StoreWatch("http://127.0.0.1:5000").watchable
    watch.changed()
    client = MlflowClient(tracking_uri=uri)
    for step, value in [(1, 0.5), (3, float("nan")), (2, float("inf")), (4, -float("inf")), (5, 0.25)]:
        client.log_metric(runs[0], "acc", value, step=step)
        assert watch.changed()
        assert not watch.changed()
    client.log_metric(runs[1], "acc", 0.75, step=1)
    client.log_metric(runs[1], "loss", 9.0, step=1)
    mine = watch.metric_values(runs, "acc")
    theirs = {run: [m.value for m in client.get_metric_history(run, "acc")] for run in runs}
    assert {run: [repr(v) for v in values] for run, values in mine.items()} == \
        {run: [repr(v) for v in values] for run, values in theirs.items()}
    assert len(mine[runs[0]]) == 5 and mine[runs[2]] == []
    # The agent's bulk query too (compared as text: NaN is not equal to itself).
    assert repr(tracking.metric_values(runs, "acc")) == repr(theirs)
