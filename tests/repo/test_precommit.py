"""The pre-commit hook, installed by the real `pre-commit` tool from a clone of this repository
(no extras: only PyYAML and jsonschema), gives the right verdicts in a throwaway repository."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import BIN, ROOT
from amllint import BAD, GOOD

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is needed for pre-commit")


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def hook_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone of the working tree as it is now (committed or not), as a user would point at it."""
    source = tmp_path_factory.mktemp("hook-source")
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split()
    for name in listed:
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_symlink():
            os.symlink(os.readlink(ROOT / name), target)
        elif (ROOT / name).is_file():
            shutil.copy2(ROOT / name, target)
    git("init", "-q", cwd=source)
    git("add", "-A", cwd=source)
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "hook", cwd=source)
    return source


def try_repo(source: Path, repo: Path, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return subprocess.run([str(BIN / "pre-commit"), "try-repo", str(source), "aml-lint", "--all-files"],
                          cwd=repo, capture_output=True, text=True, env=env, timeout=600)


def make_repo(path: Path, files: dict[str, str]) -> Path:
    path.mkdir()
    git("init", "-q", cwd=path)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git("add", "-A", cwd=path)
    return path


def test_hook_fails_on_a_bad_spec_and_passes_on_good_ones(hook_source: Path, tmp_path: Path) -> None:
    home = tmp_path / "pre-commit-home"
    bad_repo = make_repo(tmp_path / "bad", {"jobs/good.yml": GOOD, "jobs/bad.yml": BAD,
                                           "ci.yml": "on: push\njobs: {}\n"})
    result = try_repo(hook_source, bad_repo, home)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "jobs/bad.yml:5:1: AML101 error: unknown key 'comptue'" in output
    assert "jobs/good.yml" not in output.replace("Found", "")

    good_repo = make_repo(tmp_path / "good", {"jobs/good.yml": GOOD, "ci.yml": "on: push\njobs: {}\n"})
    result = try_repo(hook_source, good_repo, home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed" in result.stdout


def _notebook(*cells: str) -> str:
    import json

    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": cell} for cell in cells], "metadata": {}, "nbformat": 4,
                       "nbformat_minor": 5})


def test_hook_reads_notebooks_and_python_files_without_running_them(hook_source: Path, tmp_path: Path) -> None:
    header = "from azure.ai.ml import MLClient, command\nml_client = MLClient.from_config()\n"
    job = ('job = command(command="python train.py", environment="sklearn:1", {compute}="cpu-cluster")\n'
           "ml_client.jobs.create_or_update(job)\n")
    repo = make_repo(tmp_path / "notebooks", {
        "train.ipynb": _notebook("%pip install azure-ai-ml\n" + header, job.format(compute="comptue")),
        "submit.py": header + "open('ran', 'w')\n" + job.format(compute="compute"),
        "src/train.py": "print('training')\n",
    })
    result = try_repo(hook_source, repo, tmp_path / "pre-commit-home")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "train.ipynb:cell 2:1:" in output and "AML901" in output and "'comptue'" in output
    assert "submit.py" not in output.replace("Found", "") and not (repo / "ran").exists()



def test_configured_hook_installs_without_torch_mlflow_or_textual(hook_source: Path, tmp_path: Path) -> None:
    """A team's .pre-commit-config.yaml pointing at the repository: the hook's environment is the
    no-extras install (PyYAML and jsonschema only; neither the runner's nor the sdk extra's)."""
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=hook_source, capture_output=True, text=True,
                         check=True).stdout.strip()
    config = f"repos:\n  - repo: {hook_source}\n    rev: {sha}\n    hooks:\n      - id: aml-lint\n"
    repo = make_repo(tmp_path / "team", {"jobs/bad.yml": BAD, ".pre-commit-config.yaml": config})
    home = tmp_path / "pre-commit-home"
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    result = subprocess.run([str(BIN / "pre-commit"), "run", "--all-files"], cwd=repo, capture_output=True,
                            text=True, env=env, timeout=600)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "AML101" in result.stdout
    sites = list(home.glob("repo*/py_env-*/lib/python*/site-packages"))
    assert sites, sorted(str(p) for p in home.iterdir())
    installed = {p.name.split("-")[0].lower() for p in sites[0].iterdir()}
    assert not {"torch", "mlflow", "textual", "azure", "nbclient", "ipykernel"} & installed
    assert {"jsonschema", "yaml"} <= installed
