"""Which lint errors the Azure ML client itself refuses: run azure-ai-ml (``load_job`` /
``load_component`` / ``load_schedule`` and ``_validate()``) over every rule's golden bad case
(tests/golden/<CODE>/fail_*.yml) and write the verdict per rule to
validator/rules/_service.py, the table the rule registry carries (``Rule.service``).

    python tools/sdk_verdicts.py --sdk-python /path/to/venv-with-azure-ai-ml/bin/python
    python tools/sdk_verdicts.py --sdk-python ... --check    # exit 1 when the table is stale

Not run by the suite (it needs azure-ai-ml, which amllab does not depend on);
tests/validator/test_service_verdicts.py compares the table with the SDK where one is given
(``AMLLAB_SDK_PYTHON``). Verdicts per rule: ``rejects`` (the client refuses every bad case),
``accepts`` (it loads and validates every one: the service receives the spec),
``depends`` (some of each). A bad case the client refuses while it also refuses the rule's good
case tells nothing about the rule and is left out (see ``rule_verdict``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
TABLE = ROOT / "validator" / "rules" / "_service.py"

# Runs inside the SDK's interpreter: one JSON line per case, {"case", "accepted", "reason"}.
WORKER = r'''
import json, logging, os, sys, warnings
warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)
import yaml
from azure.ai.ml import load_component, load_job
from azure.ai.ml.entities._load_functions import load_schedule

def loader_for(path):
    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except Exception:
        return load_job
    schema = str((data or {}).get("$schema", "")) if isinstance(data, dict) else ""
    if "Component" in schema:
        return load_component
    if "schedule" in schema.lower() or (isinstance(data, dict) and "trigger" in data and "create_job" in data):
        return load_schedule
    if isinstance(data, dict) and "$schema" not in data and "type" not in data and "command" not in data \
            and "jobs" not in data and "trial" not in data:
        return load_component
    return load_job

for path in sys.argv[1:]:
    folder = os.path.dirname(os.path.abspath(path))
    os.chdir(folder)
    try:
        entity = loader_for(path)(os.path.abspath(path))
        accepted, reason = True, ""
        if hasattr(entity, "_validate"):  # a sweep job has none: loading is its validation
            result = entity._validate()
            accepted = bool(result.passed)
            reason = "" if accepted else "; ".join(f"{k}: {v}" for k, v in result.error_messages.items())
    except BaseException as error:  # anything the client raises is a refusal
        accepted, reason = False, f"{type(error).__name__}: {error}"
    print(json.dumps({"case": path, "accepted": accepted, "reason": " ".join(reason.split())[:300]}), flush=True)
'''


def golden_cases(prefix: str) -> dict[str, list[Path]]:
    """Each rule's golden cases whose name starts with ``prefix`` (``fail_`` or ``pass_``)."""
    # `<case>.fixed.yml` is what `aml-lint --fix` makes of a case, not a case.
    return {folder.name: sorted(p for p in folder.glob(f"{prefix}*.yml") if not p.name.endswith(".fixed.yml"))
            for folder in sorted(GOLDEN.iterdir()) if folder.is_dir() and folder.name.startswith("AML")}


def sdk_verdicts(python: str, cases: list[Path], timeout: float = 900) -> dict[str, dict]:
    """Each case's verdict from the SDK in ``python``: {"accepted": bool, "reason": str}."""
    done = subprocess.run([python, "-c", WORKER, *map(str, cases)], capture_output=True, text=True,
                          timeout=timeout)
    verdicts = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            verdicts[record["case"]] = {"accepted": record["accepted"], "reason": record["reason"]}
    if len(verdicts) != len(cases):
        raise SystemExit(f"the SDK worker answered {len(verdicts)} of {len(cases)} cases:\n{done.stderr[-2000:]}")
    return verdicts


def rule_verdict(bad: list[bool], good: list[bool]) -> str | None:
    """The rule's verdict from whether the SDK accepted each bad case and each good case. A bad
    case refused while a good case of the same rule is refused too says nothing about the rule
    (the folder lacks what the client checks, such as a code folder): it is left out. None when
    no bad case is left."""
    clear = [accepted for accepted in bad if accepted or all(good)]
    if not clear:
        return None
    if all(clear):
        return "accepts"
    if not any(clear):
        return "rejects"
    return "depends"


def verdicts_by_rule(python: str) -> tuple[dict[str, str], dict[str, dict]]:
    """Each rule's verdict, and each case's, from the SDK in ``python``."""
    bad, good = golden_cases("fail_"), golden_cases("pass_")
    flat = [case for found in (*bad.values(), *good.values()) for case in found]
    verdicts = sdk_verdicts(python, flat)
    per_rule = {}
    for code, found in bad.items():
        verdict = rule_verdict([verdicts[str(case)]["accepted"] for case in found],
                               [verdicts[str(case)]["accepted"] for case in good.get(code, [])])
        if verdict is not None:
            per_rule[code] = verdict
    return per_rule, verdicts


def table_text(per_rule: dict[str, str]) -> str:
    lines = ['"""What azure-ai-ml does with each rule\'s golden bad case: generated by',
             "tools/sdk_verdicts.py; do not edit. ``rejects``: the client refuses the spec before it",
             "reaches the service; ``accepts``: it loads and validates, so the service receives it;",
             '``depends``: some bad cases each way. A rule with no telling bad case has no entry."""',
             "", "SERVICE: dict[str, str] = {"]
    lines += [f'    "{code}": "{verdict}",' for code, verdict in sorted(per_rule.items())]
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT / "tools"))
    from generated import write_or_check

    if "--sdk-python" not in argv:
        sys.stderr.write("usage: python tools/sdk_verdicts.py --sdk-python PYTHON [--check] [-v]\n")
        return 2
    python = argv[argv.index("--sdk-python") + 1]
    per_rule, verdicts = verdicts_by_rule(python)
    if "-v" in argv:
        for case in sorted(verdicts):
            verdict = verdicts[case]
            case = Path(case)
            print(f"{case.relative_to(ROOT)}: {'accepted' if verdict['accepted'] else 'rejected'}"
                  f"{' (' + verdict['reason'] + ')' if verdict['reason'] else ''}")
    return write_or_check(TABLE, table_text(per_rule), argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
