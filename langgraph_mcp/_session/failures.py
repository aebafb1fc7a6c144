"""What goes wrong with a request, in this package's terms (:mod:`langgraph_mcp.errors`).

The one translation of what the SDK and the transport raise, shared by tool calls, listings and
every other request:

* the server no longer knows the session (HTTP 404 to a request carrying its id): the request
  never ran and may be sent again on a new session (:class:`SessionExpired`);
* HTTP 401/403: :class:`~langgraph_mcp.MCPAuthenticationError` (the request did not run);
* the connection closed under the request (the SDK's own ``-32000``, a transport error, the SDK
  cancelling the request as its transport failed): the session ends and the request's outcome
  is unknown (:class:`~langgraph_mcp.MCPConnectionError`);
* an HTTP error status standing in for an answer: :class:`~langgraph_mcp.MCPConnectionError`;
* any JSON-RPC error the server sent, ``-32000`` included (see
  :meth:`~langgraph_mcp._session.wire.Sent.answered_by_server` for how it is told from the SDK's
  own): :class:`~langgraph_mcp.MCPServerError`; the session goes on;
* an answer that is not what the protocol says: :class:`~langgraph_mcp.MCPProtocolError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

import anyio
import httpx2
import mcp_types as types
from mcp.shared.exceptions import MCPError as SDKError
from pydantic import ValidationError

from langgraph_mcp._compat.mcp import CLOSED_MESSAGE, connection_closed
from langgraph_mcp._oauth.deployauth import start_auth_problems, stop_auth_problems
from langgraph_mcp._session.owner import Session
from langgraph_mcp._session.transports import (
    describe,
    refusal,
    server_failure,
    start_http_statuses,
    stop_http_statuses,
)
from langgraph_mcp._session.wire import Sent, start_sending, stop_sending
from langgraph_mcp._support.redact import mask_all
from langgraph_mcp.errors import (
    OUTCOME_UNKNOWN,
    MCPAuthenticationError,
    MCPConnectionError,
    MCPError,
    MCPProtocolError,
    MCPServerError,
    MCPTimeoutError,
)

__all__ = ["TRANSPORT_ERRORS", "NotSent", "SessionExpired", "Wording", "guarded", "translate"]

TRANSPORT_ERRORS = (anyio.ClosedResourceError, anyio.BrokenResourceError, httpx2.TransportError)
"""What a transport raises when its connection fails under a request."""

_SDK_HTTP_FAILURE = "Server returned an error response"
"""What the SDK's streamable-HTTP client answers a request with when the server replied with an
HTTP error status and no JSON-RPC error."""


class NotSent(MCPError):
    """The session ended while a call waited for its turn to be sent: it may go on a new one."""


class SessionExpired(MCPError):
    """A request was rejected because the server no longer knows the session: it never ran."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Wording:
    """How a request is named in what is said about it.

    ``what``: the request ("the call to 'search'", "resources/read file:///a");
    ``answer``: what "the answer to ..." names; ``http_failure``: what follows "the server
    answered HTTP <status>"."""

    what: str
    answer: str
    http_failure: str

    @property
    def lost(self) -> str:
        """Said when the connection was lost after the request was sent (before any stderr)."""
        return f"the connection was lost during {self.what}. {OUTCOME_UNKNOWN}"


def _connection_lost(exc: SDKError, sent: Sent, session: Session, statuses: list[int]) -> bool:
    """Does a ``-32000`` mean the connection closed under the request? It does when the SDK made
    it up (nothing from the server answered the request); when it came with an HTTP error status
    (a gateway that gave up on the server, a server that no longer knows the session: the
    request's fate is not the server's answer); and when the server says so itself (an SDK
    server answers the requests it cancels as it shuts down with the SDK's words). Any other
    ``-32000`` is the server's own error."""
    return (
        exc.error.message == CLOSED_MESSAGE
        or any(status >= 400 for status in statuses)
        or not _server_answered(sent, session)
    )


def _server_answered(sent: Sent, session: Session) -> bool:
    """Did the server answer the request (not the SDK, as the connection closed)?"""
    answered = sent.answered_by_server()
    if answered is not None:
        return answered
    # In process, nothing crosses a wire: it is the SDK's own exactly when its dispatcher closed.
    client = session.client
    return client is not None and not connection_closed(client.session)


async def translate(
    exc: SDKError,
    *,
    server: str,
    session: Session,
    sent: Sent,
    statuses: list[int],
    redact: Callable[[str], str],
    wording: Wording,
) -> Exception:
    """What an SDK ``MCPError`` from a request sent on ``session`` means in this package's terms
    (``statuses``: the HTTP statuses seen meanwhile; ``sent``: the request, as written)."""
    if session.expired and statuses[-1:] == [404]:  # unknown session: it did not run
        return SessionExpired(exc.code, redact(exc.error.message))
    if (status := refusal(statuses)) is not None:  # refused: the request did not run
        return MCPAuthenticationError(server, status)
    if exc.code == types.CONNECTION_CLOSED and _connection_lost(exc, sent, session, statuses):
        session.end()
        await session.settle_stderr()
        return MCPConnectionError(server, redact(wording.lost) + session.stderr_hint())
    if (
        exc.code == types.INTERNAL_ERROR
        and exc.error.message == _SDK_HTTP_FAILURE
        and (status := server_failure(statuses)) is not None
    ):
        # No answer from the server, only an HTTP error status standing in for one.
        return MCPConnectionError(server, f"the server answered HTTP {status} {wording.http_failure}")
    return MCPServerError(server, exc.code, redact(exc.error.message), mask_all(exc.error.data, redact))


def guarded(
    server: str,
    session: Session,
    redact: Callable[[str], str],
    wording: Wording,
    *,
    timeout: float | None = None,
) -> _Guard:
    """Send one request on ``session`` inside the (``async with``) block; what goes wrong leaves
    it as this package's errors (the package's own pass through unchanged). ``timeout``: the
    limit a ``TimeoutError`` from the block means (``None``: it passes through unchanged). A
    request whose deployment OAuth token could not be obtained
    (:func:`~langgraph_mcp._oauth.deployauth.start_auth_problems`) fails saying
    why: the SDK's transport reports that as a bare refusal, or a lost connection.

    Raises:
        SessionExpired, MCPAuthenticationError, MCPConnectionError, MCPServerError,
        MCPProtocolError, MCPTimeoutError.
    """
    return _Guard(server, session, redact, wording, timeout)


class _Guard:
    """The block of :func:`guarded`: one object, where generator context managers nested for
    each thing noted about the request (its id, its HTTP statuses, its OAuth problems, the
    session's count of requests) would each hold three while the request waits."""

    __slots__ = (
        "_problems",
        "_problems_token",
        "_redact",
        "_sent_token",
        "_server",
        "_session",
        "_statuses",
        "_statuses_token",
        "_timeout",
        "_wording",
        "sent",
    )

    def __init__(
        self,
        server: str,
        session: Session,
        redact: Callable[[str], str],
        wording: Wording,
        timeout: float | None,
    ) -> None:
        self._server = server
        self._session = session
        self._redact = redact
        self._wording = wording
        self._timeout = timeout

    async def __aenter__(self) -> Sent:
        self._problems, self._problems_token = start_auth_problems()
        self.sent, self._sent_token = start_sending()
        self._statuses, self._statuses_token = start_http_statuses()
        self._session.begin_request()
        return self.sent

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            try:
                if exc is not None:
                    await self._translate(exc)
            finally:
                self._session.end_request()
                stop_http_statuses(self._statuses_token)
                stop_sending(self._sent_token)
        except MCPConnectionError as error:
            if (refused := self._oauth_failure(error)) is None:
                raise
            raise refused from error
        finally:
            stop_auth_problems(self._problems_token)
        if isinstance(exc, MCPConnectionError) and (refused := self._oauth_failure(exc)) is not None:
            raise refused from exc

    def _oauth_failure(self, error: MCPConnectionError) -> MCPAuthenticationError | None:
        """What a lost connection or a refusal means when getting a deployment OAuth token
        failed meanwhile (an ``MCPAuthenticationError`` that names its OAuth problem stays)."""
        if not self._problems or (isinstance(error, MCPAuthenticationError) and error.oauth is not None):
            return None
        return MCPAuthenticationError(self._server, 401, oauth=self._redact(self._problems[-1]))

    async def _translate(self, exc: BaseException) -> None:
        """Raise what ``exc`` from the block means; return when it passes through unchanged."""
        server, session, redact, wording = self._server, self._session, self._redact, self._wording
        if isinstance(exc, MCPError | NotSent | SessionExpired):
            return
        if isinstance(exc, SDKError):
            raise await translate(
                exc,
                server=server,
                session=session,
                sent=self.sent,
                statuses=self._statuses,
                redact=redact,
                wording=wording,
            ) from exc
        if isinstance(exc, TimeoutError):
            if self._timeout is None:
                return
            raise MCPTimeoutError(server, redact(wording.what), self._timeout) from exc
        if isinstance(exc, TRANSPORT_ERRORS):
            session.end()
            raise MCPConnectionError(server, redact(f"{wording.lost} ({describe(exc)})")) from exc
        if isinstance(exc, ValidationError):
            raise MCPProtocolError(
                server, redact(f"the answer to {wording.answer} is not a valid MCP result: {exc}")
            ) from exc
        if isinstance(exc, asyncio.CancelledError):
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                return  # we were cancelled: let it propagate
            # The SDK cancelled the request because its transport failed under it.
            session.end()
            if session.expired and self._statuses[-1:] == [404]:
                raise SessionExpired(types.INVALID_REQUEST, "session not found") from None
            if (status := refusal(self._statuses)) is not None:
                raise MCPAuthenticationError(server, status) from None
            raise MCPConnectionError(server, redact(wording.lost)) from None
