"""No spec, however malformed, makes a rule crash: every value of the valid fixtures and golden
cases swapped for a value of another type ([], {}, None, numbers, a bool, an empty, a long and an
odd string, a nested list of mappings) is linted without an internal error. The suite runs a
fixed-seed sample; `python tools/value_swaps.py` runs every swap and prints how many it ran."""

from __future__ import annotations

import random

import pytest

import value_swaps

SAMPLE = 4000


def _sample() -> list[tuple]:
    every = list(value_swaps.cases())
    chosen = random.Random(20261204).sample(every, min(SAMPLE, len(every)))
    # The swaps that crashed before, always in: a list or a mapping as an input's type, and a
    # Dockerfile name over the file system's 255-byte limit.
    for path, where, index in every:
        if (where[-1] == "type" and "inputs" in where and index in (0, 1)) or (
                where[-1] == "dockerfile_path" and value_swaps.SWAPS[index] == "x" * 300):
            chosen.append((path, where, index))
    return chosen


def test_the_sample_covers_every_swap_and_many_files() -> None:
    cases = _sample()
    assert {index for _, _, index in cases} == set(range(len(value_swaps.SWAPS)))
    assert len({path for path, _, _ in cases}) > 300


@pytest.mark.parametrize("chunk", range(8))
def test_no_swapped_value_makes_a_rule_crash(chunk: int) -> None:
    cases = _sample()
    failures = []
    for path, where, index in cases[chunk::8]:
        text, report = value_swaps.lint_swap(path, where, index)
        for message in value_swaps.crashes(report):
            failures.append(f"{path.name} {list(where)} = {value_swaps.SWAPS[index]!r:.40}: {message:.300}")
    assert not failures, "\n".join(failures[:20])
