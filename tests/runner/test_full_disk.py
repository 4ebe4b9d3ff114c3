"""A full disk under the workspace: a job that meets it ends Failed naming "no space left on
device" (its supervisor does not die without a word), and the commands that only read, `job
show` and `job list`, work while the disk is still full, also for a job whose supervisor died.

The disk is a real one, a small tmpfs mounted for the test (root may mount; elsewhere the test
is skipped and says so)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from amlrun import aml_run, wait_for, write_job
from runner import jobs, status
from runner.workspace import Workspace


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "disk"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small file system here: {mounted.stderr.strip()}")
    try:
        (folder / ".amllab").mkdir()
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def _fill(folder: Path) -> None:
    """Take every block that is left."""
    with open(folder / "filler.bin", "wb") as out:
        try:
            while True:
                out.write(bytes(1 << 20))
                out.flush()
        except OSError:
            pass
    assert os.statvfs(folder).f_bavail == 0


def _submit(folder: Path, spec: Path) -> str:
    result = aml_run("job", "create", "--file", str(spec), "-o", "json", cwd=folder)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["name"]


def _reads_work(folder: Path, name: str) -> dict:
    shown = aml_run("job", "show", name, "-o", "json", cwd=folder)
    assert shown.returncode == 0, shown.stderr
    listed = aml_run("job", "list", cwd=folder)
    assert listed.returncode == 0 and name in listed.stdout, listed.stderr
    return json.loads(shown.stdout)


def test_a_job_that_fills_the_disk_ends_failed_saying_so(small_disk: Path) -> None:
    # The job fills the disk with its output and exits 0; then the runner cannot keep it.
    spec = write_job(small_disk / "job", "job", "command: python main.py\ncode: src\n", script="""\
        with open("outputs/big.bin", "wb") as out:
            try:
                while True:
                    out.write(bytes(1 << 20))
                    out.flush()
            except OSError:
                pass
        """)
    name = _submit(small_disk, spec)
    record = jobs.wait(Workspace.locate(small_disk / ".amllab"), name, timeout=300)
    assert record["status"] == "Failed", record
    assert record["error"]["code"] == "DiskFull", record["error"]
    assert "no space left on device" in record["error"]["message"], record["error"]
    assert str(small_disk) in record["error"]["message"]  # where: the file system it happened on
    _fill(small_disk)  # whatever room the end gave back is taken too
    shown = _reads_work(small_disk, name)
    assert shown["status"] == "Failed" and "no space left on device" in shown["error"]["message"]


def test_a_look_at_a_job_whose_supervisor_died_on_a_full_disk_ends_it(small_disk: Path) -> None:
    spec = write_job(small_disk / "job", "sleeper", "command: sleep 600\n")
    name = _submit(small_disk, spec)
    workspace = Workspace.locate(small_disk / ".amllab")
    running = wait_for(workspace, name, "Running", timeout=300)
    _fill(small_disk)
    os.kill(running["supervisor"]["pid"], signal.SIGKILL)
    shown = _reads_work(small_disk, name)
    assert shown["status"] == "Failed" and shown["error"]["code"] == "RunnerDied", shown
    # Recorded, not only shown: the reserve its supervisor left made room for the last state.
    assert status.read(workspace.run_dir(name))["status"] == "Failed"
    assert jobs.wait(workspace, name, timeout=60)["status"] == "Failed"
