"""What runs on a cluster's node for one job: :class:`NodeAgent`, a Ray actor.

The supervisor (runner/cluster.py) creates one agent per node a job runs on. The agent holds
the job's run folder on its node, in a scratch folder of its own (``<cache>/cluster-runs/``),
laid out as the run folder in the workspace is (``wd/``, ``inputs/``, ``outputs/``, logs), so
that the job's paths move from one to the other by their prefix. It:

- receives the job's files (the code snapshot, the materialised inputs) as a tar archive;
- builds the job's environment on its node, in its node's cache, as `job create` does here;
- starts each process under a guard (runner/cluster_guard.py) that outlives the agent only to
  stop the process when the agent is gone;
- hands back what is new in the job's logs while it runs, and at the end its outputs, logs and
  named outputs, again as a tar archive; then deletes its scratch folder.

Nothing here needs the workspace: a node sees only what it was sent.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import ray

from validator import __version__

from . import distributed, process
from .cache import cache_dir
from .interpreter import host_variables, interpreter_variables, prepare_environment

# The folders of the node's run folder whose files grow while the job runs (its logs).
STREAMED = ("user_logs", distributed.RANK_LOGS, "system_logs")
# What comes back into the workspace when the job ends: what the service keeps of a job.
RETURNED = ("wd/outputs", "wd/logs", "outputs", "external_outputs", *STREAMED)
# At most this much of one log per poll: a chatty job cannot stall the supervisor's loop.
CHUNK = 1 << 20


def scratch_root() -> Path:
    return cache_dir() / "cluster-runs"


@ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)
class NodeAgent:
    def __init__(self) -> None:
        self.folder: Path | None = None
        self.guards: dict[str, dict[str, str]] = {}
        self.offsets: dict[str, int] = {}
        self.node: dict[str, Any] = {}

    def open(self, job: str) -> dict[str, Any]:
        """Take on ``job`` (an agent runs one job at a time, and the supervisor gives it the next
        one when this one is closed): a fresh copy of its run folder; returns where it is."""
        scratch_root().mkdir(parents=True, exist_ok=True)
        self.folder = Path(tempfile.mkdtemp(prefix=f"{job}-", dir=scratch_root()))
        self.guards, self.offsets = {}, {}
        return self.where()

    def where(self) -> dict[str, Any]:
        if not self.node:
            node_id = ray.get_runtime_context().get_node_id()
            # The address the node joined the cluster with (`ray start --node-ip-address`), which
            # is how the other nodes reach it.
            ip = next((node["NodeManagerAddress"] for node in ray.nodes() if node["NodeID"] == node_id),
                      ray.util.get_node_ip_address())
            self.node = {"node_id": node_id, "ip": ip, "hostname": socket.gethostname(), "pid": os.getpid(),
                         "amllab": __version__, "python": "%d.%d.%d" % sys.version_info[:3]}
        return {**self.node, "folder": str(self.folder)}

    def receive(self, bundle: bytes) -> None:
        with tarfile.open(fileobj=io.BytesIO(bundle), mode="r") as archive:
            archive.extractall(self.folder, filter="tar")
        for folder in STREAMED:  # where the job's processes write their logs, as in a run folder
            (self.folder / folder).mkdir(exist_ok=True)

    def environment(self, environment: dict[str, Any]) -> tuple[dict[str, str], list[str]]:
        """Build the job's environment on this node (or reuse this node's build of it) and
        return the variables a job's process starts from here (the job's own come with each
        process), with what the build said."""
        said: list[str] = []
        interpreter, extra = prepare_environment(environment, said.append, self.folder)
        # The node's own machine variables, as a job here gets this machine's: none of the Ray
        # worker's own (a job that starts its own Ray must not join this cluster by accident, and
        # Ray's OMP_NUM_THREADS=1, one per actor CPU, would slow a job's torch to one thread).
        env = host_variables()
        env.update(interpreter_variables(interpreter, extra, os.environ.get("PATH")))
        where = self.where()
        env.update(AMLLAB_NODE_ID=where["node_id"], AMLLAB_NODE_IP=where["ip"])
        return env, said

    def free_port(self) -> int:
        return distributed.free_port("")

    def start(self, key: str, argv: list[str], env: dict[str, str], log: str, grace: float = 5.0) -> int:
        """Start one process under its guard; returns the guard's pid. Asked again for a
        ``key`` it has started (the supervisor retries a call Ray could not confirm), it
        starts nothing and answers the same pid."""
        if key in self.guards:
            return int(Path(self.guards[key]["pid_file"]).read_text())
        guards = self.folder / ".guards"
        guards.mkdir(exist_ok=True)
        files = {"pid_file": str(guards / f"{key}.pid"), "exit_file": str(guards / f"{key}.exit")}
        spec = {"argv": argv, "env": env, "cwd": str(self.folder / "wd"), "log": log, "grace": grace,
                "folder": str(self.folder),
                "watch_pid": os.getpid(), "watch_ticks": process.start_ticks(os.getpid()), **files}
        (guards / f"{key}.json").write_text(json.dumps(spec))
        # The first process exits at once (the guard forks away from this actor): wait for it.
        with open(guards / f"{key}.log", "ab") as said:
            subprocess.run(process.python_module("runner.cluster_guard", str(guards / f"{key}.json")),
                           stdin=subprocess.DEVNULL, stdout=said, stderr=said, check=True, timeout=60)
        deadline = time.monotonic() + 30
        while not Path(files["pid_file"]).is_file():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the guard of {key} did not start on {socket.gethostname()}")
            time.sleep(0.01)
        self.guards[key] = files
        return int(Path(files["pid_file"]).read_text())

    def poll(self) -> dict[str, Any]:
        """The processes that ended (their exit status, or ``owner-gone``) and what is new in
        the job's logs since the last poll."""
        ended = {}
        for key, files in self.guards.items():
            try:
                ended[key] = Path(files["exit_file"]).read_text().strip()
            except OSError:
                continue
        return {"ended": ended, "logs": self._new_log_bytes()}

    def _new_log_bytes(self) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        for folder in STREAMED:
            for path in sorted((self.folder / folder).glob("*")):
                if not path.is_file():
                    continue
                relative = str(path.relative_to(self.folder))
                offset = self.offsets.get(relative, 0)
                with open(path, "rb") as handle:
                    handle.seek(offset)
                    chunk = handle.read(CHUNK)
                if chunk:
                    found[relative] = chunk
                    self.offsets[relative] = offset + len(chunk)
        return found

    def stop(self) -> None:
        """Ask every guard to stop its process (SIGTERM, its grace, then SIGKILL)."""
        for files in self.guards.values():
            if Path(files["exit_file"]).is_file():
                continue
            try:
                os.kill(int(Path(files["pid_file"]).read_text()), signal.SIGTERM)
            except (OSError, ValueError):
                pass

    def collect(self) -> bytes:
        """What the job leaves that the workspace keeps, as a tar archive (once every process
        ended)."""
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as archive:
            for relative in RETURNED:
                path = self.folder / relative
                if path.exists():
                    archive.add(path, arcname=relative)
        return buffer.getvalue()

    def close(self) -> None:
        """Stop what still runs and delete the node's copy of the run folder."""
        self.stop()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not all(Path(files["exit_file"]).is_file()
                                                      for files in self.guards.values()):
            time.sleep(0.05)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
        self.folder, self.guards, self.offsets = None, {}, {}

