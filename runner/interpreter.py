"""The interpreter a job runs with, and the variables that select it: the job's own virtual
environment over its environment's shared build (runner/envbuild.py), or a registered
``--python`` as it is. The supervisor prepares it for a job on this machine
(runner/command.py); a cluster's node prepares it for a job it runs (runner/cluster_node.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable

from . import environments
from .errors import RunnerError

# Variables of the host that would point the script's MLflow somewhere other than its run.
HOST_VARIABLES_DROPPED = ("MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_ID", "MLFLOW_EXPERIMENT_NAME",
                          "MLFLOW_TRACKING_URI", "AZUREML_RUN_ID", "VIRTUAL_ENV")


def prepare_environment(environment: dict[str, Any], log: Callable[[str], None], run_dir: Path
                        ) -> tuple[environments.Interpreter, dict[str, str]]:
    """The job's interpreter and the variables that select it: a venv of the job's own
    (``run_dir/env``) over the environment's shared build, built or reused (``build``), or a
    registered ``--python`` as it is."""
    requirements = tuple(environment.get("requirements") or ())
    pin = environment.get("python_version")
    label = environment["label"]
    if environment.get("note"):
        log(f"environment: {environment['note']}")
    if environment.get("conda_only"):
        log(f"warning: environment {label}: conda packages with no pip equivalent (and pip options) are not "
            "used here: "
            f"{', '.join(environment['conda_only'])}")
    if not environment.get("build"):
        interpreter = environments.Interpreter(environment["python"], label, requirements, pin)
        missing = environments.missing_requirements(interpreter) if requirements or pin else []
        if missing:
            log(f"warning: environment {label} asks for what {interpreter.python} lacks: "
                f"{'; '.join(missing)}. The job runs anyway; install them there if it fails.")
        log(f"environment: {label} ({interpreter.python})")
        return interpreter, dict(environment.get("env") or {})
    from . import envbuild

    _, kept = envbuild.split_torch(requirements)
    if kept:
        log(f"warning: environment {label} asks for {', '.join(kept)}: not installed (PyPI's builds pull "
            f"gigabytes of CUDA libraries); the job uses the base's {_torch_here()} instead")
    try:
        built = envbuild.ensure(requirements, label, log)
    except RunnerError as error:
        hint = ""
        if pin and not _same_python(pin):
            hint = (f" The conda file pins python={pin} and environments here are built on Python "
                    f"{sys.version.split()[0]}: pins meant for another Python may have no build for this one.")
        raise RunnerError(f"{error}{hint}") from None
    if built.reused:
        log(f"environment {label}: reused {built.venv}")
    else:
        log(f"environment {label}: built {built.venv} in {built.seconds:.1f} s")
    if pin and not _same_python(pin):
        log(f"warning: environment {label} pins python={pin}; it runs on Python {sys.version.split()[0]} here")
    layer = envbuild.job_layer(built, run_dir / "env")
    python = str(layer / "bin" / "python")
    interpreter = environments.Interpreter(python, label)
    log(f"environment: {label} ({python}, over {built.venv})")
    # The build's bin (console scripts of what it installed) comes right after the job's own.
    return interpreter, {"VIRTUAL_ENV": str(layer), "AMLLAB_ENV_BIN": str(built.venv / "bin")}


def planned_interpreter(environment: dict[str, Any], run_dir: Path
                        ) -> tuple[environments.Interpreter, dict[str, str]]:
    """The interpreter :func:`prepare_environment` will give the job in ``run_dir`` (its venv at
    ``env/``, or a registered ``--python``), without building anything: for a job whose node
    builds it."""
    if not environment.get("build"):
        return (environments.Interpreter(environment["python"], environment["label"]),
                dict(environment.get("env") or {}))
    layer = run_dir / "env"
    return environments.Interpreter(str(layer / "bin" / "python"), environment["label"]), {"VIRTUAL_ENV": str(layer)}


def _same_python(pin: str) -> bool:
    here = "%d.%d.%d" % sys.version_info[:3]
    return here == pin or here.startswith(pin.rstrip(".*") + ".")


def _torch_here() -> str:
    from importlib import metadata

    try:
        return f"torch {metadata.version('torch')}"
    except metadata.PackageNotFoundError:
        return "interpreter, which has no torch"


def host_variables() -> dict[str, str]:
    """This machine's environment, less what would point the job's MLflow elsewhere."""
    return {key: value for key, value in os.environ.items() if key not in HOST_VARIABLES_DROPPED}


def interpreter_variables(interpreter: environments.Interpreter, extra: dict[str, str],
                          base_path: str | None) -> dict[str, str]:
    """The variables that select the job's interpreter: ``extra`` (its VIRTUAL_ENV) and a PATH
    with the interpreter's folder first, then its shared build's console scripts."""
    variables = dict(extra)
    build_bin = variables.pop("AMLLAB_ENV_BIN", None)
    if build_bin:
        base_path = os.pathsep.join([build_bin, base_path or os.defpath])
    variables["PATH"] = environments.path_with(interpreter, base_path)
    return variables
