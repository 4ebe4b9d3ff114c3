"""The search space of a sweep job and the samplers that draw its trials' hyperparameters.

A local re-implementation of Azure ML's sweep job ("HyperDrive") sampling, faithful to the
service's documented semantics. Pure Python: no I/O and no global state of its own. numpy,
scipy and optuna are imported only by the samplers that use them, so importing this module
costs a few milliseconds.

Search space
============
:func:`parse_space` reads ``search_space``, the YAML mapping already parsed into Python, into an
immutable :class:`Space`. What a distribution is, its parameters, what each algorithm accepts,
the size and the grid come from :mod:`validator.search_space`, the model aml-lint and aml-quiz
use too; this module refuses what cannot be sampled and samples the rest. Each key is a hyperparameter name (a non-empty string); each value is
a mapping with ``type`` and that distribution's parameters, and nothing else. ``type`` may be
written in any case and CamelCase: it is compared after removing ``_`` and lower-casing, so
``QUniform``, ``q_uniform`` and ``quniform`` are the same. A numeric parameter may be an int, a
float or a numeric string such as ``"1e-3"`` (read with ``float()``); booleans are not numbers,
and NaN and infinities are refused. Anything malformed raises :class:`SearchSpaceError`, one
line naming the key (``search_space.lr``, or ``search_space.conv_size.values[0].val1`` inside a
nested space), what is wrong and what to write instead.

=============  ==============================  ============================================
type           parameters                      value (hyperopt's meaning, which Azure uses)
=============  ==============================  ============================================
choice         values: a non-empty list        one listed value, each entry equally likely
                                               (a repeated entry is twice as likely)
randint        upper >= 1                      an int in [0, upper); a float upper is
                                               truncated (5.5 means 5), as the SDK does
uniform        min_value <= max_value          a float in [min_value, max_value]
loguniform     min_value <= max_value          logbase ** uniform(min_value, max_value): the
                                               bounds are exponents
quniform       min_value <= max_value, q > 0   round(uniform(min_value, max_value) / q) * q
qloguniform    min_value <= max_value, q > 0   round(logbase ** uniform(min, max) / q) * q
normal         mu, sigma > 0                   a float drawn from normal(mu, sigma)
lognormal      mu, sigma > 0                   logbase ** normal(mu, sigma)
qnormal        mu, sigma > 0, q > 0            round(normal(mu, sigma) / q) * q
qlognormal     mu, sigma > 0, q > 0            round(logbase ** normal(mu, sigma) / q) * q
=============  ==============================  ============================================

- ``round`` rounds half to even, as ``numpy.round`` does; a quantised value is a Python float
  (``64.0``, not ``64``, as in hyperopt) and ``-0.0`` is returned as ``0.0``.
- Equal bounds (``min_value == max_value``) are accepted and give that one value.
- A ``choice`` value is returned unchanged. It may be a scalar (str, int, float, bool, None), a
  list, or a mapping, which is a nested (conditional) search space: each of its keys (strings)
  maps either to a distribution, a mapping whose ``type`` names one of the ten above, sampled
  recursively, or to anything else, a constant returned as it is. The sampled value is then a
  dict with the same keys in the same order. Nesting may be any depth.
- ``logbase`` (random sampling only) is a positive number or ``"e"`` (the default, computed with
  ``math.exp``). The sampler refuses a space whose log distributions overflow a float with that
  base at their bounds (``mu +- 10 sigma`` for the normal ones).
- :attr:`Space.size` is the number of distinct configurations when every node of the tree is
  discrete: a choice counts each distinct value once (compared as JSON), a constant as 1 and a
  mapping value as the product of its entries' sizes; randint counts ``upper``; quniform and
  qloguniform count the rounded values in their range, ``round(max/q) - round(min/q) + 1``
  (qloguniform with logbase e). It is ``None`` when any node anywhere in the tree is uniform,
  loguniform, normal, lognormal, qnormal or qlognormal. Two different mapping values that can
  produce the same dict are counted apart, so the size is then an upper bound.

Samplers
========
:func:`make_sampler` returns a :class:`Sampler` for ``sampling_algorithm``: ``random`` (with
``rule`` ``random`` or ``sobol``), ``grid`` or ``bayesian``, all compared case-insensitively.
``seed`` is an int in [0, 2**32 - 1] (the range numpy's legacy seeding, used by scipy and optuna,
accepts), and ``goal`` is ``maximize`` or ``minimize``. ``rule: sobol`` with grid or bayesian
sampling is refused; ``logbase`` is checked but has no use there (neither allows a log
distribution).

random (rule random)
    ``numpy.random.default_rng(seed)``; each trial draws its nodes depth-first in the space's
    order, a choice before the nested space of the value it picked (values not picked draw
    nothing): ``integers(n)`` for choice and randint, ``uniform(min, max)`` (clamped into the
    bounds against rounding) for the uniform family, ``normal(mu, sigma)`` for the normal family.
random (rule sobol)
    ``scipy.stats.qmc.Sobol(d, scramble=True, seed=seed)``, one dimension per distribution node
    of the whole tree, nested ones in every branch of a choice included, numbered depth-first
    (a node, then the nodes of its first value, of its second value, ...). Each trial takes the
    next point, drawn one at a time, and maps each coordinate u in [0, 1) through the inverse
    CDF: uniform ``min + u * (max - min)`` (clamped), loguniform ``logbase ** (that)``, randint
    ``floor(u * upper)`` and choice ``values[floor(u * len(values))]`` (both clamped to the last),
    normal ``mu + sigma * ndtri(u)`` with u clipped into [1e-12, 1 - 1e-12], and the q and log
    variants by composing these. A branch not chosen leaves its dimensions unused.
grid
    Only ``choice`` with scalar values. The model's grid (:meth:`SearchSpace.grid
    <validator.search_space.SearchSpace.grid>`): the Cartesian product of the distinct values,
    keys in the space's order, values in listed order, the last key varying fastest; a value
    listed twice adds no point (that module's documentation gives the evidence). The seed is
    not used.
bayesian
    Only ``choice`` (scalar values), ``uniform`` and ``quniform``. Optuna's TPE through its
    ask/tell interface: ``TPESampler(seed=seed, constant_liar=True)`` in a study whose direction
    is the goal; optuna's logging is set to WARNING (optuna's own, process-wide, setting). choice
    is ``suggest_categorical(name, values)``, uniform ``suggest_float(name, min, max)``, and
    quniform ``suggest_int(name, round(min/q), round(max/q))`` times q as a float: the support
    of ``round(uniform/q)*q``. :meth:`Sampler.tell` reports a trial's objective value; ``None``,
    NaN or an infinity means it failed or logged nothing, and the trial is told as FAIL. Telling
    a number that was never returned, or telling it twice, raises ValueError. A suggestion not
    yet told counts as running: constant_liar makes TPE steer away from it.

Every sampler samples without repeats, as the service does ("max_total_runs ... is the upper
bound; there may be fewer runs when the sample space is smaller than this value"): it never
returns a configuration equal to an earlier one, compared as JSON with sorted keys (so ``1``,
``1.0`` and ``true`` differ). random and sobol draw again, and are exhausted after 1000 draws in
a row that all repeat; bayesian tells a repeated suggestion as FAIL and asks again, and is
exhausted after 100 repeats in a row; grid is exhausted after its last point. All of them are
exhausted at once when they have returned :attr:`Space.size` configurations (no draw could be
new). An exhausted sampler's :meth:`Sampler.ask` returns None, then and ever after.

The same seed gives the same sequence of configurations, in any process: nothing depends on
``hash()``, on set order or on a global random state. Every returned value is a plain Python
type (int, float, str, bool, None, dict, list) that serialises to JSON.

:func:`format_value` is the text a trial receives for ``${{search_space.x}}`` and in
``AZUREML_SWEEP_x``: ``str()`` of a scalar (``True``, ``0.01``, ``4``, ``64.0``, ``1e-05``), and
``json.dumps`` of a dict or list.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from validator.search_space import (DISTRIBUTIONS, LOG, MAX_DEPTH, PARAMETERS, QUANTIZED, RANGED, Branch,
                                    Constant, Distribution, SearchSpace, accepts, algorithm_of, dotted,
                                    parse)

if TYPE_CHECKING:  # pragma: no cover
    import numpy

__all__ = ["SearchSpaceError", "Suggestion", "Space", "Sampler", "parse_space", "make_sampler",
           "format_value"]

_RANDOM_REPEATS = 1000
_BAYESIAN_REPEATS = 100
_SEED_MAX = 2**32 - 1
# numpy's Generator.integers takes an int64 bound.
_UPPER_MAX = 2**63 - 1
# ndtri(0) is -inf: Sobol's u may be exactly 0.
_NDTRI_EPS = 1e-12
# The overflow check of the normal family: nothing reaches 10 sigma (p ~ 1e-23), and Sobol's
# clipped u reaches only about 7.
_SIGMAS = 10.0


class SearchSpaceError(ValueError):
    """A search space, or a sampling setting, that cannot be sampled: one line saying which key,
    what is wrong and what to write instead."""


@dataclass(frozen=True)
class Suggestion:
    """One trial's hyperparameters, numbered 0, 1, 2, ... in the order ask() returned them."""

    number: int
    params: dict[str, Any]


# ----------------------------------------------------------------------------- the parsed space
@dataclass(frozen=True)
class Space:
    """A parsed, validated search space. ``names`` are its top-level keys in order; ``size`` is
    the number of distinct configurations when every node is discrete, else None (see the
    module's documentation); ``model`` is validator.search_space's model of it, which the
    samplers walk."""

    names: tuple[str, ...]
    size: int | None
    model: SearchSpace = field(repr=False)


# ----------------------------------------------------------------------------- parsing
def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _error(path: str, problem: str, fix: str) -> SearchSpaceError:
    return SearchSpaceError(f"search_space.{path}: {problem}; {fix}")


def _number(entry: Mapping[str, Any], key: str, path: str) -> float:
    """Parameter ``key`` as the model reads it (validator.search_space.read_number), or the
    error that says why it is no number."""
    raw = entry[key]
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise _error(path, f"{key} is {_short(raw)}, not a number", f"write {key} as a number such as 0.5")
    try:
        value = float(raw)
    except (ValueError, OverflowError):
        raise _error(path, f"{key} is {_short(raw)}, not a number",
                     f"write {key} as a number such as 0.5 or 1e-3") from None
    if not math.isfinite(value):
        raise _error(path, f"{key} is {_short(raw)}, which is not finite", f"write a finite {key}")
    return value


def _check_plain(value: Any, path: str) -> None:
    """Constants are returned to trials and written as JSON, so only JSON's types are allowed."""
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _error(path, f"the value {_short(value)} is not finite", "use a finite number or a string")
        return
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _check_plain(item, f"{path}[{index}]")
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise _error(path, f"key {_short(key)} is not a string", "quote the key")
            _check_plain(item, f"{path}.{key}")
        return
    raise _error(path, f"the value {_short(value)} is a {type(value).__name__}",
                 "use a number, a string, a boolean, null, a list or a mapping")


def _check_node(node: Distribution) -> None:
    """Refuse what the samplers cannot sample, depth-first, so the first problem is named."""
    path = dotted(node.path)
    if node.depth > MAX_DEPTH:
        raise _error(path, f"the search space nests more than {MAX_DEPTH} levels deep", "flatten it")
    entry = node.data
    if not isinstance(entry, Mapping):
        raise _error(path, f"the entry is {_short(entry)}, not a distribution",
                     "write a mapping such as {type: uniform, min_value: 0.001, max_value: 0.1}")
    if "type" not in entry:
        raise _error(path, "the distribution has no type", f"add `type:`, one of {', '.join(DISTRIBUTIONS)}")
    kind = node.kind
    if kind is None:
        raise _error(path, f"type {_short(entry['type'])} is not a distribution",
                     f"use one of {', '.join(DISTRIBUTIONS)}")
    wanted = PARAMETERS[kind]
    for key in entry:
        if key != "type" and key not in wanted:
            raise _error(path, f"{kind} has no parameter {_short(key)}",
                         f"{kind} takes {', '.join(wanted)}; remove {_short(key)} or change the type")
    for key in wanted:
        if key not in entry:
            raise _error(path, f"{kind} needs {key}", f"add `{key}:` ({kind} takes {', '.join(wanted)})")

    if kind == "choice":
        _check_choice(node, path)
        return
    if kind == "randint":
        raw = entry["upper"]
        if not (isinstance(raw, int) and not isinstance(raw, bool)):
            _number(entry, "upper", path)
        upper = node.upper
        assert upper is not None  # an int, or a finite number truncated
        if upper < 1:
            raise _error(path, f"randint upper is {_short(raw)}, but it samples integers in [0, upper)",
                         "set upper to at least 1 (`upper: 10` gives 0-9)")
        if upper > _UPPER_MAX:
            raise _error(path, f"randint upper is {_short(raw)}, above 2**63 - 1", "use a smaller upper")
        return
    q = _number(entry, "q", path) if "q" in wanted else 0.0
    if "q" in wanted and q <= 0:
        raise _error(path, f"q is {_short(entry['q'])}, but the rounding step must be greater than 0",
                     "set q to the step between values, such as `q: 1`")
    if kind in RANGED:
        low, high = _number(entry, "min_value", path), _number(entry, "max_value", path)
        if low > high:
            raise _error(path, f"min_value {_short(entry['min_value'])} is above max_value "
                               f"{_short(entry['max_value'])}", "swap the two bounds")
        if q and not (math.isfinite(low / q) and math.isfinite(high / q)):
            raise _error(path, f"the range divided by q {_short(entry['q'])} overflows a float", "raise q")
        return
    mu, sigma = _number(entry, "mu", path), _number(entry, "sigma", path)
    if sigma <= 0:
        raise _error(path, f"sigma is {_short(entry['sigma'])}, but a standard deviation must be "
                           "greater than 0", "set sigma to the spread wanted around mu")
    reach = (mu - _SIGMAS * sigma, mu + _SIGMAS * sigma)
    if not all(math.isfinite(x) and (kind in LOG or not q or math.isfinite(x / q)) for x in reach):
        raise _error(path, "mu and sigma are too large: the samples overflow a float",
                     "use a smaller mu or sigma")


def _check_choice(node: Distribution, path: str) -> None:
    values = node.data["values"]
    if not isinstance(values, (list, tuple)) or not values:
        raise _error(path, f"choice values are {_short(values)}, not a non-empty list",
                     "list the values, such as `values: [4, 6, 8]`")
    for index, option in enumerate(node.options):
        where = f"{path}.values[{index}]"
        if isinstance(option, Constant):
            _check_plain(option.value, where)
            continue
        if not option.items:
            raise _error(where, "the nested search space is an empty mapping",
                         "give it at least one key, or use a plain value")
        for key, item in option.items:
            if not isinstance(key, str) or not key:
                raise _error(where, f"key {_short(key)} is not a name", "use a non-empty string key")
            # The model's rule (the linter's too): only a mapping whose type names a
            # distribution is sampled; any other value, a mapping without such a type included,
            # is a constant.
            if isinstance(item, Distribution):
                _check_node(item)
            else:
                _check_plain(item.value, f"{where}.{key}")


def parse_space(search_space: Mapping[str, Any]) -> Space:
    """Read and validate a sweep's ``search_space`` mapping; raise SearchSpaceError naming the
    key of anything malformed."""
    if not isinstance(search_space, Mapping):
        raise SearchSpaceError(f"search_space is {_short(search_space)}, not a mapping; write one key "
                               "per hyperparameter, such as `lr: {type: uniform, min_value: 0.001, "
                               "max_value: 0.1}`")
    if not search_space:
        raise SearchSpaceError("search_space is empty; add at least one hyperparameter, such as "
                               "`lr: {type: uniform, min_value: 0.001, max_value: 0.1}`")
    model = parse(search_space)
    for name, node in zip(search_space, model.entries):
        if not isinstance(name, str) or not name:
            raise SearchSpaceError(f"search_space key {_short(name)} is not a name; use letters, digits "
                                   "and underscores")
        _check_node(node)
    return Space(model.names, model.size, model)


# ----------------------------------------------------------------------------- values
def _power(base: float | None, x: float) -> float:
    """logbase ** x; None is e. Raises OverflowError past a float."""
    return math.exp(x) if base is None else base ** x


def _quantise(x: float, q: float) -> float:
    # Python's round() on a float is round-half-even, like numpy.round; + 0.0 turns -0.0 into 0.0.
    return float(round(x / q) * q) + 0.0


def _finish(node: Distribution, x: float, base: float | None) -> float:
    """A draw of the underlying uniform or normal, taken through log and rounding."""
    if node.kind in LOG:
        x = _power(base, x)
    if node.kind in QUANTIZED:
        x = _quantise(x, _real(node.q))
    return float(x) + 0.0


_T = TypeVar("_T", int, float)


def _real(value: _T | None) -> _T:
    """A parameter parse_space has checked: the model read it as a number."""
    assert value is not None
    return value


def _clamp(x: float, low: float, high: float) -> float:
    # low + u * (high - low) can pass high by an ulp.
    return min(max(x, low), high)


def _check_overflow(space: Space, base: float | None) -> None:
    """The log distributions must stay finite with this base, at their bounds or 10 sigma out."""
    for node in space.model.walk():
        if node.kind not in LOG:
            continue
        if node.kind in RANGED:
            ends = (_real(node.low), _real(node.high))
        else:
            mu, sigma = _real(node.mu), _real(node.sigma)
            ends = (mu - _SIGMAS * sigma, mu + _SIGMAS * sigma)
        q = node.q
        try:
            values = [_power(base, x) for x in ends]
            fine = all(math.isfinite(v) and (not q or math.isfinite(v / q)) for v in values)
        except OverflowError:
            fine = False
        if not fine:
            shown = "e" if base is None else format_value(base)
            raise _error(dotted(node.path), f"{node.kind} overflows a float: {shown} ** {max(ends):g} is too large "
                                    "(the bounds of a log distribution are exponents)",
                         "write the logarithms of the values wanted, such as min_value: -9.2 for 1e-4")


def _canonical(params: dict[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _fresh(value: Any) -> Any:
    """A copy of a constant for one trial, so that no caller shares it (lists and mappings)."""
    return json.loads(json.dumps(value)) if isinstance(value, (list, tuple, Mapping)) else value


def _resolve(option: Constant | Branch, sample: Callable[[Distribution], Any]) -> Any:
    if isinstance(option, Constant):
        return _fresh(option.value)
    return {key: sample(item) if isinstance(item, Distribution) else _fresh(item.value) for key, item in option.items}


def _widths(space: Space) -> dict[int, int]:
    """Sobol dimensions of each distribution and each nested space of the tree, by id(): one per
    distribution, the nested ones in every value of a choice included."""
    widths: dict[int, int] = {}

    def width(node: Distribution) -> int:
        total = 1
        for option in node.options:
            inner = 0
            if isinstance(option, Branch):
                inner = sum(width(item) for _, item in option.items if isinstance(item, Distribution))
            widths[id(option)] = inner
            total += inner
        widths[id(node)] = total
        return total

    for node in space.model.entries:
        width(node)
    return widths


# ----------------------------------------------------------------------------- samplers
class Sampler(Protocol):
    """Draws one trial's hyperparameters at a time."""

    algorithm: str  # "random" | "sobol" | "grid" | "bayesian"

    def ask(self) -> Suggestion | None:
        """The next trial's hyperparameters, or None once the space is exhausted."""
        ...

    def tell(self, number: int, value: float | None) -> None:
        """Report trial ``number``'s objective value (None: it failed or logged nothing)."""
        ...


class _Unique:
    """Numbers the configurations and remembers them, so that none is returned twice."""

    def __init__(self, space: Space) -> None:
        self._space = space
        self._seen: set[str] = set()
        self.exhausted = False

    @property
    def full(self) -> bool:
        # Every configuration has been returned: any further draw would repeat.
        return self._space.size is not None and len(self._seen) >= self._space.size

    def add(self, params: dict[str, Any]) -> Suggestion | None:
        """The params as the next Suggestion, or None when they were returned before."""
        text = _canonical(params)
        if text in self._seen:
            return None
        self._seen.add(text)
        return Suggestion(len(self._seen) - 1, params)


class _Drawing:
    """random and sobol: draw until the configuration is new, up to 1000 draws in a row."""

    algorithm = "random"

    def __init__(self, space: Space) -> None:
        self._space = space
        self._unique = _Unique(space)

    def _draw(self) -> dict[str, Any]:  # pragma: no cover - overridden
        raise NotImplementedError

    def ask(self) -> Suggestion | None:
        if self._unique.exhausted or self._unique.full:
            self._unique.exhausted = True
            return None
        for _ in range(_RANDOM_REPEATS):
            found = self._unique.add(self._draw())
            if found is not None:
                return found
        self._unique.exhausted = True
        return None

    def tell(self, number: int, value: float | None) -> None:
        """Random sampling does not learn from results."""


class _RandomSampler(_Drawing):
    algorithm = "random"

    def __init__(self, space: Space, seed: int, base: float | None) -> None:
        import numpy as np

        super().__init__(space)
        self._rng = np.random.default_rng(seed)
        self._base = base

    def _draw(self) -> dict[str, Any]:
        return {name: self._value(node) for name, node in zip(self._space.names, self._space.model.entries)}

    def _value(self, node: Distribution) -> Any:
        rng: numpy.random.Generator = self._rng
        if node.kind == "choice":
            return _resolve(node.options[int(rng.integers(len(node.options)))], self._value)
        if node.kind == "randint":
            return int(rng.integers(_real(node.upper)))
        if node.kind in RANGED:
            low, high = _real(node.low), _real(node.high)
            x = _clamp(float(rng.uniform(low, high)), low, high)
        else:
            x = float(rng.normal(_real(node.mu), _real(node.sigma)))
        return _finish(node, x, self._base)


class _SobolSampler(_Drawing):
    algorithm = "sobol"

    def __init__(self, space: Space, seed: int, base: float | None) -> None:
        from scipy.special import ndtri
        from scipy.stats import qmc

        super().__init__(space)
        self._widths = _widths(space)
        self._engine = qmc.Sobol(d=sum(self._widths[id(node)] for node in space.model.entries), scramble=True,
                                 seed=seed)
        self._ndtri = ndtri
        self._base = base

    def _draw(self) -> dict[str, Any]:
        with warnings.catch_warnings():
            # Drawing one point at a time is the point here; the balance of 2**m blocks is not.
            warnings.filterwarnings("ignore", message=".*balance properties.*", category=UserWarning)
            point = [float(u) for u in self._engine.random(1)[0]]
        params: dict[str, Any] = {}
        start = 0
        for name, node in zip(self._space.names, self._space.model.entries):
            params[name] = self._value(node, point, start)
            start += self._widths[id(node)]
        return params

    def _value(self, node: Distribution, point: list[float], start: int) -> Any:
        u = point[start]
        if node.kind == "choice":
            chosen = min(int(u * len(node.options)), len(node.options) - 1)
            offset = start + 1 + sum(self._widths[id(option)] for option in node.options[:chosen])
            option = node.options[chosen]
            if isinstance(option, Constant):
                return _fresh(option.value)
            value: dict[str, Any] = {}
            for key, item in option.items:
                if isinstance(item, Constant):
                    value[key] = _fresh(item.value)
                else:
                    value[key] = self._value(item, point, offset)
                    offset += self._widths[id(item)]
            return value
        if node.kind == "randint":
            upper = _real(node.upper)
            return min(int(u * upper), int(upper) - 1)
        if node.kind in RANGED:
            low, high = _real(node.low), _real(node.high)
            x = _clamp(low + u * (high - low), low, high)
        else:
            x = _real(node.mu) + _real(node.sigma) * float(self._ndtri(min(max(u, _NDTRI_EPS), 1 - _NDTRI_EPS)))
        return _finish(node, x, self._base)


class _GridSampler:
    algorithm = "grid"

    def __init__(self, space: Space) -> None:
        self._space = space
        self._unique = _Unique(space)
        # The model's grid: each distinct combination once (a value listed twice adds no point).
        self._points = space.model.grid()

    def ask(self) -> Suggestion | None:
        if self._unique.exhausted:
            return None
        for point in self._points:
            found = self._unique.add(point)
            if found is not None:
                return found
        self._unique.exhausted = True
        return None

    def tell(self, number: int, value: float | None) -> None:
        """Grid sampling does not learn from results."""


class _BayesianSampler:
    algorithm = "bayesian"

    def __init__(self, space: Space, seed: int, goal: str) -> None:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self._optuna = optuna
        self._space = space
        self._unique = _Unique(space)
        sampler = optuna.samplers.TPESampler(seed=seed, constant_liar=True)
        self._study = optuna.create_study(direction=goal, sampler=sampler)
        self._pending: dict[int, Any] = {}  # Suggestion.number -> optuna trial, until told

    def _suggest(self, trial: Any) -> dict[str, Any]:
        params: dict[str, Any] = {}
        for name, node in zip(self._space.names, self._space.model.entries):
            if node.kind == "choice":
                params[name] = trial.suggest_categorical(
                    name, [option.value for option in node.options if isinstance(option, Constant)])
            elif node.kind == "uniform":
                params[name] = float(trial.suggest_float(name, _real(node.low), _real(node.high))) + 0.0
            else:
                low, high, q = _real(node.low), _real(node.high), _real(node.q)
                k = trial.suggest_int(name, round(low / q), round(high / q))
                params[name] = float(k * q) + 0.0
        return params

    def ask(self) -> Suggestion | None:
        if self._unique.exhausted or self._unique.full:
            self._unique.exhausted = True
            return None
        for _ in range(_BAYESIAN_REPEATS):
            trial = self._study.ask()
            found = self._unique.add(self._suggest(trial))
            if found is not None:
                self._pending[found.number] = trial
                return found
            # TPE proposed a point it already has: telling it FAIL makes it move on.
            self._study.tell(trial, state=self._optuna.trial.TrialState.FAIL)
        self._unique.exhausted = True
        return None

    def tell(self, number: int, value: float | None) -> None:
        trial = self._pending.pop(number, None)
        if trial is None:
            raise ValueError(f"trial {number} was not suggested by this sampler, or was told already")
        if value is None or isinstance(value, bool) or not math.isfinite(float(value)):
            self._study.tell(trial, state=self._optuna.trial.TrialState.FAIL)
        else:
            self._study.tell(trial, float(value))


def _squash(value: Any) -> str | None:
    return value.replace("_", "").lower() if isinstance(value, str) else None


def _logbase(logbase: float | str) -> float | None:
    """The base of the log distributions as a float, or None for e."""
    if isinstance(logbase, str) and logbase.strip().lower() == "e":
        return None
    try:
        if isinstance(logbase, bool):
            raise ValueError
        base = float(logbase)
    except (TypeError, ValueError, OverflowError):
        base = math.nan
    if not (math.isfinite(base) and base > 0):
        raise SearchSpaceError(f"sampling_algorithm.logbase is {_short(logbase)}, not a positive number; "
                               "write `logbase: e` (the default) or a number such as 10")
    return base


def make_sampler(algorithm: str, space: Space, *, seed: int, rule: str = "random",
                 logbase: float | str = "e", goal: str = "maximize") -> Sampler:
    """The sampler of a sweep's ``sampling_algorithm`` over ``space``; raise SearchSpaceError when
    the algorithm does not support a distribution of the space, or a setting is wrong."""
    kind = algorithm_of(algorithm)
    if kind is None:
        raise SearchSpaceError(f"sampling_algorithm is {_short(algorithm)}; write random, grid or bayesian")
    how = _squash(rule)
    if how not in ("random", "sobol"):
        raise SearchSpaceError(f"sampling_algorithm.rule is {_short(rule)}; write random or sobol")
    if how == "sobol" and kind != "random":
        raise SearchSpaceError(f"sampling_algorithm.rule sobol applies only to random sampling, not {kind}; "
                               "remove the rule or use `type: random`")
    direction = _squash(goal)
    if direction not in ("maximize", "minimize"):
        raise SearchSpaceError(f"objective.goal is {_short(goal)}; write maximize or minimize")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= _SEED_MAX:
        raise SearchSpaceError(f"sampling_algorithm.seed is {_short(seed)}; write an integer from 0 to "
                               f"{_SEED_MAX}")
    if not isinstance(space, Space):
        raise TypeError(f"space must be a Space from parse_space(), not {type(space).__name__}")
    base = _logbase(logbase)

    if kind == "grid":
        for node in space.model.entries:
            if node.kind is None or not accepts("grid", node.kind):
                path = dotted(node.path)
                raise _error(path, f"grid sampling needs a choice, but this is {node.kind}",
                             f"list the grid points (`{path}: {{type: choice, values: [...]}}`) or use "
                             "random sampling")
            _check_scalars(node, "grid")
        return _GridSampler(space)
    if kind == "bayesian":
        for node in space.model.entries:
            if node.kind is None or not accepts("bayesian", node.kind):
                raise _error(dotted(node.path), f"bayesian sampling supports only choice, uniform and quniform, "
                                                f"but this is {node.kind}",
                             "describe it with choice, uniform or quniform, or use random sampling")
            if node.kind == "choice":
                _check_scalars(node, "bayesian")
        return _BayesianSampler(space, seed, direction)
    _check_overflow(space, base)
    if how == "sobol":
        return _SobolSampler(space, seed, base)
    return _RandomSampler(space, seed, base)


def _check_scalars(node: Distribution, algorithm: str) -> None:
    for index, option in enumerate(node.options):
        value = option.value if isinstance(option, Constant) else {}
        if isinstance(value, (Mapping, list, tuple)):
            what = "a mapping (a nested search space)" if isinstance(value, Mapping) else "a list"
            raise _error(f"{dotted(node.path)}.values[{index}]", f"{algorithm} sampling needs plain values in a "
                                                         f"choice, but this is {what}",
                         "use numbers or strings, or use random sampling for nested search spaces")


def format_value(value: Any) -> str:
    """The text of a sampled value in ``${{search_space.x}}`` and ``AZUREML_SWEEP_x``."""
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)
