"""Generate docs/scenarios.md from every scenarios/*/scenario.yml, so the lab guide and the labs
cannot drift.

    python tools/build_scenario_docs.py          # rewrite docs/scenarios.md
    python tools/build_scenario_docs.py --check  # exit 1 when it is stale (tests/runner/test_labs.py)
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runner import scenarios  # noqa: E402
from generated import write_or_check  # noqa: E402

TARGET = ROOT / "docs" / "scenarios.md"

CONTRACT = """\
## Running a lab

```sh
aml-run scenario list                      # every lab, and what it runs
aml-run scenario show sweep-grid           # what a lab teaches and its commands, without running it
aml-run scenario run worked-example        # set up, run, check, and say what to notice
aml-run scenario run sweep-grid -o json    # the report as JSON (passed, problems, steps, notice)
```

`scenario run` starts from an empty workspace (the lab's own `.amllab/`, cleared first, or an
empty folder named with `--workspace`), runs the lab's `setup` commands and steps exactly as
they are written below (in the lab's folder, with `AMLLAB_WORKSPACE` set), checks every
expectation, and prints each step's outcome, what to notice, where its runs are, and the MLflow
command to browse them. It exits 0 when every expectation holds, 1 when one does not, 2 when the
lab cannot run, 130 after Ctrl-C (which cancels the job that is running, with everything it
started, and stops the lab there). The test suite runs every lab the same way
(`tests/runner/test_labs.py`).

## The `scenario.yml` contract

| key | meaning |
|---|---|
| `title` | the lab's name in lists |
| `teaches` | what it teaches: the facts the run shows, faithful to the service |
| `question` | the exam question it answers, in the exam's words |
| `notice` | what to look at once it ran; `$JOB_<ID>` becomes the name of the job step `<id>` ran |
| `questions` | the ids of the quiz questions it proves (a test keeps both sides in step) |
| `setup` | shell commands that register what the specs reference (data, environments, computes, components) |
| `spec` | the short form: one job (or schedule) to submit; `components` lint beside it |
| `set`, `preempt_after` | `job create --set` overrides and `--preempt-after` seconds for that job |
| `fixed` | a lint lab's corrected spec, which must lint clean (`expect.fixed_lint` if not quite) |
| `expect` | what must hold: `lint` codes for `spec` + `components`, and the job's expectations |
| `steps` | the long form instead of `spec`: a list of steps, below |

Steps, run in order:

| step | what it does | learner's command |
|---|---|---|
| `run: LINE` | a shell line; `$JOB_<ID>` holds the name of job step `<id>` | the line |
| `job: FILE` (`id`, `set`, `preempt_after`, `expect`) | submit and follow a job | `aml-run job create --file FILE --stream` |
| `schedule: FILE` (`id`, `expect`) | register a schedule | `aml-run schedule create --file FILE` |
| `trigger: ID` (`id`, `expect`) | run schedule step `ID`'s job now, and follow it | `aml-run schedule trigger NAME` |

Expectations of a job: `lint` (codes aml-lint reports on its file), `status`, `preemptions`,
`metrics` (names, or `name: {min, max}`), `files` (`output: [file, ...]`; `default` is
`./outputs`), `logs` (files in `./logs`); of a sweep also `trials`, `canceled_by_policy`
(`{min, max}`), `best_trial` (`metric: {min, max}`, `params`); of a pipeline `reused` and `ran`
(step names) and `steps` (`step: {status, metrics}`). Of a schedule: `next_fires`
(`after` and the `times` that follow, wall-clock times in the schedule's time zone).
"""


def render() -> str:
    labs = scenarios.labs(ROOT / "scenarios")
    out = ["# Labs", "",
           "Generated from `scenarios/*/scenario.yml` by `tools/build_scenario_docs.py`; do not edit by hand.", "",
           "Each lab is a folder in `scenarios/`: its specs, its code, and a `scenario.yml` that says what it",
           "teaches and what running it must show. Start with `make demo` (the worked example), or any lab",
           "below with `aml-run scenario run NAME`. The labs follow the study guide amllab grew from: its",
           "command job, sweep, distributed job, pipeline and schedule examples, made runnable, and its",
           "worked example end to end.", "",
           "| lab | runs | answers |", "|---|---|---|"]
    for row in scenarios.rows(ROOT / "scenarios"):
        question = " ".join(str(row["question"] or "").split())
        out.append(f"| [{row['name']}](#{row['name']}) | {row['runs']} | {question} |")
    out += ["", CONTRACT.rstrip()]
    for folder in labs:
        meta = scenarios.load(folder)
        out += ["", f"## {folder.name}", "", f"**{meta['title']}**", ""]
        if meta.get("question"):
            out += [f"*Exam question:* {' '.join(str(meta['question']).split())}", ""]
        out += [" ".join(str(meta.get("teaches", "")).split()), ""]
        if scenarios.steps(meta):
            out += [f"Run it: `aml-run scenario run {folder.name}`. By hand:", "", "```sh",
                    f"cd scenarios/{folder.name}", *scenarios.lab_commands(folder, meta), "```", ""]
        files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                       if p.is_file() and not any(part in (".amllab", "data", "promoted", "__pycache__")
                                                  for part in p.relative_to(folder).parts)
                       and p.suffix != ".png")
        out += ["Files: " + ", ".join(f"`{name}`" for name in files), ""]
        checked = {key: meta[key] for key in ("expect", "fixed", "steps") if key in meta}
        out += ["What it checks:", "", "```yaml", yaml.safe_dump(checked, sort_keys=False, width=100).rstrip(), "```"]
        if meta.get("notice"):
            out += ["", "What to notice:", ""] + [f"- {' '.join(str(line).split())}" for line in meta["notice"]]
        if meta.get("questions"):
            out += ["", "Quiz questions it proves: " + ", ".join(f"`{q}`" for q in meta["questions"])]
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    return write_or_check(TARGET, render(), argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
