"""Jobs on a Ray cluster: a compute made with ``aml-run compute create --type ray --address
HOST:PORT``. Ray (https://docs.ray.io/en/latest/cluster/getting-started.html) places the work;
amllab builds no scheduler of its own.

The supervisor stays on this machine and keeps every decision it makes for a local job: the
compute's instances (``--max-instances``), a sweep's sampler, policy and concurrency, timeouts,
step reuse. Only a job's processes move: for each node a job runs on, the supervisor starts a
:class:`runner.cluster_node.NodeAgent` actor there (Ray's ``SPREAD`` strategy for one node; a
placement group with ``STRICT_SPREAD`` for a multi-node pytorch job, so that its nodes are
distinct machines when the cluster has that many). What crosses the network:

- to the node: the code snapshot and the materialised inputs (a tar archive through Ray's
  object store); the job's variables; the environment's requirements (the node builds it);
- from the node, while the job runs: what is new in its logs (``job stream`` follows them here);
- back at the end: ``./outputs``, ``./logs``, the named outputs and the logs (a tar archive);
- metrics, parameters and tags: straight from the job to the workspace's MLflow, through an
  ``mlflow server`` this supervisor starts on the address the cluster reaches this machine at
  (or the workspace's own tracking server, when MLFLOW_TRACKING_URI names one).

A supervisor that is killed takes its actors with it (Ray ends the actors of a driver that is
gone), and each process's guard (runner/cluster_guard.py) then stops it: nothing is left on the
cluster. A node lost while a job runs fails the job with an error naming the node; a spot job
goes back to the queue instead, as the service re-queues a preempted low-priority job.
"""

from __future__ import annotations

import importlib.util
import io
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import tarfile
import threading
import time
from pathlib import Path
from typing import Any

from . import distributed, mlflow_server, status
from .contract import Cancel, Log
from .errors import RunnerError
from .plans import CommandPlan
from .cluster_guard import exit_code
from .tracking import Tracking, is_local_store

NEEDS_RAY = "a ray compute needs Ray on this machine and on every node: pip install 'amllab[cluster]'"
START_HEAD = "ray start --head --port 6379"
# How often the supervisor asks a node what is new (exit statuses, log bytes).
POLL_PERIOD = 0.1
# Seconds a node may take to answer one question before it is taken for lost.
ANSWER_TIMEOUT = 60.0
# How long a node Ray calls unreachable for now may stay so before its job counts it lost.
UNREACHABLE_GRACE = 10.0
# How long a job may wait for the cluster to place it before the log says so.
PLACEMENT_NOTICE = 5.0

_LOCK = threading.Lock()
_connected: dict[str, str] = {}


def available() -> bool:
    return importlib.util.find_spec("ray") is not None


def check_address(address: str) -> str:
    """``HOST:PORT`` of a Ray cluster's head (its GCS), as `ray start --head` prints it."""
    host, _, port = address.strip().rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise RunnerError(f"--address {address!r} is not HOST:PORT: give the address `{START_HEAD}` printed "
                          "(Ray's default port is 6379)")
    return f"{host}:{port}"


def connect(address: str) -> None:
    """Join the cluster at ``address`` as a driver (once per supervisor)."""
    if not available():
        raise RunnerError(NEEDS_RAY)
    import ray

    with _LOCK:
        if _connected.get("address") == address and ray.is_initialized():
            return
        if ray.is_initialized():
            raise RunnerError(f"this supervisor already runs jobs on the Ray cluster at {_connected.get('address')}; "
                              f"a job's children all run on one cluster, not also on {address}")
        host, _, port = address.rpartition(":")
        try:
            socket.create_connection((host, int(port)), timeout=10).close()
        except OSError as error:
            raise RunnerError(f"the Ray cluster at {address} is not reachable ({error}); start its head there "
                              f"with `{START_HEAD}`, or fix the compute's --address") from None
        # ray.init, called in the main thread, replaces SIGTERM's handler with sys.exit: `job
        # cancel` would then kill the supervisor instead of asking it to cancel the job.
        main = threading.current_thread() is threading.main_thread()
        handler = signal.getsignal(signal.SIGTERM) if main else None
        try:
            ray.init(address=address, namespace="amllab", logging_level=logging.ERROR, log_to_driver=False,
                     configure_logging=False)
        except Exception as error:  # Ray raises a ConnectionError, a RuntimeError or its own
            raise RunnerError(f"could not join the Ray cluster at {address}: {type(error).__name__}: {error}") from None
        finally:
            if main and handler is not None:
                signal.signal(signal.SIGTERM, handler)
        _connected["address"] = address


def tracking_server(plan: CommandPlan, log: Log, tracking: Tracking) -> "mlflow_server.Endpoint":
    """The MLflow tracking server the job's nodes log to: the workspace's tracking server if it
    has one, else an ``mlflow server`` over the workspace's store on the address the cluster
    reaches this machine at (its token travels with the job)."""
    connect(plan.compute["address"])
    if not is_local_store(plan.tracking_uri):
        return mlflow_server.Endpoint(plan.tracking_uri)

    host = address_towards(plan.compute["address"])
    return mlflow_server.shared_uri(plan.tracking_uri, tracking.artifact_root or Path(plan.workspace) / "mlruns",
                                    Path(plan.workspace) / "logs", log, host=host)


def address_towards(address: str) -> str:
    """This machine's address on the route to the cluster's head: the one its nodes can call
    back (127.0.0.1 for a cluster on this machine's loopback)."""
    host, _, port = address.rpartition(":")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect((host, int(port)))  # a datagram socket sends nothing: the kernel picks the route
        return probe.getsockname()[0]


class RemoteProcess:
    """A process on a node, as :func:`runner.command.execute` watches a Popen."""

    def __init__(self, host: "ClusterHost", key: str, pid: int) -> None:
        self.host = host
        self.key = key
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.host.refresh()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(self.key, timeout)
            time.sleep(min(0.05, timeout or 0.05))
        return self.returncode


class Agent:
    """One node's agent for the job, where it is, and how the job's paths map onto it."""

    def __init__(self, actor: Any, where: dict[str, Any], run_dir: Path, external: dict[str, str]) -> None:
        self.actor = actor
        self.where = where
        self.folder = where["folder"]
        self.external = external
        # Longest first: an output's path may lie inside the run folder's.
        self.pairs = sorted([(str(run_dir), self.folder)] +
                            [(local, f"{self.folder}/external_outputs/{name}") for name, local in external.items()],
                            key=lambda pair: -len(pair[0]))
        self.processes: list[RemoteProcess] = []
        self.env: dict[str, str] = {}  # the job's variables on the node, once its environment is built
        self.unreachable_since: float | None = None

    @property
    def name(self) -> str:
        return f"{self.where['hostname']} ({self.where['ip']}, Ray node {self.where['node_id'][:8]})"

    def relocate(self, text: str) -> str:
        for local, remote in self.pairs:
            text = re.sub(re.escape(local) + r"(?=/|$|[^\w.-])", lambda _: remote, text)
        return text


class ClusterHost:
    """A job's processes on a Ray cluster's nodes (runner.command.Host)."""

    def __init__(self, run_dir: Path, plan: CommandPlan, log: Log, agents: list[Agent], group: Any) -> None:
        self.run_dir = run_dir
        self.plan = plan
        self.log = log
        self.agents = agents
        self.group = group
        self.last_poll = 0.0
        self.lost_reason: str | None = None
        self.released = False
        self.ended = False  # every process of the job has ended

    # -- placing -----------------------------------------------------------------------------

    @classmethod
    def place(cls, run_dir: Path, plan: CommandPlan, env: dict[str, str], log: Log, cancel: Cancel,
              nodes: int) -> "ClusterHost | None":
        """Start the job's agents on the cluster, give them the job's files and build its
        environment there; None when the job was canceled meanwhile."""
        import ray
        from ray.util.placement_group import placement_group
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        from .cluster_node import NodeAgent

        connect(plan.compute["address"])
        layout = plan.distribution or {}
        count = nodes if layout.get("type") == "pytorch" else 1
        if layout and count != nodes:
            log(f"cluster: a {layout['type']} job runs all its nodes' processes on one cluster node "
                "(aml-run spreads pytorch jobs across nodes)")
        group = None
        if count > 1:
            alive = sum(1 for node in ray.nodes() if node.get("Alive"))
            strategy = "STRICT_SPREAD" if alive >= count else "SPREAD"
            if strategy == "SPREAD":
                log(f"cluster: {count} nodes asked and the cluster has {alive}: some nodes share a machine")
            group = placement_group([{"CPU": 1}] * count, strategy=strategy)
            if _wait([group.ready()], cancel, log, "reserving the job's nodes") is None:
                cls._abandon([], group)
                return None
            actors = [NodeAgent.options(scheduling_strategy=PlacementGroupSchedulingStrategy(
                group, placement_group_bundle_index=index)).remote() for index in range(count)]
        else:
            # An agent an ended job of this supervisor left (a sweep's earlier trial) saves starting
            # a worker process; a new one goes where Ray's SPREAD puts it.
            actors = [_POOL.take() or NodeAgent.options(scheduling_strategy="SPREAD").remote()]
        host = None
        try:
            found = _wait([actor.open.remote(plan.name) for actor in actors], cancel, log, "placing the job")
            if found is None:
                cls._abandon(actors, group)
                return None
            host = cls(run_dir, plan, log, [Agent(actor, where, run_dir, _external_outputs(plan, run_dir))
                                            for actor, where in zip(actors, found)], group)
            _POOL.busy(host.agents)
            for index, agent in enumerate(host.agents):
                log(f"cluster: node {index} of the job is {agent.name}, in {agent.folder}")
            status.update(run_dir, cluster={"address": plan.compute["address"],
                                            "nodes": [dict(agent.where) for agent in host.agents]})
            if not host._ship(cancel):
                host.release()
                return None
            return host
        except BaseException:
            if host is not None:
                _POOL.done(host.agents, reusable=False)
            cls._abandon(actors, group)
            raise

    def _ship(self, cancel: Cancel) -> bool:
        import ray

        bundle = ray.put(_bundle(self.run_dir))
        if _wait([agent.actor.receive.remote(bundle) for agent in self.agents], cancel, self.log,
                 "sending the job's files to its nodes") is None:
            return False
        answers = _wait([agent.actor.environment.remote(self.plan.environment) for agent in self.agents],
                        cancel, self.log, "building the job's environment on its nodes")
        if answers is None:
            return False
        for agent, (node_env, said) in zip(self.agents, answers):
            agent.env = node_env
            for line in said:
                self.log(f"{agent.where['hostname']}: {line}")
        return True

    @staticmethod
    def _abandon(actors: list[Any], group: Any) -> None:
        import ray
        from ray.util.placement_group import remove_placement_group

        for actor in actors:
            ray.kill(actor)
        if group is not None:
            remove_placement_group(group)

    # -- runner.command.Host -----------------------------------------------------------------

    def lay_out(self, layout: dict[str, Any]) -> dict[str, Any]:
        if layout["type"] != "pytorch" or len(self.agents) < 2:
            return layout
        import ray

        first = self.agents[0]
        port = ray.get(first.actor.free_port.remote(), timeout=ANSWER_TIMEOUT)
        return dict(layout, endpoint=f"{first.where['ip']}:{port}")

    def start(self, launch: distributed.Launch, cwd: Path) -> None:
        import ray

        agent = self._agent_for(launch)
        key = f"launch{sum(len(each.processes) for each in self.agents)}"
        # The node's own variables and interpreter, then what the launch adds to this machine's
        # (its paths moved to the node's copy), and the spec's environment_variables last, as here.
        env = dict(agent.env)
        env.update({name: agent.relocate(value) for name, value in launch.env.items()
                    if os.environ.get(name) != value and name not in ("PATH", "VIRTUAL_ENV")})
        env.update({name: agent.relocate(value) for name, value in (self.plan.environment_variables or {}).items()})
        argv = [agent.relocate(part) for part in launch.argv]
        launch.process = RemoteProcess(self, key, -1)
        agent.processes.append(launch.process)
        # Ray may call an actor unavailable for a moment ("the task may or may not have been
        # executed"): the agent's start is idempotent per key, so asking again is safe, for as
        # long as a node may be unreachable. A node lost before the process started loses the
        # process as after (its return code is set): the same rule as a poll's.
        while launch.process.returncode is None:
            try:
                launch.process.pid = launch.pgid = ray.get(
                    agent.actor.start.remote(key, argv, env, agent.relocate(str(launch.log))), timeout=ANSWER_TIMEOUT)
                agent.unreachable_since = None
                return
            except ray.exceptions.ActorUnavailableError as error:
                self._lose(agent, error, transient=True)
                if launch.process.returncode is None:
                    time.sleep(0.5)
            except (ray.exceptions.RayError, ray.exceptions.GetTimeoutError) as error:
                self._lose(agent, error)

    def _agent_for(self, launch: distributed.Launch) -> Agent:
        rank = launch.env.get("NODE_RANK")
        if rank is not None and rank.isdigit() and int(rank) < len(self.agents):
            return self.agents[int(rank)]
        return self.agents[0]

    def record(self, run_dir: Path, launches: list[distributed.Launch]) -> None:
        nodes = [dict(agent.where, guards=[process.pid for process in agent.processes if process.pid > 0])
                 for agent in self.agents]
        status.update(run_dir, command_ended=False, cluster={"address": self.plan.compute["address"], "nodes": nodes})

    def refresh(self, force: bool = False) -> None:
        """Ask every node what ended and what its logs say now (at most every POLL_PERIOD)."""
        if not force and time.monotonic() - self.last_poll < POLL_PERIOD:
            return
        self.last_poll = time.monotonic()
        import ray

        for agent in self.agents:
            if all(process.returncode is not None for process in agent.processes):
                continue
            try:
                answer = ray.get(agent.actor.poll.remote(), timeout=ANSWER_TIMEOUT)
            except ray.exceptions.ActorUnavailableError as error:
                self._lose(agent, error, transient=True)
                continue
            except (ray.exceptions.RayError, ray.exceptions.GetTimeoutError) as error:
                self._lose(agent, error)
                continue
            agent.unreachable_since = None
            self._append(answer["logs"])
            for process in agent.processes:
                said = answer["ended"].get(process.key)
                if said is not None and process.returncode is None:
                    process.returncode = exit_code(said)
        if not self.ended and all(process.returncode is not None for agent in self.agents for process in agent.processes):
            self.ended = True
            status.update(self.run_dir, command_ended=True)

    def _lose(self, agent: Agent, error: BaseException, transient: bool = False) -> None:
        """The node of ``agent`` is gone: its processes count as killed. ``transient``: Ray says
        the actor is only unreachable for now; a node that stays so for UNREACHABLE_GRACE is lost."""
        if transient:
            agent.unreachable_since = agent.unreachable_since or time.monotonic()
            if time.monotonic() - agent.unreachable_since < UNREACHABLE_GRACE:
                return
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        reason = reason if len(reason) <= 200 else reason[:200] + "..."
        if self.lost_reason is None:
            self.lost_reason = (f"node {agent.name} was lost while the job ran ({type(error).__name__}: {reason}); "
                                "the job's processes there are gone")
            self.log(f"cluster: {self.lost_reason}")
        for process in agent.processes:
            if process.returncode is None:
                process.returncode = -9

    def _append(self, logs: dict[str, bytes]) -> None:
        for relative, chunk in logs.items():
            target = self.run_dir / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "ab") as out:
                out.write(chunk)

    def stop(self, launches: list[distributed.Launch], grace: float) -> None:
        import ray

        running = [agent for agent in self.agents if any(process.returncode is None for process in agent.processes)]
        for agent in running:
            try:
                ray.get(agent.actor.stop.remote(), timeout=ANSWER_TIMEOUT)
            except (ray.exceptions.RayError, ray.exceptions.GetTimeoutError) as error:
                self._lose(agent, error)
        # Each guard gives its group 5 s after SIGTERM, then SIGKILL; a node silent well past that is lost.
        deadline = time.monotonic() + 5.0 + ANSWER_TIMEOUT
        while time.monotonic() < deadline:
            self.refresh(force=True)
            if all(launch.process.returncode is not None for launch in launches):
                return
            time.sleep(POLL_PERIOD)
        for agent in running:
            self._lose(agent, TimeoutError("its processes did not stop"))

    def end(self, run_dir: Path, keep: frozenset[int], alone: bool) -> int:
        """Bring the job's outputs and logs back, and free its nodes."""
        import ray

        for agent in self.agents:
            if self.lost_reason and all(process.returncode == -9 for process in agent.processes):
                continue
            try:
                archive = ray.get(agent.actor.collect.remote(), timeout=ANSWER_TIMEOUT * 5)
            except (ray.exceptions.RayError, ray.exceptions.GetTimeoutError) as error:
                self._lose(agent, error)
                continue
            _unpack(archive, run_dir, agent.external)
        self.release()
        return 0

    def lost(self) -> str | None:
        return self.lost_reason

    def release(self) -> None:
        """Stop the job's agents (each deletes its copy of the run folder) and free its nodes."""
        if self.released:
            return
        self.released = True
        import ray

        closing = [agent.actor.close.remote() for agent in self.agents]
        closed, _ = ray.wait(closing, num_returns=len(closing), timeout=30)
        reusable = self.group is None and self.lost_reason is None and len(closed) == len(closing)
        if reusable:
            try:
                ray.get(closed)
            except ray.exceptions.RayError:
                reusable = False
        _POOL.done(self.agents, reusable)
        if not reusable:
            self._abandon([agent.actor for agent in self.agents], self.group)


class AgentPool:
    """The agents of this supervisor's ended single-node jobs, kept for its next ones (they hold a
    CPU of their node each, until the supervisor ends). The next job takes the idle agent on the
    node this supervisor runs least on now, so that trials keep spreading."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.idle: list[tuple[Any, str]] = []
        self.running: dict[str, int] = {}

    def take(self) -> Any:
        """An idle agent that answers, or None."""
        import ray

        while True:
            with self.lock:
                if not self.idle:
                    return None
                chosen = min(self.idle, key=lambda entry: self.running.get(entry[1], 0))
                self.idle.remove(chosen)
            try:  # its node may have gone while it was idle
                ray.get(chosen[0].where.remote(), timeout=10)
                return chosen[0]
            except (ray.exceptions.RayError, ray.exceptions.GetTimeoutError):
                ray.kill(chosen[0])

    def busy(self, agents: list["Agent"]) -> None:
        with self.lock:
            for agent in agents:
                self.running[agent.where["node_id"]] = self.running.get(agent.where["node_id"], 0) + 1

    def done(self, agents: list["Agent"], reusable: bool) -> None:
        with self.lock:
            for agent in agents:
                self.running[agent.where["node_id"]] -= 1
                if reusable:
                    self.idle.append((agent.actor, agent.where["node_id"]))


_POOL = AgentPool()


def _wait(refs: list[Any], cancel: Cancel, log: Log, what: str) -> list[Any] | None:
    """The values of ``refs``, or None as soon as the job is canceled (``what``: what they are
    doing, for the log)."""
    import ray

    started = time.monotonic()
    told = False
    pending = list(refs)
    while pending:
        if cancel.requested:
            return None
        _, pending = ray.wait(pending, num_returns=len(pending), timeout=0.2)
        if pending and not told and time.monotonic() - started > PLACEMENT_NOTICE:
            log(f"cluster: still {what}")
            told = True
    try:
        return ray.get(refs)
    except ray.exceptions.RayError as error:
        raise RunnerError(f"cluster: {what} failed: {_said(error)}") from None


def _said(error: BaseException) -> str:
    """What went wrong, in the remote exception's own words (Ray wraps it with its traceback)."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, BaseException) and str(cause):
        return str(cause)
    lines = [line for line in str(error).splitlines() if line.strip()]
    return lines[-1].strip() if lines else type(error).__name__


def _external_outputs(plan: CommandPlan, run_dir: Path) -> dict[str, str]:
    """Outputs written outside the run folder (a datastore path): name -> local path."""
    found = {}
    for name, planned in plan.outputs.items():
        path = planned.get("path")
        if path and not Path(path).is_relative_to(run_dir):
            found[name] = str(path)
    return found


def _bundle(run_dir: Path) -> bytes:
    """The job's files a node needs: the code snapshot, the inputs and the output folders."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for folder in ("wd", "inputs", "outputs"):
            if (run_dir / folder).exists():
                archive.add(run_dir / folder, arcname=folder)
        external = tarfile.TarInfo("external_outputs")
        external.type = tarfile.DIRTYPE
        external.mode = 0o755
        archive.addfile(external)
    return buffer.getvalue()


def _unpack(archive: bytes, run_dir: Path, external: dict[str, str]) -> None:
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r") as tar:
        tar.extractall(run_dir, filter="tar")
    for name, local in external.items():
        came = run_dir / "external_outputs" / name
        if came.is_dir():
            shutil.copytree(came, local, dirs_exist_ok=True)
        elif came.is_file():
            Path(local).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(came, local)
    shutil.rmtree(run_dir / "external_outputs", ignore_errors=True)


class LoopbackCluster:
    """A Ray cluster of ``nodes`` nodes on this machine (`ray start --head`, then `ray start
    --address` for each further node, as on separate machines): for trying a ray compute, the
    tests and bench/cluster_sweep.py. A context manager; on exit it stops this cluster's
    processes only (`ray stop` would stop every Ray on the machine)."""

    def __init__(self, nodes: int = 2, cpus: int = 2) -> None:
        self.nodes = nodes
        self.cpus = cpus
        self.temp = ""
        self.address = ""

    def __enter__(self) -> "LoopbackCluster":
        import sys
        import tempfile

        ray = str(Path(sys.executable).parent / "ray")
        # Ray's socket paths must stay short (an AF_UNIX path is at most 107 bytes).
        self.temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")
        self.address = f"127.0.0.1:{distributed.free_port()}"
        env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
        starts = [[ray, "start", "--head", "--port", self.address.rsplit(":", 1)[1], "--include-dashboard=false",
                   "--temp-dir", self.temp]]
        starts += [[ray, "start", "--address", self.address]] * (self.nodes - 1)
        for argv in starts:
            started = subprocess.run([*argv, "--num-cpus", str(self.cpus), "--disable-usage-stats"], env=env,
                                     capture_output=True, text=True, timeout=180)
            if started.returncode != 0:
                self.__exit__()
                raise RunnerError(f"`{' '.join(argv[1:])}` failed: {started.stderr.strip()[-2000:]}")
        return self

    def __exit__(self, *_: object) -> None:
        import signal

        for pid in self._processes_mentioning(self.temp):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.temp, ignore_errors=True)

    def is_head(self, node_id: str) -> bool:
        return any(b"--head" in argv for argv in self._raylets(node_id).values())

    def kill_node(self, node_id: str) -> None:
        """Take a worker node away at once (SIGKILL to its raylet), as a machine that dies."""
        import signal

        if self.is_head(node_id):
            raise RunnerError("the head node holds the cluster; kill a worker node")
        for pid in self._raylets(node_id):
            os.kill(pid, signal.SIGKILL)

    def _raylets(self, node_id: str) -> dict[int, bytes]:
        return {pid: argv for pid, argv in self._processes_mentioning(f"--node_id={node_id}").items()
                if b"raylet" in argv.split(b"\0", 1)[0]}

    def _processes_mentioning(self, text: str) -> dict[int, bytes]:
        found = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if text.encode() in argv:
                found[int(entry)] = argv
        return found
