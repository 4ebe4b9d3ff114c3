"""Sweep jobs (hyperparameter tuning) with the service's semantics.

    sampling.py   the search space and the samplers: random (and Sobol), grid, Bayesian
    policies.py   the early-termination policies as pure functions over metric histories
    sweep.py      planning at submission, and the supervisor's loop that runs the trials
    view.py       the live table of ``job create --stream`` and ``job plot``'s picture

Trials are command jobs: each runs through :mod:`runner.command` (prepare, execute, finalize)
in a run folder of its own, ``runs/<sweep>/trials/<sweep>_<n>/``.
"""
