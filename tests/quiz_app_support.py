"""Shared by the quiz tests: the fixed test bank, a clock the test moves, and a trainer over a
fresh progress folder (the `clock` and `trainer` fixtures)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from quiz.bank import load_bank
from quiz.engine import Trainer
from quiz.store import Progress

BANK_DIR = Path(__file__).parent / "data" / "quiz_bank"
# 2027-01-15 12:00 UTC, a Friday: far from midnight, so "today" is the same day everywhere.
START = 1_800_014_400.0
DAY = 86400.0


class FakeClock:
    """The trainer's clock: a list holding the time, moved only by the test."""

    def __init__(self, start: float = START) -> None:
        self.now = [start]

    def __call__(self) -> float:
        return self.now[0]

    def advance(self, seconds: float) -> None:
        self.now[0] += seconds


def make_trainer(data_dir: Path, clock: FakeClock, seed: int = 7) -> Trainer:
    return Trainer(load_bank([BANK_DIR]), Progress(data_dir), clock=clock, seed=seed)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def trainer(tmp_path: Path, clock: FakeClock) -> Trainer:
    return make_trainer(tmp_path / "data", clock)


@pytest.fixture
def utc() -> Iterator[None]:
    """Local time is UTC (stats and the calendar show local dates and times)."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if old is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = old
    time.tzset()


def answer_keys(question, correct: bool = True) -> list[str]:
    """The keys that answer ``question`` (right or wrong) on its question screen, Enter excluded.
    ``question`` is the question as shown (its options in the shown order)."""
    kind = question.type
    if kind in ("wrong_line", "numeric"):
        value = question.answer if correct else question.answer + 1
        text = str(int(value)) if float(value).is_integer() else str(value)
        return list(text)
    if kind == "yes_no":
        return ["y" if question.answer == correct else "n"]
    if kind in ("single", "fill_blank"):
        if correct:
            return [question.answer]
        return [next(k for k in question.options if k != question.answer)]
    if kind == "multiple":  # as many as asked, one of them wrong
        other = next(k for k in question.options if k not in question.answer)
        return list(question.answer) if correct else list(question.answer[:-1]) + [other]
    if kind == "multi_blank":
        keys = [blank.answer for blank in question.blanks]
        if not correct:
            keys[0] = next(k for k in question.blanks[0].options if k != keys[0])
        return keys
    order = list(question.answer)
    return order if correct else order[::-1]
