"""Print, per rule family, how many planted defects the tests plant and the share caught, and
the share of valid fixtures that stay clean (no error, no warning).

    python tools/planted_report.py
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from planted.base import VALID  # noqa: E402
from test_planted import plant_and_lint, planted_cases  # noqa: E402
from validator.diagnostic import Severity  # noqa: E402
from validator.engine import lint_file  # noqa: E402

FAMILIES = {"AML0": "file", "AML1": "schema", "AML2": "expressions, inputs, outputs", "AML3": "sweep",
            "AML4": "compute", "AML5": "pipeline", "AML6": "schedule", "AML7": "training code",
            "AML8": "assets"}


def main() -> int:
    planted: dict[str, int] = defaultdict(int)
    caught: dict[str, int] = defaultdict(int)
    missed: list[str] = []
    kinds: dict[str, set[str]] = defaultdict(set)
    for planter, path, text in planted_cases():
        report = plant_and_lint(planter, path, text)
        planted[planter.family] += 1
        kinds[planter.family].add(planter.description)
        if planter.code in {d.code for d in report.diagnostics}:
            caught[planter.family] += 1
        else:
            missed.append(f"{planter.code} {planter.description}: {path.relative_to(VALID)}")
    print("| family | kinds of defect | planted defects | caught | share |")
    print("|---|---|---|---|---|")
    for family in sorted(planted):
        share = caught[family] / planted[family]
        print(f"| {family}xx {FAMILIES.get(family, '')} | {len(kinds[family])} | {planted[family]} | "
              f"{caught[family]} | {share:.0%} |")
    for name, folder, floor in (("valid fixtures", VALID, Severity.WARNING),
                                ("service-accepted fixtures", VALID.parent / "accepted", Severity.ERROR)):
        files = sorted(folder.rglob("*.yml"))
        clean = sum(1 for p in files if not [d for d in lint_file(p).diagnostics if d.severity >= floor])
        what = "no error or warning" if floor is Severity.WARNING else "no error"
        print(f"{name} clean ({what}): {clean}/{len(files)} ({clean / len(files):.0%})")
    for line in missed:
        print("missed:", line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
