"""What early termination saves, and whether it still finds the best trial: the same 40-trial
sweep of a deterministic fake trainer (20 epochs of known learning curves), run by aml-run with
each policy and with none, in the same run.

    python bench/early_termination.py [--pace 0.15] [--concurrent 4]

The fake trainer's curve is quality * (1 - exp(-epoch / speed)) plus a small fixed wiggle, for
8 qualities (0.10 and 0.25 stall, like a learning rate far too high or too low; the rest learn
to 0.45..0.93) and 5 speeds (1 to 12 epochs): 40 configurations, drawn by random sampling with
a fixed seed, so every run sees the same trials in the same order. It sleeps `--pace` seconds
per epoch, so an epoch is the cost a policy saves.

Prints, per policy: epochs executed (primary-metric values logged, summed over the trials),
the saving against no policy, trials canceled, and the best trial found, with the verdict
against the target: each policy saves >= 30 % of the epochs and finds the same best trial as
no policy. Two more rows, for reference and outside the target, show the docs' conservative
settings (median stopping with delay 5, truncation of 25 %): with the runner's rules, in which a
stopped or young trial stays in the comparison with the values it has, they save less.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_SAVING = 0.30
BIN = Path(sys.executable).parent

TRAINER = """\
import argparse, math, time
import mlflow

parser = argparse.ArgumentParser()
parser.add_argument("--quality", type=float)
parser.add_argument("--speed", type=float)
parser.add_argument("--epochs", type=int, default=20)
parser.add_argument("--pace", type=float)
args = parser.parse_args()
for epoch in range(1, args.epochs + 1):
    time.sleep(args.pace)  # the training an epoch costs
    # A fixed wiggle, the same on every run, so the curves look like training and stay known.
    wiggle = 0.006 * math.sin(7.0 * epoch + 13.0 * args.quality + 3.0 * args.speed)
    mlflow.log_metric("accuracy", args.quality * (1 - math.exp(-epoch / args.speed)) + wiggle, step=epoch)
"""

SWEEP = """\
$schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json
type: sweep
experiment_name: early-termination-bench
trial:
  code: ./src
  command: >-
    python trainer.py --quality ${{{{search_space.quality}}}} --speed ${{{{search_space.speed}}}}
    --pace {pace}
  environment:
    image: python:3.11-slim
sampling_algorithm:
  type: random
  seed: 20261204
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
  max_total_trials: 40
  max_concurrent_trials: {concurrent}
{policy}"""

POLICIES = {
    "none": "",
    "bandit": "early_termination:\n  type: bandit\n  slack_factor: 0.1\n  evaluation_interval: 1\n"
              "  delay_evaluation: 5\n",
    "median_stopping": "early_termination:\n  type: median_stopping\n  evaluation_interval: 1\n"
                       "  delay_evaluation: 2\n",
    "truncation_selection": "early_termination:\n  type: truncation_selection\n  truncation_percentage: 50\n"
                            "  evaluation_interval: 1\n  delay_evaluation: 5\n",
    # For reference, outside the target: the docs' conservative settings.
    "median_stopping (delay 5)": "early_termination:\n  type: median_stopping\n  evaluation_interval: 1\n"
                                 "  delay_evaluation: 5\n",
    "truncation_selection (25 %)": "early_termination:\n  type: truncation_selection\n"
                                   "  truncation_percentage: 25\n  evaluation_interval: 1\n  delay_evaluation: 5\n",
}
REFERENCE_ONLY = ("median_stopping (delay 5)", "truncation_selection (25 %)")
SETTINGS = {"none": "", "bandit": "slack_factor 0.1, delay 5", "median_stopping": "delay 2",
            "truncation_selection": "50 %, delay 5", "median_stopping (delay 5)": "",
            "truncation_selection (25 %)": "delay 5"}


def run_sweep(lab: Path, policy: str, env: dict[str, str], pace: float, concurrent: int) -> dict:
    spec = lab / f"{policy.split()[0]}-{len(policy)}.yml"
    spec.write_text(SWEEP.format(pace=pace, concurrent=concurrent, policy=POLICIES[policy]))
    start = time.perf_counter()
    result = subprocess.run([str(BIN / "aml-run"), "job", "create", "--file", spec.name, "--stream"], cwd=lab,
                            env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    name = next((line.split(": ", 1)[1] for line in result.stdout.splitlines() if line.startswith("RunId: ")), None)
    if result.returncode != 0 or name is None:
        raise SystemExit(f"the {policy} sweep failed ({result.returncode}): {result.stderr[-2000:]}")
    shown = json.loads(subprocess.run([str(BIN / "aml-run"), "job", "show", name, "-o", "json"], cwd=lab, env=env,
                                      capture_output=True, text=True, check=True).stdout)
    shown["elapsed"] = elapsed
    return shown


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pace", type=float, default=0.15, help="seconds one epoch takes")
    parser.add_argument("--concurrent", type=int, default=4)
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="amllab-bench-") as folder:
        lab = Path(folder)
        (lab / ".amllab").mkdir()
        (lab / "src").mkdir()
        (lab / "src" / "trainer.py").write_text(TRAINER)
        env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", AMLLAB_TRACKING_IDLE="60",
                   AMLLAB_PLAIN_STREAM="1")
        for policy in POLICIES:
            results[policy] = run_sweep(lab, policy, env, args.pace, args.concurrent)
    baseline = results["none"]
    base_epochs = sum(row["intervals"] for row in baseline["trials"])
    base_best = baseline["best_trial"]
    print(f"40 trials x 20 epochs of a fake trainer ({args.pace:g} s per epoch), {args.concurrent} at a time; "
          "same seed, so the same trials in the same order")
    print(f"{'policy':29} {'settings':26} {'epochs':>6} {'saved':>6} {'canceled':>8} {'wall s':>6}  best trial")
    verdicts = []
    for policy, shown in results.items():
        epochs = sum(row["intervals"] for row in shown["trials"])
        canceled = sum(1 for row in shown["trials"] if row.get("stopped_by"))
        best = shown["best_trial"]
        saving = 1 - epochs / base_epochs
        same = best["params"] == base_best["params"]
        label = policy + (" *" if policy in REFERENCE_ONLY else "")
        print(f"{label:29} {SETTINGS[policy]:26} {epochs:6d} {saving:6.1%} {canceled:8d} {shown['elapsed']:6.1f}  "
              f"quality={best['params']['quality']}, speed={best['params']['speed']}, {best['metric']:.4f}"
              + ("" if policy == "none" else ("  (same as no policy)" if same else "  (DIFFERENT from no policy)")))
        if policy != "none" and policy not in REFERENCE_ONLY:
            verdicts.append(saving >= TARGET_SAVING and same)
    print("* for reference, outside the target: the docs' conservative settings")
    print(f"target: every policy saves >= {TARGET_SAVING:.0%} of the epochs and finds the same best trial: "
          f"{'met' if all(verdicts) else 'missed'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
