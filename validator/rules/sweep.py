"""AML3xx: sweeps — sampling algorithm against the search space, distribution parameters,
search-space names and their use, limits, grid size and early-termination policies.

Every rule here applies both to a standalone sweep job (kind sweepJob) and to each sweep step
of a pipeline (`jobs.<name>` with `type: sweep` in a pipeline job or pipeline component):
:func:`sweeps` yields them all, with the path of the sweep's mapping inside the document.
The JSON Schema already checks types, enums, required and unknown keys (AML1xx), so the checks
below only look at values of the right type and stay silent on everything else.
Facts and section numbers come from shared/SPEC.md (§4, §11, §12 rules 25-39 and 48).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterator

from .. import early_termination, expressions
from ..diagnostic import Finding, Severity
from ..loader import Document, Path_
from ..references import is_local_path, resolve
from ..search_space import (GAUSSIAN, QUANTIZED, RANGED, SearchSpace, accepts, algorithm_of, parse,
                            value_key)
from ..suggest import closest
from ._base import check
from ..values import enum_name as _normalise
from ..values import mapping as _mapping

SWEEP_KINDS = ("sweepJob", "pipelineJob", "pipelineComponent")
PIPELINE_KINDS = ("pipelineJob", "pipelineComponent")

POLICIES = tuple(early_termination.POLICIES)

NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_TRIALS = 1000
MIN_TIMEOUT = 60
BAYESIAN_QUNIFORM_POINTS = 100_000
BAYESIAN_TRIALS_PER_PARAMETER = 20
# loguniform bounds above this are exponents no one means: e^30 ≈ 1.07e13.
LOG_EXPONENT_CEILING = 30

# ----------------------------------------------------------------------------- examples
SWEEP = """\
$schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json
type: sweep
trial:
  command: python train.py --lr ${{search_space.lr}} --depth ${{search_space.depth}}
  environment: azureml:sklearn-train:2
compute: azureml:cpu-cluster
sampling_algorithm: random
search_space:
  lr:
    type: uniform
    min_value: 0.001
    max_value: 0.1
  depth:
    type: choice
    values: [4, 6, 8]
objective:
  goal: maximize
  primary_metric: auc
limits:
  max_total_trials: 40
  max_concurrent_trials: 4
"""
GRID = (SWEEP.replace("sampling_algorithm: random", "sampling_algorithm: grid")
        .replace("    type: uniform\n    min_value: 0.001\n    max_value: 0.1\n",
                 "    type: choice\n    values: [0.001, 0.01, 0.1]\n")
        .replace("max_total_trials: 40", "max_total_trials: 9"))
BAYESIAN = SWEEP.replace("sampling_algorithm: random", "sampling_algorithm: bayesian")
BANDIT = SWEEP + """\
early_termination:
  type: bandit
  slack_factor: 0.1
  evaluation_interval: 1
  delay_evaluation: 5
"""
TRUNCATION = SWEEP + """\
early_termination:
  type: truncation_selection
  truncation_percentage: 20
  evaluation_interval: 1
  delay_evaluation: 5
"""
PIPELINE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:cpu-cluster
jobs:
  tune:
    type: sweep
    trial:
      command: python train.py --lr ${{inputs.learning_rate}} --depth ${{inputs.depth}}
      environment: azureml:sklearn-train:2
      inputs:
        learning_rate:
          type: number
          default: 0.01
        depth:
          type: integer
          default: 6
    sampling_algorithm: random
    search_space:
      learning_rate:
        type: uniform
        min_value: 0.001
        max_value: 0.1
      depth:
        type: choice
        values: [4, 6, 8]
    objective:
      goal: maximize
      primary_metric: auc
    limits:
      max_total_trials: 40
      max_concurrent_trials: 4
"""


# ----------------------------------------------------------------------------- the walk
@dataclass
class Sweep:
    """A standalone sweep job or a pipeline's sweep step: its mapping and where it sits."""

    path: Path_
    data: dict
    owner: str          # "the sweep" or "sweep step 'tune'", for messages
    step: str | None    # the step name, None for a sweep job

    @cached_property
    def space(self) -> SearchSpace:
        """The search space as validator.search_space models it."""
        return parse(self.data.get("search_space"))


@dataclass
class Entry:
    """One distribution of a search space. Nested entries come from the mappings of a
    `choice` (a conditional search space, random sampling only)."""

    name: str
    data: dict
    path: Path_
    distribution: str | None  # normalised type, None when it names no distribution
    nested: bool = False


def sweeps(document: Document) -> Iterator[Sweep]:
    """Every sweep-like mapping of the document, with its path."""
    data = document.data
    if not isinstance(data, dict):
        return
    if document.kind == "sweepJob":
        yield Sweep((), data, "the sweep", None)
    elif document.kind in PIPELINE_KINDS:
        for name, node in _mapping(data.get("jobs")).items():
            if isinstance(node, dict) and node.get("type") == "sweep":
                yield Sweep(("jobs", name), node, f"sweep step '{name}'", str(name))


def algorithm(sweep: Sweep) -> tuple[str | None, Path_]:
    """The sampling algorithm (string or object form), normalised, and the path of its value."""
    value = sweep.data.get("sampling_algorithm")
    path = sweep.path + ("sampling_algorithm",)
    if isinstance(value, dict):
        return algorithm_of(value.get("type")), path + ("type",)
    return algorithm_of(value), path


def entries(sweep: Sweep, *, nested: bool = False) -> Iterator[Entry]:
    """The search-space entries that are mappings; with ``nested``, also the distributions
    inside the mappings of a `choice` (the model's walk)."""
    if not isinstance(sweep.data.get("search_space"), dict):
        return
    base = sweep.path + ("search_space",)
    found = sweep.space.walk() if nested else iter(sweep.space.entries)
    for entry in found:
        if isinstance(entry.data, dict):
            yield Entry(entry.name, entry.data, base + entry.path, entry.kind, entry.nested)


def _number(value: Any) -> float | int | None:
    """A finite int or float (not a bool), else None: other types are the schema's business."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _limits(sweep: Sweep) -> dict:
    return _mapping(sweep.data.get("limits"))


def _policy(sweep: Sweep) -> tuple[str | None, dict, Path_]:
    policy = _mapping(sweep.data.get("early_termination"))
    return _normalise(policy.get("type"), POLICIES), policy, sweep.path + ("early_termination",)


def _distribution_word(entry: Entry) -> str:
    return entry.distribution or str(entry.data.get("type"))


# ----------------------------------------------------------------------------- sampling
@check("AML301", "missing-sampling-algorithm", Severity.WARNING,
       "A sweep has no `sampling_algorithm`, so the service samples at random.",
       bad=SWEEP.replace("sampling_algorithm: random\n", ""), good=SWEEP, kinds=SWEEP_KINDS)
def missing_sampling_algorithm(document: Document) -> Iterator[Finding]:
    """
    The reference page marks `sampling_algorithm` required, but azure-ai-ml sends `null` when it is
    missing and the service then samples at random. A sweep that was meant to be a grid or a
    Bayesian search silently becomes a random one; write the algorithm so the spec says how it
    samples.

    See: reference-yaml-job-sweep

    Provenance: SPEC §4.1, §11 row 3.
    """
    for sweep in sweeps(document):
        if sweep.data.get("sampling_algorithm") is None:
            yield Finding(
                f"{sweep.owner} has no 'sampling_algorithm': the service defaults to "
                "random sampling", sweep.path, key=True,
                hint="write `sampling_algorithm: random` (or `grid` or `bayesian`) to say how it samples")


@check("AML302", "grid-needs-choice", Severity.ERROR,
       "Grid sampling is used with a search-space entry that is not a `choice`.",
       bad=GRID.replace("    type: choice\n    values: [0.001, 0.01, 0.1]\n",
                        "    type: uniform\n    min_value: 0.001\n    max_value: 0.1\n"),
       good=GRID, kinds=SWEEP_KINDS)
def grid_needs_choice(document: Document) -> Iterator[Finding]:
    """
    Grid sampling runs every combination of a finite list of values, so it supports only `choice`
    (the hyperparameter tuning guide; `GridParameterSampling` in the v1 SDK). A continuous
    distribution has no grid points. azure-ai-ml loads such a sweep without a word; amllab stops it
    before it is submitted.

    See: how-to-tune-hyperparameters,
         https://learn.microsoft.com/python/api/azureml-train-core/azureml.train.hyperdrive.gridparametersampling

    Provenance: SPEC §4.5, §12 rule 30.
    """
    for sweep in sweeps(document):
        if algorithm(sweep)[0] != "grid":
            continue
        for entry in entries(sweep):
            if entry.distribution is None or accepts("grid", entry.distribution):
                continue
            yield Finding(
                f"grid sampling needs a 'choice' for every search-space entry, but "
                f"'{entry.name}' is '{_distribution_word(entry)}'", entry.path + ("type",),
                hint=f"list the grid points (`{entry.name}: {{type: choice, values: [...]}}`), "
                     "or use `sampling_algorithm: random`")


@check("AML303", "bayesian-distribution", Severity.ERROR,
       "Bayesian sampling is used with a distribution other than `choice`, `uniform` or `quniform`.",
       bad=BAYESIAN.replace("    type: uniform\n    min_value: 0.001\n",
                            "    type: loguniform\n    min_value: -6.9\n")
                   .replace("    max_value: 0.1\n", "    max_value: -2.3\n"),
       good=BAYESIAN, kinds=SWEEP_KINDS)
def bayesian_distribution(document: Document) -> Iterator[Finding]:
    """
    Bayesian sampling supports only `choice`, `uniform` and `quniform` (the hyperparameter tuning
    guide; `BayesianParameterSampling` in the v1 SDK). azure-ai-ml does not check it, so a Bayesian
    sweep over `loguniform` or `normal` is accepted by the SDK and refused later.

    See: how-to-tune-hyperparameters,
         https://learn.microsoft.com/python/api/azureml-train-core/azureml.train.hyperdrive.bayesianparametersampling

    Provenance: SPEC §4.5, §12 rule 30.
    """
    for sweep in sweeps(document):
        if algorithm(sweep)[0] != "bayesian":
            continue
        for entry in entries(sweep):
            if entry.distribution is None or accepts("bayesian", entry.distribution):
                continue
            yield Finding(
                f"bayesian sampling supports only choice, uniform and quniform, but "
                f"'{entry.name}' is '{_distribution_word(entry)}'", entry.path + ("type",),
                hint=f"describe '{entry.name}' with choice, uniform or quniform, or use "
                     "`sampling_algorithm: random`")


@check("AML304", "bayesian-early-termination", Severity.ERROR,
       "Bayesian sampling is combined with an early-termination policy.",
       bad=BAYESIAN + "early_termination:\n  type: median_stopping\n  evaluation_interval: 1\n"
                      "  delay_evaluation: 5\n",
       good=BAYESIAN, kinds=SWEEP_KINDS)
def bayesian_early_termination(document: Document) -> Iterator[Finding]:
    """
    Bayesian sampling chooses each trial from the results of the earlier ones; an early termination
    policy is not supported with it (the v1 `BayesianParameterSampling` class and the R SDK
    document it; the v2 page is silent and azure-ai-ml accepts the combination). amllab follows the
    documented restriction and rejects it.

    See: https://learn.microsoft.com/python/api/azureml-train-core/azureml.train.hyperdrive.bayesianparametersampling,
         how-to-tune-hyperparameters

    Provenance: SPEC §4.5, §11 row 8 and §12 rule 31 settle on rejecting it.
    """
    for sweep in sweeps(document):
        if algorithm(sweep)[0] != "bayesian" or sweep.data.get("early_termination") is None:
            continue
        yield Finding(
            "an early-termination policy is not supported with bayesian sampling",
            sweep.path + ("early_termination",), key=True,
            hint="remove `early_termination`, or use random or grid sampling to keep the policy")


# ----------------------------------------------------------------------------- search space names
def _valid_name(name: str) -> str:
    fixed = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return "_" + fixed if not fixed or fixed[0].isdigit() else fixed


@check("AML305", "search-space-name", Severity.ERROR,
       "A search-space key is not made of letters, digits and underscores.",
       bad=SWEEP.replace("lr:", "learning-rate:").replace("search_space.lr", "search_space.learning-rate"),
       good=SWEEP, kinds=SWEEP_KINDS)
def search_space_name(document: Document) -> Iterator[Finding]:
    """
    Search-space keys become trial parameters and must match `^[A-Za-z_][A-Za-z0-9_]*$`.
    azure-ai-ml loads `learning-rate` and fails only when it builds the request: "Key name
    learning-rate must be composed letters, numbers, and underscore".

    See: reference-yaml-job-sweep

    Provenance: SPEC §4.2; §12 rule 27.
    """
    for sweep in sweeps(document):
        for name in _mapping(sweep.data.get("search_space")):
            text = str(name)
            if NAME_RE.match(text):
                continue
            yield Finding(
                f"search-space key '{text}' is not a valid name: use letters, digits and "
                "underscores, not starting with a digit (the service rejects it at submission)",
                sweep.path + ("search_space", name), key=True,
                hint=f"rename it to '{_valid_name(text)}', and every reference to it")


def _search_space_references(texts: list[str]) -> set[str]:
    """Every name a text refers to as `${{search_space.X}}` (or the deprecated `{search_space.X}`)."""
    found = set()
    for text in texts:
        template = expressions.parse(text)
        for reference in [*template.references, *template.deprecated]:
            if reference.context == "search_space" and len(reference.parts) >= 2:
                found.add(reference.parts[1])
    return found


def _search_space_used(name: str, texts: list[str], referenced: set[str]) -> bool:
    if name in referenced:
        return True
    pattern = re.compile(r"search_space\s*\.\s*" + re.escape(name) + r"(?![\w-])")
    for text in texts:
        # A malformed reference (AML201's finding) or the environment variable the service sets.
        if pattern.search(text) or f"AZUREML_SWEEP_{name}" in text:
            return True
    return False


@check("AML306", "unused-search-space", Severity.WARNING,
       "A search-space entry is never used in the trial command.",
       bad=SWEEP.replace(" --depth ${{search_space.depth}}", ""), good=SWEEP, kinds=("sweepJob",))
def unused_search_space(document: Document) -> Iterator[Finding]:
    """
    Each trial samples every entry, but the script only sees the values the trial command passes to
    it (`--lr ${{search_space.lr}}`). An entry the command never mentions is sampled, logged and
    ignored: the sweep looks like it tunes it, and every trial really runs with the script's
    default (the warning is an inference). The service also exposes the value as the environment
    variable `AZUREML_SWEEP_<name>`; a command or environment variable that names it counts as a
    use. A script that reads it by itself cannot be seen from the spec: suppress the warning there.
    References to entries that do not exist are AML204; an entry that such a reference evidently
    meant (AML204's "did you mean") is not reported again.

    See: how-to-tune-hyperparameters

    Provenance: SPEC §12 rule 28.
    """
    for sweep in sweeps(document):
        trial = _mapping(sweep.data.get("trial"))
        command = trial.get("command")
        if not isinstance(command, str):
            continue
        texts = [command] + [v for v in _mapping(trial.get("environment_variables")).values()
                             if isinstance(v, str)]
        space = _mapping(sweep.data.get("search_space"))
        referenced = _search_space_references(texts)
        # A reference to a misspelt entry is AML204's finding, which names this entry already.
        meant = {closest(name, space) for name in referenced if name not in space}
        for name in space:
            text = str(name)
            if text in meant or _search_space_used(text, texts, referenced):
                continue
            yield Finding(
                f"search-space entry '{text}' is never used in the trial command: its value "
                "is sampled but never reaches the script", sweep.path + ("search_space", name), key=True,
                hint=f"pass it to the script (for example `--{text.replace('_', '-')} "
                     f"${{{{search_space.{text}}}}}`), or remove the entry")


def _trial_component(document: Document, sweep: Sweep) -> tuple[dict | None, str]:
    """The trial component's data and how to name it, or None when it cannot be read here
    (`azureml:` references, missing files: other rules report those)."""
    trial = sweep.data.get("trial")
    if isinstance(trial, dict):
        return trial, "the inline trial component"
    if not is_local_path(trial):
        return None, ""
    referenced = resolve(document, trial)
    data = referenced.data
    if not isinstance(data, dict):
        return None, ""
    name = data.get("name")
    shown = f"'{name}' ({trial})" if isinstance(name, str) and name else f"'{trial}'"
    return data, f"the trial component {shown}"


@check("AML307", "search-space-not-trial-input", Severity.ERROR,
       "A sweep step's search-space key is not an input of its trial component.",
       bad=PIPELINE.replace("    search_space:\n      learning_rate:", "    search_space:\n      lr:"),
       good=PIPELINE, kinds=PIPELINE_KINDS)
def search_space_not_trial_input(document: Document) -> Iterator[Finding]:
    """
    In a pipeline's sweep step, each search-space key is handed to the trial component's input of
    the same name. A key that names no input reaches nothing: every trial runs with the input's
    default, so the sweep tunes nothing. azure-ai-ml does not check it. The trial is read from a
    local component file or an inline component; an `azureml:` trial cannot be checked offline.

    See: how-to-use-sweep-in-pipeline

    Provenance: SPEC §4.2, §5.5, §12 rule 48.
    """
    for sweep in sweeps(document):
        search_space = _mapping(sweep.data.get("search_space"))
        if not search_space:
            continue
        component, shown = _trial_component(document, sweep)
        if component is None:
            continue
        inputs = _mapping(component.get("inputs"))
        for name in search_space:
            text = str(name)
            if text in inputs:
                continue
            if inputs:
                message = f"search-space key '{text}' of {sweep.owner} is not an input of {shown}"
                close = closest(text, inputs)
                if close:
                    message += f"; did you mean '{close}'?"
                hint = (f"the trial's inputs: {', '.join(str(i) for i in inputs)}; a search-space key "
                        "is passed to the input of the same name")
            else:
                message = (f"search-space key '{text}' of {sweep.owner} is not an input of {shown}, "
                           "which declares no inputs")
                hint = f"declare an input '{text}' in the trial component and use it in its command"
            yield Finding(message, sweep.path + ("search_space", name),
                          key=True, hint=hint)


# ----------------------------------------------------------------------------- distributions
@check("AML308", "duplicate-choice-value", Severity.WARNING,
       "A `choice` lists the same value more than once.",
       bad=SWEEP.replace("values: [4, 6, 8]", "values: [4, 6, 6, 8]"), good=SWEEP, kinds=SWEEP_KINDS)
def duplicate_choice_value(document: Document) -> Iterator[Finding]:
    """
    `choice` picks uniformly from its list, so with random sampling a repeated value is sampled
    twice as often as the others. A grid runs each distinct combination once, so there the
    repeat only makes the list look longer than the grid is: `values: [1, 1, 2]` gives two grid
    values. (The sweep YAML reference gives each trial "a different combination of
    hyperparameter values", and the service's grid algorithm "exhaustively generates every value
    combination in the space"; azure-ai-ml sends the repeat as written, so the service decides,
    and no public source states this case outright.) Values are the same when they are equal as
    JSON: `1`, `1.0`, `true` and `"1"` are four values. The schema already refuses an empty list
    (AML106); this rule catches the repeats.

    See: reference-yaml-job-sweep, how-to-tune-hyperparameters

    Provenance: SPEC §4.4.
    """
    for sweep in sweeps(document):
        for entry in entries(sweep, nested=True):
            values = entry.data.get("values")
            if entry.distribution != "choice" or not isinstance(values, list):
                continue
            seen: set[str] = set()
            for index, value in enumerate(values):
                key = value_key(value)
                if key in seen:
                    yield Finding(
                        f"choice value {_show(value)} of '{entry.name}' is listed more than "
                        "once: duplicates skew random sampling (a grid still runs the point once)",
                        entry.path + ("values", index),
                        hint="remove the repeated value")
                seen.add(key)


@check("AML309", "grid-bayesian-choice-values", Severity.ERROR,
       "A grid or Bayesian `choice` holds a value that is not a plain scalar, or mixes strings with other values.",
       bad=BAYESIAN.replace("values: [4, 6, 8]", "values: [4, 6, \"auto\"]"), good=BAYESIAN,
       kinds=SWEEP_KINDS)
def grid_bayesian_choice_values(document: Document) -> Iterator[Finding]:
    """
    Grid and Bayesian sampling need the values of a `choice` to be plain numbers or strings, and
    either all of them strings or none (the v1 SDK's `azureml.train.hyperdrive.sampling`: "'choice'
    values should be 'int', 'string' or 'float'", "Either all or none of the 'choice' values should
    be 'str' type"). Nested (conditional) search spaces inside a `choice` work only with random
    sampling.

    See: how-to-tune-hyperparameters,
         https://learn.microsoft.com/python/api/azureml-train-core/azureml.train.hyperdrive

    Provenance: V1:sampling.py; SPEC §4.5, §12 rule 32.
    """
    for sweep in sweeps(document):
        method = algorithm(sweep)[0]
        if method not in ("grid", "bayesian"):
            continue
        for entry in entries(sweep):
            values = entry.data.get("values")
            if entry.distribution != "choice" or not isinstance(values, list):
                continue
            plain = []
            for index, value in enumerate(values):
                if isinstance(value, (str, int, float)):
                    plain.append((index, value))
                    continue
                what = {dict: "a mapping", list: "a list"}.get(type(value), "null")
                yield Finding(
                    f"{method} sampling needs plain numbers or strings in a choice, but value "
                    f"{index + 1} of '{entry.name}' is {what}", entry.path + ("values", index),
                    hint="use int, float or string values; nested search spaces need "
                         "`sampling_algorithm: random`")
            strings = [(i, v) for i, v in plain if isinstance(v, str)]
            others = [(i, v) for i, v in plain if not isinstance(v, str)]
            if strings and others:
                index, value = max(strings[0], others[0])  # the first value that breaks the pattern
                yield Finding(
                    f"{method} sampling needs the choice values of '{entry.name}' to be all "
                    f"strings or no strings, but it mixes {_show(strings[0][1])} with "
                    f"{_show(others[0][1])}", entry.path + ("values", index),
                    hint=f"quote every value (`[{', '.join(repr(str(v)) for _, v in plain)}]`) "
                         "or use numbers only")


@check("AML310", "empty-range", Severity.ERROR,
       "A distribution's `min_value` is not below its `max_value`.",
       bad=SWEEP.replace("min_value: 0.001\n    max_value: 0.1", "min_value: 0.1\n    max_value: 0.001"),
       good=SWEEP, kinds=SWEEP_KINDS)
def empty_range(document: Document) -> Iterator[Finding]:
    """
    `uniform`, `loguniform`, `quniform` and `qloguniform` sample between `min_value` and
    `max_value`. Bounds the wrong way round leave no range, and equal bounds give every trial the
    same value. azure-ai-ml does not check it.

    See: reference-yaml-job-sweep

    Provenance: EXP:sw_uniform_min_gt_max; SPEC §4.4, §12 rule 29.
    """
    for sweep in sweeps(document):
        for entry in entries(sweep, nested=True):
            if entry.distribution not in RANGED:
                continue
            low, high = _number(entry.data.get("min_value")), _number(entry.data.get("max_value"))
            if low is None or high is None or low < high:
                continue
            if low == high:
                message = (f"'{entry.name}' has min_value equal to max_value ({low}): every trial gets "
                           "the same value")
                hint = "widen the range, or pass the value as a fixed input"
            else:
                message = f"'{entry.name}' has min_value {low} above max_value {high}: the range is empty"
                hint = "swap the two bounds"
            yield Finding(message, entry.path + ("min_value",), hint=hint)


@check("AML311", "non-positive-q", Severity.ERROR,
       "A quantized distribution has `q` of 0 or less.",
       bad=SWEEP.replace("    type: uniform\n    min_value: 0.001\n    max_value: 0.1\n",
                         "    type: quniform\n    min_value: 0.0\n    max_value: 0.1\n    q: 0\n"),
       good=SWEEP.replace("    type: uniform\n    min_value: 0.001\n    max_value: 0.1\n",
                          "    type: quniform\n    min_value: 0.0\n    max_value: 0.1\n    q: 0.01\n"),
       kinds=SWEEP_KINDS)
def non_positive_q(document: Document) -> Iterator[Finding]:
    """
    `quniform`, `qloguniform`, `qnormal` and `qlognormal` round each sample to a multiple of `q`
    (`round(x / q) * q`): `q` 0 divides by zero, and a negative `q` makes no sense. azure-ai-ml
    accepts both.

    See: reference-yaml-job-sweep

    Provenance: SPEC §4.4, §11 row 16, §12 rule 29.
    """
    for sweep in sweeps(document):
        for entry in entries(sweep, nested=True):
            q = _number(entry.data.get("q"))
            if entry.distribution in QUANTIZED and q is not None and q <= 0:
                yield Finding(
                    f"'{entry.name}' has q {q}: the rounding step of {entry.distribution} must "
                    "be greater than 0", entry.path + ("q",),
                    hint="set q to the step between values (for example `q: 1` for integers)")


@check("AML312", "non-positive-sigma", Severity.ERROR,
       "A normal distribution has `sigma` of 0 or less.",
       bad=SWEEP.replace("    type: uniform\n    min_value: 0.001\n    max_value: 0.1\n",
                         "    type: normal\n    mu: 0.05\n    sigma: 0\n"),
       good=SWEEP.replace("    type: uniform\n    min_value: 0.001\n    max_value: 0.1\n",
                          "    type: normal\n    mu: 0.05\n    sigma: 0.01\n"),
       kinds=SWEEP_KINDS)
def non_positive_sigma(document: Document) -> Iterator[Finding]:
    """
    `normal`, `lognormal`, `qnormal` and `qlognormal` need a standard deviation above 0: with 0
    every trial gets `mu`, and a negative one is not a distribution. azure-ai-ml accepts both.

    See: reference-yaml-job-sweep

    Provenance: SPEC §4.4, §12 rule 29.
    """
    for sweep in sweeps(document):
        for entry in entries(sweep, nested=True):
            sigma = _number(entry.data.get("sigma"))
            if entry.distribution in GAUSSIAN and sigma is not None and sigma <= 0:
                yield Finding(
                    f"'{entry.name}' has sigma {sigma}: the standard deviation of "
                    f"{entry.distribution} must be greater than 0", entry.path + ("sigma",),
                    hint="set sigma to the spread you want around mu")


@check("AML313", "randint-upper", Severity.ERROR,
       "A `randint` has an `upper` bound below 1.",
       bad=SWEEP.replace("    type: choice\n    values: [4, 6, 8]\n", "    type: randint\n    upper: 0\n"),
       good=SWEEP.replace("    type: choice\n    values: [4, 6, 8]\n", "    type: randint\n    upper: 10\n"),
       kinds=SWEEP_KINDS)
def randint_upper(document: Document) -> Iterator[Finding]:
    """
    `randint` samples integers in `[0, upper)`: the upper bound is exclusive and there is no lower
    bound. With `upper` 0 or less there is no integer to sample.

    See: reference-yaml-job-sweep

    Provenance: SPEC §4.4, §11 row 17.
    """
    for sweep in sweeps(document):
        for entry in entries(sweep, nested=True):
            upper = _integer(entry.data.get("upper"))
            if entry.distribution == "randint" and upper is not None and upper < 1:
                yield Finding(
                    f"'{entry.name}' has upper {upper}: randint samples integers in "
                    "[0, upper), so upper must be at least 1", entry.path + ("upper",),
                    hint="set upper to one more than the largest value wanted (`upper: 10` gives 0-9)")


@check("AML314", "bayesian-quniform", Severity.ERROR,
       "A Bayesian `quniform` has non-integer arguments or more than 100,000 points.",
       bad=BAYESIAN.replace("    type: uniform\n    min_value: 0.001\n    max_value: 0.1\n",
                            "    type: quniform\n    min_value: 0.0\n    max_value: 0.1\n    q: 0.01\n"),
       good=BAYESIAN.replace("    type: uniform\n    min_value: 0.001\n    max_value: 0.1\n",
                             "    type: quniform\n    min_value: 16\n    max_value: 128\n    q: 16\n"),
       kinds=SWEEP_KINDS)
def bayesian_quniform(document: Document) -> Iterator[Finding]:
    """
    For Bayesian sampling, `quniform`'s `min_value`, `max_value` and `q` must be integers
    ("Expected quniform arguments to be int.") and the range may hold at most 100,000 points,
    `(max_value - min_value) / q` ("Too many discrete points for quniform distribution"). These are
    the v1 SDK's rules (`azureml.train.hyperdrive`); azure-ai-ml does not check them. For a
    fractional step, sample `uniform` or use random sampling.

    See: https://learn.microsoft.com/python/api/azureml-train-core/azureml.train.hyperdrive.bayesianparametersampling

    Provenance: V1:sampling.py; SPEC §4.5, §11 row 16, §12 rule 32.
    """
    for sweep in sweeps(document):
        if algorithm(sweep)[0] != "bayesian":
            continue
        for entry in entries(sweep):
            if entry.distribution != "quniform":
                continue
            values = {key: _number(entry.data.get(key)) for key in ("min_value", "max_value", "q")}
            fractional = [key for key, value in values.items()
                          if value is not None and _integer(entry.data.get(key)) is None]
            if fractional:
                shown = ", ".join(f"{key} {values[key]}" for key in fractional)
                yield Finding(
                    f"bayesian sampling needs integer quniform arguments, but '{entry.name}' "
                    f"has {shown}", entry.path + (fractional[0],),
                    hint="use integer bounds and step, or `uniform` for a continuous value")
            low, high, q = values["min_value"], values["max_value"], values["q"]
            if low is None or high is None or q is None or q <= 0 or low >= high:
                continue
            points = (high - low) / q
            if points > BAYESIAN_QUNIFORM_POINTS:
                yield Finding(
                    f"quniform '{entry.name}' has (max_value - min_value) / q = {points:,.0f} "
                    f"points; bayesian sampling allows at most {BAYESIAN_QUNIFORM_POINTS:,}",
                    entry.path + ("q",), hint="raise q or narrow the range")


def _exp(value: float) -> str:
    try:
        return f"{math.exp(value):.5g}"
    except OverflowError:
        return f"e^{value}"


@check("AML315", "loguniform-raw-bounds", Severity.WARNING,
       "`loguniform`/`qloguniform` bounds look like raw values, but they are exponents.",
       bad=SWEEP.replace("    type: uniform\n    min_value: 0.001\n    max_value: 0.1\n",
                         "    type: loguniform\n    min_value: 0.0001\n    max_value: 0.1\n"),
       good=SWEEP.replace("    type: uniform\n    min_value: 0.001\n    max_value: 0.1\n",
                          "    type: loguniform\n    min_value: -9.21\n    max_value: -2.3\n"),
       kinds=SWEEP_KINDS)
def loguniform_raw_bounds(document: Document) -> Iterator[Finding]:
    """
    `loguniform` samples `exp(uniform(min_value, max_value))`: its bounds are natural logarithms,
    not the values. `min_value: 0.0001, max_value: 0.1` samples between e^0.0001 and e^0.1, that is
    1.0001 to 1.105, not a learning rate. Write `math.log` of the values instead: -9.21 and -2.3.

    The heuristic, chosen so that exponent ranges such as -9.2..-2.3 or 3.4..6.3 (batch sizes
    32..545) never fire:

    - `0 < min_value < max_value <= 1`: every sample lies in (1, e], a range nobody tunes
      through a log scale, while fractions in (0, 1] are typical raw values; or
    - `max_value > 30`: the samples reach beyond e^30 ≈ 10^13, which is a raw value such as an
      estimator count (e^100 ≈ 10^43).

    Raw bounds such as 0.1..10 stay silent: e^0.1..e^10 (1.1 to 22,026) is a range someone may
    mean.

    See: reference-yaml-job-sweep

    Provenance: SPEC §4.4.
    """
    for sweep in sweeps(document):
        for entry in entries(sweep, nested=True):
            if entry.distribution not in ("loguniform", "qloguniform"):
                continue
            low, high = _number(entry.data.get("min_value")), _number(entry.data.get("max_value"))
            if low is None or high is None or low >= high:
                continue
            if not (0 < low and high <= 1 or high > LOG_EXPONENT_CEILING):
                continue
            message = (f"the bounds of {entry.distribution} '{entry.name}' look like raw values, but they "
                       f"are exponents: it samples e^{low}..e^{high}, about {_exp(low)}..{_exp(high)}")
            if low > 0:
                hint = (f"to sample between {low} and {high}, write min_value: {math.log(low):.2f} and "
                        f"max_value: {math.log(high):.2f} (math.log of each)")
                where = "min_value"
            else:
                hint = (f"to sample up to {high}, write max_value: {math.log(high):.2f} (math.log of it), "
                        "and min_value as the logarithm of the smallest value")
                where = "max_value"
            yield Finding(message, entry.path + (where,), hint=hint)


# ----------------------------------------------------------------------------- limits
@check("AML316", "trial-count-range", Severity.ERROR,
       "`max_total_trials` or `max_concurrent_trials` is outside 1-1000.",
       bad=SWEEP.replace("max_concurrent_trials: 4", "max_concurrent_trials: 0"), good=SWEEP,
       kinds=SWEEP_KINDS)
def trial_count_range(document: Document) -> Iterator[Finding]:
    """
    The number of trials and of concurrent trials are integers from 1 to 1000. azure-ai-ml loads 0
    and negative values; a sweep with no trial to run, or more than the service runs, does not do
    what it says.

    See: how-to-tune-hyperparameters, reference-yaml-job-sweep

    Provenance: SPEC §4.6, §12 rule 34; EXP:sw_neg_limits.
    """
    for sweep in sweeps(document):
        limits = _limits(sweep)
        for key in ("max_total_trials", "max_concurrent_trials"):
            value = _integer(limits.get(key))
            if value is None or 1 <= value <= MAX_TRIALS:
                continue
            yield Finding(
                f"{key} is {value}; it must be between 1 and {MAX_TRIALS}",
                sweep.path + ("limits", key),
                hint=f"set {key} to a number from 1 to {MAX_TRIALS}")


@check("AML317", "concurrency-above-total", Severity.WARNING,
       "`max_concurrent_trials` is larger than `max_total_trials`.",
       bad=SWEEP.replace("max_concurrent_trials: 4", "max_concurrent_trials: 50"), good=SWEEP,
       kinds=SWEEP_KINDS)
def concurrency_above_total(document: Document) -> Iterator[Finding]:
    """
    No more trials can run at once than there are trials, so the extra concurrency is simply
    unused. The service accepts it (an azure-ai-ml test sets 10 concurrent trials for 2 in total),
    hence a warning: usually one of the two numbers is not the one intended.

    See: reference-yaml-job-sweep

    Provenance: SPEC §4.6, §12 rule 34.
    """
    for sweep in sweeps(document):
        limits = _limits(sweep)
        total = _integer(limits.get("max_total_trials"))
        concurrent = _integer(limits.get("max_concurrent_trials"))
        if total is None or concurrent is None or total < 1 or concurrent <= total:
            continue
        yield Finding(
            f"max_concurrent_trials ({concurrent}) is above max_total_trials ({total}): at most "
            f"{total} trials can run at once, the extra concurrency is unused",
            sweep.path + ("limits", "max_concurrent_trials"),
            hint=f"lower max_concurrent_trials to {total}, or raise max_total_trials")


@check("AML318", "non-positive-timeout", Severity.ERROR,
       "A sweep's `timeout` or `trial_timeout` is 0 or negative.",
       bad=SWEEP.replace("  max_concurrent_trials: 4\n", "  max_concurrent_trials: 4\n  timeout: 0\n"),
       good=SWEEP.replace("  max_concurrent_trials: 4\n", "  max_concurrent_trials: 4\n  timeout: 7200\n"),
       kinds=SWEEP_KINDS)
def non_positive_timeout(document: Document) -> Iterator[Finding]:
    """
    `timeout` (the whole sweep) and `trial_timeout` (each trial) are positive numbers of seconds.
    azure-ai-ml loads 0 and negative values, which give the service a duration that means nothing.

    See: reference-yaml-job-sweep

    Provenance: EXP:sw_neg_limits; SPEC §4.6, §12 rule 35.
    """
    for sweep in sweeps(document):
        limits = _limits(sweep)
        for key in ("timeout", "trial_timeout"):
            value = _integer(limits.get(key))
            if value is not None and value <= 0:
                yield Finding(
                    f"{key} is {value}; it must be a positive number of seconds",
                    sweep.path + ("limits", key),
                    hint=f"set {key} in seconds (for example 3600 for an hour), or remove it")


@check("AML319", "short-timeout", Severity.WARNING,
       "A sweep's `timeout` or `trial_timeout` is below 60 seconds, which the SDK rounds up to 60.",
       bad=SWEEP.replace("  max_concurrent_trials: 4\n", "  max_concurrent_trials: 4\n  trial_timeout: 30\n"),
       good=SWEEP.replace("  max_concurrent_trials: 4\n", "  max_concurrent_trials: 4\n  trial_timeout: 600\n"),
       kinds=SWEEP_KINDS)
def short_timeout(document: Document) -> Iterator[Finding]:
    """
    azure-ai-ml floors any `timeout` or `trial_timeout` between 1 and 59 seconds up to 60, because
    the service misreads shorter durations (`_get_floored_timeout`). The sweep then runs longer
    than the spec says; the values are seconds, so a value this small is often minutes written by
    mistake.

    See: reference-yaml-job-sweep,
         https://github.com/Azure/azure-sdk-for-python/blob/main/sdk/ml/azure-ai-ml/azure/ai/ml/entities/_job/job_limits.py

    Provenance: The SDK's comment there: "Bug 1335978". SPEC §4.6, §12 rule 35.
    """
    for sweep in sweeps(document):
        limits = _limits(sweep)
        for key in ("timeout", "trial_timeout"):
            value = _integer(limits.get(key))
            if value is not None and 0 < value < MIN_TIMEOUT:
                yield Finding(
                    f"{key} is {value} seconds; the SDK rounds timeouts below {MIN_TIMEOUT} "
                    f"seconds up to {MIN_TIMEOUT}", sweep.path + ("limits", key),
                    hint=f"write {MIN_TIMEOUT} or more (the value is in seconds)")


@check("AML320", "trial-timeout-above-timeout", Severity.WARNING,
       "A sweep's `trial_timeout` is longer than its `timeout`.",
       bad=SWEEP.replace("  max_concurrent_trials: 4\n",
                         "  max_concurrent_trials: 4\n  timeout: 3600\n  trial_timeout: 7200\n"),
       good=SWEEP.replace("  max_concurrent_trials: 4\n",
                          "  max_concurrent_trials: 4\n  timeout: 7200\n  trial_timeout: 3600\n"),
       kinds=SWEEP_KINDS)
def trial_timeout_above_timeout(document: Document) -> Iterator[Finding]:
    """
    `timeout` cancels the whole sweep and all its trials; `trial_timeout` cancels one trial. A
    trial timeout longer than the sweep's can never act: the sweep timeout cancels the trial first
    (the comparison is an inference).

    See: reference-yaml-job-sweep

    Provenance: SPEC §4.6, §12 rule 35.
    """
    for sweep in sweeps(document):
        limits = _limits(sweep)
        timeout, trial_timeout = _integer(limits.get("timeout")), _integer(limits.get("trial_timeout"))
        if timeout is None or trial_timeout is None or timeout <= 0 or trial_timeout <= timeout:
            continue
        yield Finding(
            f"trial_timeout ({trial_timeout} s) is longer than the sweep's timeout ({timeout} s): "
            "the sweep timeout cancels every trial first", sweep.path + ("limits", "trial_timeout"),
            hint="make trial_timeout shorter than timeout, or raise timeout")


def grid_size(sweep: Sweep) -> int | None:
    """Points of a grid sweep: the product of the numbers of distinct values of its choices, as
    validator.search_space counts them (None when it has no grid: another distribution, AML302,
    or an empty list, AML106)."""
    if algorithm(sweep)[0] != "grid":
        return None
    return sweep.space.grid_size


def _grid_and_trials(sweep: Sweep) -> tuple[int, int] | None:
    size = grid_size(sweep)
    total = _integer(_limits(sweep).get("max_total_trials"))
    if size is None or total is None or not 1 <= total <= MAX_TRIALS:
        return None
    return size, total


@check("AML321", "grid-smaller-than-trials", Severity.WARNING,
       "A grid sweep asks for more trials than its grid has points.",
       bad=GRID.replace("max_total_trials: 9", "max_total_trials: 20"), good=GRID, kinds=SWEEP_KINDS)
def grid_smaller_than_trials(document: Document) -> Iterator[Finding]:
    """
    A grid sweep runs each combination of the choice values once; its size is the product of the
    numbers of distinct values of the choices (a value listed twice adds no point: see AML308).
    Trials beyond that cannot add a new point, so `max_total_trials` overstates what the sweep
    does (an inference from the grid semantics).

    See: how-to-tune-hyperparameters

    Provenance: SPEC §12 rule 36.
    """
    for sweep in sweeps(document):
        found = _grid_and_trials(sweep)
        if found is None or found[1] <= found[0]:
            continue
        size, total = found
        yield Finding(
            f"max_total_trials is {total} but the grid has {size} points, so only {size} "
            "trials can run", sweep.path + ("limits", "max_total_trials"),
            hint=f"set max_total_trials: {size}, or add choice values")


@check("AML322", "grid-not-covered", Severity.WARNING,
       "A grid sweep runs fewer trials than its grid has points.",
       bad=GRID.replace("max_total_trials: 9", "max_total_trials: 5"), good=GRID, kinds=SWEEP_KINDS)
def grid_not_covered(document: Document) -> Iterator[Finding]:
    """
    A grid sweep promises every combination of the choice values. With fewer trials than grid
    points the sweep stops part-way, and which points were skipped depends on the order the service
    walks the grid: set `max_total_trials` to the grid size, or sample a subset on purpose with
    random sampling (an inference from the grid semantics).

    See: how-to-tune-hyperparameters

    Provenance: SPEC §4.5.
    """
    for sweep in sweeps(document):
        found = _grid_and_trials(sweep)
        if found is None or found[1] >= found[0]:
            continue
        size, total = found
        if size <= MAX_TRIALS:
            hint = f"set max_total_trials: {size} to cover the grid, or use random sampling for a subset"
        else:
            hint = (f"a sweep runs at most {MAX_TRIALS} trials: shrink the grid, or use random sampling "
                    "for a subset")
        yield Finding(
            f"max_total_trials is {total} but the grid has {size} points: only {total} of the "
            f"{size} points are tried", sweep.path + ("limits", "max_total_trials"),
            hint=hint)


@check("AML323", "bayesian-few-trials", Severity.INFO,
       "A Bayesian sweep runs fewer than 20 trials per hyperparameter.",
       bad=BAYESIAN.replace("max_total_trials: 40", "max_total_trials: 12"), good=BAYESIAN,
       kinds=SWEEP_KINDS)
def bayesian_few_trials(document: Document) -> Iterator[Finding]:
    """
    Bayesian sampling learns from the trials already run; the docs advise at least 20 trials per
    hyperparameter, and a low concurrency, for it to converge.

    See: how-to-tune-hyperparameters

    Provenance: SPEC §4.5.
    """
    for sweep in sweeps(document):
        if algorithm(sweep)[0] != "bayesian":
            continue
        count = sum(1 for _ in entries(sweep))
        total = _integer(_limits(sweep).get("max_total_trials"))
        wanted = BAYESIAN_TRIALS_PER_PARAMETER * count
        if total is None or total < 1 or total >= wanted:
            continue
        yield Finding(
            f"bayesian sampling over {count} hyperparameter{'s' if count > 1 else ''} works "
            f"best with at least {wanted} trials ({BAYESIAN_TRIALS_PER_PARAMETER} per hyperparameter); "
            f"max_total_trials is {total}", sweep.path + ("limits", "max_total_trials"),
            hint=f"raise max_total_trials to {min(wanted, MAX_TRIALS)}, or sample at random")


# ----------------------------------------------------------------------------- policies
@check("AML324", "bandit-without-slack", Severity.ERROR,
       "A bandit policy sets neither `slack_factor` nor `slack_amount`.",
       bad=BANDIT.replace("  slack_factor: 0.1\n", ""), good=BANDIT, kinds=SWEEP_KINDS)
def bandit_without_slack(document: Document) -> Iterator[Finding]:
    """
    A bandit policy cancels a trial whose best metric falls more than a slack below the best
    trial's. The docs require one of `slack_factor` or `slack_amount`; without either azure-ai-ml
    sends both as 0, and with no slack the policy cancels every trial that is not the best one so
    far.

    See: how-to-tune-hyperparameters, reference-yaml-job-sweep

    Provenance: EXP:rest_test sw_bandit_noslack; SPEC §4.7, §4.8, §11 row 7, §12 rule 37.
    """
    for sweep in sweeps(document):
        kind, policy, path = _policy(sweep)
        if kind != "bandit":
            continue
        if policy.get("slack_factor") is None and policy.get("slack_amount") is None:
            yield Finding(
                "the bandit policy sets neither slack_factor nor slack_amount: the service "
                "then uses a slack of 0 and cancels every trial that falls below the best one",
                path + ("type",),
                hint="add `slack_factor: 0.1` (10% below the best) or `slack_amount: 0.05`")


@check("AML325", "bandit-both-slacks", Severity.ERROR,
       "A bandit policy sets both `slack_factor` and `slack_amount`.",
       bad=BANDIT.replace("  slack_factor: 0.1\n", "  slack_factor: 0.1\n  slack_amount: 0.05\n"),
       good=BANDIT, kinds=SWEEP_KINDS)
def bandit_both_slacks(document: Document) -> Iterator[Finding]:
    """
    A bandit policy cancels a trial that falls more than one slack behind the best trial: either a
    ratio (`slack_factor`, cancel below B / (1 + s)) or a distance (`slack_amount`, cancel below B
    - a). The docs require exactly one of them, and the v1 SDK refused both ("exactly one of slack
    factor or slack amount to be set"): the policy has one threshold, and which of two the service
    would use is documented nowhere. So both is an error, like neither (AML324), and `aml-run`
    refuses it as well. azure-ai-ml does not stop it (its `BanditPolicy` defaults each slack to 0
    and sends both): the docs, not that gap, are the contract here.

    See: how-to-tune-hyperparameters, reference-yaml-job-sweep

    Provenance: SPEC §4.7, §11 row 7, §12 rule 37.
    """
    for sweep in sweeps(document):
        kind, policy, path = _policy(sweep)
        if kind == "bandit" and policy.get("slack_factor") is not None \
                and policy.get("slack_amount") is not None:
            yield Finding(
                "the bandit policy sets both slack_factor and slack_amount: a bandit policy "
                "takes exactly one slack", path + ("slack_amount",), key=True,
                hint="keep slack_factor (a ratio of the best metric) or slack_amount (a metric "
                     "difference), not both")


@check("AML326", "bandit-slack-not-positive", Severity.ERROR,
       "A bandit policy's `slack_factor` or `slack_amount` is 0 or negative.",
       bad=BANDIT.replace("slack_factor: 0.1", "slack_factor: 0"), good=BANDIT, kinds=SWEEP_KINDS)
def bandit_slack_not_positive(document: Document) -> Iterator[Finding]:
    """
    The slack is the margin below the best trial that a trial may fall before it is cancelled
    (maximize: cancelled below `best / (1 + slack_factor)` or `best - slack_amount`). With 0 the
    policy cancels every trial that is not the best; with a negative slack it cancels even trials
    that match the best.

    See: how-to-tune-hyperparameters

    Provenance: SPEC §4.8, §12 rule 37.
    """
    for sweep in sweeps(document):
        kind, policy, path = _policy(sweep)
        if kind != "bandit":
            continue
        for key in ("slack_factor", "slack_amount"):
            value = _number(policy.get(key))
            if value is not None and value <= 0:
                yield Finding(
                    f"{key} is {value}; the slack must be greater than 0, or the policy cancels "
                    "every trial that is not the best", path + (key,),
                    hint=f"set {key} to the margin a trial may fall below the best "
                         f"(for example {0.1 if key == 'slack_factor' else 0.05})")


@check("AML327", "truncation-percentage-range", Severity.ERROR,
       "A truncation selection policy's `truncation_percentage` is outside 1-99.",
       bad=TRUNCATION.replace("truncation_percentage: 20", "truncation_percentage: 200"),
       good=TRUNCATION, kinds=SWEEP_KINDS)
def truncation_percentage_range(document: Document) -> Iterator[Finding]:
    """
    Truncation selection cancels the given percentage of the worst trials at each evaluation; it
    must be an integer from 1 to 99 (the docs; the v1 SDK: "value to be between 1 and 99.").
    azure-ai-ml accepts 200; 0 would cancel nothing and 100 everything.

    See: how-to-tune-hyperparameters, reference-yaml-job-sweep

    Provenance: EXP:sw_trunc_pct_200; SPEC §4.7, §12 rule 38.
    """
    for sweep in sweeps(document):
        kind, policy, path = _policy(sweep)
        value = _integer(policy.get("truncation_percentage"))
        if kind == "truncation_selection" and value is not None and not 1 <= value <= 99:
            yield Finding(
                f"truncation_percentage is {value}; it must be between 1 and 99",
                path + ("truncation_percentage",),
                hint="set the share of the worst trials to cancel, for example `truncation_percentage: 20`")


@check("AML328", "evaluation-interval-zero", Severity.WARNING,
       "An early-termination policy has `evaluation_interval: 0`, which is treated as 1.",
       bad=BANDIT.replace("evaluation_interval: 1", "evaluation_interval: 0"), good=BANDIT,
       kinds=SWEEP_KINDS)
def evaluation_interval_zero(document: Document) -> Iterator[Finding]:
    """
    The policy is applied every `evaluation_interval` reports of the primary metric. The docs
    disagree on its default (the reference says 1, the how-to 0, and azure-ai-ml sends 0 for bandit
    and truncation); amllab and its runner treat 0 as 1, so the policy acts on every report. Write
    the 1 that is meant.

    See: reference-yaml-job-sweep, how-to-tune-hyperparameters

    Provenance: SPEC §4.8, §11 row 5.
    """
    for sweep in sweeps(document):
        kind, policy, path = _policy(sweep)
        if kind is not None and _integer(policy.get("evaluation_interval")) == 0:
            yield Finding(
                "evaluation_interval 0 is treated as 1: the policy is applied at every report "
                "of the primary metric", path + ("evaluation_interval",),
                hint="write `evaluation_interval: 1`")


@check("AML329", "negative-policy-timing", Severity.ERROR,
       "An early-termination policy has a negative `evaluation_interval` or `delay_evaluation`.",
       bad=BANDIT.replace("delay_evaluation: 5", "delay_evaluation: -5"), good=BANDIT, kinds=SWEEP_KINDS)
def negative_policy_timing(document: Document) -> Iterator[Finding]:
    """
    A policy is applied at report N when `N % evaluation_interval == 0` and `N >=
    delay_evaluation`. Both count reports of the primary metric, so a negative value means nothing;
    azure-ai-ml accepts it.

    See: how-to-tune-hyperparameters

    Provenance: SPEC §4.8; EXP:sw_et_delay_neg; SPEC §12 rule 38.
    """
    for sweep in sweeps(document):
        kind, policy, path = _policy(sweep)
        if kind is None:
            continue
        interval = _integer(policy.get("evaluation_interval"))
        if interval is not None and interval < 0:
            yield Finding(
                f"evaluation_interval is {interval}; it must be at least 1 (the policy is applied "
                "every that many reports of the primary metric)", path + ("evaluation_interval",),
                hint="write `evaluation_interval: 1` to apply the policy at every report")
        delay = _integer(policy.get("delay_evaluation"))
        if delay is not None and delay < 0:
            yield Finding(
                f"delay_evaluation is {delay}; it must be 0 or more (the number of reports "
                "before the policy first applies)", path + ("delay_evaluation",),
                hint="write `delay_evaluation: 0` to apply the policy from the first report")
