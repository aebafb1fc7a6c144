"""A small MCP server written for the ``mcp`` 1.x SDK (its ``FastMCP``), as most Python servers
in use are, for the interoperability tests.

Runs in the environment of ``tests/interop/mcp1_latest`` (the newest 1.x) or
``tests/interop/mcp1_old`` (1.10.0, the oldest with elicitation); the package's own environment
has the 2.x SDK. ``python mcp1_server.py`` serves stdio; ``python mcp1_server.py --http`` serves
streamable HTTP at ``/mcp`` on a free port of 127.0.0.1 and prints ``LISTENING <port>`` on
stdout once it accepts connections.

Tools:

- ``add(a, b)``: a plain result;
- ``count(steps)``: a progress notification after each step;
- ``book(city)``: two questions through ``ctx.elicit`` (server-initiated ``elicitation/create``
  requests), the dates, then a confirmation;
- ``sleep(seconds)``: returns after ``seconds``;
- ``version()``: the ``mcp`` SDK version it runs on.

``MCP1_LOG``, when set, names a file that gets one line per ``tools/call`` the server starts:
``<tool> <arguments as JSON>``.
"""

# No ``from __future__ import annotations``: mcp 1.10 finds the ``Context`` parameter by its
# annotation object, not a string.
import asyncio
import importlib.metadata
import json
import os
import socket
import sys

import uvicorn
from mcp.server.fastmcp import Context, FastMCP
from pydantic import BaseModel

server = FastMCP("interop-mcp1")


def _log_call(tool: str, arguments: dict[str, object]) -> None:
    path = os.environ.get("MCP1_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"{tool} {json.dumps(arguments, sort_keys=True)}\n")


class Dates(BaseModel):
    start: str
    nights: int = 1


class Confirm(BaseModel):
    ok: bool


@server.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    _log_call("add", {"a": a, "b": b})
    return str(a + b)


@server.tool()
def version() -> str:
    """The version of the mcp SDK this server runs on."""
    return importlib.metadata.version("mcp")


@server.tool()
async def sleep(seconds: float) -> str:
    """Return after ``seconds``."""
    await asyncio.sleep(seconds)
    return f"slept {seconds:g}s"


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count to ``steps``, reporting progress after each step."""
    _log_call("count", {"steps": steps})
    for i in range(1, steps + 1):
        await asyncio.sleep(0.01)
        await ctx.report_progress(i, steps, f"step {i} of {steps}")
    return f"counted to {steps}"


@server.tool()
async def book(city: str, ctx: Context) -> str:
    """Book a stay in ``city``: asks for the dates, then for a confirmation."""
    _log_call("book", {"city": city})
    dates = await ctx.elicit(f"Which dates for {city}?", Dates)
    if dates.action != "accept":
        return f"no dates for {city} ({dates.action})"
    start, nights = dates.data.start, dates.data.nights
    sure = await ctx.elicit(f"Book {nights} nights from {start} in {city}?", Confirm)
    if sure.action != "accept" or not sure.data.ok:
        return f"not booked {city} ({sure.action})"
    return f"booked {city} from {start} for {nights} nights"


def serve_http() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning", lifespan="on")
    http = uvicorn.Server(config)

    async def run() -> None:
        serving = asyncio.create_task(http.serve(sockets=[sock]))
        while not http.started:
            if serving.done():
                await serving
                return
            await asyncio.sleep(0.01)
        print(f"LISTENING {port}", flush=True)
        await serving

    asyncio.run(run())


if __name__ == "__main__":
    if "--http" in sys.argv[1:]:
        serve_http()
    else:
        server.run("stdio")
