"""Generate docs/rules.md from the rule registry, so the docs and the rules cannot drift.

    python tools/build_docs.py          # rewrite docs/rules.md
    python tools/build_docs.py --check  # exit 1 when it is stale (tests/repo/test_docs.py runs this)
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from validator.rules import RULES  # noqa: E402
from generated import write_or_check  # noqa: E402

TARGET = ROOT / "docs" / "rules.md"

FAMILIES = {
    "AML0": "YAML and file level", "AML1": "Schema", "AML2": "Expressions, inputs, outputs",
    "AML3": "Sweep", "AML4": "Compute, resources, distribution", "AML5": "Pipelines and components",
    "AML6": "Schedules", "AML7": "Training code", "AML8": "Asset references",
}


def render() -> str:
    out = ["# aml-lint rules", "",
           "Generated from the rule registry by `tools/build_docs.py`; do not edit by hand.",
           "`aml-lint --explain CODE` prints the same text in a terminal.", "",
           "| code | name | severity | summary |", "|---|---|---|---|"]
    for code, rule in RULES.items():
        out.append(f"| [{code}](#{code.lower()}) | `{rule.name}` | {rule.severity} | {rule.summary} |")
    family = None
    for code, rule in RULES.items():
        if code[:4] != family:
            family = code[:4]
            out += ["", f"## {family}xx — {FAMILIES.get(family, '')}"]
        out += ["", f"### {code}", "", f"**{rule.name}** ({rule.severity}): {rule.summary}", "",
                rule.doc.strip()]
        if rule.service_text:
            out += ["", rule.service_text]
        if rule.fix_text:
            out += ["", rule.fix_text]
        if rule.sources:
            out += ["", "See:", "", *(f"- <{url}>" for url in rule.sources)]
        out += ["", "Bad:", "", "```yaml", rule.bad.rstrip("\n"), "```", "",
                "Good:", "", "```yaml", rule.good.rstrip("\n"), "```"]
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    return write_or_check(TARGET, render(), argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
