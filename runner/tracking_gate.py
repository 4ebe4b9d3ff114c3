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
import os
from typing import Any, Awaitable, Callable

TOKEN_VARIABLE = "AMLLAB_TRACKING_TOKEN"
OPEN_PATHS = frozenset({"/health"})

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
            body = (b'{"error_code": "UNAUTHENTICATED", "message": "this aml-run MLflow server answers only the '
                    b'jobs it serves: send its token (MLFLOW_TRACKING_TOKEN)"}')
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode()),
                                    (b"www-authenticate", b'Bearer realm="aml-run"')]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)  # lifespan too: MLflow's app starts up through it

    def admits(self, scope: dict[str, Any]) -> bool:
        given = next((value for name, value in scope.get("headers") or () if name.lower() == b"authorization"), b"")
        return hmac.compare_digest(given, self.expected)


def create_app() -> TokenGate:
    """The app ``mlflow server --app-name amllab-token`` serves: MLflow's own, behind the gate."""
    from mlflow.server.fastapi_app import app

    return TokenGate(app, os.environ.get(TOKEN_VARIABLE, ""))
