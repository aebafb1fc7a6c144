"""Servers whose runs carry their user's credentials in headers (``ToolOptions(per_user=True)``).

Such a server acts for each user as a per-user OAuth server does, with credentials the graph
computes from the run (an API key from the context or the store) instead of a sign-in: each
distinct set of those headers gets MCP sessions of its own, whose every request (the handshake
and listings too) carries them, so that what one user's credentials list or return never reaches
a run with other credentials. Sessions are keyed by a digest of the headers made with a key of this
process, never by the headers themselves; the values are masked in every error and log line made
while they are in use.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol

from langgraph_mcp._session import ServerConnection
from langgraph_mcp.errors import MCPConnectionError


class Pool(Protocol):
    """What a credential session needs of the pool (``MCPPool``, which imports this module)."""

    def connection(self, server: str) -> ServerConnection: ...

    def using(
        self,
        server: str,
        thread_id: str | None,
        *,
        user: str | None = ...,
        headers: Mapping[str, str] | None = ...,
    ) -> AbstractAsyncContextManager[ServerConnection]: ...


__all__ = ["credential_key", "credential_session", "no_credentials"]

_KEY = os.urandom(32)


def credential_key(headers: Mapping[str, str]) -> str:
    """The key of the sessions made with ``headers`` (the same headers, whatever their order or
    case of names, give the same key in this process; nothing can be read back from it)."""
    body = json.dumps(sorted((str(k).lower(), str(v)) for k, v in headers.items()))
    return hashlib.blake2b(body.encode(), key=_KEY, digest_size=16).hexdigest()


def no_credentials(server: str) -> MCPConnectionError:
    """The error of a call to a per-user server whose run gives no credentials."""
    return MCPConnectionError(
        server,
        "the server lists and acts only for a user with credentials (per_user headers), and this "
        "run gives none: check the run's context or store the 'headers' function reads",
    )


@asynccontextmanager
async def credential_session(
    pool: Pool, server: str, thread_id: str | None, headers: Mapping[str, str] | None
) -> AsyncIterator[ServerConnection]:
    """The session of ``server`` made with ``headers`` (the run's credentials), held in use for
    the block (per thread too with ``session_scope: "thread"``).

    Raises:
        MCPConnectionError: ``headers`` is empty (the run has no credentials).
    """
    given = {str(k): str(v) for k, v in (headers or {}).items() if v}
    if not given:
        raise no_credentials(server)
    values = tuple(given.values())
    shared = pool.connection(server)
    with shared.redact.holding(values):
        async with pool.using(server, thread_id, user=credential_key(given), headers=given) as connection:
            with connection.redact.holding(values):
                yield connection
