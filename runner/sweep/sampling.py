"""The search space of a sweep job and the samplers that draw its trials' hyperparameters.

A local re-implementation of Azure ML's sweep job ("HyperDrive") sampling, faithful to the
service's documented semantics. Pure Python: no I/O and no global state of its own. numpy,
scipy and optuna are imported only by the samplers that use them, so importing this module
costs a few milliseconds.

Search space
============
:func:`parse_space` reads ``search_space``, the YAML mapping already parsed into Python, into an
immutable :class:`Space`. Each key is a hyperparameter name (a non-empty string); each value is
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
    Only ``choice`` with scalar values. The Cartesian product of the values, keys in the space's
    order, values in listed order, the last key varying fastest (``itertools.product``). The
    seed is not used.
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

import itertools
import json
import math
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    import numpy

__all__ = ["SearchSpaceError", "Suggestion", "Space", "Sampler", "parse_space", "make_sampler",
           "format_value"]

_DISTRIBUTIONS = ("choice", "randint", "uniform", "loguniform", "quniform", "qloguniform",
                  "normal", "lognormal", "qnormal", "qlognormal")
_RANGED = ("uniform", "loguniform", "quniform", "qloguniform")
_GAUSSIAN = ("normal", "lognormal", "qnormal", "qlognormal")
_LOG = ("loguniform", "qloguniform", "lognormal", "qlognormal")
_QUANTISED = ("quniform", "qloguniform", "qnormal", "qlognormal")
_PARAMETERS = {
    "choice": ("values",),
    "randint": ("upper",),
    **{kind: ("min_value", "max_value") for kind in ("uniform", "loguniform")},
    **{kind: ("min_value", "max_value", "q") for kind in ("quniform", "qloguniform")},
    **{kind: ("mu", "sigma") for kind in ("normal", "lognormal")},
    **{kind: ("mu", "sigma", "q") for kind in ("qnormal", "qlognormal")},
}
_GRID_ALLOWED = ("choice",)
_BAYESIAN_ALLOWED = ("choice", "uniform", "quniform")

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


# ----------------------------------------------------------------------------- the parsed tree
@dataclass(frozen=True)
class _Const:
    """A choice value, or an entry of a nested space, returned as it is."""

    text: str  # JSON in the input's key order, decoded afresh for each trial so no caller shares it
    key: str   # JSON with sorted keys: identical values count once in Space.size

    @property
    def width(self) -> int:
        return 0

    def value(self) -> Any:
        return json.loads(self.text)


@dataclass(frozen=True)
class _Branch:
    """A mapping value of a choice: a nested search space."""

    items: tuple[tuple[str, _Node | _Const], ...]
    key: str
    width: int  # Sobol dimensions of its distributions


@dataclass(frozen=True)
class _Node:
    """One distribution, with its parameters read as numbers."""

    kind: str
    path: str
    low: float = 0.0     # min_value
    high: float = 0.0    # max_value
    mu: float = 0.0
    sigma: float = 0.0
    q: float = 0.0
    upper: int = 0
    options: tuple[_Const | _Branch, ...] = ()
    width: int = 1       # Sobol dimensions of this node and every node nested in it


@dataclass(frozen=True)
class Space:
    """A parsed, validated search space. ``names`` are its top-level keys in order; ``size`` is
    the number of distinct configurations when every node is discrete, else None (see the
    module's documentation)."""

    names: tuple[str, ...]
    size: int | None
    _entries: tuple[_Node, ...] = field(repr=False)


# ----------------------------------------------------------------------------- parsing
def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _error(path: str, problem: str, fix: str) -> SearchSpaceError:
    return SearchSpaceError(f"search_space.{path}: {problem}; {fix}")


def _kind(raw: Any) -> str | None:
    if not isinstance(raw, str):
        return None
    squashed = raw.replace("_", "").lower()
    return squashed if squashed in _DISTRIBUTIONS else None


def _number(entry: Mapping[str, Any], key: str, path: str) -> float:
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


def _json_text(value: Any, path: str, *, sort_keys: bool) -> str:
    _check_plain(value, path)
    return json.dumps(value, sort_keys=sort_keys, allow_nan=False)


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


def _parse_node(entry: Any, path: str, depth: int) -> _Node:
    if depth > 100:
        raise _error(path, "the search space nests more than 100 levels deep", "flatten it")
    if not isinstance(entry, Mapping):
        raise _error(path, f"the entry is {_short(entry)}, not a distribution",
                     "write a mapping such as {type: uniform, min_value: 0.001, max_value: 0.1}")
    if "type" not in entry:
        raise _error(path, "the distribution has no type", f"add `type:`, one of {', '.join(_DISTRIBUTIONS)}")
    kind = _kind(entry["type"])
    if kind is None:
        raise _error(path, f"type {_short(entry['type'])} is not a distribution",
                     f"use one of {', '.join(_DISTRIBUTIONS)}")
    wanted = _PARAMETERS[kind]
    for key in entry:
        if key != "type" and key not in wanted:
            raise _error(path, f"{kind} has no parameter {_short(key)}",
                         f"{kind} takes {', '.join(wanted)}; remove {_short(key)} or change the type")
    for key in wanted:
        if key not in entry:
            raise _error(path, f"{kind} needs {key}", f"add `{key}:` ({kind} takes {', '.join(wanted)})")

    if kind == "choice":
        return _parse_choice(entry["values"], path, depth)
    if kind == "randint":
        raw = entry["upper"]
        upper = raw if isinstance(raw, int) and not isinstance(raw, bool) else int(_number(entry, "upper", path))
        if upper < 1:
            raise _error(path, f"randint upper is {_short(raw)}, but it samples integers in [0, upper)",
                         "set upper to at least 1 (`upper: 10` gives 0-9)")
        if upper > _UPPER_MAX:
            raise _error(path, f"randint upper is {_short(raw)}, above 2**63 - 1", "use a smaller upper")
        return _Node(kind, path, upper=upper)
    q = _number(entry, "q", path) if "q" in wanted else 0.0
    if "q" in wanted and q <= 0:
        raise _error(path, f"q is {_short(entry['q'])}, but the rounding step must be greater than 0",
                     "set q to the step between values, such as `q: 1`")
    if kind in _RANGED:
        low, high = _number(entry, "min_value", path), _number(entry, "max_value", path)
        if low > high:
            raise _error(path, f"min_value {_short(entry['min_value'])} is above max_value "
                               f"{_short(entry['max_value'])}", "swap the two bounds")
        if q and not (math.isfinite(low / q) and math.isfinite(high / q)):
            raise _error(path, f"the range divided by q {_short(entry['q'])} overflows a float", "raise q")
        return _Node(kind, path, low=low, high=high, q=q)
    mu, sigma = _number(entry, "mu", path), _number(entry, "sigma", path)
    if sigma <= 0:
        raise _error(path, f"sigma is {_short(entry['sigma'])}, but a standard deviation must be "
                           "greater than 0", "set sigma to the spread wanted around mu")
    reach = (mu - _SIGMAS * sigma, mu + _SIGMAS * sigma)
    if not all(math.isfinite(x) and (kind in _LOG or not q or math.isfinite(x / q)) for x in reach):
        raise _error(path, "mu and sigma are too large: the samples overflow a float",
                     "use a smaller mu or sigma")
    return _Node(kind, path, mu=mu, sigma=sigma, q=q)


def _parse_choice(values: Any, path: str, depth: int) -> _Node:
    if not isinstance(values, (list, tuple)) or not values:
        raise _error(path, f"choice values are {_short(values)}, not a non-empty list",
                     "list the values, such as `values: [4, 6, 8]`")
    options: list[_Const | _Branch] = []
    for index, value in enumerate(values):
        where = f"{path}.values[{index}]"
        if isinstance(value, Mapping):
            options.append(_parse_branch(value, where, depth))
        else:
            options.append(_Const(_json_text(value, where, sort_keys=False),
                                  "c" + _json_text(value, where, sort_keys=True)))
    return _Node("choice", path, options=tuple(options), width=1 + sum(o.width for o in options))


def _parse_branch(value: Mapping[str, Any], path: str, depth: int) -> _Branch:
    if not value:
        raise _error(path, "the nested search space is an empty mapping",
                     "give it at least one key, or use a plain value")
    items: list[tuple[str, _Node | _Const]] = []
    for key, inner in value.items():
        if not isinstance(key, str) or not key:
            raise _error(path, f"key {_short(key)} is not a name", "use a non-empty string key")
        where = f"{path}.{key}"
        # The brief's (and the linter's) rule: only a mapping whose type names a distribution is
        # sampled; any other value, a mapping without such a type included, is a constant.
        if isinstance(inner, Mapping) and _kind(inner.get("type")) is not None:
            items.append((key, _parse_node(inner, where, depth + 1)))
        else:
            items.append((key, _Const(_json_text(inner, where, sort_keys=False),
                                      "c" + _json_text(inner, where, sort_keys=True))))
    # The key of a branch is its spec, not its samples: identical specs count once.
    key_text = "b" + json.dumps(value, sort_keys=True, allow_nan=False)
    return _Branch(tuple(items), key_text, sum(item.width for _, item in items))


def _size(node: _Node) -> int | None:
    if node.kind == "choice":
        total = 0
        for option in {o.key: o for o in node.options}.values():
            if isinstance(option, _Const):
                total += 1
                continue
            product = 1
            for _, item in option.items:
                if isinstance(item, _Node):
                    size = _size(item)
                    if size is None:
                        return None
                    product *= size
            total += product
        return total
    if node.kind == "randint":
        return node.upper
    if node.kind == "quniform":
        return round(node.high / node.q) - round(node.low / node.q) + 1
    if node.kind == "qloguniform":
        try:
            return round(math.exp(node.high) / node.q) - round(math.exp(node.low) / node.q) + 1
        except (OverflowError, ValueError):  # e**max overflows: the base-e sampler refuses it anyway
            return None
    return None


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
    entries: list[_Node] = []
    for name, entry in search_space.items():
        if not isinstance(name, str) or not name:
            raise SearchSpaceError(f"search_space key {_short(name)} is not a name; use letters, digits "
                                   "and underscores")
        entries.append(_parse_node(entry, name, 0))
    size: int | None = 1
    for node in entries:
        part = _size(node)
        if part is None:
            size = None
            break
        size *= part
    return Space(tuple(str(name) for name in search_space), size, tuple(entries))


# ----------------------------------------------------------------------------- values
def _power(base: float | None, x: float) -> float:
    """logbase ** x; None is e. Raises OverflowError past a float."""
    return math.exp(x) if base is None else base ** x


def _quantise(x: float, q: float) -> float:
    # Python's round() on a float is round-half-even, like numpy.round; + 0.0 turns -0.0 into 0.0.
    return float(round(x / q) * q) + 0.0


def _finish(node: _Node, x: float, base: float | None) -> float:
    """A draw of the underlying uniform or normal, taken through log and rounding."""
    if node.kind in _LOG:
        x = _power(base, x)
    if node.kind in _QUANTISED:
        x = _quantise(x, node.q)
    return float(x) + 0.0


def _clamp(x: float, low: float, high: float) -> float:
    # low + u * (high - low) can pass high by an ulp.
    return min(max(x, low), high)


def _check_overflow(space: Space, base: float | None) -> None:
    """The log distributions must stay finite with this base, at their bounds or 10 sigma out."""
    for node in _walk(space._entries):
        if node.kind not in _LOG:
            continue
        if node.kind in _RANGED:
            ends = (node.low, node.high)
        else:
            ends = (node.mu - _SIGMAS * node.sigma, node.mu + _SIGMAS * node.sigma)
        try:
            values = [_power(base, x) for x in ends]
            fine = all(math.isfinite(v) and (not node.q or math.isfinite(v / node.q)) for v in values)
        except OverflowError:
            fine = False
        if not fine:
            shown = "e" if base is None else format_value(base)
            raise _error(node.path, f"{node.kind} overflows a float: {shown} ** {max(ends):g} is too large "
                                    "(the bounds of a log distribution are exponents)",
                         "write the logarithms of the values wanted, such as min_value: -9.2 for 1e-4")


def _walk(nodes: tuple[_Node, ...]) -> Iterator[_Node]:
    for node in nodes:
        yield node
        for option in node.options:
            if isinstance(option, _Branch):
                yield from _walk(tuple(item for _, item in option.items if isinstance(item, _Node)))


def _canonical(params: dict[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _resolve(option: _Const | _Branch, sample: Callable[[_Node], Any]) -> Any:
    if isinstance(option, _Const):
        return option.value()
    return {key: sample(item) if isinstance(item, _Node) else item.value() for key, item in option.items}


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
        return {name: self._value(node) for name, node in zip(self._space.names, self._space._entries)}

    def _value(self, node: _Node) -> Any:
        rng: numpy.random.Generator = self._rng
        if node.kind == "choice":
            return _resolve(node.options[int(rng.integers(len(node.options)))], self._value)
        if node.kind == "randint":
            return int(rng.integers(node.upper))
        if node.kind in _RANGED:
            x = _clamp(float(rng.uniform(node.low, node.high)), node.low, node.high)
        else:
            x = float(rng.normal(node.mu, node.sigma))
        return _finish(node, x, self._base)


class _SobolSampler(_Drawing):
    algorithm = "sobol"

    def __init__(self, space: Space, seed: int, base: float | None) -> None:
        from scipy.special import ndtri
        from scipy.stats import qmc

        super().__init__(space)
        self._engine = qmc.Sobol(d=sum(node.width for node in space._entries), scramble=True, seed=seed)
        self._ndtri = ndtri
        self._base = base

    def _draw(self) -> dict[str, Any]:
        with warnings.catch_warnings():
            # Drawing one point at a time is the point here; the balance of 2**m blocks is not.
            warnings.filterwarnings("ignore", message=".*balance properties.*", category=UserWarning)
            point = [float(u) for u in self._engine.random(1)[0]]
        params: dict[str, Any] = {}
        start = 0
        for name, node in zip(self._space.names, self._space._entries):
            params[name] = self._value(node, point, start)
            start += node.width
        return params

    def _value(self, node: _Node, point: list[float], start: int) -> Any:
        u = point[start]
        if node.kind == "choice":
            chosen = min(int(u * len(node.options)), len(node.options) - 1)
            offset = start + 1 + sum(option.width for option in node.options[:chosen])
            option = node.options[chosen]
            if isinstance(option, _Const):
                return option.value()
            value: dict[str, Any] = {}
            for key, item in option.items:
                if isinstance(item, _Const):
                    value[key] = item.value()
                else:
                    value[key] = self._value(item, point, offset)
                    offset += item.width
            return value
        if node.kind == "randint":
            return min(int(u * node.upper), node.upper - 1)
        if node.kind in _RANGED:
            x = _clamp(node.low + u * (node.high - node.low), node.low, node.high)
        else:
            x = node.mu + node.sigma * float(self._ndtri(min(max(u, _NDTRI_EPS), 1 - _NDTRI_EPS)))
        return _finish(node, x, self._base)


class _GridSampler:
    algorithm = "grid"

    def __init__(self, space: Space) -> None:
        self._space = space
        self._unique = _Unique(space)
        self._points = itertools.product(*(node.options for node in space._entries))

    def ask(self) -> Suggestion | None:
        if self._unique.exhausted:
            return None
        for point in self._points:
            # A value listed twice makes the same point twice: it runs once.
            found = self._unique.add({name: option.value() for name, option in zip(self._space.names, point)
                                      if isinstance(option, _Const)})
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
        for name, node in zip(self._space.names, self._space._entries):
            if node.kind == "choice":
                params[name] = trial.suggest_categorical(
                    name, [option.value() for option in node.options if isinstance(option, _Const)])
            elif node.kind == "uniform":
                params[name] = float(trial.suggest_float(name, node.low, node.high)) + 0.0
            else:
                k = trial.suggest_int(name, round(node.low / node.q), round(node.high / node.q))
                params[name] = float(k * node.q) + 0.0
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
    kind = _squash(algorithm)
    if kind not in ("random", "grid", "bayesian"):
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
        for node in space._entries:
            if node.kind != "choice":
                raise _error(node.path, f"grid sampling needs a choice, but this is {node.kind}",
                             f"list the grid points (`{node.path}: {{type: choice, values: [...]}}`) or use "
                             "random sampling")
            _check_scalars(node, "grid")
        return _GridSampler(space)
    if kind == "bayesian":
        for node in space._entries:
            if node.kind not in _BAYESIAN_ALLOWED:
                raise _error(node.path, f"bayesian sampling supports only choice, uniform and quniform, "
                                        f"but this is {node.kind}",
                             "describe it with choice, uniform or quniform, or use random sampling")
            if node.kind == "choice":
                _check_scalars(node, "bayesian")
        return _BayesianSampler(space, seed, direction)
    _check_overflow(space, base)
    if how == "sobol":
        return _SobolSampler(space, seed, base)
    return _RandomSampler(space, seed, base)


def _check_scalars(node: _Node, algorithm: str) -> None:
    for index, option in enumerate(node.options):
        value = option.value() if isinstance(option, _Const) else {}
        if isinstance(value, (dict, list)):
            what = "a mapping (a nested search space)" if isinstance(value, dict) else "a list"
            raise _error(f"{node.path}.values[{index}]", f"{algorithm} sampling needs plain values in a "
                                                         f"choice, but this is {what}",
                         "use numbers or strings, or use random sampling for nested search spaces")


def format_value(value: Any) -> str:
    """The text of a sampled value in ``${{search_space.x}}`` and ``AZUREML_SWEEP_x``."""
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)
