"""Load the question bank (``quiz/bank/*.yml``, format in ``quiz/bank/README.md``).

Loading is strict: an unknown key, a missing explanation for a wrong option, an answer that is
not among the options, or an id used twice is a :class:`BankError` naming the file, the line and
the question id, because a question that loads wrong teaches wrong. The built-in bank is held to
more: every question cites public pages by URL (Microsoft Learn's v2 pages, the CLI and SDK
references, Microsoft's examples) and says how its answer is known (``evidence``). A learner's own
cards (``--bank``, ``aml-quiz import``) may cite anything. Whether an answer is *true* is the
sources' business; :mod:`quiz.checks` proves the toolkit agrees.

A bank file holds questions, and two kinds of groups that the loader expands into questions:
a ``series`` (one problem, several proposed solutions, each a yes/no question) and a ``case``
(a case study: one scenario, several questions about it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from .errors import BankError
from .qtypes import BLANK, OPTION_KEYS, Blank, TYPES, type_of

__all__ = ["BANK_DIR", "BLANK", "DOMAINS", "EVIDENCE", "TOPICS", "TYPES", "Bank", "Group", "Question",
           "counts", "load_bank", "load_file", "yaml_for"]

BANK_DIR = Path(__file__).parent / "bank"

# Domain → (title, weight in an exam). The domains cover parts of two of the five skill areas
# of Microsoft's AI-300 exam (the successor of DP-100): "Design and implement an MLOps
# infrastructure" (15-20 %) and "Implement machine learning model lifecycle and operations"
# (25-30 %). How those percentages split over these domains is amllab's estimate, not
# Microsoft's; the app says so (OUTLINE, WEIGHTS_NOTE).
DOMAINS: dict[str, tuple[str, int]] = {
    "assets": ("Compute, data, environments", 20),
    "command": ("Command jobs", 15),
    "tracking": ("MLflow tracking and models", 15),
    "sweep": ("Sweep jobs", 15),
    "distributed": ("Distributed training", 10),
    "pipeline": ("Pipelines and components", 15),
    "schedule": ("Schedules and automation", 10),
}
STUDY_GUIDE = "https://learn.microsoft.com/credentials/certifications/resources/study-guides/ai-300"
# Which skills of the AI-300 study guide each domain trains for.
OUTLINE: dict[str, str] = {
    "assets": "MLOps infrastructure: manage datastores and compute targets; data assets, "
              "environments, sharing assets through registries",
    "command": "Model lifecycle: run model training scripts",
    "tracking": "Model lifecycle: experiment tracking with MLflow, comparing jobs, registering an "
                "MLflow model, managing a model's lifecycle",
    "sweep": "Model lifecycle: automate hyperparameter tuning",
    "distributed": "Model lifecycle: distributed training for large and deep learning models",
    "pipeline": "Model lifecycle: training pipelines; MLOps infrastructure: components",
    "schedule": "Model lifecycle: retraining triggers (schedules)",
}
WEIGHTS_NOTE = ("The weights are amllab's estimate. Microsoft publishes the exam's skill areas and "
                "their ranges (AI-300: MLOps infrastructure 15-20 %, model lifecycle and operations "
                "25-30 %), not how they split over these domains; the rest of AI-300 (GenAIOps) is "
                "outside what amllab covers.")

# How a question's answer is known, as the learner is told.
EVIDENCE: dict[str, str] = {
    "documented": "documented by Microsoft",
    "sdk": "the azure-ai-ml SDK's behaviour",
    "observed": "observed in amllab's local runner, not on the service",
    "yours": "your own card",
}
# Topics whose coverage the bank measures (a question may carry one).
TOPICS: dict[str, str] = {
    "mlflow": "MLflow beyond log_metric: autolog, params, artifacts, models, registry, runs",
    "environments": "environments: curated, custom, Docker build context, versions",
    "compute": "compute: clusters and scaling, instances, spot, serverless, attached",
    "data": "data assets and datastores: URIs, types, modes, MLTable, versions",
    "components": "component registration, versions and registries",
    "sdk-sweep": "the SDK v2 form of sweeps",
    "sdk-schedule": "the SDK v2 form of schedules",
    "sdk-distribution": "the SDK v2 form of distributed jobs",
    "sdk-pipeline": "the SDK v2 form of pipelines: @pipeline functions, settings, inputs and outputs",
    "automl": "AutoML training jobs: tasks, primary metrics, MLTable data, validation, limits, pipeline steps",
    "troubleshooting": "troubleshooting a failed job from its logs",
    "v1-v2": "what changed from SDK v1 to v2",
}
# Public places a built-in question may cite. SDK v1 pages only for a v1-v2 question.
PUBLIC_SOURCES = (
    "https://learn.microsoft.com/",
    "https://github.com/Azure/azureml-examples",
    "https://github.com/Azure/azure-sdk-for-python",
    "https://github.com/MicrosoftDocs/azure-ai-docs",
    "https://mlflow.org/docs/",
    "https://docs.pytorch.org/",
    "https://pytorch.org/docs/",
)
V1_PAGE = re.compile(r"view=azureml-api-1|/python/api/azureml-(?!ai-ml)|/azure/machine-learning/v1/")

_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# Option letters named in running text break once options are shuffled.
_LETTER_REFERENCE = re.compile(r"\b[Oo]ptions? \(?[a-f]\)?(?![\w-])|(?<![\w`(])[a-f]\)(?=\s)")
# A fenced ```yaml block of a prompt (the fences at the start of a line).
YAML_BLOCK = re.compile(r"^```ya?ml[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
CODE_BLOCK = re.compile(r"^```(\w*)[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)

_QUESTION_KEYS = {"id", "domain", "type", "sources", "source", "evidence", "topic", "arithmetic", "prompt",
                  "options", "answer", "explanation", "wrong", "check", "tolerance", "options_yaml", "blanks"}
_SHARED_KEYS = {"domain", "sources", "source", "evidence", "topic"}
_SERIES_KEYS = {"series", "title", "problem", "solutions"} | _SHARED_KEYS
_SOLUTION_KEYS = {"id", "solution", "answer", "explanation", "sources", "source", "evidence", "check"}
_CASE_KEYS = {"case", "title", "scenario", "questions"} | _SHARED_KEYS
_REQUIRED = ("id", "type", "prompt", "answer", "explanation")
CHECK_KINDS = ("lint", "lint_options", "grid_size", "next_fires", "pipeline_order", "scenario")


@dataclass(frozen=True)
class Group:
    """Questions asked together: a yes/no ``series`` (one problem, its proposed solutions) or a
    ``case`` study (one scenario). ``text`` is the problem or the scenario, ``size`` the number of
    questions, each question's ``index`` its place (from 0)."""

    id: str
    kind: str
    title: str
    text: str
    size: int


@dataclass(frozen=True)
class Question:
    id: str
    domain: str
    type: str
    prompt: str
    answer: Any
    explanation: str
    sources: tuple[str, ...]
    evidence: str = "documented"
    topic: str | None = None
    arithmetic: bool = False
    options: dict[str, str] = field(default_factory=dict)
    wrong: dict[str, str] = field(default_factory=dict)
    check: dict[str, Any] | None = None
    tolerance: float = 0.0
    options_yaml: dict[str, str] = field(default_factory=dict)
    blanks: tuple[Blank, ...] = ()
    group: Group | None = None
    index: int = 0
    file: str = ""
    line: int = 0

    @property
    def reference(self) -> str:
        """Where to read on: the question's sources, as the learner sees them."""
        return "  ".join(self.sources)

    @property
    def evidence_text(self) -> str:
        return EVIDENCE.get(self.evidence, self.evidence)

    @property
    def label(self) -> str:
        return type_of(self).label

    @property
    def yaml_blocks(self) -> list[str]:
        return YAML_BLOCK.findall(self.prompt)

    @property
    def yaml(self) -> str | None:
        """The prompt's first YAML block: what lint checks and wrong-line answers refer to."""
        blocks = self.yaml_blocks
        return blocks[0] if blocks else None

    @property
    def correct_keys(self) -> list[str]:
        return type_of(self).correct_keys(self)

    @property
    def checked(self) -> bool:
        return self.check is not None

    def grade(self, response: Any) -> bool:
        """Whether ``response`` is right (shapes in :mod:`quiz.qtypes`)."""
        return type_of(self).grade(self, response)

    def describe(self, response: Any) -> str:
        """A response in words: the option's text for keyed types, else the value."""
        return type_of(self).describe(self, response)

    def answer_text(self) -> str:
        if self.type == "multi_blank":
            return self.describe([b.answer for b in self.blanks])
        return self.describe(self.answer)


@dataclass(frozen=True)
class Bank:
    questions: tuple[Question, ...]

    def __len__(self) -> int:
        return len(self.questions)

    def __iter__(self):
        return iter(self.questions)

    def by_id(self) -> dict[str, Question]:
        return {q.id: q for q in self.questions}

    def in_domain(self, domain: str) -> list[Question]:
        return [q for q in self.questions if q.domain == domain]

    def groups(self) -> dict[str, list[Question]]:
        """Each series and case study's questions, in order."""
        found: dict[str, list[Question]] = {}
        for question in self.questions:
            if question.group is not None:
                found.setdefault(question.group.id, []).append(question)
        return found


def load_bank(paths: Iterable[Path] | None = None, *, strict: bool | None = None) -> Bank:
    """Load every ``*.yml`` in the bank folder (or the given files/folders). ``strict`` (the
    default for the built-in bank only) holds every question to public URL sources and an
    evidence level (by default: when every path is in the built-in bank)."""
    files: list[Path] = []
    paths = [BANK_DIR] if paths is None else [Path(p) for p in paths]
    if strict is None:  # the built-in bank's files are held to its rules wherever they are named
        strict = all(p.resolve().is_relative_to(BANK_DIR.resolve()) for p in paths)
    for path in paths:
        path = Path(path)
        files.extend(sorted(path.glob("*.yml")) if path.is_dir() else [path])
    questions: list[Question] = []
    seen: dict[str, Question] = {}
    for file in files:
        for question in load_file(file, strict=strict):
            other = seen.get(question.id)
            if other is not None:
                raise BankError(question.file, question.line, question.id,
                                f"the id is already used at {other.file}:{other.line}",
                                "give each question its own id")
            seen[question.id] = question
            questions.append(question)
    return Bank(tuple(questions))


CARDS_FOLDER = "cards"


def load_with_cards(data_dir: Path | None) -> Bank:
    """The built-in bank and the learner's own cards (``<data dir>/cards/*.yml``, imported with
    ``aml-quiz --import``), which may cite anything; an id used twice names both places."""
    builtin = load_bank()
    folder = Path(data_dir) / CARDS_FOLDER if data_dir is not None else None
    if folder is None or not folder.is_dir() or not any(folder.glob("*.yml")):
        return builtin
    seen = builtin.by_id()
    mine = load_bank([folder], strict=False)
    for question in mine:
        other = seen.get(question.id)
        if other is not None:
            raise BankError(question.file, question.line, question.id,
                            f"the id is already used at {other.file}:{other.line}", "give each card its own id")
    return Bank(builtin.questions + mine.questions)


def import_cards(path: Path, data_dir: Path) -> list[Question]:
    """Check a file of the learner's own cards and keep a copy of it with their progress, so every
    mode asks them beside the bank's. Refused, changing nothing, when it does not load or uses an
    id the bank or an earlier import uses."""
    import os
    import tempfile

    questions = load_file(Path(path), strict=False)
    if not questions:
        raise BankError(str(path), 1, None, "the file holds no cards")
    folder = Path(data_dir) / CARDS_FOLDER
    target = folder / Path(path).name
    taken = {q.id: q for q in load_bank().questions}
    if folder.is_dir():
        taken.update({q.id: q for q in load_bank([p for p in folder.glob("*.yml") if p.name != target.name],
                                                  strict=False).questions})
    for question in questions:
        if question.id in taken:
            other = taken[question.id]
            raise BankError(question.file, question.line, question.id,
                            f"the id is already used at {other.file}:{other.line}", "give each card its own id")
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    with os.fdopen(handle, "wb") as out:
        out.write(Path(path).read_bytes())
    os.replace(temporary, target)
    return questions


def load_file(path: Path, *, strict: bool = True) -> list[Question]:
    from validator import loader

    display = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BankError(display, 1, None, f"cannot be read: {error}") from None
    document, problems = loader.parse(display, text)
    for problem in problems:
        if problem.severity.name == "ERROR":
            raise BankError(display, problem.line, None, problem.message, problem.hint)
    data = document.data
    if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
        raise BankError(display, 1, None, "a bank file is a mapping with a 'questions' list",
                        "see quiz/bank/README.md")
    unknown = set(data) - {"domain", "questions"}
    if unknown:
        raise BankError(display, document.locate((sorted(unknown)[0],), key=True)[0], None,
                        f"unknown top-level key '{sorted(unknown)[0]}'", "a bank file has 'domain' and 'questions'")
    reader = _Reader(document, data.get("domain"), strict)
    questions: list[Question] = []
    for index, raw in enumerate(data["questions"]):
        where = ("questions", index)
        if isinstance(raw, dict) and "series" in raw:
            questions.extend(reader.series(where, raw))
        elif isinstance(raw, dict) and "case" in raw:
            questions.extend(reader.case(where, raw))
        else:
            questions.append(reader.question(where, raw, {}))
    return questions


class _Reader:
    """Turns one bank file's entries into questions, failing with the file, line and id."""

    def __init__(self, document: Any, default_domain: Any, strict: bool):
        self.document = document
        self.default_domain = default_domain
        self.strict = strict

    def fail_at(self, where: tuple, raw: Any, qid: str | None, problem: str, fix: str | None = None,
                key: str | None = None, key_line: bool = False) -> BankError:
        line = self.document.locate(where)[0]
        if key and isinstance(raw, dict) and key in raw:
            line = self.document.locate(where + (key,), key=key_line)[0]
        return BankError(self.document.path, line, qid, problem, fix)

    def unknown_keys(self, where: tuple, raw: dict, allowed: set[str], qid: str | None, what: str) -> None:
        unknown = sorted(set(raw) - allowed)
        if unknown:
            raise BankError(self.document.path, self.document.locate(where + (unknown[0],), key=True)[0], qid,
                            f"unknown key '{unknown[0]}'", f"{what} has {', '.join(sorted(allowed))}")

    # ------------------------------------------------------------------ groups

    def _group_head(self, where: tuple, raw: dict, kind: str, allowed: set[str], body: str,
                    items: str) -> tuple[str, dict[str, Any]]:
        gid = raw.get(kind)
        gid = gid if isinstance(gid, str) else None
        self.unknown_keys(where, raw, allowed, gid, f"a {kind}")
        if gid is None or not _ID.match(gid):
            raise self.fail_at(where, raw, gid, f"{kind} id {raw.get(kind)!r} must be lowercase words joined by '-'",
                               key=kind)
        if not isinstance(raw.get(body), str) or not raw[body].strip():
            raise self.fail_at(where, raw, gid, f"a {kind} needs its '{body}' (Markdown)", key=body)
        if kind == "series" and "does the solution meet the goal" in str(raw.get(body, "")).lower():
            raise self.fail_at(where, raw, gid, "the problem asks 'Does the solution meet the goal?' itself; the "
                               "app asks it after each solution", "end the problem with the goal", key=body)
        if not isinstance(raw.get(items), list) or len(raw[items]) < 2:
            raise self.fail_at(where, raw, gid, f"a {kind} has two or more '{items}'", key=items)
        shared = {k: raw[k] for k in _SHARED_KEYS if k in raw}
        return gid, shared

    def series(self, where: tuple, raw: dict) -> list[Question]:
        gid, shared = self._group_head(where, raw, "series", _SERIES_KEYS, "problem", "solutions")
        solutions = raw["solutions"]
        group = Group(gid, "series", str(raw.get("title") or ""), raw["problem"].strip(), len(solutions))
        questions = []
        for index, solution in enumerate(solutions):
            at = where + ("solutions", index)
            if not isinstance(solution, dict):
                raise self.fail_at(at, solution, gid, "a solution is a mapping with 'solution', 'answer', 'explanation'")
            self.unknown_keys(at, solution, _SOLUTION_KEYS, gid, "a solution")
            if not isinstance(solution.get("solution"), str):
                raise self.fail_at(at, solution, gid, "a solution needs its 'solution' text", key="solution")
            entry = {k: v for k, v in solution.items() if k != "solution"}
            entry.setdefault("id", f"{gid}-{index + 1}")
            entry["type"] = "yes_no"
            entry["prompt"] = (f"{raw['problem'].strip()}\n\n**Solution:** {solution['solution'].strip()}\n\n"
                               "Does the solution meet the goal?")
            questions.append(self.question(at, entry, shared, group=group, index=index))
        return questions

    def case(self, where: tuple, raw: dict) -> list[Question]:
        gid, shared = self._group_head(where, raw, "case", _CASE_KEYS, "scenario", "questions")
        items = raw["questions"]
        title = str(raw.get("title") or "")
        if not title:
            raise self.fail_at(where, raw, gid, "a case study needs a 'title'", key="case")
        group = Group(gid, "case", title, raw["scenario"].strip(), len(items))
        questions = [self.question(where + ("questions", index), item, shared, group=group, index=index)
                     for index, item in enumerate(items)]
        domains = {q.domain for q in questions}
        if len(domains) != 1:
            raise self.fail_at(where, raw, gid, "a case study's questions share one domain", key="domain")
        return questions

    # ------------------------------------------------------------------ one question

    def question(self, where: tuple, raw: Any, shared: dict[str, Any], *, group: Group | None = None,
                 index: int = 0) -> Question:
        qid = raw.get("id") if isinstance(raw, dict) else None
        qid = qid if isinstance(qid, str) else None

        def fail(problem: str, fix: str | None = None, key: str | None = None) -> BankError:
            return self.fail_at(where, raw, qid, problem, fix, key=key)

        if not isinstance(raw, dict):
            raise fail("a question is a mapping of fields")
        self.unknown_keys(where, raw, _QUESTION_KEYS if group is None or group.kind == "case" else
                          _SOLUTION_KEYS | {"type", "prompt"}, qid, "a question")
        for key in _REQUIRED:
            if raw.get(key) in (None, ""):
                raise fail(f"'{key}' is missing", "see quiz/bank/README.md")
        if qid is None or not _ID.match(qid):
            raise fail(f"id {raw.get('id')!r} must be lowercase words joined by '-'", key="id")
        merged = {**shared, **raw}
        domain = merged.get("domain", self.default_domain)
        if domain not in DOMAINS:
            raise fail(f"domain {domain!r} is not one of {', '.join(DOMAINS)}", key="domain")
        qtype = raw["type"]
        if qtype not in TYPES:
            raise fail(f"type {qtype!r} is not one of {', '.join(TYPES)}", key="type")
        for key in ("prompt", "explanation"):
            if not isinstance(raw[key], str):
                raise fail(f"'{key}' must be text", key=key)
        sources = self.sources(merged, fail)
        evidence = merged.get("evidence", None if self.strict else "yours")
        if evidence not in EVIDENCE or (self.strict and evidence == "yours"):
            raise fail(f"evidence {evidence!r} is not one of documented, sdk, observed",
                       "say how the answer is known: a Microsoft page says it (documented), azure-ai-ml does "
                       "it (sdk), or only amllab's runner shows it (observed)", key="evidence")
        topic = merged.get("topic")
        if topic is not None and topic not in TOPICS:
            raise fail(f"topic {topic!r} is not one of {', '.join(TOPICS)}", key="topic")
        if self.strict and any(V1_PAGE.search(s) for s in sources) and topic != "v1-v2":
            raise fail("an SDK v1 page is cited by a question that is not about v1 and v2",
                       "cite the v2 page, or give the question 'topic: v1-v2'", key="sources")
        arithmetic = raw.get("arithmetic", False)
        if not isinstance(arithmetic, bool):
            raise fail("'arithmetic' is true or false", key="arithmetic")
        options = raw.get("options") or {}
        if not isinstance(options, dict) or not all(isinstance(v, (str, int, float)) for v in options.values()):
            raise fail("'options' must map keys a..f to text", key="options")
        options = {str(k): str(v) for k, v in options.items()}
        wrong = raw.get("wrong") or {}
        if not isinstance(wrong, dict):
            raise fail("'wrong' must map each wrong option's key to why it is wrong", key="wrong")
        wrong = {str(k): str(v) for k, v in wrong.items()}
        record = TYPES[qtype]
        blocks = YAML_BLOCK.findall(raw["prompt"])
        record.validate(raw, options, blocks, fail)
        answer = raw["answer"]
        if record.keyed:
            right = answer if isinstance(answer, list) else [answer]
            if qtype not in ("ordering",):
                missing = [k for k in options if k not in right and k not in wrong]
                if missing:
                    raise fail(f"'wrong' does not say why option {missing[0]} is wrong",
                               "every wrong option gets a reason", key="wrong")
            stray = [k for k in wrong if k not in options or (qtype != "ordering" and k in right)]
            if stray:
                raise fail(f"'wrong' explains '{stray[0]}', which is not a wrong option", key="wrong")
        elif wrong:
            raise fail(f"a {qtype} question has no options to explain", key="wrong")
        if record.keyed or qtype == "multi_blank":
            texts = [raw["explanation"], *wrong.values()]
            if any(_LETTER_REFERENCE.search(t) for t in texts):
                raise fail("the explanation or a reason names an option by its letter, which changes when the "
                           "options are shuffled", "name the option by what it says", key="explanation")
        tolerance = raw.get("tolerance", 0)
        if qtype != "numeric" and "tolerance" in raw or not isinstance(tolerance, (int, float)) or tolerance < 0:
            raise fail("'tolerance' is a number >= 0, for numeric questions", key="tolerance")
        options_yaml = raw.get("options_yaml") or {}
        if options_yaml and (not isinstance(options_yaml, dict) or set(map(str, options_yaml)) != set(options)):
            raise fail("'options_yaml' gives one YAML text per option key", key="options_yaml")
        blanks = tuple(Blank(str(label), {str(k): str(v) for k, v in spec["options"].items()}, spec["answer"])
                       for label, spec in (raw.get("blanks") or {}).items()) if qtype == "multi_blank" else ()
        if "blanks" in raw and qtype != "multi_blank":
            raise fail("'blanks' belong to multi_blank questions", key="blanks")
        check = raw.get("check")
        if check is not None:
            _validate_check(check, qtype, fail)
        return Question(
            id=qid, domain=domain, type=qtype, prompt=raw["prompt"], answer=answer,
            explanation=raw["explanation"].strip(), sources=sources, evidence=evidence, topic=topic,
            arithmetic=arithmetic, options=options, wrong=wrong, check=check, tolerance=float(tolerance),
            options_yaml={str(k): str(v) for k, v in options_yaml.items()}, blanks=blanks, group=group,
            index=index, file=self.document.path, line=self.document.locate(where)[0])

    def sources(self, merged: dict[str, Any], fail: Any) -> tuple[str, ...]:
        if "source" in merged and "sources" in merged:
            raise fail("give 'sources' (a list) or 'source' (one), not both", key="sources")
        value = merged.get("sources", merged.get("source"))
        items = [value] if isinstance(value, str) else value
        key = "sources" if "sources" in merged else "source"
        if not isinstance(items, list) or not items or not all(isinstance(s, str) and s.strip() for s in items):
            raise fail("'sources' is missing: a list of where the answer can be read",
                       "cite the Microsoft Learn page (URL) that says it", key=key)
        items = [s.strip() for s in items]
        if self.strict:
            for source in items:
                parsed = urlparse(source)
                if parsed.scheme != "https" or not parsed.netloc or not source.startswith(PUBLIC_SOURCES):
                    raise fail(f"source {source!r} is not the URL of a public page",
                               f"cite a URL under {', '.join(PUBLIC_SOURCES[:2])}...", key=key)
        return tuple(items)


def _validate_check(check: Any, qtype: str, fail: Any) -> None:
    if not isinstance(check, dict) or len(check) != 1 or next(iter(check)) not in CHECK_KINDS:
        raise fail(f"'check' holds exactly one of {', '.join(CHECK_KINDS)}", key="check")
    kind, params = next(iter(check.items()))
    if params is None:
        check[kind] = params = {}
    if not isinstance(params, dict):
        raise fail(f"check '{kind}' takes a mapping of parameters", key="check")
    allowed = {
        "lint": {"codes", "yaml", "files"},
        "lint_options": {"correct", "files", *OPTION_KEYS},
        "grid_size": {"yaml"},
        "next_fires": {"after", "count", "before", "yaml"},
        "pipeline_order": {"yaml", "files"},
        "scenario": {"name", "expect", "step"},
    }[kind]
    unknown = sorted(set(map(str, params)) - allowed)
    if unknown:
        raise fail(f"check '{kind}' has no parameter '{unknown[0]}'", f"it takes {', '.join(sorted(allowed))}",
                   key="check")
    needs = {"lint": "codes", "next_fires": "after", "scenario": "name"}.get(kind)
    if needs and needs not in params:
        raise fail(f"check '{kind}' needs '{needs}'", key="check")
    fits = {
        "lint": tuple(TYPES), "lint_options": ("single", "multiple", "fill_blank"),
        "grid_size": ("numeric", "single"), "next_fires": ("numeric", "single"),
        "pipeline_order": ("ordering",), "scenario": tuple(TYPES),
    }[kind]
    if qtype not in fits:
        raise fail(f"check '{kind}' cannot prove a {qtype} question", f"it proves {', '.join(fits)} questions",
                   key="check")


def yaml_for(question: Question, override: str | None = None) -> str:
    text = override if override is not None else question.yaml
    if text is None:
        raise ValueError("the prompt has no ```yaml block and the check gives no 'yaml'")
    return text


def counts(questions: Sequence[Question], attribute: str) -> dict[str, int]:
    result: dict[str, int] = {}
    for question in questions:
        value = getattr(question, attribute)
        result[value] = result.get(value, 0) + 1
    return result
