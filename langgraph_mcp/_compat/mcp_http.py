"""The SDK's streamable HTTP client transport, reading each response body once.

The SDK's transport (``mcp.client.streamable_http.StreamableHTTPTransport``) reads an SSE response
as text, splits it into ``str`` lines, measures each line by encoding it again, and validates each
event's data with pydantic's ``validate_json``; a JSON response is read whole, without a limit, and
validated the same way. For a 50 MB result the client's memory peaked about 6x the result's size.
:class:`LeanStreamableHTTP` keeps the SDK's transport (sessions, headers, redirects, resumption with
``Last-Event-ID``, cancellation, the GET stream) and replaces only how a request's response body is
read:

* The body is read as bytes, in the chunks that arrive. :class:`EventReader` splits SSE lines in
  time linear in their length (a line that spans chunks is assembled once, in a ``bytearray``;
  a chunk is split at its line ends by ``bytes.splitlines``, a chunk without one only searched)
  and keeps a ``data`` field's bytes as they are.
* An event's data (or a JSON body) is decoded, parsed by ``json`` (in slices past 1 MiB, so the
  event loop goes on, see :func:`~langgraph_mcp._support.pace.loads_in_slices`) and validated from
  Python objects, each step dropping what the one before made: the peak is about twice the message.
* Bounded: an event (its fields, and a line not yet ended) or a JSON body longer than the
  transport's ``max_sse_event_size`` fails the request at once, as a stream that failed (the
  SDK's answer: the call's outcome is unknown), with a warning saying why; nothing is buffered
  past the limit, and the response is closed.
* An event or a JSON body that is not a JSON-RPC message answers its request with a parse
  error (as the SDK does).

GET streams (server messages outside any request, resumption, reconnection) keep the SDK's own
SSE reader, bounded the same way; their events are parsed as above too. The body of an HTTP
error response, which the SDK reads whole for a JSON-RPC error, is read up to 1 MiB
(:func:`cap_error_body`, a response hook of the transport's HTTP client).

Everything private the SDK is relied on for here is named in this module (and in
:mod:`langgraph_mcp._compat.mcp`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing, asynccontextmanager
from typing import Any

import anyio
import httpx2
import mcp_types as types
from httpx2._utils import get_environment_proxies as _environment_proxies
from mcp.client.streamable_http import RequestContext, StreamableHTTPTransport, StreamWriter
from mcp.shared._compat import resync_tracer
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from langgraph_mcp._support.pace import Pace, loads_in_slices
from langgraph_mcp.errors import MCPError

__all__ = [
    "environment_proxies",
    "ERROR_BODY_BYTES",
    "Event",
    "EventReader",
    "LeanStreamableHTTP",
    "cap_error_body",
    "parse_message",
    "read_body",
    "streamable_http",
]

logger = logging.getLogger("mcp.client.streamable_http")

SLICED_PARSE = 1 << 20
"""Messages longer than this (bytes) are parsed in slices
(:func:`~langgraph_mcp._support.pace.loads_in_slices`)."""
_LF, _CR, _COLON, _SPACE = 0x0A, 0x0D, 0x3A, 0x20


class Event:
    """One server-sent event; ``data`` is taken once (:meth:`take`), so it can be dropped as
    soon as it is decoded."""

    __slots__ = ("_data", "event", "id", "retry")

    def __init__(self, event: str, data: bytes | bytearray, id: str, retry: int | None) -> None:
        self.event = event
        self.id = id
        self.retry = retry
        self._data: bytes | bytearray = data

    @property
    def data(self) -> bytes | bytearray:
        return self._data

    def take(self) -> bytes | bytearray:
        """The event's data, no longer held by the event."""
        data, self._data = self._data, b""
        return data


class EventReader:
    """SSE bytes in, :class:`Event` objects out (the ``text/event-stream`` format: lines end in
    CR LF, LF or CR; a blank line ends an event; an event not ended when the stream ends is
    dropped).

    Raises ``httpx2.SSEError`` when an event grows past ``limit`` bytes (its field lines, and
    the line not yet ended, counted as they arrive).
    """

    def __init__(self, limit: int | None) -> None:
        self._limit = limit
        self._partial = bytearray()
        self._skip_lf = False
        self._size = 0
        self._event = ""
        self._data: list[bytes | bytearray] = []
        self._id = ""
        self._retry: int | None = None
        self._pending = False

    def feed(self, chunk: bytes) -> list[Event]:
        """The events ``chunk`` completes."""
        out: list[Event] = []
        if self._skip_lf:  # the last chunk ended in CR: an LF right after it ends no other line
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        if not chunk:
            return out
        last = chunk[-1]
        if last != _LF and last != _CR and chunk.find(b"\n") < 0 and chunk.find(b"\r") < 0:
            self._grow(chunk)  # (a long line goes on)
            return out
        lines: list[bytes | bytearray] = list(chunk.splitlines())  # (bytes: at CR LF, LF, CR only)
        rest: bytes | bytearray | None = None
        if last == _CR:
            self._skip_lf = True
        elif last != _LF:
            rest = lines.pop()
        if self._partial:
            self._grow(lines[0])
            lines[0] = self._partial
            self._partial = bytearray()
        for line in lines:
            if line or self._pending:
                self._line(line, out)
            else:
                self._size = 0
        if rest is not None:
            self._grow(rest)
        return out

    def _grow(self, data: bytes | bytearray) -> None:
        if self._limit is not None and self._size + len(self._partial) + len(data) > self._limit:
            raise httpx2.SSEError(f"Server-sent event exceeded the {self._limit} byte limit.")
        self._partial += data

    def _line(self, line: bytes | bytearray, out: list[Event]) -> None:
        if not line:
            self._size = 0
            if self._pending:
                data = self._data[0] if len(self._data) == 1 else b"\n".join(self._data)
                out.append(Event(self._event or "message", data, self._id, self._retry))
                self._event, self._data, self._retry, self._pending = "", [], None, False
            return
        if line[0] == _COLON:  # a comment
            return
        self._size += len(line)
        if self._limit is not None and self._size > self._limit:
            raise httpx2.SSEError(f"Server-sent event exceeded the {self._limit} byte limit.")
        colon = line.find(b":")
        if colon < 0:
            field, start = bytes(line), len(line)
        else:
            field, start = bytes(line[:colon]), colon + 1
            if start < len(line) and line[start] == _SPACE:
                start += 1
        if field == b"data":
            if isinstance(line, bytearray):
                del line[:start]  # in place: a bytearray drops its head without copying the rest
                value: bytes | bytearray = line
            else:
                value = line[start:]
            self._data.append(value)
            self._pending = True
            return
        text = bytes(line[start:]).decode("utf-8", "replace")
        if field == b"event":
            self._event, self._pending = text, True
        elif field == b"id":
            if "\0" not in text:
                self._id, self._pending = text, True
        elif field == b"retry" and text.isascii() and text.isdigit():
            self._retry, self._pending = int(text), True


async def read_events(response: httpx2.Response, limit: int | None) -> AsyncGenerator[Event, None]:
    """The events of an SSE response body, as they arrive."""
    reader = EventReader(limit)
    pace = Pace()
    async for chunk in response.aiter_bytes():
        events = reader.feed(chunk)
        del chunk
        while events:
            yield events.pop(0)
        await pace()


TOO_LARGE = "JSON response failed"
"""How the answer this transport makes up for a request whose JSON response is too long begins
(:func:`~langgraph_mcp._compat.mcp.is_transport_answer` knows it for a transport's answer, as it
knows the SDK's)."""


class BodyTooLargeError(MCPError, ValueError):
    """A JSON response body longer than the limit."""


async def read_body(response: httpx2.Response, limit: int | None) -> bytearray:
    """A response body, read in the chunks that arrive, of at most ``limit`` bytes.

    Raises:
        BodyTooLargeError: the body is longer.
    """
    body = bytearray()
    pace = Pace()
    async for chunk in response.aiter_bytes():
        if limit is not None and len(body) + len(chunk) > limit:
            raise BodyTooLargeError(f"the body exceeded the {limit} byte limit")
        body += chunk
        await pace()
    return body


async def parse_message(data: bytes | bytearray | str) -> types.JSONRPCMessage:
    """A JSON-RPC message from its JSON, UTF-8 or text (pass it without keeping a reference:
    each step drops what the one before made).

    Raises:
        ValueError: not UTF-8, not JSON, or not a JSON-RPC message (pydantic's
            ``ValidationError`` is a ``ValueError``).
        RecursionError: as ``json.loads``.
    """
    text = data if isinstance(data, str) else data.decode("utf-8", "replace")
    del data
    parsed: Any = json.loads(text) if len(text) <= SLICED_PARSE else await loads_in_slices(text)
    del text
    return types.jsonrpc_message_adapter.validate_python(parsed, by_name=False)


ERROR_BODY_BYTES = 1 << 20
"""The most of an HTTP error response's body that is read (the SDK reads a JSON one whole, for
the JSON-RPC error in it)."""


class _Capped(httpx2.AsyncByteStream):
    """A response body that fails (``httpx2.StreamError``, which the SDK takes for a body
    without a JSON-RPC error in it) once more than ``limit`` bytes have come."""

    def __init__(self, inner: httpx2.AsyncByteStream, limit: int) -> None:
        self._inner = inner
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._inner:
            seen += len(chunk)
            if seen > self._limit:
                raise httpx2.StreamError(f"the error response's body exceeded {self._limit} bytes")
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


async def cap_error_body(response: httpx2.Response) -> None:
    """An ``httpx2`` response hook: the body of an error response (4xx, 5xx) is read up to
    :data:`ERROR_BODY_BYTES`, so a server cannot make the client buffer an endless one."""
    if response.status_code >= 400 and isinstance(response.stream, httpx2.AsyncByteStream):
        response.stream = _Capped(response.stream, ERROR_BODY_BYTES)


def _why(exc: BaseException) -> str:
    """A short reason a message failed to parse, without its content."""
    if isinstance(exc, ValidationError):
        return f"not a JSON-RPC message ({exc.error_count()} validation errors)"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc)[:200] or type(exc).__name__


def _answer(request_id: types.RequestId, code: int, message: str) -> SessionMessage:
    error = types.ErrorData(code=code, message=message)
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


class LeanStreamableHTTP(StreamableHTTPTransport):
    """The SDK's streamable HTTP transport with the response readers described above."""

    async def _handle_sse_event(
        self,
        sse: Event | httpx2.ServerSentEvent,
        read_stream_writer: StreamWriter,
        original_request_id: types.RequestId | None = None,
        resumption_callback: Callable[[str], Awaitable[None]] | None = None,
    ) -> bool:
        """One event: forward its message; True once it is the request's answer."""
        if sse.event != "message":
            logger.warning("Unknown SSE event: %.40r", sse.event)
            return False
        event_id = sse.id
        if not sse.data:  # a priming event, for resumption
            if event_id and resumption_callback:
                await resumption_callback(event_id)
            return False
        try:
            message = await parse_message(sse.take() if isinstance(sse, Event) else sse.data)
        except (ValueError, RecursionError) as exc:
            logger.warning("Error parsing SSE message: %s", _why(exc))
            if original_request_id is not None:
                reason = f"Failed to parse SSE message: {_why(exc)}"
                await read_stream_writer.send(_answer(original_request_id, types.PARSE_ERROR, reason))
                return True
            await read_stream_writer.send(exc)
            return False
        if original_request_id is not None and isinstance(
            message, types.JSONRPCResponse | types.JSONRPCError
        ):
            message.id = original_request_id
        await read_stream_writer.send(SessionMessage(message))
        if event_id and resumption_callback:
            await resumption_callback(event_id)
        return isinstance(message, types.JSONRPCResponse | types.JSONRPCError)

    async def _handle_json_response(
        self,
        response: httpx2.Response,
        read_stream_writer: StreamWriter,
        *,
        request_id: types.RequestId,
    ) -> None:
        try:
            message = await parse_message(await read_body(response, self.max_sse_event_size))
        except BodyTooLargeError as exc:
            logger.warning("A JSON response was not read: %s", exc)
            await self._resolve_abandoned_request(read_stream_writer, request_id, f"{TOO_LARGE}: {exc}")
            return
        except (httpx2.StreamError, ValueError, RecursionError) as exc:
            logger.warning("Error parsing JSON response: %s", _why(exc))
            reason = f"Failed to parse JSON response: {_why(exc)}"
            await read_stream_writer.send(_answer(request_id, types.PARSE_ERROR, reason))
            return
        await read_stream_writer.send(SessionMessage(message))

    async def _handle_sse_response(self, response: httpx2.Response, ctx: RequestContext) -> None:
        """A request's SSE response, as the SDK handles it (reconnecting with the last event id
        when the stream ends early), read by :func:`read_events`."""
        assert isinstance(ctx.session_message.message, types.JSONRPCRequest)
        request_id = ctx.session_message.message.id
        last_event_id: str | None = None
        retry_ms: int | None = None
        on_token = ctx.metadata.on_resumption_token_update if ctx.metadata else None
        try:
            async with aclosing(read_events(response, self.max_sse_event_size)) as events:
                async for event in events:
                    if event.id:
                        last_event_id = event.id
                    if event.retry is not None:
                        retry_ms = event.retry
                    if await self._handle_sse_event(event, ctx.read_stream_writer, request_id, on_token):
                        await response.aclose()
                        return
        except httpx2.SSEError as exc:
            logger.warning("An SSE response was not read: %s", exc)
            await self._resolve_abandoned_request(
                ctx.read_stream_writer, request_id, f"SSE stream failed: {exc}"
            )
            return
        except Exception:
            logger.debug("SSE stream ended", exc_info=True)
        if last_event_id is not None:
            logger.info("SSE stream disconnected, reconnecting...")
            await self._handle_reconnection(ctx, last_event_id, retry_ms)
        else:
            await self._resolve_abandoned_request(
                ctx.read_stream_writer, request_id, "SSE stream ended without a response"
            )


@asynccontextmanager
async def streamable_http(
    url: str, *, http_client: httpx2.AsyncClient, max_message_bytes: int
) -> AsyncGenerator[tuple[Any, Any], None]:
    """``streamable_http_client(url, http_client=..., max_sse_event_size=...)`` of the SDK, over
    :class:`LeanStreamableHTTP` (the session is deleted on close, as the SDK's default does)."""
    transport = LeanStreamableHTTP(url, max_sse_event_size=max_message_bytes)
    read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
    write_stream, write_reader = create_context_streams[SessionMessage](0)
    async with read_writer, read_stream, write_stream, write_reader, anyio.create_task_group() as tg:

        def start_get_stream() -> None:
            tg.start_soon(transport.handle_get_stream, http_client, read_writer)

        tg.start_soon(
            transport.post_writer, http_client, write_reader, read_writer, write_stream, start_get_stream, tg
        )
        try:
            yield read_stream, write_stream
        finally:
            if transport.session_id:
                await transport.terminate_session(http_client)
            tg.cancel_scope.cancel()
    await resync_tracer()


def environment_proxies() -> dict[str, str | None]:
    """The proxies ``httpx2.AsyncClient`` reads from the environment (``HTTP_PROXY``,
    ``NO_PROXY``, ...: ``trust_env``), by URL pattern: a client given a ``transport=`` does not
    read them, so a shared transport's clients mount them (httpx2's private helper)."""
    return dict(_environment_proxies())
