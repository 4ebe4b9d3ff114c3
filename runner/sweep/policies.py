"""The early-termination policies of a sweep job, as small pure functions over metric histories.

A policy looks at the primary metric that the trials have logged so far and decides whether
one trial should be canceled now. Nothing here reads files or clocks: the sweep's loop
(``sweep.py``) collects the histories, asks the policy's :meth:`EarlyTermination.check`, and
cancels the trial when it gets a :class:`Stop` back. Each policy is a small class
(:class:`BanditPolicy`, :class:`MedianStoppingPolicy`, :class:`TruncationSelectionPolicy`) over
its pure decision function below, found by its spec's ``type`` in :data:`REGISTRY`.

Vocabulary
----------
history
    The values of the sweep's primary metric for one trial, in the order the trial logged
    them. *Interval N* of a trial is its N-th logged value, counting from 1: each time the
    training script logs the primary metric counts as one interval (there is no notion of
    epochs or of time).
histories
    ``Mapping[str, Sequence[float]]`` from trial name to history, in trial order. It includes
    the trial being evaluated. Trials with an empty history are ignored everywhere, as if they
    were not in the mapping. Every value must be a finite number (``ValueError`` otherwise:
    NaN makes every comparison false, so a policy could not rank it).
goal
    ``"maximize"`` or ``"minimize"`` (any case). *Better*, *worse* and *best* follow it.
best_T(N)
    The best of trial T's first N values: the largest when maximizing, the smallest when
    minimizing.

A trial T is evaluated at interval N only when it has logged at least N values; the policy
functions raise ``ValueError`` otherwise, and for an interval below 1.

When a policy applies
---------------------
:func:`is_due`: at every interval that is a multiple of ``evaluation_interval`` and at least
``delay_evaluation``. An ``evaluation_interval`` of 0 (the SDK's default) counts as 1.

The three policies at interval N
--------------------------------
bandit
    B is the best, over every trial X (T included) that has logged at least N values, of
    best_X(N). T is canceled when best_T(N) is worse than the threshold: maximize,
    ``B / (1 + slack_factor)`` or ``B - slack_amount``; minimize (not documented by Microsoft;
    mirrored here), ``B * (1 + slack_factor)`` or ``B + slack_amount``. The factor form
    assumes positive metric values and is applied literally even when they are not.
median stopping
    Every trial X with at least one value has a running average, the mean of its first
    min(N, len(history_X)) values; M is the median of those averages (T included). T is
    canceled when best_T(N) is worse than M.
truncation selection
    The population is every trial with at least one value, minus the finished trials when
    ``exclude_finished_jobs`` is true (T always stays). A member's score is its value at
    interval N, or its best value so far when it has fewer than N values. With
    cut = floor(percentage * population / 100), T is canceled when cut >= 1 and at most cut
    members (T included) score worse than or equal to T: T is unambiguously among the cut
    worst, and a tie is never split.

Ties and rounding
-----------------
Every comparison is strict: a trial exactly on the threshold, the median or the cut-off is
kept. Bandit's threshold and the median are computed, and binary floating point makes
``0.8 - 0.1`` come out as 0.7000000000000001; a trial at 0.7 is meant to be on that
threshold, so for these two policies values equal up to a relative 1e-9 count as equal.
Truncation selection compares logged values with each other, exactly.

Every :class:`Stop` carries a one-line reason with the numbers that were compared (4
significant digits, more when 4 would print two different numbers alike) and the same numbers
in ``Stop.numbers``.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Collection, Mapping, Sequence

GOALS = ("maximize", "minimize")

# A computed threshold carries binary rounding that the learner's paper arithmetic does not;
# within this distance a trial counts as *on* the threshold, and ties are kept.
REL_TOLERANCE = 1e-9
ABS_TOLERANCE = 1e-12


@dataclass(frozen=True)
class Stop:
    """A policy's decision to cancel the trial it evaluated, at ``interval``.

    ``reason`` is one line with the numbers that were compared; ``numbers`` holds the same
    numbers, machine-readable (the keys are listed on each policy function).
    """

    policy: str
    interval: int
    reason: str
    # A dict cannot be hashed; leaving it out of the hash keeps Stop usable in sets.
    numbers: dict[str, Any] = field(hash=False)


# ----------------------------------------------------------------------------- helpers
def _maximize(goal: str) -> bool:
    if not isinstance(goal, str) or goal.lower() not in GOALS:
        raise ValueError(f"goal must be 'maximize' or 'minimize', not {goal!r}")
    return goal.lower() == "maximize"


def _check_interval(interval: int) -> None:
    if isinstance(interval, bool) or not isinstance(interval, int) or interval < 1:
        raise ValueError(f"interval must be a whole number >= 1 (the N-th logged value), not {interval!r}")


def _histories(histories: Mapping[str, Sequence[float]], trial: str, interval: int) -> dict[str, list[float]]:
    """The non-empty histories as lists of floats, after checking what the caller guarantees."""
    _check_interval(interval)
    if trial not in histories:
        raise ValueError(f"trial {trial!r} is not in the histories")
    if len(histories[trial]) < interval:
        raise ValueError(f"trial {trial!r} has logged {len(histories[trial])} value(s): "
                         f"it cannot be evaluated at interval {interval}")
    result: dict[str, list[float]] = {}
    for name, history in histories.items():
        values = [float(value) for value in history]
        for value in values:
            if not math.isfinite(value):
                raise ValueError(f"trial {name!r} logged {value!r}: a policy can only compare finite numbers")
        if values:
            result[name] = values
    return result


def _best(values: Sequence[float], maximize: bool) -> float:
    return max(values) if maximize else min(values)


def _better(a: float, b: float, maximize: bool) -> bool:
    return a > b if maximize else a < b


def _worse_beyond_rounding(value: float, threshold: float, maximize: bool) -> bool:
    if math.isclose(value, threshold, rel_tol=REL_TOLERANCE, abs_tol=ABS_TOLERANCE):
        return False
    return _better(threshold, value, maximize)


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _fmt_pair(a: float, b: float) -> tuple[str, str]:
    """Both numbers with 4 significant digits, or more when 4 would print a < b as "x < x"."""
    for digits in range(4, 18):
        left, right = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if left != right or a == b:
            return left, right
    return repr(a), repr(b)


def _slacks(slack_factor: float | None, slack_amount: float | None) -> tuple[float | None, float | None]:
    given = {name: value for name, value in (("slack_factor", slack_factor), ("slack_amount", slack_amount))
             if value is not None}
    if len(given) != 1:
        which = "neither" if not given else "both"
        raise ValueError(f"a bandit policy needs exactly one of slack_factor and slack_amount; {which} given")
    for name, value in given.items():
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"{name} must be a number > 0, not {value!r}")
    return slack_factor, slack_amount


def _check_percentage(percentage: int) -> None:
    if isinstance(percentage, bool) or not isinstance(percentage, int) or not 1 <= percentage <= 99:
        raise ValueError(f"truncation_percentage must be a whole number from 1 to 99, not {percentage!r}")


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# ----------------------------------------------------------------------------- when
def is_due(interval: int, evaluation_interval: int | None, delay_evaluation: int | None) -> bool:
    """Whether a policy applies at ``interval`` (the N-th time the trial logged the metric).

    The docs: "An evaluation_interval of 1 applies the policy every time the training script
    reports the primary metric, 2 every other time. If specified, the policy applies every
    multiple of evaluation_interval that is greater than or equal to delay_evaluation."

    Due iff ``interval % evaluation_interval == 0 and interval >= delay_evaluation``.
    An ``evaluation_interval`` of 0 or None counts as 1 (the SDK's default is 0 and the docs
    do not say what it means); a ``delay_evaluation`` of None counts as 0.

    E=1, D=5 -> 5, 6, 7, ...;  E=2, D=5 -> 6, 8, 10, ...;  E=100, D=200 -> 200, 300, ...;
    E=1, D=0 -> 1, 2, 3, ...

    Raises ValueError for an interval below 1 or a negative setting.
    """
    _check_interval(interval)
    if (evaluation_interval or 0) < 0 or (delay_evaluation or 0) < 0:
        raise ValueError(f"evaluation_interval and delay_evaluation must be >= 0, not "
                         f"{evaluation_interval!r} and {delay_evaluation!r}")
    every = evaluation_interval or 1
    delay = delay_evaluation or 0
    return interval % every == 0 and interval >= delay


# ----------------------------------------------------------------------------- policies
def bandit(histories: Mapping[str, Sequence[float]], trial: str, interval: int, *, goal: str,
           slack_factor: float | None = None, slack_amount: float | None = None,
           metric: str = "metric") -> Stop | None:
    """Cancel ``trial`` when its best so far falls more than the slack behind the best trial.

    At interval N, B is the best of best_X(N) over every trial X (``trial`` included) that has
    logged at least N values; trials with fewer values do not count. If several trials hold B,
    the first of them in ``histories`` order is named as the reference.

    ``trial`` is canceled iff best_T(N) is strictly worse than the threshold:

    ============  ======================  ======================
    goal          slack_factor s          slack_amount a
    ============  ======================  ======================
    maximize      best_T(N) < B/(1+s)     best_T(N) < B - a
    minimize      best_T(N) > B*(1+s)     best_T(N) > B + a
    ============  ======================  ======================

    The minimize row is not documented by Microsoft; it mirrors the maximize row. The docs'
    example: B = 0.8 and s = 0.2 give 0.8/1.2 = 0.6667, so a trial whose best is 0.65 is
    canceled and one whose best is 0.67 is kept. Equal to the threshold (up to a relative 1e-9
    of float rounding: 0.8 - 0.1 is 0.7000000000000001, and 0.7 is on it) is kept.

    The factor form assumes positive metric values and is applied literally anyway: with
    B <= 0 the threshold lies on the wrong side of B (maximize, B = -1, s = 0.2: -0.8333 >
    B), so even the trial holding B is canceled. Use slack_amount for metrics that can be
    zero or negative.

    Exactly one of ``slack_factor`` and ``slack_amount`` must be given, > 0 (ValueError
    otherwise). ``Stop.numbers``: best, threshold, reference (B), reference_trial, and
    slack_factor or slack_amount.
    """
    maximize = _maximize(goal)
    factor, amount = _slacks(slack_factor, slack_amount)
    data = _histories(histories, trial, interval)
    reference_trial: str | None = None
    reference = math.nan
    for name, values in data.items():
        if len(values) < interval:
            continue
        candidate = _best(values[:interval], maximize)
        # Strictly better only: among several holders of B the first in order stays named.
        if reference_trial is None or _better(candidate, reference, maximize):
            reference_trial, reference = name, candidate
    best = _best(data[trial][:interval], maximize)
    if factor is not None:
        threshold = reference / (1 + factor) if maximize else reference * (1 + factor)
        formula = f"{_fmt(reference)}/(1+{_fmt(factor)})" if maximize \
            else f"{_fmt(reference)}*(1+{_fmt(factor)})"
        slack: dict[str, Any] = {"slack_factor": factor}
    else:
        assert amount is not None
        threshold = reference - amount if maximize else reference + amount
        formula = f"{_fmt(reference)} {'-' if maximize else '+'} {_fmt(amount)}"
        slack = {"slack_amount": amount}
    if not _worse_beyond_rounding(best, threshold, maximize):
        return None
    shown_best, shown_threshold = _fmt_pair(best, threshold)
    reason = (f"bandit policy at interval {interval}: best {metric} so far {shown_best} "
              f"{'<' if maximize else '>'} {formula} = {shown_threshold}, where {_fmt(reference)} is the "
              f"best {metric} of any trial up to interval {interval} (trial {reference_trial})")
    return Stop("bandit", interval, reason, {"best": best, "threshold": threshold, "reference": reference,
                                             "reference_trial": reference_trial, **slack})


def median_stopping(histories: Mapping[str, Sequence[float]], trial: str, interval: int, *, goal: str,
                    metric: str = "metric") -> Stop | None:
    """Cancel ``trial`` when its best so far is worse than the median of the running averages.

    At interval N, every trial X with at least one value has a running average: the mean of
    its first min(N, len(history_X)) values, so a trial with fewer than N values (finished,
    canceled, or just slower) counts with the average of what it logged. M is
    ``statistics.median`` of these averages, ``trial`` included (with an even number of
    trials, the mean of the two middle averages).

    ``trial`` is canceled iff best_T(N) is strictly worse than M: maximize best_T(N) < M,
    minimize best_T(N) > M. A tie with M (up to a relative 1e-9 of float rounding) is kept.
    A trial alone is never canceled, since its best is never worse than its own average.

    ``Stop.numbers``: best, median, trials (how many averages M was taken over).
    """
    maximize = _maximize(goal)
    data = _histories(histories, trial, interval)
    averages = [statistics.mean(values[:interval]) for values in data.values()]
    median = statistics.median(averages)
    best = _best(data[trial][:interval], maximize)
    if not _worse_beyond_rounding(best, median, maximize):
        return None
    shown_best, shown_median = _fmt_pair(best, median)
    span = "interval 1" if interval == 1 else f"intervals 1-{interval}"
    reason = (f"median stopping policy at interval {interval}: best {metric} so far {shown_best} is worse "
              f"than {shown_median}, the median of the running averages over {span} of {len(averages)} trials")
    return Stop("median_stopping", interval, reason, {"best": best, "median": median, "trials": len(averages)})


def truncation_selection(histories: Mapping[str, Sequence[float]], trial: str, interval: int, *, goal: str,
                         percentage: int, finished: Collection[str] = frozenset(),
                         exclude_finished: bool = False, metric: str = "metric") -> Stop | None:
    """Cancel ``trial`` when its value at this interval is among the worst ``percentage`` %.

    The docs: with truncation_percentage 20, "a job terminates at interval 5 if its
    performance at interval 5 is in the lowest 20% of performance of all jobs at interval 5".

    At interval N:

    * The population is every trial with at least one value, minus the trials named in
      ``finished`` when ``exclude_finished`` is true (exclude_finished_jobs). ``trial`` itself
      always stays in. Which trials count as finished is the caller's decision.
    * A member's score is its value at interval N if it has one; a member with fewer values
      scores its best value so far. This is the docs' fairness rule: a trial evaluated at
      interval N is only compared with the others' performance up to interval N, even if they
      have logged more. ``trial``'s own score is its value at interval N, not its best.
    * cut = floor(percentage * len(population) / 100), in whole numbers (29% of 100 trials is
      29, where the float 0.29 * 100 would give 28).
    * ``trial`` is canceled iff cut >= 1 and the number of members scoring worse than or equal
      to it (itself included) is <= cut. Equivalently: its score is strictly worse than the
      cut-off, the (cut+1)-th worst score. A tie is never split: when tied trials straddle
      the cut, all of them are kept. Scores are logged values and are compared exactly.

    So no trial is canceled while percentage * len(population) < 100.

    ``percentage`` is a whole number from 1 to 99 (ValueError otherwise). ``Stop.numbers``:
    score, cutoff, cut, population, rank (members scoring worse than or equal to ``trial``),
    percentage.
    """
    maximize = _maximize(goal)
    _check_percentage(percentage)
    data = _histories(histories, trial, interval)
    excluded = set(finished) - {trial} if exclude_finished else set()
    scores = {name: values[interval - 1] if len(values) >= interval else _best(values, maximize)
              for name, values in data.items() if name not in excluded}
    cut = percentage * len(scores) // 100
    if cut < 1:
        return None
    score = scores[trial]
    rank = sum(1 for other in scores.values() if not _better(other, score, maximize))
    if rank > cut:
        return None
    worst_first = sorted(scores.values(), reverse=not maximize)
    cutoff = worst_first[cut]
    shown_score, shown_cutoff = _fmt_pair(score, cutoff)
    side = "lowest" if maximize else "highest"
    reason = (f"truncation selection policy at interval {interval}: {metric} {shown_score} at interval "
              f"{interval} is among the {side} {percentage}% (the worst {cut} of {len(scores)} trials; "
              f"{shown_score} {'<' if maximize else '>'} cut-off {shown_cutoff}, the {_ordinal(cut + 1)} "
              f"worst score)")
    return Stop("truncation_selection", interval, reason,
                {"score": score, "cutoff": cutoff, "cut": cut, "population": len(scores), "rank": rank,
                 "percentage": percentage})


# ----------------------------------------------------------------------------- the spec
@dataclass(frozen=True)
class EarlyTermination:
    """One sweep's ``early_termination``, normalised (see :func:`policy_from_spec`): what every
    policy has (when it applies) and the one decision each makes (:meth:`decide`), as Optuna's
    pruners share one interface. A policy of its own is a subclass with its ``type``, its
    settings as fields, :meth:`decide` and :meth:`from_spec`, listed in :data:`REGISTRY`.

    ``evaluation_interval`` and ``delay_evaluation`` are kept as given; :func:`is_due` reads an
    evaluation_interval of 0 as 1 (ValueError for a value that is not a whole number >= 0).
    """

    type: ClassVar[str] = ""
    evaluation_interval: int
    delay_evaluation: int

    def __post_init__(self) -> None:
        for name in ("evaluation_interval", "delay_evaluation"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a whole number >= 0, not {value!r}")

    def check(self, histories: Mapping[str, Sequence[float]], trial: str, interval: int, *, goal: str,
              metric: str = "metric", finished: Collection[str] = frozenset()) -> Stop | None:
        """The policy's decision for ``trial`` at ``interval``: None when the policy is not due
        there (:func:`is_due`) or keeps the trial, else the :class:`Stop`."""
        if not is_due(interval, self.evaluation_interval, self.delay_evaluation):
            return None
        return self.decide(histories, trial, interval, goal=goal, metric=metric, finished=finished)

    def decide(self, histories: Mapping[str, Sequence[float]], trial: str, interval: int, *, goal: str,
               metric: str, finished: Collection[str]) -> Stop | None:
        raise NotImplementedError

    def settings(self) -> list[str]:
        """The policy's own settings, as ``describe`` shows them."""
        return []

    def describe(self) -> str:
        """One line, e.g. ``bandit (slack_factor 0.1, evaluation_interval 1, delay_evaluation 5)``."""
        every = f"evaluation_interval {self.evaluation_interval}"
        parts = [*self.settings(), every + (" (treated as 1)" if self.evaluation_interval == 0 else ""),
                 f"delay_evaluation {self.delay_evaluation}"]
        return f"{self.type} ({', '.join(parts)})"

    def to_json(self) -> dict[str, Any]:
        """The policy as its plan keeps it (:func:`policy_from_json` reads it back)."""
        return {"type": self.type, **{f.name: getattr(self, f.name) for f in fields(self)}}

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any], evaluation_interval: int, delay_evaluation: int) -> EarlyTermination:
        """The policy a spec's ``early_termination`` of this type describes (ValueError, naming
        the key, when it cannot)."""
        return cls(evaluation_interval, delay_evaluation)


@dataclass(frozen=True)
class BanditPolicy(EarlyTermination):
    """Exactly one of the slacks, > 0 (ValueError otherwise)."""

    type: ClassVar[str] = "bandit"
    slack_factor: float | None = None
    slack_amount: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        _slacks(self.slack_factor, self.slack_amount)

    def decide(self, histories: Mapping[str, Sequence[float]], trial: str, interval: int, *, goal: str,
               metric: str, finished: Collection[str]) -> Stop | None:
        return bandit(histories, trial, interval, goal=goal, slack_factor=self.slack_factor,
                      slack_amount=self.slack_amount, metric=metric)

    def settings(self) -> list[str]:
        parts = []
        if self.slack_factor is not None:
            parts.append(f"slack_factor {self.slack_factor:g}")
        if self.slack_amount is not None:
            parts.append(f"slack_amount {self.slack_amount:g}")
        return parts

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any], evaluation_interval: int, delay_evaluation: int) -> BanditPolicy:
        factor, amount = _slack(spec, "slack_factor"), _slack(spec, "slack_amount")
        if factor is None and amount is None:
            raise ValueError("early_termination: a bandit policy needs one of slack_factor and slack_amount "
                             "(a number > 0); it sets neither (or only 0)")
        if factor is not None and amount is not None:
            raise ValueError(f"early_termination: a bandit policy takes exactly one of slack_factor and "
                             f"slack_amount; it sets both (slack_factor {factor:g}, slack_amount {amount:g})")
        return cls(evaluation_interval, delay_evaluation, slack_factor=factor, slack_amount=amount)


@dataclass(frozen=True)
class MedianStoppingPolicy(EarlyTermination):
    type: ClassVar[str] = "median_stopping"

    def decide(self, histories: Mapping[str, Sequence[float]], trial: str, interval: int, *, goal: str,
               metric: str, finished: Collection[str]) -> Stop | None:
        return median_stopping(histories, trial, interval, goal=goal, metric=metric)


@dataclass(frozen=True)
class TruncationSelectionPolicy(EarlyTermination):
    """A truncation_percentage from 1 to 99 (ValueError otherwise)."""

    type: ClassVar[str] = "truncation_selection"
    truncation_percentage: int | None = None
    exclude_finished_jobs: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_percentage(self.truncation_percentage)  # type: ignore[arg-type]

    def decide(self, histories: Mapping[str, Sequence[float]], trial: str, interval: int, *, goal: str,
               metric: str, finished: Collection[str]) -> Stop | None:
        assert self.truncation_percentage is not None
        return truncation_selection(histories, trial, interval, goal=goal, percentage=self.truncation_percentage,
                                    finished=finished, exclude_finished=self.exclude_finished_jobs, metric=metric)

    def settings(self) -> list[str]:
        return [f"truncation_percentage {self.truncation_percentage}",
                f"exclude_finished_jobs {'true' if self.exclude_finished_jobs else 'false'}"]

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any], evaluation_interval: int,
                  delay_evaluation: int) -> TruncationSelectionPolicy:
        percentage = _whole(spec, "truncation_percentage")
        if not percentage:
            raise ValueError("early_termination: a truncation_selection policy needs truncation_percentage "
                             "(a whole number from 1 to 99)")
        return cls(evaluation_interval, delay_evaluation, truncation_percentage=percentage,
                   exclude_finished_jobs=_flag(spec, "exclude_finished_jobs"))


# The policies, by their spec's ``type`` (the one list of them).
REGISTRY: dict[str, type[EarlyTermination]] = {
    policy.type: policy for policy in (BanditPolicy, MedianStoppingPolicy, TruncationSelectionPolicy)}
POLICIES = tuple(REGISTRY)


def Policy(type: str, evaluation_interval: int = 0, delay_evaluation: int = 0, **settings: Any) -> EarlyTermination:
    """The policy ``type`` with these settings (those the policy has no field for must be None)."""
    cls = REGISTRY.get(type)
    if cls is None:
        raise ValueError(f"unknown early-termination policy {type!r}; known: {', '.join(POLICIES)}")
    own = {f.name for f in fields(cls)}
    stray = sorted(key for key, value in settings.items() if key not in own and value is not None)
    if stray:
        raise TypeError(f"a {type} policy has no setting {stray[0]}")
    return cls(evaluation_interval, delay_evaluation, **{k: v for k, v in settings.items() if k in own})


def policy_from_json(data: Mapping[str, Any]) -> EarlyTermination:
    """A policy as :meth:`EarlyTermination.to_json` kept it."""
    return Policy(**dict(data))


def policy_from_spec(early_termination: Mapping[str, Any] | None) -> EarlyTermination | None:
    """The policy that a sweep's ``early_termination`` mapping describes, or None.

    * None or an empty mapping: no policy.
    * ``type`` in any case or CamelCase: compared after removing "_" and lower-casing
      (``Bandit``, ``MedianStopping``, ``truncation_selection``), as the SDK does.
    * Numbers may be ints, floats or numeric strings ("0.1", "5"); whole-number settings
      accept "5" and 5.0 but not 5.5.
    * A missing (or null) ``evaluation_interval`` or ``delay_evaluation`` is 0.
    * Bandit: a ``slack_factor`` or ``slack_amount`` of 0 or missing counts as not given,
      and exactly one must remain.
    * Truncation selection: ``truncation_percentage`` is required (0 counts as missing);
      ``exclude_finished_jobs`` defaults to false.
    * Keys the policy does not use are ignored (the linter reports them).

    Raises ValueError, naming the key, for an unknown type, a bandit with neither or both
    slacks, a truncation selection without a percentage, and values that are not numbers.
    """
    if early_termination is None:
        return None
    if not isinstance(early_termination, Mapping):
        raise ValueError(f"early_termination must be a mapping, not {type(early_termination).__name__}")
    if not early_termination:
        return None
    spec = early_termination
    kind = _policy_type(spec.get("type"))
    return REGISTRY[kind].from_spec(spec, _whole(spec, "evaluation_interval") or 0,
                                    _whole(spec, "delay_evaluation") or 0)


def _policy_type(value: Any) -> str:
    if value is None:
        raise ValueError(f"early_termination needs a type: one of {', '.join(POLICIES)}")
    squashed = value.replace("_", "").lower() if isinstance(value, str) else None
    for name in POLICIES:
        if name.replace("_", "") == squashed:
            return name
    raise ValueError(f"early_termination: unknown type {value!r}; expected one of {', '.join(POLICIES)}")


def _number(spec: Mapping[str, Any], key: str) -> float | None:
    value = spec.get(key)
    if value is None:
        return None
    # YAML's `true` is an int to Python; as a number it is certainly a mistake.
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"early_termination: {key} must be a number, not {value!r}")
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"early_termination: {key} must be a number, not {value!r}") from None
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"early_termination: {key} must be a finite number >= 0, not {value!r}")
    return number


def _whole(spec: Mapping[str, Any], key: str) -> int | None:
    number = _number(spec, key)
    if number is None:
        return None
    if not number.is_integer():
        raise ValueError(f"early_termination: {key} must be a whole number, not {spec.get(key)!r}")
    return int(number)


def _slack(spec: Mapping[str, Any], key: str) -> float | None:
    number = _number(spec, key)
    return number or None


def _flag(spec: Mapping[str, Any], key: str) -> bool:
    value = spec.get(key)
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ValueError(f"early_termination: {key} must be true or false, not {value!r}")
