"""runner.sweep.sampling: every distribution stays in its support for random and Sobol sampling,
nested choices are sampled recursively, Sobol maps scipy's own points, grid walks the product in
itertools order, bayesian goes through optuna's TPE, nothing is returned twice, and the same seed
gives the same sequence in another process."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.sweep.sampling import (SearchSpaceError, Space, Suggestion, format_value, make_sampler,
                                   parse_space)

SETTINGS = settings(max_examples=int(os.environ.get("AMLLAB_EXAMPLES", "100")), deadline=None)
ROOT = Path(__file__).resolve().parents[2]

KINDS = ["choice", "randint", "uniform", "loguniform", "quniform", "qloguniform",
         "normal", "lognormal", "qnormal", "qlognormal"]
CAMEL = {"choice": "Choice", "randint": "RandInt", "uniform": "Uniform", "loguniform": "LogUniform",
         "quniform": "QUniform", "qloguniform": "QLogUniform", "normal": "Normal",
         "lognormal": "LogNormal", "qnormal": "QNormal", "qlognormal": "QLogNormal"}
SNAKE = {kind: kind[0] + "_" + kind[1:] if kind.startswith("q") else kind for kind in KINDS}

NESTED = {
    "conv_size": {"type": "choice", "values": [
        {"const_val": 999,
         "val1": {"type": "choice", "values": [
             {"val11": {"type": "uniform", "min_value": 0.001, "max_value": 0.1}},
             {"val12": {"type": "quniform", "min_value": 16, "max_value": 128, "q": 16}}]}},
        {"val4": {"type": "normal", "mu": 0, "sigma": 1}}]},
}
GRID = {"lr": {"type": "choice", "values": [0.1, 0.01]}, "depth": {"type": "choice", "values": [4, 6, 8]}}
BAYESIAN = {"lr": {"type": "uniform", "min_value": 0.001, "max_value": 0.1},
            "batch": {"type": "quniform", "min_value": 16, "max_value": 128, "q": 16},
            "optimizer": {"type": "choice", "values": ["adam", "sgd", "rmsprop"]}}
MIXED = {**NESTED,
         "lr": {"type": "loguniform", "min_value": -9.2, "max_value": -2.3},
         "depth": {"type": "randint", "upper": 10},
         "width": {"type": "qlognormal", "mu": 3, "sigma": 0.5, "q": 8},
         "drop": {"type": "qnormal", "mu": 0.2, "sigma": 0.1, "q": 0.05}}


EXAMPLES = {
    "randint": {"type": "randint", "upper": 10},
    "uniform": {"type": "uniform", "min_value": 0.001, "max_value": 0.1},
    "loguniform": {"type": "loguniform", "min_value": -9.2, "max_value": -2.3},
    "qloguniform": {"type": "qloguniform", "min_value": 2, "max_value": 5, "q": 8},
    "normal": {"type": "normal", "mu": 0.5, "sigma": 0.1},
    "lognormal": {"type": "lognormal", "mu": 0, "sigma": 1},
    "qnormal": {"type": "qnormal", "mu": 10, "sigma": 3, "q": 1},
    "qlognormal": {"type": "qlognormal", "mu": 3, "sigma": 0.5, "q": 8},
}


def _spell(kind: str, spelling: int) -> str:
    return [kind, kind.upper(), CAMEL[kind], SNAKE[kind]][spelling]


def _num(value: float, as_text: bool) -> float | str:
    return repr(value) if as_text else value


@st.composite
def distributions(draw: st.DrawFn, kinds: list[str] = KINDS, log_bounds: tuple[float, float] = (-12, 5)
                  ) -> tuple[str, dict]:
    """One distribution with sane generated parameters, its type spelt any accepted way and its
    numbers sometimes written as strings."""
    kind = draw(st.sampled_from(kinds))
    spelling = draw(st.integers(0, 3))
    text = draw(st.booleans())
    entry: dict[str, Any] = {"type": _spell(kind, spelling)}
    if kind == "choice":
        entry["values"] = draw(st.lists(st.one_of(st.integers(-50, 50), st.text("abcxyz", min_size=1, max_size=4),
                                                  st.booleans(), st.floats(-5, 5, allow_nan=False)),
                                        min_size=1, max_size=6))
    elif kind == "randint":
        entry["upper"] = draw(st.integers(1, 1000))
    elif kind in ("uniform", "quniform"):
        low = draw(st.floats(-100, 100, allow_nan=False))
        high = low + draw(st.floats(0, 50, allow_nan=False))
        entry.update(min_value=_num(low, text), max_value=_num(high, text))
    elif kind in ("loguniform", "qloguniform"):
        low = draw(st.floats(*log_bounds, allow_nan=False))
        high = min(log_bounds[1], low + draw(st.floats(0, 8, allow_nan=False)))
        entry.update(min_value=_num(low, text), max_value=_num(high, text))
    else:
        entry.update(mu=_num(draw(st.floats(-5, 5, allow_nan=False)), text),
                     sigma=_num(draw(st.floats(0.01, 3, allow_nan=False)), text))
    if kind.startswith("q"):
        entry["q"] = draw(st.sampled_from([0.01, 0.05, 0.5, 1, 2, 5, "0.25"]))
    return kind, entry


def _take(space: dict, algorithm: str = "random", n: int = 5, **options: Any) -> list[dict]:
    sampler = make_sampler(algorithm, parse_space(space), **options)
    found = []
    for _ in range(n):
        suggestion = sampler.ask()
        if suggestion is None:
            break
        found.append(suggestion.params)
    return found


def _on_grid(value: float, q: float) -> bool:
    ratio = value / q
    return abs(ratio - round(ratio)) <= 1e-9 * max(1.0, abs(ratio))


def _plain(value: Any) -> bool:
    """Only Python's own types (numpy's float64 is a float subclass: check the exact type)."""
    if type(value) in (int, float, str, bool) or value is None:
        return True
    if type(value) is list:
        return all(_plain(item) for item in value)
    if type(value) is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    return False


# ----------------------------------------------------------------------------- every distribution
@SETTINGS
@given(distributions(), st.sampled_from(["random", "sobol"]), st.integers(0, 2**32 - 1))
def test_every_distribution_samples_inside_its_support(drawn: tuple[str, dict], rule: str, seed: int) -> None:
    kind, entry = drawn
    values = [params["x"] for params in _take({"x": entry}, n=6, seed=seed, rule=rule)]
    assert values
    number = {key: float(value) for key, value in entry.items() if key not in ("type", "values")}
    for value in values:
        assert _plain(value)
        if kind == "choice":
            assert any(type(value) is type(v) and value == v for v in entry["values"])
        elif kind == "randint":
            assert type(value) is int and 0 <= value < entry["upper"]
        else:
            assert type(value) is float and math.isfinite(value)
        if kind == "uniform":
            assert number["min_value"] <= value <= number["max_value"]
        if kind == "loguniform":
            assert math.exp(number["min_value"]) * (1 - 1e-12) <= value <= math.exp(number["max_value"]) * (1 + 1e-12)
        if kind in ("quniform", "qloguniform", "qnormal", "qlognormal"):
            assert _on_grid(value, number["q"])
            assert math.copysign(1.0, value) == 1.0 or value != 0  # -0.0 is normalised
        if kind == "quniform":
            q = number["q"]
            assert round(number["min_value"] / q) * q - 1e-9 <= value <= round(number["max_value"] / q) * q + 1e-9
        if kind == "qloguniform":
            q = number["q"]
            lowest = round(math.exp(number["min_value"]) / q) * q
            highest = round(math.exp(number["max_value"]) / q) * q
            assert lowest * (1 - 1e-12) - 1e-12 <= value <= highest * (1 + 1e-12) + 1e-12
        if kind == "lognormal":
            assert value > 0
        if kind == "qlognormal":
            assert value >= 0


@SETTINGS
@given(distributions(["loguniform", "qloguniform"], log_bounds=(-6, 3)), st.sampled_from(["random", "sobol"]),
       st.integers(0, 1000), st.sampled_from([10, "10", 2.0]))
def test_logbase_is_the_base_of_the_log_distributions(drawn: tuple[str, dict], rule: str, seed: int,
                                                      logbase: float | str) -> None:
    kind, entry = drawn
    base = float(logbase)
    low, high = float(entry["min_value"]), float(entry["max_value"])
    for params in _take({"x": entry}, n=6, seed=seed, rule=rule, logbase=logbase):
        value = params["x"]
        if kind == "loguniform":
            assert base ** low * (1 - 1e-12) <= value <= base ** high * (1 + 1e-12)
        else:
            q = float(entry["q"])
            assert _on_grid(value, q)
            assert round(base ** low / q) * q - 1e-9 <= value <= round(base ** high / q) * q + 1e-9


def test_logbase_10_really_changes_the_values() -> None:
    space = {"x": {"type": "loguniform", "min_value": -3, "max_value": -1}}
    with_e = [p["x"] for p in _take(space, n=20, seed=4)]
    with_10 = [p["x"] for p in _take(space, n=20, seed=4, logbase=10)]
    assert all(math.exp(-3) <= v <= math.exp(-1) for v in with_e)
    assert all(1e-3 <= v <= 1e-1 for v in with_10)
    assert any(v < math.exp(-3) for v in with_10)  # below e's range: the base really is 10
    # The same draws with another base: the exponents agree.
    assert [math.log10(v) for v in with_10] == pytest.approx([math.log(v) for v in with_e], rel=1e-9)


@pytest.mark.parametrize("rule", ["random", "sobol"])
def test_quantised_values_round_half_to_even_and_are_floats(rule: str) -> None:
    space = {"even": {"type": "quniform", "min_value": 2.5, "max_value": 2.5, "q": 1},
             "odd": {"type": "quniform", "min_value": 3.5, "max_value": 3.5, "q": 1},
             "batch": {"type": "quniform", "min_value": 64, "max_value": 64, "q": 16}}
    [params] = _take(space, n=1, seed=0, rule=rule)
    assert params == {"even": 2.0, "odd": 4.0, "batch": 64.0}
    assert all(type(v) is float for v in params.values())


@pytest.mark.parametrize("rule", ["random", "sobol"])
def test_negative_zero_is_normalised(rule: str) -> None:
    space = {"x": {"type": "qnormal", "mu": 0, "sigma": 0.1, "q": 1}}
    values = [p["x"] for p in _take(space, n=1, seed=1, rule=rule)]
    assert values == [0.0] and math.copysign(1.0, values[0]) == 1.0


# ----------------------------------------------------------------------------- choice and nesting
@pytest.mark.parametrize("rule", ["random", "sobol"])
def test_choice_returns_the_listed_values_unchanged(rule: str) -> None:
    values = [4, 0.5, "auto", True, None, [1, 2]]
    found = [p["x"] for p in _take({"x": {"type": "choice", "values": values}}, n=20, seed=3, rule=rule)]
    assert len(found) == len(values)  # six distinct values, then exhausted
    assert sorted(map(json.dumps, found)) == sorted(map(json.dumps, values))
    assert all(type(f) is type(v) for f in found for v in values if json.dumps(f) == json.dumps(v))


def test_a_returned_list_is_a_fresh_copy() -> None:
    space = parse_space({"x": {"type": "choice", "values": [[1, 2]]}})
    suggestion = make_sampler("random", space, seed=0).ask()
    assert suggestion is not None
    suggestion.params["x"].append(3)
    again = make_sampler("random", space, seed=0).ask()
    assert again is not None and again.params["x"] == [1, 2]


def _check_nested(value: Any) -> str:
    """Which branch of NESTED the value took, after checking it is sampled as declared."""
    assert type(value) is dict
    if "val4" in value:
        assert set(value) == {"val4"} and type(value["val4"]) is float
        return "val4"
    assert list(value) == ["const_val", "val1"] and value["const_val"] == 999
    inner = value["val1"]
    assert type(inner) is dict and len(inner) == 1
    if "val11" in inner:
        assert type(inner["val11"]) is float and 0.001 <= inner["val11"] <= 0.1
        return "val11"
    assert type(inner["val12"]) is float and inner["val12"] in {16.0 * k for k in range(1, 9)}
    return "val12"


@pytest.mark.parametrize("rule", ["random", "sobol"])
def test_nested_choice_samples_the_chosen_branch(rule: str) -> None:
    found = _take(NESTED, n=60, seed=11, rule=rule)
    assert len(found) == 60
    branches = [_check_nested(params["conv_size"]) for params in found]
    assert set(branches) == {"val4", "val11", "val12"}
    assert len({p["conv_size"].get("val4") for p in found if "val4" in p["conv_size"]}) > 5  # really sampled


def test_sobol_allocates_a_dimension_to_every_node_of_every_branch() -> None:
    from scipy.special import ndtri
    from scipy.stats import qmc

    # conv_size, val1, val11, val12, val4: five dimensions, depth-first, all allocated up front.
    engine = qmc.Sobol(d=5, scramble=True, seed=21)
    expected: list[dict] = []
    for _ in range(40):
        u = [float(x) for x in engine.random(1)[0]]
        if int(u[0] * 2) == 1:
            item: dict = {"val4": float(ndtri(u[4]))}
        elif int(u[1] * 2) == 0:
            item = {"const_val": 999, "val1": {"val11": 0.001 + u[2] * (0.1 - 0.001)}}
        else:
            item = {"const_val": 999, "val1": {"val12": float(round((16 + u[3] * 112) / 16) * 16)}}
        if item not in expected:  # a repeat is skipped and the next point taken
            expected.append(item)
    found = [p["conv_size"] for p in _take(NESTED, n=len(expected), seed=21, rule="sobol")]
    assert found == expected


def test_sobol_first_point_is_scipys_first_point() -> None:
    from scipy.stats import qmc

    for seed in (0, 7, 12345):
        u = float(qmc.Sobol(d=1, scramble=True, seed=seed).random(1)[0][0])
        [params] = _take({"lr": {"type": "uniform", "min_value": 0.001, "max_value": 0.1}}, n=1, seed=seed,
                         rule="sobol")
        assert params["lr"] == 0.001 + u * (0.1 - 0.001)


# ----------------------------------------------------------------------------- reproducibility
def _tell_value(params: dict) -> float:
    return -(params["lr"] - 0.05) ** 2 + params["batch"] / 1000 + (params["optimizer"] == "sgd") * 0.01


CASES = {"random": (MIXED, "random", "random"), "sobol": (MIXED, "random", "sobol"),
         "grid": (GRID, "grid", "random"), "bayesian": (BAYESIAN, "bayesian", "random")}


def _sequence(case: str, seed: int, n: int = 14) -> list[dict]:
    space, algorithm, rule = CASES[case]
    sampler = make_sampler(algorithm, parse_space(space), seed=seed, rule=rule, goal="maximize")
    found = []
    for _ in range(n):
        suggestion = sampler.ask()
        if suggestion is None:
            break
        assert suggestion.number == len(found)
        found.append(suggestion.params)
        sampler.tell(suggestion.number, _tell_value(suggestion.params) if case == "bayesian" else 0.0)
    return found


def _sequences(seed: int) -> dict[str, list[dict]]:
    return {case: _sequence(case, seed) for case in CASES}


@pytest.fixture(scope="module")
def other_process() -> dict[str, list[dict]]:
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import test_sweep_sampling as t; "
            "print(json.dumps(t._sequences(5)))")
    env = {**os.environ, "PYTHONHASHSEED": "4321"}
    result = subprocess.run([sys.executable, "-c", code, str(Path(__file__).resolve().parent)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("case", list(CASES))
def test_same_seed_same_sequence(case: str, other_process: dict[str, list[dict]]) -> None:
    first, second = _sequence(case, 5), _sequence(case, 5)
    assert first == second
    assert len(first) == (6 if case == "grid" else 14)
    assert json.loads(json.dumps(first)) == other_process[case]


@pytest.mark.parametrize("case", ["random", "sobol"])
def test_different_seeds_give_different_sequences(case: str) -> None:
    sequences = [json.dumps(_sequence(case, seed, n=5)) for seed in range(5)]
    assert len(set(sequences)) == 5


# ----------------------------------------------------------------------------- grid
def test_grid_walks_the_product_with_the_last_key_fastest() -> None:
    space = parse_space(GRID)
    assert space.size == 6 and space.names == ("lr", "depth")
    sampler = make_sampler("grid", space, seed=0)
    assert sampler.algorithm == "grid"
    found = [sampler.ask() for _ in range(6)]
    assert found == [Suggestion(0, {"lr": 0.1, "depth": 4}), Suggestion(1, {"lr": 0.1, "depth": 6}),
                     Suggestion(2, {"lr": 0.1, "depth": 8}), Suggestion(3, {"lr": 0.01, "depth": 4}),
                     Suggestion(4, {"lr": 0.01, "depth": 6}), Suggestion(5, {"lr": 0.01, "depth": 8})]
    assert sampler.ask() is None and sampler.ask() is None


def test_grid_ignores_the_seed_and_skips_repeated_values() -> None:
    space = {"a": {"type": "Choice", "values": [1, 2, 1]}, "b": {"type": "choice", "values": ["x", 1.0, 1]}}
    assert parse_space(space).size == 6
    expected = [{"a": a, "b": b} for a in (1, 2) for b in ("x", 1.0, 1)]
    assert _take(space, "grid", n=20, seed=1) == _take(space, "grid", n=20, seed=99) == expected
    assert [type(p["b"]) for p in _take(space, "grid", n=3, seed=0)] == [str, float, int]


# ----------------------------------------------------------------------------- no repeats
@pytest.mark.parametrize("rule", ["random", "sobol"])
def test_a_small_discrete_space_yields_each_configuration_once_then_none(rule: str) -> None:
    space = {"a": {"type": "choice", "values": [1, 2, 3]}, "b": {"type": "choice", "values": ["w", "x", "y", "z"]}}
    assert parse_space(space).size == 12
    sampler = make_sampler("random", parse_space(space), seed=2, rule=rule)
    found = [sampler.ask() for _ in range(12)]
    assert all(s is not None for s in found)
    assert {(s.params["a"], s.params["b"]) for s in found if s} == {(a, b) for a in (1, 2, 3) for b in "wxyz"}
    assert [s.number for s in found if s] == list(range(12))
    assert sampler.ask() is None and sampler.ask() is None


def test_random_is_exhausted_after_repeats_even_when_the_size_is_unknown() -> None:
    # Two branches that produce the same dict: the size (2) is an upper bound, 1 config exists.
    space = {"x": {"type": "choice", "values": [{"a": 1}, {"a": {"type": "choice", "values": [1]}}]}}
    assert parse_space(space).size == 2
    sampler = make_sampler("random", parse_space(space), seed=0)
    first = sampler.ask()
    assert first is not None and first.params == {"x": {"a": 1}}
    assert sampler.ask() is None and sampler.ask() is None


@st.composite
def small_spaces(draw: st.DrawFn) -> dict:
    kinds = ["choice", "randint", "quniform"]
    names = draw(st.lists(st.sampled_from("abcd"), min_size=1, max_size=3, unique=True))
    space = {}
    for name in names:
        kind = draw(st.sampled_from(kinds))
        if kind == "choice":
            space[name] = {"type": kind, "values": draw(st.lists(st.integers(0, 4), min_size=1, max_size=4))}
        elif kind == "randint":
            space[name] = {"type": kind, "upper": draw(st.integers(1, 4))}
        else:
            low = draw(st.integers(0, 3))
            space[name] = {"type": kind, "min_value": low, "max_value": low + draw(st.integers(0, 3)), "q": 1}
    return space


@SETTINGS
@given(small_spaces(), st.sampled_from(["random", "sobol", "grid"]), st.integers(0, 1000))
def test_no_sampler_returns_a_configuration_twice(space: dict, how: str, seed: int) -> None:
    parsed = parse_space(space)
    grid = how == "grid"
    if grid:
        space = {k: v if v["type"] == "choice" else {"type": "choice", "values": [0, 1]} for k, v in space.items()}
        parsed = parse_space(space)
    rule = "sobol" if how == "sobol" else "random"
    sampler = make_sampler("grid" if grid else "random", parsed, seed=seed, rule=rule)
    found = []
    for _ in range(80):
        suggestion = sampler.ask()
        if suggestion is None:
            break
        found.append(json.dumps(suggestion.params, sort_keys=True))
    assert len(found) == len(set(found))
    assert parsed.size is not None and len(found) <= parsed.size
    if grid or all(v["type"] != "quniform" for v in space.values()):
        # Equally likely cells: random and Sobol reach all of them long before 1000 repeats.
        assert len(found) == parsed.size
    assert sampler.ask() is None or len(found) == 80


def test_bayesian_returns_no_configuration_twice_and_ends() -> None:
    space = {"a": {"type": "choice", "values": ["x", "y", "z"]}, "b": {"type": "quniform", "min_value": 0,
                                                                     "max_value": 2, "q": 2}}
    assert parse_space(space).size == 6
    sampler = make_sampler("bayesian", parse_space(space), seed=3)
    found = []
    for _ in range(10):
        suggestion = sampler.ask()
        if suggestion is None:
            break
        found.append(json.dumps(suggestion.params, sort_keys=True))
        sampler.tell(suggestion.number, float(len(found)))
    assert len(found) == len(set(found)) and 1 <= len(found) <= 6
    assert sampler.ask() is None


# ----------------------------------------------------------------------------- size
@pytest.mark.parametrize(("space", "size"), [
    (GRID, 6),
    ({"n": {"type": "randint", "upper": 5.5}}, 5),
    ({"n": {"type": "randint", "upper": 7}, "c": {"type": "choice", "values": [1, 2]}}, 14),
    ({"b": {"type": "quniform", "min_value": 16, "max_value": 128, "q": 16}}, 8),
    ({"b": {"type": "quniform", "min_value": 0.4, "max_value": 2.6, "q": 1}}, 4),  # 0, 1, 2 and 3
    ({"b": {"type": "quniform", "min_value": 0.5, "max_value": 2.5, "q": 1}}, 3),  # half to even: 0..2
    ({"b": {"type": "qloguniform", "min_value": 0, "max_value": math.log(10), "q": 1}}, 10),  # 1..10
    ({"c": {"type": "choice", "values": [1, 1, 2]}}, 2),
    ({"c": {"type": "choice", "values": [1, 1.0, True, "1"]}}, 4),
    (NESTED, None),
    ({"c": {"type": "choice", "values": [
        {"k": 0, "a": {"type": "choice", "values": [1, 2, 3]}, "b": {"type": "randint", "upper": 4}},
        {"d": {"type": "choice", "values": [{"e": {"type": "randint", "upper": 2}}, "flat"]}},
        "plain"]}}, 3 * 4 + (2 + 1) + 1),
    ({"u": {"type": "uniform", "min_value": 0, "max_value": 0}}, None),
    ({"c": {"type": "choice", "values": [1, 2]}, "n": {"type": "normal", "mu": 0, "sigma": 1}}, None),
    ({"c": {"type": "choice", "values": [{"x": {"type": "lognormal", "mu": 0, "sigma": 1}}, 2]}}, None),
])
def test_space_size(space: dict, size: int | None) -> None:
    assert parse_space(space).size == size


def test_quniform_size_matches_what_sampling_reaches() -> None:
    space = {"b": {"type": "quniform", "min_value": 0.4, "max_value": 2.6, "q": 1}}
    values = {p["b"] for p in _take(space, n=50, seed=0)}
    assert values == {0.0, 1.0, 2.0, 3.0}
    assert parse_space(space).size == 4


# ----------------------------------------------------------------------------- bayesian
@pytest.mark.parametrize("kind", ["loguniform", "qloguniform", "normal", "lognormal", "qnormal", "qlognormal",
                                  "randint"])
def test_bayesian_refuses_other_distributions(kind: str) -> None:
    space = parse_space({"lr": {"type": "uniform", "min_value": 0, "max_value": 1}, "odd_one": EXAMPLES[kind]})
    with pytest.raises(SearchSpaceError, match="odd_one") as caught:
        make_sampler("bayesian", space, seed=0)
    assert "bayesian" in str(caught.value) and "\n" not in str(caught.value)


def test_bayesian_refuses_nested_choices() -> None:
    with pytest.raises(SearchSpaceError, match=r"conv_size\.values\[0\]"):
        make_sampler("Bayesian", parse_space(NESTED), seed=0)


@pytest.mark.parametrize("kind", ["uniform", "randint", "normal", "loguniform"])
def test_grid_refuses_anything_but_choice(kind: str) -> None:
    space = parse_space({"depth": {"type": "choice", "values": [1, 2]}, "not_a_choice": EXAMPLES[kind]})
    with pytest.raises(SearchSpaceError, match="not_a_choice.*grid|grid.*not_a_choice"):
        make_sampler("GRID", space, seed=0)


def test_grid_refuses_nested_choices() -> None:
    with pytest.raises(SearchSpaceError, match=r"conv_size\.values\[0\].*mapping"):
        make_sampler("grid", parse_space(NESTED), seed=0)


@pytest.mark.parametrize("goal", ["maximize", "Minimize"])
def test_bayesian_values_stay_valid_after_told_trials(goal: str) -> None:
    sampler = make_sampler("bayesian", parse_space(BAYESIAN), seed=8, goal=goal)
    assert sampler.algorithm == "bayesian"
    numbers = []
    for index in range(16):  # past TPE's 10 random start-up trials
        suggestion = sampler.ask()
        assert suggestion is not None and suggestion.number == index
        params = suggestion.params
        assert list(params) == ["lr", "batch", "optimizer"]
        assert type(params["lr"]) is float and 0.001 <= params["lr"] <= 0.1
        assert type(params["batch"]) is float and params["batch"] in {16.0 * k for k in range(1, 9)}
        assert params["optimizer"] in ("adam", "sgd", "rmsprop")
        numbers.append(suggestion.number)
        # One failure (None) and one NaN among the results: both are told as FAIL.
        value = None if index == 3 else math.nan if index == 4 else _tell_value(params)
        sampler.tell(suggestion.number, value)
    with pytest.raises(ValueError):
        sampler.tell(numbers[0], 1.0)  # told already


def test_bayesian_quniform_support_is_the_rounded_range() -> None:
    space = {"b": {"type": "quniform", "min_value": 3, "max_value": 21, "q": 4}}  # round(0.75)=1 .. round(5.25)=5
    sampler = make_sampler("bayesian", parse_space(space), seed=0)
    found = set()
    for _ in range(8):
        suggestion = sampler.ask()
        if suggestion is None:
            break
        found.add(suggestion.params["b"])
        sampler.tell(suggestion.number, suggestion.params["b"])
    assert found == {4.0, 8.0, 12.0, 16.0, 20.0}
    assert parse_space(space).size == 5


# ----------------------------------------------------------------------------- spelling and errors
def test_types_in_any_case_and_numeric_strings_are_accepted() -> None:
    space = parse_space({"a": {"type": "QUniform", "min_value": "1e1", "max_value": "20", "q": "5"},
                         "b": {"type": "LOGUNIFORM", "min_value": "-3", "max_value": -1},
                         "c": {"type": "Q_Log_Normal", "mu": "0", "sigma": "0.5", "q": 1},
                         "d": {"type": "RandInt", "upper": "3"}})
    assert space.size is None and space.names == ("a", "b", "c", "d")
    for params in _take({"a": {"type": "QUniform", "min_value": "1e1", "max_value": "20", "q": "5"}}, n=5, seed=0):
        assert params["a"] in (10.0, 15.0, 20.0)
    assert parse_space({"d": {"type": "RandInt", "upper": "3"}}).size == 3


@pytest.mark.parametrize(("space", "where"), [
    ({"lr": {"type": "uniform", "min_value": 0.1}}, "lr"),
    ({"lr": {"type": "uniform", "min_value": 0.1, "max_value": 0.01}}, "lr"),
    ({"lr": {"type": "loguniform", "min_value": "x", "max_value": 1}}, "lr"),
    ({"lr": {"type": "uniform", "min_value": True, "max_value": 1}}, "lr"),
    ({"lr": {"type": "uniform", "min_value": "nan", "max_value": 1}}, "lr"),
    ({"lr": {"type": "uniform", "min_value": 0, "max_value": 1, "q": 1}}, "lr"),
    ({"lr": {"type": "unifrom", "min_value": 0, "max_value": 1}}, "lr"),
    ({"lr": {"min_value": 0, "max_value": 1}}, "lr"),
    ({"lr": 0.01}, "lr"),
    ({"depth": {"type": "choice", "values": []}}, "depth"),
    ({"depth": {"type": "choice", "values": 4}}, "depth"),
    ({"depth": {"type": "choice"}}, "depth"),
    ({"depth": {"type": "choice", "values": [float("inf")]}}, "depth.values[0]"),
    ({"n": {"type": "randint", "upper": 0}}, "n"),
    ({"n": {"type": "randint", "upper": 0.9}}, "n"),
    ({"n": {"type": "randint", "upper": -3}}, "n"),
    ({"n": {"type": "randint", "upper": 2**64}}, "n"),
    ({"w": {"type": "normal", "mu": 0, "sigma": 0}}, "w"),
    ({"w": {"type": "lognormal", "mu": 0, "sigma": -1}}, "w"),
    ({"w": {"type": "qnormal", "mu": 0, "sigma": 1, "q": 0}}, "w"),
    ({"w": {"type": "quniform", "min_value": 0, "max_value": 1, "q": -1}}, "w"),
    ({"w": {"type": "qlognormal", "mu": 0, "sigma": 1}}, "w"),
    ({"opt": {"type": "choice", "values": [{"inner": {"type": "uniform", "min_value": 2, "max_value": 1}}]}},
     "opt.values[0].inner"),
    ({"opt": {"type": "choice", "values": [1, {"deep": {"type": "choice", "values": [{"x": {
        "type": "normal", "mu": 0, "sigma": 0}}]}}]}}, "opt.values[1].deep.values[0].x"),
    ({"opt": {"type": "choice", "values": [{}]}}, "opt.values[0]"),
])
def test_malformed_entries_name_their_key(space: dict, where: str) -> None:
    with pytest.raises(SearchSpaceError) as caught:
        parse_space(space)
    message = str(caught.value)
    assert f"search_space.{where}:" in message and "\n" not in message and ";" in message


@pytest.mark.parametrize("search_space", [{}, [], None])
def test_a_search_space_must_be_a_non_empty_mapping(search_space: Any) -> None:
    with pytest.raises(SearchSpaceError, match="search_space"):
        parse_space(search_space)


@pytest.mark.parametrize(("options", "match"), [
    ({"algorithm": "hyperband"}, "sampling_algorithm"),
    ({"rule": "halton"}, "rule"),
    ({"algorithm": "grid", "rule": "sobol"}, "rule"),
    ({"goal": "best"}, "goal"),
    ({"seed": -1}, "seed"),
    ({"seed": 2**32}, "seed"),
    ({"seed": True}, "seed"),
    ({"logbase": 0}, "logbase"),
    ({"logbase": "ten"}, "logbase"),
])
def test_bad_sampler_settings_are_refused(options: dict, match: str) -> None:
    settings_ = {"algorithm": "random", "seed": 0, **options}
    algorithm = settings_.pop("algorithm")
    with pytest.raises(SearchSpaceError, match=match):
        make_sampler(algorithm, parse_space(GRID), **settings_)


def test_log_distributions_that_overflow_are_refused() -> None:
    space = parse_space({"big": {"type": "loguniform", "min_value": 1, "max_value": 400}})
    make_sampler("random", space, seed=0)  # e ** 400 is a float
    with pytest.raises(SearchSpaceError, match="big"):
        make_sampler("random", space, seed=0, logbase=10)  # 10 ** 400 is not


def test_space_is_immutable() -> None:
    space = parse_space(GRID)
    assert isinstance(space, Space)
    with pytest.raises(AttributeError):
        space.size = 3  # type: ignore[misc]
    assert parse_space(GRID) == space


def test_random_sampling_ignores_tell() -> None:
    sampler = make_sampler("random", parse_space(GRID), seed=0, rule="Sobol")
    assert sampler.algorithm == "sobol"
    first = sampler.ask()
    assert first is not None
    sampler.tell(first.number, 1.0)
    sampler.tell(first.number, None)


# ----------------------------------------------------------------------------- format_value and imports
@pytest.mark.parametrize(("value", "text"), [
    (True, "True"), (False, "False"), (0.01, "0.01"), (64.0, "64.0"), (4, "4"), (1e-05, "1e-05"),
    ("adam", "adam"), (None, "None"),
    ({"const_val": 999, "val1": {"val11": 0.5}}, '{"const_val": 999, "val1": {"val11": 0.5}}'),
    ([1, "a"], '[1, "a"]'),
])
def test_format_value(value: Any, text: str) -> None:
    assert format_value(value) == text


def test_importing_the_module_imports_no_heavy_library() -> None:
    code = ("import sys, runner.sweep.sampling; "
            "print([m for m in ('numpy', 'scipy', 'optuna') if m in sys.modules])")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
