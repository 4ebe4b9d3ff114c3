"""The door of aml-run's loopback MLflow servers: a request gets in with the server's token.

A loopback server (runner/mlflow_server.py) listens on an address every user of the machine can
reach, and serves the workspace's whole store: without a door, any local user could list and
change its experiments and runs. MLflow's client sends ``MLFLOW_TRACKING_TOKEN`` as
``Authorization: Bearer <token>`` with every request ("token to use with HTTP Bearer
authentication", https://www.mlflow.org/docs/latest/tracking.html#tracking-auth), old clients too;
aml-run gives the token to the jobs the server is for, and to the server as
:data:`TOKEN_VARIABLE`. ``/health`` stays open: it tells nothing, and it is how the server is
seen to be up.

This is a custom app of MLflow's server, the plugin kind MLflow documents for its own
basic-auth app (https://mlflow.org/docs/latest/self-hosting/security/custom): the
``mlflow.app`` entry point ``amllab-token`` in pyproject.toml names :func:`create_app`, and
``mlflow server --app-name amllab-token`` serves it. It wraps MLflow's own app (its Host-header
and CORS checks included) rather than MLflow's basic-auth app, which verifies a salted password
hash on every request: a job logging a metric a step would pay for it each time.
"""

from __future__ import annotations

import hmac
import json
import os
import re
from typing import Any, Awaitable, Callable

TOKEN_VARIABLE = "AMLLAB_TRACKING_TOKEN"
OPEN_PATHS = frozenset({"/health"})
# Run History's path for one run, after whatever prefix the client put before it.
RUN_HISTORY_RUN = re.compile(r"(?:^|/)experimentids/(?P<experiment>[^/]+)/runs/(?P<run>[^/]+)/?$")
LOG_BATCH = "/api/2.0/mlflow/runs/log-batch"

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
App = Callable[[dict[str, Any], Receive, Send], Awaitable[None]]


class TokenGate:
    """An ASGI app that passes a request on to ``app`` only when it carries ``token``."""

    def __init__(self, app: App, token: str) -> None:
        if not token:
            raise ValueError(f"{TOKEN_VARIABLE} is empty: a gate with no token would let everyone in")
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and scope.get("path") not in OPEN_PATHS \
                and not self.admits(scope):
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            await _answer(send, 401, {"error_code": "UNAUTHENTICATED", "message": "this aml-run MLflow server "
                                      "answers only the jobs it serves: send its token (MLFLOW_TRACKING_TOKEN)"},
                          headers=[(b"www-authenticate", b'Bearer realm="aml-run"')])
            return
        if scope["type"] == "http" and scope.get("method") == "PATCH":
            found = RUN_HISTORY_RUN.search(scope.get("path") or "")
            if found:
                await self.run_properties(scope, found["run"], receive, send)
                return
        await self.app(scope, receive, send)  # lifespan too: MLflow's app starts up through it

    async def run_properties(self, scope: dict[str, Any], run_id: str, receive: Receive, send: Send) -> None:
        """Azure ML's Run History call that sets a run's properties (``PATCH
        .../experimentids/{id}/runs/{run}`` with ``{"properties": {...}}``), which mldesigner's
        executor makes for a python-function component's primitive outputs
        (https://pypi.org/project/mldesigner/): here each property becomes a tag of the MLflow run,
        through MLflow's own ``runs/log-batch``."""
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            properties = json.loads(body or b"{}").get("properties") or {}
            tags = [{"key": str(key), "value": value if isinstance(value, str) else json.dumps(value)}
                    for key, value in dict(properties).items()]
        except (ValueError, TypeError, AttributeError):
            await _answer(send, 400, {"error_code": "INVALID_PARAMETER_VALUE",
                                      "message": 'expected a JSON object {"properties": {name: value}}'})
            return
        batch = json.dumps({"run_id": run_id, "tags": tags}).encode()
        inner = dict(scope, method="POST", path=LOG_BATCH, raw_path=LOG_BATCH.encode(), query_string=b"",
                     headers=[(name, value) for name, value in scope.get("headers") or ()
                              if name.lower() not in (b"content-length", b"content-type")]
                     + [(b"content-type", b"application/json"), (b"content-length", str(len(batch)).encode())])
        sent = False

        async def once() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": batch, "more_body": False}

        answer: dict[str, Any] = {"status": 500, "body": b""}

        async def keep(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
            elif message["type"] == "http.response.body":
                answer["body"] += message.get("body", b"")

        await self.app(inner, once, keep)
        if answer["status"] != 200:
            await _answer(send, answer["status"], None, answer["body"])
            return
        await _answer(send, 200, {"runId": run_id, "properties": properties})

    def admits(self, scope: dict[str, Any]) -> bool:
        given = next((value for name, value in scope.get("headers") or () if name.lower() == b"authorization"), b"")
        return hmac.compare_digest(given, self.expected)


async def _answer(send: Send, status: int, document: Any, raw: bytes | None = None,
                  headers: list[tuple[bytes, bytes]] | None = None) -> None:
    """A JSON answer: ``document``, or the bytes ``raw`` as they are (another app's answer)."""
    body = raw if raw is not None else json.dumps(document).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


def create_app() -> TokenGate:
    """The app ``mlflow server --app-name amllab-token`` serves: MLflow's own, behind the gate."""
    from mlflow.server.fastapi_app import app

    return TokenGate(app, os.environ.get(TOKEN_VARIABLE, ""))
