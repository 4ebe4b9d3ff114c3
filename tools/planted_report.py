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

from planted.base import VALID, load_planters, valid_fixtures  # noqa: E402
from test_planted import plant_and_lint  # noqa: E402
from validator.diagnostic import Severity  # noqa: E402
from validator.engine import lint_file  # noqa: E402

FAMILIES = {"AML0": "file", "AML1": "schema", "AML2": "expressions", "AML3": "sweep",
            "AML4": "compute", "AML5": "pipeline", "AML6": "schedule", "AML7": "training code",
            "AML8": "assets"}


def main() -> int:
    planted: dict[str, int] = defaultdict(int)
    caught: dict[str, int] = defaultdict(int)
    missed: list[str] = []
    fixtures = valid_fixtures()
    for planter in load_planters():
        for kind, path in fixtures:
            if kind not in planter.kinds:
                continue
            report = plant_and_lint(planter, path)
            if report is None:
                continue
            planted[planter.family] += 1
            if planter.code in {d.code for d in report.diagnostics}:
                caught[planter.family] += 1
            else:
                missed.append(f"{planter.code} {planter.description}: {path.relative_to(VALID)}")
    valid = sorted(VALID.rglob("*.yml"))
    clean = sum(1 for p in valid if not [d for d in lint_file(p).diagnostics if d.severity >= Severity.WARNING])
    print("| family | planted defects | caught | share |")
    print("|---|---|---|---|")
    for family in sorted(planted):
        share = caught[family] / planted[family]
        print(f"| {family}xx {FAMILIES.get(family, '')} | {planted[family]} | {caught[family]} | {share:.0%} |")
    print(f"\nvalid fixtures clean: {clean}/{len(valid)} ({clean / len(valid):.0%})")
    for line in missed:
        print("missed:", line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
