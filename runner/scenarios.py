"""Run a lab from ``scenarios/<name>/`` and check what it must produce.

``scenario.yml`` names the spec, the ``setup`` shell commands that register what the spec
references (run in the scenario's folder with ``AMLLAB_WORKSPACE`` set, exactly as a learner
would type them), the ``set`` overrides to submit it with (``job create --set``: a two-node
job made smaller for a laptop), ``preempt_after`` (``job create --preempt-after``: seconds,
one per preemption of a spot job), and ``expect``: the final ``status``, the ``metrics`` the script must log,
and the ``files`` each output must hold. A sweep's ``metrics`` and ``files`` are its best
trial's, and a sweep can also expect:

    preemptions: 2                  how many times a spot job lost its node (with preempt_after)
    trials: 12                      how many trials it ran
    canceled_by_policy: {min: 1}    how many the early-termination policy stopped (min, max)
    best_trial:
      metric: {min: 0.8}            bounds on the best trial's primary metric (min, max)
      params: {depth: 4}            hyperparameters the best trial must have

The test suite and ``make demo`` both go through :func:`run`; ``python -m runner.scenarios
FOLDER [--workspace DIR]`` does it by hand.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, TextIO

from validator.spec import load_asset

from . import jobs
from .errors import RunnerError
from .workspace import Workspace


def load(folder: Path) -> dict[str, Any]:
    return load_asset(folder / "scenario.yml")


def setup(folder: Path, workspace: Workspace, out: TextIO) -> None:
    meta = load(folder)
    env = dict(os.environ, AMLLAB_WORKSPACE=str(workspace.folder))
    # `python` and `aml-run` in the commands are this installation's.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", os.defpath)])
    for line in meta.get("setup") or []:
        out.write(f"$ {line}\n")
        out.flush()
        result = subprocess.run(["bash", "-c", line], cwd=folder, env=env, capture_output=True, text=True)
        out.write(result.stdout)
        if result.returncode != 0:
            raise RunnerError(f"{folder.name} setup step failed ({line!r}, exit {result.returncode}): "
                              f"{result.stderr.strip()}")


def run(folder: Path, workspace: Workspace, out: TextIO | None = None) -> dict[str, Any]:
    """Set up, submit and follow the scenario's job; returns ``job show``'s record."""
    out = out or open(os.devnull, "w")
    meta = load(folder)
    setup(folder, workspace, out)
    name = jobs.submit(folder / meta["spec"], workspace, overrides=meta.get("set") or (),
                       preempt_after=tuple(meta.get("preempt_after") or ()))
    jobs.stream(workspace, name, out)
    shown = jobs.show(workspace, name)
    if shown["type"] == "sweep":
        from .sweep.view import summary_table

        summary_table(shown, out)
    return shown


def check(folder: Path, shown: dict[str, Any]) -> list[str]:
    """What differs from the scenario's ``expect``; empty when it all holds."""
    expect = load(folder).get("expect") or {}
    problems = []
    if "status" in expect and shown["status"] != expect["status"]:
        problems.append(f"status is {shown['status']}, expected {expect['status']} ({shown.get('error')})")
    if "preemptions" in expect and shown.get("preemptions") != expect["preemptions"]:
        problems.append(f"the job was preempted {shown.get('preemptions')} time(s), expected {expect['preemptions']}")
    metrics = shown["metrics"]
    if shown["type"] == "sweep":
        problems += _check_sweep(expect, shown)
        best = shown.get("best_trial")
        metrics = next((row["metrics"] for row in shown["trials"] if best and row["name"] == best["name"]), {})
    for metric in expect.get("metrics") or []:
        if metric not in metrics:
            problems.append(f"metric {metric!r} was not logged (logged: {sorted(metrics)})")
    for output, names in (expect.get("files") or {}).items():
        folder_path = Path(shown["outputs"].get(output, ""))
        for name in names:
            if not (folder_path / name).is_file():
                problems.append(f"output {output} has no {name} (in {folder_path})")
    return problems


def _check_sweep(expect: dict[str, Any], shown: dict[str, Any]) -> list[str]:
    problems = []
    trials = shown["trials"]
    if "trials" in expect and len(trials) != expect["trials"]:
        problems.append(f"the sweep ran {len(trials)} trials, expected {expect['trials']}")
    stopped = sum(1 for row in trials if row.get("stopped_by"))
    problems += _bounds("trials canceled by the policy", stopped, expect.get("canceled_by_policy"))
    wanted = expect.get("best_trial") or {}
    best = shown.get("best_trial")
    if wanted and best is None:
        return problems + ["the sweep has no best trial (no trial logged its primary metric)"]
    if wanted:
        problems += _bounds("the best trial's metric", best["metric"], wanted.get("metric"))
        for key, value in (wanted.get("params") or {}).items():
            if best["params"].get(key) != value:
                problems.append(f"the best trial has {key}={best['params'].get(key)!r}, expected {value!r}")
    return problems


def _bounds(what: str, value: float, bounds: dict[str, float] | None) -> list[str]:
    bounds = bounds or {}
    if "min" in bounds and value < bounds["min"]:
        return [f"{what} is {value}, expected at least {bounds['min']}"]
    if "max" in bounds and value > bounds["max"]:
        return [f"{what} is {value}, expected at most {bounds['max']}"]
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.scenarios")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--workspace", type=Path, help="default: FOLDER/.amllab")
    args = parser.parse_args(argv)
    workspace = Workspace.locate(args.workspace or args.folder / ".amllab")
    try:
        shown = run(args.folder, workspace, sys.stdout)
    except RunnerError as error:
        sys.stderr.write(f"error: {error}\n")
        return 2
    problems = check(args.folder, shown)
    for problem in problems:
        sys.stderr.write(f"{args.folder.name}: {problem}\n")
    if shown["type"] == "sweep":
        best = shown.get("best_trial")
        print(f"{args.folder.name}: {shown['status']}, {len(shown['trials'])} trials, "
              + (f"best {best['name']} ({best['metric']:.4g}, {best['params']})" if best else "no best trial"))
    elif shown["type"] == "pipeline":
        steps = ", ".join(f"{step} {'reused' if node['reused'] else node['status']}" for step, node in shown["jobs"].items())
        print(f"{args.folder.name}: {shown['status']}, steps: {steps}")
    else:
        print(f"{args.folder.name}: {shown['status']}, metrics {shown['metrics']}, "
              f"outputs in {shown['outputs']['default']}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
