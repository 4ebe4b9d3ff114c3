"""Files built to make a linter slow: does aml-lint stay fast on them?

Each case is generated in a temporary folder:

  L3   a command with 16,000 (and 30,000) references to an undeclared input (one finding each)
  L3d  the same with 16,000 different undeclared names (every finding searches anew)
  L4   an 800 KB file: one long anchored string and 9,990 aliases of it (refused as AML007)
  L10  a flat folder of 2,000 (and 1,000) component files with a name finding each, and a
       pipeline that uses one of them (AML549 looks for the pipelines beside each component)

For each it times, as whole processes and in the same run:

  baseline  python -c "yaml.load(every file, Loader=CSafeLoader)"   (SafeLoader without libyaml)
  aml-lint  aml-lint --isolated <case>

and prints one line per case: aml-lint's time, the ratio to the baseline, the findings, and
whether the target (at most 2 s) is met, then how the flat folder scales from 1,000 to 2,000
files. Each figure is the best of several runs, since the machine is shared.

    python bench/pathological.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
TARGET_SECONDS = 2.0

# As lint_bench.py: measure aml-lint as installed, with bytecode caches written and reused.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

JOB_HEAD = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
type: command
environment: azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest
compute: azureml:cpu-cluster
"""

COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
type: command
name: Comp_{index:04d}
version: 1
command: echo {index}
environment: azureml:sklearn-train:2
"""

PIPELINE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:cpu-cluster
jobs:
  first:
    type: command
    component: ./comp_0000.yml
"""

BASELINE = """\
import sys, yaml
loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
for name in open(sys.argv[1]).read().split("\\n"):
    with open(name, "rb") as handle:
        yaml.load(handle, Loader=loader)
"""


def undeclared_references(path: Path, count: int, distinct: bool = False) -> list[Path]:
    names = [f"x{i}" if distinct else "x" for i in range(count)]
    path.write_text(JOB_HEAD + "command: echo " + " ".join(f"${{{{inputs.{n}}}}}" for n in names) + "\n")
    return [path]


def aliased_string(path: Path, aliases: int = 9_990, size: int = 800_000) -> list[Path]:
    tags = "".join(f"  t{i}: *big\n" for i in range(aliases))
    head = JOB_HEAD + "command: echo hi\ndescription: &big "
    text = "a" * (size - len(head) - len(tags) - len("\ntags:\n"))
    path.write_text(f"{head}{text}\ntags:\n{tags}")
    return [path]


def flat_folder(folder: Path, count: int) -> list[Path]:
    folder.mkdir()
    files = []
    for index in range(count):
        files.append(folder / f"comp_{index:04d}.yml")
        files[-1].write_text(COMPONENT.format(index=index))
    files.append(folder / "pipeline.yml")
    files[-1].write_text(PIPELINE)
    return files


def best_of(repeat: int, command: list[str]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=ENV)
        times.append(time.perf_counter() - start)
    return min(times)


def findings(target: Path) -> str:
    """What aml-lint reports for ``target``: the count of each code."""
    done = subprocess.run([str(BIN / "aml-lint"), "--isolated", "--format", "json", str(target)], cwd=ROOT,
                          capture_output=True, text=True, check=False, env=ENV)
    try:
        codes = Counter(d["code"] for d in json.loads(done.stdout)["diagnostics"])
    except (ValueError, KeyError):
        return f"unreadable output (exit {done.returncode})"
    return ", ".join(f"{n:,} {code}" for code, n in sorted(codes.items())) or "clean"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import yaml

    loader_name = "CSafeLoader" if hasattr(yaml, "CSafeLoader") else "SafeLoader"
    best_of(1, [str(BIN / "aml-lint"), "--isolated", str(ROOT / "scenarios")])  # write bytecode caches
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        cases = [
            ("L3  16,000 refs to an undeclared input", folder / "l3_16k.yml",
             lambda p: undeclared_references(p, 16_000)),
            ("L3  30,000 refs to an undeclared input", folder / "l3_30k.yml",
             lambda p: undeclared_references(p, 30_000)),
            ("L3d 16,000 refs to distinct undeclared inputs", folder / "l3d_16k.yml",
             lambda p: undeclared_references(p, 16_000, distinct=True)),
            ("L4  800 KB string, 9,990 aliases", folder / "l4.yml", aliased_string),
            ("L10 flat folder, 1,000 components", folder / "flat_1000", lambda p: flat_folder(p, 1_000)),
            ("L10 flat folder, 2,000 components", folder / "flat_2000", lambda p: flat_folder(p, 2_000)),
        ]
        print(f"baseline: yaml.load with {loader_name}, whole process; best of {args.repeat}")
        for name, target, build in cases:
            files = build(target)
            size = sum(f.stat().st_size for f in files)
            listing = folder / f"{target.name}.txt"
            listing.write_text("\n".join(str(f) for f in files))
            baseline = best_of(args.repeat, [sys.executable, "-c", BASELINE, str(listing)])
            lint = best_of(args.repeat, [str(BIN / "aml-lint"), "--isolated", str(target)])
            results[name] = lint
            verdict = "met" if lint <= TARGET_SECONDS else "MISSED"
            print(f"{name:<47} {size / 1024:7,.0f} KB  aml-lint {lint:6.3f} s  yaml.load {baseline:6.3f} s  "
                  f"ratio {lint / baseline:5.1f}x  <= {TARGET_SECONDS:.0f} s: {verdict}  ({findings(target)})")
    small, large = results["L10 flat folder, 1,000 components"], results["L10 flat folder, 2,000 components"]
    print(f"flat folder: 2,000 components take {large / small:.2f}x the time of 1,000 "
          f"(linear: about 2; quadratic: about 4)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
