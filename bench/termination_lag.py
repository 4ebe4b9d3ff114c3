"""How soon an early-termination decision takes effect: sweeps of a fake trainer that logs its
primary metric every 50 ms, run by aml-run with each policy, and for every trial the policy
canceled, the intervals it logged after the interval the policy decided at.

    python bench/termination_lag.py [--pace 0.05] [--trials 20] [--concurrent 4] [--rounds 1]

The trainer logs ``accuracy`` at fixed ticks of ``--pace`` seconds from its start (30 ticks),
along known curves (quality x speed, as bench/early_termination.py), so an interval is the
pace however long a log call takes. The policies' settings are bench/early_termination.py's.

Printed, per policy, over every canceled trial of every round: how many there were, the
intervals logged past the decision (median, maximum and the counts of 0, 1, 2, ... past), and
where the time went (milliseconds, median and maximum): from the decisive value being logged
(its MLflow timestamp) to the controller's decision (its log line), and from the decision to
the last value the trial logged. Trials the policy decided on that ended Completed before its
cancel reached them are counted apart. The target: median <= 1 and maximum <= 2 intervals past
the decision, for every policy.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.early_termination import POLICIES as EARLY_TERMINATION_POLICIES  # noqa: E402

TARGET_MEDIAN = 1
TARGET_MAX = 2
BIN = Path(sys.executable).parent

TRAINER = """\
import argparse, math, time
import mlflow

parser = argparse.ArgumentParser()
parser.add_argument("--quality", type=float)
parser.add_argument("--speed", type=float)
parser.add_argument("--epochs", type=int, default=30)
parser.add_argument("--pace", type=float)
args = parser.parse_args()
mlflow.log_metric("warm_up", 0.0)  # MLflow's store opened before the clock starts
start = time.monotonic()
for epoch in range(1, args.epochs + 1):
    # Fixed ticks from the start: an interval is the pace, however long logging takes.
    time.sleep(max(0.0, start + epoch * args.pace - time.monotonic()))
    wiggle = 0.006 * math.sin(7.0 * epoch + 13.0 * args.quality + 3.0 * args.speed)
    mlflow.log_metric("accuracy", args.quality * (1 - math.exp(-epoch / args.speed)) + wiggle, step=epoch)
"""

SWEEP = """\
$schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json
type: sweep
experiment_name: termination-lag-bench
trial:
  code: ./src
  command: >-
    python trainer.py --quality ${{{{search_space.quality}}}} --speed ${{{{search_space.speed}}}}
    --pace {pace}
  environment:
    image: python:3.11-slim
sampling_algorithm:
  type: random
  seed: {seed}
search_space:
  quality:
    type: choice
    values: [0.10, 0.25, 0.45, 0.62, 0.74, 0.83, 0.89, 0.93]
  speed:
    type: choice
    values: [1, 2, 4, 8, 12]
objective:
  goal: maximize
  primary_metric: accuracy
limits:
  max_total_trials: {trials}
  max_concurrent_trials: {concurrent}
{policy}"""

# The policies as bench/early_termination.py sets them, so the two benches measure the same ones.
POLICIES = {name: EARLY_TERMINATION_POLICIES[name] for name in ("bandit", "median_stopping", "truncation_selection")}


def _stamp(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def _decisions(sweep_dir: Path) -> dict[str, float]:
    """When the controller decided to cancel each trial: its log line's stamp."""
    found = {}
    for line in (sweep_dir / "system_logs" / "amllab.log").read_text().splitlines():
        stamp, _, message = line.partition(" ")
        if message.startswith("[CONTROLLER] canceling trial "):
            found[message.split()[3].rstrip(":")] = _stamp(stamp)
    return found


def run_sweep(lab: Path, policy: str, env: dict[str, str], args: argparse.Namespace, seed: int) -> list[dict]:
    """One sweep; a row per trial the policy decided on."""
    from runner.workspace import Workspace

    spec = lab / f"{policy}-{seed}.yml"
    spec.write_text(SWEEP.format(pace=args.pace, trials=args.trials, concurrent=args.concurrent, seed=seed,
                                 policy=POLICIES[policy]))
    result = subprocess.run([str(BIN / "aml-run"), "job", "create", "--file", spec.name, "--stream"], cwd=lab,
                            env=env, capture_output=True, text=True)
    name = next((line.split(": ", 1)[1] for line in result.stdout.splitlines() if line.startswith("RunId: ")), None)
    if result.returncode != 0 or name is None:
        raise SystemExit(f"the {policy} sweep failed ({result.returncode}): {result.stderr[-2000:]}")
    shown = json.loads(subprocess.run([str(BIN / "aml-run"), "job", "show", name, "-o", "json"], cwd=lab, env=env,
                                      capture_output=True, text=True, check=True).stdout)
    workspace = Workspace(lab / ".amllab")
    tracking = workspace.tracking(shown["mlflow"]["tracking_uri"])
    sweep_dir = workspace.run_dir(name)
    decided = _decisions(sweep_dir)
    rows = []
    for trial in shown["trials"]:
        if trial.get("would_have_stopped"):
            # Decided on after its command had ended on its own: Completed, nothing canceled.
            rows.append({"trial": trial["name"], "status": trial["status"]})
            continue
        if trial["name"] not in decided:
            continue
        record = json.loads((sweep_dir / "trials" / trial["name"] / "status.json").read_text())
        history = tracking.metric_history(record["mlflow"]["run_id"], "accuracy")  # [step, value, ms]
        stopped = trial.get("stopped_by")
        row = {"trial": trial["name"], "status": trial["status"], "logged": len(history),
               "decided_at": decided[trial["name"]]}
        if stopped:
            interval = stopped["interval"]
            row["interval"] = interval
            row["past"] = len(history) - interval
            row["to_decision"] = decided[trial["name"]] - history[interval - 1][2] / 1000
            row["to_last"] = history[-1][2] / 1000 - decided[trial["name"]]
        rows.append(row)
    return rows


def _ms(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{statistics.median(values) * 1000:6.0f} / {max(values) * 1000:6.0f}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pace", type=float, default=0.05, help="seconds between two logged values")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--concurrent", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=1, help="sweeps per policy, each with its own seed")
    args = parser.parse_args()
    results: dict[str, list[dict]] = {policy: [] for policy in POLICIES}
    with tempfile.TemporaryDirectory(prefix="amllab-bench-") as folder:
        lab = Path(folder)
        (lab / ".amllab").mkdir()
        (lab / "src").mkdir()
        (lab / "src" / "trainer.py").write_text(TRAINER)
        env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", AMLLAB_TRACKING_IDLE="60",
                   AMLLAB_PLAIN_STREAM="1")
        for round_ in range(args.rounds):
            for policy in POLICIES:
                results[policy] += run_sweep(lab, policy, env, args, seed=20261204 + round_)
    print(f"{args.rounds} sweep(s) per policy of {args.trials} trials, {args.concurrent} at a time; a value logged "
          f"every {args.pace * 1000:g} ms, 30 per trial")
    print(f"{'policy':21} {'canceled':>8} {'past: median':>12} {'max':>4}  {'past -> trials':24} "
          f"{'ms logged->decision':>19} {'ms decision->last':>17}  {'ended first':>11}")
    verdicts = []
    for policy, rows in results.items():
        canceled = [row for row in rows if "past" in row]
        late = [row for row in rows if "past" not in row]
        past = [row["past"] for row in canceled]
        counts = Counter(past)
        spread = ", ".join(f"{k}:{counts[k]}" for k in sorted(counts)) or "-"
        median = statistics.median(past) if past else 0
        print(f"{policy:21} {len(canceled):8d} {median:12g} {max(past, default=0):4d}  {spread:24} "
              f"{_ms([row['to_decision'] for row in canceled]):>19} {_ms([row['to_last'] for row in canceled]):>17}  "
              f"{len(late):11d}")
        verdicts.append(bool(past) and median <= TARGET_MEDIAN and max(past) <= TARGET_MAX)
    print("past: intervals a canceled trial logged after the interval the policy decided at; ms: median / max; "
          "ended first: decided on, but Completed before the cancel reached it")
    print(f"target: median <= {TARGET_MEDIAN} and max <= {TARGET_MAX} intervals past the decision, every policy: "
          f"{'met' if all(verdicts) else 'missed'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
