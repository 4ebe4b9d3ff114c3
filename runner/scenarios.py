"""Labs: ``scenarios/<name>/scenario.yml``, run and checked.

A lab is a folder with its specs, its code and a ``scenario.yml`` (the contract, documented in
docs/scenarios.md): ``title``, what it ``teaches``, the exam ``question`` it answers, the
``questions`` of the quiz bank it proves, what to ``notice`` once it ran, the ``setup`` shell
commands that register what its specs reference, and what it must produce. The short form is one
job:

    spec: job.yml                 the job (or schedule) to submit; `components` lint beside it
    set: [KEY=VALUE]              job create --set overrides (a two-node job made smaller)
    preempt_after: [6, 6]         job create --preempt-after: seconds, one per spot preemption
    fixed: fixed.yml              a lint lab's corrected spec: it must lint clean
    expect: {...}                 lint codes, and the job's expectations (below)

The long form is ``steps:``, run in order, each one of::

    - run: python promote.py $JOB_SWEEP          a shell line; $JOB_<ID> names the jobs so far
    - job: sweep.yml  [id: sweep]  [set, preempt_after]  expect: {...}
    - schedule: schedule.yml  id: weekly  expect: {next_fires: {after: ..., times: [...]}}
    - trigger: weekly  [id: retrain]  expect: {...}       the schedule's job, run now

A job's ``expect``: ``lint`` (codes aml-lint reports on its spec, with the lab's components),
``status``, ``preemptions``, ``metrics`` (names, or name: {min, max}), ``files`` (output: names),
``logs`` (names in its ./logs), and for a sweep ``trials``, ``canceled_by_policy`` ({min, max}),
``best_trial`` ({metric: {min, max}, params: {...}}), for a pipeline ``reused`` and ``ran`` (step
names) and ``steps`` ({step: a job's expectations}). A schedule's: ``next_fires``, either
{after: <wall clock>, times: [...]} or, for a schedule without start_time (it starts when it is
created), {after: start_time, every: {days: 7}, count: 3}.

Commands run in the lab's folder with ``AMLLAB_WORKSPACE`` set and this installation's
``python`` and ``aml-run`` first on PATH, exactly as a learner would type them. ``aml-run scenario
run NAME`` and ``make demo`` go through :func:`run_lab`; the test suite too.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence, TextIO

from validator.errors import UsageError
from validator.spec import load_asset

from .executors import executor_for
from .errors import RunnerError
from .workspace import Workspace

def _labs_folder() -> Path:
    """The labs: a checkout's ``scenarios/``, else the copy an installed amllab ships (the
    ``amllab_labs`` data package). A lab run from an installed copy is copied somewhere writable
    first (``aml-run scenario copy``): it writes data beside its spec."""
    checkout = Path(__file__).resolve().parent.parent / "scenarios"
    if checkout.is_dir():
        return checkout
    from importlib.util import find_spec

    spec = find_spec("amllab_labs")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return checkout


SCENARIOS_DIR = _labs_folder()
# Where `aml-run scenario copy` puts a lab when no folder is named.
COPY_DEFAULT = "amllab-labs"


def installed() -> bool:
    """Whether the labs are the installed copy (read-only in spirit), not a checkout's."""
    return SCENARIOS_DIR.name != "scenarios"


def copy(name: str, destination: Path | None = None) -> Path:
    """Copy a lab to ``destination/NAME`` (default ``./amllab-labs/NAME``), to run it from there;
    an existing copy is refused rather than overwritten."""
    source = find(name)
    target = (destination or Path(COPY_DEFAULT)) / source.name
    if target.exists():
        raise UsageError(f"{target} exists already: run the lab there, or remove it to copy it again")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("data", ".amllab", "__pycache__", "promoted",
                                                                   "sweep.png"))
    return target
STEP_KINDS = ("run", "job", "schedule", "trigger")


@dataclass
class Step:
    """One thing a lab does, and what must hold after it."""

    kind: str  # one of STEP_KINDS
    target: str  # the shell line, the spec file, or the id of the schedule step to trigger
    id: str | None = None
    expect: dict[str, Any] = field(default_factory=dict)
    overrides: list[str] = field(default_factory=list)
    preempt_after: tuple[float, ...] = ()

    def command(self, names: Mapping[str, str]) -> str:
        """What a learner types for this step."""
        if self.kind == "run":
            return self.target
        if self.kind == "job":
            sets = "".join(f" --set {shlex.quote(value)}" for value in self.overrides)
            preempt = f" --preempt-after {','.join(f'{s:g}' for s in self.preempt_after)}" if self.preempt_after else ""
            return f"aml-run job create --file {self.target}{sets}{preempt} --stream"
        if self.kind == "schedule":
            return f"aml-run schedule create --file {self.target}"
        return f"aml-run schedule trigger {names.get(self.target, self.target)}"


@dataclass
class Outcome:
    """What one step did: its job's ``job show`` record, or its schedule's record."""

    step: Step
    shown: dict[str, Any]
    problems: list[str]


def labs(folder: Path = SCENARIOS_DIR) -> list[Path]:
    return sorted(path.parent for path in folder.glob("*/scenario.yml"))


def find(name: str, folder: Path = SCENARIOS_DIR) -> Path:
    """A lab by name (``scenario list`` shows them) or by its folder's path."""
    path = Path(name)
    if (path / "scenario.yml").is_file():
        return path
    if (folder / name / "scenario.yml").is_file():
        return folder / name
    known = ", ".join(lab.name for lab in labs(folder))
    raise UsageError(f"no lab named {name!r} (labs: {known})")


def load(folder: Path) -> dict[str, Any]:
    """The lab's ``scenario.yml``; a file that is not valid YAML is one line naming the position."""
    from validator.spec import SpecError

    try:
        meta = load_asset(folder / "scenario.yml")
    except SpecError as error:
        raise UsageError(f"the lab's scenario.yml is not valid: {error}") from None
    for index, raw in enumerate(meta.get("steps") or []):
        _step(raw, index, folder)
    return meta


def steps(meta: Mapping[str, Any]) -> list[Step]:
    """The lab's steps: its ``steps``, or the one job (or schedule) of the short form. A lint
    lab has none."""
    if "steps" in meta:
        return [_step(raw, index) for index, raw in enumerate(meta["steps"] or [])]
    expect = {key: value for key, value in (meta.get("expect") or {}).items() if key != "lint"}
    if "next_fires" in expect:
        return [Step("schedule", meta["spec"], "schedule", expect)]
    if "status" in expect:
        return [Step("job", meta["spec"], "job", expect, list(meta.get("set") or []),
                     tuple(meta.get("preempt_after") or ()))]
    return []


def _step(raw: Any, index: int, folder: Path | None = None) -> Step:
    kinds = [kind for kind in STEP_KINDS if isinstance(raw, Mapping) and kind in raw]
    if len(kinds) != 1:
        found = ", ".join(map(str, raw)) if isinstance(raw, Mapping) else repr(raw)
        where = f"{folder / 'scenario.yml'}: " if folder else ""
        raise UsageError(f"{where}steps[{index}] needs exactly one of {', '.join(STEP_KINDS)} (it has: {found})")
    kind = kinds[0]
    return Step(kind, str(raw[kind]), raw.get("id"), dict(raw.get("expect") or {}),
                list(raw.get("set") or []), tuple(raw.get("preempt_after") or ()))


def lint_expectations(folder: Path, meta: Mapping[str, Any] | None = None) -> list[tuple[list[Path], list[str]]]:
    """(files, the codes aml-lint must report over them together) for each checked group: the
    short form's spec with its components, its ``fixed`` spec (clean), each step's spec."""
    meta = load(folder) if meta is None else meta
    groups = []
    expect = meta.get("expect") or {}
    if "spec" in meta and "lint" in expect:
        groups.append(([folder / meta["spec"], *(folder / c for c in meta.get("components") or [])],
                       list(expect["lint"])))
    if meta.get("fixed"):
        groups.append(([folder / meta["fixed"]], list(expect.get("fixed_lint") or [])))
    for step in steps(meta) if "steps" in meta else []:
        if step.kind in ("job", "schedule") and "lint" in step.expect:
            groups.append(([folder / step.target], list(step.expect["lint"])))
    return groups


def job_variable(step_id: str) -> str:
    """The shell variable that holds the job name of step ``step_id`` (``sweep`` -> ``JOB_SWEEP``)."""
    return "JOB_" + step_id.upper().replace("-", "_")


def _environment(workspace: Workspace, names: Mapping[str, str]) -> dict[str, str]:
    env = dict(os.environ, AMLLAB_WORKSPACE=str(workspace.folder))
    # `python` and `aml-run` in the commands are this installation's.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", os.defpath)])
    env.update({job_variable(key): value for key, value in names.items()})
    return env


def _shell(folder: Path, line: str, workspace: Workspace, names: Mapping[str, str], out: TextIO) -> None:
    out.write(f"$ {line}\n")
    out.flush()
    result = subprocess.run(["bash", "-c", line], cwd=folder, env=_environment(workspace, names),
                            capture_output=True, text=True)
    out.write(result.stdout)
    if result.returncode != 0:
        raise RunnerError(f"{folder.name}: `{line}` failed (exit {result.returncode}): "
                          f"{(result.stderr or result.stdout).strip()[-2000:]}")


def setup(folder: Path, workspace: Workspace, out: TextIO, meta: Mapping[str, Any] | None = None) -> None:
    for line in (load(folder) if meta is None else meta).get("setup") or []:
        _shell(folder, line, workspace, {}, out)


def run(folder: Path, workspace: Workspace, out: TextIO | None = None) -> dict[str, Any]:
    """Set up, submit and follow a one-job lab; returns ``job show``'s record."""
    outcomes = run_lab(folder, workspace, out)
    jobs_run = [outcome for outcome in outcomes if outcome.step.kind == "job"]
    if len(jobs_run) != 1:
        raise UsageError(f"{folder.name} runs {len(jobs_run)} jobs; use run_lab")
    return jobs_run[0].shown


def check(folder: Path, shown: dict[str, Any]) -> list[str]:
    """What differs from a one-job lab's ``expect``; empty when it all holds."""
    return check_job(load(folder).get("expect") or {}, shown)


def run_lab(folder: Path, workspace: Workspace, out: TextIO | None = None,
            meta: Mapping[str, Any] | None = None) -> list[Outcome]:
    """Run the lab's setup and steps in order, checking each step's expectations as it ends.
    A step that cannot run raises RunnerError; one whose expectations fail does not stop the
    lab (its problems are in its outcome)."""
    out = out or open(os.devnull, "w")
    meta = load(folder) if meta is None else meta
    setup(folder, workspace, out, meta)
    names: dict[str, str] = {}  # step id -> its job's (or schedule's) name
    outcomes = []
    for step in steps(meta):
        outcomes.append(_run_step(folder, step, workspace, names, out))
    return outcomes


def _run_step(folder: Path, step: Step, workspace: Workspace, names: dict[str, str], out: TextIO) -> Outcome:
    if step.kind == "run":
        _shell(folder, step.target, workspace, names, out)
        return Outcome(step, {}, [])
    out.write(f"$ {step.command(names)}\n")
    out.flush()
    with contextlib.chdir(folder):  # a learner submits from the lab's folder: the default experiment's name
        return _submit_step(folder, step, workspace, names, out)


def _submit_step(folder: Path, step: Step, workspace: Workspace, names: dict[str, str], out: TextIO) -> Outcome:
    from . import jobs

    if step.kind == "schedule":
        from . import schedules

        record = schedules.create(workspace, folder / step.target, warn=out)
        if step.id:
            names[step.id] = record["name"]
        return Outcome(step, record, check_schedule(step.expect, record))
    if step.kind == "job":
        name = jobs.submit(folder / step.target, workspace, overrides=step.overrides,
                           preempt_after=step.preempt_after, warn=out)
    else:
        from . import schedules

        if step.target not in names:
            raise UsageError(f"{folder.name}: trigger {step.target!r} names no schedule step before it")
        name = schedules.trigger(workspace, names[step.target], warn=out)
        out.write(f"$ aml-run job stream {name}\n")
    if step.id:
        names[step.id] = name
    if jobs.stream(workspace, name, out, cancel_on_interrupt=False, announce_detach=False) == 130:
        # Ctrl-C: the job is canceled (with everything it started) and the lab stops here,
        # rather than going on to steps that need what this one would have made.
        jobs.cancel(workspace, name)
        out.write(f"\n[aml-run] Ctrl-C: canceled {name} and everything it started; the lab stops here\n")
        out.flush()
        raise KeyboardInterrupt
    shown = jobs.show(workspace, name)
    view = executor_for(shown["type"]).console()
    if view is not None:
        view.summary_table(shown, out)
    return Outcome(step, shown, check_job(step.expect, shown))


# -- expectations --------------------------------------------------------------------------------

def check_job(expect: Mapping[str, Any], shown: Mapping[str, Any]) -> list[str]:
    """What differs from a job's expectations; empty when they all hold."""
    problems = []
    if "status" in expect and shown["status"] != expect["status"]:
        problems.append(f"status is {shown['status']}, expected {expect['status']} ({shown.get('error')})")
    if "preemptions" in expect and shown.get("preemptions") != expect["preemptions"]:
        problems.append(f"the job was preempted {shown.get('preemptions')} time(s), expected {expect['preemptions']}")
    problems += executor_for(shown["type"]).expectations(expect, shown)
    wanted_files = dict(expect.get("files") or {})
    if expect.get("logs"):
        wanted_files["logs"] = expect["logs"]
    for output, names in wanted_files.items():
        folder_path = Path(shown["outputs"].get(output, ""))
        for name in names:
            if not (folder_path / name).is_file():
                problems.append(f"output {output} has no {name} (in {folder_path})")
    return problems


def check_schedule(expect: Mapping[str, Any], record: Mapping[str, Any]) -> list[str]:
    """A schedule's ``next_fires``: {after, times}: its fire times after ``after``, both wall
    clock times of the schedule's time zone, computed by the function the scheduler fires by."""
    from validator.triggers import fire_times

    wanted = expect.get("next_fires")
    if not wanted:
        return []
    # The trigger as the scheduler fires it: its start_time pinned at creation when it had none.
    trigger = dict((record.get("spec") or {}).get("trigger") or {}, start_time=record.get("start_time"))
    if wanted["after"] == "start_time":
        # A schedule without start_time starts when it is created: its times are only known
        # relative to that, so ``every`` ({days: 7}) gives the spacing from the start on.
        after = datetime.fromisoformat(str(record["start_time"]))
        step = timedelta(**wanted["every"])
        times = [(after + step * k).isoformat() for k in range(1, int(wanted.get("count", 3)) + 1)]
    else:
        after = datetime.fromisoformat(str(wanted["after"]))  # wall clock of the schedule's zone
        times = [str(value) for value in wanted["times"]]
    fires = [moment.isoformat() for moment in fire_times(trigger, after, count=len(times))]
    if fires != times:
        return [f"the schedule fires at {fires} after {after.isoformat()}, expected {times}"]
    return []


# -- the report ----------------------------------------------------------------------------------

def summary(outcome: Outcome) -> str:
    """One line on what a step did."""
    shown = outcome.shown
    if outcome.step.kind == "run":
        return f"ran `{outcome.step.target}`"
    if outcome.step.kind == "schedule":
        return f"schedule {shown['name']} ({shown.get('trigger')}, {shown.get('time_zone')})"
    return executor_for(shown["type"]).summary(shown)


def _named(text: str, names: Mapping[str, str]) -> str:
    """``$JOB_<ID>`` in a lab's notes replaced by the job the step of that id ran."""
    for key, value in sorted(names.items(), key=lambda item: -len(item[0])):
        text = text.replace(f"${job_variable(key)}", value)
    return text


def report(folder: Path, outcomes: Sequence[Outcome], lint_problems: Sequence[str], seconds: float,
           meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What ``aml-run scenario run`` prints (and returns as JSON with -o json)."""
    meta = load(folder) if meta is None else meta
    problems = list(lint_problems) + [problem for outcome in outcomes for problem in outcome.problems]
    names = {outcome.step.id: outcome.shown["name"] for outcome in outcomes if outcome.step.id and outcome.shown}
    tracking = next((outcome.shown["mlflow"]["tracking_uri"] for outcome in outcomes if "mlflow" in outcome.shown), None)
    return {
        "scenario": folder.name,
        "title": meta.get("title"),
        "question": meta.get("question"),
        "passed": not problems,
        "problems": problems,
        "seconds": round(seconds, 1),
        "steps": [{"command": _named(outcome.step.command(names), names), "id": outcome.step.id,
                   "summary": _named(summary(outcome), names),
                   "name": outcome.shown.get("name"), "run_dir": outcome.shown.get("run_dir"),
                   "problems": outcome.problems} for outcome in outcomes],
        "notice": [_named(str(line), names) for line in meta.get("notice") or []],
        "quiz_questions": list(meta.get("questions") or []),
        "mlflow_ui": f"mlflow ui --backend-store-uri {tracking}" if tracking else None,
    }


def check_lint(folder: Path, meta: Mapping[str, Any] | None = None) -> list[str]:
    """The lab's lint expectations that do not hold."""
    from validator.engine import lint_file

    problems = []
    for files, codes in lint_expectations(folder, meta):
        found = sorted(d.code for path in files for d in lint_file(path).diagnostics)
        if found != sorted(codes):
            names = " + ".join(path.relative_to(folder).as_posix() for path in files)
            problems.append(f"aml-lint {names} reports {found}, expected {sorted(codes)}")
    return problems


def execute(folder: Path, workspace: Workspace, out: TextIO) -> dict[str, Any]:
    """Lint, run and check the lab; its report."""
    started = time.monotonic()
    meta = load(folder)
    lint_problems = check_lint(folder, meta)
    outcomes = run_lab(folder, workspace, out, meta)
    return report(folder, outcomes, lint_problems, time.monotonic() - started, meta)


def fresh_workspace(folder: Path, explicit: str | Path | None) -> Workspace:
    """The lab's workspace, empty: ``<lab>/.amllab`` (cleared: it is the lab's own), or one
    named that must not hold anything yet, so what the lab shows never depends on an earlier run."""
    if explicit is None:
        target = folder / ".amllab"
        if target.exists():
            shutil.rmtree(target)
    else:
        target = Path(explicit)
        if target.exists() and any(target.iterdir()):
            raise UsageError(f"{target} is not empty: a lab runs in a workspace of its own (omit --workspace "
                             f"to use {folder / '.amllab'}, cleared first)")
    return Workspace.locate(target)


def render(result: Mapping[str, Any], out: TextIO) -> None:
    """The report as text: each step, then what to notice, then the verdict."""
    out.write(f"\n== {result['scenario']}: {result['title']}\n")
    if result.get("question"):
        out.write(f"   answers: {result['question']}\n")
    for step in result["steps"]:
        out.write(f" {'✗' if step['problems'] else '✓'} {step['summary']}\n")
    if result["notice"]:
        out.write("\nWhat to notice:\n")
        for line in result["notice"]:
            out.write(f"  - {line}\n")
    run_dirs = [step["run_dir"] for step in result["steps"] if step.get("run_dir")]
    if run_dirs:
        out.write("\nWhere to look:\n")
        for run_dir in run_dirs:
            out.write(f"  - {run_dir}\n")
        if result.get("mlflow_ui"):
            out.write(f"  - every run in MLflow's UI: {result['mlflow_ui']}\n")
    if result["quiz_questions"]:
        out.write(f"\nQuiz questions this lab proves: {', '.join(result['quiz_questions'])}\n")
    for problem in result["problems"]:
        out.write(f"PROBLEM: {problem}\n")
    verdict = "every expectation holds" if result["passed"] else f"{len(result['problems'])} expectation(s) failed"
    out.write(f"{result['scenario']}: {verdict} ({result['seconds']} s)\n")


def describe(folder: Path) -> dict[str, Any]:
    """``scenario show``: what a lab teaches and the commands it runs, without running it."""
    meta = load(folder)
    return {"name": folder.name, "title": meta.get("title"), "question": meta.get("question"),
            "teaches": " ".join(str(meta.get("teaches", "")).split()),
            "commands": [f"cd {folder}", *lab_commands(folder, meta)],
            "lint": [{"files": [path.relative_to(folder).as_posix() for path in files], "codes": codes}
                     for files, codes in lint_expectations(folder, meta)],
            "notice": list(meta.get("notice") or []), "quiz_questions": list(meta.get("questions") or []),
            "path": str(folder)}


def lab_commands(folder: Path, meta: Mapping[str, Any] | None = None) -> list[str]:
    """What a learner types, in the lab's folder, to do by hand what ``scenario run`` does:
    its setup, then each step as a command (with the job's --set and --preempt-after)."""
    meta = load(folder) if meta is None else meta
    lines = list(meta.get("setup") or [])
    # A trigger names its schedule by the name in the schedule's file.
    names = {step.id: str(load_asset(folder / step.target).get("name")) for step in steps(meta)
             if step.kind == "schedule" and step.id and (folder / step.target).is_file()}
    for step in steps(meta):
        lines.append(step.command(names))
        if step.kind == "trigger":
            lines.append("aml-run job stream <the job it printed>")
    lines += [f"# ${job_variable(step.id)}: the job name `aml-run job create` printed for {step.target}"
              for step in steps(meta) if step.kind == "job" and step.id
              and any(f"${job_variable(step.id)}" in line for line in lines)]
    return lines


def render_description(shown: Mapping[str, Any], out: TextIO) -> None:
    import textwrap

    out.write(f"{shown['name']}: {shown['title']}\n\n")
    if shown["question"]:
        out.write(textwrap.fill(f"Exam question: {shown['question']}", 100) + "\n\n")
    out.write(textwrap.fill(shown["teaches"], 100) + "\n\n")
    if len(shown["commands"]) > 1:
        out.write(f"Run it: aml-run scenario run {shown['name']}   (by hand:)\n")
        out.writelines(f"  {line}\n" for line in shown["commands"])
    for group in shown["lint"]:
        codes = ", ".join(group["codes"]) or "nothing"
        out.write(f"aml-lint {' '.join(group['files'])}: {codes}\n")
    if shown["quiz_questions"]:
        out.write(f"Quiz questions it proves: {', '.join(shown['quiz_questions'])}\n")


def rows(folder: Path = SCENARIOS_DIR) -> Iterator[dict[str, Any]]:
    """``scenario list``: one row per lab."""
    for lab in labs(folder):
        meta = load(lab)
        kinds = sorted({step.kind for step in steps(meta)})
        yield {"name": lab.name, "title": meta.get("title"), "runs": ", ".join(kinds) or "lint only",
               "question": meta.get("question"), "path": str(lab)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.scenarios")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--workspace", type=Path, help="default: FOLDER/.amllab, cleared first")
    args = parser.parse_args(argv)
    try:
        workspace = fresh_workspace(args.folder, args.workspace)
        result = execute(args.folder, workspace, sys.stdout)
    except (RunnerError, UsageError) as error:
        sys.stderr.write(f"error: {error}\n")
        return 2
    render(result, sys.stdout)
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
