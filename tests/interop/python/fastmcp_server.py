"""A small MCP server built with FastMCP (another implementation), for the interoperability tests.

Runs in the environment of ``tests/interop/python`` (FastMCP is not installed in the package's
own environment). ``python fastmcp_server.py`` serves stdio; ``python fastmcp_server.py --http``
serves streamable HTTP at ``/mcp`` on a free port of 127.0.0.1 and prints ``LISTENING <port>``
on stdout once it accepts connections.

What it offers:

- tools: ``add`` (structured output with an output schema), ``pixel`` (an image result),
  ``count`` (progress notifications), ``ask_name`` (``ctx.elicit``, a server-initiated request:
  handshake-era connections only), ``confirm`` (the 2026-07-28 way to ask: an
  ``InputRequiredResult``, read back from ``ctx.input_responses``);
- a resource ``interop://readme`` and a resource template ``interop://greeting/{name}``;
- a prompt ``review(code, language="python")``.
"""

from __future__ import annotations

import asyncio
import base64
import socket
import sys

import mcp_types
import uvicorn
from fastmcp import Context, FastMCP
from fastmcp.utilities.types import Image
from pydantic import BaseModel

# A 1x1 PNG (one opaque red pixel).
PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)

server = FastMCP("interop-fastmcp")


class Sum(BaseModel):
    a: int
    b: int
    total: int


@server.tool
def add(a: int, b: int) -> Sum:
    """Add two integers; the result is structured (``a``, ``b``, ``total``)."""
    return Sum(a=a, b=b, total=a + b)


@server.tool
def pixel() -> Image:
    """A 1x1 red PNG image."""
    return Image(data=PIXEL_PNG, format="png")


@server.tool
async def count(steps: int, ctx: Context) -> str:
    """Count to ``steps``, reporting progress after each step."""
    for i in range(1, steps + 1):
        await asyncio.sleep(0.01)
        await ctx.report_progress(i, steps, f"step {i} of {steps}")
    return f"counted to {steps}"


@server.tool
async def ask_name(ctx: Context) -> str:
    """Ask the user for their name with ``ctx.elicit`` and greet them."""
    answer = await ctx.elicit("What is your name?", response_type=str)
    if answer.action != "accept":
        return f"no name given ({answer.action})"
    return f"Hello, {answer.data}!"


@server.tool
async def confirm(item: str, ctx: Context) -> str | mcp_types.InputRequiredResult:
    """Ask whether to delete ``item`` (2026-07-28: an input-required round)."""
    responses = ctx.input_responses
    if not responses:
        return mcp_types.InputRequiredResult(
            input_requests={
                "ok": mcp_types.ElicitRequest(
                    params=mcp_types.ElicitRequestFormParams(
                        message=f"Delete {item}?",
                        requested_schema={
                            "type": "object",
                            "properties": {"ok": {"type": "boolean"}},
                            "required": ["ok"],
                        },
                    )
                )
            }
        )
    answer = responses["ok"]
    assert isinstance(answer, mcp_types.ElicitResult)
    if answer.action == "accept" and answer.content and answer.content.get("ok"):
        return f"deleted {item}"
    return f"kept {item}"


@server.resource("interop://readme", mime_type="text/plain")
def readme() -> str:
    """What this server is."""
    return "FastMCP interop server"


@server.resource("interop://greeting/{name}", mime_type="text/plain")
def greeting(name: str) -> str:
    """A greeting for ``name``."""
    return f"Hello, {name}!"


@server.prompt
def review(code: str, language: str = "python") -> str:
    """Ask for a review of ``code`` written in ``language``."""
    return f"Please review this {language} code:\n{code}"


def serve_http() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    config = uvicorn.Config(server.http_app(path="/mcp"), log_level="warning", lifespan="on")
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
        server.run(show_banner=False)
