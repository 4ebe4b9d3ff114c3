"""The early-termination policies (runner/sweep/policies.py) against tables worked out by hand
and against properties that follow from the rules as the module states them.

Each table is a small fixed set of histories and the cancellations a sweep would see, run the
way the sweep loop runs them (:func:`simulate`). The expected cancellations and numbers are
computed by hand in the comments next to them, never by calling the code under test.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from runner.sweep.policies import (
    POLICIES,
    Policy,
    Stop,
    bandit,
    is_due,
    median_stopping,
    policy_from_spec,
    truncation_selection,
)

SETTINGS = settings(max_examples=int(os.environ.get("AMLLAB_EXAMPLES", "150")), deadline=None)
ROOT = Path(__file__).resolve().parents[2]
MODULE = ROOT / "runner" / "sweep" / "policies.py"


def simulate(policy: Policy, histories: Mapping[str, Sequence[float]], goal: str) -> dict[tuple[str, int], Stop]:
    """Run ``policy`` over whole histories as the sweep loop does: for each interval N, each trial
    still running that has logged N values, in trial order. A canceled trial keeps its first N
    values for every later evaluation; a trial that logged all its values without being
    canceled counts as finished from the next interval on."""
    live = {name: list(values) for name, values in histories.items()}
    canceled: set[str] = set()
    stops: dict[tuple[str, int], Stop] = {}
    for n in range(1, max(len(values) for values in histories.values()) + 1):
        finished = {name for name, values in histories.items() if name not in canceled and len(values) < n}
        for name in histories:
            if name in canceled or len(live[name]) < n:
                continue
            stop = policy.check(live, name, n, goal=goal, metric="m", finished=finished)
            if stop is not None:
                assert stop.policy == policy.type and stop.interval == n
                canceled.add(name)
                live[name] = live[name][:n]
                stops[(name, n)] = stop
    return stops


def assert_stops(stops: dict[tuple[str, int], Stop], expected: dict[tuple[str, int], dict[str, Any]]) -> None:
    assert sorted(stops) == sorted(expected)
    for key, numbers in expected.items():
        for name, value in numbers.items():
            got = stops[key].numbers[name]
            if isinstance(value, float):
                # The hand values are written to 4 decimals.
                assert got == pytest.approx(value, abs=1e-4), (key, name)
            else:
                assert got == value, (key, name)
        assert f"at interval {key[1]}" in stops[key].reason


# ----------------------------------------------------------------------------- is_due
@pytest.mark.parametrize(("every", "delay", "due"), [
    (1, 5, [5, 6, 7, 8, 9, 10]),
    (2, 5, [6, 8, 10]),
    (100, 200, [200, 300, 400]),
    (1, 0, list(range(1, 11))),
    (0, 0, list(range(1, 11))),        # 0 (the SDK's default) counts as 1
    (0, 3, [3, 4, 5, 6, 7, 8, 9, 10]),
    (None, None, list(range(1, 11))),
    (3, None, [3, 6, 9]),
])
def test_is_due_table(every: int | None, delay: int | None, due: list[int]) -> None:
    upto = max(due) if max(due) > 10 else 10
    assert [n for n in range(1, upto + 1) if is_due(n, every, delay)] == [n for n in due if n <= upto]


def test_is_due_rejects_nonsense() -> None:
    for interval, every, delay in [(0, 1, 0), (-1, 1, 0), (1, -1, 0), (1, 1, -2)]:
        with pytest.raises(ValueError):
            is_due(interval, every, delay)


# ----------------------------------------------------------------------------- bandit
BANDIT_FACTOR_MAX = {
    "t1": [0.50, 0.60, 0.70, 0.80, 0.82, 0.84],
    "t2": [0.45, 0.55, 0.60, 0.65, 0.70, 0.72],
    "t3": [0.48, 0.52, 0.60, 0.67, 0.68, 0.69],
    "t4": [0.40, 0.45, 0.50, 0.55, 0.60, 0.65],
    "t5": [0.55, 0.58, 0.59],
}
# slack_factor 0.2, delay 2, maximize; threshold = B/1.2 over trials with >= N values.
# N=2: bests t1 .60 t2 .55 t3 .52 t4 .45 t5 .58; B=.60 (t1), thr .50: t4 .45 canceled.
# N=3: t1 .70 t2 .60 t3 .60 t5 .59 (t4 cut to 2 values); B=.70, thr .5833: all kept.
# N=4: t1 .80 t2 .65 t3 .67 (t5 has 3); B=.80, thr .6667 (the docs' example): t2 .65
#      canceled, t3 .67 kept.
# N=5: t1 .82 t3 .68; B=.82, thr .6833: t3 canceled.   N=6: t1 alone, kept.
BANDIT_FACTOR_MAX_STOPS = {
    ("t4", 2): {"best": 0.45, "threshold": 0.5, "reference": 0.60, "reference_trial": "t1"},
    ("t2", 4): {"best": 0.65, "threshold": 0.6667, "reference": 0.80, "reference_trial": "t1"},
    ("t3", 5): {"best": 0.68, "threshold": 0.6833, "reference": 0.82, "reference_trial": "t1"},
}
# The same trials with delay 0:
# N=1: t1 .50 t2 .45 t3 .48 t4 .40 t5 .55; B=.55 (t5), thr .4583: t2 and t4 canceled.
# N=2: t1 .60 t3 .52 t5 .58; thr .50: kept.  N=3: t1 .70 t3 .60 t5 .59; thr .5833: kept.
# N=4: t1 .80 t3 .67; thr .6667: kept.  N=5: t1 .82 t3 .68; thr .6833: t3 canceled.
BANDIT_FACTOR_MAX_NO_DELAY_STOPS = {
    ("t2", 1): {"best": 0.45, "threshold": 0.4583, "reference": 0.55, "reference_trial": "t5"},
    ("t4", 1): {"best": 0.40, "threshold": 0.4583, "reference": 0.55, "reference_trial": "t5"},
    ("t3", 5): {"best": 0.68, "threshold": 0.6833, "reference": 0.82, "reference_trial": "t1"},
}

BANDIT_FACTOR_MIN = {
    "m1": [1.00, 0.80, 0.60, 0.50, 0.45, 0.40],
    "m2": [1.10, 0.90, 0.75, 0.62, 0.60, 0.58],
    "m3": [1.20, 0.95, 0.70, 0.58, 0.55, 0.50],
    "m4": [1.30, 1.20, 1.00, 0.90, 0.80, 0.70],
    "m5": [0.90, 0.85, 0.72],
}
# slack_factor 0.2, delay 2, minimize; threshold = B*1.2.
# N=2: bests m1 .80 m2 .90 m3 .95 m4 1.20 m5 .85; B=.80 (m1), thr .96: m4 canceled, m3 kept.
# N=3: m1 .60 m2 .75 m3 .70 m5 .72; B=.60, thr .72: m2 canceled; m5 .72 on it, kept.
# N=4: m1 .50 m3 .58; thr .60: kept.  N=5: m1 .45 m3 .55; thr .54: m3 canceled.
BANDIT_FACTOR_MIN_STOPS = {
    ("m4", 2): {"best": 1.20, "threshold": 0.96, "reference": 0.80, "reference_trial": "m1"},
    ("m2", 3): {"best": 0.75, "threshold": 0.72, "reference": 0.60, "reference_trial": "m1"},
    ("m3", 5): {"best": 0.55, "threshold": 0.54, "reference": 0.45, "reference_trial": "m1"},
}

BANDIT_AMOUNT_MAX = {
    "a1": [0.50, 0.70, 0.75, 0.80, 0.85, 0.90],
    "a2": [0.55, 0.70, 0.72, 0.74, 0.76, 0.78],
    "a3": [0.40, 0.60, 0.66, 0.70, 0.70, 0.70],
    "a4": [0.30, 0.55, 0.90, 0.90, 0.90, 0.90],
    "a5": [0.60, 0.65, 0.70, 0.71],
}
# slack_amount 0.1, delay 2, maximize; threshold = B - 0.1.
# N=2: bests a1 .70 a2 .70 a3 .60 a4 .55 a5 .65; B=.70 held by a1 and a2, a1 named (first);
#      thr .60: a3 on it, kept; a4 canceled (its later .90 never counts: cut to 2 values).
# N=3: a1 .75 a2 .72 a3 .66 a5 .70; thr .65: kept.
# N=4: a1 .80 a2 .74 a3 .70 a5 .71; thr .70 (0.8 - 0.1 is 0.7000000000000001 in floats):
#      a3 on it, kept.
# N=5: a1 .85 a2 .76 a3 .70; thr .75: a3 canceled.  N=6: a1 .90 a2 .78; thr .80: a2 canceled.
BANDIT_AMOUNT_MAX_STOPS = {
    ("a4", 2): {"best": 0.55, "threshold": 0.60, "reference": 0.70, "reference_trial": "a1"},
    ("a3", 5): {"best": 0.70, "threshold": 0.75, "reference": 0.85, "reference_trial": "a1"},
    ("a2", 6): {"best": 0.78, "threshold": 0.80, "reference": 0.90, "reference_trial": "a1"},
}

BANDIT_AMOUNT_MIN = {
    "a1": [0.50, 0.30, 0.25, 0.20, 0.15, 0.10],
    "a2": [0.45, 0.30, 0.28, 0.26, 0.24, 0.22],
    "a3": [0.60, 0.40, 0.34, 0.30, 0.30, 0.30],
    "a4": [0.70, 0.45, 0.10, 0.10, 0.10, 0.10],
    "a5": [0.40, 0.35, 0.30, 0.29],
}
# slack_amount 0.1, delay 2, minimize; threshold = B + 0.1.
# N=2: bests a1 .30 a2 .30 a3 .40 a4 .45 a5 .35; B=.30 (a1 first), thr .40: a3 on it,
#      kept; a4 canceled.
# N=3: a1 .25 a2 .28 a3 .34 a5 .30; thr .35: kept.  N=4: a1 .20 a2 .26 a3 .30 a5 .29;
#      thr .30: a3 on it, kept.
# N=5: a1 .15 a2 .24 a3 .30; thr .25: a3 canceled.  N=6: a1 .10 a2 .22; thr .20: a2 canceled.
BANDIT_AMOUNT_MIN_STOPS = {
    ("a4", 2): {"best": 0.45, "threshold": 0.40, "reference": 0.30, "reference_trial": "a1"},
    ("a3", 5): {"best": 0.30, "threshold": 0.25, "reference": 0.15, "reference_trial": "a1"},
    ("a2", 6): {"best": 0.22, "threshold": 0.20, "reference": 0.10, "reference_trial": "a1"},
}


@pytest.mark.parametrize(("histories", "goal", "slack", "delay", "expected"), [
    (BANDIT_FACTOR_MAX, "maximize", {"slack_factor": 0.2}, 2, BANDIT_FACTOR_MAX_STOPS),
    (BANDIT_FACTOR_MAX, "maximize", {"slack_factor": 0.2}, 0, BANDIT_FACTOR_MAX_NO_DELAY_STOPS),
    (BANDIT_FACTOR_MIN, "minimize", {"slack_factor": 0.2}, 2, BANDIT_FACTOR_MIN_STOPS),
    (BANDIT_AMOUNT_MAX, "maximize", {"slack_amount": 0.1}, 2, BANDIT_AMOUNT_MAX_STOPS),
    (BANDIT_AMOUNT_MIN, "minimize", {"slack_amount": 0.1}, 2, BANDIT_AMOUNT_MIN_STOPS),
], ids=["factor-max", "factor-max-no-delay", "factor-min", "amount-max", "amount-min"])
def test_bandit_table(histories: dict, goal: str, slack: dict, delay: int, expected: dict) -> None:
    policy = Policy("bandit", evaluation_interval=1, delay_evaluation=delay, **slack)
    stops = simulate(policy, histories, goal)
    assert_stops(stops, expected)
    for stop in stops.values():
        assert set(stop.numbers) == {"best", "threshold", "reference", "reference_trial", *slack}


def test_bandit_docs_example() -> None:
    # B = 0.8, slack_factor 0.2: threshold 0.8/1.2 = 0.6667; 0.65 is canceled, 0.67 kept.
    histories = {"sweep_1": [0.5, 0.8], "sweep_2": [0.6, 0.65], "sweep_3": [0.67, 0.6]}
    stop = bandit(histories, "sweep_2", 2, goal="maximize", slack_factor=0.2, metric="auc")
    assert stop is not None
    assert stop.reason == ("bandit policy at interval 2: best auc so far 0.65 < 0.8/(1+0.2) = 0.6667, "
                           "where 0.8 is the best auc of any trial up to interval 2 (trial sweep_1)")
    assert bandit(histories, "sweep_3", 2, goal="maximize", slack_factor=0.2) is None
    assert stop in {stop}       # numbers (a dict) stays out of the hash


def test_bandit_reference_counts_only_trials_with_n_values() -> None:
    # At interval 3 only t has 3 values: B = .70 (t itself), kept. "short" reached .95 but
    # logged only 2 values; counted, it would give .95/1.2 = .7917 and cancel t.
    histories = {"short": [0.90, 0.95], "t": [0.50, 0.60, 0.70]}
    assert bandit(histories, "t", 3, goal="maximize", slack_factor=0.2) is None
    # At interval 2 both count: B = .95 (short), threshold .7917, t's best .60 goes.
    stop = bandit(histories, "t", 2, goal="maximize", slack_factor=0.2)
    assert stop is not None and stop.numbers["reference_trial"] == "short"
    assert stop.numbers["threshold"] == pytest.approx(0.7917, abs=1e-4)


def test_bandit_factor_is_literal_for_negative_values() -> None:
    # B = -1, s = 0.2: threshold -1/1.2 = -0.8333 lies above B, so even the best trial goes.
    stop = bandit({"a": [-1.0], "b": [-2.0]}, "a", 1, goal="maximize", slack_factor=0.2)
    assert stop is not None and stop.numbers["threshold"] == pytest.approx(-0.8333, abs=1e-4)


def test_bandit_needs_exactly_one_slack() -> None:
    for slacks in ({}, {"slack_factor": 0.1, "slack_amount": 0.1}, {"slack_factor": 0}, {"slack_amount": -1}):
        with pytest.raises(ValueError):
            bandit({"a": [1.0]}, "a", 1, goal="maximize", **slacks)


# ----------------------------------------------------------------------------- median stopping
MEDIAN_MAX = {
    "m1": [0.60, 0.70, 0.80, 0.85, 0.90, 0.92],
    "m2": [0.50, 0.60, 0.62, 0.64, 0.66, 0.68],
    "m3": [0.40, 0.60, 0.52, 0.53, 0.54, 0.55],
    "m4": [0.20, 0.30, 0.40, 0.40, 0.40, 0.40],
    "m5": [0.70, 0.80, 0.90],
    "m6": [0.60, 0.70, 0.78, 0.84, 0.88, 0.90],
}
# delay 2, maximize. Running averages over the first min(N, len) values; median of 6 is the
# mean of the 3rd and 4th.
# N=2: avgs m1 .65 m2 .55 m3 .50 m4 .25 m5 .75 m6 .65 -> .25 .50 .55 .65 .65 .75, M=.60.
#      bests m2 .60 and m3 .60 tie with M: kept. m4 .30 canceled.
# N=3: avgs m1 .70 m2 1.72/3=.5733 m3 1.52/3=.5067 m4 .25 (2 values) m5 .80 m6 2.08/3=.6933
#      -> .25 .5067 .5733 .6933 .70 .80, M=3.8/6=.6333: m2 .62 and m3 .60 canceled.
# N=4: avgs m1 2.95/4=.7375 m6 2.92/4=.73, m2 .5733 m3 .5067 m4 .25 m5 .80 (fewer than 4
#      values each) -> M=(.5733+.73)/2=.6517: m1 .85 and m6 .84 kept.
# N=5: M=(.5733+.76)/2=.6667; N=6: M=(.5733+.7833)/2=.6783: m1 and m6 kept.
MEDIAN_MAX_STOPS = {
    ("m4", 2): {"best": 0.30, "median": 0.60, "trials": 6},
    ("m2", 3): {"best": 0.62, "median": 0.6333, "trials": 6},
    ("m3", 3): {"best": 0.60, "median": 0.6333, "trials": 6},
}

MEDIAN_MIN = {
    "m1": [0.40, 0.30, 0.20, 0.15, 0.10, 0.08],
    "m2": [0.50, 0.40, 0.38, 0.36, 0.34, 0.32],
    "m3": [0.60, 0.40, 0.48, 0.47, 0.46, 0.45],
    "m4": [0.80, 0.70, 0.60, 0.60, 0.60, 0.60],
    "m5": [0.30, 0.20, 0.10],
    "m6": [0.40, 0.30, 0.22, 0.16, 0.12, 0.10],
}
# delay 2, minimize.
# N=2: avgs m1 .35 m2 .45 m3 .50 m4 .75 m5 .25 m6 .35 -> .25 .35 .35 .45 .50 .75, M=.40.
#      m2 .40 and m3 .40 tie: kept. m4 .70 canceled.
# N=3: avgs m1 .30 m2 1.28/3=.4267 m3 1.48/3=.4933 m4 .75 m5 .20 m6 .92/3=.3067
#      -> .20 .30 .3067 .4267 .4933 .75, M=2.2/6=.3667: m2 .38 and m3 .40 canceled.
# N=4: avgs m1 .2625 m6 .27 -> .20 .2625 .27 .4267 .4933 .75, M=.3483: m1 .15, m6 .16 kept.
# N=5: M=(.24+.4267)/2=.3333; N=6: M=(.2167+.4267)/2=.3217: kept.
MEDIAN_MIN_STOPS = {
    ("m4", 2): {"best": 0.70, "median": 0.40, "trials": 6},
    ("m2", 3): {"best": 0.38, "median": 0.3667, "trials": 6},
    ("m3", 3): {"best": 0.40, "median": 0.3667, "trials": 6},
}


@pytest.mark.parametrize(("histories", "goal", "expected"), [
    (MEDIAN_MAX, "maximize", MEDIAN_MAX_STOPS), (MEDIAN_MIN, "minimize", MEDIAN_MIN_STOPS),
], ids=["max", "min"])
def test_median_table(histories: dict, goal: str, expected: dict) -> None:
    stops = simulate(Policy("median_stopping", evaluation_interval=1, delay_evaluation=2), histories, goal)
    assert_stops(stops, expected)


def test_median_reason() -> None:
    stop = median_stopping(MEDIAN_MAX, "m4", 2, goal="maximize", metric="auc")
    assert stop is not None
    assert stop.reason == ("median stopping policy at interval 2: best auc so far 0.3 is worse than 0.6, "
                           "the median of the running averages over intervals 1-2 of 6 trials")


# ----------------------------------------------------------------------------- truncation selection
TRUNC20_MAX = {
    "t1": [0.50, 0.60, 0.70, 0.75, 0.80, 0.85],
    "t2": [0.40, 0.55, 0.40, 0.65, 0.70, 0.72],
    "t3": [0.45, 0.50, 0.60, 0.42, 0.66, 0.69],
    "t4": [0.30, 0.45, 0.55, 0.60, 0.61, 0.62],
    "t5": [0.60, 0.70, 0.75],
}
# p=20, delay 2, maximize. Score = value at N, or best so far with fewer than N values.
# cut = floor(20 * population / 100): 5 trials -> 1, 4 trials -> 0.
# N=2: t1 .60 t2 .55 t3 .50 t4 .45 t5 .70: t4 the unique worst, canceled; cut-off (2nd worst) .50.
# N=3: t1 .70 t2 .40 (its value at 3, not its best .55) t3 .60 t4 .45 (best of 2) t5 .75:
#      t2 canceled; cut-off .45.
# N=4: t5 finished after 3 values.
#   exclude_finished false: t1 .75 t2 .55 (best of 3) t3 .42 t4 .45 t5 .75 (best of 3):
#      t3 canceled; cut-off .45.  N=5, 6: only t1 is running: kept.
#   exclude_finished true: population t1..t4 = 4 trials, cut 0: nobody is canceled at 4, 5, 6.
TRUNC20_MAX_STOPS = {
    ("t4", 2): {"score": 0.45, "cutoff": 0.50, "cut": 1, "population": 5},
    ("t2", 3): {"score": 0.40, "cutoff": 0.45, "cut": 1, "population": 5},
    ("t3", 4): {"score": 0.42, "cutoff": 0.45, "cut": 1, "population": 5},
}
TRUNC20_MAX_EXCLUDING_STOPS = {key: value for key, value in TRUNC20_MAX_STOPS.items() if key != ("t3", 4)}

TRUNC20_MIN = {
    "t1": [0.50, 0.40, 0.30, 0.25, 0.20, 0.15],
    "t2": [0.60, 0.45, 0.60, 0.35, 0.30, 0.28],
    "t3": [0.55, 0.50, 0.40, 0.58, 0.34, 0.31],
    "t4": [0.70, 0.55, 0.45, 0.40, 0.39, 0.38],
    "t5": [0.40, 0.30, 0.25],
}
# p=20, delay 2, minimize (worst = highest).
# N=2: t1 .40 t2 .45 t3 .50 t4 .55 t5 .30: t4 canceled; cut-off .50.
# N=3: t1 .30 t2 .60 t3 .40 t4 .55 (best of 2) t5 .25: t2 canceled; cut-off .55.
# N=4, exclude false: t1 .25 t2 .45 (best of 3) t3 .58 t4 .55 t5 .25: t3 canceled; cut-off .55.
# N=4.., exclude true: 4 trials, cut 0: nobody.
TRUNC20_MIN_STOPS = {
    ("t4", 2): {"score": 0.55, "cutoff": 0.50, "cut": 1, "population": 5},
    ("t2", 3): {"score": 0.60, "cutoff": 0.55, "cut": 1, "population": 5},
    ("t3", 4): {"score": 0.58, "cutoff": 0.55, "cut": 1, "population": 5},
}
TRUNC20_MIN_EXCLUDING_STOPS = {key: value for key, value in TRUNC20_MIN_STOPS.items() if key != ("t3", 4)}

TRUNC50_MAX = {
    "u1": [0.50, 0.60, 0.70, 0.80, 0.85, 0.90],
    "u2": [0.45, 0.55, 0.65, 0.70, 0.75, 0.80],
    "u3": [0.40, 0.50, 0.60, 0.60, 0.70, 0.75],
    "u4": [0.35, 0.50, 0.55, 0.60, 0.62, 0.64],
    "u5": [0.30, 0.40, 0.50, 0.55, 0.58, 0.60],
    "u6": [0.20, 0.50, 0.52, 0.70, 0.80, 0.90],
}
# p=50, delay 2, maximize: 6 trials, cut 3.
# N=2: .60 .55 .50 .50 .40 .50 -> worst first .40 .50 .50 .50 .55 .60. u3, u4, u6 tie at .50
#      across the cut (4 trials at or below .50): all three kept. u5 canceled; cut-off .50.
# N=3: u1 .70 u2 .65 u3 .60 u4 .55 u5 .40 (best of 2) u6 .52 -> .40 .52 .55 .60 .65 .70:
#      u4 (3 at or below) and u6 (2) canceled, cut-off .60; u3 .60 equals it (4), kept.
# N=4: u3 .60 vs .40 .52 .55 (u4, u6 cut to 3 values): 4 at or below, kept; N=5 u3 .70,
#      N=6 u3 .75: kept. u6's later .70-.90 never count.
TRUNC50_MAX_STOPS = {
    ("u5", 2): {"score": 0.40, "cutoff": 0.50, "cut": 3, "population": 6},
    ("u4", 3): {"score": 0.55, "cutoff": 0.60, "cut": 3, "population": 6},
    ("u6", 3): {"score": 0.52, "cutoff": 0.60, "cut": 3, "population": 6},
}

TRUNC50_MIN = {
    "u1": [0.50, 0.40, 0.30, 0.20, 0.15, 0.10],
    "u2": [0.55, 0.45, 0.35, 0.30, 0.25, 0.20],
    "u3": [0.60, 0.50, 0.40, 0.40, 0.30, 0.25],
    "u4": [0.65, 0.50, 0.45, 0.40, 0.38, 0.36],
    "u5": [0.70, 0.60, 0.50, 0.45, 0.42, 0.40],
    "u6": [0.80, 0.50, 0.48, 0.30, 0.20, 0.10],
}
# p=50, delay 2, minimize: 6 trials, cut 3.
# N=2: worst first .60 .50 .50 .50 .45 .40: the .50 tie straddles the cut, kept; u5 canceled.
# N=3: u1 .30 u2 .35 u3 .40 u4 .45 u5 .60 (best of 2) u6 .48 -> worst first .60 .48 .45 .40:
#      u4 and u6 canceled, cut-off .40; u3 on it, kept.
# N=4: u3 .40 vs .60 .48 .45: kept; later u3 .30, .25 kept.
TRUNC50_MIN_STOPS = {
    ("u5", 2): {"score": 0.60, "cutoff": 0.50, "cut": 3, "population": 6},
    ("u4", 3): {"score": 0.45, "cutoff": 0.40, "cut": 3, "population": 6},
    ("u6", 3): {"score": 0.48, "cutoff": 0.40, "cut": 3, "population": 6},
}


@pytest.mark.parametrize(("histories", "goal", "percentage", "exclude", "expected"), [
    (TRUNC20_MAX, "maximize", 20, False, TRUNC20_MAX_STOPS),
    (TRUNC20_MAX, "maximize", 20, True, TRUNC20_MAX_EXCLUDING_STOPS),
    (TRUNC20_MIN, "minimize", 20, False, TRUNC20_MIN_STOPS),
    (TRUNC20_MIN, "minimize", 20, True, TRUNC20_MIN_EXCLUDING_STOPS),
    (TRUNC50_MAX, "maximize", 50, False, TRUNC50_MAX_STOPS),
    (TRUNC50_MIN, "minimize", 50, False, TRUNC50_MIN_STOPS),
], ids=["p20-max", "p20-max-exclude", "p20-min", "p20-min-exclude", "p50-max", "p50-min"])
def test_truncation_table(histories: dict, goal: str, percentage: int, exclude: bool, expected: dict) -> None:
    policy = Policy("truncation_selection", evaluation_interval=1, delay_evaluation=2,
                    truncation_percentage=percentage, exclude_finished_jobs=exclude)
    assert_stops(simulate(policy, histories, goal), expected)


def test_truncation_docs_example() -> None:
    # p=20 of 10 trials at interval 5: cut 2. Scores at 5, worst first: .55 (s1) .61 (s0)
    # .63 (s2) .70 ...: s0 is the 2nd worst, canceled; cut-off .63. s9 has logged 8 values:
    # it is compared by its .99 at interval 5 (the fairness rule), not by its later .10s,
    # which would make it the worst and keep s0 (3rd worst).
    values = [0.61, 0.55, 0.63, 0.70, 0.71, 0.72, 0.80, 0.81, 0.90]
    histories: dict[str, list[float]] = {f"s{i}": [0.5] * 4 + [v] for i, v in enumerate(values)}
    histories["s9"] = [0.5] * 4 + [0.99, 0.10, 0.10, 0.10]
    stop = truncation_selection(histories, "s0", 5, goal="maximize", percentage=20, metric="auc")
    assert stop is not None
    assert stop.reason == ("truncation selection policy at interval 5: auc 0.61 at interval 5 is among the "
                           "lowest 20% (the worst 2 of 10 trials; 0.61 < cut-off 0.63, the 3rd worst score)")
    assert stop.numbers == {"score": 0.61, "cutoff": 0.63, "cut": 2, "population": 10, "rank": 2,
                            "percentage": 20}
    assert truncation_selection(histories, "s2", 5, goal="maximize", percentage=20) is None
    assert truncation_selection(histories, "s9", 5, goal="maximize", percentage=20) is None


def test_truncation_cut_is_exact() -> None:
    # 29% of 100 trials is 29, although the float 0.29 * 100 is 28.999999999999996.
    histories = {f"t{i:03}": [float(i)] for i in range(100)}
    assert truncation_selection(histories, "t028", 1, goal="maximize", percentage=29).numbers["cut"] == 29
    assert truncation_selection(histories, "t029", 1, goal="maximize", percentage=29) is None


# ----------------------------------------------------------------------------- caller's guarantees
@pytest.mark.parametrize("call", [
    lambda: median_stopping({"a": [1.0]}, "a", 2, goal="maximize"),
    lambda: median_stopping({"a": [1.0]}, "b", 1, goal="maximize"),
    lambda: median_stopping({"a": [1.0]}, "a", 0, goal="maximize"),
    lambda: median_stopping({"a": [1.0]}, "a", 1, goal="best"),
    lambda: median_stopping({"a": [float("nan")]}, "a", 1, goal="maximize"),
    lambda: truncation_selection({"a": [1.0]}, "a", 1, goal="maximize", percentage=100),
    lambda: truncation_selection({"a": [1.0]}, "a", 1, goal="maximize", percentage=0),
])
def test_broken_guarantees_raise(call: Any) -> None:
    with pytest.raises(ValueError):
        call()


def test_empty_histories_are_ignored() -> None:
    histories = {"a": [1.0], "b": [], "c": [3.0], "d": [2.0]}
    assert median_stopping(histories, "a", 1, goal="maximize").numbers["trials"] == 3
    assert truncation_selection(histories, "a", 1, goal="maximize", percentage=40).numbers["population"] == 3


def test_check_applies_is_due_first() -> None:
    policy = Policy("bandit", evaluation_interval=2, delay_evaluation=3, slack_amount=0.1)
    histories = {"a": [1.0, 1.0, 1.0, 1.0], "b": [0.0, 0.0, 0.0, 0.0]}
    # bandit itself would cancel b at every interval; the policy applies only at 4.
    assert all(bandit(histories, "b", n, goal="maximize", slack_amount=0.1) for n in range(1, 5))
    assert [n for n in range(1, 5) if policy.check(histories, "b", n, goal="maximize")] == [4]


# ----------------------------------------------------------------------------- properties
GRID = [k / 4 for k in range(-8, 9)]          # coarse values, so that ties happen
values = st.one_of(st.sampled_from(GRID), st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False))
positive = st.one_of(st.sampled_from([k / 4 for k in range(1, 9)]), st.floats(1e-3, 1e3))
goals = st.sampled_from(["maximize", "minimize"])


@st.composite
def situations(draw: st.DrawFn, value: st.SearchStrategy[float] = values) -> tuple[dict, str, int]:
    """Histories of up to 8 trials (some empty), a trial with at least one value, an interval."""
    lists = draw(st.lists(st.lists(value, max_size=6), min_size=1, max_size=8))
    index = draw(st.integers(0, len(lists) - 1))
    if not lists[index]:
        lists[index] = [draw(value)]
    interval = draw(st.integers(1, len(lists[index])))
    return {f"t{i}": history for i, history in enumerate(lists)}, f"t{index}", interval


def best_of(history: Sequence[float], goal: str) -> float:
    return max(history) if goal == "maximize" else min(history)


def negated(histories: dict[str, list[float]]) -> dict[str, list[float]]:
    return {name: [-v for v in history] for name, history in histories.items()}


def flipped(goal: str) -> str:
    return "minimize" if goal == "maximize" else "maximize"


@SETTINGS
@given(situations(positive), goals, st.floats(0.01, 2), st.floats(0.01, 2))
def test_bandit_keeps_the_reference_for_positive_metrics(situation: tuple, goal: str, factor: float,
                                                         amount: float) -> None:
    histories, _, interval = situation
    eligible = {name: best_of(h[:interval], goal) for name, h in histories.items() if len(h) >= interval}
    reference = best_of(list(eligible.values()), goal)
    for name, best in eligible.items():
        if best == reference:
            assert bandit(histories, name, interval, goal=goal, slack_factor=factor) is None
            assert bandit(histories, name, interval, goal=goal, slack_amount=amount) is None


@SETTINGS
@given(situations(positive), goals, st.floats(0.01, 1), st.floats(0.01, 1))
def test_bandit_more_slack_never_cancels_more(situation: tuple, goal: str, small: float, extra: float) -> None:
    histories, trial, interval = situation
    for key in ("slack_factor", "slack_amount"):
        if bandit(histories, trial, interval, goal=goal, **{key: small}) is None:
            assert bandit(histories, trial, interval, goal=goal, **{key: small + extra}) is None


def _mirrored(stop: Stop | None, mirror: Stop | None, keys: tuple[str, ...], same: tuple[str, ...]) -> None:
    assert (stop is None) == (mirror is None)
    if stop is not None and mirror is not None:
        for key in keys:
            assert mirror.numbers[key] == -stop.numbers[key]
        for key in same:
            assert mirror.numbers[key] == stop.numbers[key]


@SETTINGS
@given(situations(), goals, st.sampled_from([0.1, 0.25, 0.5, 1.0, 3.0]))
def test_bandit_amount_is_symmetric_under_negation(situation: tuple, goal: str, amount: float) -> None:
    histories, trial, interval = situation
    _mirrored(bandit(histories, trial, interval, goal=goal, slack_amount=amount),
              bandit(negated(histories), trial, interval, goal=flipped(goal), slack_amount=amount),
              ("best", "threshold", "reference"), ("reference_trial",))


@SETTINGS
@given(situations(), goals)
def test_median_is_symmetric_under_negation(situation: tuple, goal: str) -> None:
    histories, trial, interval = situation
    _mirrored(median_stopping(histories, trial, interval, goal=goal),
              median_stopping(negated(histories), trial, interval, goal=flipped(goal)),
              ("best", "median"), ("trials",))


@SETTINGS
@given(situations(), goals, st.integers(1, 99), st.booleans(), st.data())
def test_truncation_is_symmetric_under_negation(situation: tuple, goal: str, percentage: int, exclude: bool,
                                                data: st.DataObject) -> None:
    histories, trial, interval = situation
    finished = data.draw(st.sets(st.sampled_from(sorted(histories))))
    _mirrored(truncation_selection(histories, trial, interval, goal=goal, percentage=percentage,
                                   finished=finished, exclude_finished=exclude),
              truncation_selection(negated(histories), trial, interval, goal=flipped(goal), percentage=percentage,
                                   finished=finished, exclude_finished=exclude),
              ("score", "cutoff"), ("cut", "population", "rank"))


@SETTINGS
@given(situations(), goals, st.integers(1, 99), st.booleans(), st.data())
def test_truncation_against_a_sorting_oracle(situation: tuple, goal: str, percentage: int, exclude: bool,
                                             data: st.DataObject) -> None:
    """Canceled iff the trial's score is strictly worse than the (cut+1)-th worst score; in
    particular never while percentage * population < 100."""
    histories, trial, interval = situation
    finished = data.draw(st.sets(st.sampled_from(sorted(histories))))
    population = {name: h for name, h in histories.items()
                  if h and not (exclude and name in finished and name != trial)}
    scores = {name: h[interval - 1] if len(h) >= interval else best_of(h, goal) for name, h in population.items()}
    worst_first = sorted(scores.values(), reverse=goal == "minimize")
    cut = percentage * len(population) // 100
    stop = truncation_selection(histories, trial, interval, goal=goal, percentage=percentage, finished=finished,
                                exclude_finished=exclude)
    if percentage * len(population) < 100:
        assert stop is None
    score, cutoff = scores[trial], worst_first[cut]
    expected = cut >= 1 and (score < cutoff if goal == "maximize" else score > cutoff)
    assert (stop is not None) == expected
    if stop is not None:
        assert stop.numbers["cutoff"] == cutoff and stop.numbers["population"] == len(population)


@SETTINGS
@given(st.lists(values, min_size=1, max_size=6), st.integers(1, 8), goals, st.data())
def test_median_never_cancels_identical_trials(history: list[float], count: int, goal: str,
                                               data: st.DataObject) -> None:
    histories = {f"t{i}": list(history) for i in range(count)}
    trial = data.draw(st.sampled_from(sorted(histories)))
    interval = data.draw(st.integers(1, len(history)))
    assert median_stopping(histories, trial, interval, goal=goal) is None


def _shown(number: float, reason: str) -> bool:
    return any(f"{number:.{digits}g}" in reason for digits in range(4, 18))


@SETTINGS
@given(situations(), goals, st.sampled_from(POLICIES), st.floats(0.01, 1), st.integers(1, 99), st.booleans())
def test_a_stop_shows_its_interval_and_numbers(situation: tuple, goal: str, kind: str, slack: float,
                                               percentage: int, factor: bool) -> None:
    histories, trial, interval = situation
    policy = Policy(kind, 1, 0, slack_factor=slack if kind == "bandit" and factor else None,
                    slack_amount=slack if kind == "bandit" and not factor else None,
                    truncation_percentage=percentage if kind == "truncation_selection" else None)
    stop = policy.check(histories, trial, interval, goal=goal, metric="auc")
    assume(stop is not None)
    assert stop.policy == kind and stop.interval == interval
    assert f"at interval {interval}:" in stop.reason and "\n" not in stop.reason
    shown = {"bandit": ("best", "threshold", "reference"), "median_stopping": ("best", "median"),
             "truncation_selection": ("score", "cutoff")}[kind]
    for key in shown:
        assert _shown(stop.numbers[key], stop.reason), (key, stop)
    if kind == "bandit":
        assert f"(trial {stop.numbers['reference_trial']})" in stop.reason
    elif kind == "median_stopping":
        assert f"of {stop.numbers['trials']} trials" in stop.reason
    else:
        assert f"the worst {stop.numbers['cut']} of {stop.numbers['population']} trials" in stop.reason


# ----------------------------------------------------------------------------- policy_from_spec
def test_policy_from_spec_types_and_numbers() -> None:
    assert policy_from_spec(None) is None
    assert policy_from_spec({}) is None
    assert policy_from_spec({"type": "Bandit", "slack_factor": "0.1", "evaluation_interval": "2",
                             "delay_evaluation": 5.0}) == Policy("bandit", 2, 5, slack_factor=0.1)
    assert policy_from_spec({"type": "MedianStopping"}) == Policy("median_stopping", 0, 0)
    assert policy_from_spec({"type": "median_stopping", "evaluation_interval": None}) == \
        Policy("median_stopping", 0, 0)
    assert policy_from_spec({"type": "TruncationSelection", "truncation_percentage": "20",
                             "exclude_finished_jobs": True, "delay_evaluation": 10}) == \
        Policy("truncation_selection", 0, 10, truncation_percentage=20, exclude_finished_jobs=True)
    assert policy_from_spec({"type": "truncation_selection", "truncation_percentage": 50}).exclude_finished_jobs \
        is False
    # A slack of 0 counts as not given, so the other one is the only slack.
    assert policy_from_spec({"type": "BANDIT", "slack_factor": 0, "slack_amount": 0.2}) == \
        Policy("bandit", 0, 0, slack_amount=0.2)


def test_policy_describe() -> None:
    assert policy_from_spec({"type": "bandit", "slack_factor": 0.1, "evaluation_interval": 1,
                             "delay_evaluation": 5}).describe() == \
        "bandit (slack_factor 0.1, evaluation_interval 1, delay_evaluation 5)"
    assert Policy("median_stopping", 0, 0).describe() == \
        "median_stopping (evaluation_interval 0 (treated as 1), delay_evaluation 0)"
    assert Policy("truncation_selection", 2, 4, truncation_percentage=20).describe() == \
        "truncation_selection (truncation_percentage 20, exclude_finished_jobs false, evaluation_interval 2, " \
        "delay_evaluation 4)"


@pytest.mark.parametrize(("spec", "words"), [
    ({"type": "bandit"}, ["slack_factor", "slack_amount", "neither"]),
    ({"type": "bandit", "slack_factor": 0, "slack_amount": "0"}, ["slack_factor", "slack_amount", "neither"]),
    ({"type": "bandit", "slack_factor": 0.1, "slack_amount": "0.05"}, ["slack_factor", "slack_amount", "both"]),
    ({"type": "truncation_selection"}, ["truncation_percentage"]),
    ({"type": "truncation_selection", "truncation_percentage": 100}, ["truncation_percentage"]),
    ({"type": "hyperband"}, ["hyperband", "bandit", "median_stopping", "truncation_selection"]),
    ({"slack_factor": 0.1}, ["type"]),
    ({"type": "median_stopping", "evaluation_interval": "often"}, ["evaluation_interval"]),
    ({"type": "median_stopping", "delay_evaluation": 2.5}, ["delay_evaluation"]),
    ({"type": "bandit", "slack_factor": -0.1}, ["slack_factor"]),
])
def test_policy_from_spec_errors(spec: dict, words: list[str]) -> None:
    with pytest.raises(ValueError) as error:
        policy_from_spec(spec)
    for word in words:
        assert word in str(error.value)


# ----------------------------------------------------------------------------- cheap to import
def test_the_module_imports_only_the_standard_library() -> None:
    tree = ast.parse(MODULE.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "policies.py needs no other module of the project"
            names = [node.module or ""]
        else:
            continue
        for name in names:
            assert name.split(".")[0] in sys.stdlib_module_names | {"__future__"}, name


def test_importing_loads_nothing_heavy() -> None:
    probe = (
        "import json, sys\n"
        "before = set(sys.modules)\n"
        "import runner.sweep.policies\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded = {name.split(".")[0] for name in json.loads(done.stdout)}
    assert loaded - sys.stdlib_module_names - {"runner"} == set()


def test_the_runner_knows_every_policy_the_spec_may_name() -> None:
    """One list of policies: the runner's registry holds exactly the linter's and the schemas'
    (validator.early_termination), each with the same settings."""
    from dataclasses import fields

    from runner.sweep.policies import REGISTRY
    from validator.early_termination import POLICIES as NAMED

    assert set(REGISTRY) == set(NAMED)
    for name, own in NAMED.items():
        settings = {f.name for f in fields(REGISTRY[name])} - {"evaluation_interval", "delay_evaluation"}
        assert set(own) <= settings, name
