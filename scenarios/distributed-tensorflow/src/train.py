"""What a TensorFlow parameter-server job's tasks see, checked without TensorFlow.

Azure ML starts this script once per task (worker_count workers, parameter_server_count
parameter servers) and gives each its own TF_CONFIG:

    {"cluster": {"worker": ["host:port", ...], "ps": ["host:port", ...]},
     "task": {"type": "worker", "index": 0}, "environment": "cloud"}

A real script hands TF_CONFIG to tf.distribute (TFConfigClusterResolver reads it). This one
checks that it is well formed, writes it to ./outputs/tf_config_<type>_<index>.json, and then
plays its part the way TensorFlow's would:

ps      listens on its own address from the cluster and answers the workers, forever (a real
        parameter server calls server.join() and never returns; the job stops it once every
        worker is done).
worker  reaches every parameter server at its cluster address. Worker 0 is the chief: it
        alone logs metrics to the job's MLflow run (Azure ML sets MLFLOW_RUN_ID).
"""

import json
import os
import pathlib
import socket
import sys
import time

CONNECT_TIMEOUT = 60.0


def fail(message: str) -> None:
    sys.exit(f"TF_CONFIG is not what Azure ML sets: {message}")


def read_tf_config() -> dict:
    raw = os.environ.get("TF_CONFIG")
    if not raw:
        fail("TF_CONFIG is not set (is distribution.type tensorflow?)")
    config = json.loads(raw)
    cluster, task = config.get("cluster"), config.get("task")
    if not isinstance(cluster, dict) or not isinstance(cluster.get("worker"), list) or not cluster["worker"]:
        fail(f"cluster.worker must be a non-empty list of host:port: {raw}")
    if set(cluster) - {"worker", "ps"}:
        fail(f"the cluster has only worker and ps tasks on Azure ML (worker 0 is the chief): {raw}")
    if not isinstance(task, dict) or task.get("type") not in cluster:
        fail(f"task.type must be one of the cluster's task types {sorted(cluster)}: {raw}")
    index = task.get("index")
    if not isinstance(index, int) or not 0 <= index < len(cluster[task["type"]]):
        fail(f"task.index must be 0..{len(cluster[task['type']]) - 1}: {raw}")
    addresses = [address for kind in sorted(cluster) for address in cluster[kind]]
    for address in addresses:
        host, _, port = str(address).rpartition(":")
        if not host or not port.isdigit():
            fail(f"{address!r} is not host:port")
    if len(set(addresses)) != len(addresses):
        fail(f"two tasks share an address: {raw}")
    if config.get("environment") != "cloud":
        fail(f"environment should be 'cloud': {raw}")
    return config


def split(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host, int(port)


def serve(address: str, index: int) -> None:
    """The parameter server: answer every worker that reaches it, until the job stops it."""
    server = socket.create_server(split(address), reuse_port=False)
    print(f"ps {index} serving at {address}; waiting for the workers (server.join())", flush=True)
    while True:
        connection, _ = server.accept()
        with connection, connection.makefile("rw") as stream:
            hello = json.loads(stream.readline())
            print(f"ps {index}: {hello['task']} checked in", flush=True)
            stream.write(json.dumps({"ps": index, "ack": True}) + "\n")
            stream.flush()


def reach(address: str, me: str) -> dict:
    """A worker's call to one parameter server; it may not be listening yet."""
    deadline = time.monotonic() + CONNECT_TIMEOUT
    while True:
        try:
            with socket.create_connection(split(address), timeout=5) as connection, \
                    connection.makefile("rw") as stream:
                stream.write(json.dumps({"task": me}) + "\n")
                stream.flush()
                return json.loads(stream.readline())
        except (ConnectionError, OSError, ValueError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def main() -> None:
    config = read_tf_config()
    cluster, task = config["cluster"], config["task"]
    kind, index = task["type"], task["index"]
    me = f"{kind} {index}"
    own = cluster[kind][index]
    outputs = pathlib.Path("outputs")
    outputs.mkdir(exist_ok=True)
    (outputs / f"tf_config_{kind}_{index}.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    servers = cluster.get("ps", [])
    print(f"{me} at {own}: {len(cluster['worker'])} worker(s), {len(servers)} parameter server(s)", flush=True)
    if kind == "ps":
        serve(own, index)
        return
    acks = [reach(address, me) for address in servers]
    print(f"{me}: reached {len(acks)} parameter server(s)", flush=True)
    if index == 0:  # the chief: there is no "chief" task on Azure ML, worker 0 is it
        import mlflow

        mlflow.log_metric("cluster_tasks", len(cluster["worker"]) + len(servers))
        mlflow.log_metric("ps_acks", sum(1 for ack in acks if ack.get("ack")))


if __name__ == "__main__":
    main()
