"""What crossed one session's transport: which request a task sent, and which requests the
server itself answered with error ``-32000``.

``-32000`` is JSON-RPC's generic server error, which servers use for their own failures; the
SDK uses the same code for its own "connection closed" (which it raises without anything having
arrived). Only the wire tells the two apart: a server's answer arrives on the read stream with
the request's id. A :class:`WireTap` sits on a session's streams (every transport but
in-process, see :func:`~langgraph_mcp._session.transports.open_client`); a request sent inside
:meth:`WireTap.sending` learns its id as it is written, and :meth:`Sent.answered_by_server` says
whether the server's own ``-32000`` answered it.

The streamable HTTP transport also puts answers of its own on the read stream, with the
request's id, when it gives up on a request (``_compat.mcp.is_transport_answer``): those are not
the server's.
"""

from __future__ import annotations

import contextvars
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import mcp_types as types

from langgraph_mcp._compat.mcp import is_transport_answer

__all__ = ["Sent", "WireTap", "sending", "start_sending", "stop_sending"]

_REMEMBERED = 1024  # server -32000 answers kept until their request looks (oldest forgotten first)


class Sent:
    """The request a task sent inside :func:`sending` (its last one, if it sent again)."""

    def __init__(self) -> None:
        self.request_id: types.RequestId | None = None
        self.tap: WireTap | None = None

    def answered_by_server(self) -> bool | None:
        """Did the server answer this request with error ``-32000``? ``None``: unknown (the
        session has no tap: in-process)."""
        if self.tap is None or self.request_id is None:
            return None
        return self.tap.take(self.request_id)


_SENDING: contextvars.ContextVar[Sent | None] = contextvars.ContextVar("langgraph_mcp_sending", default=None)


@contextmanager
def sending() -> Iterator[Sent]:
    """Note the id of the request the running task writes inside the block."""
    sent, token = start_sending()
    try:
        yield sent
    finally:
        stop_sending(token)


def start_sending() -> tuple[Sent, contextvars.Token[Sent | None]]:
    """:func:`sending` without a block: its ``Sent``, and the token that :func:`stop_sending`
    takes where the block would end."""
    sent = Sent()
    return sent, _SENDING.set(sent)


def stop_sending(token: contextvars.Token[Sent | None]) -> None:
    _SENDING.reset(token)


class WireTap:
    """Watches one session's messages as they cross its transport (``http``: the streamable HTTP
    transport, which answers some requests itself)."""

    def __init__(self, *, http: bool = False) -> None:
        self._http = http
        self._answered: OrderedDict[str, None] = OrderedDict()

    def written(self, message: Any) -> None:
        """A message on its way to the server (in the sending task)."""
        inner = getattr(message, "message", None)
        if isinstance(inner, types.JSONRPCRequest) and (sent := _SENDING.get()) is not None:
            sent.request_id, sent.tap = inner.id, self

    def received(self, message: Any) -> None:
        """A message from the read stream, before the SDK sees it."""
        inner = getattr(message, "message", None)
        if not isinstance(inner, types.JSONRPCError) or inner.error.code != types.CONNECTION_CLOSED:
            return
        if self._http and is_transport_answer(inner.error.message):
            return
        self._answered[str(inner.id)] = None  # ids are matched as the SDK matches them: 7 == "7"
        while len(self._answered) > _REMEMBERED:
            self._answered.popitem(last=False)

    def take(self, request_id: types.RequestId) -> bool:
        """Did the server answer ``request_id`` with ``-32000``? (Asked once per request.)"""
        return self._answered.pop(str(request_id), False) is None
