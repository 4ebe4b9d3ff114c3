"""How a job's ``environment`` runs here.

The service builds a container from an environment's image and conda file. Locally an
environment is an interpreter: the host's (the one running aml-run) unless the registered
environment names a Python executable or a virtual environment (``aml-run environment create
--python PATH``). The command runs with that interpreter's folder first on ``PATH``, so the
``python`` in ``python train.py`` is that interpreter.

At Preparing, the conda file's pip requirements (and a ``python=X.Y`` pin) are checked against
what that interpreter has installed; whatever is missing or at the wrong version is named in
one warning. The job still runs, as it may not need everything: the warning is what a learner
reads when it then fails with ModuleNotFoundError. Conda-only packages are not checked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import RunnerError


@dataclass(frozen=True)
class Interpreter:
    python: str
    label: str  # what to call it in messages: "sklearn-train:2" or "the host interpreter"
    requirements: tuple[str, ...] = ()
    python_pin: str | None = None
    env: dict[str, str] = field(default_factory=dict)

    def path_entry(self) -> str:
        return str(Path(self.python).parent)


def host(label: str = "the host interpreter", requirements: tuple[str, ...] = (),
         python_pin: str | None = None) -> Interpreter:
    return Interpreter(sys.executable, label, requirements, python_pin)


def python_from(value: str, base: Path) -> tuple[str, dict[str, str]]:
    """An executable, or a virtual environment folder (its ``bin/python``)."""
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = base / path
    if path.is_dir():
        candidate = path / "bin" / "python"
        if not candidate.exists():
            raise RunnerError(f"{path} is a folder but not a virtual environment (no bin/python)")
        return str(candidate), {"VIRTUAL_ENV": str(path)}
    if not path.exists():
        raise RunnerError(f"the environment's Python {path} does not exist")
    return str(path), {}


def conda_requirements(conda: dict[str, Any]) -> tuple[tuple[str, ...], str | None]:
    """(pip requirements, python version pin) from a conda environment mapping."""
    pip: list[str] = []
    pin = None
    for dependency in conda.get("dependencies") or []:
        if isinstance(dependency, dict):
            pip.extend(str(r) for r in dependency.get("pip") or [] if not str(r).startswith("-"))
        elif isinstance(dependency, str) and dependency.replace(" ", "").startswith("python="):
            # "python=3.11" and "python==3.11" alike
            pin = dependency.replace(" ", "").split("=", 1)[1].strip("=")
    return tuple(pip), pin


_CHECK = r"""
import json, sys
from importlib import metadata
found = {}
for name in json.loads(sys.argv[1]):
    try:
        found[name] = metadata.version(name)
    except metadata.PackageNotFoundError:
        found[name] = None
print(json.dumps({"python": "%d.%d.%d" % sys.version_info[:3], "found": found}))
"""


def missing_requirements(interpreter: Interpreter) -> list[str]:
    """What the interpreter lacks of its environment's requirements, as readable phrases."""
    from packaging.requirements import InvalidRequirement, Requirement

    wanted = []
    problems = []
    for text in interpreter.requirements:
        try:
            wanted.append(Requirement(text))
        except InvalidRequirement:
            problems.append(f"{text!r} (not a pip requirement)")
    names = [r.name for r in wanted]
    if interpreter.python == sys.executable:
        found, python_version = _installed_here(names), "%d.%d.%d" % sys.version_info[:3]
    else:
        try:
            result = subprocess.run([interpreter.python, "-c", _CHECK, json.dumps(names)],
                                    capture_output=True, text=True, timeout=60)
            report = json.loads(result.stdout)
            found, python_version = report["found"], report["python"]
        except (OSError, ValueError, subprocess.TimeoutExpired):
            return [f"cannot ask {interpreter.python} what it has installed"]
    for requirement in wanted:
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        version = found.get(requirement.name)
        if version is None:
            problems.append(f"{requirement} (not installed)")
        elif requirement.specifier and not requirement.specifier.contains(version, prereleases=True):
            problems.append(f"{requirement} (found {version})")
    pin = interpreter.python_pin
    if pin and not (python_version == pin or python_version.startswith(pin.rstrip(".*") + ".")):
        problems.append(f"python={pin} (found {python_version})")
    return problems


def _installed_here(names: list[str]) -> dict[str, str | None]:
    from importlib import metadata

    found: dict[str, str | None] = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def path_with(interpreter: Interpreter, base_path: str | None) -> str:
    entries = [interpreter.path_entry()] + [p for p in (base_path or os.defpath).split(os.pathsep) if p]
    return os.pathsep.join(dict.fromkeys(entries))
