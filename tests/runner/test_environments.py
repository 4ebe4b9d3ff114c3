"""Job environments as `aml-run` builds them: a virtual environment per environment content,
made with the real uv over the interpreter aml-run runs in, cached machine-wide, and a venv of
the job's own over it. Packages are tiny wheels written by hand here (pure Python, installed
from a local path: no network, no build step), so each build takes about a second."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

from amlrun import aml_run, lab, submit, write_job  # noqa: F401
from conftest import BIN
from runner import jobs
from runner.workspace import Workspace


def make_wheel(folder: Path, name: str, version: str = "1.0", requires: tuple[str, ...] = (),
               body: str = "VALUE = 42\n") -> Path:
    """A pure-Python wheel, written by hand: it installs offline, with no build step."""
    folder.mkdir(parents=True, exist_ok=True)
    module = name.replace("-", "_")
    info = f"{module}-{version}.dist-info"
    files = {
        f"{module}/__init__.py": body,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                            + "".join(f"Requires-Dist: {r}\n" for r in requires),
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: amllab-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join(record + [f"{info}/RECORD,,"]) + "\n"
    wheel = folder / f"{module}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


def conda_file(folder: Path, *pip: str, conda: tuple[str, ...] = ()) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["dependencies:", "  - python=3.11", *(f"  - {c}" for c in conda), "  - pip:",
             *(f"      - {p}" for p in pip)]
    path = folder / "conda.yml"
    path.write_text("\n".join(lines) + "\n")
    return path


def system_log(workspace: Workspace, name: str) -> str:
    return (workspace.run_dir(name) / "system_logs" / "amllab.log").read_text()


def freeze() -> str:
    return subprocess.run([sys.executable, "-m", "pip", "freeze"], capture_output=True, text=True,
                          check=True).stdout


def built_venv(log: str) -> Path:
    """The shared build a job ran over, from its 'environment: ... over <venv>' line."""
    match = re.search(r"environment: .*, over (\S+)\)", log)
    assert match, log
    return Path(match.group(1))


def run(folder: Path, spec: Path) -> tuple[dict, str, str]:
    """Submit, wait: (the job's record, its system log, its std_log.txt)."""
    name = submit(folder, spec)
    workspace = Workspace.locate(folder / ".amllab")
    record = jobs.wait(workspace, name, timeout=180)
    user = workspace.run_dir(name) / "user_logs" / "std_log.txt"
    return record, system_log(workspace, name), user.read_text() if user.exists() else ""


# -- a job's pip install stays in the job --------------------------------------------------------

def test_pip_install_in_a_job_lands_in_its_environment_and_never_in_aml_runs_interpreter(lab: Path) -> None:
    wheel = make_wheel(lab / "wheels-a", "amllab-probe-a")
    before = freeze()
    assert "amllab-probe-a" not in before
    spec = write_job(lab / "pip-in-job", "job", f"""\
        command: >-
          python -c "import sys; assert sys.prefix != {sys.prefix!r}, 'runs in aml-run own interpreter'"
          && pip install --no-index --quiet {wheel}
          && python -c "import amllab_probe_a, sys; print('probe', amllab_probe_a.VALUE, sys.prefix)"
        environment:
          image: python:3.11-slim
        """)
    record, log, user = run(lab, spec)
    assert record["status"] == "Completed", log + user
    probe = [line.split() for line in user.splitlines() if line.startswith("probe ")]
    assert probe and probe[0][1] == "42", user
    assert Path(probe[0][2]).name == "env" and Path(probe[0][2]).parent.name == record["name"]
    assert freeze() == before


# -- one build per content ---------------------------------------------------------------------

def test_the_same_environment_content_twice_is_one_cached_build(lab: Path) -> None:
    wheel = make_wheel(lab / "wheels-b", "amllab-probe-b")
    folder = lab / "twice"
    conda_file(folder, str(wheel))
    body = """\
        command: python -c "import amllab_probe_b; print('probe', amllab_probe_b.VALUE)"
        environment:
          image: python:3.11-slim
          conda_file: conda.yml
        """
    first, first_log, first_user = run(lab, write_job(folder, "one", body))
    second, second_log, second_user = run(lab, write_job(folder, "two", body))
    assert first["status"] == second["status"] == "Completed", first_log + second_log
    assert "probe 42" in first_user and "probe 42" in second_user
    venv = built_venv(first_log)
    assert f"built {venv} in " in first_log and f"installed {wheel} (the base has the rest)" in first_log
    assert f"reused {venv}" in second_log and "building" not in second_log
    assert built_venv(second_log) == venv
    # The build holds only what the base lacks; mlflow, numpy... come from the base.
    manifest = json.loads((venv / "amllab-env.json").read_text())
    assert manifest["installed"] == [str(wheel)]


def test_the_bases_console_scripts_run_in_a_built_environment_with_the_jobs_interpreter(lab: Path,
                                                                                        tmp_path: Path) -> None:
    # An image's programs (mldesigner, mlflow) are on a job's PATH; a venv layered over the base
    # sees the base's packages, and now its scripts too. aml-lint is one of the base's.
    folder = lab / "base-scripts"
    conda_file(folder, str(make_wheel(lab / "wheels-scripts", "amllab-probe-scripts")), conda=("pip",))
    spec = write_job(folder, "job", """\
        command: aml-lint --version && python -c "import pkg_resources, amllab_probe_scripts; print('probe ok')"
        environment:
          image: python:3.11-slim
          conda_file: conda.yml
        """)
    record, log, user = run(lab, spec)
    assert record["status"] == "Completed", log + user
    assert "probe ok" in user and "aml-lint" in user
    script = built_venv(log) / "bin" / "aml-lint"
    assert script.is_file()
    # The script runs the interpreter of the job's own venv (VIRTUAL_ENV), where a pip install in
    # the job lands; without one, its build's.
    fake = tmp_path / "job-venv"
    (fake / "bin").mkdir(parents=True)
    (fake / "bin" / "python").write_text('#!/bin/sh\necho "job interpreter: $1"\n')
    (fake / "bin" / "python").chmod(0o755)
    ran = subprocess.run([str(script)], env={"PATH": "/usr/bin:/bin", "VIRTUAL_ENV": str(fake)},
                         capture_output=True, text=True, timeout=60)
    assert ran.stdout.strip() == f"job interpreter: {script}", ran.stdout + ran.stderr
    alone = subprocess.run([str(script), "--version"], env={"PATH": "/usr/bin:/bin"}, capture_output=True,
                           text=True, timeout=60)
    assert alone.returncode == 0 and "aml-lint" in alone.stdout, alone.stdout + alone.stderr


def test_two_concurrent_trials_build_their_environment_once_and_both_run_in_it(lab: Path) -> None:
    wheel = make_wheel(lab / "wheels-c", "amllab-probe-c")
    folder = lab / "sweep-env"
    conda_file(folder, str(wheel))
    spec = folder / "sweep.yml"
    spec.write_text("""\
$schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json
type: sweep
trial:
  command: >-
    python -c "import mlflow, amllab_probe_c; mlflow.log_metric('score', ${{search_space.i}});
    print('probe', amllab_probe_c.VALUE)"
  environment:
    image: python:3.11-slim
    conda_file: conda.yml
sampling_algorithm: grid
search_space:
  i: {type: choice, values: [1, 2]}
objective: {goal: maximize, primary_metric: score}
limits: {max_total_trials: 2, max_concurrent_trials: 2}
""")
    name = submit(lab, spec)
    workspace = Workspace.locate(lab / ".amllab")
    assert jobs.wait(workspace, name, timeout=180)["status"] == "Completed"
    trials = [row["name"] for row in jobs.list_jobs(workspace, parent=name)]
    assert len(trials) == 2
    logs = [system_log(workspace, trial) for trial in trials]
    users = [(workspace.run_dir(t) / "user_logs" / "std_log.txt").read_text() for t in trials]
    assert all("probe 42" in user for user in users), users
    assert sum(log.count(": building ") for log in logs) == 1, logs
    assert sum(log.count(" reused ") for log in logs) == 1, logs
    assert built_venv(logs[0]) == built_venv(logs[1])
    # Each trial has an environment of its own over the shared build.
    assert {workspace.run_dir(t) / "env" for t in trials} == {Path(p) for p in
                                                              (re.search(r"\((\S+)/bin/python, over", log).group(1)
                                                               for log in logs)}


# -- curated environments ----------------------------------------------------------------------

def test_a_curated_environment_runs_unregistered_and_the_linter_agrees(lab: Path) -> None:
    folder = lab / "curated"
    spec = write_job(folder, "job", """\
        command: python -c "import sklearn, pandas; print('curated ok', pandas.__version__, sklearn.__version__)"
        environment: azureml:AzureML-sklearn-1.5@latest
        """)
    linted = subprocess.run([str(BIN / "aml-lint"), "--workspace", str(lab / ".amllab"), str(spec)],
                            capture_output=True, text=True)
    assert linted.returncode == 0 and "AML805" not in linted.stdout + linted.stderr, linted.stdout
    record, log, user = run(lab, spec)
    assert record["status"] == "Completed", log + user
    # The pins of Microsoft's published definition (pandas~=1.5.3, scikit-learn~=1.5.0), not the base's.
    assert "curated ok 1.5.3 1.5." in user
    assert ("AzureML-sklearn-1.5 is a curated environment (https://learn.microsoft.com/azure/machine-learning/"
            "resource-curated-environments); here it is the base interpreter with scikit-learn~=1.5.0, "
            "pandas~=1.5.3") in log
    assert "environment: AzureML-sklearn-1.5 (curated) (" in log


def test_a_locally_registered_curated_name_wins_over_the_default(lab: Path) -> None:
    wheel = make_wheel(lab / "wheels-d", "amllab-probe-d")
    folder = lab / "curated-own"
    conda = conda_file(folder, str(wheel))
    created = aml_run("environment", "create", "--name", "AzureML-lightgbm-3.3", "--version", "7",
                      "--conda-file", str(conda), cwd=lab)
    assert created.returncode == 0, created.stderr
    spec = write_job(folder, "job", """\
        command: python -c "import amllab_probe_d; print('own', amllab_probe_d.VALUE)"
        environment: azureml:AzureML-lightgbm-3.3@latest
        """)
    record, log, user = run(lab, spec)
    assert record["status"] == "Completed", log + user
    assert "own 42" in user and "environment: AzureML-lightgbm-3.3:7 (" in log


# -- torch -------------------------------------------------------------------------------------

def test_a_torch_pin_keeps_the_base_cpu_torch_and_pulls_nothing_cuda(lab: Path) -> None:
    # A package that depends on an old torch: resolving it must not pull torch (or CUDA) either.
    wheel = make_wheel(lab / "wheels-e", "amllab-probe-e", requires=("torch==2.3.0", "torchvision==0.18.0"))
    folder = lab / "torch-pin"
    conda_file(folder, "torch==2.3.0", "torchvision==0.18.0", "nvidia-cudnn-cu12", str(wheel),
               conda=("pytorch=2.3", "cudatoolkit=11.8", "mkl"))
    spec = write_job(folder, "job", """\
        command: python -c "import torch, amllab_probe_e; print('torch', torch.__version__)"
        environment:
          image: mcr.microsoft.com/azureml/openmpi4.1.0-cuda11.8-cudnn8-ubuntu22.04
          conda_file: conda.yml
        """)
    record, log, user = run(lab, spec)
    assert record["status"] == "Completed", log + user
    assert f"torch {metadata.version('torch')}" in user
    assert "asks for torch==2.3.*, torch==2.3.0, torchvision==0.18.0, nvidia-cudnn-cu12: not installed" in log
    assert "conda packages with no pip equivalent (and pip options) are not used here: cudatoolkit=11.8, mkl" in log
    venv = built_venv(log)
    installed = {p.name.lower() for p in venv.glob("lib/python*/site-packages/*")}
    assert not [p for p in installed if p.startswith(("torch", "nvidia", "triton"))], installed
    assert any(p.startswith("amllab_probe_e") for p in installed)


# -- registering -------------------------------------------------------------------------------

def test_environment_create_refuses_a_conda_file_given_as_the_environment_spec(tmp_path: Path) -> None:
    conda = conda_file(tmp_path, "humanize")
    result = aml_run("environment", "create", "--file", str(conda), "--name", "oops", "--version", "1",
                     cwd=tmp_path)
    assert result.returncode == 2, result.stdout
    assert f"{conda} is a conda file, not an environment spec" in result.stderr
    assert f"--conda-file {conda}" in result.stderr and "Traceback" not in result.stderr


def test_conda_packages_are_mapped_to_pip_or_named_as_conda_only() -> None:
    from runner.environments import conda_dependencies

    found = conda_dependencies({"dependencies": [
        "python=3.10", "pip", "numpy=1.26", "scikit-learn==1.5.1", "pandas >=2", "conda-forge::scipy",
        "matplotlib=3.8=py310_0", "cudatoolkit=11.8", "mkl",
        {"pip": ["mlflow", "azureml-mlflow", "./local-pkg", "--extra-index-url https://example.org/simple"]}]},
        Path("/envs/train"))
    assert found.python_pin == "3.10"
    # conda's pip brings a setuptools that has pkg_resources.
    assert found.pip == ("numpy==1.26.*", "scikit-learn==1.5.1", "pandas>=2", "scipy", "matplotlib==3.8.*",
                         "setuptools<81", "mlflow", "azureml-mlflow", "/envs/train/local-pkg")
    assert found.conda_only == ("cudatoolkit=11.8", "mkl",
                                "pip option '--extra-index-url https://example.org/simple'")


def test_a_conda_files_pip_brings_setuptools_unless_the_file_names_its_own() -> None:
    from runner.environments import conda_dependencies

    assert conda_dependencies({"dependencies": ["python=3.8", "pip=21.2.2", {"pip": ["mldesigner"]}]}).pip \
        == ("setuptools<81", "mldesigner")
    assert conda_dependencies({"dependencies": ["conda-forge::pip", {"pip": ["setuptools>=82"]}]}).pip \
        == ("setuptools>=82",)
    assert conda_dependencies({"dependencies": ["python=3.11", "setuptools=70"]}).pip == ("setuptools==70.*",)
    assert conda_dependencies({"dependencies": ["pipx", {"pip": ["numpy"]}]}).pip == ("numpy",)


def test_a_script_importing_what_an_environment_without_conda_file_lacks_is_warned_at_preparing(lab: Path) -> None:
    spec = write_job(lab / "imports", "job", """\
        code: src
        command: python main.py
        """, script="""\
        import json, os.path
        import helpers
        try:
            import amllab_surely_absent_module
        except ImportError:
            amllab_surely_absent_module = None
        import mlflow
        print("ran", helpers.X)
        """)
    (lab / "imports" / "src" / "helpers.py").write_text("X = 1\n")
    record, log, user = run(lab, spec)
    assert record["status"] == "Completed", log + user
    warnings = [line for line in log.splitlines() if "has no conda file" in line]
    assert len(warnings) == 1, log
    # Named: the absent module; not the standard library, the code folder's own module or mlflow.
    assert warnings[0].endswith("what this interpreter lacks: amllab_surely_absent_module; add a conda file "
                                "with them (environment: conda_file:) or the job may fail with "
                                "ModuleNotFoundError")


def test_cancel_during_a_build_stops_uv_and_leaves_nothing_half_made(lab: Path) -> None:
    import socket
    import time

    from amlrun import group_gone, wait_for
    from runner.envbuild import envs_dir

    silent = socket.socket()  # accepts connections (the backlog) and never answers: uv waits
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/amllab_stuck-1.0-py3-none-any.whl"
        folder = lab / "stuck-build"
        conda_file(folder, f"amllab-stuck @ {url}")
        spec = write_job(folder, "job", """\
            command: echo ran
            environment:
              image: python:3.11-slim
              conda_file: conda.yml
            """)
        workspace = Workspace.locate(lab / ".amllab")
        name = submit(lab, spec)
        wait_for(workspace, name, "Preparing")
        log = workspace.run_dir(name) / "system_logs" / "amllab.log"
        deadline = time.monotonic() + 60
        while "virtual environment over the base" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        key = re.search(r"building (\w+) ", log.read_text()).group(1)
        uv: list[int] = []
        while not uv and time.monotonic() < deadline:
            uv = [pid for pid in _pids() if f"{envs_dir()}/.staging-{key}" in _cmdline(pid)]
            time.sleep(0.05)
        assert uv, "uv is not running: " + log.read_text()
        final = jobs.cancel(workspace, name)
        assert final["status"] == "Canceled"
        for pid in uv:
            assert group_gone(pid)  # uv led its own group
        assert not [p for p in envs_dir().iterdir() if p.name.startswith((key, f".staging-{key}"))
                    and p.suffix != ".lock"]
    finally:
        silent.close()


def _pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def test_curated_families_name_pypi_packages_and_never_a_cuda_build() -> None:
    from runner.environments import curated_requirements

    # The names of Microsoft's examples: workspace curated names and registry names alike.
    assert curated_requirements("AzureML-sklearn-1.5")[:2] == ("scikit-learn~=1.5.0", "pandas~=1.5.3")
    assert curated_requirements("sklearn-1.5") == curated_requirements("AzureML-sklearn-1.5")
    assert curated_requirements("AzureML-lightgbm-3.3")[:2] == ("lightgbm>=4.6.0", "scikit-learn~=1.5.1")
    assert curated_requirements("AzureML-sklearn-1.0-ubuntu20.04-py38-cpu") == ("scikit-learn", "pandas", "joblib")
    assert curated_requirements("tensorflow-2.16-cuda12")[0] == "tensorflow-cpu==2.16.2"
    # Its own release (Keras 2: Microsoft's tuning notebook calls Keras 2's `_set_inputs`), never the newest.
    assert curated_requirements("AzureML-tensorflow-2.12-cuda11")[0] == "tensorflow-cpu~=2.12.0"
    assert curated_requirements("AzureML-tensorflow-2.4-ubuntu18.04-py37-cuda11-gpu") == ("tensorflow-cpu",)
    assert curated_requirements("AzureML-acpt-pytorch-2.8-cuda12.6") == ()
    assert curated_requirements("AzureML-minimal-ubuntu22.04-py311-cpu") == ()


def test_uv_writes_plain_text_even_when_the_caller_forces_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Jupyter kernel forces colour; uv's messages end up in a failed job's error, as text."""
    import subprocess

    from runner.envbuild import uv_bin, uv_environment

    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("CLICOLOR_FORCE", "1")
    env = uv_environment()
    assert env.get("NO_COLOR") == "1" and "FORCE_COLOR" not in env and "CLICOLOR_FORCE" not in env
    said = subprocess.run([uv_bin(), "pip", "install", "--dry-run", "--offline", "--python", sys.executable,
                           "no-such-package-amllab==0"], env=env, capture_output=True, text=True, timeout=120)
    assert said.returncode != 0 and said.stderr and "\x1b[" not in said.stderr, said.stderr


def test_a_build_that_shadows_what_the_base_needs_names_who_needs_it() -> None:
    # jsonschema (amllab's own dependency) needs attrs>=22.2.0: a build pinning attrs 21 under it
    # leaves the job a jsonschema that may not import.
    from importlib import metadata

    from runner.envbuild import shadowed_base_needs

    said = shadowed_base_needs(["attrs==21.1.0", "some-new-package==1.0"])
    assert said.startswith("the build shadows the base's copy of what the base's own packages need: "
                           "attrs 21.1.0, not what ") and "jsonschema (attrs>=22.2.0)" in said, said
    assert "some-new-package" not in said
    assert shadowed_base_needs([f"attrs=={metadata.version('attrs')}"]) == ""
