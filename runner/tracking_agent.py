"""The tracking agent process (see :mod:`runner.tracking`): ``python -m runner.tracking_agent
URI ARTIFACT_ROOT ADDRESS``. Serves one JSON request per connection on the abstract Unix socket
ADDRESS and exits after ``AMLLAB_TRACKING_IDLE`` seconds without one."""

from __future__ import annotations

import json
import os
import signal
import socket
import socketserver
import sys
import threading
import time
from pathlib import Path

from .tracking import DEFAULT_IDLE, Operations


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    allow_reuse_address = False


def serve(tracking_uri: str, artifact_root: Path | None, address: str, idle: float) -> int:
    # Bind first: losing the race to another agent for the same workspace is a normal, quiet exit.
    try:
        server = _Server("\0" + address, _Handler, bind_and_activate=True)
    except OSError:
        return 0
    operations = Operations(tracking_uri, artifact_root)
    lock = threading.Lock()  # MLflow's SQLite store is happiest with one writer at a time
    state = {"last": time.monotonic(), "busy": 0}

    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            state["busy"] += 1
            try:
                line = self.rfile.readline()
                try:
                    request = json.loads(line)
                    with lock:
                        result = operations.call(request)
                    reply = {"ok": True, "result": result}
                except Exception as error:  # the client turns this into one clear message
                    reply = {"ok": False, "error": f"{type(error).__name__}: {error}"}
                self.wfile.write(json.dumps(reply, default=str).encode() + b"\n")
            finally:
                state["busy"] -= 1
                state["last"] = time.monotonic()

    server.RequestHandlerClass = Handler

    def watchdog() -> None:
        while True:
            time.sleep(min(1.0, idle / 4))
            if not state["busy"] and time.monotonic() - state["last"] > idle:
                server.shutdown()
                return

    threading.Thread(target=watchdog, daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
    return 0


class _Handler(socketserver.StreamRequestHandler):  # replaced in serve(); bind needs a class
    def handle(self) -> None:
        pass


def main(argv: list[str]) -> int:
    tracking_uri, artifact_root, address = argv
    idle = float(os.environ.get("AMLLAB_TRACKING_IDLE", DEFAULT_IDLE))
    socket.setdefaulttimeout(None)
    return serve(tracking_uri, Path(artifact_root) if artifact_root else None, address, idle)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
