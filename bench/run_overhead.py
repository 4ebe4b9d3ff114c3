"""What `aml-run` adds to a job: N command jobs of a script that sleeps 1 s, each run through
`aml-run job create --stream` (lint, resolve, snapshot, supervisor, MLflow run, finalize) and
the same command run bare with bash, interleaved in the same run so both see the same machine.

    python bench/run_overhead.py [--jobs 20] [--sleep 1.0]

Prints the overhead per job (median and mean of aml-run minus bare, pairwise), the first job
apart (it starts the workspace's MLflow tracking agent), and the verdict against the target of
0.5 s per job. Wall-clock numbers on shared machines are noisy: read the median.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 0.5
BIN = Path(sys.executable).parent

JOB = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
code: src
command: python sleep.py ${{inputs.seconds}}
inputs:
  seconds: %s
environment:
  image: python:3.11-slim
experiment_name: overhead
"""
SCRIPT = "import sys, time\ntime.sleep(float(sys.argv[1]))\n"


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({result.returncode}): {result.stderr[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=20)
    parser.add_argument("--sleep", type=float, default=1.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="amllab-bench-") as folder:
        lab = Path(folder)
        (lab / "src").mkdir()
        (lab / "src" / "sleep.py").write_text(SCRIPT)
        (lab / "job.yml").write_text(JOB % args.sleep)
        (lab / ".amllab").mkdir()
        env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", AMLLAB_TRACKING_IDLE="20")
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as a user's shell would run it: bytecode cached
        through = [str(BIN / "aml-run"), "job", "create", "--file", "job.yml", "--stream"]
        bare = ["bash", "-c", f"cd src && python sleep.py {args.sleep}"]
        first = timed(through, lab, env) - timed(bare, lab, env)
        overheads, bare_times = [], []
        for _ in range(args.jobs):
            base = timed(bare, lab, env)
            overheads.append(timed(through, lab, env) - base)
            bare_times.append(base)
    median, mean = statistics.median(overheads), statistics.fmean(overheads)
    print(f"{args.jobs} jobs of a {args.sleep:g} s script; bare median {statistics.median(bare_times):.3f} s")
    print(f"first job (starts the tracking agent): +{first:.3f} s")
    print(f"overhead per job: median +{median:.3f} s, mean +{mean:.3f} s, "
          f"min +{min(overheads):.3f} s, max +{max(overheads):.3f} s")
    print(f"ratio aml-run/bare (median): {(statistics.median(bare_times) + median) / statistics.median(bare_times):.2f}")
    verdict = "met" if median <= TARGET else "missed"
    print(f"target <= {TARGET} s per job: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
