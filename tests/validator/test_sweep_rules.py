"""Properties of the sweep rules (AML3xx) over generated search spaces, checked against small
oracles written here from SPEC §4.5 (which distributions each sampling algorithm accepts) and
the grid semantics (one trial per combination of choice values)."""

from __future__ import annotations

import math

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from validator.engine import lint_text

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

GRID_ALLOWED = {"choice"}
BAYESIAN_ALLOWED = {"choice", "uniform", "quniform"}

names = st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True)
finite = st.floats(min_value=-50, max_value=50, allow_nan=False, allow_infinity=False)


@st.composite
def bounds(draw: st.DrawFn, low: float = -20, high: float = 20) -> tuple[float, float]:
    start = round(draw(st.floats(min_value=low, max_value=high, allow_nan=False)), 3)
    width = draw(st.floats(min_value=0.01, max_value=10, allow_nan=False))
    return start, round(start + width, 3)


@st.composite
def distribution(draw: st.DrawFn) -> dict:
    """One search-space entry with sane parameters (nothing else in it is wrong)."""
    kind = draw(st.sampled_from(["choice", "randint", "uniform", "loguniform", "quniform", "qloguniform",
                                 "normal", "lognormal", "qnormal", "qlognormal"]))
    if kind == "choice":
        values = draw(st.one_of(
            st.lists(st.integers(-1000, 1000), min_size=1, max_size=5, unique=True),
            st.lists(st.text("abcdefgh", min_size=1, max_size=6), min_size=1, max_size=5, unique=True)))
        return {"type": kind, "values": values}
    if kind == "randint":
        return {"type": kind, "upper": draw(st.integers(1, 100))}
    if kind in ("uniform", "quniform"):
        low, high = draw(bounds())
        entry = {"type": kind, "min_value": low, "max_value": high}
    elif kind in ("loguniform", "qloguniform"):
        low, high = draw(bounds(-12, -1))  # exponents, as the docs mean them
        entry = {"type": kind, "min_value": low, "max_value": high}
    else:
        entry = {"type": kind, "mu": round(draw(finite), 3),
                 "sigma": round(draw(st.floats(min_value=0.01, max_value=10, allow_nan=False)), 3)}
    if kind.startswith("q"):
        entry["q"] = draw(st.sampled_from([1, 2, 5, 0.5]))
    return entry


algorithms = st.sampled_from(["random", "grid", "bayesian"])
spellings = st.sampled_from(["plain", "upper", "capitalized", "object"])


def _spell(algorithm: str, spelling: str) -> object:
    if spelling == "upper":
        return algorithm.upper()
    if spelling == "capitalized":
        return algorithm.capitalize()
    if spelling == "object":
        return {"type": algorithm}
    return algorithm


def _spec(space: dict, sampling: object, *, step: bool, trials: int) -> dict:
    core = {"sampling_algorithm": sampling, "search_space": space,
            "objective": {"goal": "maximize", "primary_metric": "auc"},
            "limits": {"max_total_trials": trials}}
    if not step:
        command = "python train.py " + " ".join(f"--{k} ${{{{search_space.{k}}}}}" for k in space)
        return {"type": "sweep", "trial": {"command": command, "environment": "azureml:sklearn-train:2"},
                "compute": "azureml:cpu-cluster", **core}
    command = "python train.py " + " ".join(f"--{k} ${{{{inputs.{k}}}}}" for k in space)
    trial = {"command": command, "environment": "azureml:sklearn-train:2",
             "inputs": {k: {"type": "number"} for k in space}}
    return {"$schema": "https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json",
            "type": "pipeline", "settings": {"default_compute": "azureml:cpu-cluster"},
            "jobs": {"tune": {"type": "sweep", "trial": trial, **core}}}


def _lint(spec: dict):
    text = yaml.safe_dump(spec, sort_keys=False)
    report = lint_text(text, "sweep.yml")
    assert not [d for d in report.diagnostics if d.code == "AML000"], report.diagnostics
    return report


@SETTINGS
@given(st.dictionaries(names, distribution(), min_size=1, max_size=6), algorithms, spellings, st.booleans(),
       st.integers(1, 1000))
def test_algorithm_errors_exactly_when_a_distribution_is_not_allowed(
        space: dict, algorithm: str, spelling: str, step: bool, trials: int) -> None:
    report = _lint(_spec(space, _spell(algorithm, spelling), step=step, trials=trials))
    grid_errors = [d for d in report.diagnostics if d.code == "AML302"]
    bayesian_errors = [d for d in report.diagnostics if d.code == "AML303"]

    # The oracle: SPEC §4.5 read directly, one finding per offending entry.
    disallowed = {"grid": GRID_ALLOWED, "bayesian": BAYESIAN_ALLOWED}.get(algorithm)
    offending = sorted(k for k, e in space.items() if disallowed is not None and e["type"] not in disallowed)
    prefix = "/jobs/tune" if step else ""
    expected = {f"{prefix}/search_space/{k}/type" for k in offending}

    if algorithm == "grid":
        assert {d.pointer for d in grid_errors} == expected and len(grid_errors) == len(offending)
        assert not bayesian_errors
    elif algorithm == "bayesian":
        assert {d.pointer for d in bayesian_errors} == expected and len(bayesian_errors) == len(offending)
        assert not grid_errors
    else:
        assert not grid_errors and not bayesian_errors
    # Sane parameters never trip the parameter rules.
    assert not {d.code for d in report.diagnostics} & {"AML308", "AML310", "AML311", "AML312", "AML313", "AML315"}


@SETTINGS
@given(st.dictionaries(names, st.lists(st.integers(0, 99), min_size=1, max_size=6, unique=True),
                       min_size=1, max_size=4),
       st.integers(1, 1000), st.booleans())
def test_grid_size_warnings_match_the_product_of_choice_sizes(values: dict, trials: int, step: bool) -> None:
    space = {name: {"type": "choice", "values": items} for name, items in values.items()}
    report = _lint(_spec(space, "grid", step=step, trials=trials))
    codes = [d.code for d in report.diagnostics]
    size = math.prod(len(items) for items in values.values())
    assert ("AML321" in codes) == (trials > size)
    assert ("AML322" in codes) == (trials < size)
    assert "AML302" not in codes and "AML309" not in codes
