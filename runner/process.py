"""The one way amllab starts, watches and stops processes; every executor goes through here.

A job's command runs in a process group of its own (a new session), so that cancelling it, a
timeout, or the end of the job can signal every process it started at once. The supervisor
that watches a job is a *child subreaper* (Linux ``PR_SET_CHILD_SUBREAPER``): a process that
daemonises itself or leaves its group is re-parented to the supervisor instead of init, so it
can still be found and stopped. Nothing a job starts outlives the job.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import Callable, Mapping, Sequence

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def _load_prctl() -> Callable[..., int] | None:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux: the group kill still works, reaping is best effort
        return None


# Resolved once, here: the child calls it between fork and exec, where loading a library could
# deadlock on a lock another thread of the parent (a sweep's trials) held at the fork.
_PRCTL = _load_prctl()
# Children started by spawn() whose exit status their Popen still has to read: reap_children()
# must never collect them (with several jobs in one process, a sweep's trials, it would steal
# another job's exit code and Popen would report 0).
_OWNED: "weakref.WeakValueDictionary[int, subprocess.Popen]" = weakref.WeakValueDictionary()
_OWNED_LOCK = threading.Lock()


def _prctl(option: int, value: int) -> bool:
    return _PRCTL is not None and _PRCTL(option, value, 0, 0, 0) == 0


def become_subreaper() -> bool:
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def parent_death_signal(signum: int, parent: int) -> Callable[[], None]:
    """A ``preexec_fn`` that has the kernel send the child ``signum`` when ``parent`` (the
    thread that starts it) dies; a child whose parent died before the request took effect
    sends it to itself at once."""
    def arm() -> None:
        _prctl(_PR_SET_PDEATHSIG, signum)
        if os.getppid() != parent:
            os.kill(os.getpid(), signum)

    return arm


def _die_with_parent() -> None:
    # Runs in the child between fork and exec: if the supervisor is killed outright (SIGKILL),
    # the job's leader gets SIGKILL too instead of running on unwatched.
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def spawn(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], log: Path | None = None,
          die_with_parent: bool = True) -> subprocess.Popen:
    """Start ``argv`` as the leader of a new session and process group, with stdout and stderr
    appended to ``log`` (or discarded) and no stdin, like a job on a compute node."""
    out = open(log, "ab", buffering=0) if log is not None else subprocess.DEVNULL
    try:
        with _OWNED_LOCK:
            child = subprocess.Popen(
                list(argv), cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True,
                preexec_fn=_die_with_parent if die_with_parent else None,
            )
            _OWNED[child.pid] = child
        return child
    finally:
        if log is not None:
            out.close()  # the child holds its own copy


def spawn_detached(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None,
                   log: Path | None = None) -> int:
    """Start a process that outlives the caller (its own session, not killed with us)."""
    process = spawn(argv, cwd=cwd, env=env if env is not None else os.environ, log=log,
                    die_with_parent=False)
    return process.pid


def group_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` still exists (zombies not yet reaped count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _state(pid) not in ("Z", "X", None)


def _stat(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state, ppid, pgrp, ...), or
    None when the process is gone. The name is in parentheses and may hold spaces and ")", so
    the split starts after the last ")"."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()


def _state(pid: int) -> str | None:
    fields = _stat(pid)
    return fields[0] if fields else None


def start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot: with the pid, it tells a process
    from a later one that reused its pid."""
    fields = _stat(pid)
    return int(fields[19]) if fields else None


def same_process(pid: int, ticks: int | None) -> bool:
    return pid_alive(pid) and (ticks is None or start_ticks(pid) == ticks)


def children_of(pid: int) -> list[int]:
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        fields = _stat(entry) if entry.isdigit() else None
        if fields and int(fields[1]) == pid:
            found.append(int(entry))
    return found


def signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def stop_group(pgid: int, grace: float = 5.0, reap: subprocess.Popen | None = None) -> None:
    """SIGTERM the whole group, give it ``grace`` seconds to exit cleanly (a training script may
    save a checkpoint), then SIGKILL whatever is left, and wait until the group is empty."""
    stop_groups([pgid], grace, [reap] if reap is not None else [])


def stop_groups(pgids: Sequence[int], grace: float = 5.0, reap: Sequence[subprocess.Popen] = ()) -> None:
    """:func:`stop_group` for several groups at once (a distributed job's nodes): all get
    SIGTERM together and share one grace period."""
    for pgid in pgids:
        signal_group(pgid, signal.SIGTERM)

    def alive() -> bool:
        for child in reap:
            child.poll()
        reap_children()
        return any(group_alive(pgid) for pgid in pgids)

    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not alive():
            return
        time.sleep(0.05)
    for pgid in pgids:
        signal_group(pgid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while alive() and time.monotonic() < deadline:
        time.sleep(0.02)


def reap_children() -> None:
    """Collect exited children (including re-parented orphans) so they do not stay zombies;
    a child spawn() started whose :class:`subprocess.Popen` has not read its exit status yet is
    left to its Popen."""
    for pid in children_of(os.getpid()):
        if _state(pid) != "Z":
            continue
        with _OWNED_LOCK:
            owner = _OWNED.get(pid)
            if owner is not None and owner.returncode is None:
                continue
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def stop_descendants(grace: float = 2.0, keep: frozenset[int] = frozenset()) -> int:
    """Stop every process re-parented to this (subreaper) process: what a job left behind after
    escaping its process group. Returns how many there were."""
    me = os.getpid()
    stopped = 0
    deadline = time.monotonic() + grace
    sent_kill = False
    while True:
        reap_children()
        strays = [pid for pid in children_of(me) if pid not in keep and _state(pid) not in ("Z", None)]
        if not strays:
            return stopped
        stopped = max(stopped, len(strays))
        hard = time.monotonic() > deadline
        for pid in strays:
            try:
                os.kill(pid, signal.SIGKILL if hard else signal.SIGTERM)
            except ProcessLookupError:
                pass
        if hard:
            if sent_kill and time.monotonic() > deadline + 10:
                return stopped
            sent_kill = True
        time.sleep(0.05)


def python_module(module: str, *arguments: str) -> list[str]:
    """argv that runs ``module``'s ``main(argv)`` with this interpreter, importing amllab from
    where this copy lives (an installed or a source checkout) without touching PYTHONPATH,
    which the job would otherwise inherit."""
    root = str(Path(__file__).resolve().parent.parent)
    code = (f"import sys; sys.path.insert(0, {root!r}); "
            f"from {module} import main; sys.exit(main(sys.argv[1:]))")
    return [sys.executable, "-c", code, *arguments]


def module_processes(module: str, *arguments: str) -> list[int]:
    """Live processes that :func:`python_module` started for ``module`` with ``arguments``,
    found by their command line (a supervisor its creator died before recording, say)."""
    wanted = [f"from {module} import main".encode(), *(argument.encode() for argument in arguments)]
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")[1:-1]
        except OSError:
            continue
        if len(argv) == len(wanted) + 1 and argv[0] == b"-c" and wanted[0] in argv[1] \
                and argv[2:] == wanted[1:] and pid_alive(int(entry)):
            found.append(int(entry))
    return found


def processes_marked(variable: str, value: str) -> list[int]:
    """Processes whose environment has ``variable=value``, or ``variable=value/...``: every
    process a job starts inherits its marker (its run folder), so this finds what escaped the
    job's group even after its supervisor is gone, and a sweep's marker also covers its trials,
    whose run folders lie inside the sweep's."""
    needle = f"{variable}={value}".encode()
    below = needle.rstrip(b"/") + b"/"
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if any(item == needle or item.startswith(below) for item in environ.split(b"\0")):
            found.append(int(entry))
    return found


def stop_marked(variable: str, value: str, grace: float = 2.0) -> int:
    """SIGTERM, then SIGKILL, every process :func:`processes_marked` finds; returns how many."""
    marked = processes_marked(variable, value)
    for pid in marked:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(pid_alive(pid) for pid in marked):
        time.sleep(0.05)
    for pid in marked:
        if pid_alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return len(marked)
