"""validator.search_space, the one search-space model of aml-lint, aml-run and aml-quiz.

First a grid with a repeated value, `choice [1, 1, 2] x [4, 5, 6]` with `max_total_trials: 8`, through
all three tools as a user runs them: aml-lint's reported grid size, the number of trials
aml-run really runs and aml-quiz's grid_size check must all be 6 (a value listed twice adds no
grid point; the evidence is in the module's docstring). Then the model itself: parsing never
raises, the grid is the distinct combinations in product order, and the linter, the runner's
samplers, the quiz and the generated schemas all answer from it.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from amlrun import aml_run, lab, submit  # noqa: F401,F811  (lab is a fixture)
from conftest import BIN
from validator import lint_text
from validator.search_space import (ACCEPTS, ALGORITHMS, DISTRIBUTIONS, PARAMETERS, Branch, Constant,
                                    Distribution, SearchSpace, accepts, algorithm_of, dotted, kind_of, parse,
                                    read_number, value_key)

SETTINGS = settings(max_examples=int(os.environ.get("AMLLAB_EXAMPLES", "100")), deadline=None)
ROOT = Path(__file__).resolve().parents[2]

REPEATED = """\
$schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json
type: sweep
trial:
  command: echo a=${{search_space.a}} b=${{search_space.b}}
  environment:
    image: python:3.11-slim
sampling_algorithm: grid
search_space:
  a: {type: choice, values: [1, 1, 2]}
  b: {type: choice, values: [4, 5, 6]}
objective: {goal: maximize, primary_metric: score}
limits: {max_total_trials: 8, max_concurrent_trials: 2}
"""

QUIZ_BANK = """\
domain: sweep
questions:
  - id: sweep-repeated-grid
    type: numeric
    evidence: documented
    sources: [https://learn.microsoft.com/azure/machine-learning/reference-yaml-job-sweep?view=azureml-api-2]
    prompt: |
      How many trials does this grid sweep run?

      ```yaml
{yaml}      ```
    answer: {answer}
    explanation: The value 1 is listed twice, so the grid has 2 x 3 = 6 distinct combinations.
    check:
      grid_size: {{}}
"""


# ----------------------------------------------------------------------------- the three tools agree
def _lint_grid_size(spec: Path) -> tuple[int, list[str]]:
    """The grid size aml-lint reports (its AML321/AML322 message), and the codes it reports."""
    result = subprocess.run([str(BIN / "aml-lint"), "--isolated", "--format", "json", str(spec)],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr  # warnings only
    diagnostics = json.loads(result.stdout)["diagnostics"]
    sizes = {int(m[1]) for d in diagnostics if (m := re.search(r"the grid has (\d+) points", d["message"]))}
    assert len(sizes) == 1, diagnostics
    return sizes.pop(), sorted(d["code"] for d in diagnostics)


def _quiz_grid_size(folder: Path, answer: int) -> tuple[str, str]:
    """aml-quiz's grid_size check on a numeric question about the spec: (status, detail)."""
    from quiz.bank import load_file
    from quiz.checks import check

    indented = textwrap.indent(REPEATED, " " * 6)
    bank = folder / f"bank-{answer}.yml"
    bank.write_text(QUIZ_BANK.format(yaml=indented, answer=answer))
    (question,) = load_file(bank, strict=False)
    result = check(question)
    return result.status, result.detail


def test_a_grid_with_repeated_values_is_the_same_size_to_lint_run_and_quiz(lab: Path) -> None:
    folder = lab / "repeated-grid"
    folder.mkdir()
    spec = folder / "sweep.yml"
    spec.write_text(REPEATED)

    # aml-lint: the grid has 6 points, so 8 trials overstate it (AML321), and the repeat is AML308.
    linted, codes = _lint_grid_size(spec)
    assert codes == ["AML308", "AML321"]

    # aml-run: the sweep really runs (echo trials), and stops when the grid is done.
    name = submit(lab, spec)
    streamed = aml_run("job", "stream", name, cwd=lab, timeout=300)
    assert "Traceback" not in streamed.stdout + streamed.stderr
    result = aml_run("job", "show", name, "-o", "json", cwd=lab)
    assert result.returncode == 0, result.stderr
    job = json.loads(result.stdout)
    assert job["status"] == "Completed", job.get("error")
    params = [row["params"] for row in job["trials"]]
    ran = len(params)
    assert [(p["a"], p["b"]) for p in params] == [(a, b) for a in (1, 2) for b in (4, 5, 6)]

    # aml-quiz: the grid_size check passes with 6 and fails with the 9 the old linter taught.
    status, detail = _quiz_grid_size(folder, 6)
    found = re.search(r"(\d+) configurations", detail)
    assert status == "passed" and found is not None
    quizzed = int(found[1])
    status, detail = _quiz_grid_size(folder, 9)
    assert status == "failed" and "holds 6 configurations, the answer says 9" in detail

    model = parse(yaml.safe_load(REPEATED)["search_space"])
    assert linted == ran == quizzed == model.grid_size == model.size == 6
    assert job["properties"]["space_size"] == 6


# ----------------------------------------------------------------------------- names and tables
@pytest.mark.parametrize(("raw", "kind"), [
    ("quniform", "quniform"), ("QUniform", "quniform"), ("q_uniform", "quniform"), ("CHOICE", "choice"),
    ("RandInt", "randint"), ("Q_Log_Normal", "qlognormal"), ("unifrom", None), (3, None), (None, None),
])
def test_a_type_is_read_as_the_sdk_compares_it(raw: Any, kind: str | None) -> None:
    assert kind_of(raw) == kind


def test_algorithms_and_what_each_accepts_are_the_documented_ones() -> None:
    assert ALGORITHMS == ("random", "grid", "bayesian")
    assert [algorithm_of(x) for x in ("Grid", "BAYESIAN", "random", "sobol", None)] == \
        ["grid", "bayesian", "random", None, None]
    assert set(ACCEPTS["random"]) == set(DISTRIBUTIONS) == set(PARAMETERS)
    assert [k for k in DISTRIBUTIONS if accepts("grid", k)] == ["choice"]
    assert [k for k in DISTRIBUTIONS if accepts("bayesian", k)] == ["choice", "uniform", "quniform"]
    assert not accepts("hyperband", "choice")


def test_the_generated_schema_takes_the_models_distributions_and_parameters() -> None:
    from validator.schema_check import load_schema

    schema = load_schema("sweepJob")
    branches = schema["properties"]["search_space"]["additionalProperties"]["allOf"]
    found = {branch["if"]["properties"]["type"]["enum"][0]: sorted(set(branch["then"]["properties"]) - {"type"})
             for branch in branches}
    assert found == {kind: sorted(keys) for kind, keys in PARAMETERS.items()}
    sampling = schema["properties"]["sampling_algorithm"]
    for spellings in (sampling["then"]["enum"], sampling["else"]["properties"]["type"]["enum"]):
        assert [v for v in spellings if v.islower()] == list(ALGORITHMS)


@pytest.mark.parametrize(("values", "distinct"), [
    ([1, 1, 2], [1, 2]),
    ([1, 1.0, True, "1", None, 1], [1, 1.0, True, "1", None]),
    ([{"a": 1, "b": 2}, {"b": 2, "a": 1}], [{"a": 1, "b": 2}]),
    ([[1, 2], [2, 1], [1, 2]], [[1, 2], [2, 1]]),
])
def test_values_are_the_same_when_they_are_equal_as_json(values: list, distinct: list) -> None:
    (entry,) = parse({"x": {"type": "choice", "values": values}}).entries
    assert [option.data if isinstance(option, Branch) else option.value for option in entry.distinct] == distinct
    assert value_key(1) != value_key(1.0) != value_key(True) != value_key("1")


def test_numbers_and_paths() -> None:
    assert [read_number(x) for x in (1, 0.5, "1e-3", "x", True, None, float("nan"), "inf")] == \
        [1.0, 0.5, 0.001, None, None, None, None, None]
    assert dotted(("conv", "values", 0, "val1")) == "conv.values[0].val1"
    entry = parse({"n": {"type": "randint", "upper": 5.5}}).entries[0]
    assert entry.upper == 5 and entry.size == 5


# ----------------------------------------------------------------------------- parsing never raises
JSONISH = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=3),
              st.sampled_from(["choice", "QUniform", "randint", "normal", "values", "type"])),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.one_of(st.sampled_from(["type", "values", "upper", "min_value",
                                                                       "max_value", "q", "mu", "sigma", "x"]),
                                                      st.integers(0, 3)), inner, max_size=4)),
    max_leaves=25)


@SETTINGS
@given(st.one_of(JSONISH, st.dictionaries(st.text(max_size=3), JSONISH, max_size=4)))
def test_parsing_anything_never_raises(data: Any) -> None:
    space = parse(data)
    assert isinstance(space, SearchSpace)
    for entry in space.walk():
        assert isinstance(entry, Distribution) and (entry.depth == 0 or entry.kind is not None)
        entry.low, entry.high, entry.mu, entry.sigma, entry.q, entry.upper, entry.size  # noqa: B018
    size, grid = space.size, space.grid_size
    assert size is None or size >= 1
    assert len(list(space.grid())) == (grid or 0)


def test_the_linter_does_not_crash_on_a_broken_space() -> None:
    text = ("$schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json\ntype: sweep\n"
            "trial: {command: echo, environment: azureml:e:1}\nsampling_algorithm: grid\n"
            "search_space: {a: 3, b: {type: choice, values: 4}, c: {type: choice, values: [[1], {x: 1}, .nan]},"
            " d: {type: bogus}, 7: {type: choice, values: [{k: {type: uniform}}]}}\n"
            "objective: {goal: maximize, primary_metric: m}\nlimits: {max_total_trials: 5}\n")
    report = lint_text(text, "sweep.yml")
    assert not [d for d in report.diagnostics if d.code == "AML000"], report.diagnostics


# ----------------------------------------------------------------------------- one grid for every tool
grids = st.dictionaries(st.sampled_from(["a", "b", "c", "d"]),
                        st.lists(st.sampled_from([0, 1, 2, 1.0, True, "1", "x"]), min_size=1, max_size=5),
                        min_size=1, max_size=3)


@SETTINGS
@given(grids)
def test_the_grid_is_each_distinct_combination_once_in_product_order(values: dict[str, list]) -> None:
    space = parse({name: {"type": "choice", "values": items} for name, items in values.items()})
    # Independently: walk the full product and keep each combination the first time it comes.
    seen: dict[str, dict] = {}
    for point in itertools.product(*values.values()):
        params = dict(zip(values, point))
        seen.setdefault(json.dumps(params, sort_keys=True), params)
    expected = list(seen.values())
    assert list(space.grid()) == expected
    assert space.grid_size == space.size == len(expected) == \
        math.prod(len({value_key(v) for v in items}) for items in values.values())


@SETTINGS
@given(grids, st.integers(1, 60))
def test_lint_run_and_quiz_count_every_grid_alike(values: dict[str, list], trials: int) -> None:
    """The linter's AML321/AML322, the runner's grid sampler and Space.size, and the quiz's
    count, on grids with repeated values, all give the model's grid size."""
    from quiz.checks import grid_size as quiz_grid_size
    from runner.sweep.sampling import make_sampler, parse_space

    search_space = {name: {"type": "choice", "values": items} for name, items in values.items()}
    size = parse(search_space).grid_size
    assert size is not None

    sampler = make_sampler("grid", parse_space(search_space), seed=0)
    ran = []
    while (suggestion := sampler.ask()) is not None:
        ran.append(suggestion.params)
    assert ran == list(parse(search_space).grid())
    assert len(ran) == parse_space(search_space).size == quiz_grid_size({"search_space": search_space}) == size

    spec = {"$schema": "https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json", "type": "sweep",
            "trial": {"command": "echo " + " ".join(f"${{{{search_space.{n}}}}}" for n in values),
                      "environment": "azureml:e:1"},
            "compute": "azureml:cpu", "sampling_algorithm": "grid", "search_space": search_space,
            "objective": {"goal": "maximize", "primary_metric": "m"}, "limits": {"max_total_trials": trials}}
    report = lint_text(yaml.safe_dump(spec, sort_keys=False), "sweep.yml")
    messages = {d.code: d.message for d in report.diagnostics}
    assert ("AML321" in messages) == (trials > size) and ("AML322" in messages) == (trials < size)
    for code in ("AML321", "AML322"):
        if code in messages:
            assert f"the grid has {size} points" in messages[code]


def test_importing_the_model_loads_the_standard_library_only() -> None:
    code = ("import sys; before = set(sys.modules); import validator.search_space; "
            "print(sorted(m for m in set(sys.modules) - before if not m.startswith('_')))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                            check=False)
    assert result.returncode == 0, result.stderr
    loaded = set(json.loads(result.stdout.replace("'", '"')))
    assert {"validator", "validator.search_space"} <= loaded
    assert not {m for m in loaded if m.split(".")[0] in ("yaml", "jsonschema", "numpy", "scipy", "optuna",
                                                         "mlflow", "torch", "textual", "runner", "quiz")}
    assert not {m for m in loaded if m.startswith("validator.")} - {"validator.search_space"}


def test_the_model_is_a_tree_of_constants_branches_and_distributions() -> None:
    space = parse({"conv": {"type": "choice", "values": [
        {"const": 9, "inner": {"type": "choice", "values": [1, 2, 2]}, "plain": {"type": "x"}},
        "flat", "flat"]}})
    (conv,) = space.entries
    branch, flat, _ = conv.options
    assert isinstance(branch, Branch) and isinstance(flat, Constant) and flat.value == "flat"
    assert [type(item).__name__ for _, item in branch.items] == ["Constant", "Distribution", "Constant"]
    assert [(e.name, e.path, e.depth) for e in space.walk()] == [
        ("conv", ("conv",), 0), ("inner", ("conv", "values", 0, "inner"), 1)]
    assert space.size == 2 + 1 and space.grid_size == 2  # {const, inner 1|2, plain} x2, and "flat"
