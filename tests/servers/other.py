"""A second server: an ``echo`` that collides with demo's, and tools that change the tool list."""

import sys
from pathlib import Path
from typing import Any

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp.server.mcpserver import Context, MCPServer
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from tests.servers._runner import run_cli


async def notify_tools_changed(ctx: Context[Any, Any]) -> None:
    """Signal a tool-list change in both protocol eras.

    2026-07-28 delivers it on ``subscriptions/listen`` streams (the bus publish is a no-op with no
    listener); handshake-era sessions get a pushed ``notifications/tools/list_changed``.
    """
    await ctx.notify_tools_changed()
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        await ctx.session.send_tool_list_changed()


def build_server(name: str = "other") -> MCPServer:
    """Build the second fixture server."""
    srv: MCPServer = MCPServer(name)

    @srv.tool()
    def echo(text: str) -> str:
        """Echo with an ``other:`` prefix (collides with demo's ``echo``)."""
        return f"other:{text}"

    @srv.tool()
    async def add_tool(name: str, ctx: Context) -> str:
        """Register a tool called ``name`` (``(text="") -> "<name>:<text>"``) and notify."""

        def dynamic(text: str = "") -> str:
            return f"{name}:{text}"

        srv.add_tool(dynamic, name=name, description=f"Dynamically added tool {name}.")
        await notify_tools_changed(ctx)
        return "added"

    @srv.tool()
    async def remove_tool(name: str, ctx: Context) -> str:
        """Remove the tool called ``name`` and notify."""
        srv.remove_tool(name)
        await notify_tools_changed(ctx)
        return "removed"

    return srv


if __name__ == "__main__":
    run_cli(build_server, description=__doc__)
