"""What the sweep controller adds: a sweep of N trials of a script that sleeps 1 s, K at a time,
against the ideal (N/K waves of 1 s) and against the same N commands run bare, K at a time, by
a plain process pool in the same run (so both see the same machine).

    python bench/sweep_overhead.py [--trials 20] [--concurrent 4] [--sleep 1.0] [--rounds 3]

Three numbers per round, as ratios:
  * sweep running span / ideal: from the sweep entering Running to its last trial's command
    ending (what the controller adds between trials: sampling, trial folders, MLflow child
    runs, polling); the target is <= 1.15;
  * the same span / bare pool: the same work without aml-run, measured here;
  * end to end / ideal: `aml-run job create --stream` from start to exit, which also pays one
    job's fixed cost (lint, supervisor, the sweep's own MLflow run; bench/run_overhead.py).
The trial script is `sleep`, so the numbers are the runner's, not Python's start-up.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

TARGET = 1.15
BIN = Path(sys.executable).parent

SWEEP = """\
$schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json
type: sweep
experiment_name: sweep-overhead
trial:
  command: sleep {sleep} # ${{{{search_space.x}}}}
  environment:
    image: python:3.11-slim
sampling_algorithm: grid
search_space:
  x:
    type: choice
    values: {values}
objective:
  goal: maximize
  primary_metric: never_logged
limits:
  max_total_trials: {trials}
  max_concurrent_trials: {concurrent}
"""


def stamp(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def entered(record: dict, state: str) -> float:
    """When the job of ``record`` (its status) entered ``state``."""
    return next(stamp(entry["time"]) for entry in record["history"] if entry["status"] == state)


def aml_run(lab: Path, env: dict[str, str], *args: str) -> str:
    """aml-run's output; a failure ends the bench with it."""
    result = subprocess.run([str(BIN / "aml-run"), *args], cwd=lab, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"aml-run {' '.join(args)} failed ({result.returncode}): "
                         f"{result.stderr[-2000:]}{result.stdout[-2000:]}")
    return result.stdout


def run_sweep(lab: Path, env: dict[str, str], spec: str = "sweep.yml") -> tuple[dict, list[dict], float]:
    """Run the sweep ``spec`` to its end: its `job show`, its trials' status records, and the
    seconds `job create --stream` took."""
    start = time.perf_counter()
    out = aml_run(lab, env, "job", "create", "--file", spec, "--stream")
    end_to_end = time.perf_counter() - start
    name = next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("RunId: "))
    shown = json.loads(aml_run(lab, env, "job", "show", name, "-o", "json"))
    trials = [json.loads((lab / ".amllab" / "runs" / name / "trials" / row["name"] / "status.json").read_text())
              for row in shown["trials"]]
    return shown, trials, end_to_end


def sweep_round(lab: Path, env: dict[str, str]) -> tuple[float, float]:
    """(running span, end to end) of one sweep, in seconds: the span from the sweep entering
    Running to its last trial's command ending (the trial entering Finalizing)."""
    shown, trials, end_to_end = run_sweep(lab, env)
    last_exit = max(entered(record, "Finalizing") for record in trials)
    return last_exit - entered(shown, "Running"), end_to_end


def bare_round(trials: int, concurrent: int, sleep: float) -> float:
    start = time.perf_counter()
    with ThreadPoolExecutor(concurrent) as pool:
        list(pool.map(lambda _: subprocess.run(["sleep", str(sleep)], check=True), range(trials)))
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--concurrent", type=int, default=4)
    parser.add_argument("--sleep", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    ideal = -(-args.trials // args.concurrent) * args.sleep
    spans, ends, bares = [], [], []
    with tempfile.TemporaryDirectory(prefix="amllab-bench-") as folder:
        lab = Path(folder)
        (lab / ".amllab").mkdir()
        (lab / "sweep.yml").write_text(SWEEP.format(sleep=args.sleep, trials=args.trials, concurrent=args.concurrent,
                                                     values=list(range(args.trials))))
        env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", AMLLAB_TRACKING_IDLE="30",
                   AMLLAB_PLAIN_STREAM="1")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        sweep_round(lab, env)  # warm-up: starts the workspace's tracking agent
        for _ in range(args.rounds):
            bares.append(bare_round(args.trials, args.concurrent, args.sleep))
            span, end = sweep_round(lab, env)
            spans.append(span)
            ends.append(end)
    span, end, bare = statistics.median(spans), statistics.median(ends), statistics.median(bares)
    print(f"{args.trials} trials of `sleep {args.sleep:g}`, {args.concurrent} at a time; ideal {ideal:.2f} s; "
          f"{args.rounds} rounds (medians)")
    print(f"bare process pool: {bare:.2f} s (ratio to ideal {bare / ideal:.3f})")
    print(f"sweep running span: {span:.2f} s; ratio to ideal {span / ideal:.3f}, to the bare pool {span / bare:.3f} "
          f"(rounds: {', '.join(f'{s / ideal:.3f}' for s in spans)})")
    print(f"end to end (aml-run job create --stream): {end:.2f} s; ratio to ideal {end / ideal:.3f}")
    print(f"target running span <= {TARGET} x ideal: {'met' if span / ideal <= TARGET else 'missed'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
