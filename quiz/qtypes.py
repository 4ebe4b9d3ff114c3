"""The question types, one record each: what the bank may hold for it, how an answer is graded,
described, typed and shuffled. Everything that differs between types is here; the loader, the
engine and both UIs ask the record instead of branching on the type's name.

Responses, in the shape every type agrees on (the store keeps them as JSON):

    single, fill_blank      an option key                     "b"
    multiple                option keys, any order            ["a", "d"]
    ordering, build_list    option keys, in order             ["c", "a", "b"]
    multi_blank             one option key per blank, in order ["b", "a"]
    wrong_line              a line number                     7
    numeric                 a number                          0.5
    yes_no                  a boolean                         True

Shuffling: a type names the option groups a presentation may reorder (``groups``): the options of
the keyed types, each blank's options of a multi-blank question. :class:`Presentation` relabels
a question's keys in a shuffled order (the learner sees a, b, c... top to bottom) and maps
responses between the shown keys and the bank's.
"""

from __future__ import annotations

import dataclasses
import math
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .bank import Question

OPTION_KEYS = "abcdefgh"
BLANK = "____"
# A multi-blank question's blanks in its code block: ___1___, ___2___ ...
NUMBERED_BLANK = re.compile(r"___(\d)___")
COUNT_WORDS = {2: "two", 3: "three", 4: "four", 5: "five"}
OPTIONS = "options"

Fail = Callable[..., Exception]


@dataclass(frozen=True)
class Blank:
    """One blank of a multi-blank question: its label ("1"), options and answer key."""

    label: str
    options: dict[str, str]
    answer: str


class QuestionType:
    """The behaviour of one type of question. Subclasses override what differs."""

    name = ""
    label = ""
    # Answers are option keys: options are shown with keys, shuffled at each presentation.
    keyed = False
    plain_hint = ""
    tui_hint = ""
    option_count = (2, 6)

    # ---------------------------------------------------------------- the bank

    def validate(self, raw: Mapping[str, Any], options: dict[str, str], blocks: list[str], fail: Fail) -> None:
        """Refuse a question of this type that cannot be asked or graded (``fail(problem, key=...)``)."""
        if options:
            raise fail(f"a {self.name} question has no options", key="options")

    def correct_keys(self, question: Question) -> list[str]:
        return []

    def groups(self, question: Question) -> dict[str, list[str]]:
        """The option groups a presentation may shuffle: group name → keys in the bank's order."""
        return {}

    # ---------------------------------------------------------------- answers

    def grade(self, question: Question, response: Any) -> bool:
        raise NotImplementedError

    def partial(self, question: Question, response: Any) -> tuple[int, int]:
        """Parts right out of parts: one part for most types, one per blank for multi-blank."""
        return (int(self.grade(question, response)), 1)

    def describe(self, question: Question, response: Any) -> str:
        """A response in words: the option's text for keyed types, else the value."""
        if response is None:
            return "no answer"
        return _number_text(response)

    def parse(self, question: Question, text: str) -> Any:
        """A typed answer as a response; ValueError saying what to type when it is not one."""
        raise NotImplementedError

    def complete(self, question: Question, response: Any) -> str | None:
        """None when ``response`` is a whole answer, else what is missing (for the UIs)."""
        return None if response is not None else "answer first"


def _number_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _keys_in(text: str) -> list[str]:
    keys = [k for k in text.lower().replace(",", " ").split() if k]
    if len(keys) == 1 and len(keys[0]) > 1 and keys[0].isalpha():
        keys = list(keys[0])  # "ac" means a and c
    return [k.rstrip(")") for k in keys]


def _option_keys(options: dict[str, str]) -> list[str]:
    return list(OPTION_KEYS[: len(options)])


class _Keyed(QuestionType):
    keyed = True

    def validate(self, raw: Mapping[str, Any], options: dict[str, str], blocks: list[str], fail: Fail) -> None:
        low, high = self.option_count
        if not low <= len(options) <= high or list(options) != _option_keys(options):
            raise fail(f"a {self.name} question has {low} to {high} options keyed a, b, c... in order",
                       key="options")

    def groups(self, question: Question) -> dict[str, list[str]]:
        return {OPTIONS: list(question.options)}

    def describe(self, question: Question, response: Any) -> str:
        if response is None:
            return "no answer"
        if isinstance(response, list):
            return ", ".join(f"{k}) {question.options.get(str(k), '?')}" for k in response)
        return f"{response}) {question.options.get(str(response), '?')}"


class _OneKey(_Keyed):
    def validate(self, raw: Mapping[str, Any], options: dict[str, str], blocks: list[str], fail: Fail) -> None:
        super().validate(raw, options, blocks, fail)
        if not isinstance(raw["answer"], str) or raw["answer"] not in options:
            raise fail(f"the answer {raw['answer']!r} is not one of the options' keys", key="answer")

    def correct_keys(self, question: Question) -> list[str]:
        return [question.answer]

    def grade(self, question: Question, response: Any) -> bool:
        return response is not None and str(response).strip().lower() == question.answer

    def parse(self, question: Question, text: str) -> Any:
        key = text.strip().lower().rstrip(")")
        if key in question.options:
            return key
        raise ValueError(f"type one of {', '.join(question.options)}")


class Single(_OneKey):
    name, label = "single", "single choice"
    plain_hint = "type the option's letter"


class FillBlank(_OneKey):
    name, label = "fill_blank", "fill the blank"
    plain_hint = "type the letter of the value for ____"

    def validate(self, raw: Mapping[str, Any], options: dict[str, str], blocks: list[str], fail: Fail) -> None:
        super().validate(raw, options, blocks, fail)
        if len(blocks) != 1 or blocks[0].count(BLANK) != 1:
            raise fail(f"a fill_blank prompt holds one ```yaml block with one '{BLANK}'", key="prompt")


class _KeyList(_Keyed):
    """Answers that are lists of keys."""

    def correct_keys(self, question: Question) -> list[str]:
        return list(question.answer)

    def _answer_list(self, raw: Mapping[str, Any], options: dict[str, str], fail: Fail) -> list[str]:
        answer = raw["answer"]
        if not isinstance(answer, list) or not all(isinstance(k, str) and k in options for k in answer) \
                or len(set(answer)) != len(answer):
            raise fail("the answer must be a list of distinct option keys", key="answer")
        return answer

    def _typed_keys(self, question: Question, text: str) -> list[str]:
        keys = _keys_in(text)
        unknown = [k for k in keys if k not in question.options]
        if unknown or not keys or len(set(keys)) != len(keys):
            raise ValueError(f"type distinct keys among {', '.join(question.options)}, e.g. 'a c'")
        return keys


class Multiple(_KeyList):
    name, label = "multiple", "multiple choice"
    option_count = (3, 6)

    def validate(self, raw: Mapping[str, Any], options: dict[str, str], blocks: list[str], fail: Fail) -> None:
        super().validate(raw, options, blocks, fail)
        answer = self._answer_list(raw, options, fail)
        if not 2 <= len(answer) < len(options):
            raise fail("a multiple-choice answer has at least two keys and fewer than all options", key="answer")
        # The exam says how many to choose; so does every multiple-choice question here, and the
        # UIs take exactly that many.
        word = COUNT_WORDS.get(len(answer), str(len(answer)))
        said = re.findall(r"Choose (\w+)\.", raw["prompt"])
        if said != [word]:
            raise fail(f"the prompt must say 'Choose {word}.' (the answer has {len(answer)} keys)", key="prompt")

    @staticmethod
    def wanted(question: Question) -> int:
        return len(question.answer)

    @property
    def plain_hint(self) -> str:  # type: ignore[override]
        return "type every right letter, e.g. 'a c'"

    def grade(self, question: Question, response: Any) -> bool:
        return isinstance(response, list) and sorted(str(k).lower() for k in response) == sorted(question.answer)

    def parse(self, question: Question, text: str) -> Any:
        keys = self._typed_keys(question, text)
        wanted = self.wanted(question)
        if len(keys) != wanted:
            raise ValueError(f"choose {COUNT_WORDS.get(wanted, wanted)}: type {wanted} letters, e.g. "
                             f"'{' '.join(list(question.options)[:wanted])}'")
        return keys

    def complete(self, question: Question, response: Any) -> str | None:
        chosen = len(response or [])
        wanted = self.wanted(question)
        if chosen == wanted:
            return None
        word = COUNT_WORDS.get(wanted, str(wanted))
        return f"choose {word} ({chosen} chosen)"


class Ordering(_KeyList):
    name, label = "ordering", "put in order"
    plain_hint = "type every letter in order, e.g. 'c a b'"

    def validate(self, raw: Mapping[str, Any], options: dict[str, str], blocks: list[str], fail: Fail) -> None:
        super().validate(raw, options, blocks, fail)
        if sorted(self._answer_list(raw, options, fail)) != _option_keys(options):
            raise fail("an ordering answer lists every option's key once", key="answer")

    @staticmethod
    def wanted(question: Question) -> int:
        return len(question.options)

    def grade(self, question: Question, response: Any) -> bool:
        return isinstance(response, list) and [str(k).lower() for k in response] == list(question.answer)

    def parse(self, question: Question, text: str) -> Any:
        keys = self._typed_keys(question, text)
        if len(keys) != self.wanted(question):
            raise ValueError(f"put every key in order: {', '.join(question.options)}")
        return keys

    def complete(self, question: Question, response: Any) -> str | None:
        left = self.wanted(question) - len(response or [])
        return None if left == 0 else f"put every option in order ({left} to go)"


class BuildList(Ordering):
    """The exam's drag-and-drop list: pick the steps that belong, from more than belong, and put
    them in order."""

    name, label = "build_list", "build the list"
    option_count = (4, 8)

    @property
    def plain_hint(self) -> str:  # type: ignore[override]
        return "type the letters of the steps that belong, in order, e.g. 'c a e'"

    def validate(self, raw: Mapping[str, Any], options: dict[str, str], blocks: list[str], fail: Fail) -> None:
        _Keyed.validate(self, raw, options, blocks, fail)
        answer = self._answer_list(raw, options, fail)
        if not 2 <= len(answer) < len(options):
            raise fail("a build_list answer orders at least two options and leaves at least one out",
                       key="answer")

    @staticmethod
    def wanted(question: Question) -> int:
        return len(question.answer)

    def parse(self, question: Question, text: str) -> Any:
        keys = self._typed_keys(question, text)
        wanted = self.wanted(question)
        if len(keys) != wanted:
            raise ValueError(f"the list has {wanted} steps: type {wanted} letters in order")
        return keys

    def complete(self, question: Question, response: Any) -> str | None:
        left = self.wanted(question) - len(response or [])
        return None if left == 0 else f"the list has {self.wanted(question)} steps ({left} to go)"


class WrongLine(QuestionType):
    name, label = "wrong_line", "find the wrong line"
    plain_hint = "type the number of the wrong line"

    def validate(self, raw: Mapping[str, Any], options: dict[str, str], blocks: list[str], fail: Fail) -> None:
        super().validate(raw, options, blocks, fail)
        answer = raw["answer"]
        if len(blocks) != 1:
            raise fail("a wrong_line prompt holds exactly one ```yaml block", key="prompt")
        lines = blocks[0].splitlines()
        if isinstance(answer, bool) or not isinstance(answer, int) or not 1 <= answer <= len(lines) \
                or not lines[answer - 1].strip():
            raise fail(f"line {answer} is not a non-blank line of the YAML block (1..{len(lines)})", key="answer")

    @staticmethod
    def line_count(question: Question) -> int:
        return len((question.yaml or "").splitlines())

    def grade(self, question: Question, response: Any) -> bool:
        if response is None or isinstance(response, bool):
            return False
        try:
            return float(response) == question.answer
        except (TypeError, ValueError):
            return False

    def describe(self, question: Question, response: Any) -> str:
        return "no answer" if response is None else f"line {response}"

    def parse(self, question: Question, text: str) -> Any:
        lines = self.line_count(question)
        try:
            number = float(text.strip())
        except ValueError:
            raise ValueError(f"type a line number, 1-{lines}") from None
        if not number.is_integer() or not 1 <= number <= lines:
            raise ValueError(f"type a line number, 1-{lines}")
        return int(number)


class Numeric(QuestionType):
    name, label = "numeric", "number"
    plain_hint = "type a number"

    def validate(self, raw: Mapping[str, Any], options: dict[str, str], blocks: list[str], fail: Fail) -> None:
        super().validate(raw, options, blocks, fail)
        if isinstance(raw["answer"], bool) or not isinstance(raw["answer"], (int, float)):
            raise fail("a numeric answer is a number", key="answer")

    def grade(self, question: Question, response: Any) -> bool:
        if response is None or isinstance(response, bool):
            return False
        try:
            number = float(response)
        except (TypeError, ValueError):
            return False
        return math.isclose(number, float(question.answer), abs_tol=question.tolerance) or number == question.answer

    def parse(self, question: Question, text: str) -> Any:
        try:
            number = float(text.strip())
        except ValueError:
            raise ValueError("type a number") from None
        if not math.isfinite(number):
            raise ValueError("type a number")
        return int(number) if number.is_integer() else number


class YesNo(QuestionType):
    """One proposed solution of a series: does it meet the goal? Answered once, in the exam not
    revisited."""

    name, label = "yes_no", "does the solution meet the goal?"
    plain_hint = "type y or n"

    def validate(self, raw: Mapping[str, Any], options: dict[str, str], blocks: list[str], fail: Fail) -> None:
        super().validate(raw, options, blocks, fail)
        if not isinstance(raw["answer"], bool):
            raise fail("a yes_no answer is yes or no", key="answer")

    def grade(self, question: Question, response: Any) -> bool:
        return isinstance(response, bool) and response == question.answer

    def describe(self, question: Question, response: Any) -> str:
        return "no answer" if response is None else ("Yes" if response else "No")

    def parse(self, question: Question, text: str) -> Any:
        word = text.strip().lower()
        if word in ("y", "yes"):
            return True
        if word in ("n", "no"):
            return False
        raise ValueError("type y (yes) or n (no)")


class MultiBlank(QuestionType):
    """Code with two or more numbered blanks (``___1___``), each filled from its own list."""

    name, label = "multi_blank", "complete the code"
    plain_hint = "type one letter per blank, in order, e.g. 'b a'"

    def validate(self, raw: Mapping[str, Any], options: dict[str, str], blocks: list[str], fail: Fail) -> None:
        super().validate(raw, options, blocks, fail)
        blanks = raw.get("blanks")
        if not isinstance(blanks, dict) or len(blanks) < 2:
            raise fail("a multi_blank question has 'blanks': two or more, keyed 1, 2, ...", key="blanks")
        labels = [str(k) for k in blanks]
        if labels != [str(n) for n in range(1, len(labels) + 1)]:
            raise fail("the blanks are keyed 1, 2, 3... in order", key="blanks")
        found = NUMBERED_BLANK.findall(raw["prompt"])
        if found != labels:
            raise fail(f"the prompt's code must hold ___1___ ... ___{len(labels)}___ once each, in order "
                       f"(found {', '.join(found) or 'none'})", key="prompt")
        for label, blank in blanks.items():
            if not isinstance(blank, dict) or set(blank) - {"options", "answer"} or \
                    not isinstance(blank.get("options"), dict):
                raise fail(f"blank {label} has 'options' (a..f) and 'answer'", key="blanks")
            keys = [str(k) for k in blank["options"]]
            if not 2 <= len(keys) <= 6 or keys != list(OPTION_KEYS[: len(keys)]):
                raise fail(f"blank {label} has 2 to 6 options keyed a, b, c... in order", key="blanks")
            if blank.get("answer") not in keys:
                raise fail(f"blank {label}'s answer {blank.get('answer')!r} is not one of its options' keys",
                           key="blanks")
        if raw.get("answer") != "blanks":
            raise fail("a multi_blank question's answer is 'blanks' (each blank has its own)", key="answer")

    def groups(self, question: Question) -> dict[str, list[str]]:
        return {blank.label: list(blank.options) for blank in question.blanks}

    def correct_keys(self, question: Question) -> list[str]:
        return [blank.answer for blank in question.blanks]

    def grade(self, question: Question, response: Any) -> bool:
        right, total = self.partial(question, response)
        return right == total

    def partial(self, question: Question, response: Any) -> tuple[int, int]:
        blanks = question.blanks
        if not isinstance(response, list) or len(response) != len(blanks):
            return (0, len(blanks))
        return (sum(str(given) == blank.answer for given, blank in zip(response, blanks)), len(blanks))

    def describe(self, question: Question, response: Any) -> str:
        if response is None:
            return "no answer"
        parts = []
        for index, blank in enumerate(question.blanks):
            given = response[index] if isinstance(response, list) and index < len(response) else None
            parts.append(f"[{blank.label}] " + (f"{given}) {blank.options.get(str(given), '?')}"
                                                if given else "no answer"))
        return "; ".join(parts)

    def parse(self, question: Question, text: str) -> Any:
        keys = _keys_in(text)
        blanks = question.blanks
        if len(keys) != len(blanks):
            raise ValueError(f"type {len(blanks)} letters, one per blank in order, e.g. 'b a'")
        for key, blank in zip(keys, blanks):
            if key not in blank.options:
                raise ValueError(f"blank {blank.label} takes one of {', '.join(blank.options)}")
        return keys

    def complete(self, question: Question, response: Any) -> str | None:
        missing = [b.label for i, b in enumerate(question.blanks)
                   if not isinstance(response, list) or i >= len(response) or not response[i]]
        return None if not missing else f"fill every blank ({', '.join(missing)} to go)"


TYPES: dict[str, QuestionType] = {t.name: t for t in (
    Single(), Multiple(), FillBlank(), Ordering(), BuildList(), WrongLine(), Numeric(), YesNo(), MultiBlank())}


def type_of(question: Question) -> QuestionType:
    return TYPES[question.type]


# ----------------------------------------------------------------------------- presentation


@dataclass(frozen=True)
class Presentation:
    """A question as one presentation shows it: each option group in ``orders`` (the bank's keys
    in the order shown). ``shown`` is the question relabeled a, b, c... in that order; responses
    the UI gets are in shown keys, the store keeps the bank's."""

    question: Question
    orders: Mapping[str, tuple[str, ...]]

    @classmethod
    def natural(cls, question: Question) -> Presentation:
        return cls(question, {g: tuple(keys) for g, keys in type_of(question).groups(question).items()})

    @classmethod
    def shuffled(cls, question: Question, rng: random.Random) -> Presentation:
        orders = {}
        for group, keys in type_of(question).groups(question).items():
            keys = list(keys)
            rng.shuffle(keys)
            orders[group] = tuple(keys)
        return cls(question, orders)

    @classmethod
    def restored(cls, question: Question, saved: Mapping[str, Sequence[str]] | None,
                 rng: random.Random | None) -> Presentation:
        """The order saved with an exam; when there is none (or it no longer fits the question), a
        fresh shuffle, or the bank's order without ``rng``."""
        groups = type_of(question).groups(question)
        if saved and set(saved) == set(groups) and all(sorted(saved[g]) == sorted(groups[g]) for g in groups):
            return cls(question, {g: tuple(saved[g]) for g in groups})
        return cls.shuffled(question, rng) if rng is not None else cls.natural(question)

    def to_json(self) -> dict[str, list[str]]:
        return {g: list(keys) for g, keys in self.orders.items()}

    def _shown_key(self, group: str) -> dict[str, str]:
        """bank key → shown key."""
        return {key: OPTION_KEYS[i] for i, key in enumerate(self.orders.get(group, ()))}

    def _bank_key(self, group: str) -> dict[str, str]:
        return {OPTION_KEYS[i]: key for i, key in enumerate(self.orders.get(group, ()))}

    @property
    def shown(self) -> Question:
        return _relabel(self)

    def to_bank(self, response: Any) -> Any:
        return self._map(response, self._bank_key)

    def to_shown(self, response: Any) -> Any:
        return self._map(response, self._shown_key)

    def _map(self, response: Any, table: Callable[[str], dict[str, str]]) -> Any:
        if response is None or not self.orders:
            return response
        if self.question.type == "multi_blank":
            if not isinstance(response, list):
                return response
            return [table(b.label).get(str(k), k) if k else k for k, b in zip(response, self.question.blanks)]
        mapping = table(OPTIONS)
        if isinstance(response, list):
            return [mapping.get(str(k), k) for k in response]
        return mapping.get(str(response), response)


def _relabel(presentation: Presentation) -> Question:
    question = presentation.question
    if not presentation.orders:
        return question
    if question.type == "multi_blank":
        blanks = []
        for blank in question.blanks:
            order = presentation.orders[blank.label]
            shown = presentation._shown_key(blank.label)
            blanks.append(Blank(blank.label, {OPTION_KEYS[i]: blank.options[k] for i, k in enumerate(order)},
                                shown[blank.answer]))
        return dataclasses.replace(question, blanks=tuple(blanks))
    order = presentation.orders[OPTIONS]
    shown = presentation._shown_key(OPTIONS)
    answer = question.answer
    answer = [shown[k] for k in answer] if isinstance(answer, list) else shown[answer]
    return dataclasses.replace(
        question,
        options={OPTION_KEYS[i]: question.options[k] for i, k in enumerate(order)},
        answer=answer,
        wrong={shown[k]: why for k, why in question.wrong.items()},
        options_yaml={shown[k]: text for k, text in question.options_yaml.items()},
    )
