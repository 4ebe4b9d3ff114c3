"""A loopback MLflow tracking server for the jobs that bring their own MLflow.

Every job logs to the workspace's store. Most open its SQLite file directly (``sqlite:///``),
the fastest way; but a job whose environment pins another MLflow (``mlflow<2.19`` in its conda
file) or whose command installs one (``pip install 'mlflow<2.19' && python train.py``, as
Microsoft's sweep example does) gets a client that refuses, or would migrate, a store of
aml-run's MLflow's schema. On the service, jobs log over HTTP to the workspace's tracking
server, so any client version works; here such a job gets ``MLFLOW_TRACKING_URI`` of a real
``mlflow server`` on 127.0.0.1, run by aml-run's interpreter over the same store. The runs'
artifact locations stay local folders (the same machine): the client writes them itself, and
the server does not proxy artifacts.

The decision is :func:`own_mlflow`. The owner of a server is the supervisor process: one server
per job, sweep (shared by its trials) or pipeline (shared by its steps), started when the first
job that needs it is prepared (:func:`tracking_uri_for`) and stopped when the supervisor ends
(:func:`stop_all`). The server runs under a small watcher (``python -m runner.mlflow_server``,
the leader of the server's process group) that takes the whole group down when the supervisor
is gone, however it went (SIGKILL included): no server is left behind.
"""

from __future__ import annotations

import fcntl
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Callable, Iterator, Mapping, Sequence

from .distributed import free_port
from .errors import RunnerError

# The distributions that are (or bring) an MLflow client.
_CLIENTS = frozenset({"mlflow", "mlflow-skinny"})
_INSTALLERS = _CLIENTS | {"azureml-mlflow"}
# pip install options whose value is the next word (not a requirement).
_VALUED = frozenset({"-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url",
                     "--extra-index-url", "-f", "--find-links", "-t", "--target", "--prefix", "--root", "--src",
                     "--python", "-p", "--platform", "--python-version", "--implementation", "--abi",
                     "--cache-dir", "--log", "--proxy", "--cert", "--client-cert", "--trusted-host",
                     "--upgrade-strategy", "--progress-bar", "--global-option", "--config-settings", "-C",
                     "--only-binary", "--no-binary", "--retries", "--timeout", "--exists-action", "--index-strategy",
                     "--extra", "--group", "--override", "--overrides", "--resolution", "--prerelease"})
# Where one shell command ends and another begins (enough for job commands: && || ; | & newlines
# and subshell or substitution brackets).
_COMMAND_BREAKS = re.compile(r"&&|\|\||[;|&\n()`]|\$\(")
_PIP = re.compile(r"pip[0-9.]*")

# How long the server may take to answer /health (it imports MLflow and its web app: 5 s on
# an idle machine).
START_TIMEOUT = float(os.environ.get("AMLLAB_MLFLOW_SERVER_TIMEOUT", "180"))
_PORT_ATTEMPTS = 3


# -- the decision ------------------------------------------------------------------------------

def own_mlflow(command: str, requirements: Sequence[str], base_version: str,
               built: Mapping[str, str] | None = None, workdir: Path | None = None) -> str | None:
    """Why a job's MLflow client is not aml-run's (then it logs through a server), or None.

    In this order: the environment's build holds ``mlflow`` or ``mlflow-skinny`` at another
    version than ``base_version`` (``built``: canonical name -> version, what the build
    installed, which shadows the base); the environment asks for one of them with a version
    the base's does not meet, or from a URL or path; the command runs ``pip install`` (``pip3``,
    ``python -m pip``, ``uv pip``...) naming ``mlflow``, ``mlflow-skinny`` or ``azureml-mlflow``,
    whatever version it asks for: the command's own installs are not known before it runs;
    a requirements file it installs (``pip install -r requirements.txt``) is read from
    ``workdir``, the folder the command runs in. ``azureml-mlflow`` in the environment counts
    only through what it resolved to (``built``)."""
    for name, version in sorted((built or {}).items()):
        if _canonical(name) in _CLIENTS and version != base_version:
            return f"its environment installs {name} {version}"
    for text in requirements:
        requirement = _requirement(text)
        if requirement is None or _canonical(requirement.name) not in _CLIENTS:
            continue
        if requirement.url or not requirement.specifier.contains(base_version, prereleases=True):
            if requirement.marker is None or requirement.marker.evaluate():
                return f"its environment asks for {text}"
    for named in pip_installs(command, workdir):
        return f"its command installs {named}"
    return None


def pip_installs(command: str, workdir: Path | None = None) -> list[str]:
    """The requirements naming an MLflow client that ``command``'s ``pip install`` commands
    install, as written (``mlflow<2.19``), those of the requirements files they name (``-r
    FILE``, read from ``workdir``) included."""
    found = []
    for segment in _COMMAND_BREAKS.split(command):
        try:
            words = shlex.split(segment, comments=True)
        except ValueError:  # an unbalanced quote across a break: read it word by word
            words = segment.split()
        if not words or words[0] in ("echo", "printf"):
            continue
        for index, word in enumerate(words[1:], 1):
            if word == "install" and _PIP.fullmatch(os.path.basename(words[index - 1])):
                found.extend(_named(words[index + 1:], workdir))
                break
    return found


def _named(arguments: list[str], workdir: Path | None = None, depth: int = 0) -> list[str]:
    named, skip, files, previous = [], False, [], ""
    for argument in arguments:
        if skip:
            if previous in ("-r", "--requirement"):
                files.append(argument)
            skip = False
            continue
        if argument.startswith("-"):
            if argument.startswith("--requirement="):
                files.append(argument.split("=", 1)[1])
            elif argument.startswith("-r") and len(argument) > 2 and not argument.startswith("--"):
                files.append(argument[2:].strip())
            skip, previous = argument in _VALUED, argument
            continue
        requirement = _requirement(argument)
        if requirement is not None and _canonical(requirement.name) in _INSTALLERS:
            named.append(argument)
    for name in files if depth < 5 else ():  # a file may name another, or itself
        named.extend(_named(_requirement_lines(name, workdir), workdir, depth + 1))
    return list(dict.fromkeys(named))


def _requirement_lines(name: str, workdir: Path | None) -> list[str]:
    """The requirements of a requirements file, one per line, comments dropped; none when the
    file cannot be read (a URL, or not there before the job runs)."""
    if workdir is None or "://" in name:
        return []
    try:
        text = (workdir / name).read_text(errors="replace")
    except OSError:
        return []
    return [line.split(" #", 1)[0].strip() for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def _requirement(text: str):  # -> packaging.requirements.Requirement | None
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return Requirement(text)
    except InvalidRequirement:
        return None


def _canonical(name: str) -> str:
    from packaging.utils import canonicalize_name

    return canonicalize_name(name)


def base_version() -> str:
    """aml-run's MLflow version (the base every job's environment is layered over)."""
    from importlib import metadata

    try:
        return metadata.version("mlflow")
    except metadata.PackageNotFoundError:
        return metadata.version("mlflow-skinny")


def clients_in(site_packages: Path) -> dict[str, str]:
    """The MLflow clients installed in one site-packages folder (an environment's build), read
    from their ``<name>-<version>.dist-info`` folders' names (no metadata to load: a few
    microseconds for the many builds without one)."""
    found = {}
    for info in site_packages.glob("[mM][lL][fF]low*.dist-info"):
        name, _, version = info.name[: -len(".dist-info")].partition("-")
        if version and _canonical(name) in _CLIENTS:
            found[_canonical(name)] = version
    return found


def _checks_host_header() -> bool:
    """Whether this MLflow's server checks the Host header (and takes --allowed-hosts): 3.5 on."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(base_version()) >= Version("3.5")
    except InvalidVersion:
        return True


# -- the servers of this process ---------------------------------------------------------------

class LoopbackServer:
    """One ``mlflow server`` over ``backend_uri`` on ``host`` (127.0.0.1 unless a cluster's nodes
    must reach it), under its watcher."""

    def __init__(self, backend_uri: str, artifact_root: Path, log: Path, host: str = "127.0.0.1",
                 users: Path | None = None) -> None:
        self.backend_uri = backend_uri
        self.host = host
        # Shared (outlives this process): the file whose shared locks are its users.
        self.users = users
        self.artifact_root = artifact_root
        self.log = log
        self.process: subprocess.Popen | None = None
        self.url: str | None = None

    def start(self, say: Callable[[str], None]) -> str:
        """Start the server and wait until it answers; a port taken meanwhile by another
        process is retried with another one."""
        for attempt in range(_PORT_ATTEMPTS):
            # The kernel's pick of a free port; the server binds it a moment later, and a
            # collision in between is retried.
            port = free_port(self.host)
            started = time.monotonic()
            self._spawn(port)
            if self._wait(port):
                self.url = f"http://{self.host}:{port}"
                say(f"MLflow server {self.url} over {self.backend_uri} started in "
                    f"{time.monotonic() - started:.1f} s (log: {self.log})")
                return self.url
            self.stop()
            if "address already in use" not in self._tail().lower() or attempt == _PORT_ATTEMPTS - 1:
                break
        raise RunnerError(f"the loopback MLflow server for this job did not come up: "
                          f"{' | '.join(self._tail().splitlines()[-5:]) or 'no output'} (log: {self.log})")

    def _spawn(self, port: int) -> None:
        from .process import python_module, spawn

        self.log.parent.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", self.backend_uri,
                "--default-artifact-root", self.artifact_root.as_uri(), "--no-serve-artifacts",
                "--host", self.host, "--port", str(port), "--workers", "1"]
        if self.host != "127.0.0.1" and _checks_host_header():
            # MLflow answers only Host headers it knows (localhost and private addresses by
            # default): the address the cluster's nodes call this machine by is one.
            argv += ["--allowed-hosts", f"{self.host},{self.host}:{port}"]
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("MLFLOW_RUN", "MLFLOW_EXPERIMENT", "AMLLAB_RUN_DIR"))}
        # A server of its own needs none of the job queue (a scheduler and seven huey consumer
        # processes): only the tracking REST API is asked of it.
        env["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] = "false"
        # The watcher polls for its parent; it must not die with the thread that started it (a
        # sweep's trial), which is what die_with_parent would do.
        watch = ["--shared", str(self.users), str(SHARED_IDLE)] if self.users else []
        self.process = spawn(python_module("runner.mlflow_server", *watch, *argv), cwd=self.log.parent, env=env,
                             log=self.log, die_with_parent=False)

    def _wait(self, port: int) -> bool:
        assert self.process is not None
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            if _answers(f"http://{self.host}:{port}"):
                return True
            time.sleep(0.1)
        with open(self.log, "a") as out:
            out.write(f"amllab: no answer from /health within {START_TIMEOUT:.0f} s\n")
        return False

    def _tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def stop(self) -> None:
        from .process import stop_group

        if self.process is not None:
            stop_group(self.process.pid, grace=5.0, reap=self.process)
            self.process.wait()
        self.url = None


_SERVERS: dict[str, LoopbackServer] = {}
_LOCK = threading.Lock()


def tracking_uri_for(backend_uri: str, artifact_root: Path, logs: Path, say: Callable[[str], None],
                     host: str = "127.0.0.1") -> str:
    """The URL of this process's server over ``backend_uri`` on ``host``, started now if it is
    not yet (several trials asking at once wait for one start)."""
    with _LOCK:
        key = f"{backend_uri} on {host}"
        server = _SERVERS.get(key)
        if server is None or server.url is None or server.process is None or server.process.poll() is not None:
            suffix = "" if host == "127.0.0.1" else f"-{host}"
            server = LoopbackServer(backend_uri, artifact_root, logs / f"mlflow-server-{os.getpid()}{suffix}.log", host)
            _SERVERS[key] = server
            with _one_start_at_a_time(logs):
                server.start(say)
        assert server.url is not None
        return server.url


@contextmanager
def _one_start_at_a_time(logs: Path) -> Iterator[None]:
    """A starting server creates the store's missing tables; two doing it at once (two jobs'
    supervisors) collide in SQLite, so the workspace's servers start one by one."""
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / "mlflow-server-start.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


# The workspace's shared servers this process uses: key -> (url, the users file it holds a lock on).
_SHARED: dict[str, tuple[str, IO]] = {}
# The watchers of the shared servers this process started (they outlive it).
_SHARED_PIDS: set[int] = set()
# Seconds a shared server stays up with no process using it.
SHARED_IDLE = float(os.environ.get("AMLLAB_MLFLOW_SERVER_IDLE", "120"))


def shared_uri(backend_uri: str, artifact_root: Path, logs: Path, say: Callable[[str], None], host: str) -> str:
    """The URL of the workspace's shared server over ``backend_uri`` on ``host``: one that
    outlives the process that started it, so that the next supervisor (the next sweep, job or
    pipeline on a cluster) finds it answering instead of waiting seconds for a new one. Each
    process that uses it holds a shared lock on its users file until it exits (the kernel drops
    it, however the process ends); the server stops once nobody has held one for SHARED_IDLE
    seconds."""
    import hashlib
    import json

    from .process import same_process, start_ticks
    from validator.paths import write_text_atomic

    key = f"{backend_uri} on {host}"
    stem = f"mlflow-server-{host}-{hashlib.sha256(backend_uri.encode()).hexdigest()[:8]}"
    with _LOCK:
        if key in _SHARED and _answers(_SHARED[key][0]):
            return _SHARED[key][0]
        logs.mkdir(parents=True, exist_ok=True)
        users_path = logs / f"{stem}.users"
        users = open(users_path, "a")
        fcntl.flock(users, fcntl.LOCK_SH)  # waits while an idle server is stopping
        record = logs / f"{stem}.json"
        with _one_start_at_a_time(logs):
            try:
                known = json.loads(record.read_text())
            except (OSError, ValueError):
                known = {}
            url = known.get("url")
            if not (url and same_process(int(known.get("pid", 0)), known.get("start_ticks")) and _answers(url)):
                server = LoopbackServer(backend_uri, artifact_root, logs / f"{stem}.log", host, users=users_path)
                url = server.start(say)
                assert server.process is not None
                write_text_atomic(record, json.dumps({"url": url, "pid": server.process.pid,
                                                      "start_ticks": start_ticks(server.process.pid)}))
                _SHARED_PIDS.add(server.process.pid)
            else:
                say(f"MLflow server {url} over {backend_uri}: the workspace's, already running")
        previous = _SHARED.get(key)
        if previous is not None:
            previous[1].close()
        _SHARED[key] = (url, users)
        return url


def _answers(url: str) -> bool:
    try:
        urllib.request.urlopen(f"{url}/health", timeout=5).close()
        return True
    except (urllib.error.URLError, OSError):
        return False


def pids() -> frozenset[int]:
    """The watchers of this process's servers, and of the shared ones it started (a sweep of a
    job's strays leaves them alone)."""
    servers = tuple(_SERVERS.values())  # a trial may be adding one meanwhile
    return frozenset(server.process.pid for server in servers if server.process is not None) | frozenset(_SHARED_PIDS)


def stop_all() -> None:
    with _LOCK:
        for server in _SERVERS.values():
            server.stop()
        _SERVERS.clear()


# -- the watcher (python -m runner.mlflow_server ARGV...) --------------------------------------

def main(argv: list[str]) -> int:
    """Run ``argv`` (the server) in this process group and take the whole group down when the
    process that started us is gone (polled: it is re-parented then), or on SIGTERM/SIGINT.
    ``--shared USERS IDLE ARGV...``: a shared server, taken down instead once no process has
    held a lock on the USERS file for IDLE seconds."""
    users = idle = None
    if argv[:1] == ["--shared"]:
        users, idle, argv = open(argv[1], "a"), float(argv[2]), argv[3:]
    parent = os.getppid()
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL)

    def end(*_: object) -> None:
        _stop_group(child)

    signal.signal(signal.SIGTERM, end)
    signal.signal(signal.SIGINT, end)
    unused_since = None
    while child.poll() is None:
        if users is None:
            if os.getppid() != parent:
                end()
        else:
            try:
                fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                unused_since = None  # someone uses it
            else:
                unused_since = unused_since or time.monotonic()
                if time.monotonic() - unused_since >= idle:
                    end()  # still holding the lock: a newcomer waits, then starts its own
                fcntl.flock(users, fcntl.LOCK_UN)
        time.sleep(0.25)
    # The server ended by itself (a port taken, a bad store): nothing of it may stay.
    _stop_group(child, code=child.returncode)
    return child.returncode


def _stop_group(child: subprocess.Popen, code: int = 0) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    me = os.getpid()
    try:
        os.killpg(me, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        child.poll()
        if not _others_in_group(me):
            os._exit(code)
        time.sleep(0.05)
    os.killpg(me, signal.SIGKILL)  # this process too


def _others_in_group(pgid: int) -> bool:
    from .process import _stat

    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            fields = _stat(entry)
            if fields and fields[0] not in ("Z", "X") and int(fields[2]) == pgid:
                return True
    return False


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
