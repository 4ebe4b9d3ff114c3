"""What a job's ``environment`` asks for, and the interpreter it runs with.

The service builds a container from an environment's image and conda file. Here an environment
becomes a virtual environment built over the interpreter aml-run runs in (runner/envbuild.py):
this module reads what it asks for (a conda file's pip list and ``python=`` pin, the conda
packages PyPI has under a known name, what a curated environment means here). A registered
environment may instead name an interpreter (``aml-run environment create --python PATH``),
which runs its jobs as it is: then the conda file's pip requirements are only checked against
it, and whatever is missing or at the wrong version is named in one warning.
"""

from __future__ import annotations

import json
import os
import re
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


# Conda packages that PyPI has under the same or a known name: installed with pip. Anything
# else in a conda file's `dependencies` (cudatoolkit, mkl, cudnn, libgcc...) has no pip
# equivalent and is named in one warning. `pip` itself is in every environment already.
CONDA_TO_PIP: dict[str, str | None] = {
    "pip": None, "setuptools": "setuptools", "wheel": "wheel",
    "numpy": "numpy", "pandas": "pandas", "scikit-learn": "scikit-learn", "scipy": "scipy",
    "matplotlib": "matplotlib", "matplotlib-base": "matplotlib", "seaborn": "seaborn",
    "pyyaml": "pyyaml", "requests": "requests", "joblib": "joblib", "tqdm": "tqdm",
    "pillow": "pillow", "pyarrow": "pyarrow", "statsmodels": "statsmodels", "nltk": "nltk",
    "xgboost": "xgboost", "py-xgboost": "xgboost", "lightgbm": "lightgbm", "h5py": "h5py",
    "py-opencv": "opencv-python", "opencv": "opencv-python", "protobuf": "protobuf",
    "psutil": "psutil", "cloudpickle": "cloudpickle", "click": "click", "jinja2": "jinja2",
    "mlflow": "mlflow", "ipykernel": "ipykernel", "pytest": "pytest",
    "tensorflow": "tensorflow", "keras": "keras",
    "pytorch": "torch", "torchvision": "torchvision", "torchaudio": "torchaudio",
}


# What a conda file's `pip` brings along (see conda_dependencies); amllab's own [run] extra has it,
# so that it costs an environment no build.
PIP_SETUPTOOLS = "setuptools<81"


@dataclass(frozen=True)
class CondaDependencies:
    pip: tuple[str, ...]           # the pip list and the conda packages mapped to pip names
    python_pin: str | None
    conda_only: tuple[str, ...]    # conda packages with no pip equivalent, as written


def _conda_to_pip(spec: str) -> str | None | bool:
    """A conda match spec as a pip requirement; None for one not needed (pip), False for a
    conda-only package. ``numpy=1.21`` means 1.21.* in conda, ``numpy==1.21.2`` exactly."""
    text = spec.split("::", 1)[-1].strip()          # a channel prefix: conda-forge::numpy
    match = re.match(r"([A-Za-z0-9_.\-]+)\s*(.*)$", text)
    if not match:
        return False
    name, rest = match.group(1).lower(), match.group(2).strip()
    if name not in CONDA_TO_PIP:
        return False
    pip_name = CONDA_TO_PIP[name]
    if pip_name is None:
        return None
    if not rest:
        return pip_name
    if rest.startswith(("<", ">", "!", "~")):
        return pip_name + rest.split(" ")[0]
    if rest.startswith("=="):
        return pip_name + "==" + rest[2:].split("=")[0].strip()
    fuzzy = rest.lstrip("= ").split("=")[0].split(" ")[0]  # "=1.21", " 1.21", "=1.21=py38_0"
    return f"{pip_name}=={fuzzy}" if fuzzy.endswith("*") else f"{pip_name}=={fuzzy}.*"


def conda_dependencies(conda: dict[str, Any], folder: Path | None = None) -> CondaDependencies:
    """What a conda environment mapping asks for. A relative path in its pip list (``./pkg``)
    is relative to ``folder``, the conda file's, as when conda runs pip for that file. pip
    options (``-r``, ``--extra-index-url``...) are not used here: they are named in
    ``conda_only`` with the conda-only packages, for the one warning."""
    pip: list[str] = []
    mapped: list[str] = []
    conda_only: list[str] = []
    pin = None
    lists_pip = False
    for dependency in conda.get("dependencies") or []:
        if isinstance(dependency, dict):
            for requirement in dependency.get("pip") or []:
                text = str(requirement).strip()
                if text.startswith("-"):
                    conda_only.append(f"pip option '{text}'")
                elif folder is not None and text.startswith(("./", "../")):
                    pip.append(str((folder / text).resolve()))
                else:
                    pip.append(text)
        elif isinstance(dependency, str):
            compact = dependency.replace(" ", "")
            if re.match(r"(\w+::)?pip([<>=!~ ]|$)", compact):
                lists_pip = True
            if compact.startswith("python=") or compact == "python" or compact.startswith("python>") \
                    or compact.startswith("python<"):
                if compact.startswith("python="):
                    pin = compact.split("=", 1)[1].strip("=")  # "python=3.11" and "python==3.11" alike
                continue
            converted = _conda_to_pip(dependency)
            if converted is False:
                conda_only.append(dependency)
            elif converted:
                mapped.append(str(converted))
    if lists_pip and not any(re.match(r"setuptools\b", text, re.IGNORECASE) for text in mapped + pip):
        # conda's pip package depends on setuptools, and the one conda installs has pkg_resources
        # (gone from setuptools 81): code that imports it runs there.
        mapped.append(PIP_SETUPTOOLS)
    return CondaDependencies(tuple(mapped + pip), pin, tuple(conda_only))


def conda_requirements(conda: dict[str, Any]) -> tuple[tuple[str, ...], str | None]:
    """(pip requirements, python version pin) from a conda environment mapping."""
    found = conda_dependencies(conda)
    return found.pip, found.python_pin


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


CURATED_DOCS = "https://learn.microsoft.com/azure/machine-learning/resource-curated-environments"
# What a curated environment family means here, by a word of its name: the packages its
# image is built around that matter to a script (mlflow, numpy and torch are in the base).
# Any other curated name runs on the base alone. A locally registered environment of the same
# name (`aml-run environment create --name AzureML-sklearn-1.5 --conda-file ...`) wins.
CURATED_FAMILIES: dict[str, tuple[str, ...]] = {
    # Microsoft publishes each curated environment's conda file in Azure/azureml-assets
    # (assets/training/general/environments/<name>/context/conda_dependencies.yaml); the three
    # Microsoft's examples name keep its pins for what a script touches. Their numpy~=1.22.0 or
    # 1.23.5 has no build for the Python here (3.11; the images have 3.10), so numpy<2.
    "sklearn-1.5": ("scikit-learn~=1.5.0", "pandas~=1.5.3", "numpy<2", "scipy~=1.10.0", "joblib~=1.2.0"),
    "lightgbm-3.3": ("lightgbm>=4.6.0", "scikit-learn~=1.5.1", "pandas~=1.5.3", "numpy<2", "scipy~=1.10.0"),
    # Its file asks for tensorflow[and-cuda]==2.16.2: the same release's CPU-only build here.
    # numpy<2 needs the file's pandas and scipy too: the base's are built for numpy 2.
    "tensorflow-2.16": ("tensorflow-cpu==2.16.2", "tensorboard~=2.16.0", "numpy<2", "pandas~=2.2.2",
                        "scipy~=1.14.0"),
    # Its file asks for tensorflow~=2.12.0 on Python 3.8 (numpy~=1.22.0, pandas~=1.3.0,
    # scipy~=1.7.0): the same TensorFlow, CPU-only, with the nearest pandas and scipy that have a
    # build for this Python and agree with its numpy<1.24. Keras 2 comes with it, not Keras 3.
    # The file's azureml-mlflow too: TensorFlow 2.12 wants typing-extensions<4.6, which the base's
    # mlflow (through pydantic 2) cannot import with; the file's own MLflow client resolves with it.
    "tensorflow-2.12": ("tensorflow-cpu~=2.12.0", "tensorboard~=2.12.0", "numpy<1.24", "pandas~=1.5.3",
                        "scipy~=1.10.0", "azureml-mlflow"),
    "sklearn": ("scikit-learn", "pandas", "joblib"),
    "lightgbm": ("lightgbm", "scikit-learn", "pandas"),
    # PyPI's CPU-only build, as torch is the base's CPU build: a `-cuda12` image's GPU libraries
    # have no use on a machine without a GPU.
    "tensorflow": ("tensorflow-cpu",),
    "pytorch": (), "acpt": (), "minimal": (),
}


def curated_requirements(name: str) -> tuple[str, ...]:
    lowered = name.lower()
    for word, packages in CURATED_FAMILIES.items():
        if word in lowered:
            return packages
    return ()


def missing_imports(command: str | None, wd: Path) -> list[str]:
    """Top-level modules the job's entry scripts import that neither this interpreter, the
    standard library nor the code folder has: what an environment without a conda file lacks.
    Imports inside ``try`` blocks count too, so this only warns."""
    import importlib.util

    from validator.pycode import entry_points, script_facts

    missing: list[str] = []
    for entry in entry_points(command or ""):
        if entry.kind == "script":
            if "$" in entry.name or Path(entry.name).is_absolute():
                continue
            candidates = [wd / entry.name]
        else:
            relative = Path(*entry.name.split("."))
            candidates = [wd / relative.with_suffix(".py"), wd / relative / "__main__.py"]
        script = next((c for c in candidates if c.is_file()), None)
        facts = script_facts(script) if script is not None else None
        if facts is None:
            continue
        for module, level, _ in facts.imports:
            top = module.split(".")[0]
            if level or not top or top in missing or top in sys.stdlib_module_names:
                continue
            if any((folder / top).is_dir() or (folder / f"{top}.py").is_file() for folder in (wd, script.parent)):
                continue
            try:
                if importlib.util.find_spec(top) is not None:
                    continue
            except (ImportError, ValueError):
                pass
            missing.append(top)
    return missing
