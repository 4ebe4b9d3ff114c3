"""A sweep on a Ray cluster compute against the same sweep on a local compute, in one run.

    python bench/cluster_sweep.py [--trials 8] [--concurrent 2] [--seconds 2] [--rounds 2]

A two-node Ray cluster is started on this machine's loopback (runner.cluster.LoopbackCluster:
`ray start --head`, then `ray start --address`). The same sweep (bench/sweep_overhead.py's:
``--trials`` trials whose command is `sleep --seconds`, ``--concurrent`` at a time) runs on a
local compute of ``--concurrent`` instances and on the cluster compute, alternately,
``--rounds`` times each.

Printed, as medians over the rounds:
  * each compute's running span: from the sweep entering Running to its last trial's command
    ending, and the ratio cluster / local (the target is <= 1.25);
  * the per-trial placement overhead: how much longer a trial takes on the cluster from entering
    Preparing to entering Running (choosing a node, sending the files, the node's environment),
    Running (its command started under a guard on the node, watched from here, its outputs and
    logs brought back) and Finalizing.
The first sweep on each compute is a warm-up (the workspace's tracking agent, the cluster's
MLflow server, the nodes' environment build): it is not counted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runner.cluster import LoopbackCluster  # noqa: E402
from sweep_overhead import BIN, SWEEP, aml_run, entered, run_sweep, stamp  # noqa: E402  (the same sweep, with a compute)

TARGET = 1.25


def sweep_round(lab: Path, env: dict[str, str], compute: str
                ) -> tuple[float, list[float], list[float], list[float]]:
    """(running span, and each trial's seconds from Preparing to Running, from Running to
    Finalizing and from Finalizing to its end) of one sweep on ``compute``."""
    shown, trials, _ = run_sweep(lab, env, f"{compute}.yml")
    if shown["status"] != "Completed":
        raise SystemExit(f"the sweep on {compute} ended {shown['status']}: {shown.get('error')}")
    span = max(entered(record, "Finalizing") for record in trials) - entered(shown, "Running")
    preparing = [entered(record, "Running") - entered(record, "Preparing") for record in trials]
    running = [entered(record, "Finalizing") - entered(record, "Running") for record in trials]
    finalizing = [stamp(record["end_time"]) - entered(record, "Finalizing") for record in trials]
    return span, preparing, running, finalizing


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--concurrent", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    results: dict[str, dict[str, list[float]]] = {
        compute: {"span": [], "preparing": [], "running": [], "finalizing": []} for compute in ("local", "cluster")}
    with tempfile.TemporaryDirectory(prefix="amllab-bench-") as folder, LoopbackCluster(nodes=2, cpus=2) as cluster:
        lab = Path(folder)
        (lab / ".amllab").mkdir()
        env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", AMLLAB_TRACKING_IDLE="60",
                   AMLLAB_PLAIN_STREAM="1")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        aml_run(lab, env, "compute", "create", "--name", "local", "--max-instances", str(args.concurrent))
        aml_run(lab, env, "compute", "create", "--name", "cluster", "--type", "ray", "--address", cluster.address,
                 "--max-instances", str(args.concurrent))
        for compute in results:
            (lab / f"{compute}.yml").write_text(SWEEP.format(sleep=args.seconds, trials=args.trials,
                                                             concurrent=args.concurrent, values=list(range(args.trials)))
                                                + f"compute: azureml:{compute}\n")
            sweep_round(lab, env, compute)  # warm-up
        for _ in range(args.rounds):
            for compute, kept in results.items():
                span, *phases = sweep_round(lab, env, compute)
                kept["span"].append(span)
                for phase, seconds in zip(("preparing", "running", "finalizing"), phases):
                    kept[phase].extend(seconds)
    local, remote = (statistics.median(results[compute]["span"]) for compute in ("local", "cluster"))
    ratio = remote / local
    ideal = -(-args.trials // args.concurrent) * args.seconds
    print(f"{args.trials} trials of `sleep {args.seconds:g}`, {args.concurrent} at a time "
          f"(ideal {ideal:.1f} s); two Ray nodes on loopback; {args.rounds} rounds each (medians)")
    print(f"local compute:   running span {local:.2f} s")
    print(f"cluster compute: running span {remote:.2f} s")
    print(f"ratio cluster / local: {ratio:.3f} (rounds: "
          f"{', '.join(f'{there / here:.3f}' for there, here in zip(results['cluster']['span'], results['local']['span']))}); "
          f"target <= {TARGET}: {'met' if ratio <= TARGET else 'missed'}")
    print("per trial, cluster vs local (median; the slowest, a sweep's first trials, which start the node's "
          "agent, in brackets):")
    for phase, what in (("preparing", "Preparing to Running (placing, sending the files, the node's environment)"),
                        ("running", "Running to Finalizing (the command, started and watched on its node)"),
                        ("finalizing", "Finalizing to the end")):
        there, here = results["cluster"][phase], results["local"][phase]
        print(f"  {what}: {statistics.median(there):.2f} s [{max(there):.2f}] vs {statistics.median(here):.2f} s "
              f"[{max(here):.2f}]: +{statistics.median(there) - statistics.median(here):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
