"""The search space of a sweep: one model for aml-lint's rules, aml-run's samplers, the schema
generator and aml-quiz's checks.

Pure and light: the standard library only, nothing read from disk, nothing raised. The linter
must report a malformed space, never crash on it, so :func:`parse` accepts anything and keeps
what it cannot read as it was written (a value that is no number reads as None, a `type` that
names no distribution gives ``kind`` None); aml-run refuses such a space with its own messages.

Distributions and what each sampling algorithm accepts
======================================================
``DISTRIBUTIONS`` are the ten parameter expressions of the sweep YAML reference, ``PARAMETERS``
the keys each one takes. A ``type`` (or ``sampling_algorithm``) is compared as azure-ai-ml
compares these enums: underscores removed, case ignored (``QUniform``, ``q_uniform``).
``ACCEPTS`` says which distributions each algorithm samples: random all of them, grid only
``choice`` and Bayesian only ``choice``, ``uniform`` and ``quniform``
(https://learn.microsoft.com/azure/machine-learning/how-to-tune-hyperparameters, "Grid
sampling can only be used with `choice` hyperparameters", "Bayesian sampling supports
`choice`, `uniform`, and `quniform` distributions").

A ``choice`` value that is a mapping is a nested (conditional) search space: each of its keys
maps to a distribution (a mapping whose ``type`` names one of the ten) or to a constant.

Discreteness and size
=====================
``DISCRETE`` are the distributions that take separate values (the how-to's "discrete
hyperparameters": ``choice`` and the four ``q`` ones, and ``randint``); ``FINITE`` those with
finitely many: choice, randint (``upper`` values), quniform and qloguniform
(``round(max/q) - round(min/q) + 1`` rounded values; qloguniform with base e).
:attr:`SearchSpace.size` is the number of distinct configurations when every distribution in
the tree is finite, else None. Values are the same when their :func:`value_key` is, JSON with
sorted keys: ``1``, ``1.0``, ``true`` and ``"1"`` are four values.

Repeated values in a grid: each distinct combination runs once
==============================================================
:attr:`SearchSpace.grid_size` is the product of the numbers of *distinct* values of the choices,
and :meth:`SearchSpace.grid` yields each distinct combination once, in the order of the
Cartesian product (keys in the space's order, values in listed order, the last key fastest).
``choice [1, 1, 2] x choice [4, 5, 6]`` is a grid of 6 points, not 9: a listed repeat adds no
trial. What the service does is not stated for this case anywhere public; the rule follows
the strongest evidence, all of it saying a sweep runs distinct combinations:

- the sweep YAML reference, on ``trial``: "Each trial job is provided with a different
  combination of hyperparameter values that the system samples from the search_space"
  (https://learn.microsoft.com/azure/machine-learning/reference-yaml-job-sweep);
- the REST model that azure-ai-ml sends, ``GridSamplingAlgorithm``: "Defines a Sampling
  Algorithm that exhaustively generates every value combination in the space"
  (https://learn.microsoft.com/dotnet/api/azure.resourcemanager.machinelearning.models.gridsamplingalgorithm);
  a value listed twice makes no new combination;
- the how-to: "Grid sampling does a simple grid search over all possible values"
  (https://learn.microsoft.com/azure/machine-learning/how-to-tune-hyperparameters);
- the v1 SDK of HyperDrive, the service behind v2 sweeps too (the how-to calls a sweep's
  trials "hyperdrive child jobs"): ``max_total_runs`` "is the upper bound; there may be fewer
  runs when the sample space is smaller than this value"
  (https://learn.microsoft.com/python/api/azureml-train-core/azureml.train.hyperdrive.hyperdriverunconfig).

Neither client removes the repeat, so whatever happens is the service's doing: azure-ai-ml
1.35.2 sends ``Choice(values=[1, 1, 2])`` as ``['choice', [[1, 1, 2]]]`` (``_to_rest_object()``
of a sweep loaded with ``load_job``, with ``{'samplingAlgorithmType': 'Grid'}``), and the v1
``choice(1, 1, 2)`` returns ``['choice', [[1, 1, 2]]]`` too. The evidence is indirect: no public
code enumerates the service's grid. Random sampling is another matter: a repeated value is
drawn twice as often there (``choice`` picks each listed entry with equal probability).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import product
from typing import Any, Union

__all__ = [
    "ACCEPTS", "ALGORITHMS", "DISCRETE", "DISTRIBUTIONS", "FINITE", "GAUSSIAN", "LOG", "MAX_DEPTH",
    "PARAMETERS", "QUANTIZED", "RANGED",
    "Branch", "Constant", "Distribution", "SearchSpace",
    "accepts", "algorithm_of", "dotted", "kind_of", "parse", "read_number", "value_key",
]

DISTRIBUTIONS = ("choice", "randint", "uniform", "loguniform", "quniform", "qloguniform",
                 "normal", "lognormal", "qnormal", "qlognormal")
PARAMETERS: dict[str, tuple[str, ...]] = {
    "choice": ("values",),
    "randint": ("upper",),
    "uniform": ("min_value", "max_value"),
    "loguniform": ("min_value", "max_value"),
    "quniform": ("min_value", "max_value", "q"),
    "qloguniform": ("min_value", "max_value", "q"),
    "normal": ("mu", "sigma"),
    "lognormal": ("mu", "sigma"),
    "qnormal": ("mu", "sigma", "q"),
    "qlognormal": ("mu", "sigma", "q"),
}
RANGED = ("uniform", "loguniform", "quniform", "qloguniform")      # min_value and max_value
GAUSSIAN = ("normal", "lognormal", "qnormal", "qlognormal")        # mu and sigma
LOG = ("loguniform", "qloguniform", "lognormal", "qlognormal")      # the bounds are exponents
QUANTIZED = ("quniform", "qloguniform", "qnormal", "qlognormal")    # round(x / q) * q
DISCRETE = ("choice", "randint", "quniform", "qloguniform", "qnormal", "qlognormal")
FINITE = ("choice", "randint", "quniform", "qloguniform")

ALGORITHMS = ("random", "grid", "bayesian")
ACCEPTS: dict[str, tuple[str, ...]] = {
    "random": DISTRIBUTIONS,
    "grid": ("choice",),
    "bayesian": ("choice", "uniform", "quniform"),
}
# Choice values nest this deep at most; a distribution below it is kept, its values unread.
MAX_DEPTH = 100


def _squash(raw: Any, known: tuple[str, ...]) -> str | None:
    if not isinstance(raw, str):
        return None
    squashed = raw.replace("_", "").lower()
    return next((name for name in known if name.replace("_", "") == squashed), None)


def kind_of(raw: Any) -> str | None:
    """The distribution a ``type`` value names (``QUniform`` is ``quniform``), or None."""
    return _squash(raw, DISTRIBUTIONS)


def algorithm_of(raw: Any) -> str | None:
    """The sampling algorithm a value names (``Grid`` is ``grid``), or None."""
    return _squash(raw, ALGORITHMS)


def accepts(algorithm: str, kind: str) -> bool:
    """Whether ``algorithm`` (a name of ALGORITHMS) samples distribution ``kind``."""
    return kind in ACCEPTS.get(algorithm, ())


def read_number(raw: Any) -> float | None:
    """A parameter as a float: an int, a float or a numeric string (``"1e-3"``), finite; None
    for anything else (booleans are not numbers)."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        return None
    try:
        value = float(raw)
    except (ValueError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def value_key(value: Any) -> str:
    """The identity of a value in a search space: two values are the same configuration value
    when their keys are equal. JSON with sorted keys (``1``, ``1.0``, ``true`` and ``"1"``
    differ); a value JSON cannot write is compared by its repr."""
    try:
        return json.dumps(value, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        pass
    except RecursionError:  # nested deeper than Python recurses: only itself is the same
        return f"!{type(value).__name__}@{id(value)}"
    try:
        return "!" + type(value).__name__ + ":" + repr(value)
    except RecursionError:
        return f"!{type(value).__name__}@{id(value)}"


def dotted(path: tuple[Any, ...]) -> str:
    """A path of the model as text: ``("conv", "values", 0, "val1")`` is ``conv.values[0].val1``."""
    text = ""
    for part in path:
        if isinstance(part, int) and not isinstance(part, bool):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + str(part)
    return text


# ----------------------------------------------------------------------------- the model
@dataclass(frozen=True)
class Constant:
    """A choice value, or an entry of a nested space that is no distribution: used as it is."""

    value: Any
    key: str  # value_key(value)


@dataclass(frozen=True)
class Branch:
    """A mapping value of a choice: a nested search space. ``items`` keep its keys as written
    (in order), each with a Distribution or a Constant."""

    data: Mapping[Any, Any]
    items: tuple[tuple[Any, Union["Distribution", Constant]], ...]
    key: str  # value_key(data): two branches written alike count once

    @property
    def value(self) -> Mapping[Any, Any]:
        return self.data


Option = Union[Constant, Branch]


@dataclass(frozen=True)
class Distribution:
    """One entry of a search space: a top-level key (whatever it holds) or a distribution nested
    in a choice value. ``path`` leads from the search_space mapping to it; ``kind`` is None when
    it is no mapping or its ``type`` names no distribution; ``options`` are a choice's values
    when ``values`` is a list (empty otherwise, and below MAX_DEPTH)."""

    name: str
    path: tuple[Any, ...]
    kind: str | None
    data: Any
    options: tuple[Option, ...] = ()
    depth: int = 0  # 0 at the top level, one more inside each choice value

    @property
    def nested(self) -> bool:
        return self.depth > 0

    def number(self, key: str) -> float | None:
        """Parameter ``key`` read by :func:`read_number`; None when absent or no number."""
        return read_number(self.data.get(key)) if isinstance(self.data, Mapping) else None

    @property
    def low(self) -> float | None:
        return self.number("min_value")

    @property
    def high(self) -> float | None:
        return self.number("max_value")

    @property
    def mu(self) -> float | None:
        return self.number("mu")

    @property
    def sigma(self) -> float | None:
        return self.number("sigma")

    @property
    def q(self) -> float | None:
        return self.number("q")

    @property
    def upper(self) -> int | None:
        """randint's bound as an int: a float is truncated (5.5 is 5), as azure-ai-ml does."""
        raw = self.data.get("upper") if isinstance(self.data, Mapping) else None
        if isinstance(raw, int) and not isinstance(raw, bool):
            return raw
        number = read_number(raw)
        return None if number is None else int(number)

    @property
    def distinct(self) -> tuple[Option, ...]:
        """The options with repeats left out (the first of each kept, in order)."""
        first: dict[str, Option] = {}
        for option in self.options:
            first.setdefault(option.key, option)
        return tuple(first.values())

    @property
    def size(self) -> int | None:
        """How many distinct values it takes, when finitely many; else None."""
        return _size(self)


@dataclass(frozen=True)
class SearchSpace:
    """A parsed search space: one Distribution per key of the mapping, in order."""

    entries: tuple[Distribution, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(entry.name for entry in self.entries)

    def walk(self) -> Iterator[Distribution]:
        """Every entry and every nested distribution, depth-first: a choice, then the
        distributions of its first value, of its second value, ..."""
        for entry in self.entries:
            yield from _walk(entry)

    @property
    def size(self) -> int | None:
        """Distinct configurations when every distribution of the tree is finite, else None.
        Two different nested spaces that can produce the same values are counted apart, so the
        size is then an upper bound."""
        if not self.entries:
            return None
        total = 1
        for entry in self.entries:
            part = _size(entry)
            if part is None:
                return None
            total *= part
        return total

    @property
    def grid_size(self) -> int | None:
        """Points of a grid over this space: the product of each choice's distinct values; None
        unless every entry is a choice with a non-empty list of values."""
        if not self.entries or any(e.kind != "choice" or not e.options for e in self.entries):
            return None
        return math.prod(len(entry.distinct) for entry in self.entries)

    def grid(self) -> Iterator[dict[str, Any]]:
        """The grid's points, each distinct combination once (see the module's documentation);
        nothing unless grid_size is a number. A value is given as written (a nested space as its
        mapping)."""
        if self.grid_size is None:
            return
        names = self.names
        for point in product(*(entry.distinct for entry in self.entries)):
            yield {name: option.value for name, option in zip(names, point)}


def parse(search_space: Any) -> SearchSpace:
    """The model of a ``search_space`` value as loaded from YAML. Never raises: anything that is
    no mapping is an empty space."""
    if not isinstance(search_space, Mapping):
        return SearchSpace()
    return SearchSpace(tuple(_entry(key, value, (key,), 0) for key, value in search_space.items()))


def _entry(key: Any, data: Any, path: tuple[Any, ...], depth: int) -> Distribution:
    kind = kind_of(data.get("type")) if isinstance(data, Mapping) else None
    options: tuple[Option, ...] = ()
    values = data.get("values") if kind == "choice" else None
    if isinstance(values, (list, tuple)) and depth <= MAX_DEPTH:
        options = tuple(_option(value, path + ("values", index), depth) for index, value in enumerate(values))
    return Distribution(str(key), path, kind, data, options, depth)


def _option(value: Any, path: tuple[Any, ...], depth: int) -> Option:
    if not isinstance(value, Mapping):
        return Constant(value, value_key(value))
    items: list[tuple[Any, Distribution | Constant]] = []
    for key, inner in value.items():
        if isinstance(inner, Mapping) and kind_of(inner.get("type")) is not None:
            items.append((key, _entry(key, inner, path + (key,), depth + 1)))
        else:
            items.append((key, Constant(inner, value_key(inner))))
    return Branch(value, tuple(items), value_key(value))


def _walk(entry: Distribution) -> Iterator[Distribution]:
    yield entry
    for option in entry.options:
        if isinstance(option, Branch):
            for _, item in option.items:
                if isinstance(item, Distribution):
                    yield from _walk(item)


def _size(entry: Distribution) -> int | None:
    kind = entry.kind
    try:
        if kind == "choice":
            if not entry.options:
                return None
            total = 0
            for option in entry.distinct:
                product_ = 1
                if isinstance(option, Branch):
                    for _, item in option.items:
                        if isinstance(item, Distribution):
                            part = _size(item)
                            if part is None:
                                return None
                            product_ *= part
                total += product_
            return total
        if kind == "randint":
            upper = entry.upper
            return upper if upper is not None and upper >= 1 else None
        if kind in ("quniform", "qloguniform"):
            low, high, q = entry.low, entry.high, entry.q
            if low is None or high is None or q is None or q <= 0 or low > high:
                return None
            if kind == "qloguniform":
                low, high = math.exp(low), math.exp(high)
            return round(high / q) - round(low / q) + 1
    except (OverflowError, ValueError):  # e ** max past a float, or an infinite ratio
        return None
    return None
