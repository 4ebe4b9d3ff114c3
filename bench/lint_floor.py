"""How close is aml-lint to the physical floor of its own input?

The floor is what no linter of these files can avoid: a bare interpreter that composes every
YAML file aml-lint reads with PyYAML's C loader (`yaml.compose(..., Loader=yaml.CSafeLoader)`:
a node tree with marks, as aml-lint needs for positions) and parses with `ast` every training
script the specs run (the entry scripts of their commands, found as aml-lint finds them). Both
are timed in the same run, as whole processes (interpreter start and imports count), in CPU
seconds (user + system, the process and its workers: on a shared machine CPU time moves far less
than wall time) and in wall seconds:

  floor     python -c "compose every YAML file; ast.parse every script"
  aml-lint  aml-lint TREE          (every rule, default jobs: a worker per core on big trees)

and, with --one FILE, the pre-commit case: `aml-lint FILE` as a whole process, against a bare
`python -c pass`. aml-lint is the code of this checkout (PYTHONPATH), not what a venv installed.

    python bench/lint_floor.py [TREE ...] [--one FILE] [--rounds 7]
    python bench/lint_floor.py /tmp/azureml-examples/cli \\
        --one /tmp/azureml-examples/cli/jobs/single-step/scikit-learn/iris/job.yml

Without arguments: the project's fixtures (tests/fixtures) and scenarios, and
scenarios/command-job/job.yml as the one file.

Targets: aml-lint <= 3x the floor's CPU on each tree; `aml-lint FILE` <= 80 ms. bench/sdk_compare.py
prints the same floor ratio for its corpus.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
FLOOR_RATIO_TARGET = 3.0
ONE_FILE_TARGET = 0.080

# Measure as installed for users: Python writes and reuses bytecode caches. This checkout's
# code comes first on the path, so a worktree measures itself.
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "AMLLAB_SDK_COMPARE_REEXEC")}
ENV["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([ENV["PYTHONPATH"]] if ENV.get("PYTHONPATH") else []))

# What the `aml-lint` console script runs.
LINT = [sys.executable, "-c", "import sys; from validator.cli import run; sys.exit(run())"]

FLOOR_CODE = """\
import ast, sys, yaml
with open(sys.argv[1]) as listing:
    for name in listing.read().splitlines():
        with open(name, "rb") as handle:
            try:
                yaml.compose(handle.read(), Loader=yaml.CSafeLoader)
            except yaml.YAMLError:
                pass  # a broken file costs what reading it up to the error costs
with open(sys.argv[2]) as listing:
    for name in listing.read().splitlines():
        with open(name, "rb") as handle:
            try:
                ast.parse(handle.read(), name)
            except (SyntaxError, ValueError):
                pass
"""


@dataclass
class Timing:
    wall: float
    cpu: float  # user + system seconds of the process and every child it waited for


def timed(command: list[str], cwd: Path | None = None) -> Timing:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = _now()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV, check=False)
    wall = _now() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return Timing(wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))


def _now() -> float:
    import time

    return time.perf_counter()


def median(timings: list[Timing]) -> Timing:
    return Timing(statistics.median(t.wall for t in timings), statistics.median(t.cpu for t in timings))


@contextmanager
def _recording_scripts(found: set[str]) -> Iterator[None]:
    """Record the entry scripts aml-lint's rules find for the commands they read (not the local
    modules those import: the floor parses only what the specs run)."""
    from validator import pycode

    originals = (pycode.Snapshot.find, pycode.Snapshot.find_module, pycode.find_entry_script)

    def keep(result: Path | None) -> Path | None:
        if result is not None:
            found.add(str(result))
        return result

    pycode.Snapshot.find = lambda self, *a, **k: keep(originals[0](self, *a, **k))  # type: ignore[method-assign]
    pycode.Snapshot.find_module = lambda self, *a, **k: keep(originals[1](self, *a, **k))  # type: ignore[method-assign]
    pycode.find_entry_script = lambda *a, **k: keep(originals[2](*a, **k))  # type: ignore[assignment]
    try:
        yield
    finally:
        pycode.Snapshot.find, pycode.Snapshot.find_module, pycode.find_entry_script = originals  # type: ignore[method-assign]


def floor_inputs(tree: Path) -> tuple[list[str], list[str]]:
    """The YAML files aml-lint reads under ``tree`` (every one it walks: it must compose a file to
    tell whether it is a spec) and the training scripts the specs run. Untimed, in this process."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from validator.config import Config
    from validator.engine import iter_spec_files, lint_paths

    yaml_files = [os.path.abspath(p) for p, _ in iter_spec_files([tree])]
    scripts: set[str] = set()
    with _recording_scripts(scripts):
        lint_paths([tree], Config(), jobs=1)
    return yaml_files, sorted(scripts)


class Floor:
    """The floor's command for one tree, with its listings written to ``folder``."""

    def __init__(self, tree: Path, folder: Path, name: str = "floor"):
        self.yaml_files, self.scripts = floor_inputs(tree)
        yaml_list, script_list = folder / f"{name}-yaml.txt", folder / f"{name}-scripts.txt"
        yaml_list.write_text("\n".join(self.yaml_files))
        script_list.write_text("\n".join(self.scripts))
        self.command = [sys.executable, "-c", FLOOR_CODE, str(yaml_list), str(script_list)]


def compare(tree: Path, rounds: int, runs: int = 3) -> tuple[Floor, Timing, Timing]:
    """Medians of the floor and of `aml-lint TREE`, interleaved: each round runs each ``runs``
    times (one run is short enough for a burst of other work to move it)."""
    with tempfile.TemporaryDirectory(prefix="lint-floor-") as folder:
        floor = Floor(tree, Path(folder))
        timed(LINT + [str(tree)])  # warm-up: bytecode caches, the page cache
        floors: list[Timing] = []
        lints: list[Timing] = []
        for _ in range(rounds):
            floors += [timed(floor.command) for _ in range(runs)]
            lints += [timed(LINT + [str(tree)]) for _ in range(runs)]
    return floor, median(floors), median(lints)


def one_file(path: Path, rounds: int) -> tuple[Timing, Timing, float]:
    """`aml-lint FILE` and `python -c pass`, whole processes: medians, and aml-lint's best wall."""
    timed(LINT + [str(path)])
    bare, lint = [], []
    for _ in range(rounds):
        bare += [timed([sys.executable, "-c", "pass"]) for _ in range(3)]
        lint += [timed(LINT + [str(path)]) for _ in range(3)]
    return median(bare), median(lint), min(t.wall for t in lint)


def report_tree(tree: Path, floor: Floor, floor_time: Timing, lint_time: Timing) -> None:
    ratio = lint_time.cpu / floor_time.cpu
    print(f"{tree}: {len(floor.yaml_files)} YAML files, {len(floor.scripts)} training scripts")
    print(f"  floor (compose + ast.parse)  CPU {1000 * floor_time.cpu:6.0f} ms   wall {1000 * floor_time.wall:6.0f} ms")
    print(f"  aml-lint                     CPU {1000 * lint_time.cpu:6.0f} ms   wall {1000 * lint_time.wall:6.0f} ms")
    print(f"  floor ratio (CPU): {ratio:.2f}x   target <= {FLOOR_RATIO_TARGET:.0f}x: "
          f"{'met' if ratio <= FLOOR_RATIO_TARGET else 'MISSED'}   (wall: {lint_time.wall / floor_time.wall:.2f}x)")


def report_one(path: Path, bare: Timing, lint: Timing, best: float) -> None:
    print(f"aml-lint {path} (one file, whole process)")
    print(f"  python -c pass               CPU {1000 * bare.cpu:6.0f} ms   wall {1000 * bare.wall:6.0f} ms")
    print(f"  aml-lint FILE                CPU {1000 * lint.cpu:6.0f} ms   wall {1000 * lint.wall:6.0f} ms "
          f"(best {1000 * best:.0f} ms)")
    print(f"  target wall <= {1000 * ONE_FILE_TARGET:.0f} ms: {'met' if lint.wall <= ONE_FILE_TARGET else 'MISSED'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trees", nargs="*", type=Path, metavar="TREE")
    parser.add_argument("--one", type=Path, metavar="FILE", help="also time `aml-lint FILE` (the pre-commit case)")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    if not args.trees and not args.one:
        args.trees = [ROOT / "tests" / "fixtures", ROOT / "scenarios"]
        args.one = ROOT / "scenarios" / "command-job" / "job.yml"
    for tree in args.trees:
        floor, floor_time, lint_time = compare(tree.resolve(), args.rounds)
        report_tree(tree, floor, floor_time, lint_time)
    if args.one:
        report_one(args.one, *one_file(args.one.resolve(), args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
