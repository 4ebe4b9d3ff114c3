"""`aml-run job create` killed or interrupted part-way: every job that can be seen either has a
supervisor (alive, or one that recorded its end) or a final state saying why, a half-built run
folder is never listed as a job, and nothing is left running. Real processes and real signals:
the fault-injection points of `job create` (AMLLAB_FAULT_PAUSE) stop it at an exact moment, and
a loop kills it at whatever moment it has reached when its run folder appears."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from amlrun import aml_run, write_job
from conftest import BIN
from runner import contract, jobs, process, status
from runner.workspace import Workspace

ECHO = "command: echo hello\n"
SLEEP = "command: sleep 300\n"


def _default_sigint() -> None:
    # The suite may run with SIGINT ignored; the child must take Ctrl-C as a user's shell delivers it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _create(folder: Path, spec: Path, name: str, pause: str | None = None) -> subprocess.Popen:
    env = dict(os.environ)
    env.pop("AMLLAB_FAULT_PAUSE", None)
    if pause:
        env["AMLLAB_FAULT_PAUSE"] = pause
    return subprocess.Popen([str(BIN / "aml-run"), "job", "create", "--file", str(spec), "--name", name, "-o", "json"],
                            cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=_default_sigint)


def _paused(creating: subprocess.Popen, point: str) -> None:
    """Wait until `job create` says it has reached ``point`` (it exits instead if it never does)."""
    assert creating.stderr is not None
    seen = []
    for line in creating.stderr:
        seen.append(line)
        if f"paused at fault point '{point}'" in line:
            return
    creating.wait()
    raise AssertionError(f"job create never paused at {point}: {''.join(seen)}")


def _nothing_left(run_dir: Path, timeout: float = 30) -> bool:
    """No supervisor of the job and none of its command's processes, within ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not process.module_processes(jobs.SUPERVISOR, str(run_dir)) and not process.processes_marked(contract.MARKER, str(run_dir)):
            return True
        time.sleep(0.05)
    return False


def _show(folder: Path, name: str) -> dict:
    result = aml_run("job", "show", name, "-o", "json", cwd=folder)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_killed_before_its_run_folder_is_complete_it_leaves_no_job(tmp_path: Path) -> None:
    spec = write_job(tmp_path, "job", ECHO)
    creating = _create(tmp_path, spec, "half_made", pause="publish")
    _paused(creating, "publish")
    creating.kill()
    creating.wait()
    workspace = Workspace(tmp_path / ".amllab")
    assert not workspace.run_dir("half_made").exists()
    listed = aml_run("job", "list", "-o", "json", cwd=tmp_path)
    assert listed.returncode == 0 and json.loads(listed.stdout) == [], listed.stdout + listed.stderr
    # The name is free, and the next `job create` removes what the killed one left.
    again = _create(tmp_path, spec, "half_made")
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    assert jobs.wait(workspace, "half_made", timeout=60)["status"] == "Completed"
    assert all(not any(entry.iterdir()) for entry in workspace.runs.iterdir() if entry.name.startswith("."))


def test_killed_before_it_started_the_supervisor_the_job_shows_failed_and_why(tmp_path: Path) -> None:
    spec = write_job(tmp_path, "job", ECHO)
    creating = _create(tmp_path, spec, "never_started", pause="supervisor")
    _paused(creating, "supervisor")
    assert _show(tmp_path, "never_started")["status"] == "NotStarted"  # its creator is still at work
    creating.kill()
    creating.wait()
    shown = _show(tmp_path, "never_started")
    assert shown["status"] == "Failed"
    assert shown["error"]["code"] == "CreateInterrupted"
    assert "job create was interrupted before the job started" in shown["error"]["message"]
    listed = aml_run("job", "list", "-o", "json", cwd=tmp_path)
    assert [row["status"] for row in json.loads(listed.stdout)] == ["Failed"]
    assert _nothing_left(Workspace(tmp_path / ".amllab").run_dir("never_started"))


def test_ctrl_c_before_the_supervisor_started_cancels_the_job(tmp_path: Path) -> None:
    spec = write_job(tmp_path, "job", SLEEP)
    creating = _create(tmp_path, spec, "interrupted", pause="supervisor")
    _paused(creating, "supervisor")
    creating.send_signal(signal.SIGINT)
    assert creating.wait(timeout=60) == 130
    shown = _show(tmp_path, "interrupted")
    assert shown["status"] == "Canceled" and shown["error"]["code"] == "CreateInterrupted"
    assert _nothing_left(Workspace(tmp_path / ".amllab").run_dir("interrupted"))


def test_ctrl_c_after_the_supervisor_started_cancels_the_job_and_leaves_no_process(tmp_path: Path) -> None:
    """Whether or not the new supervisor has recorded itself when Ctrl-C lands, the job ends
    Canceled: recorded, it is canceled as any job is; not yet, it finds the job ended and runs
    nothing."""
    spec = write_job(tmp_path, "job", SLEEP)
    creating = _create(tmp_path, spec, "interrupted_late", pause="record")
    _paused(creating, "record")
    creating.send_signal(signal.SIGINT)
    assert creating.wait(timeout=60) == 130
    workspace = Workspace(tmp_path / ".amllab")
    assert jobs.wait(workspace, "interrupted_late", timeout=60)["status"] == "Canceled"
    assert _nothing_left(workspace.run_dir("interrupted_late"))


def test_killed_after_it_started_the_supervisor_the_job_runs(tmp_path: Path) -> None:
    """The supervisor records itself: a creator killed before it could do so loses nothing."""
    spec = write_job(tmp_path, "job", ECHO)
    creating = _create(tmp_path, spec, "orphaned_early", pause="record")
    _paused(creating, "record")
    creating.kill()
    creating.wait()
    workspace = Workspace(tmp_path / ".amllab")
    assert jobs.wait(workspace, "orphaned_early", timeout=60)["status"] == "Completed"
    assert (workspace.run_dir("orphaned_early") / contract.USER_LOG).read_text() == "hello\n"
    assert _nothing_left(workspace.run_dir("orphaned_early"))


def _settles(workspace: Workspace, name: str, timeout: float = 30) -> dict:
    """The job's record once it has ended or has a live supervisor recorded (a supervisor that
    its killed creator started records itself within moments); the last one seen otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        current = jobs.record(workspace, name)
        supervisor = current.get("supervisor") or {}
        alive = bool(supervisor.get("pid")) and process.same_process(supervisor["pid"], supervisor.get("start_ticks"))
        if current["status"] in status.TERMINAL or alive or time.monotonic() > deadline:
            return current
        time.sleep(0.05)


def test_killed_at_any_moment_every_visible_job_has_a_supervisor_or_a_final_state(tmp_path: Path) -> None:
    """No fault point: `job create` is killed (SIGKILL, or Ctrl-C every third try) the moment
    anything new appears in runs/, which lands in its last steps, between building the run
    folder and recording the supervisor. After each try: no folder in runs/ that is not a
    whole job (a name that starts with "." is no job's), and every job ends or has a
    supervisor that runs it."""
    spec = write_job(tmp_path, "job", ECHO)
    workspace = Workspace(tmp_path / ".amllab")
    workspace.ensure()

    def entries(folder: Path) -> set[str]:
        return set(os.listdir(folder)) if folder.is_dir() else set()

    for attempt in range(15):
        name = f"try_{attempt}"
        jobs_before = {entry for entry in entries(workspace.runs) if not entry.startswith(".")}
        hidden_before = {f"{entry}/{inner}" for entry in entries(workspace.runs) if entry.startswith(".")
                         for inner in entries(workspace.runs / entry)}
        creating = _create(tmp_path, spec, name)
        while creating.poll() is None:
            published = {entry for entry in entries(workspace.runs) if not entry.startswith(".")} - jobs_before
            # Odd tries: as soon as it starts building a folder that is not yet visible as a job.
            building = attempt % 2 and {f"{entry}/{inner}" for entry in entries(workspace.runs)
                                        if entry.startswith(".") for inner in entries(workspace.runs / entry)} \
                - hidden_before
            if published or building:
                break
            time.sleep(0.0005)
        creating.send_signal(signal.SIGINT if attempt % 3 == 2 else signal.SIGKILL)
        creating.communicate(timeout=60)
        for folder in workspace.runs.iterdir():
            if folder.name.startswith("."):
                continue
            assert (folder / status.FILE).is_file() and (folder / contract.PLAN).is_file(), \
                f"try {attempt}: {folder.name} is visible but not a whole job: {os.listdir(folder)}"
            current = _settles(workspace, folder.name)
            assert current["status"] in status.TERMINAL or current.get("supervisor"), \
                f"try {attempt}: {folder.name} is {current['status']} with no supervisor"
    for folder in workspace.runs.iterdir():
        if not folder.name.startswith("."):
            assert jobs.wait(workspace, folder.name, timeout=60)["status"] in status.TERMINAL
            assert _nothing_left(folder)
