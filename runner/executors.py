"""The job types aml-run runs, one executor each (runner.contract.Executor).

Importing this module imports every executor's module, and each registers itself; jobs.py,
supervisor.py and cli.py then find a job's executor by its plan's type
(:func:`runner.contract.executor_for`). Adding a job type is a module that defines and
registers its executor, and one line here (docs/architecture.md walks through it).
"""

from __future__ import annotations

from . import command, pipeline  # noqa: F401 (each registers its executor)
from .sweep import sweep  # noqa: F401

# Looked up from here, the registry is never empty: importing this module registered them all.
from .contract import executor_for, executor_for_spec, executor_of, executors  # noqa: E402

__all__ = ["executor_for", "executor_for_spec", "executor_of", "executors"]
