"""What the aml-run tests share: running the CLI as a user does, writing specs, and checking
that jobs and processes are gone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from conftest import BIN
from runner import status
from runner.workspace import Workspace

def aml_run(*args: str, cwd: Path, env: dict | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    environment = dict(os.environ)
    environment.update(env or {})
    return subprocess.run([str(BIN / "aml-run"), *args], cwd=cwd, capture_output=True, text=True,
                          env=environment, timeout=timeout)


def default_signals() -> None:
    """``preexec_fn`` for a child the test will signal: SIGINT and SIGTERM back to their defaults.
    A suite started from a background shell inherits SIGINT ignored, and Python leaves an
    ignored SIGINT ignored, so Ctrl-C would never reach the child's handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def write_job(folder: Path, name: str, body: str, script: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if script is not None:
        (folder / "src").mkdir(exist_ok=True)
        (folder / "src" / "main.py").write_text(textwrap.dedent(script))
    path = folder / f"{name}.yml"
    body = textwrap.dedent(body)
    if "environment:" not in body:
        # An inline environment without a conda file: the base interpreter's packages, in a venv of the job's own.
        body += "environment:\n  image: python:3.11-slim\n"
    path.write_text("$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json\n" + body)
    return path


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One workspace for the tests that can share it: its tracking agent stays warm."""
    folder = tmp_path_factory.mktemp("lab")
    (folder / ".amllab").mkdir()
    return folder


def submit(folder: Path, spec: Path, *extra: str) -> str:
    result = aml_run("job", "create", "--file", str(spec), "-o", "json", *extra, cwd=folder)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["name"]


def show(folder: Path, name: str) -> dict:
    """`aml-run job show NAME -o json`, as a user reads it."""
    result = aml_run("job", "show", name, "-o", "json", cwd=folder)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def finish(folder: Path, name: str, timeout: float = 180) -> dict:
    """Follow the job to its end (`aml-run job stream`), then show it."""
    result = aml_run("job", "stream", name, cwd=folder, timeout=timeout)
    assert "Traceback" not in result.stdout + result.stderr, result.stdout[-3000:] + result.stderr[-3000:]
    return show(folder, name)


def wait_for(workspace: Workspace, name: str, state: str, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        current = status.read(workspace.run_dir(name))
        if current["status"] == state:
            return current
        assert current["status"] not in status.TERMINAL, current
        time.sleep(0.05)
    raise AssertionError(f"{name} never reached {state}")


def nothing_ran(folder: Path) -> bool:
    """A refused job leaves no run folder (and creates no workspace that was not there)."""
    runs = folder / ".amllab" / "runs"
    return not runs.exists() or not list(runs.iterdir())


def group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


def pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] if Path(f"/proc/{pid}").exists() else "X"
    return state in ("Z", "X")


def command_lines() -> list[tuple[int, bytes]]:
    """Every live process with its command line (arguments joined by NUL bytes), read from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if not pid_gone(int(entry)):
            found.append((int(entry), argv))
    return found
