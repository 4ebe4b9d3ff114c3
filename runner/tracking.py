"""MLflow, as the service uses it: the runner creates the job's run, hands its id to the script
through ``MLFLOW_RUN_ID``, and afterwards sets the final status, logs ``./outputs`` and reads
the metrics back.

Importing MLflow and opening its store costs about two seconds, which would be most of a short
job's overhead. So the MLflow calls are made by a *tracking agent*: one small process per
workspace and tracking URI that keeps MLflow loaded, listens on an abstract Unix socket (no
file to go stale; the name is derived from the workspace path and the URI), serves one JSON
request per connection, and exits after ``AMLLAB_TRACKING_IDLE`` seconds (default 300) without
a request. It is the local stand-in for the service's tracking endpoint and is not part of
any job: cancelling or killing a job never touches it. ``AMLLAB_TRACKING_AGENT=0`` makes every
call in-process instead (slower, no helper process).

Requests: ``start_run``, ``end_run``, ``set_tags``, ``log_artifacts``, ``metrics``,
``metric_history``, ``metric_values``, ``ping``; :class:`Operations` implements them and both
paths call it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import socket
import threading
import time
from pathlib import Path
from typing import Any

from . import diskspace
from .cache import cache_dir
from .errors import RunnerError

DEFAULT_IDLE = 300.0
_START_TIMEOUT = 120.0
# How long one MLflow call may take before the job is told MLflow is not answering.
_TIMEOUTS = {"log_artifacts": 900.0, "ping": _START_TIMEOUT}
_DEFAULT_TIMEOUT = 120.0
# How long a direct read of a SQLite store retries while writers hold it, before MLflow is asked.
_READ_PATIENCE = 5.0
# A bulk metric read returns at most this many values in all (MLflow's store needs a bound).
_BULK_MAX = 10_000_000
# MLflow's own HTTP client retries seven times with backoff (minutes) before it gives up; a job
# waiting on an unreachable server should hear about it in seconds.
_AGENT_HTTP_DEFAULTS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2", "MLFLOW_HTTP_REQUEST_TIMEOUT": "30"}


def agent_address(workspace: Path, tracking_uri: str) -> str:
    """One agent per workspace folder and store. The folder's inode is part of the name: a
    workspace deleted and made again (rm -rf .amllab, then a new job) gets a new agent, while
    the old one, whose open database is the deleted file, idles out unused."""
    try:
        inode = workspace.stat().st_ino
    except OSError:
        inode = 0
    digest = hashlib.sha1(f"{workspace.resolve()}|{inode}|{tracking_uri}".encode()).hexdigest()[:20]
    return f"\0amllab-tracking-{digest}"


def is_local_store(tracking_uri: str) -> bool:
    return tracking_uri.startswith(("sqlite:", "file:")) or "://" not in tracking_uri


def seed_sqlite_store(tracking_uri: str) -> None:
    """Give a new workspace's SQLite store MLflow's tables from a copy rather than by migration.

    MLflow makes a new SQLite store by replaying its schema migrations, about 1.7 s of CPU, on
    the first job of every workspace (a lab, a test, a user's new folder). The empty schema is
    the same for every store of one MLflow version, so it is built once into the machine's
    cache and copied. Only the tables are copied: MLflow itself then adds the Default
    experiment for this store, as it does for a store it migrated, and checks the schema is
    current. Anything unexpected (another MLflow, no hard links) leaves the store to MLflow."""
    if not tracking_uri.startswith("sqlite:////") or "?" in tracking_uri:
        return
    target = Path(tracking_uri[len("sqlite:///"):])
    if target.exists() or not target.parent.is_dir():
        return
    template = _empty_store()
    if template is None:
        return
    staging = target.with_name(f".{target.name}.{os.getpid()}.seed")
    try:
        shutil.copyfile(template, staging)
        os.link(staging, target)  # never over a store another process made meanwhile
    except OSError:
        pass
    finally:
        staging.unlink(missing_ok=True)


def _empty_store() -> Path | None:
    """The cached empty store of this MLflow version, built on first use."""
    try:
        import mlflow
        import sqlalchemy
        # MLflow's own table set-up (what a new store runs); it has no public name.
        from mlflow.store.db.utils import _initialize_tables
    except ImportError:
        return None
    folder = cache_dir() / "mlflow"
    template = folder / f"empty-store-{mlflow.__version__}.db"
    if template.is_file():
        return template
    staging = folder / f".empty-store-{os.getpid()}-{threading.get_ident()}.db"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        engine = sqlalchemy.create_engine(f"sqlite:///{staging}")
        try:
            _initialize_tables(engine)
        finally:
            engine.dispose()
        os.replace(staging, template)
    except Exception:  # a cache that cannot be built only costs the migration it would save
        staging.unlink(missing_ok=True)
        return None
    return template


class StoreWatch:
    """A sweep controller's fast path to a local SQLite store: :meth:`changed` says, for the
    price of a stat and a 4-byte read, whether the store may hold rows it did not hold at the
    last look, so the controller reads its trials' metrics when one of them logged something
    rather than on a fixed period; :meth:`metric_values` reads them with one query of its own.

    SQLite increments the file change counter in the database header (bytes 24-27) at every
    commit in its default rollback-journal mode (https://www.sqlite.org/fileformat.html); in WAL
    mode commits go to the ``-wal`` file, whose size and time then change. File times alone are
    not enough: Linux stamps them from a clock that ticks every few milliseconds. A store that is
    not a local SQLite file (a tracking server) cannot be watched: ``watchable`` is False.

    The read goes around the tracking agent on purpose: the agent serves one request at a time,
    and a trial starting (its run and params) or ending (its artifacts) holds it for 100 to 300 ms
    on a busy machine, which at 50 ms per interval is the lag the read is there to avoid. It
    reads MLflow's ``metrics`` table read-only (``mode=ro``) with the standard library, as
    MLflow's own SQL store returns it (NaN is stored as 0 with ``is_nan``; infinities as the
    largest float); anything unexpected returns None and the caller asks MLflow instead."""

    def __init__(self, tracking_uri: str) -> None:
        path = tracking_uri[len("sqlite:///"):] if tracking_uri.startswith("sqlite:////") else None
        self.path = Path(path.partition("?")[0]) if path else None
        self._last: object = None

    @property
    def watchable(self) -> bool:
        return self.path is not None

    def changed(self) -> bool:
        """True at the first look, and whenever the store changed since the last one."""
        signature = self._signature()
        if signature == self._last:
            return False
        self._last = signature
        return True

    def metric_values(self, run_ids: list[str], key: str) -> dict[str, list[float]] | None:
        """What :meth:`Operations.metric_values` returns, read straight from the store; None
        when it cannot be (no store yet, another schema, a lock held past the timeout)."""
        if self.path is None or not run_ids:
            return None
        import sqlite3

        values: dict[str, list[float]] = {run_id: [] for run_id in run_ids}
        marks = ",".join("?" * len(run_ids))
        deadline = time.monotonic() + _READ_PATIENCE
        while True:
            try:
                # No busy timeout: SQLite's own handler backs off to 100 ms sleeps, and with
                # trials committing every few milliseconds a reader waiting that way can miss
                # every free moment for seconds (measured: up to 1.8 s with four trials logging
                # every 50 ms; retrying every millisecond: at most 0.14 s).
                connection = sqlite3.connect(f"{self.path.as_uri()}?mode=ro", uri=True, timeout=0)
                try:
                    # MLflow's get_metric_history order: by timestamp, then step, then value.
                    rows = connection.execute(
                        f"SELECT run_uuid, value, is_nan FROM metrics WHERE key = ? AND run_uuid IN ({marks}) "
                        "ORDER BY run_uuid, timestamp, step, value", [key, *run_ids]).fetchall()
                finally:
                    connection.close()
                break
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) and "busy" not in str(error) or time.monotonic() > deadline:
                    return None
                time.sleep(0.001)
            except sqlite3.Error:
                return None
        for run_id, value, is_nan in rows:
            values[run_id].append(math.nan if is_nan else float(value))
        return values

    def _signature(self) -> object:
        if self.path is None:
            return None
        parts: list[object] = []
        for path in (self.path, self.path.with_name(self.path.name + "-wal")):
            try:
                info = os.stat(path)
            except OSError:
                parts.append(None)
                continue
            parts.append((info.st_ino, info.st_mtime_ns, info.st_size))
        try:
            with open(self.path, "rb") as handle:
                handle.seek(24)
                parts.append(handle.read(4))
        except OSError:
            parts.append(None)
        return tuple(parts)


class Operations:
    """The MLflow calls the runner needs, over one :class:`mlflow.MlflowClient`."""

    def __init__(self, tracking_uri: str, artifact_root: Path | None) -> None:
        from mlflow import MlflowClient

        seed_sqlite_store(tracking_uri)
        self.tracking_uri = tracking_uri
        self.artifact_root = artifact_root
        self.client = MlflowClient(tracking_uri=tracking_uri)
        self._experiments: dict[str, str] = {}

    def _experiment_id(self, name: str) -> str:
        cached = self._experiments.get(name)
        if cached is not None:
            return cached
        experiment = self.client.get_experiment_by_name(name)
        if experiment is None:
            location = None
            if self.artifact_root is not None and is_local_store(self.tracking_uri):
                # Keep artifacts inside the workspace rather than under whatever the current
                # directory is (MLflow's default is ./mlruns relative to the process).
                safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
                location = (self.artifact_root / safe).as_uri()
            try:
                experiment_id = self.client.create_experiment(name, artifact_location=location)
            except Exception:  # created concurrently by another job: read it back
                experiment = self.client.get_experiment_by_name(name)
                if experiment is None:
                    raise
                experiment_id = experiment.experiment_id
        else:
            experiment_id = experiment.experiment_id
        self._experiments[name] = experiment_id
        return experiment_id

    def start_run(self, experiment_name: str, run_name: str, tags: dict[str, str],
                  params: dict[str, str] | None = None) -> dict[str, str]:
        experiment_id = self._experiment_id(experiment_name)
        run = self.client.create_run(experiment_id, run_name=run_name, tags=tags)
        if params:
            from mlflow.entities import Param

            self.client.log_batch(run.info.run_id, params=[Param(k, str(v)) for k, v in params.items()])
        return {"run_id": run.info.run_id, "experiment_id": experiment_id}

    def set_tags(self, run_id: str, tags: dict[str, str]) -> None:
        from mlflow.entities import RunTag

        self.client.log_batch(run_id, tags=[RunTag(k, str(v)) for k, v in tags.items()])

    def end_run(self, run_id: str, status: str) -> None:
        self.client.set_terminated(run_id, status)

    def log_artifacts(self, run_id: str, folder: str, artifact_path: str | None) -> int:
        path = Path(folder)
        if not path.is_dir() or not any(path.iterdir()):
            return 0
        self.client.log_artifacts(run_id, folder, artifact_path)
        return sum(1 for p in path.rglob("*") if p.is_file())

    def metrics(self, run_id: str) -> dict[str, float]:
        return dict(self.client.get_run(run_id).data.metrics)

    def metric_history(self, run_id: str, key: str) -> list[list[float]]:
        return [[m.step, m.value, m.timestamp] for m in self.client.get_metric_history(run_id, key)]

    def metric_values(self, run_ids: list[str], key: str) -> dict[str, list[float]]:
        """The values of ``key`` each run logged, in the order it logged them (MLflow returns
        them by timestamp, then step): what a sweep's early termination reads, for all its
        running trials in one request. A SQL store answers it with one query (a sweep's
        controller asks after every value a trial logs: per run it would cost about 2.5 ms
        each); other stores run by run."""
        values: dict[str, list[float]] = {run_id: [] for run_id in run_ids}
        # MlflowClient has no public bulk read; its SQL store does (the one the REST API's
        # get-history-bulk uses), with the order of get_metric_history within each run.
        store = getattr(getattr(self.client, "_tracking_client", None), "store", None)
        bulk = getattr(store, "get_metric_history_bulk", None)
        if bulk is None or not run_ids:
            return {run_id: [m.value for m in self.client.get_metric_history(run_id, key)] for run_id in run_ids}
        for row in bulk(run_ids, key, max_results=_BULK_MAX):
            values[row.run_id].append(row.value)
        return values

    def ping(self) -> str:
        return "pong"

    def call(self, request: dict[str, Any]) -> Any:
        operation = request.pop("op")
        if operation not in ("start_run", "end_run", "set_tags", "log_artifacts", "metrics", "metric_history",
                             "metric_values", "ping"):
            raise ValueError(f"unknown tracking operation {operation!r}")
        return getattr(self, operation)(**request)


class Tracking:
    """The runner's handle on MLflow for one workspace: through the agent, or in-process."""

    def __init__(self, workspace: Path, tracking_uri: str, artifact_root: Path | None = None) -> None:
        self.workspace = workspace
        self.tracking_uri = tracking_uri
        self.artifact_root = artifact_root
        self.use_agent = os.environ.get("AMLLAB_TRACKING_AGENT", "1") != "0"
        self.agent_pid: int | None = None
        self._local: Operations | None = None
        # A sweep's trials call from several threads; the agent serialises its own calls, and
        # the in-process client gets the same treatment.
        self._local_lock = threading.Lock()

    def call(self, op: str, **arguments: Any) -> Any:
        request = {"op": op, **arguments}
        if not self.use_agent:
            with self._local_lock:
                if self._local is None:
                    self._local = Operations(self.tracking_uri, self.artifact_root)
                return self._local.call(request)
        return self._via_agent(request)

    def start_run(self, experiment_name: str, run_name: str, tags: dict[str, str],
                  params: dict[str, str] | None = None) -> dict[str, str]:
        return self.call("start_run", experiment_name=experiment_name, run_name=run_name, tags=tags,
                         params=params)

    def end_run(self, run_id: str, status: str) -> None:
        self.call("end_run", run_id=run_id, status=status)

    def set_tags(self, run_id: str, tags: dict[str, str]) -> None:
        self.call("set_tags", run_id=run_id, tags=tags)

    def log_artifacts(self, run_id: str, folder: Path, artifact_path: str | None = None) -> int:
        return self.call("log_artifacts", run_id=run_id, folder=str(folder), artifact_path=artifact_path)

    def metrics(self, run_id: str) -> dict[str, float]:
        return self.call("metrics", run_id=run_id)

    def metric_history(self, run_id: str, key: str) -> list[list[float]]:
        return self.call("metric_history", run_id=run_id, key=key)

    def metric_values(self, run_ids: list[str], key: str) -> dict[str, list[float]]:
        return self.call("metric_values", run_ids=list(run_ids), key=key)

    # -- the agent ------------------------------------------------------------------------------

    def _address(self) -> str:
        return agent_address(self.workspace, self.tracking_uri)

    def check_reachable(self) -> None:
        """For a tracking server, fail at once with one line when it is not there, instead of
        waiting out MLflow's retries."""
        if not self.tracking_uri.startswith(("http://", "https://")):
            return
        import urllib.error
        import urllib.request

        try:
            urllib.request.urlopen(self.tracking_uri.rstrip("/") + "/health", timeout=10).close()
        except urllib.error.HTTPError:
            return  # it answered: a server without /health is still a server
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", None) or error
            raise RunnerError(f"the MLflow tracking server {self.tracking_uri} (MLFLOW_TRACKING_URI) is not "
                              f"reachable: {reason}; start it, or unset MLFLOW_TRACKING_URI to use the "
                              "workspace's own store") from None

    def _via_agent(self, request: dict[str, Any]) -> Any:
        try:
            return _exchange(self._address(), request, self.tracking_uri)
        except (ConnectionRefusedError, FileNotFoundError):
            self._start_agent()
            return _exchange(self._address(), request, self.tracking_uri)

    def _start_agent(self) -> None:
        from .process import pid_alive, python_module, spawn_detached

        log = self.workspace / "logs" / "tracking-agent.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        argv = python_module("runner.tracking_agent", self.tracking_uri, str(self.artifact_root or ""),
                             self._address().lstrip("\0"))
        env = {**_AGENT_HTTP_DEFAULTS, **{k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_RUN")}}
        self.agent_pid = spawn_detached(argv, cwd=self.workspace, env=env, log=log)
        deadline = time.monotonic() + _START_TIMEOUT
        while time.monotonic() < deadline:
            try:
                _exchange(self._address(), {"op": "ping"}, self.tracking_uri)
                return
            except (ConnectionRefusedError, FileNotFoundError):
                pass
            if not pid_alive(self.agent_pid):
                # Lost a start race (another agent bound the address first) or crashed.
                try:
                    _exchange(self._address(), {"op": "ping"}, self.tracking_uri)
                    return
                except (ConnectionRefusedError, FileNotFoundError):
                    tail = log.read_text(errors="replace").strip().splitlines()[-5:] if log.exists() else []
                    raise RunnerError("the MLflow tracking agent could not start: "
                                      + (" | ".join(tail) or "no output") + f" (log: {log})") from None
            time.sleep(0.05)
        raise RunnerError(f"the MLflow tracking agent did not answer within {_START_TIMEOUT:.0f} s (log: {log})")


def _exchange(address: str, request: dict[str, Any], tracking_uri: str) -> Any:
    timeout = _TIMEOUTS.get(request["op"], _DEFAULT_TIMEOUT)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(timeout)
        try:
            connection.connect(address)
            connection.sendall(json.dumps(request).encode() + b"\n")
            chunks = []
            while True:
                chunk = connection.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        except socket.timeout:
            raise RunnerError(f"MLflow ({tracking_uri}) did not answer {request['op']} within "
                              f"{timeout:.0f} s") from None
    if not chunks:
        raise ConnectionRefusedError("the tracking agent closed the connection")
    reply = json.loads(b"".join(chunks))
    if not reply.get("ok"):
        said = str(reply.get("error"))
        if diskspace.says_full(said):  # the store's disk: what the job logs is being lost
            diskspace.notice(tracking_uri.removeprefix("sqlite:///"), f"MLflow's {request['op']}")
        raise RunnerError(f"MLflow ({request['op']}): {said}")
    return reply.get("result")
