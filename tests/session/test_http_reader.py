"""How a streamable HTTP response body is read (``langgraph_mcp/_compat/mcp_http.py``): a large
result arrives intact, in any chunks; a malformed event or one past the limit fails its call
(an error result, the session goes on), whatever the protocol era.

The server is a real MCP server on loopback HTTP; :class:`Scripted` (ASGI middleware) answers
the calls of one tool with a body written here, sent in many pieces, and passes everything else
to the server.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from langgraph_mcp import MCPPool
from langgraph_mcp._compat.mcp_http import EventReader
from langgraph_mcp._session import transports
from tests.conftest_servers import serve_in_loop
from tests.helpers import call, text_of, tools_by_name
from tests.servers import bulky

ERAS = ["auto", "legacy"]
SCRIPTED_TOOL = "bulky"  # text content only (no output schema)
Body = Callable[[Any], list[bytes]]
"""The pieces of a scripted response body, given the request's JSON-RPC id."""


def result(request_id: Any, text: str) -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    return {"jsonrpc": "2.0", "id": request_id, "result": {"content": content, "isError": False}}


def pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


class Scripted:
    """ASGI middleware: a ``tools/call`` of :data:`SCRIPTED_TOOL` is answered with ``body``
    (``content_type``), piece by piece; when ``hold`` is set the response then stays open until
    the client leaves. Everything else reaches ``app``."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.body: Body | None = None
        self.content_type = b"text/event-stream"
        self.status = 200
        self.hold = False
        self.answered = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or self.body is None:
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        raw = b"".join(chunks)
        request = json.loads(raw)
        if request.get("method") != "tools/call" or request["params"]["name"] != SCRIPTED_TOOL:
            replayed = False

            async def replay() -> dict[str, Any]:
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return {"type": "http.request", "body": raw, "more_body": False}
                return await receive()

            await self.app(scope, replay, send)
            return
        self.answered += 1
        headers = [(b"content-type", self.content_type)]
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        for piece in self.body(request["id"]):
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        if self.hold:
            while (await receive())["type"] != "http.disconnect":
                pass
            return
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def with_scripted(
    protocol: str, test: Callable[[Scripted, dict[str, Any]], Awaitable[None]], *, connects: int = 1
) -> None:
    """Run ``test`` against a bulky server behind :class:`Scripted`, then check that the next
    call the server itself answers works, on the same session (``connects=1``) or, after a
    failure the pool takes for a lost connection, on a new one (``2``)."""
    scripted: list[Scripted] = []

    def wrap(app: Any) -> Any:
        scripted.append(Scripted(app))
        return scripted[-1]

    async with (
        serve_in_loop(bulky.build_server(), wrap=wrap) as url,
        MCPPool({"bulky": {"url": url, "protocol": protocol}}) as pool,
    ):
        tools = await tools_by_name(pool)
        await test(scripted[0], tools)
        scripted[0].body = None
        after = await call(tools["length"], {"text": "four"}, "after")
        assert (after.status, after.content) == ("success", "4")
        assert pool.connection("bulky").connects == connects


MIXED = 'plain, "quoted", back\\slash, tab\t, line\nbreak, café, ✓, 日本語, 🎉 '


@pytest.mark.parametrize("protocol", ERAS)
async def test_an_event_in_many_small_pieces_with_every_line_ending_arrives_intact(protocol: str) -> None:
    text = MIXED * 20_000  # about 1 MB of JSON, multi-byte characters cut across pieces

    def body(request_id: Any) -> list[bytes]:
        message = json.dumps(result(request_id, text), ensure_ascii=False)
        cut = message.index('"result"')  # a data field of two lines (a newline between JSON values)
        head, tail = message[:cut], message[cut:]
        events = f": a comment\r\nevent: message\rid: 17\ndata: {head}\r\ndata:{tail}\r\n\r\n"
        data = events.encode()
        return pieces(data[:200], 1) + pieces(data[200:], 7_919)

    async def test(scripted: Scripted, tools: dict[str, Any]) -> None:
        scripted.body = body
        message = await call(tools[SCRIPTED_TOOL], {"mb": 0.001})
        assert message.status == "success", message.content
        assert text_of(message) == text
        assert scripted.answered == 1

    await with_scripted(protocol, test)


@pytest.mark.parametrize("protocol", ERAS)
async def test_a_json_answer_in_many_pieces_arrives_intact(protocol: str) -> None:
    text = MIXED * 20_000

    def body(request_id: Any) -> list[bytes]:
        return pieces(json.dumps(result(request_id, text)).encode(), 3_001)

    async def test(scripted: Scripted, tools: dict[str, Any]) -> None:
        scripted.content_type = b"application/json"
        scripted.body = body
        message = await call(tools[SCRIPTED_TOOL], {"mb": 0.001})
        assert message.status == "success", message.content
        assert text_of(message) == text

    await with_scripted(protocol, test)


@pytest.mark.parametrize("protocol", ERAS)
@pytest.mark.parametrize(
    ("content_type", "data"),
    [
        pytest.param(b"text/event-stream", b'data: {"jsonrpc": "2.0", "id": \r\n\r\n', id="sse-json"),
        pytest.param(b"text/event-stream", b'data: {"hello": "world"}\n\n', id="sse-not-jsonrpc"),
        pytest.param(b"text/event-stream", b"data: \xff\xfe[1, 2\n\n", id="sse-not-utf8"),
        pytest.param(b"application/json", b'{"jsonrpc": "2.0", "result"', id="json"),
    ],
)
async def test_a_malformed_answer_is_an_error_result(protocol: str, content_type: bytes, data: bytes) -> None:
    async def test(scripted: Scripted, tools: dict[str, Any]) -> None:
        scripted.content_type = content_type
        scripted.body = lambda request_id: pieces(data, 5)
        message = await call(tools[SCRIPTED_TOOL], {"mb": 0.001})
        assert message.status == "error"
        assert "Failed to parse" in str(message.content), message.content

    await with_scripted(protocol, test)


LIMIT = 64 << 10


@pytest.mark.parametrize("protocol", ERAS)
@pytest.mark.parametrize(
    ("content_type", "data"),
    [
        # One event of 200 KiB, complete: refused as soon as it passes the limit.
        pytest.param(b"text/event-stream", b"data: " + b"x" * (200 << 10) + b"\n\n", id="sse-event"),
        # Data lines that never end, on a response held open: no waiting for the end of it.
        pytest.param(b"text/event-stream", b"data: [1,\ndata: " + b"2," * (100 << 10), id="sse-unended"),
        pytest.param(b"text/event-stream", b": " + b"c" * (200 << 10), id="sse-comment"),
        pytest.param(b"application/json", b'{"a": "' + b"x" * (200 << 10) + b'"}', id="json-body"),
    ],
)
async def test_an_answer_past_the_limit_is_an_error_result_not_a_hang(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    protocol: str,
    content_type: bytes,
    data: bytes,
) -> None:
    monkeypatch.setattr(transports, "MAX_MESSAGE_BYTES", LIMIT)

    async def test(scripted: Scripted, tools: dict[str, Any]) -> None:
        scripted.content_type = content_type
        scripted.hold = True  # the client must stop reading at the limit, not wait for the end
        scripted.body = lambda request_id: pieces(data, 16 << 10)
        with caplog.at_level(logging.WARNING, logger="mcp.client.streamable_http"):
            message = await asyncio.wait_for(call(tools[SCRIPTED_TOOL], {"mb": 0.001}), 30)
        assert message.status == "error"
        assert "the connection was lost during the call to 'bulky'" in str(message.content)
        limit = f"exceeded the {LIMIT} byte limit"
        assert [r for r in caplog.records if limit in r.getMessage()], caplog.records

    # As when a response stream fails: the call's outcome is unknown, the pool opens a new session.
    await with_scripted(protocol, test, connects=2)


@pytest.mark.parametrize("protocol", ERAS)
async def test_an_endless_error_response_is_read_up_to_a_limit(protocol: str) -> None:
    """The SDK reads a JSON error response whole, for the JSON-RPC error in it; one that goes
    on past 1 MiB (and never ends) fails the call as an error response without one."""

    async def test(scripted: Scripted, tools: dict[str, Any]) -> None:
        scripted.content_type = b"application/json"
        scripted.status = 400
        scripted.hold = True
        scripted.body = lambda request_id: [b'{"jsonrpc": "2.0", "error": "'] + [b"x" * (64 << 10)] * 20
        message = await asyncio.wait_for(call(tools[SCRIPTED_TOOL], {"mb": 0.001}), 30)
        assert message.status == "error"
        assert "Server returned an error response" in str(message.content), message.content

    await with_scripted(protocol, test)


def test_the_event_reader_takes_any_cut_of_the_stream() -> None:
    """Fed a byte at a time, or all at once, the same events come out."""
    stream = (
        b"retry: 1500\r\n"
        b": comment\n"
        b"id: a\r\n"
        b"data: one\r"
        b"data:two\n"
        b"\n"
        b"event: other\n"
        b"data\n"
        b"\r\n"
        b"id: b\n"
        b"\n"
        b"data: caf\xc3\xa9\r\n"
        b"\r\n"
        b"data: never ended"
    )
    expected = [
        ("message", b"one\ntwo", "a", 1500),
        ("other", b"", "a", None),
        ("message", b"", "b", None),
        ("message", "café".encode(), "b", None),
    ]
    for size in (1, 2, 3, len(stream)):
        reader = EventReader(None)
        events = [e for i in range(0, len(stream), size) for e in reader.feed(stream[i : i + size])]
        assert [(e.event, bytes(e.data), e.id, e.retry) for e in events] == expected, size
    # Lines ended by CR alone, many in one chunk, then an LF far away.
    reader = EventReader(None)
    events = reader.feed(b"data: a\r\r" * 1000 + b"data: end\n\n")
    assert [bytes(e.data) for e in events] == [b"a"] * 1000 + [b"end"]
