"""How fast is aml-lint compared with just reading the same YAML?

Copies the valid fixture tree (specs, components, code) until it holds at least 1,000 spec
files, then times, as whole processes and in the same run:

  baseline  python -c "yaml.safe_load every file"     (PyYAML's default loader, as the SDK uses)
  aml-lint  aml-lint --isolated <tree>                 (every check on)

and prints the ratio aml-lint / baseline, aml-lint's files per second, the start-up time of
`aml-lint --version` against a bare `python -c pass`, and how long a billion-laughs file takes
to be refused. Each figure is the best of several runs, since the machine is shared.

    python bench/lint_bench.py [--files 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
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
    [f'l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    + [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, 10)]
    + ["command: echo hi"]) + "\n"


def best_of(repeat: int, command: list[str], cwd: Path) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return min(times)


def build_tree(target: Path, wanted: int) -> list[Path]:
    copies = 0
    files: list[Path] = []
    while len(files) < wanted:
        destination = target / f"copy{copies:03d}"
        shutil.copytree(FIXTURES, destination)
        files.extend(sorted(destination.rglob("*.yml")))
        copies += 1
    return files


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder) / "specs"
        files = build_tree(tree, args.files)
        listing = Path(folder) / "files.txt"
        listing.write_text("\n".join(str(p) for p in files))
        baseline_code = ("import sys, yaml\n"
                         "for name in open(sys.argv[1]).read().split('\\n'):\n"
                         "    with open(name, 'rb') as handle:\n"
                         "        yaml.safe_load(handle)\n")
        baseline = best_of(args.repeat, [sys.executable, "-c", baseline_code, str(listing)], ROOT)
        lint = best_of(args.repeat, [str(BIN / "aml-lint"), "--isolated", str(tree)], ROOT)
        single = best_of(args.repeat, [str(BIN / "aml-lint"), "--isolated", "-j", "1", str(tree)], ROOT)

        bare = best_of(10, [sys.executable, "-c", "pass"], ROOT)
        version = best_of(10, [str(BIN / "aml-lint"), "--version"], ROOT)

        bomb = Path(folder) / "bomb.yml"
        bomb.write_text(BILLION_LAUGHS)
        bomb_time = best_of(args.repeat, [str(BIN / "aml-lint"), "--isolated", str(bomb)], ROOT)

    count = len(files)
    print(f"spec files                       {count}")
    print(f"baseline yaml.safe_load loop     {baseline:.3f} s")
    print(f"aml-lint (all cores)             {lint:.3f} s   ratio {lint / baseline:.2f}x   "
          f"{count / lint:,.0f} files/s")
    print(f"aml-lint -j 1                    {single:.3f} s   ratio {single / baseline:.2f}x   "
          f"{count / single:,.0f} files/s")
    print(f"aml-lint --version               {version * 1000:.0f} ms  (python -c pass: {bare * 1000:.0f} ms)")
    print(f"billion-laughs file refused in   {bomb_time * 1000:.0f} ms (whole process)")
    targets = [("ratio <= 3", lint / baseline <= 3), (">= 1000 files/s", count / lint >= 1000),
               ("--version <= 150 ms", version <= 0.150), ("billion laughs < 1 s", bomb_time < 1.0)]
    print("targets: " + ", ".join(f"{name}: {'met' if ok else 'MISSED'}" for name, ok in targets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
