"""Every private MCP SDK name this package relies on, in one place (with
:class:`~langgraph_mcp._compat.mcp_http.LeanStreamableHTTP`, the streamable HTTP transport's
response reader, which overrides private methods of the SDK's
transport).

mcp is pinned to 2.x: a rename fails loudly at import here, not somewhere along a call. Nothing
else in the package imports a private SDK name. This module imports nothing from LangGraph: the
session layer uses it.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, cast

import mcp_types as types
from mcp.client import Client
from mcp.client._input_required import (
    _STATE_ONLY_BACKOFF_CAP_SECONDS,
    _STATE_ONLY_BACKOFF_INITIAL_SECONDS,
    DEFAULT_INPUT_REQUIRED_MAX_ROUNDS,
)
from mcp.client.session import ClientSession
from mcp.shared.dispatcher import CallOptions

__all__ = [
    "INPUT_ROUNDS_MAX",
    "STATE_ONLY_BACKOFF",
    "absorb_tool_listing",
    "complete_by_default",
    "call_headers",
    "CLOSED_MESSAGE",
    "connection_closed",
    "hook_notifications",
    "is_transport_answer",
    "read_resource_rounds",
    "send_unchecked",
]

INPUT_ROUNDS_MAX: int = DEFAULT_INPUT_REQUIRED_MAX_ROUNDS
"""The SDK driver's cap on ``InputRequiredResult`` rounds (applied here to rounds that ask)."""

STATE_ONLY_BACKOFF: tuple[float, float] = (
    _STATE_ONLY_BACKOFF_INITIAL_SECONDS,
    _STATE_ONLY_BACKOFF_CAP_SECONDS,
)
"""The SDK driver's back-off for state-only rounds: first sleep, doubling up to this cap."""


# -- per-request HTTP headers ------------------------------------------------------------------
# ``ClientSession.send_request`` builds each request's transport options (the HTTP headers of
# streamable HTTP among them) in its ``_stamp`` hook, synchronously, in the caller's task. Headers
# for one call are added there, from a context variable the caller sets around the send; the
# protocol's own headers are never replaced.

_call_headers: contextvars.ContextVar[Mapping[str, str] | None] = contextvars.ContextVar(
    "langgraph_mcp_call_headers", default=None
)


def _with_call_headers(stamp: Callable[[dict[str, Any], Any], None]) -> Callable[[dict[str, Any], Any], None]:
    def stamped(data: dict[str, Any], opts: Any) -> None:
        stamp(data, opts)
        extra = _call_headers.get()
        if extra:
            headers = opts.setdefault("headers", {})
            taken = {k.lower() for k in headers}
            headers.update({k: v for k, v in extra.items() if k.lower() not in taken})

    stamped._langgraph_mcp_headers = True  # type: ignore[attr-defined]
    return stamped


@contextmanager
def call_headers(session: Any, headers: Mapping[str, str] | None) -> Iterator[None]:
    """Send ``headers`` with the requests ``session`` (an SDK ``ClientSession``) sends in this
    context.

    Raises:
        RuntimeError: this SDK version offers no way to add them (nothing is sent then).
    """
    if not headers:
        yield
        return
    stamp = getattr(session, "_stamp", None)
    if stamp is None:  # pragma: no cover - only with an unsupported SDK
        raise RuntimeError("this mcp SDK version cannot send per-call HTTP headers")
    if not getattr(stamp, "_langgraph_mcp_headers", False):
        session._stamp = _with_call_headers(stamp)
    token = _call_headers.set(headers)
    try:
        yield
    finally:
        _call_headers.reset(token)


# -- a request whose result is read as sent ----------------------------------------------------
# ``ClientSession.send_request`` validates a whole result before returning it, so one malformed
# tool loses a whole ``tools/list`` page. The page is read as sent instead, through the same
# path ``send_request`` takes (``_stamp`` adds what the negotiated era requires, ``_dispatcher``
# sends it), and its tools are checked one by one; the kept ones are then given back to the
# session (``_absorb_tool_listing``), which derives the ``Mcp-Param-*`` headers of later calls
# from them exactly as after its own ``list_tools``.

SESSION_MEMBERS = ("_stamp", "_dispatcher", "_absorb_tool_listing")
"""``ClientSession`` members used to read a listing as sent."""
_missing_session = [
    m
    for m in SESSION_MEMBERS
    if not hasattr(ClientSession, m) and m not in ClientSession.__init__.__code__.co_names
]
if _missing_session:  # pragma: no cover - only with an unsupported SDK
    raise ImportError(
        f"mcp's ClientSession has no {', '.join(_missing_session)}; this mcp version is not supported"
    )


async def send_unchecked(
    session: ClientSession,
    method: str,
    params: Mapping[str, Any] | None,
    *,
    request_id: str | None = None,
) -> Any:
    """Send one request over ``session`` and return its result as the server sent it (parsed
    JSON, not validated). ``request_id``: send it under this id (a string that does not parse as
    a number stays unique for the session), for a request whose notifications name it before
    its result arrives.

    Raises:
        MCPError: the server answered with an error, or the connection closed.
    """
    data: dict[str, Any] = {"method": method}
    if params:
        data["params"] = dict(params)
    opts: CallOptions = {}
    if request_id is not None:
        opts["request_id"] = request_id
    session._stamp(data, opts)
    return await session._dispatcher.send_raw_request(method, data.get("params"), opts)


NotificationHook = Callable[[str, Mapping[str, Any] | None], bool]
"""Sees each notification the session receives, in the order received, on the receive path
(it must not block); returns whether it took the notification (then the session does not)."""


def hook_notifications(session: ClientSession, hook: NotificationHook) -> None:
    """Run ``hook`` first for every notification ``session`` receives from now on, before the
    SDK's own interception (``subscriptions/listen`` routing), in receive order. The SDK offers
    extensions notification bindings, but those run out of order, one queue per method, and a
    pushed event stream's frames must be read in order (an event, then the heartbeat whose cursor
    is after it)."""
    dispatcher = session._dispatcher
    inner = getattr(dispatcher, "_inner", dispatcher)  # under complete_by_default's wrapper
    if not hasattr(inner, "_on_notify_intercept"):  # pragma: no cover - only with an unsupported SDK
        raise ImportError("mcp's dispatcher has no _on_notify_intercept; this mcp version is not supported")
    previous = inner._on_notify_intercept

    def chained(method: str, params: Mapping[str, Any] | None) -> bool:
        if hook(method, params):
            return True
        return bool(previous is not None and previous(method, params))

    inner._on_notify_intercept = chained


class _CompleteByDefault:
    """A session's dispatcher whose request results that leave out ``resultType`` say
    ``"complete"``: the 2026-07-28 revision makes that the default, while the SDK's result
    models require the field. Everything else passes through unchanged."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def send_raw_request(self, method: str, params: Any, opts: Any) -> Any:
        raw = await self._inner.send_raw_request(method, params, opts)
        if isinstance(raw, dict) and "resultType" not in raw:
            return {**raw, "resultType": "complete"}
        return raw


def complete_by_default(session: ClientSession) -> None:
    """Read this (2026-07-28) session's results without ``resultType`` as complete."""
    if not isinstance(session._dispatcher, _CompleteByDefault):
        session._dispatcher = cast(Any, _CompleteByDefault(session._dispatcher))


def absorb_tool_listing(session: ClientSession, page: types.ListToolsResult, *, complete: bool) -> None:
    """Tell ``session`` about a page of tools it did not list itself; ``complete``: the page is
    the whole listing (so the session forgets tools not in it)."""
    session._absorb_tool_listing(page, complete=complete)


# -- a resource read, and whether it took input rounds ------------------------------------------
# ``Client.read_resource`` answers the server's ``InputRequiredResult`` rounds itself (its
# ``_drive_input_required``) and returns only the final result. A result reached through rounds
# depends on answers that are not part of a cache key, so the protocol forbids reusing it: the
# first round is sent here, and the SDK's driver takes over only if it asks for input.

if not hasattr(Client, "_drive_input_required"):  # pragma: no cover - only with an unsupported SDK
    raise ImportError("mcp's Client has no _drive_input_required; this mcp version is not supported")


async def read_resource_rounds(client: Client, uri: str) -> tuple[types.ReadResourceResult, bool]:
    """``client.read_resource(uri)``, and whether its result was the server's first answer (no
    input rounds: it may be reused while its freshness hints allow)."""

    async def send(
        answers: types.InputResponses | None, state: str | None
    ) -> types.ReadResourceResult | types.InputRequiredResult:
        return await client.session.read_resource(
            uri, input_responses=answers, request_state=state, allow_input_required=True
        )

    first = await send(None, None)
    if not isinstance(first, types.InputRequiredResult):
        return first, True
    return await client._drive_input_required(first, send), False


# -- -32000: the server's own error, or the SDK's "connection closed" --------------------------
# The SDK raises ``MCPError(CONNECTION_CLOSED, "Connection closed")`` when its dispatcher shuts
# down, and its streamable HTTP transport answers a request it gives up on with a ``-32000``
# JSON-RPC error of its own, put on the read stream with the request's id. The messages of those
# answers are below
# (``mcp.client.streamable_http.StreamableHTTPTransport._resolve_abandoned_request``).

_TRANSPORT_ANSWERS = (
    "SSE stream ended without a response",
    "SSE stream ended and reconnection attempts were exhausted",
    "SSE stream failed:",
    "JSON response failed:",  # this package's transport (``mcp_http.TOO_LARGE``): a body past the limit
)
CLOSED_MESSAGE = "Connection closed"
"""The message of the SDK's own ``-32000``; an SDK server also answers the requests it cancels
as it shuts down with it."""


def is_transport_answer(message: str) -> bool:
    """Is a ``-32000`` answer with this message one the streamable HTTP transport made up?"""
    return message.startswith(_TRANSPORT_ANSWERS)


def connection_closed(session: ClientSession) -> bool:
    """Has ``session``'s dispatcher shut down (so a ``-32000`` it raised is its own)?"""
    return bool(getattr(session._dispatcher, "_closed", True))
