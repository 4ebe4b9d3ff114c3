"""The stand-in for azure.identity's credentials in a notebook or script run by aml-run: every
``...Credential`` class answers ``get_token`` with a token that only the offline client
accepts, so the notebooks' usual opening (``DefaultAzureCredential()``, ``get_token(...)``, the
fall-back to ``InteractiveBrowserCredential()``) runs unchanged and nothing reaches Azure.
Imports azure.core only (azure-identity's own dependency)."""

from __future__ import annotations

import time
from typing import Any

from azure.core.credentials import AccessToken

TOKEN = "amllab-offline-token"


class OfflineCredential:
    """Takes any arguments a credential takes; ``get_token`` returns a token valid for a day."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.replaced = type(self).__name__

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken(TOKEN, int(time.time()) + 86400)

    def get_token_info(self, *scopes: str, **kwargs: Any) -> Any:
        from azure.core.credentials import AccessTokenInfo

        return AccessTokenInfo(TOKEN, int(time.time()) + 86400)

    def close(self) -> None:
        return None

    def __enter__(self) -> "OfflineCredential":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


class OfflineAsyncCredential(OfflineCredential):
    """azure.identity.aio's credentials: the same, awaited."""

    async def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:  # type: ignore[override]
        return AccessToken(TOKEN, int(time.time()) + 86400)

    async def close(self) -> None:  # type: ignore[override]
        return None

    async def __aenter__(self) -> "OfflineAsyncCredential":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        return None


def stand_in(name: str, asynchronous: bool = False) -> type:
    """A class named as the credential it replaces (``repr`` and error messages read right)."""
    base = OfflineAsyncCredential if asynchronous else OfflineCredential
    return type(name, (base,), {"__doc__": f"aml-run's offline stand-in for azure.identity's {name}."})
