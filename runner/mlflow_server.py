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
the leader of the server's process group):

- it takes the whole group down when the supervisor is gone, however it went (SIGKILL
  included): no server is left behind;
- a *keeper*, a process of the group that the kernel signals when the watcher dies
  (``PR_SET_PDEATHSIG``), takes the group down when the watcher itself is killed, uvicorn's
  worker included, whose parent ``mlflow server`` may be gone too;
- a server that exits after it has answered once (killed, crashed) is started again on the same
  address, since the jobs already hold its URL; MLflow's client retries a refused connection
  with backoff, so what a job logs meanwhile arrives. At most :data:`RESTARTS` restarts in
  :data:`RESTART_WINDOW` seconds; then the watcher gives up, and the jobs that log through it
  fail at once naming the cause (:func:`lifeline`), instead of waiting minutes on retries;
- every request but ``/health`` must carry the server's token (``MLFLOW_TRACKING_TOKEN``, sent
  by MLflow's client as ``Authorization: Bearer``; runner/tracking_gate.py), which only the
  jobs it serves are given: another user of this machine cannot read or write the store
  through it.

What the watcher does is written to the server's log as lines starting with
:data:`WATCHER_SAYS`; each job that logs through the server repeats them in its system log.
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
from typing import IO, Callable, Iterator, Mapping, NamedTuple, Sequence

from .distributed import free_port
from .errors import RunnerError
from .tracking_gate import TOKEN_VARIABLE

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
# Restarts of a server that went away, at most this many within RESTART_WINDOW seconds (0: a
# server that goes away fails the jobs that log through it at once).
RESTARTS = int(os.environ.get("AMLLAB_MLFLOW_SERVER_RESTARTS", "3"))
RESTART_WINDOW = 600.0
# How the watcher's own lines in the server's log begin.
WATCHER_SAYS = "aml-run watcher: "
# The watcher's exit status when it gave up restarting the server.
GAVE_UP = 75
# The mlflow.app entry point (pyproject.toml) of runner/tracking_gate.py: the server's app with
# a token at its door.
GATED_APP = "amllab-token"


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

class Endpoint(NamedTuple):
    """A tracking server a job logs to: its URL, and the token the job must present (None for a
    server that is not aml-run's: the workspace's own MLFLOW_TRACKING_URI)."""

    url: str
    token: str | None = None

    def point(self, env: dict[str, str]) -> None:
        """Point the MLflow client of a job with environment ``env`` here. With a token, the
        other credentials MLflow's client would send instead (basic auth takes precedence over
        a token, a custom auth provider over both) are dropped."""
        env["MLFLOW_TRACKING_URI"] = self.url
        if self.token:
            for other in ("MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD", "MLFLOW_TRACKING_AUTH"):
                env.pop(other, None)
            env["MLFLOW_TRACKING_TOKEN"] = self.token


class _Watched(NamedTuple):
    """What tells whether a server is still there: its watcher's pid (and start time), and the
    log its watcher writes to."""

    pid: int
    ticks: int | None
    log: Path


# URL -> its watcher, for every server this process started or uses.
_WATCHED: dict[str, _Watched] = {}
# How often a job's lifeline looks at its server.
LIFELINE_POLL = 0.5


def lifeline(url: str | None, say: Callable[[str], None]) -> Callable[[], dict[str, str] | None] | None:
    """For a job that logs through the server at ``url`` (one of aml-run's; None otherwise): a
    check to call while the job runs. Each call repeats in ``say`` what the server's watcher
    said since the last one (the server went away, it answers again), and returns the job's
    error once the server is gone for good (its watcher gave up, or was killed), so that the
    job fails at once instead of waiting on the client's retries."""
    watched = _WATCHED.get(url or "")
    if watched is None:
        return None
    offset = _size(watched.log)
    last = 0.0

    def check() -> dict[str, str] | None:
        nonlocal offset, last
        now = time.monotonic()
        if now - last < LIFELINE_POLL:
            return None
        last = now
        gone = not _watcher_alive(watched)
        lines, offset = _watcher_lines(watched.log, offset)
        for line in lines:
            say(f"MLflow server {url}: {line}")
        if not gone:
            return None
        cause = lines[-1] if lines else "its watcher was stopped from outside aml-run"
        return {"code": "TrackingServerLost",
                "message": f"the loopback MLflow tracking server {url} that the job logs through is gone and "
                           f"was not restarted ({cause}); what the job logged since is lost (log: {watched.log})"}

    return check


def _watcher_alive(watched: _Watched) -> bool:
    from .process import same_process

    return same_process(watched.pid, watched.ticks)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _watcher_lines(log: Path, offset: int) -> tuple[list[str], int]:
    """The watcher's lines in ``log`` after ``offset`` (whole lines only), and the new offset."""
    if _size(log) <= offset:
        return [], offset
    try:
        with open(log, "rb") as handle:
            handle.seek(offset)
            chunk = handle.read()
    except OSError:
        return [], offset
    end = chunk.rfind(b"\n") + 1
    lines = chunk[:end].decode("utf-8", "replace").splitlines()
    return [line[len(WATCHER_SAYS):] for line in lines if line.startswith(WATCHER_SAYS)], offset + end


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
        # What every request but /health must carry (runner/tracking_gate.py).
        import secrets

        self.token = secrets.token_urlsafe(32)

    @property
    def endpoint(self) -> Endpoint:
        assert self.url is not None
        return Endpoint(self.url, self.token)

    def start(self, say: Callable[[str], None]) -> Endpoint:
        """Start the server and wait until it answers; a port taken meanwhile by another
        process is retried with another one."""
        for attempt in range(_PORT_ATTEMPTS):
            # The kernel's pick of a free port; the server binds it a moment later, and a
            # collision in between is retried.
            port = free_port(self.host)
            started = time.monotonic()
            self._spawn(port)
            if self._wait(port):
                from .process import start_ticks

                self.url = f"http://{self.host}:{port}"
                assert self.process is not None
                _WATCHED[self.url] = _Watched(self.process.pid, start_ticks(self.process.pid), self.log)
                say(f"MLflow server {self.url} over {self.backend_uri} started in "
                    f"{time.monotonic() - started:.1f} s (log: {self.log})")
                return self.endpoint
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
                "--host", self.host, "--port", str(port), "--workers", "1", "--app-name", GATED_APP]
        if self.host != "127.0.0.1" and _checks_host_header():
            # MLflow answers only Host headers it knows (localhost and private addresses by
            # default): the address the cluster's nodes call this machine by is one.
            argv += ["--allowed-hosts", f"{self.host},{self.host}:{port}"]
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("MLFLOW_RUN", "MLFLOW_EXPERIMENT", "AMLLAB_RUN_DIR"))}
        # A server of its own needs none of the job queue (a scheduler and seven huey consumer
        # processes): only the tracking REST API is asked of it.
        env["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] = "false"
        env[TOKEN_VARIABLE] = self.token
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
        if self.url is not None:
            _WATCHED.pop(self.url, None)
        self.url = None


_SERVERS: dict[str, LoopbackServer] = {}
_LOCK = threading.Lock()


def tracking_uri_for(backend_uri: str, artifact_root: Path, logs: Path, say: Callable[[str], None],
                     host: str = "127.0.0.1") -> Endpoint:
    """This process's server over ``backend_uri`` on ``host``, started now if it is not yet
    (several trials asking at once wait for one start)."""
    with _LOCK:
        key = f"{backend_uri} on {host}"
        server = _SERVERS.get(key)
        if server is None or server.url is None or server.process is None or server.process.poll() is not None:
            suffix = "" if host == "127.0.0.1" else f"-{host}"
            server = LoopbackServer(backend_uri, artifact_root, logs / f"mlflow-server-{os.getpid()}{suffix}.log", host)
            _SERVERS[key] = server
            with _one_start_at_a_time(logs):
                server.start(say)
        return server.endpoint


@contextmanager
def _one_start_at_a_time(logs: Path) -> Iterator[None]:
    """A starting server creates the store's missing tables; two doing it at once (two jobs'
    supervisors) collide in SQLite, so the workspace's servers start one by one."""
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / "mlflow-server-start.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


# The workspace's shared servers this process uses: key -> (its endpoint, the users file it holds a lock on).
_SHARED: dict[str, tuple[Endpoint, IO]] = {}
# The watchers of the shared servers this process started (they outlive it).
_SHARED_PIDS: set[int] = set()
# Seconds a shared server stays up with no process using it.
SHARED_IDLE = float(os.environ.get("AMLLAB_MLFLOW_SERVER_IDLE", "120"))


def shared_uri(backend_uri: str, artifact_root: Path, logs: Path, say: Callable[[str], None], host: str) -> Endpoint:
    """The workspace's shared server over ``backend_uri`` on ``host``: one that outlives the
    process that started it, so that the next supervisor (the next sweep, job or pipeline on a
    cluster) finds it answering instead of waiting seconds for a new one. Each process that
    uses it holds a shared lock on its users file until it exits (the kernel drops it, however
    the process ends); the server stops once nobody has held one for SHARED_IDLE seconds. Its
    record (URL, watcher, token) is private to this user, like the workspace's store."""
    import hashlib
    import json

    from .process import same_process, start_ticks
    from validator.paths import write_text_atomic

    key = f"{backend_uri} on {host}"
    stem = f"mlflow-server-{host}-{hashlib.sha256(backend_uri.encode()).hexdigest()[:8]}"
    with _LOCK:
        if key in _SHARED and _answers(_SHARED[key][0].url):
            return _SHARED[key][0]
        logs.mkdir(parents=True, exist_ok=True)
        users_path = logs / f"{stem}.users"
        users = open(users_path, "a")
        fcntl.flock(users, fcntl.LOCK_SH)  # waits while an idle server is stopping
        record = logs / f"{stem}.json"
        log = logs / f"{stem}.log"
        with _one_start_at_a_time(logs):
            try:
                known = json.loads(record.read_text())
            except (OSError, ValueError):
                known = {}
            url, token, pid = known.get("url"), known.get("token"), int(known.get("pid") or 0)
            if not (url and token and same_process(pid, known.get("start_ticks")) and _answers(url)):
                server = LoopbackServer(backend_uri, artifact_root, log, host, users=users_path)
                endpoint = server.start(say)
                assert server.process is not None
                pid = server.process.pid
                # mkstemp's file is private (0600): the token stays this user's.
                write_text_atomic(record, json.dumps({"url": endpoint.url, "token": endpoint.token, "pid": pid,
                                                      "start_ticks": start_ticks(pid)}))
                _SHARED_PIDS.add(pid)
            else:
                endpoint = Endpoint(url, token)
                _WATCHED[url] = _Watched(pid, known.get("start_ticks"), log)
                say(f"MLflow server {url} over {backend_uri}: the workspace's, already running")
        previous = _SHARED.get(key)
        if previous is not None:
            previous[1].close()
        _SHARED[key] = (endpoint, users)
        return endpoint


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
    held a lock on the USERS file for IDLE seconds. A server that exits after it answered once
    is started again on its address (see the module's docstring). ``--keeper``: the keeper of
    the watcher that started it (:func:`_keep`)."""
    if argv[:1] == ["--keeper"]:
        return _keep()
    users = idle = None
    if argv[:1] == ["--shared"]:
        users, idle, argv = open(argv[1], "a"), float(argv[2]), argv[3:]
    from .process import become_subreaper, parent_death_signal, python_module

    parent = os.getppid()
    # What the server leaves when it dies (uvicorn's worker, once `mlflow server` is killed)
    # comes back to this process, which clears it before a restart.
    become_subreaper()
    group = _Group(subprocess.Popen(python_module("runner.mlflow_server", "--keeper"), stdin=subprocess.DEVNULL,
                                    preexec_fn=parent_death_signal(signal.SIGTERM, os.getpid())))
    group.server = subprocess.Popen(argv, stdin=subprocess.DEVNULL)

    def end(*_: object) -> None:
        group.stop()

    signal.signal(signal.SIGTERM, end)
    signal.signal(signal.SIGINT, end)
    url = _url_of(argv)
    answered = False    # a server that never answered is not restarted: its address may be taken
    down_since = None   # when the server last went away, while it is not answering again
    restarts: list[float] = []
    unused_since = None
    while True:
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
        code = group.server.poll()
        if code is not None:
            if not answered or url is None:
                group.stop(code)  # it never served (a port taken, a bad store): the starter retries
            now = time.monotonic()
            restarts = [when for when in restarts if now - when < RESTART_WINDOW]
            if len(restarts) >= RESTARTS:
                _say(f"the server exited ({_exit_text(code)}) and is not restarted: {len(restarts)} restart(s) "
                     f"in the last {RESTART_WINDOW:.0f} s already (at most {RESTARTS}; "
                     "AMLLAB_MLFLOW_SERVER_RESTARTS)")
                group.stop(GAVE_UP)
            _say(f"the server exited ({_exit_text(code)}); starting it again on {url} "
                 f"(restart {len(restarts) + 1} of at most {RESTARTS} in {RESTART_WINDOW:.0f} s)")
            group.clear()
            restarts.append(now)
            down_since = down_since or now
            group.server = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
        elif (not answered or down_since is not None) and url is not None and _answers(url):
            if down_since is not None:
                _say(f"the server answers again on {url}, {time.monotonic() - down_since:.1f} s after it went away")
            answered, down_since = True, None
        elif down_since is not None and time.monotonic() - down_since > START_TIMEOUT:
            _say(f"the restarted server did not answer within {START_TIMEOUT:.0f} s; giving up")
            group.stop(GAVE_UP)
        time.sleep(0.25)


class _Group:
    """The watcher's process group: the keeper, the server, and what the server starts."""

    def __init__(self, keeper: subprocess.Popen) -> None:
        self.keeper = keeper
        self.server: subprocess.Popen | None = None

    def clear(self) -> None:
        """Stop every process of the group but this one and the keeper (what a dead server left:
        its orphaned worker may still hold the port)."""
        me, spared = os.getpid(), {os.getpid(), self.keeper.pid}
        deadline = time.monotonic() + 5.0
        signum = signal.SIGTERM
        while True:
            self._reap()
            left = [pid for pid in _group_members(me) if pid not in spared]
            if not left:
                return
            for pid in left:
                try:
                    os.kill(pid, signum)
                except ProcessLookupError:
                    pass
            if time.monotonic() > deadline:
                signum = signal.SIGKILL
            time.sleep(0.05)

    def _reap(self) -> None:
        """Collect the exited orphans re-parented to this subreaper; the server's and the keeper's
        exit statuses are their Popens' to read."""
        from .process import children_of

        owned = {self.keeper.pid} | ({self.server.pid} if self.server is not None else set())
        for pid in children_of(os.getpid()):
            if pid not in owned:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass

    def stop(self, code: int = 0) -> None:
        """Take the group down and exit with ``code``: the keeper first (it would take the group
        down too, this process with it, and the exit status would be lost), then the rest."""
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        self.keeper.kill()
        self.keeper.wait()
        me = os.getpid()
        try:
            os.killpg(me, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            if self.server is not None:
                self.server.poll()
            self._reap()
            if not _group_members(me):
                os._exit(code)
            time.sleep(0.05)
        os.killpg(me, signal.SIGKILL)  # this process too


def _keep() -> int:
    """The keeper: sleeps until the kernel says its watcher died (``PR_SET_PDEATHSIG`` SIGTERM,
    set as it started), then takes the group down: SIGTERM, 5 s, SIGKILL (itself included)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)

    def down(*_: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        group = os.getpgrp()
        os.killpg(group, signal.SIGTERM)
        deadline = time.monotonic() + 5.0
        while _group_members(group) and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(group, signal.SIGKILL)

    signal.signal(signal.SIGTERM, down)
    while True:
        signal.pause()


def _say(message: str) -> None:
    """A watcher's line in the server's log (this process's standard output)."""
    sys.stdout.write(f"{WATCHER_SAYS}{message}\n")
    sys.stdout.flush()


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _url_of(argv: Sequence[str]) -> str | None:
    """The address the server in ``argv`` listens on (its --host and --port)."""
    def value(flag: str) -> str | None:
        return argv[argv.index(flag) + 1] if flag in argv[:-1] else None

    host, port = value("--host"), value("--port")
    return f"http://{host}:{port}" if host and port else None


def _group_members(pgid: int) -> list[int]:
    """The live processes of group ``pgid`` but this one (zombies left out)."""
    from .process import _stat

    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            fields = _stat(entry)
            if fields and fields[0] not in ("Z", "X") and int(fields[2]) == pgid:
                found.append(int(entry))
    return found


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
