"""A server whose tool definitions are costly for a client to check: regular expressions that
backtrack catastrophically, and as many generated tools as asked for.

``MCPServer`` validates the tools it serves, so the costly definitions are added by a server
middleware after the SDK has shaped the listing (as in ``untrusted.py``). The listing is the
server's own tools (``echo``, ``slow_echo``), then :data:`RAW` exactly as written, then
``--tools N`` generated tools ``gen_<i>`` (each with a small schema of its own, like
``many.py``'s). A call to a raw or generated tool is answered by ``echo_args`` (its arguments
back, as JSON).

``--page-size K`` sends the listing in pages of ``K`` tools (default: one page); ``--endless``
makes every page name a next one, forever (the listing never ends).
"""

import asyncio
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer

from tests.servers._runner import parser, run_server

CATASTROPHIC = "^(a+)+$"
"""Backtracks exponentially in a backtracking engine on ``"a" * n + "!"``."""

RAW: list[dict[str, Any]] = [
    {
        "name": "redos",
        "description": "Its argument must match a pattern that backtracks catastrophically.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string", "pattern": CATASTROPHIC}},
            "required": ["text"],
        },
    },
    {
        "name": "redos_keys",
        "description": "Its argument's keys must match a pattern that backtracks catastrophically.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "bag": {
                    "type": "object",
                    "patternProperties": {CATASTROPHIC: {"type": "string"}},
                    "additionalProperties": False,
                }
            },
        },
    },
    {
        "name": "lookahead",
        "description": "A pattern with a lookahead, which a linear-time engine cannot run.",
        "inputSchema": {
            "type": "object",
            "properties": {"code": {"type": "string", "pattern": "^(?=.*[0-9])[a-z0-9]+$"}},
        },
    },
    {
        "name": "ecma_escape",
        "description": "A pattern written with ECMA-262's \\u escapes.",
        "inputSchema": {
            "type": "object",
            "properties": {"word": {"type": "string", "pattern": "^[\\u0061-\\u007a]+$"}},
        },
    },
]
RAW_NAMES = tuple(t["name"] for t in RAW)
OWN_NAMES = ("echo", "slow_echo")


def generated_tool(i: int) -> dict[str, Any]:
    """Tool ``gen_<i>``: a required integer and one optional string, named after ``i``."""
    return {
        "name": f"gen_{i}",
        "description": f"Generated tool number {i}: echoes its arguments.",
        "inputSchema": {
            "type": "object",
            "properties": {
                f"n_{i}": {"type": "integer", "description": "A number."},
                f"label_{i % 97}": {"type": "string", "description": "A label."},
            },
            "required": [f"n_{i}"],
        },
    }


HEAVY_PATTERN = "(?i)(\\pL|\\pN|\\pM|\\pS){40}"
"""A pattern RE2 runs but takes long to compile (~100 ms, its program near the memory cap)."""
REFUSED_PATTERN = "\\pL" * 6666
"""A pattern refused (over 16 Unicode classes); RE2 took 0.7-1 s to refuse it itself."""


def heavy_tool(i: int) -> dict[str, Any]:
    """Tool ``heavy_<i>``: one string argument with a pattern of its own that is slow to
    compile (even ``i``) or refused (odd ``i``)."""
    pattern = (HEAVY_PATTERN if i % 2 == 0 else REFUSED_PATTERN) + f"#{i}"
    return {
        "name": f"heavy_{i}",
        "description": "A tool whose argument has a costly pattern.",
        "inputSchema": {"type": "object", "properties": {"t": {"type": "string", "pattern": pattern}}},
    }


@dataclasses.dataclass
class CostlyListing:
    """Server middleware: the listing as the module docstring says; calls to the raw and
    generated tools go to ``echo_args``."""

    tools: int
    page_size: int
    endless: bool
    heavy: int = 0
    _listing: list[dict[str, Any]] | None = None

    async def _whole(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> list[dict[str, Any]]:
        if self._listing is None:
            page = await call_next(ctx)
            assert isinstance(page, dict)
            own = [t for t in page["tools"] if t["name"] != "echo_args"]
            generated = [generated_tool(i) for i in range(self.tools)]
            self._listing = own + RAW + generated + [heavy_tool(i) for i in range(self.heavy)]
        return self._listing

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = dict(ctx.params or {})
        if ctx.method == "tools/list":
            cursor = params.pop("cursor", None)
            listing = await self._whole(dataclasses.replace(ctx, params=params), call_next)
            start = int(cursor) if cursor else 0
            if self.endless:
                return {"tools": [generated_tool(start)], "nextCursor": str(start + 1)}
            if not self.page_size:
                return {"tools": listing}
            end = start + self.page_size
            return {"tools": listing[start:end], "nextCursor": str(end) if end < len(listing) else None}
        if ctx.method == "tools/call" and params.get("name") not in OWN_NAMES:
            arguments = {"name": params.get("name"), "arguments": params.get("arguments") or {}}
            params = {**params, "name": "echo_args", "arguments": {"call": arguments}}
            return await call_next(dataclasses.replace(ctx, params=params))
        return await call_next(ctx)


def build_server(
    tools: int = 0, *, page_size: int = 0, endless: bool = False, heavy: int = 0, name: str = "costly"
) -> MCPServer:
    """Build the server (see the module docstring)."""
    srv: MCPServer = MCPServer(name, middleware=[CostlyListing(tools, page_size, endless, heavy)])

    @srv.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @srv.tool()
    async def slow_echo(text: str, seconds: float = 0.2) -> str:
        """Return the text unchanged, after ``seconds``."""
        await asyncio.sleep(seconds)
        return text

    @srv.tool()
    def echo_args(call: dict[str, Any]) -> str:
        """Answers calls to the raw and generated tools: their name and arguments, as JSON."""
        return json.dumps(call, sort_keys=True)

    return srv


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--tools", type=int, default=0)
    p.add_argument("--page-size", type=int, default=0)
    p.add_argument("--endless", action="store_true")
    p.add_argument("--heavy", type=int, default=0)
    args = p.parse_args()
    run_server(
        build_server(args.tools, page_size=args.page_size, endless=args.endless, heavy=args.heavy),
        args.transport,
        args.host,
        args.port,
    )


if __name__ == "__main__":
    main()
