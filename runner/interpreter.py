"""The interpreter a job runs with, and the variables that select it: the job's own virtual
environment over its environment's shared build (runner/envbuild.py), or a registered
``--python`` as it is. The supervisor prepares it for a job on this machine
(runner/command.py); a cluster's node prepares it for a job it runs (runner/cluster_node.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable, Mapping

from . import environments
from .envbuild import PIP_KEYS
from .errors import RunnerError

# What a job's processes take from the environment of this machine. On the service a job sees
# its image's environment, what the service sets and the spec's `environment_variables`, never
# the shell or notebook it was submitted from (a Jupyter kernel's MPLBACKEND, a PYTHONPATH, a
# token). So a job here gets the variables of the job (runner/command.py) and, of this machine's
# environment, only what a process needs to run here at all, and PATH with the job's interpreter
# first (interpreter_variables).
MACHINE_VARIABLES = (
    # Who and where: getpass, `~`, the caches under the home folder, programs that start a shell.
    "HOME", "USER", "LOGNAME", "SHELL",
    # The locale (Python's text encoding follows it) and the time zone of local times.
    "LANG", "LANGUAGE", "TZ",
    # Where temporary files go, and where the user's configuration and caches live.
    "TMPDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME",
    # The loader's search path, which this machine's interpreter (and the job's over it) may need.
    "LD_LIBRARY_PATH",
    # The network: proxies, and the certificates this machine trusts (a TLS-inspecting proxy's).
    "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
    # Where packages come from: the index settings the environment was built with
    # (runner/envbuild.py), so that a `pip install` in the command finds the same packages.
    *("PIP_" + key.upper().replace("-", "_") for key in PIP_KEYS), "PIP_CONFIG_FILE",
    "UV_INDEX", "UV_DEFAULT_INDEX", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS", "UV_INSECURE_HOST",
    "UV_NATIVE_TLS", "UV_SYSTEM_CERTS",
    # Which of this machine's GPUs aml-run may use: the compute's hardware, not a choice of the job.
    "CUDA_VISIBLE_DEVICES",
)
# The locale's categories, and Open MPI's (and its PMIx's) settings for this machine (`mpirun`
# sets the ranks' own OMPI_* and PMIX_* itself).
MACHINE_PREFIXES = ("LC_", "OMPI_MCA_", "PMIX_MCA_")
# What the MLflow client needs to reach the workspace's tracking server when MLFLOW_TRACKING_URI
# names one: the job logs there, as on the service it logs to its workspace's tracking server
# with what the service gives it. The client reads them from its environment:
# https://mlflow.org/docs/latest/api_reference/python_api/mlflow.environment_variables.html
TRACKING_SERVER_VARIABLES = ("MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD", "MLFLOW_TRACKING_TOKEN",
                             "MLFLOW_TRACKING_AUTH", "MLFLOW_TRACKING_AWS_SIGV4", "MLFLOW_TRACKING_INSECURE_TLS",
                             "MLFLOW_TRACKING_SERVER_CERT_PATH", "MLFLOW_TRACKING_CLIENT_CERT_PATH")


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


def host_variables(tracking_server: bool = False, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """What a job's processes get of this machine's environment (``environ``, by default this
    process's): :data:`MACHINE_VARIABLES` and :data:`MACHINE_PREFIXES`, and with
    ``tracking_server`` (the job logs to the workspace's MLflow tracking server) the
    credentials that reach it. Nothing else of the caller's environment reaches a job: a
    variable the job needs is set in the spec's ``environment_variables``."""
    environ = os.environ if environ is None else environ
    wanted = set(MACHINE_VARIABLES) | (set(TRACKING_SERVER_VARIABLES) if tracking_server else set())
    return {key: value for key, value in environ.items() if key in wanted or key.startswith(MACHINE_PREFIXES)}


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
