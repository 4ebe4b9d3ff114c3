"""What does aml-lint cost on Python sources, against reading them as Python at all?

The floor is a bare interpreter that reads every `.py` file and notebook of a tree, takes a
notebook's code cells out of its JSON, and `ast.parse`s the code: what any linter of Python
source must do. aml-lint does that, follows the module, builds the spec of each job it submits
and runs every YAML rule on it (and reads the component files `load_component` names). Both are
timed in one run, as whole processes, in CPU seconds (bench/lint_floor.py's way):

  floor     python -c "read; json.loads a notebook; ast.parse"   (every .py and .ipynb)
  aml-lint  aml-lint FILE ...                                    (the same files)

    python bench/python_lint.py [TREE ...] [--rounds 5]
    python bench/python_lint.py /tmp/azureml-examples/sdk/python/jobs

Without arguments: the project's own Python cases (tests/golden/AML90*) and test notebooks.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lint_floor import LINT, ROOT, Timing, median, timed  # noqa: E402

FLOOR_CODE = """\
import ast, json, sys
with open(sys.argv[1]) as listing:
    for name in listing.read().splitlines():
        with open(name, "rb") as handle:
            text = handle.read().decode("utf-8", "replace")
        if name.endswith(".ipynb"):
            try:
                cells = json.loads(text).get("cells", [])
            except ValueError:
                continue
            text = "\\n".join("".join(c["source"]) if isinstance(c.get("source"), list) else c.get("source", "")
                              for c in cells if c.get("cell_type") == "code")
            text = "\\n".join("pass" if line.lstrip().startswith(("%", "!")) else line for line in text.splitlines())
        try:
            ast.parse(text, name)
        except (SyntaxError, ValueError):
            pass
"""


def sources(tree: Path) -> list[str]:
    return sorted(str(p) for p in tree.rglob("*") if p.suffix in (".py", ".ipynb") and p.is_file()
                  and not any(part.startswith(".") for part in p.relative_to(tree).parts))


def compare(files: list[str], rounds: int) -> tuple[Timing, Timing]:
    with tempfile.TemporaryDirectory(prefix="python-lint-") as folder:
        listing = Path(folder) / "files.txt"
        listing.write_text("\n".join(files))
        floor = [sys.executable, "-c", FLOOR_CODE, str(listing)]
        lint = LINT + ["--isolated", *files]
        timed(lint)  # warm-up: bytecode and page caches
        floors, lints = [], []
        for _ in range(rounds):
            floors += [timed(floor) for _ in range(3)]
            lints += [timed(lint) for _ in range(3)]
    return median(floors), median(lints)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trees", nargs="*", type=Path, metavar="TREE")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    trees = args.trees or [ROOT / "tests" / "golden" / code for code in ("AML901", "AML902", "AML903")]
    files = [name for tree in trees for name in sources(tree.resolve())]
    if not files:
        print("no .py or .ipynb files under", ", ".join(map(str, trees)))
        return 1
    floor, lint = compare(files, args.rounds)
    notebooks = sum(1 for f in files if f.endswith(".ipynb"))
    print(f"{', '.join(map(str, trees))}: {len(files) - notebooks} Python files, {notebooks} notebooks")
    print(f"  floor (read, cells, ast.parse)  CPU {1000 * floor.cpu:6.0f} ms   wall {1000 * floor.wall:6.0f} ms")
    print(f"  aml-lint                        CPU {1000 * lint.cpu:6.0f} ms   wall {1000 * lint.wall:6.0f} ms")
    print(f"  ratio (CPU): {lint.cpu / floor.cpu:.2f}x   (wall: {lint.wall / floor.wall:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
