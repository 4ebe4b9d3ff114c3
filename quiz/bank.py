"""Load the question bank (``quiz/bank/*.yml``, format in ``quiz/bank/README.md``).

Loading is strict: an unknown key, a missing explanation for a wrong option, an answer that is
not among the options, or an id used twice is a :class:`BankError` naming the file, the line and
the question id, because a question that loads wrong teaches wrong. Whether the answer is *true*
is :mod:`quiz.checks`' business.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import BankError

BANK_DIR = Path(__file__).parent / "bank"

# Domain → (title, weight in an exam). The weights are amllab's estimate of how the exam's
# "train models" objectives split over these topics (see bank/README.md).
DOMAINS: dict[str, tuple[str, int]] = {
    "command": ("Command jobs", 25),
    "sweep": ("Sweep jobs", 25),
    "distributed": ("Distributed training", 15),
    "pipeline": ("Pipelines and components", 20),
    "schedule": ("Schedules", 10),
    "cli_sdk": ("CLI and SDK v2", 5),
}
TYPES = ("single", "multiple", "wrong_line", "fill_blank", "ordering", "numeric")
CHECK_KINDS = ("lint", "lint_options", "grid_size", "next_fires", "pipeline_order", "scenario")
BLANK = "____"
OPTION_KEYS = "abcdef"

_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_SOURCE = re.compile(r"(SPEC §\d+(\.\d+)*|seed: \S)")
# A fenced ```yaml block of a prompt (the fences at the start of a line).
YAML_BLOCK = re.compile(r"^```ya?ml[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def public_pages(source: str) -> list[str]:
    """The parts of a question's ``source`` that name public pages (not SPEC or seed citations)."""
    return [part.strip() for part in re.split(r"\s+·\s+|;\s+", source)
            if part.strip() and not _SOURCE.match(part.strip())]


_QUESTION_KEYS = {"id", "domain", "type", "source", "prompt", "options", "answer", "explanation",
                  "wrong", "check", "tolerance", "options_yaml"}
_REQUIRED = ("id", "type", "source", "prompt", "answer", "explanation")


@dataclass(frozen=True)
class Question:
    id: str
    domain: str
    type: str
    prompt: str
    answer: Any
    explanation: str
    source: str
    options: dict[str, str] = field(default_factory=dict)
    wrong: dict[str, str] = field(default_factory=dict)
    check: dict[str, Any] | None = None
    tolerance: float = 0.0
    options_yaml: dict[str, str] = field(default_factory=dict)
    file: str = ""
    line: int = 0

    @property
    def reference(self) -> str:
        """The public pages of the source (Microsoft Learn titles), for the learner to read on.
        The ``SPEC §`` and ``seed:`` parts are the maintainers' provenance, not shipped."""
        return "; ".join(public_pages(self.source))

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
        if self.type in ("single", "fill_blank"):
            return [self.answer]
        if self.type in ("multiple", "ordering"):
            return list(self.answer)
        return []

    @property
    def checked(self) -> bool:
        return self.check is not None

    def grade(self, response: Any) -> bool:
        """Whether ``response`` is right. Single/fill-blank: a key; multiple: keys in any order;
        ordering: keys in order; wrong_line: a line number; numeric: a number."""
        if response is None:
            return False
        if self.type in ("single", "fill_blank"):
            return str(response).strip().lower() == self.answer
        if self.type == "multiple":
            return sorted(str(k).lower() for k in response) == sorted(self.answer)
        if self.type == "ordering":
            return [str(k).lower() for k in response] == list(self.answer)
        try:
            number = float(response)
        except (TypeError, ValueError):
            return False
        if self.type == "wrong_line":
            return number == self.answer
        return math.isclose(number, float(self.answer), abs_tol=self.tolerance) or number == self.answer

    def describe(self, response: Any) -> str:
        """A response in words: the option's text for keyed types, else the value."""
        if response is None:
            return "no answer"
        if self.type in ("single", "fill_blank"):
            return f"{response}) {self.options.get(str(response), '?')}"
        if self.type in ("multiple", "ordering"):
            return ", ".join(f"{k}) {self.options.get(str(k), '?')}" for k in response)
        if self.type == "wrong_line":
            return f"line {response}"
        return _number_text(response)

    def answer_text(self) -> str:
        return self.describe(self.answer)


def _number_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


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


def load_bank(paths: Iterable[Path] | None = None) -> Bank:
    """Load every ``*.yml`` in the bank folder (or the given files/folders)."""
    files: list[Path] = []
    for path in [BANK_DIR] if paths is None else paths:
        path = Path(path)
        files.extend(sorted(path.glob("*.yml")) if path.is_dir() else [path])
    questions: list[Question] = []
    seen: dict[str, Question] = {}
    for file in files:
        for question in load_file(file):
            other = seen.get(question.id)
            if other is not None:
                raise BankError(question.file, question.line, question.id,
                                f"the id is already used at {other.file}:{other.line}",
                                "give each question its own id")
            seen[question.id] = question
            questions.append(question)
    return Bank(tuple(questions))


def load_file(path: Path) -> list[Question]:
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
    default_domain = data.get("domain")
    return [_question(document, index, raw, default_domain) for index, raw in enumerate(data["questions"])]


def _question(document: Any, index: int, raw: Any, default_domain: Any) -> Question:
    where = ("questions", index)
    line = document.locate(where)[0]
    qid = raw.get("id") if isinstance(raw, dict) else None
    qid = qid if isinstance(qid, str) else None

    def fail(problem: str, fix: str | None = None, key: str | None = None) -> BankError:
        at = document.locate(where + (key,), key=False)[0] if key and key in raw else line
        return BankError(document.path, at, qid, problem, fix)

    if not isinstance(raw, dict):
        raise fail("a question is a mapping of fields")
    unknown = sorted(set(raw) - _QUESTION_KEYS)
    if unknown:
        raise BankError(document.path, document.locate(where + (unknown[0],), key=True)[0], qid,
                        f"unknown key '{unknown[0]}'", f"a question has {', '.join(sorted(_QUESTION_KEYS))}")
    for key in _REQUIRED:
        if raw.get(key) in (None, ""):
            raise fail(f"'{key}' is missing", "see quiz/bank/README.md")
    if qid is None or not _ID.match(qid):
        raise fail(f"id {raw.get('id')!r} must be lowercase words joined by '-'", key="id")
    domain = raw.get("domain", default_domain)
    if domain not in DOMAINS:
        raise fail(f"domain {domain!r} is not one of {', '.join(DOMAINS)}", key="domain")
    qtype = raw["type"]
    if qtype not in TYPES:
        raise fail(f"type {qtype!r} is not one of {', '.join(TYPES)}", key="type")
    for key in ("prompt", "explanation", "source"):
        if not isinstance(raw[key], str):
            raise fail(f"'{key}' must be text", key=key)
    if not _SOURCE.search(raw["source"]):
        raise fail("the source must cite a SPEC section ('SPEC §4.8') or the seed ('seed: <section>')",
                   key="source")
    if not public_pages(raw["source"]):
        raise fail("the source needs the title of a public page for the learner to read on",
                   "add ' · <Microsoft Learn page title>'", key="source")
    options = raw.get("options") or {}
    if not isinstance(options, dict) or not all(isinstance(v, (str, int, float)) for v in options.values()):
        raise fail("'options' must map keys a..f to text", key="options")
    options = {str(k): str(v) for k, v in options.items()}
    wrong = raw.get("wrong") or {}
    if not isinstance(wrong, dict):
        raise fail("'wrong' must map each wrong option's key to why it is wrong", key="wrong")
    wrong = {str(k): str(v) for k, v in wrong.items()}
    answer = raw["answer"]
    keyed = qtype in ("single", "multiple", "fill_blank", "ordering")
    if keyed:
        expected_keys = list(OPTION_KEYS[: len(options)])
        low = 3 if qtype == "multiple" else 2
        if not low <= len(options) <= 6 or list(options) != expected_keys:
            raise fail(f"a {qtype} question has {low} to 6 options keyed a, b, c... in order", key="options")
        if qtype in ("single", "fill_blank"):
            if not isinstance(answer, str) or answer not in options:
                raise fail(f"the answer {answer!r} is not one of the options' keys", key="answer")
        else:
            if not isinstance(answer, list) or not all(isinstance(k, str) and k in options for k in answer) \
                    or len(set(answer)) != len(answer):
                raise fail("the answer must be a list of distinct option keys", key="answer")
            if qtype == "multiple" and not 2 <= len(answer) < len(options):
                raise fail("a multiple-choice answer has at least two keys and fewer than all options",
                           key="answer")
            if qtype == "ordering" and sorted(answer) != expected_keys:
                raise fail("an ordering answer lists every option's key once", key="answer")
        if qtype != "ordering":
            missing = [k for k in options if k not in answer and k not in wrong]
            if missing:
                raise fail(f"'wrong' does not say why option {missing[0]} is wrong",
                           "every wrong option gets a reason", key="wrong")
        stray = [k for k in wrong if k not in options or (qtype != "ordering" and k in answer)]
        if stray:
            raise fail(f"'wrong' explains '{stray[0]}', which is not a wrong option", key="wrong")
    elif options:
        raise fail(f"a {qtype} question has no options", key="options")
    if qtype in ("wrong_line", "numeric"):
        if isinstance(answer, bool) or not isinstance(answer, (int, float)):
            raise fail(f"a {qtype} answer is a number", key="answer")
    blocks = YAML_BLOCK.findall(raw["prompt"])
    if qtype == "wrong_line":
        if len(blocks) != 1:
            raise fail("a wrong_line prompt holds exactly one ```yaml block", key="prompt")
        lines = blocks[0].splitlines()
        if not isinstance(answer, int) or not 1 <= answer <= len(lines) or not lines[answer - 1].strip():
            raise fail(f"line {answer} is not a non-blank line of the YAML block (1..{len(lines)})", key="answer")
    if qtype == "fill_blank" and (len(blocks) != 1 or blocks[0].count(BLANK) != 1):
        raise fail(f"a fill_blank prompt holds one ```yaml block with one '{BLANK}'", key="prompt")
    tolerance = raw.get("tolerance", 0)
    if qtype != "numeric" and "tolerance" in raw or not isinstance(tolerance, (int, float)) or tolerance < 0:
        raise fail("'tolerance' is a number >= 0, for numeric questions", key="tolerance")
    options_yaml = raw.get("options_yaml") or {}
    if options_yaml and (not isinstance(options_yaml, dict) or set(map(str, options_yaml)) != set(options)):
        raise fail("'options_yaml' gives one YAML text per option key", key="options_yaml")
    check = raw.get("check")
    if check is not None:
        _validate_check(check, qtype, fail)
    return Question(
        id=qid, domain=domain, type=qtype, prompt=raw["prompt"], answer=answer,
        explanation=raw["explanation"].strip(), source=raw["source"].strip(), options=options, wrong=wrong,
        check=check, tolerance=float(tolerance), options_yaml={str(k): str(v) for k, v in options_yaml.items()},
        file=document.path, line=line)


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
        "lint": TYPES, "lint_options": ("single", "multiple", "fill_blank"),
        "grid_size": ("numeric", "single"), "next_fires": ("numeric", "single"),
        "pipeline_order": ("ordering",), "scenario": TYPES,
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

