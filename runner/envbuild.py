"""A job environment's interpreter: a virtual environment per environment content, built once
per machine with uv and layered over the interpreter aml-run runs in.

The service builds a container per environment (its image and conda file) and runs the job
in it: a ``pip install`` in a job's command changes that container, never anything else. Here
each environment becomes a virtual environment under ``cache_dir()/envs/<key>``:

- **Layered.** The venv is made from the base Python, and a ``.pth`` file adds the site
  folders of the interpreter aml-run runs in (``site.addsitedir``, after the venv's own), so
  mlflow, numpy and torch are importable without being installed again. What the environment
  asks for is resolved by ``uv pip compile`` with the base's installed versions as
  preferences; only what the base lacks, or has at another version, is installed into the
  venv (``uv pip install --no-deps``), and it shadows the base's copy.
- **The torch family stays the base's.** PyPI's Linux torch wheels pull several GB of CUDA
  libraries. ``torch``, ``torchvision``, ``torchaudio``, ``triton`` and ``nvidia-*`` are never
  installed into an environment (``uv --excludes``, so nothing else pulls them either): the
  base's CPU build is used, and one warning names the pins that were asked for.
- **One build per content.** The key hashes the requirements left to install (those the
  base already meets are dropped first, so they make no build of their own), the base
  interpreter and its installed packages' folder, and the package index settings. A build runs
  under an exclusive ``fcntl`` lock on ``envs/<key>.lock`` (two trials or jobs asking for the
  same environment wait for one build, then reuse it), in ``envs/.staging-<key>``, and is
  renamed into place when complete: a failed or killed build leaves no ``envs/<key>``.
- **The same index as pip.** uv reads no ``pip.conf``; the index URL, extra index URLs,
  find-links, constraint files and ``no-index`` that ``pip config list`` reports (pip.conf
  files and ``PIP_*`` variables) are passed to uv, with ``--index-strategy unsafe-best-match``
  so that, as with pip, every index competes for the best version. Well-known compiled
  packages (``BINARY_ONLY``) are installed from wheels only.
"""

from __future__ import annotations

import ast
import fcntl
import hashlib
import json
import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Callable

from .cache import cache_dir
from .errors import RunnerError

FORMAT = 2  # bump when a build's layout changes: old builds are then not reused
TORCH_FAMILY = frozenset({"torch", "torchvision", "torchaudio", "triton", "pytorch-triton"})

# Never compiled from source: an old pin of these (meant for another Python) would otherwise
# compile for many minutes and then most likely fail. Without a wheel, the build fails at once.
BINARY_ONLY = ("numpy", "scipy", "pandas", "scikit-learn", "matplotlib", "pyarrow", "h5py", "lightgbm",
               "xgboost", "tensorflow", "opencv-python", "statsmodels", "pillow", "grpcio")

LogFn = Callable[[str], None]


def is_torch_family(name: str) -> bool:
    name = canonical(name)
    return name in TORCH_FAMILY or name.startswith("nvidia-")


def canonical(name: str) -> str:
    from packaging.utils import canonicalize_name

    return canonicalize_name(name)


@dataclass(frozen=True)
class Built:
    venv: Path
    key: str
    reused: bool
    seconds: float
    installed: tuple[str, ...]

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")


def envs_dir() -> Path:
    return cache_dir() / "envs"


# -- what pip would use ------------------------------------------------------------------------

PIP_KEYS = ("index-url", "extra-index-url", "find-links", "constraint", "no-index", "cert")


@cache
def pip_settings() -> dict[str, str]:
    """The index settings pip uses here: ``pip config list`` merges the pip.conf files (global,
    user, site) and the ``PIP_*`` variables (shown as ``:env:``). The ``:env:`` value wins over
    ``install``, which wins over ``global``, as in pip's option parser."""
    try:
        result = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True,
                                text=True, timeout=60, env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    except (OSError, subprocess.TimeoutExpired):
        return {}
    rank = {"global": 0, "install": 1, ":env:": 2}
    found: dict[str, tuple[int, str]] = {}
    for line in result.stdout.splitlines():
        head, _, raw = line.partition("=")
        section, _, key = head.rpartition(".")
        if key not in PIP_KEYS or section not in rank:
            continue
        try:
            value = str(ast.literal_eval(raw))
        except (ValueError, SyntaxError):
            value = raw.strip("'\"")
        if key not in found or rank[section] >= found[key][0]:
            found[key] = (rank[section], value)
    return {key: value for key, (_, value) in found.items()}


def uv_index_options(settings: dict[str, str] | None = None) -> list[str]:
    settings = pip_settings() if settings is None else settings
    options = ["--index-strategy", "unsafe-best-match"]
    for name in BINARY_ONLY:
        options += ["--only-binary", name]
    if settings.get("no-index", "").lower() in ("1", "true", "yes", "on"):
        options.append("--no-index")
    if settings.get("index-url"):
        options += ["--index-url", settings["index-url"]]
    for url in settings.get("extra-index-url", "").split():
        options += ["--extra-index-url", url]
    for place in settings.get("find-links", "").split():
        options += ["--find-links", place]
    for constraint in settings.get("constraint", "").split():
        if Path(constraint).is_file():
            options += ["--constraints", constraint]
    return options


def uv_environment(settings: dict[str, str] | None = None) -> dict[str, str]:
    settings = pip_settings() if settings is None else settings
    env = {k: v for k, v in os.environ.items() if not k.startswith("UV_") and k != "VIRTUAL_ENV"}
    if settings.get("cert") and "SSL_CERT_FILE" not in env:
        env["SSL_CERT_FILE"] = settings["cert"]
    env["UV_NO_PROGRESS"] = "1"
    env["UV_PYTHON_DOWNLOADS"] = "never"  # the base interpreter, never one fetched from the network
    # uv's output ends up in logs and in a job's error message: plain text, also when the caller
    # forces colour (a Jupyter kernel sets FORCE_COLOR and CLICOLOR_FORCE; its escapes reached a
    # failed job's message). uv follows the NO_COLOR convention, https://no-color.org/.
    for forcing in ("FORCE_COLOR", "CLICOLOR_FORCE"):
        env.pop(forcing, None)
    env["NO_COLOR"] = "1"
    return env


def uv_bin() -> str:
    try:
        import uv
    except ImportError:
        raise RunnerError("building a job's environment needs uv, which is part of amllab's [run] extra: "
                          "pip install 'amllab[run]' (or pip install uv)") from None
    return uv.find_uv_bin()


# -- the base ----------------------------------------------------------------------------------

def base_site_folders() -> list[str]:
    folders = [p for p in site.getsitepackages() if Path(p).is_dir()]
    user = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    if user and Path(user).is_dir():
        folders.append(user)
    return folders


def base_versions() -> dict[str, str]:
    """The base's installed distributions: canonical name -> version."""
    from importlib import metadata

    found: dict[str, str] = {}
    for dist in metadata.distributions(path=base_site_folders()):
        name = dist.metadata["Name"]
        if name and canonical(name) not in found:
            found[canonical(name)] = dist.version
    return found


def split_torch(requirements: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(what to install, the torch-family requirements kept from the base)."""
    from packaging.requirements import InvalidRequirement, Requirement

    install, kept = [], []
    for text in requirements:
        try:
            name = Requirement(text).name
        except InvalidRequirement:
            install.append(text)  # a path or an option: uv says what is wrong with it
            continue
        (kept if is_torch_family(name) else install).append(text)
    return install, kept


def satisfied_by_base(text: str, base: dict[str, str]) -> bool:
    """Whether the base already has ``text`` (a name and version specifier, no extras, no URL):
    then there is nothing to resolve for it, and its dependencies are the base's too."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.version import InvalidVersion

    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return False
    if requirement.url or requirement.extras:
        return False
    if requirement.marker is not None and not requirement.marker.evaluate():
        return True  # not for this platform: nothing to install
    version = base.get(canonical(requirement.name))
    try:
        return version is not None and requirement.specifier.contains(version, prereleases=True)
    except InvalidVersion:
        return False


def content_key(install: list[str]) -> str:
    base = base_site_folders()
    fingerprint = {
        "format": FORMAT,
        "python": os.path.realpath(sys.executable),
        "version": sys.version,
        "base": base,
        # Installing into or removing from the base changes these folders' modification times.
        "base_stamp": [os.stat(p).st_mtime_ns for p in base],
        "requirements": sorted(install),
        # Only a build that installs something reads the index (and pays for asking pip).
        "index": uv_index_options() if install else [],
    }
    return hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()[:16]


# -- building ----------------------------------------------------------------------------------

_PIP_SCRIPT = """#!/bin/sh
'''exec' "$(dirname -- "$(realpath -- "$0")")/python" "$0" "$@"
' '''
import sys
from pip._internal.cli.main import main
sys.exit(main())
"""


def ensure(requirements: tuple[str, ...], label: str, log: LogFn) -> Built:
    """The venv for ``requirements``: reused when built before, else built now under the
    key's lock. A failure raises RunnerError naming ``label`` and uv's reason."""
    install, _ = split_torch(requirements)
    base = base_versions() if install else {}
    if install:
        had = [text for text in install if satisfied_by_base(text, base)]
        if had:
            log(f"environment {label}: the base already has {', '.join(had)}")
        install = [text for text in install if text not in had]
    # The same content, the same build: an environment whose requirements the base meets is
    # the plain layered venv.
    key = content_key(install)
    root = envs_dir()
    root.mkdir(parents=True, exist_ok=True)
    final = root / key
    started = time.monotonic()
    with open(root / f"{key}.lock", "a+") as lock:
        if not _complete(final):
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                log(f"environment {label}: waiting for another job building the same environment ({key})")
                fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if _complete(final):
                manifest = json.loads((final / "amllab-env.json").read_text())
                return Built(final, key, True, time.monotonic() - started, tuple(manifest.get("installed", ())))
            log(f"environment {label}: building {key} over {sys.executable}"
                + (f" with {len(install)} requirement(s): {', '.join(install)}" if install else ""))
            installed = _build(final, key, install, base, label, log)
            return Built(final, key, False, time.monotonic() - started, installed)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def site_packages(venv: Path) -> Path:
    return Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))


def _layer(venv: Path, below: list[str]) -> None:
    """Make ``venv`` see the site folders ``below`` after its own, and give it a ``pip``."""
    lines = [f"import site; site.addsitedir({folder!r})" for folder in below]
    (site_packages(venv) / "_amllab_base.pth").write_text("\n".join(lines) + "\n")
    version = "%d.%d" % sys.version_info[:2]
    for name in ("pip", "pip3", f"pip{version}"):
        script = venv / "bin" / name
        script.write_text(_PIP_SCRIPT)
        script.chmod(0o755)


# The base's console scripts, run by the job's interpreter: the job's own venv when one is
# active (VIRTUAL_ENV, a job's layer over this build), else this build's.
_BASE_SCRIPT = """#!/bin/sh
'''exec' "${{VIRTUAL_ENV:-$(dirname -- "$(dirname -- "$(realpath -- "$0")")")}}/bin/python" "$0" "$@"
' '''
import sys
from {module} import {head}
sys.exit({call}())
"""


def _base_scripts(venv: Path, below: list[str]) -> None:
    """Give ``venv`` the console scripts of the distributions in ``below`` that it lacks: an
    image's programs (``mldesigner``, ``mlflow``) are on a job's PATH there, and a venv layered
    over a base sees the base's packages but not its scripts."""
    from importlib import metadata

    for dist in metadata.distributions(path=below):
        for entry in dist.entry_points:
            script = venv / "bin" / entry.name
            if entry.group != "console_scripts" or "/" in entry.name or script.exists() or not entry.attr:
                continue
            script.write_text(_BASE_SCRIPT.format(module=entry.module, head=entry.attr.split(".")[0],
                                                  call=entry.attr))
            script.chmod(0o755)


def job_layer(built: Built, folder: Path) -> Path:
    """The job's own, writable venv over the shared build: what a ``pip install`` in the
    command changes, as the service's container is the job's own. The shared build is never
    written after it is made, so concurrent trials cannot race in it."""
    import venv

    venv.EnvBuilder(symlinks=True, with_pip=False, clear=True).create(folder)
    # addsitedir on the build's folder also reads its .pth, which adds the base below it.
    _layer(folder, [str(site_packages(built.venv))])
    return folder


def _complete(folder: Path) -> bool:
    return (folder / "amllab-env.json").is_file()


def _build(final: Path, key: str, install: list[str], base: dict[str, str], label: str,
           log: LogFn) -> tuple[str, ...]:
    staging = final.parent / f".staging-{key}"
    shutil.rmtree(staging, ignore_errors=True)  # a build killed before: we hold the lock now
    if final.exists():
        shutil.rmtree(final)  # incomplete (no manifest): never reused
    try:
        step = time.monotonic()
        _run(label, "creating the virtual environment", staging,
             [uv_bin(), "venv", "--quiet", "--relocatable", "--no-project", "--python", sys.executable,
              str(staging)])
        below = base_site_folders()
        _layer(staging, below)
        _base_scripts(staging, below)
        log(f"environment {label}: virtual environment over the base ({time.monotonic() - step:.1f} s)")
        installed: list[str] = []
        if install:
            step = time.monotonic()
            installed = _install(staging, install, base, label)
            log(f"environment {label}: installed {', '.join(installed) if installed else 'nothing'} "
                f"(the base has the rest) ({time.monotonic() - step:.1f} s)")
            shadowing = shadowed_base_needs(installed)
            if shadowing:
                log(f"warning: environment {label}: {shadowing}")
        manifest = {"key": key, "requirements": install, "installed": installed, "base": sys.executable,
                    "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        (staging / "amllab-env.json").write_text(json.dumps(manifest, indent=2) + "\n")
        os.rename(staging, final)
        return tuple(installed)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _install(venv: Path, install: list[str], base: dict[str, str], label: str) -> list[str]:
    """Resolve with the base's versions (``base``) preferred, then install what differs from them."""
    python = str(venv / "bin" / "python")
    work = venv / ".amllab-build"
    work.mkdir()
    (work / "requirements.in").write_text("\n".join(install) + "\n")
    # uv prefers the pins already in the output file: the base's versions, where they fit.
    (work / "resolved.txt").write_text("".join(f"{name}=={version}\n" for name, version in sorted(base.items())
                                               if not is_torch_family(name)))
    (work / "excludes.txt").write_text("".join(f"{name}\n" for name in sorted(TORCH_FAMILY)))
    index = uv_index_options()
    _run(label, "resolving", venv,
         [uv_bin(), "pip", "compile", "--quiet", "--no-header", "--no-annotate", "--python", python,
          "--excludes", str(work / "excludes.txt"), *index, str(work / "requirements.in"),
          "--output-file", str(work / "resolved.txt")], install)
    wanted = []
    names = []
    for line in (work / "resolved.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        name, _, version = line.partition("==")
        if version and base.get(canonical(name)) == version.strip():
            continue
        if is_torch_family(name.split("@")[0].strip()):
            continue
        wanted.append(line)
        names.append(line.replace(" ", ""))
    if wanted:
        (work / "install.txt").write_text("\n".join(wanted) + "\n")
        _run(label, "installing", venv,
             [uv_bin(), "pip", "install", "--quiet", "--no-deps", "--python", python, *index,
              "-r", str(work / "install.txt")], install)
    shutil.rmtree(work, ignore_errors=True)
    return names


def shadowed_base_needs(installed: list[str] | tuple[str, ...]) -> str:
    """What a build breaks in the base it shadows, as one sentence ("" for nothing): for each
    package ``installed`` at another version than the base's (``name==version``), the base's
    packages whose requirements that version does not meet. The job still sees those packages,
    with the build's version of what they need, so importing them may fail there (TensorFlow
    2.12's typing-extensions<4.6 under the base's pydantic-core, which mlflow imports)."""
    from importlib import metadata

    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.version import InvalidVersion, Version

    shadowed: dict[str, tuple[str, Version]] = {}
    for line in installed:
        name, _, version = line.partition("==")
        try:
            shadowed[canonical(name)] = (name.strip(), Version(version.strip()))
        except InvalidVersion:
            continue
    needs: dict[str, set[str]] = {}
    for dist in metadata.distributions(path=base_site_folders()):
        owner = dist.metadata["Name"] or ""
        if not owner or canonical(owner) in shadowed:
            continue
        for text in dist.requires or ():
            try:
                requirement = Requirement(text)
            except InvalidRequirement:
                continue
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                continue  # an extra's requirement, or another platform's
            found = shadowed.get(canonical(requirement.name))
            if found and not requirement.specifier.contains(found[1], prereleases=True):
                needs.setdefault(found[0], set()).add(f"{owner} ({requirement.name}{requirement.specifier})")
    if not needs:
        return ""
    parts = []
    for name, owners in sorted(needs.items()):
        shown = sorted(owners)[:3]
        parts.append(f"{name} {shadowed[canonical(name)][1]}, not what "
                     + ", ".join(shown) + (f" and {len(owners) - 3} more" if len(owners) > 3 else "") + " ask")
    return ("the build shadows the base's copy of what the base's own packages need: " + "; ".join(parts)
            + ". Importing those in the job may fail: pin versions they accept, or the packages that need them")


def _run(label: str, what: str, venv: Path, argv: list[str], requirements: list[str] | None = None) -> None:
    """One uv step, in its own process group (stopped with it if the job is canceled)."""
    from . import process

    log = venv.parent / f"{venv.name}.uv.log"
    log.unlink(missing_ok=True)
    try:
        child = process.spawn(argv, cwd=venv.parent, env=uv_environment(), log=log)
        try:
            code = child.wait()
        except BaseException:
            process.stop_group(child.pid, grace=1.0, reap=child)
            raise
        output = log.read_text(errors="replace").strip() if log.exists() else ""
    finally:
        log.unlink(missing_ok=True)
    if code != 0:
        reason = _reason(output)
        asked = f" (requirements: {', '.join(requirements)})" if requirements else ""
        raise RunnerError(f"environment {label}: {what} failed{asked}: {reason}")


def _reason(output: str) -> str:
    """uv's own explanation, on one line: it names the package that could not be had."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith(("Using Python", "Resolved", "Prepared"))]
    text = " ".join(useful[-8:]) if useful else "uv gave no reason"
    text = re.sub(r"\s+", " ", text.replace("╰─▶", "").replace("×", ""))
    return text[:1200]
