"""AML3xx planted defects (sweeps): each plants into a standalone sweep job or into the first
sweep step of a pipeline job or pipeline component."""

from __future__ import annotations

from .base import get, planter

SWEEPS = ("sweepJob", "pipelineJob", "pipelineComponent")
PIPELINES = ("pipelineJob", "pipelineComponent")


def _sweep(data: dict) -> dict | None:
    """The sweep's own mapping: the document of a sweep job, or a pipeline's first sweep step."""
    if data.get("type") == "sweep" and isinstance(data.get("trial"), dict):
        return data
    for node in (get(data, "jobs") or {}).values():
        if isinstance(node, dict) and node.get("type") == "sweep":
            return node
    return None


def _space(sweep: dict) -> dict | None:
    space = sweep.get("search_space")
    return space if isinstance(space, dict) and space else None


def _first(sweep: dict) -> str | None:
    space = _space(sweep)
    return next(iter(space)) if space else None


def _replace_first(data: dict, entry: dict, algorithm: str | None = None) -> dict | None:
    """Give the first search-space entry (same name, so its uses stay valid) a new distribution."""
    sweep = _sweep(data)
    name = _first(sweep) if sweep else None
    if name is None:
        return None
    sweep["search_space"][name] = entry
    if algorithm is not None:
        sweep["sampling_algorithm"] = algorithm
        if algorithm == "bayesian":
            sweep.pop("early_termination", None)
    return data


def _limits(data: dict) -> dict | None:
    sweep = _sweep(data)
    if sweep is None:
        return None
    limits = sweep.setdefault("limits", {})
    return limits if isinstance(limits, dict) else None


def _policy(data: dict, policy: dict) -> dict | None:
    sweep = _sweep(data)
    if sweep is None:
        return None
    sweep["early_termination"] = policy
    if sweep.get("sampling_algorithm") == "bayesian" or get(sweep, "sampling_algorithm", "type") == "bayesian":
        sweep["sampling_algorithm"] = "random"
    return data


@planter("AML301", "the sampling algorithm is left out", SWEEPS)
def no_sampling_algorithm(data: dict) -> dict | None:
    sweep = _sweep(data)
    if sweep is None or "sampling_algorithm" not in sweep:
        return None
    del sweep["sampling_algorithm"]
    return data


@planter("AML302", "a grid sweep samples a continuous distribution", SWEEPS)
def grid_with_uniform(data: dict) -> dict | None:
    return _replace_first(data, {"type": "uniform", "min_value": 0.1, "max_value": 0.5}, "grid")


@planter("AML303", "a Bayesian sweep samples a normal distribution", SWEEPS)
def bayesian_with_normal(data: dict) -> dict | None:
    return _replace_first(data, {"type": "normal", "mu": 0.5, "sigma": 0.1}, "bayesian")


@planter("AML304", "a Bayesian sweep gets an early-termination policy", SWEEPS)
def bayesian_with_policy(data: dict) -> dict | None:
    sweep = _sweep(data)
    if sweep is None:
        return None
    sweep["sampling_algorithm"] = "bayesian"
    sweep["early_termination"] = {"type": "median_stopping", "evaluation_interval": 1, "delay_evaluation": 5}
    return data


@planter("AML305", "a search-space key is written with a hyphen", SWEEPS)
def hyphenated_key(data: dict) -> dict | None:
    sweep = _sweep(data)
    name = _first(sweep) if sweep else None
    if name is None:
        return None
    space = sweep["search_space"]
    sweep["search_space"] = {(f"{name}-rate" if key == name else key): value for key, value in space.items()}
    return data


@planter("AML306", "a search-space entry is never passed to the script", ("sweepJob",))
def unused_entry(data: dict) -> dict | None:
    sweep = _sweep(data)
    if sweep is None or _space(sweep) is None:
        return None
    sweep["search_space"]["label_smoothing"] = {"type": "uniform", "min_value": 0.0, "max_value": 0.2}
    return data


@planter("AML307", "a sweep step searches over a name its trial has no input for", PIPELINES)
def step_key_not_input(data: dict) -> dict | None:
    sweep = _sweep(data)
    if sweep is None or _space(sweep) is None or not isinstance(sweep.get("trial"), (str, dict)):
        return None
    if isinstance(sweep["trial"], str) and sweep["trial"].startswith("azureml:"):
        return None
    sweep["search_space"]["label_smoothing"] = {"type": "uniform", "min_value": 0.0, "max_value": 0.2}
    return data


@planter("AML308", "a choice lists a value twice", SWEEPS)
def duplicate_choice(data: dict) -> dict | None:
    sweep = _sweep(data)
    for entry in (_space(sweep) or {}).values() if sweep else ():
        if isinstance(entry, dict) and entry.get("type") == "choice" and isinstance(entry.get("values"), list) \
                and entry["values"]:
            entry["values"].append(entry["values"][0])
            return data
    return None


@planter("AML309", "a Bayesian choice mixes numbers and strings", SWEEPS)
def bayesian_mixed_choice(data: dict) -> dict | None:
    return _replace_first(data, {"type": "choice", "values": [1, "two", 3]}, "bayesian")


@planter("AML310", "uniform bounds are written the wrong way round", SWEEPS)
def reversed_bounds(data: dict) -> dict | None:
    return _replace_first(data, {"type": "uniform", "min_value": 1.0, "max_value": 0.5})


@planter("AML311", "a quniform step q is 0", SWEEPS)
def zero_q(data: dict) -> dict | None:
    return _replace_first(data, {"type": "quniform", "min_value": 0, "max_value": 10, "q": 0})


@planter("AML312", "a normal distribution has sigma 0", SWEEPS)
def zero_sigma(data: dict) -> dict | None:
    return _replace_first(data, {"type": "normal", "mu": 0.5, "sigma": 0})


@planter("AML313", "a randint has upper 0", SWEEPS)
def randint_zero(data: dict) -> dict | None:
    return _replace_first(data, {"type": "randint", "upper": 0})


@planter("AML314", "a Bayesian quniform has a fractional step", SWEEPS)
def bayesian_fractional_quniform(data: dict) -> dict | None:
    return _replace_first(data, {"type": "quniform", "min_value": 0, "max_value": 1, "q": 0.25}, "bayesian")


@planter("AML315", "loguniform bounds are raw learning rates instead of exponents", SWEEPS)
def raw_loguniform(data: dict) -> dict | None:
    return _replace_first(data, {"type": "loguniform", "min_value": 0.0001, "max_value": 0.1})


@planter("AML316", "max_total_trials is above the service's 1000", SWEEPS)
def too_many_trials(data: dict) -> dict | None:
    limits = _limits(data)
    if limits is None:
        return None
    limits["max_total_trials"] = 5000
    return data


@planter("AML317", "more concurrent trials than trials", SWEEPS)
def concurrency_above_total(data: dict) -> dict | None:
    limits = _limits(data)
    total = limits.get("max_total_trials") if limits is not None else None
    if not isinstance(total, int) or not 1 <= total < 1000:
        return None
    limits["max_concurrent_trials"] = total + 1
    return data


@planter("AML318", "the sweep timeout is 0", SWEEPS)
def zero_timeout(data: dict) -> dict | None:
    limits = _limits(data)
    if limits is None:
        return None
    limits["timeout"] = 0
    limits.pop("trial_timeout", None)
    return data


@planter("AML319", "the trial timeout is written in minutes", SWEEPS)
def short_trial_timeout(data: dict) -> dict | None:
    limits = _limits(data)
    if limits is None:
        return None
    limits["trial_timeout"] = 30
    return data


@planter("AML320", "the trial timeout is longer than the sweep timeout", SWEEPS)
def trial_timeout_above_timeout(data: dict) -> dict | None:
    limits = _limits(data)
    if limits is None:
        return None
    limits["timeout"] = 600
    limits["trial_timeout"] = 1200
    return data


def _grid(data: dict, values: list, trials: int | None) -> dict | None:
    sweep = _sweep(data)
    if sweep is None or _space(sweep) is None or not isinstance(sweep.get("limits"), dict):
        return None
    space = sweep["search_space"]
    for name in space:
        space[name] = {"type": "choice", "values": list(values)}
    sweep["sampling_algorithm"] = "grid"
    size = len(values) ** len(space)
    sweep["limits"]["max_total_trials"] = trials if trials is not None else size + 1
    sweep["limits"].pop("max_concurrent_trials", None)
    return data if (trials is None and size < 1000) or (trials is not None and trials < size) else None


@planter("AML321", "a grid sweep asks for more trials than grid points", SWEEPS)
def grid_too_small(data: dict) -> dict | None:
    return _grid(data, [1, 2], None)


@planter("AML322", "a grid sweep stops before covering its grid", SWEEPS)
def grid_not_covered(data: dict) -> dict | None:
    return _grid(data, [1, 2, 3], 2)


@planter("AML323", "a Bayesian sweep gets a tiny trial budget", SWEEPS)
def bayesian_few_trials(data: dict) -> dict | None:
    planted = _replace_first(data, {"type": "uniform", "min_value": 0.0, "max_value": 1.0}, "bayesian")
    if planted is None:
        return None
    sweep = _sweep(planted)
    for name, entry in sweep["search_space"].items():
        if not (isinstance(entry, dict) and entry.get("type") in ("choice", "uniform", "quniform")):
            sweep["search_space"][name] = {"type": "uniform", "min_value": 0.0, "max_value": 1.0}
    sweep["limits"] = {**(sweep.get("limits") or {}), "max_total_trials": 5}
    sweep["limits"].pop("max_concurrent_trials", None)
    return planted


@planter("AML324", "a bandit policy without any slack", SWEEPS)
def bandit_without_slack(data: dict) -> dict | None:
    return _policy(data, {"type": "bandit", "evaluation_interval": 1, "delay_evaluation": 5})


@planter("AML325", "a bandit policy with both slacks", SWEEPS)
def bandit_both_slacks(data: dict) -> dict | None:
    return _policy(data, {"type": "bandit", "slack_factor": 0.1, "slack_amount": 0.05,
                          "evaluation_interval": 1, "delay_evaluation": 5})


@planter("AML326", "a bandit policy with slack_factor 0", SWEEPS)
def bandit_zero_slack(data: dict) -> dict | None:
    return _policy(data, {"type": "bandit", "slack_factor": 0, "evaluation_interval": 1})


@planter("AML327", "a truncation percentage above 99", SWEEPS)
def truncation_150(data: dict) -> dict | None:
    return _policy(data, {"type": "truncation_selection", "truncation_percentage": 150,
                          "evaluation_interval": 1, "delay_evaluation": 5})


@planter("AML328", "an evaluation interval of 0", SWEEPS)
def interval_zero(data: dict) -> dict | None:
    sweep = _sweep(data)
    policy = sweep.get("early_termination") if sweep else None
    if isinstance(policy, dict):
        policy["evaluation_interval"] = 0
        return data
    return _policy(data, {"type": "median_stopping", "evaluation_interval": 0, "delay_evaluation": 5})


@planter("AML329", "a negative delay_evaluation", SWEEPS)
def negative_delay(data: dict) -> dict | None:
    sweep = _sweep(data)
    policy = sweep.get("early_termination") if sweep else None
    if isinstance(policy, dict):
        policy["delay_evaluation"] = -3
        return data
    return _policy(data, {"type": "median_stopping", "evaluation_interval": 1, "delay_evaluation": -3})
