"""Prove each question's answer with the toolkit itself (format: ``quiz/bank/README.md``).

Every check does two things: it runs the real thing (the validator on the YAML, the
search-space model aml-lint and aml-run share on a search space, the trigger calculator on a
schedule, the validator's pipeline graph, a lab's proven expectations) and it ties the result
to the question's ``answer``, so a check cannot pass while the answer key is wrong.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from .bank import BLANK, Question, yaml_for

# A snippet has no code folder on disk: what the validator says about the code (missing folder,
# missing script, metrics the script does (not) log) would be about the check's empty folder,
# not about the question. A check that ships `files:` gets every code.
NEEDS_CODE = ("AML701", "AML702", "AML703", "AML704", "AML803", "AML804", "AML806")
TIME_FORMAT = "%Y-%m-%d %H:%M"


@dataclass(frozen=True)
class CheckResult:
    question: Question
    kind: str
    status: str  # passed | failed | skipped
    detail: str = ""

    @property
    def where(self) -> str:
        return f"{self.question.file}:{self.question.line}: {self.question.id}"


def run_checks(questions: Iterable[Question]) -> list[CheckResult]:
    return [check(q) for q in questions if q.check is not None]


def check(question: Question) -> CheckResult:
    assert question.check is not None
    kind, params = next(iter(question.check.items()))
    try:
        outcome = _CHECKS[kind](question, params or {})
    except _Skip as skip:
        return CheckResult(question, kind, "skipped", str(skip))
    except _Fail as failure:
        return CheckResult(question, kind, "failed", str(failure))
    except Exception as error:  # a check that crashes is a failed check, reported, not a traceback
        return CheckResult(question, kind, "failed", f"the check could not run: {type(error).__name__}: {error}")
    return CheckResult(question, kind, "passed", outcome)


class _Fail(Exception):
    pass


class _Skip(Exception):
    pass


# ----------------------------------------------------------------------------- lint


@contextmanager
def _scratch(text: str, files: Mapping[str, str] | None) -> Iterator[Path]:
    """A scratch folder holding ``files`` and ``text`` as ``question.yml``; yields that spec."""
    with tempfile.TemporaryDirectory(prefix="amllab-quiz-") as scratch:
        folder = Path(scratch)
        for name, content in (files or {}).items():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(str(content))
        spec = folder / "question.yml"
        spec.write_text(text)
        yield spec


def lint_snippet(text: str, files: Mapping[str, str] | None = None) -> list[Any]:
    """Lint ``text`` as ``question.yml`` in a scratch folder holding ``files``; without files the
    code-dependent codes (NEEDS_CODE) are dropped. Returns the diagnostics."""
    from validator import Config
    from validator.engine import lint_file

    with _scratch(text, files) as spec:
        report = lint_file(spec, Config(ignore=() if files else NEEDS_CODE))
        return [d for d in report.diagnostics if not d.code.startswith("AML012")]


def lintable_yaml(question: Question) -> str | None:
    """The YAML a learner would lint for this question: the prompt's block, with a fill-blank's
    right value put in the blank."""
    text = question.yaml
    if text is not None and question.type == "fill_blank":
        text = text.replace(BLANK, question.options[question.answer])
    return text


def lint_targets(question: Question) -> list[tuple[str, str]]:
    """What "lint it" lints, as (label, YAML): the prompt's YAML (a fill-blank's with its answer
    in the blank), or, when the options are the YAML, each option's."""
    text = lintable_yaml(question)
    if text is not None:
        label = "the question's YAML" + (" (the blank filled with the answer)" if question.type == "fill_blank" else "")
        return [(label, text)]
    targets = []
    for key in question.options:
        option = question.options_yaml.get(key) or _strip_fence(question.options[key])
        if key in question.options_yaml or option != question.options[key]:
            targets.append((f"option {key}", option))
    return targets


def _codes(diagnostics: list[Any]) -> list[str]:
    return sorted({d.code for d in diagnostics})


def _expected_codes(value: Any, label: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise _Fail(f"{label}: the expected codes are a list")
    return sorted(set(map(str, value)))


def _shown(diagnostics: list[Any]) -> str:
    if not diagnostics:
        return "clean"
    return "; ".join(f"line {d.line} {d.code} {d.message}" for d in diagnostics)


def _lint(question: Question, params: Mapping[str, Any]) -> str:
    diagnostics = lint_snippet(yaml_for(question, params.get("yaml")), params.get("files"))
    expected = _expected_codes(params.get("codes"), "codes")
    found = _codes(diagnostics)
    if found != expected:
        raise _Fail(f"the validator reports {found or 'nothing'}, the question expects {expected or 'clean'}: "
                    f"{_shown(diagnostics)}")
    if question.type == "wrong_line":
        if not diagnostics:
            raise _Fail("a wrong_line question needs a finding on its answer's line")
        lines = sorted({d.line for d in diagnostics})
        if question.answer not in lines:
            raise _Fail(f"the answer is line {question.answer}, the validator points at line(s) {lines}: "
                        f"{_shown(diagnostics)}")
    return f"validator: {', '.join(found) or 'clean'}"


def _option_text(question: Question, key: str) -> str:
    if question.type == "fill_blank":
        assert question.yaml is not None
        return question.yaml.replace(BLANK, question.options[key])
    if key in question.options_yaml:
        return question.options_yaml[key]
    return _strip_fence(question.options[key])


def _strip_fence(text: str) -> str:
    match = re.match(r"^\s*```ya?ml\s*\n(.*?)```\s*$", text, re.DOTALL)
    return match.group(1) if match else text


def _lint_options(question: Question, params: Mapping[str, Any]) -> str:
    missing = [k for k in question.options if k not in params]
    if missing:
        raise _Fail(f"lint_options gives no expected codes for option {missing[0]}")
    clean: list[str] = []
    for key in question.options:
        diagnostics = lint_snippet(_option_text(question, key), params.get("files"))
        expected = _expected_codes(params[key], f"option {key}")
        found = _codes(diagnostics)
        if found != expected:
            raise _Fail(f"option {key}: the validator reports {found or 'nothing'}, the question expects "
                        f"{expected or 'clean'}: {_shown(diagnostics)}")
        if not found:
            clean.append(key)
    correct_when = params.get("correct", "clean")
    chosen = clean if correct_when == "clean" else [k for k in question.options if k not in clean]
    if sorted(chosen) != sorted(question.correct_keys):
        raise _Fail(f"the {correct_when} options are {chosen}, the answer is {question.correct_keys}")
    return f"validator: clean {clean}"


# ----------------------------------------------------------------------------- numbers


def _load_yaml(text: str) -> Any:
    import yaml

    return yaml.safe_load(text)


def _answer_number(question: Question) -> float:
    if question.type == "numeric":
        return float(question.answer)
    text = question.options[question.answer]
    match = re.search(r"-?\d+(?:\.\d+)?", text.replace(",", ""))
    if match is None:
        raise _Fail(f"the correct option {text!r} holds no number to compare")
    return float(match.group())


def grid_size(data: Any) -> int | None:
    """The number of distinct configurations of a sweep's search space (``data`` a sweep job or
    just its ``search_space``), as validator.search_space counts them for aml-lint and aml-run:
    a value listed twice in a choice counts once. None when the space is not finite."""
    from validator.search_space import parse

    space = data.get("search_space", data) if isinstance(data, dict) else data
    return parse(space).size


def _grid_size(question: Question, params: Mapping[str, Any]) -> str:
    size = grid_size(_load_yaml(yaml_for(question, params.get("yaml"))))
    if size is None:
        raise _Fail("the search space is not discrete, so it has no grid size")
    if size != _answer_number(question):
        raise _Fail(f"the search space holds {size} configurations, the answer says {_answer_number(question):g}")
    return f"search-space model: {size} configurations"


def _parse_time(value: Any, label: str) -> datetime:
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        raise _Fail(f"{label} {value!r} is not an ISO date-time") from None


def _next_fires(question: Question, params: Mapping[str, Any]) -> str:
    from validator.triggers import fire_times

    data = _load_yaml(yaml_for(question, params.get("yaml")))
    trigger = data.get("trigger", data) if isinstance(data, dict) else {}
    after = _parse_time(params["after"], "after")
    before = _parse_time(params["before"], "before") if "before" in params else None
    count = None if before is not None else int(params.get("count", 1))
    fires = fire_times(trigger, after, count=count, before=before)
    shown = ", ".join(moment.strftime(TIME_FORMAT) for moment in fires)
    if question.type == "numeric":
        if before is None:
            raise _Fail("a numeric next_fires check counts fires: give 'before'")
        if len(fires) != question.answer:
            raise _Fail(f"the trigger fires {len(fires)} times in the window ({shown}), the answer says "
                        f"{question.answer}")
    else:
        claimed = question.options[question.answer].strip()
        if claimed != shown:
            raise _Fail(f"the trigger fires at {shown or 'no time'}, the correct option says {claimed!r}")
    return f"fires: {shown}"


# ----------------------------------------------------------------------------- pipelines


def pipeline_generations(text: str, files: Mapping[str, str] | None = None) -> list[list[str]]:
    """The pipeline's steps grouped by when they can start (each group after the one before)."""
    from validator import graph, loader
    from validator.rules import pipeline as rules

    with _scratch(text, files) as spec:
        document, problems = loader.parse(str(spec), text, spec.parent)
        if document.data is None:
            raise _Fail(f"the pipeline does not load: {problems[0].message if problems else 'empty'}")
        analysis = rules.analyse(document)
        return graph.generations(list(analysis.steps), rules.step_edges(analysis))


def _pipeline_order(question: Question, params: Mapping[str, Any]) -> str:
    generations = pipeline_generations(yaml_for(question, params.get("yaml")), params.get("files"))
    if any(len(group) > 1 for group in generations):
        raise _Fail(f"the wiring allows more than one order (steps that can run together: "
                    f"{[g for g in generations if len(g) > 1]})")
    order = [group[0] for group in generations]
    answered = [question.options[k].strip().strip("`") for k in question.answer]
    if answered != order:
        raise _Fail(f"the wiring runs {' -> '.join(order)}, the answer says {' -> '.join(answered)}")
    return f"graph: {' -> '.join(order)}"


# ----------------------------------------------------------------------------- labs


def labs_folder() -> Path:
    """Where amllab's labs are: a checkout's scenarios/, or the copy an installed amllab ships."""
    from runner.scenarios import SCENARIOS_DIR

    return SCENARIOS_DIR


def lab_expectations(name: str, step: str | None = None) -> dict[str, Any] | None:
    """A runnable lab's ``expect`` (the test suite runs every runnable lab and proves it), or
    None. A lab of several steps expects per step: ``step`` names one by its id."""
    meta_path = labs_folder() / name / "scenario.yml"
    if not meta_path.is_file():
        return None
    meta = _load_yaml(meta_path.read_text()) or {}
    if step is not None:
        found = [raw for raw in meta.get("steps") or [] if isinstance(raw, Mapping) and raw.get("id") == step]
        expect = (found[0].get("expect") or {}) if found else {}
        return expect or None
    expect = meta.get("expect") or {}
    return expect if "status" in expect or "next_fires" in expect else None


def _implied(claim: Any, lab: Any, path: str) -> str | None:
    """Why the lab's proven expectation does not imply ``claim``, or None when it does."""
    if isinstance(claim, Mapping) and set(claim) <= {"min", "max"} and claim:
        if isinstance(lab, (int, float)):
            lab = {"min": lab, "max": lab}
        if not isinstance(lab, Mapping):
            return f"{path}: the lab has no bounds here"
        if "min" in claim and not ("min" in lab and lab["min"] >= claim["min"]):
            return f"{path}.min: the lab proves min {lab.get('min')}, not >= {claim['min']}"
        if "max" in claim and not ("max" in lab and lab["max"] <= claim["max"]):
            return f"{path}.max: the lab proves max {lab.get('max')}, not <= {claim['max']}"
        return None
    if isinstance(claim, Mapping):
        if not isinstance(lab, Mapping):
            return f"{path}: the lab expects no mapping here"
        for key, value in claim.items():
            if key not in lab:
                return f"{path}.{key}: the lab does not expect it"
            problem = _implied(value, lab[key], f"{path}.{key}")
            if problem:
                return problem
        return None
    if isinstance(claim, list):
        if not isinstance(lab, list) or not all(item in lab for item in claim):
            return f"{path}: the lab expects {lab!r}, not all of {claim!r}"
        return None
    return None if claim == lab else f"{path}: the lab expects {lab!r}, not {claim!r}"


def _scenario(question: Question, params: Mapping[str, Any]) -> str:
    name = str(params["name"])
    step = params.get("step")
    expect = lab_expectations(name, None if step is None else str(step))
    if expect is None:
        raise _Skip(f"lab '{name}'" + (f" has no step '{step}' that" if step else "") + " does not exist or cannot run yet")
    problem = _implied(params.get("expect") or {}, expect, "expect")
    if problem:
        raise _Fail(f"lab '{name}': {problem}")
    return f"lab {name}{f' (step {step})' if step else ''} proves {dict(params.get('expect') or {})}"


def lab_command(question: Question) -> str | None:
    """The commands that run the lab a question's `scenario` check names (its setup, then its
    job, as the runner runs it), when the lab exists; a lab of several steps, whose later steps
    need the job names of earlier ones, is run whole with `aml-run scenario run`."""
    check = question.check or {}
    name = (check.get("scenario") or {}).get("name")
    meta_path = labs_folder() / str(name) / "scenario.yml"
    if not name or not meta_path.is_file():
        return None
    meta = _load_yaml(meta_path.read_text()) or {}
    from runner import scenarios

    if scenarios.installed():
        # An installed amllab's labs are copied to a folder of the learner's first: a lab writes
        # its data beside its spec.
        copied = f"{scenarios.COPY_DEFAULT}/{name}"
        if "steps" in meta:
            return f"aml-run scenario copy {name} && aml-run scenario run {copied}"
        return " && ".join([f"aml-run scenario copy {name}", f"cd {copied}", *scenarios.lab_commands(meta_path.parent)])
    if "steps" in meta:
        return f"aml-run scenario run {name}"
    return " && ".join([f"cd scenarios/{name}", *scenarios.lab_commands(meta_path.parent)])


_CHECKS = {
    "lint": _lint,
    "lint_options": _lint_options,
    "grid_size": _grid_size,
    "next_fires": _next_fires,
    "pipeline_order": _pipeline_order,
    "scenario": _scenario,
}
