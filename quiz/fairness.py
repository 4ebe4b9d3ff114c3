"""How much a question's form gives its answer away, measured over the bank as written (before
the app shuffles the options). A learner who answers "a" every time, or always picks the longest
option, should do no better than chance; these figures say whether the bank lets them.

    position share     of all correct option keys, the share at each position (a, b, c...)
    longest share      of one-answer questions, the share whose correct option is the longest
    length tells       questions whose correct option is at least 1.4 times as long as any wrong
                       one (for several correct options: the shortest of them)

The bank test holds them to limits (LIMITS); ``aml-quiz --check`` prints them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .bank import Question
from .qtypes import OPTION_KEYS

TELL_RATIO = 1.4
LIMITS = {"position": 0.30, "longest": 0.35, "tells": 5}
_MARKUP = re.compile(r"[`*]")


def _length(text: str) -> int:
    return len(_MARKUP.sub("", text).strip())


@dataclass(frozen=True)
class Fairness:
    positions: dict[str, int]
    one_answer: int
    longest: int
    tells: tuple[str, ...]

    @property
    def position_share(self) -> dict[str, float]:
        total = sum(self.positions.values())
        return {k: n / total for k, n in self.positions.items()} if total else {}

    @property
    def worst_position(self) -> tuple[str, float]:
        shares = self.position_share
        key = max(shares, key=shares.__getitem__) if shares else "a"
        return key, shares.get(key, 0.0)

    @property
    def longest_share(self) -> float:
        return self.longest / self.one_answer if self.one_answer else 0.0

    @property
    def within_limits(self) -> bool:
        return (self.worst_position[1] <= LIMITS["position"] and self.longest_share <= LIMITS["longest"]
                and len(self.tells) <= LIMITS["tells"])

    def lines(self) -> list[str]:
        shares = self.position_share
        key, worst = self.worst_position
        return [
            "answer positions: " + ", ".join(f"{k} {shares[k]:.0%}" for k in sorted(shares))
            + f" (most: {key} {worst:.0%}, limit {LIMITS['position']:.0%})",
            f"longest option is the answer: {self.longest} of {self.one_answer} ({self.longest_share:.0%}, "
            f"limit {LIMITS['longest']:.0%})",
            f"correct option >= {TELL_RATIO}x every wrong one: {len(self.tells)} (limit {LIMITS['tells']})"
            + (f": {', '.join(self.tells)}" if self.tells else ""),
        ]


def _option_groups(question: Question) -> list[tuple[dict[str, str], list[str]]]:
    """(options, correct keys) for each keyed choice the question asks for."""
    if question.type in ("single", "fill_blank", "multiple"):
        return [(question.options, question.correct_keys)]
    if question.type == "multi_blank":
        return [(blank.options, [blank.answer]) for blank in question.blanks]
    return []


def measure(questions: Iterable[Question]) -> Fairness:
    positions = {k: 0 for k in OPTION_KEYS[:6]}
    one_answer = longest = 0
    tells: list[str] = []
    for question in questions:
        for options, right in _option_groups(question):
            for key in right:
                positions[key] = positions.get(key, 0) + 1
            lengths = {k: _length(v) for k, v in options.items()}
            wrong = [lengths[k] for k in options if k not in right]
            if not wrong:
                continue
            if len(right) == 1:
                one_answer += 1
                if lengths[right[0]] >= max(lengths.values()) and \
                        sum(1 for n in lengths.values() if n == lengths[right[0]]) == 1:
                    longest += 1
            if min(lengths[k] for k in right) >= TELL_RATIO * max(wrong) and question.id not in tells:
                tells.append(question.id)
    return Fairness({k: n for k, n in positions.items() if n or k in "abcd"}, one_answer, longest, tuple(tells))
