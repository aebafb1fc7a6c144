"""One tool call, end to end over the wire: how its failures are told apart."""

from __future__ import annotations

from typing import Any

import pytest

from langgraph_mcp import MCPPool
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
