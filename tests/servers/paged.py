"""A server whose ``tools/list`` is paginated: tools ``t0``..``t6``, three per page.

``MCPServer`` lists every tool in one page (it ignores the cursor), so the ``tools/list``
handler is replaced on the low-level server with one that slices the full list.
"""

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, ListToolsResult, PaginatedRequestParams

from tests.servers._runner import run_cli

TOOL_COUNT = 7
PAGE_SIZE = 3
CURSOR_PREFIX = "offset:"


def _adder(i: int) -> Callable[[int], int]:
    def add_i(x: int) -> int:
        return x + i

    add_i.__doc__ = f"Return x + {i}."
    return add_i


def build_server(name: str = "paged", page_size: int = PAGE_SIZE) -> MCPServer:
    """Build the paginated server."""
    srv: MCPServer = MCPServer(name)
    for i in range(TOOL_COUNT):
        srv.add_tool(_adder(i), name=f"t{i}")

    async def list_tools_page(
        ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams
    ) -> ListToolsResult:
        start = 0
        if params.cursor is not None:
            offset = params.cursor.removeprefix(CURSOR_PREFIX)
            if not params.cursor.startswith(CURSOR_PREFIX) or not offset.isdigit():
                raise MCPError(code=INVALID_PARAMS, message=f"Invalid cursor: {params.cursor!r}")
            start = int(offset)
        tools = await srv.list_tools()
        end = start + page_size
        next_cursor = f"{CURSOR_PREFIX}{end}" if end < len(tools) else None
        return ListToolsResult(tools=tools[start:end], next_cursor=next_cursor)

    srv._lowlevel_server.add_request_handler("tools/list", PaginatedRequestParams, list_tools_page)
    return srv


if __name__ == "__main__":
    run_cli(build_server, description=__doc__)
