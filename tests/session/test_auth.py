"""HTTP servers that refuse the credentials (401 / 403) say so, at connect time and later.

The fixture server sits behind a :class:`~tests.conftest_servers.BearerGate`: an ASGI wrapper
that answers 401 (or 403) to any request without the right bearer token, as an API gateway
does, and whose token can be rotated while clients are connected.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from langgraph_mcp import MCPAuthenticationError, MCPConnectionError, MCPPool
from tests.conftest_servers import BearerGate, serve_in_loop
from tests.helpers import call, tools_by_name
from tests.servers import demo

CASES = [("http", "auto"), ("http", "legacy"), ("sse", "auto"), ("sse", "legacy")]
IDS = [f"{t}-{p}" for t, p in CASES]
PHRASES = {401: "401 Unauthorized", 403: "403 Forbidden"}


def refused(status: int) -> str:
    return (
        f"MCP server 'api': the server refused the credentials (HTTP {PHRASES[status]}); "
        "check the 'headers' and 'auth' of its configuration (a server that lists only for a "
        "signed-in user needs per-user 'oauth', or per_user headers from the run)"
    )


@asynccontextmanager
async def gated(transport: str, status: int) -> AsyncIterator[tuple[str, BearerGate]]:
    gates: list[BearerGate] = []

    def wrap(app: Any) -> BearerGate:
        gates.append(BearerGate(app, "good-token", status))
        return gates[-1]

    server = demo.build_server(counters=demo.Counters())
    async with serve_in_loop(server, transport, wrap=wrap) as url:  # type: ignore[arg-type]
        yield url, gates[0]


def config(url: str, transport: str, protocol: str, token: str) -> dict[str, Any]:
    return {
        "url": url,
        "transport": transport,
        "protocol": protocol,
        "headers": {"Authorization": f"Bearer {token}"},
        "timeout": 20,  # a call the transport drops would otherwise wait 300 s
    }


@pytest.mark.parametrize("status", [401, 403])
@pytest.mark.parametrize(("transport", "protocol"), CASES, ids=IDS)
async def test_refused_at_connect(transport: str, protocol: str, status: int) -> None:
    async with (
        gated(transport, status) as (url, gate),
        MCPPool({"api": config(url, transport, protocol, "wrong-token")}) as pool,
    ):
        with pytest.raises(MCPAuthenticationError) as info:
            await pool.start()
    assert gate.refused >= 1
    assert isinstance(info.value, MCPConnectionError)
    assert (info.value.server, info.value.status) == ("api", status)
    assert str(info.value) == refused(status)


@pytest.mark.parametrize(("transport", "protocol"), CASES, ids=IDS)
async def test_credentials_revoked_while_connected(transport: str, protocol: str) -> None:
    async with (
        gated(transport, 401) as (url, gate),
        MCPPool({"api": config(url, transport, protocol, "good-token")}) as pool,
    ):
        tools = await tools_by_name(pool)
        assert (await call(tools["add"], {"a": 1, "b": 2})).content == "3"
        gate.token = "rotated-token"
        message = await call(tools["add"], {"a": 1, "b": 2})
        assert message.status == "error"
        assert message.content == refused(401)  # not run: nothing about an unknown outcome
        with pytest.raises(MCPAuthenticationError) as info:
            await pool.connection("api").refresh_tools()
        assert str(info.value) == refused(401)
        gate.token = "good-token"  # the credentials work again: so do calls
        if transport == "sse":  # the session ended: it reconnects once its back-off has passed
            await connected_within(pool, 10.0)
        assert (await call(tools["add"], {"a": 2, "b": 2})).content == "4"


async def connected_within(pool: MCPPool, seconds: float) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        try:
            await pool.connection("api").connect()
            return
        except MCPAuthenticationError:  # the failed reconnect, raised again during its back-off
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.1)
