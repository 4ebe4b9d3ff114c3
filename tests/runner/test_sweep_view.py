"""What a learner watches: the live trials table on a real terminal (a pseudo-terminal here),
and the same table printed once for logs."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import select
import subprocess
import time
from pathlib import Path

from amlrun import aml_run, lab  # noqa: F401
from conftest import BIN
from runner.sweep import view

SWEEP = """\
$schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json
type: sweep
trial:
  command: sleep 1 && test ${{search_space.lr}} != 0.3
  environment:
    image: python:3.11-slim
sampling_algorithm: grid
search_space:
  lr: {type: choice, values: [0.1, 0.2, 0.3]}
objective: {goal: maximize, primary_metric: acc}
limits: {max_total_trials: 3, max_concurrent_trials: 2}
"""
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def test_stream_on_a_terminal_shows_the_live_trials_table(lab: Path) -> None:
    (lab / "live").mkdir()
    (lab / "live" / "sweep.yml").write_text(SWEEP)
    main, child = pty.openpty()
    env = dict(os.environ, COLUMNS="140", LINES="40", TERM="xterm-256color")
    env.pop("AMLLAB_PLAIN_STREAM", None)
    process = subprocess.Popen([str(BIN / "aml-run"), "job", "create", "--file", "live/sweep.yml", "--stream"],
                               cwd=lab, stdin=child, stdout=child, stderr=child, env=env, close_fds=True)
    os.close(child)
    chunks = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 0.5)
        if ready:
            try:
                data = os.read(main, 65536)
            except OSError:  # the other end closed: the command has exited
                break
            if not data:
                break
            chunks.append(data)
        elif process.poll() is not None:
            break
    process.wait(timeout=30)
    os.close(main)
    screen = ANSI.sub("", b"".join(chunks).decode("utf-8", "replace"))
    assert process.returncode == 0, screen[-3000:]
    assert "━" in screen  # the progress bar
    assert "3/3 trials ended" in screen, screen[-4000:]
    assert "running 2" in screen  # it was drawn while two trials ran
    assert "lr=0.3" in screen and "Failed" in screen
    assert "Execution Summary" in screen and "Status: Completed" in screen
    assert "[aml-run] state:" not in screen  # the table, not the log


def test_the_table_printed_once_names_every_trial_and_why_it_stopped() -> None:
    shown = {
        "name": "calm_moon_x1", "status": "Completed", "type": "sweep",
        "objective": {"goal": "maximize", "primary_metric": "auc"},
        "limits": {"max_total_trials": 20}, "properties": {"space_size": 12},
        "sampling_algorithm": {"algorithm": "random", "rule": "random"},
        "early_termination": {"type": "bandit"},
        "best_trial": {"name": "calm_moon_x1_0", "params": {"lr": 0.1, "depth": 4}, "metric": 0.8123},
        "trials": [
            {"name": "calm_moon_x1_0", "status": "Completed", "params": {"lr": 0.1, "depth": 4}, "intervals": 15,
             "metric": 0.8123, "stopped_by": None, "error": None},
            {"name": "calm_moon_x1_1", "status": "Canceled", "params": {"lr": 0.001, "depth": 10}, "intervals": 5,
             "metric": 0.51, "error": {"code": "Canceled", "message": "canceled by the bandit policy"},
             "stopped_by": {"policy": "bandit", "interval": 5, "reason": "...",
                            "numbers": {"best": 0.51, "threshold": 0.7384}}},
            {"name": "calm_moon_x1_2", "status": "Failed", "params": {"lr": 0.01, "depth": 6}, "intervals": 0,
             "metric": None, "stopped_by": None, "error": {"code": "UserError", "message": "exit code 1"}},
        ],
    }
    out = io.StringIO()
    view.summary_table(shown, out)
    text = out.getvalue()
    assert "3/12 trials ended (search space of 12)" in text
    assert "completed 1   canceled 1 (1 by the policy)   failed 1" in text
    assert "best trial: calm_moon_x1_0  auc 0.8123  lr=0.1, depth=4" in text
    assert "bandit at interval 5: 0.51 vs threshold 0.7384" in text
    assert "exit code 1" in text
    assert "\x1b[" not in text  # no colours in a log


def test_job_show_of_a_running_sweep_and_the_json_are_plain_data(lab: Path) -> None:
    (lab / "running").mkdir()
    (lab / "running" / "sweep.yml").write_text(SWEEP.replace("sleep 1", "sleep 2"))
    created = aml_run("job", "create", "--file", "running/sweep.yml", "-o", "json", cwd=lab)
    name = json.loads(created.stdout)["name"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        shown = json.loads(aml_run("job", "show", name, "-o", "json", cwd=lab).stdout)
        if any(row["status"] == "Running" for row in shown["trials"]):
            break
        time.sleep(0.2)
    assert shown["status"] == "Running"
    out = io.StringIO()
    view.summary_table(shown, out)
    assert "running " in out.getvalue()
    assert aml_run("job", "stream", name, cwd=lab).returncode == 0
