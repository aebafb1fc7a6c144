"""Requests that are not tool calls (listings, resources, prompts, completion), with the same
translation of failures as calls (:func:`~langgraph_mcp._session.failures.guarded`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import nullcontext
from typing import Literal, TypeVar

import anyio
from mcp import Client

from langgraph_mcp._session.failures import SessionExpired, Wording, guarded
from langgraph_mcp._session.loops import ConnectionBase
from langgraph_mcp._session.owner import Session
from langgraph_mcp.errors import MCPConnectionError, MCPServerError

__all__ = ["Requests"]

_T = TypeVar("_T")


class Requests(ConnectionBase):
    """Sends requests other than ``tools/call`` over the live session."""

    async def request(
        self,
        what: str,
        send: Callable[[Client], Awaitable[_T]],
        *,
        timeout: float | Literal["default"] | None = "default",
        limited: bool = False,
    ) -> _T:
        """Send one request that is not a tool call (``send`` sends it with the live ``Client``)
        and translate what goes wrong into this package's errors, as for a call. A request the
        server rejected unread because it no longer knows the session is sent once more, on a new
        session. ``timeout`` bounds it (default: :meth:`request_timeout`). ``limited``: it takes one
        of the session's ``max_concurrent_calls`` slots, as a call does (the wait counts).

        Raises:
            MCPConnectionError: cannot connect, or the session died during the request.
            MCPAuthenticationError: the server refused the credentials (HTTP 401/403).
            MCPTimeoutError: no answer in time (the request is cancelled on the server).
            MCPServerError: the server answered with a JSON-RPC error.
            MCPProtocolError: the answer is not what the protocol says.
        """
        limit = self.request_timeout() if timeout == "default" else timeout
        renewed = False
        while True:
            session, client = await self._live()
            try:
                return await self._request_once(session, client, what, send, limit, limited)
            except SessionExpired as exc:
                if renewed:
                    raise MCPServerError(self.name, exc.code, exc.message) from None
                renewed = True

    async def _request_once(
        self,
        session: Session,
        client: Client,
        what: str,
        send: Callable[[Client], Awaitable[_T]],
        limit: float | None,
        limited: bool,
    ) -> _T:
        what = self.redact(what)
        wording = Wording(what=what, answer=what, http_failure=f"to {what}")
        # Without a limit, a TimeoutError can only be a page of a listing (connect_timeout).
        seconds = limit if limit is not None else self.config.connect_timeout
        async with guarded(self.name, session, self.redact, wording, timeout=seconds):
            with anyio.fail_after(limit):
                async with self._slot() if limited else nullcontext():
                    if not session.alive:
                        raise MCPConnectionError(self.name, f"the session ended before {what} was sent")
                    return await send(client)
