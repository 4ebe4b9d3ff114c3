"""How fast is aml-lint compared with just reading the same YAML?

Builds two corpora of at least 1,000 spec files from the valid fixtures: 'variants' (spec files
written beside the fixtures, sharing their code folders, as a repository of many jobs over one
codebase) and 'copies' (whole copies of the fixture tree, so every spec's training scripts are
new files too: the worst case for the training-code rules, which parse scripts). For each it
times, as whole processes and in the same run:

  baseline  python -c "yaml.safe_load every file"     (PyYAML's default loader, as the SDK uses)
  aml-lint  aml-lint --isolated <tree>                 (every check on)

and prints the ratio aml-lint / baseline, aml-lint's files per second, the start-up time of
`aml-lint --version` against a bare `python -c pass`, and how long a billion-laughs file takes
to be refused. Each figure is the best of several runs, since the machine is shared.

    python bench/lint_bench.py [--files 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "valid"
BIN = Path(sys.executable).parent

BILLION_LAUGHS = "\n".join(
    ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    + [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, 10)]
    + ["command: echo hi"]) + "\n"


# Measure aml-lint as installed for users: Python writes and reuses bytecode caches. (Some
# sandboxes set PYTHONDONTWRITEBYTECODE, which would make every run recompile amllab.)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def best_of(repeat: int, command: list[str], cwd: Path) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
                       env=ENV)
        times.append(time.perf_counter() - start)
    return min(times)


def build_variants(target: Path, wanted: int) -> list[Path]:
    """One copy of the fixture tree, and spec variants written beside each fixture until there
    are `wanted` spec files: many job files over a shared code folder, as a team repo has."""
    shutil.copytree(FIXTURES, target)
    originals = sorted(target.rglob("*.yml"))
    files = list(originals)
    round_ = 0
    while len(files) < wanted:
        round_ += 1
        for original in originals:
            variant = original.with_name(f"{original.stem}__v{round_:03d}.yml")
            variant.write_text(f"# variant {round_}\n" + original.read_text())
            files.append(variant)
            if len(files) >= wanted:
                break
    return files


def build_copies(target: Path, wanted: int) -> list[Path]:
    """Whole copies of the fixture tree, code included: every spec's scripts are new files."""
    copies = 0
    files: list[Path] = []
    while len(files) < wanted:
        destination = target / f"copy{copies:03d}"
        shutil.copytree(FIXTURES, destination)
        files.extend(sorted(destination.rglob("*.yml")))
        copies += 1
    return files


def measure(name: str, tree: Path, files: list[Path], folder: Path, repeat: int) -> tuple[float, float, int]:
    listing = folder / f"{name}.txt"
    listing.write_text("\n".join(str(p) for p in files))
    baseline_code = ("import sys, yaml\n"
                     "for name in open(sys.argv[1]).read().split('\\n'):\n"
                     "    with open(name, 'rb') as handle:\n"
                     "        yaml.safe_load(handle)\n")
    baseline = best_of(repeat, [sys.executable, "-c", baseline_code, str(listing)], ROOT)
    lint = best_of(repeat, [str(BIN / "aml-lint"), "--isolated", str(tree)], ROOT)
    return baseline, lint, len(files)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    # One warm-up run, so that bytecode caches exist before anything is timed.
    best_of(1, [str(BIN / "aml-lint"), "--isolated", str(ROOT / "scenarios")], ROOT)
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        corpora = {
            "variants": measure("variants", folder / "variants",
                                build_variants(folder / "variants", args.files), folder, args.repeat),
            "copies": measure("copies", folder / "copies",
                              build_copies(folder / "copies", args.files), folder, args.repeat),
        }
        single = best_of(args.repeat, [str(BIN / "aml-lint"), "--isolated", "-j", "1",
                                       str(folder / "variants")], ROOT)
        bare = best_of(10, [sys.executable, "-c", "pass"], ROOT)
        version = best_of(10, [str(BIN / "aml-lint"), "--version"], ROOT)
        bomb = folder / "bomb.yml"
        bomb.write_text(BILLION_LAUGHS)
        bomb_time = best_of(args.repeat, [str(BIN / "aml-lint"), "--isolated", str(bomb)], ROOT)

    for name, (baseline, lint, count) in corpora.items():
        what = ("spec variants over the fixtures' shared code" if name == "variants"
                else "whole copies of the fixture tree (scripts copied too)")
        print(f"corpus '{name}': {count} spec files, {what}")
        print(f"  baseline yaml.safe_load loop   {baseline:.3f} s")
        print(f"  aml-lint (all cores)           {lint:.3f} s   ratio {lint / baseline:.2f}x   "
              f"{count / lint:,.0f} files/s")
    variants_count = corpora["variants"][2]
    print(f"aml-lint -j 1 on 'variants'      {single:.3f} s   {variants_count / single:,.0f} files/s")
    print(f"aml-lint --version               {version * 1000:.0f} ms  (python -c pass: {bare * 1000:.0f} ms)")
    print(f"billion-laughs file refused in   {bomb_time * 1000:.0f} ms (whole process)")
    for name, (baseline, lint, count) in corpora.items():
        targets = [("ratio <= 3", lint / baseline <= 3), (">= 1000 files/s", count / lint >= 1000)]
        print(f"targets on '{name}': " + ", ".join(f"{t}: {'met' if ok else 'MISSED'}" for t, ok in targets))
    print(f"targets: --version <= 150 ms: {'met' if version <= 0.150 else 'MISSED'}, "
          f"billion laughs < 1 s: {'met' if bomb_time < 1.0 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
