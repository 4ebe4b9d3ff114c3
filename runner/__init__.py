"""amllab's local runner: Azure ML v2 job specs, run on this machine with the service's
semantics (``aml-run``).

The public API is exactly what ``__all__`` lists. Importing this package is cheap: MLflow is
loaded only by the tracking agent (runner/tracking.py), torch only by the jobs that use it.

    >>> from runner import Workspace, submit, wait          # doctest: +SKIP
    >>> workspace = Workspace.locate("lab/.amllab")
    >>> name = submit("scenarios/command-job/job.yml", workspace)
    >>> wait(workspace, name)["status"]
    'Completed'
"""

from __future__ import annotations

_EXPORTS = {
    "Workspace": "workspace", "RunnerError": "errors", "NotFound": "errors", "InputError": "errors",
    "submit": "jobs", "show": "jobs", "list_jobs": "jobs", "cancel": "jobs", "stream": "jobs",
    "wait": "jobs", "download": "jobs", "lab_commands": "scenarios",
}


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'runner' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = ["InputError", "NotFound", "RunnerError", "Workspace", "cancel", "download", "lab_commands",
           "list_jobs", "show", "stream", "submit", "wait"]
