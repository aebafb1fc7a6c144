"""One tool call, end to end over the wire: how its failures are told apart."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from langgraph_mcp import MCPPool
from tests.conftest_servers import SERVERS_DIR, stdio_params
from tests.helpers import call, tools_by_name
from tests.servers import fickle


@pytest.mark.parametrize("timeout", [None, 30.0], ids=["no-limit", "limit"])
async def test_a_servers_own_timeout_error_is_not_a_client_timeout(
    fickle_config: dict[str, Any], timeout: float | None
) -> None:
    async with MCPPool({"fickle": {**fickle_config, "timeout": timeout}}) as pool:
        message = await call((await tools_by_name(pool))["upstream_timeout"])
    assert message.status == "error"
    assert message.content == (
        "MCP server 'fickle' rejected the call to 'upstream_timeout': "
        f"{fickle.SERVER_TIMEOUT_MESSAGE} (MCP error {fickle.SERVER_TIMEOUT_CODE})"
    )


@pytest.mark.parametrize("protocol", ["2026-07-28", pytest.param("legacy", marks=pytest.mark.slow)])
async def test_a_result_without_result_type_is_complete(protocol: str) -> None:
    """2026-07-28: a result that does not say its ``resultType`` is complete (the SDK's models
    require the field); on older sessions the field does not exist."""
    inner = stdio_params("demo")
    relay = [str(SERVERS_DIR / "terse.py"), inner["command"], *inner["args"]]
    server = {**inner, "command": sys.executable, "args": relay, "protocol": protocol}
    async with MCPPool({"demo": server}) as pool:
        tools = await tools_by_name(pool)
        message = await call(tools["add"], {"a": 2, "b": 3})
        assert (message.status, message.content) == ("success", "5")
        assert (await call(tools["echo"], {"text": "again"})).content == "again"
