"""Distributed command jobs: ``distribution: pytorch | tensorflow | mpi`` across simulated nodes.

What the service does on ``resources.instance_count`` nodes, done here with real processes:

pytorch     every node runs ``process_count_per_instance`` copies of the command. amllab starts
            one PyTorch elastic agent (``python -m torch.distributed.run``, the launcher behind
            torchrun) per node; the agents meet in torch's static TCP rendezvous at
            MASTER_ADDR:MASTER_PORT, and each starts its node's workers with RANK, LOCAL_RANK,
            WORLD_SIZE, GROUP_RANK, MASTER_ADDR and MASTER_PORT set by torch. The static
            rendezvous is the one that keeps a node's rank fixed, as on Azure ML, where node k
            always has NODE_RANK k; torch's c10d rendezvous orders nodes by host name and pid
            instead. The same agent, given ``--nodes``, ``--node-rank`` and ``--rdzv-endpoint``,
            joins agents on other machines.
tensorflow  ``worker_count`` workers (default: one per node) and ``parameter_server_count``
            parameter servers, each one process with its TF_CONFIG (cluster and task) as the
            service builds it; the job ends when every worker has ended (parameter servers
            serve forever in TensorFlow, so they are stopped then).
mpi         Open MPI's ``mpirun`` starts nodes × ``process_count_per_instance`` ranks; Open MPI
            sets OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK and _LOCAL_SIZE itself. On one machine
            every rank is local, so the LOCAL values span the whole job.

Every rank's output goes to ``logs/rank_<k>.txt`` in the run folder, and a rank that ends
writes its exit status beside it (``rank_<k>.exit``): the first rank to fail is the one the
job's error names, with the tail of its log.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .errors import RunnerError

FRAMEWORKS = ("pytorch", "tensorflow", "mpi")
RANK_LOGS = "logs"
# Open MPI refuses to run as root unless told both of these (containers often are root).
_MPI_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


@dataclass(frozen=True)
class MultiNode:
    """This machine's share of a job that spans machines (``aml-run job create --nodes N
    --node-rank K --rdzv-endpoint HOST:PORT``)."""

    nodes: int
    node_rank: int
    endpoint: str


@dataclass
class Launch:
    """One process amllab starts for a job: the command itself, a node's launcher agent, a
    TensorFlow task or ``mpirun``. ``required``: it must end with 0 for the job to complete;
    the others (parameter servers) are stopped once the required ones are done. ``ranked``: its
    processes are ranks that write ``logs/rank_<k>`` (everything but a plain command)."""

    argv: list[str]
    env: dict[str, str]
    log: Path
    role: str
    required: bool = True
    ranked: bool = True
    pgid: int = 0
    process: Any = field(default=None, repr=False)


def plan_distribution(distribution: dict[str, Any] | None, resources: dict[str, Any], where: Path,
                      multi_node: MultiNode | None = None) -> dict[str, Any] | None:
    """The distributed layout of a job, or None when it is one process. Raises RunnerError for
    what cannot run here, naming the field to change."""
    count = resources.get("instance_count", 1) if isinstance(resources, dict) else 1
    nodes = count if isinstance(count, int) and not isinstance(count, bool) and count >= 1 else 1
    if not distribution:
        if multi_node is not None:
            raise RunnerError(f"{where}: --nodes/--node-rank/--rdzv-endpoint are for distributed jobs; "
                              "this one has no `distribution`")
        if nodes > 1:
            # The service would run the command once per node with no framework variables;
            # running it once here and calling that the job would teach the wrong thing.
            raise RunnerError(f"{where}: resources.instance_count is {nodes} but the job has no "
                              "`distribution`; add `distribution: {type: pytorch}` (or mpi, tensorflow) "
                              "for a multi-node job, or drop instance_count to run one process")
        return None
    kind = str(distribution.get("type", "")).lower()
    if kind not in FRAMEWORKS:
        raise RunnerError(f"{where}: distribution.type {kind or '(none)'!r} cannot run here; aml-run runs "
                          f"{', '.join(FRAMEWORKS)}")
    per_node = _positive(distribution.get("process_count_per_instance", 1), "distribution.process_count_per_instance", where)
    plan: dict[str, Any] = {"type": kind, "nodes": nodes, "per_node": per_node,
                            "local_nodes": list(range(nodes)), "endpoint": None, "max_restarts": 0}
    if kind == "mpi":
        mpirun()  # refused at submission, before anything runs, when Open MPI is missing
    if kind == "tensorflow":
        plan["per_node"] = 1
        plan["workers"] = _positive(distribution.get("worker_count", nodes), "distribution.worker_count", where)
        ps = distribution.get("parameter_server_count", 0)
        if not isinstance(ps, int) or isinstance(ps, bool) or ps < 0:
            raise RunnerError(f"{where}: distribution.parameter_server_count must be 0 or more, not {ps!r}")
        plan["parameter_servers"] = ps
    if multi_node is not None:
        if kind != "pytorch":
            raise RunnerError(f"{where}: --nodes/--node-rank/--rdzv-endpoint run a pytorch job across "
                              f"machines; a {kind} job runs all its nodes on this machine here")
        if multi_node.nodes != nodes:
            raise RunnerError(f"{where}: --nodes is {multi_node.nodes} but resources.instance_count is {nodes}; "
                              f"make them agree (--set resources.instance_count={multi_node.nodes})")
        if not 0 <= multi_node.node_rank < nodes:
            raise RunnerError(f"{where}: --node-rank {multi_node.node_rank} is outside 0..{nodes - 1}")
        host, _, port = multi_node.endpoint.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise RunnerError(f"{where}: --rdzv-endpoint {multi_node.endpoint!r} is not HOST:PORT "
                              "(the address of node 0, where the rendezvous listens)")
        plan["local_nodes"] = [multi_node.node_rank]
        plan["endpoint"] = multi_node.endpoint
    return plan


def _positive(value: Any, name: str, where: Path) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise RunnerError(f"{where}: {name} must be a whole number of at least 1, not {value!r}")
    return value


def describe(plan: dict[str, Any]) -> str:
    if plan["type"] == "tensorflow":
        return (f"tensorflow: {plan['workers']} worker(s) and {plan['parameter_servers']} parameter "
                f"server(s) on {plan['nodes']} node(s)")
    share = "" if len(plan["local_nodes"]) == plan["nodes"] else \
        f"; this machine is node {plan['local_nodes'][0]}, rendezvous at {plan['endpoint']}"
    return (f"{plan['type']}: {plan['nodes']} node(s) x {plan['per_node']} process(es) = "
            f"{plan['nodes'] * plan['per_node']} ranks{share}")


def local_processes(plan: dict[str, Any]) -> int:
    if plan["type"] == "tensorflow":
        return plan["workers"] + plan["parameter_servers"]
    return len(plan["local_nodes"]) * plan["per_node"]


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def _rank_script(command: str, rank_variable: str) -> str:
    """What each rank runs: its output into its own log, its exit status beside it (an EXIT
    trap runs on ``exit`` and on a normal end; a rank killed outright leaves no status, which
    is how a failing rank is told from the ones stopped because of it)."""
    return (f'R="${{{rank_variable}}}"\n'
            'export AZUREML_PROCESS_NAME="rank_$R"\n'
            f'exec >>"$AMLLAB_RANK_LOGS/rank_$R.txt" 2>&1\n'
            'trap \'echo $? >"$AMLLAB_RANK_LOGS/rank_$R.exit"\' EXIT\n'
            # Stopped by a signal (the job was canceled, or another rank failed): no status.
            # Without these, bash would run the EXIT trap with the status of its last builtin, 0.
            "trap 'trap - EXIT; exit 143' TERM; trap 'trap - EXIT; exit 130' INT; "
            "trap 'trap - EXIT; exit 129' HUP\n"
            f'{command}\n')


def launches(distribution: dict[str, Any], command: str, env: Mapping[str, str], run_dir: Path,
             python: str) -> list[Launch]:
    """The processes to start for this machine's share of the job laid out as ``distribution``
    (a plan's, from :func:`plan_distribution`)."""
    logs = run_dir / RANK_LOGS
    logs.mkdir(parents=True, exist_ok=True)
    for stale in logs.glob("rank_*.exit"):  # a re-run after preemption starts with no verdicts
        stale.unlink()
    base = dict(env)
    base["AMLLAB_RANK_LOGS"] = str(logs)
    base.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // local_processes(distribution))))
    kind = distribution["type"]
    system = run_dir / "system_logs"
    if kind == "pytorch":
        return _pytorch(distribution, command, base, system, python)
    if kind == "tensorflow":
        return _tensorflow(distribution, command, base, system)
    return _mpi(distribution, command, base, system)


def _pytorch(plan: dict[str, Any], command: str, env: dict[str, str], system: Path, python: str) -> list[Launch]:
    if plan["endpoint"]:
        host, _, port = plan["endpoint"].rpartition(":")
    else:
        host, port = "127.0.0.1", str(free_port())
    result = []
    for node in plan["local_nodes"]:
        node_env = dict(env, NODE_RANK=str(node), AZUREML_CR_NODE_RANK=str(node))
        argv = [python, "-m", "torch.distributed.run",
                "--nnodes", str(plan["nodes"]), "--node-rank", str(node),
                "--nproc-per-node", str(plan["per_node"]),
                "--rdzv-backend", "static", "--master-addr", host, "--master-port", port,
                "--max-restarts", str(plan["max_restarts"]),
                "--no-python", "bash", "-c", _rank_script(command, "RANK")]
        result.append(Launch(argv, node_env, system / f"launcher_node_{node}.txt", f"node {node}"))
    return result


def tf_config(workers: list[str], parameter_servers: list[str], task_type: str, index: int) -> str:
    """TF_CONFIG as the service sets it for one task (``environment: cloud``)."""
    cluster: dict[str, list[str]] = {"worker": workers}
    if parameter_servers:
        cluster["ps"] = parameter_servers
    return json.dumps({"cluster": cluster, "task": {"type": task_type, "index": index}, "environment": "cloud"})


def _tensorflow(plan: dict[str, Any], command: str, env: dict[str, str], system: Path) -> list[Launch]:
    workers = [f"127.0.0.1:{free_port()}" for _ in range(plan["workers"])]
    servers = [f"127.0.0.1:{free_port()}" for _ in range(plan["parameter_servers"])]
    tasks = [("worker", i) for i in range(len(workers))] + [("ps", i) for i in range(len(servers))]
    result = []
    for rank, (task_type, index) in enumerate(tasks):
        node = rank % plan["nodes"]
        task_env = dict(env, TF_CONFIG=tf_config(workers, servers, task_type, index), AMLLAB_RANK=str(rank),
                        AZUREML_CR_NODE_RANK=str(node))
        result.append(Launch(["bash", "-c", _rank_script(command, "AMLLAB_RANK")], task_env,
                             system / f"launcher_{task_type}_{index}.txt", f"{task_type} {index}",
                             required=task_type == "worker"))
    return result


def mpirun() -> str:
    found = shutil.which("mpirun")
    if found is None:
        raise RunnerError("distribution type mpi needs Open MPI's mpirun, which is not installed: "
                          "apt-get install openmpi-bin (Debian, Ubuntu)")
    return found


def _mpi(plan: dict[str, Any], command: str, env: dict[str, str], system: Path) -> list[Launch]:
    ranks = plan["nodes"] * plan["per_node"]
    master = f"127.0.0.1:{free_port()}"
    mpi_env = dict(env, AZ_BATCH_MASTER_NODE=master, AZ_BATCHAI_MPI_MASTER_NODE="127.0.0.1",
                   AZ_BATCH_HOST_LIST=",".join(["127.0.0.1"] * plan["nodes"]))
    if os.geteuid() == 0:
        mpi_env.update(_MPI_ROOT)
    # --oversubscribe: more ranks than cores is what a simulated cluster on a laptop is;
    # --bind-to none: ranks of simulated nodes must not be pinned onto the same few cores.
    argv = [mpirun(), "-np", str(ranks), "--oversubscribe", "--bind-to", "none",
            "bash", "-c", _rank_script(command, "OMPI_COMM_WORLD_RANK")]
    return [Launch(argv, mpi_env, system / "launcher_mpirun.txt", "mpirun")]


# -- after the fact ----------------------------------------------------------------------------

_EXIT = re.compile(r"rank_(\d+)\.exit$")


def first_failed_rank(run_dir: Path) -> tuple[int, int] | None:
    """(rank, exit status) of the rank that failed first, from the statuses the ranks wrote."""
    failures = []
    for path in (run_dir / RANK_LOGS).glob("rank_*.exit"):
        try:
            code = int(path.read_text().strip() or "0")
        except (OSError, ValueError):
            continue
        if code != 0:
            failures.append((path.stat().st_mtime_ns, int(_EXIT.search(path.name).group(1)), code))
    if not failures:
        return None
    _, rank, code = min(failures)
    return rank, code


def log_tail(path: Path, lines: int = 10) -> str:
    """The last ``lines`` non-blank lines of a log: for a Python script, the traceback's last
    frames and the exception line, which is what a failed job's error should show."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    meaningful = [line.rstrip() for line in text.splitlines() if line.strip()]
    return "\n".join(meaningful[-lines:])


def failure(run_dir: Path, failed: Launch, code: int) -> dict[str, str]:
    """The job's error when a distributed job fails: the first rank that failed, its exit
    status and the end of its log, or (when no rank said) the launcher that failed."""
    found = first_failed_rank(run_dir)
    if found is not None:
        rank, status = found
        log = run_dir / RANK_LOGS / f"rank_{rank}.txt"
        tail = log_tail(log)
        return {"code": "UserError",
                "message": f"rank {rank} exited with code {status}; the job was stopped on every node. "
                           f"End of {log}:\n{tail}" if tail else
                           f"rank {rank} exited with code {status}; see {log}",
                "rank": str(rank)}
    tail = log_tail(failed.log)
    return {"code": "UserError",
            "message": f"{failed.role}'s launcher exited with code {code} before any rank failed; "
                       f"end of {failed.log}:\n{tail}"}


def torch_available(python: str) -> bool:
    """Whether ``python`` can import torch (a cheap look, not an import)."""
    import importlib.util
    import sys

    if os.path.realpath(python) == os.path.realpath(sys.executable):
        return importlib.util.find_spec("torch") is not None
    probe = subprocess.run([python, "-c", "import importlib.util, sys; "
                            "sys.exit(importlib.util.find_spec('torch') is None)"],
                           capture_output=True, timeout=60)
    return probe.returncode == 0
