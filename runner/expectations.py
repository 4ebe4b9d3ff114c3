"""What a lab's `expect:` block asks of a job, in the words a lab reports. The checks every job
shares live here; each executor adds its own type's (a sweep's trials and best trial, a
pipeline's reused and run steps) in :meth:`runner.contract.Executor.expectations`."""

from __future__ import annotations

from typing import Any, Mapping


def bounds(what: str, value: float, limits: Mapping[str, float] | None) -> list[str]:
    """``value`` against ``{min, max}`` (either may be absent)."""
    limits = limits or {}
    if "min" in limits and value < limits["min"]:
        return [f"{what} is {value}, expected at least {limits['min']}"]
    if "max" in limits and value > limits["max"]:
        return [f"{what} is {value}, expected at most {limits['max']}"]
    return []


def metrics(wanted: Any, logged: Mapping[str, float]) -> list[str]:
    """``wanted``: metric names that must be logged, or a mapping of name to ``{min, max}``."""
    problems = []
    limits = wanted if isinstance(wanted, Mapping) else {name: None for name in wanted or []}
    for metric, bounds_of_metric in limits.items():
        if metric not in logged:
            problems.append(f"metric {metric!r} was not logged (logged: {sorted(logged)})")
        else:
            problems += bounds(f"metric {metric}", logged[metric], bounds_of_metric)
    return problems


def metrics_text(logged: Mapping[str, float]) -> str:
    return ", ".join(f"{key} {value:.4g}" for key, value in sorted(logged.items()))
