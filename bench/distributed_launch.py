"""What `aml-run` adds to launching a distributed job: a pytorch job of 2 nodes x 2 processes
run through `aml-run job create --file job.yml --stream` in a temporary workspace (submission,
lint, planning, supervisor, MLflow run, snapshot, one torch elastic agent per simulated node
with static rendezvous, Finalizing, to the end of the job), against the same script launched
with plain torchrun, interleaved in the same run so every side sees the same machine:

  * standalone: `python -m torch.distributed.run --standalone --nproc-per-node 4 train.py`
    (one agent, the cheapest way to start 4 ranks);
  * 2 agents: two static-rendezvous agents on loopback (`--nnodes 2 --node-rank k
    --master-addr 127.0.0.1 --master-port P --nproc-per-node 2`), the fair baseline, since it
    is what amllab starts.

    python bench/distributed_launch.py [--rounds 5]

The script imports torch, joins a gloo process group, does one all_reduce and leaves, so the
time measured is launch time. Prints each side's median (rounds interleaved, order rotated
each round), the ratios amllab / plain against the target of 1.3 (MET or MISSED), then where
amllab's time goes, mean and median over the rounds: the status.json history (NotStarted, Queued,
Preparing, Running, Finalizing, Completed), system_logs/amllab.log, the ranks' own stamps (the
script prints when it started, when the group was up and when it was done) and the ranks'
exit files. A warm-up job first starts the workspace's MLflow tracking agent (reported apart).
Wall-clock numbers on shared machines are noisy: read the medians and the ratios, never the
absolute seconds. Not part of `make test`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

TARGET = 1.3
BIN = Path(sys.executable).parent

JOB = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
code: src
command: python train.py
environment:
  image: python:3.11-slim
resources:
  instance_count: 2
distribution:
  type: pytorch
  process_count_per_instance: 2
experiment_name: distributed-launch
"""
# Stamps are wall-clock (time.time()), as status.json's are, so both can be compared.
SCRIPT = """\
import os, time
start = time.time()
import torch
import torch.distributed as dist
imported = time.time()
dist.init_process_group("gloo")
ready = time.time()
value = torch.ones(1)
dist.all_reduce(value)
assert value.item() == dist.get_world_size()
dist.destroy_process_group()
print(f"BENCH rank={os.environ['RANK']} start={start:.6f} imported={imported:.6f} ready={ready:.6f} "
      f"done={time.time():.6f}", flush=True)
"""
STAMP = re.compile(r"BENCH rank=(\d+) start=([\d.]+) imported=([\d.]+) ready=([\d.]+) done=([\d.]+)")
LOG_LINE = re.compile(r"^(\S+) (.*)$")


def _stamp(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def _ranks(text: str) -> dict[str, float]:
    """Earliest start, latest import done, latest group up, latest done over the 4 ranks."""
    found = [tuple(float(x) for x in m.groups()[1:]) for m in STAMP.finditer(text)]
    if len(found) != 4:
        raise SystemExit(f"expected 4 ranks' stamps, found {len(found)}:\n{text[-3000:]}")
    return {"first_start": min(f[0] for f in found), "last_start": max(f[0] for f in found),
            "imported": max(f[1] for f in found), "ready": max(f[2] for f in found),
            "done": max(f[3] for f in found)}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def plain_standalone(src: Path, env: dict[str, str]) -> tuple[float, dict[str, float]]:
    begin = time.time()
    result = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                             "--nproc-per-node", "4", "train.py"],
                            cwd=src, env=env, capture_output=True, text=True)
    end = time.time()
    if result.returncode != 0:
        raise SystemExit(f"plain torchrun --standalone failed ({result.returncode}): {result.stderr[-2000:]}")
    return end - begin, {"begin": begin, "end": end, **_ranks(result.stdout)}


def plain_two_agents(src: Path, env: dict[str, str]) -> tuple[float, dict[str, float]]:
    port = str(free_port())
    begin = time.time()
    agents = [subprocess.Popen([sys.executable, "-m", "torch.distributed.run", "--nnodes", "2",
                                "--node-rank", str(node), "--nproc-per-node", "2",
                                "--master-addr", "127.0.0.1", "--master-port", port, "train.py"],
                               cwd=src, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for node in range(2)]
    outputs = [agent.communicate() for agent in agents]
    end = time.time()
    for agent, (_, err) in zip(agents, outputs):
        if agent.returncode != 0:
            raise SystemExit(f"plain torchrun (2 agents) failed ({agent.returncode}): {err[-2000:]}")
    return end - begin, {"begin": begin, "end": end, **_ranks("".join(out for out, _ in outputs))}


def amllab(lab: Path, env: dict[str, str]) -> tuple[float, dict[str, float]]:
    begin = time.time()
    result = subprocess.run([str(BIN / "aml-run"), "job", "create", "--file", "job.yml", "--stream"],
                            cwd=lab, env=env, capture_output=True, text=True)
    end = time.time()
    if result.returncode != 0:
        raise SystemExit(f"aml-run failed ({result.returncode}): {result.stderr[-2000:]}{result.stdout[-2000:]}")
    name = next(line.split(": ", 1)[1] for line in result.stdout.splitlines() if line.startswith("RunId: "))
    run_dir = lab / ".amllab" / "runs" / name
    marks: dict[str, float] = {"begin": begin, "end": end}
    for entry in json.loads((run_dir / "status.json").read_text())["history"]:
        marks.setdefault(entry["status"], _stamp(entry["time"]))
    for line in (run_dir / "system_logs" / "amllab.log").read_text().splitlines():
        match = LOG_LINE.match(line)
        if not match:
            continue
        when, message = _stamp(match.group(1)), match.group(2)
        for prefix, key in (("snapshot of", "log_snapshot"), ("environment:", "log_environment"),
                            ("MLflow run", "log_mlflow"), ("command:", "log_command"),
                            ("distributed:", "log_distributed")):
            if message.startswith(prefix):
                marks.setdefault(key, when)
    logs = run_dir / "logs"
    marks.update(_ranks("".join((logs / f"rank_{k}.txt").read_text() for k in range(4))))
    marks["last_exit_file"] = max((logs / f"rank_{k}.exit").stat().st_mtime for k in range(4))
    return end - begin, marks


# (label, from, to) spans of amllab's run, in order; each is averaged over rounds.
AMLLAB_SPANS = [
    ("submit -> NotStarted (CLI start-up, lint, plan, run folder)", "begin", "NotStarted"),
    ("NotStarted -> Queued (supervisor start-up, tracking handle)", "NotStarted", "Queued"),
    ("Queued (compute slot)", "Queued", "Preparing"),
    ("  Preparing: snapshot", "Preparing", "log_snapshot"),
    ("  Preparing: env check, MLflow run", "log_snapshot", "log_mlflow"),
    ("  Preparing: render command", "log_mlflow", "log_command"),
    ("  Preparing: torch probe (python -c find_spec), launch plan", "log_command", "log_distributed"),
    ("  Preparing -> Running state", "log_distributed", "Running"),
    ("Preparing (total)", "Preparing", "Running"),
    ("  Running: agents start until the first rank starts", "Running", "first_start"),
    ("  Running: first rank starts -> last rank starts", "first_start", "last_start"),
    ("  Running: ranks import torch (to the last rank's)", "last_start", "imported"),
    ("  Running: init_process_group (to the last rank's)", "imported", "ready"),
    ("  Running: all_reduce + destroy (to the last rank's)", "ready", "done"),
    ("  Running: last rank done -> last rank's exit file", "done", "last_exit_file"),
    ("  Running: last exit file -> Finalizing (agents exit, supervisor sees it, stop_groups)",
     "last_exit_file", "Finalizing"),
    ("Running (total)", "Running", "Finalizing"),
    ("Finalizing (artifacts to MLflow, end run, metrics)", "Finalizing", "Completed"),
    ("Completed -> process exit (stream poll, summary, exit)", "Completed", "end"),
]
PLAIN_SPANS = [
    ("launch -> first rank starts", "begin", "first_start"),
    ("first rank starts -> last rank starts", "first_start", "last_start"),
    ("ranks import torch", "last_start", "imported"),
    ("init_process_group", "imported", "ready"),
    ("all_reduce + destroy", "ready", "done"),
    ("last rank done -> process exit", "done", "end"),
]


def _span(marks: list[dict[str, float]], start: str, stop: str) -> str:
    """Mean and median of one span over the rounds (the median resists a round another
    process on the machine slowed down)."""
    values = [m[stop] - m[start] for m in marks]
    return f"{statistics.fmean(values):6.3f} {statistics.median(values):6.3f}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"amllab": [], "standalone": [], "two_agents": []}
    marks: dict[str, list[dict[str, float]]] = {key: [] for key in times}
    with tempfile.TemporaryDirectory(prefix="amllab-bench-") as folder:
        lab = Path(folder)
        src = lab / "src"
        src.mkdir()
        (src / "train.py").write_text(SCRIPT)
        (lab / "job.yml").write_text(JOB)
        (lab / ".amllab").mkdir()
        env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", AMLLAB_TRACKING_IDLE="60",
                   AMLLAB_PLAIN_STREAM="1")
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as a user's shell would run it: bytecode cached
        # torchrun sets OMP_NUM_THREADS=1 for its workers and says so; amllab sets it to cores / ranks.
        plain_env = dict(env, OMP_NUM_THREADS=str(max(1, (os.cpu_count() or 1) // 4)))
        sides = {"amllab": lambda: amllab(lab, env), "standalone": lambda: plain_standalone(src, plain_env),
                 "two_agents": lambda: plain_two_agents(src, plain_env)}
        first, _ = amllab(lab, env)  # warm-up: starts the workspace's tracking agent, fills caches
        plain_two_agents(src, plain_env)
        order = list(sides)
        for round_ in range(args.rounds):
            for key in order[round_ % 3:] + order[:round_ % 3]:  # rotate who goes first
                elapsed, marked = sides[key]()
                times[key].append(elapsed)
                marks[key].append(marked)
    med = {key: statistics.median(values) for key, values in times.items()}
    print(f"pytorch job, 2 nodes x 2 processes (gloo init + one all_reduce); {args.rounds} rounds, "
          f"interleaved; medians; {os.cpu_count()} cores")
    print(f"first aml-run job (starts the MLflow tracking agent, warm-up, not counted): {first:.2f} s")
    labels = {"amllab": "amllab (aml-run job create --stream)", "standalone": "plain torchrun --standalone (1 agent)",
              "two_agents": "plain torchrun, 2 static agents"}
    for key, label in labels.items():
        rounds = ", ".join(f"{value:.2f}" for value in times[key])
        print(f"  {label:40s} median {med[key]:6.2f} s   (rounds: {rounds})")
    for key in ("two_agents", "standalone"):
        ratio = med["amllab"] / med[key]
        paired = statistics.median(a / b for a, b in zip(times["amllab"], times[key]))
        verdict = "MET" if ratio <= TARGET else "MISSED"
        print(f"ratio amllab / {labels[key]}: {ratio:.2f} (paired per-round median {paired:.2f}); "
              f"target <= {TARGET}: {verdict}")
    print(f"amllab extra over 2 static agents: {med['amllab'] - med['two_agents']:+.2f} s; "
          f"over standalone: {med['amllab'] - med['standalone']:+.2f} s")
    print()
    print(f"where amllab's time goes, over {args.rounds} rounds (from status.json, amllab.log, the ranks' stamps "
          f"and exit files):")
    print(f"  {'seconds:':88s} {'mean':>6s} {'median':>6s}")
    for label, start, stop in AMLLAB_SPANS:
        print(f"  {label:88s} {_span(marks['amllab'], start, stop)}")
    print(f"  {'total (submit -> process exit)':88s} {_span(marks['amllab'], 'begin', 'end')}")
    for key in ("two_agents", "standalone"):
        print(f"{labels[key]}, for comparison:")
        for label, start, stop in PLAIN_SPANS:
            print(f"  {label:88s} {_span(marks[key], start, stop)}")
        print(f"  {'total':88s} {_span(marks[key], 'begin', 'end')}")
    outside = statistics.median((m["Running"] - m["begin"]) + (m["end"] - m["Finalizing"]) for m in marks["amllab"])
    running = statistics.median(m["Finalizing"] - m["Running"] for m in marks["amllab"])
    print(f"amllab outside Running (median): {outside:.3f} s; amllab's Running (median) {running:.3f} s vs the "
          f"whole 2-agent launch {med['two_agents']:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
