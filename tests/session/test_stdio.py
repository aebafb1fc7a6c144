"""The stdio transport (``langgraph_mcp/_session/stdio.py``) against real child processes.

The fixture server is ``tests/servers/bulky.py``; most tests go through an ``MCPPool``, as
users do, and a few use the transport directly under the SDK's ``Client``.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from mcp import Client

from langgraph_mcp import MCPPool
from langgraph_mcp._session import stdio
from langgraph_mcp.errors import MCPConnectionError
from tests.conftest_servers import REPO_ROOT, stdio_params
from tests.helpers import call, pid_alive, tools_by_name

POOL_LOG = "langgraph_mcp.pool"
SERVER_LOG = "langgraph_mcp.server.bulky"
PROTOCOLS = ["auto", "legacy"]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class _Watch(logging.Handler):
    """Sets ``event`` when a record whose message contains ``text`` is logged."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
        self.event = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.text in record.getMessage():
            self.event.set()


@contextmanager
def watching(logger: str, text: str) -> Iterator[asyncio.Event]:
    handler = _Watch(text)
    log = logging.getLogger(logger)
    before = log.level
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        yield handler.event
    finally:
        log.removeHandler(handler)
        log.setLevel(before)


@pytest.mark.slow  # 20 MB through a pipe
async def test_a_20_mb_result_arrives_intact_and_a_small_call_started_meanwhile_completes() -> None:
    """20 million characters, multi-byte ones among them (so UTF-8 sequences straddle reads),
    arrive whole; a small call sent on the same session once the server is sending that result
    is answered too. (One pipe carries both answers in the order the server writes them: the
    small one comes after the large one, so what matters is how fast the large one is read; see
    the next test.)"""
    config = {**stdio_params("bulky"), "log_level": "info"}
    async with MCPPool({"bulky": config}) as pool:
        tools = await tools_by_name(pool)
        length, digest = str((await call(tools["prepare"], {"mb": 20.0})).content).split()
        with watching(SERVER_LOG, "sending") as sending:
            large = asyncio.ensure_future(call(tools["bulky"], {"mb": 20.0}, "c-large"))
            await sending.wait()
            assert not large.done()
            small = await call(tools["small"], {}, "c-small")
            message = await large
        assert (small.status, small.content) == ("success", "small")
        assert message.status == "success"
        assert isinstance(message.content, str)
        assert len(message.content) == int(length)
        assert sha256(message.content) == digest
        assert pool.connection("bulky").connects == 1


async def test_reading_a_result_takes_time_linear_in_its_size() -> None:
    """A result 20 times larger takes about 20 times longer, not 400 (the SDK's own reader joins
    its whole buffer again for each chunk it reads: 1 MB took 0.05 s there, 20 MB over 10 s).
    Both sizes are timed in the same session, so machine load affects both."""
    async with MCPPool({"bulky": stdio_params("bulky")}) as pool:
        tools = await tools_by_name(pool)

        async def timed(mb: float) -> float:
            start = time.perf_counter()
            message = await call(tools["bulky"], {"mb": mb, "kind": "ascii"})
            elapsed = time.perf_counter() - start
            assert message.status == "success" and len(str(message.content)) > mb * 900_000
            return elapsed

        for mb in (1.0, 20.0):
            await call(tools["prepare"], {"mb": mb, "kind": "ascii"})
        await timed(1.0)  # warm up
        one = min([await timed(1.0) for _ in range(3)])
        twenty = await timed(20.0)
        assert twenty < 60 * one, f"1 MB: {one:.3f}s, 20 MB: {twenty:.3f}s ({twenty / one:.0f}x)"


async def test_a_large_argument_is_written_whole() -> None:
    """A 5 MB argument goes through the pipe's flow control (writing pauses while it is full)."""
    async with MCPPool({"bulky": stdio_params("bulky")}) as pool:
        tools = await tools_by_name(pool)
        text = "é" * 2_500_000  # 5 MB of UTF-8
        assert (await call(tools["length"], {"text": text})).content == str(len(text))
        assert (await call(tools["small"])).content == "small"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_garbage_on_stdout_is_skipped_and_the_session_goes_on(
    protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    lines = ["this is not JSON-RPC", "{not json either", "", "   ", '{"jsonrpc": "2.0", "what": 1}']
    async with MCPPool({"bulky": {**stdio_params("bulky"), "protocol": protocol}}) as pool:
        tools = await tools_by_name(pool)
        with caplog.at_level(logging.DEBUG, logger="langgraph_mcp"):
            out = await call(tools["garbage"], {"lines": lines, "invalid_utf8": True})
            assert (out.status, out.content) == ("success", "wrote 6")
            assert (await call(tools["small"])).content == "small"
            assert (await call(tools["garbage"], {"lines": ["more noise"]})).content == "wrote 1"
        assert pool.connection("bulky").connects == 1
    reports = [r for r in caplog.records if r.getMessage().startswith("MCP server 'bulky': line ")]
    # Blank lines are skipped silently; the first bad line is a warning, the rest debug.
    assert [r.levelno for r in reports] == [logging.WARNING] + [logging.DEBUG] * 4
    first = reports[0].getMessage()
    assert first.startswith("MCP server 'bulky': line ")
    assert "'this is not JSON-RPC'" in first and "ignored" in first
    assert "\ufffd\ufffd" in reports[3].getMessage()  # the line that is not UTF-8
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


@pytest.mark.slow  # megabytes through a pipe, then a restart
async def test_a_message_past_the_limit_ends_only_that_session(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(stdio, "MAX_MESSAGE_BYTES", 1 << 20)
    async with MCPPool({"bulky": stdio_params("bulky")}) as pool:
        tools = await tools_by_name(pool)
        first_pid = (await call(tools["pid"])).content
        with caplog.at_level(logging.ERROR, logger=POOL_LOG):
            out = await call(tools["bulky"], {"mb": 2.0})
        assert out.status == "error"
        assert "MCP server 'bulky'" in str(out.content) and "connection was lost" in str(out.content)
        assert any(
            "MCP server 'bulky' sent a message longer than 1 MiB on stdout" in r.getMessage()
            for r in caplog.records
        )
        assert (await call(tools["bulky"], {"mb": 0.5})).status == "success"
        assert (await call(tools["pid"])).content != first_pid  # a new session, a new child
        assert not pid_alive(int(str(first_pid)))


async def test_the_child_gets_only_the_safe_environment_plus_env_and_its_cwd(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("BULKY_PARENT_ONLY", "parent-secret")
    params = stdio_params("bulky", env={"BULKY_SENTINEL": "configured"})
    params["cwd"] = str(tmp_path)
    params["env"]["PYTHONPATH"] = str(REPO_ROOT)
    transport = stdio.stdio_transport(stdio.StdioParams(**params), server="bulky")
    async with Client(transport) as client:

        async def value(tool: str, args: dict[str, Any] | None = None) -> str:
            result = await client.call_tool(tool, args or {})
            return str(result.content[0].text)  # type: ignore[union-attr]

        assert await value("env_value", {"name": "BULKY_SENTINEL"}) == "configured"
        assert await value("env_value", {"name": "BULKY_PARENT_ONLY"}) == "<unset>"
        assert await value("env_value", {"name": "PATH"}) == os.environ["PATH"]
        assert await value("cwd") == str(tmp_path)


async def test_the_child_ends_when_the_session_closes() -> None:
    pids: list[int] = []
    transport = stdio.stdio_transport(
        stdio.StdioParams(**stdio_params("bulky", fork=False)), server="bulky", on_spawn=pids.append
    )
    async with Client(transport) as client:
        result = await client.call_tool("pid", {})
        assert result.structured_content == {"result": pids[0]}
        assert pid_alive(pids[0])
    assert not pid_alive(pids[0])


async def test_an_encoding_that_cannot_carry_lines_is_refused_with_the_server_name() -> None:
    async with MCPPool({"bulky": {**stdio_params("bulky"), "encoding": "utf-16"}}) as pool:
        with pytest.raises(MCPConnectionError) as info:
            await pool.start()
    assert str(info.value) == (
        "MCP server 'bulky': encoding 'utf-16' cannot carry newline-delimited JSON-RPC"
    )


def test_the_transport_works_on_uvloop() -> None:
    """LangGraph server runs graphs on uvloop, whose transports are not asyncio's classes: a 5 MB
    result (reading paused and resumed on the way) and a small call, over the same session."""
    import uvloop

    async def main() -> tuple[Any, Any, str, str]:
        async with MCPPool({"bulky": stdio_params("bulky")}) as pool:
            tools = await tools_by_name(pool)
            length, digest = str((await call(tools["prepare"], {"mb": 5.0})).content).split()
            message = await call(tools["bulky"], {"mb": 5.0}, "c-large")
            small = await call(tools["small"], {}, "c-small")
            return message, small, length, digest

    message, small, length, digest = uvloop.run(main())
    assert small.content == "small"
    assert len(message.content) == int(length) and sha256(message.content) == digest
