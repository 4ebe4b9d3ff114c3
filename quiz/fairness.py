"""How much a question's form gives its answer away, measured over the bank as written (before
the app shuffles the options). A learner who answers "a" every time, or always picks the longest
option, should do no better than chance; these figures say whether the bank lets them.

    position share     of all correct option keys, the share at each position (a, b, c...)
    longest share      of one-answer questions, the share whose correct option is the longest
    length tells       questions whose correct option is at least 1.4 times as long as any wrong
                       one (for several correct options: the shortest of them)

And two kinds of question that have no options, where a position can still give the answer away:

    series             a yes/no series' solutions answered by their place alone ("Yes to the
                       first, No to the rest", "Yes to the last", "always No"...): the best such
                       rule's share of right answers over every solution
    wrong lines        where a wrong-line question's keyed line sits in its YAML block: the share
                       in the bottom half (a block's middle line counts half to each), the share on
                       the last line, and the best "always pick line k (from the start or the end,
                       or at a fraction of the block)" rule against what guessing a line scores

The app shuffles a series' solutions at each showing too; the bank is held to the limits as
written. The bank test holds them to limits (LIMITS); ``aml-quiz --check`` prints them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from .bank import Question
from .qtypes import OPTION_KEYS

TELL_RATIO = 1.4
LIMITS = {"position": 0.30, "longest": 0.35, "tells": 5,
          # a yes/no series answered by the solutions' places alone
          "series_rule": 0.60,
          # a wrong-line question answered by the keyed line's place: the top or bottom half, and
          # one line (as a multiple of what guessing a line scores)
          "wrong_line_half": 0.60, "wrong_line_position": 2.0}
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


# ----------------------------------------------------------------------------- yes/no series

Rule = Callable[[int, int], bool]


def _series_rules() -> dict[str, Rule]:
    """Ways to answer a series by place alone: (place from 0, solutions) -> Yes?"""
    rules: dict[str, Rule] = {"always Yes": lambda i, n: True, "always No": lambda i, n: False,
                              "Yes, No, Yes...": lambda i, n: i % 2 == 0, "No, Yes, No...": lambda i, n: i % 2 == 1}
    places = {0: "first", 1: "second", 2: "third"}
    for k, word in places.items():
        rules[f"Yes to the {word}, No to the rest"] = lambda i, n, k=k: i == k
        rules[f"No to the {word}, Yes to the rest"] = lambda i, n, k=k: i != k
        end = "last" if k == 0 else f"{word} from last"
        rules[f"Yes to the {end}, No to the rest"] = lambda i, n, k=k: i == n - 1 - k
        rules[f"No to the {end}, Yes to the rest"] = lambda i, n, k=k: i != n - 1 - k
    return rules


SERIES_RULES = _series_rules()


@dataclass(frozen=True)
class SeriesFairness:
    """The bank's series as written: each series' answers in order, and how each rule scores."""

    answers: tuple[tuple[bool, ...], ...]

    @property
    def solutions(self) -> int:
        return sum(len(a) for a in self.answers)

    def score(self, rule: Rule) -> int:
        return sum(rule(i, len(a)) == yes for a in self.answers for i, yes in enumerate(a))

    @property
    def best_rule(self) -> tuple[str, float]:
        if not self.solutions:
            return "always Yes", 0.0
        name = max(SERIES_RULES, key=lambda r: self.score(SERIES_RULES[r]))
        return name, self.score(SERIES_RULES[name]) / self.solutions

    def share(self, name: str) -> float:
        return self.score(SERIES_RULES[name]) / self.solutions if self.solutions else 0.0

    @property
    def first_yes(self) -> int:
        return sum(a[0] for a in self.answers if a)

    @property
    def within_limits(self) -> bool:
        return self.best_rule[1] <= LIMITS["series_rule"]

    def lines(self) -> list[str]:
        name, best = self.best_rule
        return [f"yes/no series as written: {len(self.answers)} series open with Yes in {self.first_yes}; "
                f"answered by place, \"Yes to the first, No to the rest\" "
                f"{self.share('Yes to the first, No to the rest'):.0%}, \"always No\" {self.share('always No'):.0%}; "
                f"best rule \"{name}\" {self.score(SERIES_RULES[name])} of {self.solutions} ({best:.0%}, "
                f"limit {LIMITS['series_rule']:.0%})"]


def measure_series(questions: Iterable[Question]) -> SeriesFairness:
    found: dict[str, list[Question]] = {}
    for question in questions:
        if question.group is not None and question.group.kind == "series" and question.type == "yes_no":
            found.setdefault(question.group.id, []).append(question)
    return SeriesFairness(tuple(tuple(bool(q.answer) for q in sorted(members, key=lambda q: q.index))
                                for members in found.values()))


# ----------------------------------------------------------------------------- wrong lines

FRACTIONS = tuple(round(0.1 * n, 1) for n in range(1, 10))
FROM_EDGE = 5


@dataclass(frozen=True)
class Block:
    """A wrong-line question's YAML block: its non-blank line numbers and the keyed one."""

    id: str
    lines: tuple[int, ...]
    answer: int

    @property
    def bottom(self) -> float:
        """1 when the keyed line is in the bottom half of the lines, 0.5 on the middle line."""
        place = self.lines.index(self.answer)
        middle = (len(self.lines) - 1) / 2
        return 1.0 if place > middle else 0.5 if place == middle else 0.0

    def pick(self, rule: tuple[str, float]) -> int | None:
        how, k = rule
        count = len(self.lines)
        if how == "from start":
            place = int(k) - 1
        elif how == "from end":
            place = count - 1 - int(k)
        else:
            place = round(k * (count - 1))
        return self.lines[place] if 0 <= place < count else None


def _position_rules() -> list[tuple[str, float]]:
    return ([("from start", k) for k in range(1, FROM_EDGE + 1)] + [("from end", k) for k in range(FROM_EDGE)]
            + [("fraction", f) for f in FRACTIONS])


def rule_text(rule: tuple[str, float]) -> str:
    how, k = rule
    if how == "from start":
        return f"line {int(k)}"
    if how == "from end":
        return "the last line" if not k else f"line {int(k)} from the last"
    return f"the line {k:.0%} of the way down"


@dataclass(frozen=True)
class WrongLineFairness:
    blocks: tuple[Block, ...]

    @property
    def count(self) -> int:
        return len(self.blocks)

    @property
    def bottom_share(self) -> float:
        return sum(b.bottom for b in self.blocks) / self.count if self.count else 0.0

    @property
    def half_share(self) -> float:
        """The better of "always the top half" and "always the bottom half"."""
        return max(self.bottom_share, 1 - self.bottom_share) if self.count else 0.0

    @property
    def last_share(self) -> float:
        return self.hits(("from end", 0)) / self.count if self.count else 0.0

    def hits(self, rule: tuple[str, float]) -> int:
        return sum(b.pick(rule) == b.answer for b in self.blocks)

    @property
    def best_position(self) -> tuple[tuple[str, float], float]:
        if not self.count:
            return ("from end", 0), 0.0
        rule = max(_position_rules(), key=self.hits)
        return rule, self.hits(rule) / self.count

    @property
    def chance(self) -> float:
        """What guessing any line of each block scores, on average."""
        return sum(1 / len(b.lines) for b in self.blocks) / self.count if self.count else 0.0

    @property
    def position_ratio(self) -> float:
        return self.best_position[1] / self.chance if self.chance else 0.0

    @property
    def within_limits(self) -> bool:
        return self.half_share <= LIMITS["wrong_line_half"] and self.position_ratio <= LIMITS["wrong_line_position"]

    def lines(self) -> list[str]:
        rule, best = self.best_position
        return [f"wrong lines: {self.count} questions, keyed in the bottom half {self.bottom_share:.0%} "
                f"(best half {self.half_share:.0%}, limit {LIMITS['wrong_line_half']:.0%}), on the last line "
                f"{self.last_share:.0%}; best one-line rule \"{rule_text(rule)}\" {self.hits(rule)} of {self.count} "
                f"({best:.0%}, {self.position_ratio:.1f}x guessing a line's {self.chance:.0%}, limit "
                f"{LIMITS['wrong_line_position']:.1f}x)"]


def measure_wrong_lines(questions: Iterable[Question]) -> WrongLineFairness:
    blocks = []
    for question in questions:
        if question.type != "wrong_line" or question.yaml is None:
            continue
        lines = tuple(n for n, text in enumerate(question.yaml.splitlines(), 1) if text.strip())
        if question.answer in lines:
            blocks.append(Block(question.id, lines, int(question.answer)))
    return WrongLineFairness(tuple(blocks))


def report(questions: Sequence[Question]) -> list[str]:
    """Every fairness figure, one line each, as ``aml-quiz --check`` prints them."""
    return measure(questions).lines() + measure_series(questions).lines() + measure_wrong_lines(questions).lines()
