"""A tiny Language Server Protocol client for the tests and bench/lsp_latency.py: it starts
`python -m validator --lsp` as a subprocess and speaks JSON-RPC with Content-Length framing over
its standard input and output, as an editor does."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


class LspClient:
    def __init__(self, cwd: Path, env: dict[str, str] | None = None, command: list[str] | None = None) -> None:
        environment = dict(os.environ)
        # This tree first, as in every test that spawns the linter.
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), environment.get("PYTHONPATH")]))
        environment.update(env or {})
        command = command or [sys.executable, "-m", "validator", "--lsp"]
        self.process = subprocess.Popen(command, cwd=cwd, env=environment,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.messages: queue.Queue[dict] = queue.Queue()
        self.next_id = 0
        self.stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr_reader = threading.Thread(target=lambda: self.stderr.extend(self.process.stderr), daemon=True)  # type: ignore[arg-type]
        self.stderr_reader.start()
        self.pending: list[dict] = []  # messages read while waiting for another one

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            headers = {}
            while True:
                line = stream.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode("ascii").partition(":")
                headers[name.strip().lower()] = value.strip()
            body = stream.read(int(headers["content-length"]))
            self.messages.put(json.loads(body))

    def send(self, message: dict) -> None:
        self.send_body(json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8"))

    def send_body(self, body: bytes) -> None:
        """``body`` as one message, framed but otherwise as given: what a faulty client sends."""
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"method": method, **({"params": params} if params is not None else {})})

    def request(self, method: str, params: Any = None, timeout: float = 20) -> Any:
        self.next_id += 1
        ident = self.next_id
        self.send({"id": ident, "method": method, **({"params": params} if params is not None else {})})
        reply = self.wait(lambda m: m.get("id") == ident and "method" not in m, timeout)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result")

    def all_stderr(self, timeout: float = 10) -> bytes:
        """Everything the server wrote on standard error, once it has ended."""
        self.stderr_reader.join(timeout)
        return b"".join(self.stderr)

    def wait(self, accept: Any, timeout: float = 20) -> dict:
        """The first message (kept or new) that ``accept`` takes; others are kept for later."""
        for index, message in enumerate(self.pending):
            if accept(message):
                return self.pending.pop(index)
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no such message within {timeout} s; stderr: {b''.join(self.stderr)!r}")
            try:
                message = self.messages.get(timeout=remaining)
            except queue.Empty:
                continue
            if isinstance(message, dict) and message.get("method") and "id" in message:
                # A request from the server (registering watchers): answer as an editor would.
                self.send({"id": message["id"], "result": None})
            if accept(message):
                return message
            self.pending.append(message)

    def diagnostics(self, uri: str, timeout: float = 20) -> list[dict]:
        message = self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                            and m["params"]["uri"] == uri, timeout)
        return message["params"]["diagnostics"]

    def initialize(self, root: Path, watch: bool = True, process_id: int | None = None) -> dict:
        """``process_id``: the client's process, which the server watches (default: this one)."""
        result = self.request("initialize", {
            "processId": os.getpid() if process_id is None else process_id, "rootUri": root.as_uri(),
            "capabilities": {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": watch}}}})
        self.notify("initialized", {})
        return result

    def open(self, path: Path, text: str, version: int = 1) -> str:
        uri = path.as_uri()
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "yaml", "version": version, "text": text}})
        return uri

    def change(self, uri: str, text: str, version: int) -> None:
        self.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                               "contentChanges": [{"text": text}]})

    def close(self, timeout: float = 10) -> int:
        """shutdown and exit, as an editor ends a session; the server's exit status."""
        try:
            self.request("shutdown", timeout=timeout)
            self.notify("exit")
            return self.process.wait(timeout=timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
