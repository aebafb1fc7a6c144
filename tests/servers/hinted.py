"""Fixture server whose listings and reads carry freshness hints (``ttlMs`` / ``cacheScope``).

Every ``tools/list``, ``prompts/list``, ``resources/list``, ``resources/templates/list`` and
``resources/read`` it answers is recorded as one line ``<method> <pid>`` in the file
``$HINTED_LOG`` (or the ``log`` given to :func:`build_server`), before it is answered: a client
that has its answer has its line.
Each answer carries ``ttlMs = $HINTED_TTL_MS`` and ``cacheScope = $HINTED_SCOPE`` when set, in
either era (a handshake-era client must not take them: only 2026-07-28 defines them).

Tools: ``echo``; ``add_tool(name)`` registers a tool ``name`` and says the tool list changed;
``own_<pid>`` names the process, so a listing shows which server process it came from;
``touch(uri)`` tells subscribers that ``uri`` changed; after ``break_lists`` every ``tools/list``
is answered with a JSON-RPC error, until ``mend_lists``. One resource (``hinted://about``, whose
text names the process), one template (``hinted://item/{name}``), one prompt (``greet``).
``hinted://gated`` (2026-07-28) is read in two rounds: the first answer asks for nothing but to be
sent again with its ``requestState``.
"""

import os
import sys
from pathlib import Path
from typing import Any

import mcp_types as types

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError

from tests.servers._runner import run_cli
from tests.servers.other import notify_tools_changed

LISTS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
HINTED = (*LISTS, "resources/read")


class Hints:
    """Records each listing request and puts the hints on its answer."""

    def __init__(self, log: str | None, ttl_ms: int | None, scope: str | None) -> None:
        self.log = log
        self.ttl_ms = ttl_ms
        self.scope = scope
        self.broken = False

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.request_id is None or ctx.method not in HINTED:
            return await call_next(ctx)
        if self.log:
            with open(self.log, "a", encoding="utf-8") as f:
                f.write(f"{ctx.method} {os.getpid()}\n")
        if self.broken and ctx.method == "tools/list":
            raise MCPError(code=types.INTERNAL_ERROR, message="listing is broken")
        result = await call_next(ctx)
        # The answer as sent: the keys put here reach the wire (never on an interim answer).
        if isinstance(result, dict) and result.get("resultType") != "input_required":
            if self.ttl_ms is not None:
                result["ttlMs"] = self.ttl_ms
            if self.scope is not None:
                result["cacheScope"] = self.scope
        return result


def listed(log: Path, method: str = "tools/list") -> list[str]:
    """The pids of the processes that answered ``method``, one per request, in order."""
    if not log.exists():
        return []
    lines = log.read_text(encoding="utf-8").splitlines()
    return [line.split()[1] for line in lines if line.split()[0] == method]


def build_server(
    name: str = "hinted", *, log: str | None = None, ttl_ms: int | None = None, scope: str | None = None
) -> MCPServer:
    """The server; in process mode ``log``, ``ttl_ms`` and ``scope`` come from the environment."""
    hints = Hints(log, ttl_ms, scope)
    srv: MCPServer = MCPServer(name, middleware=[hints])

    @srv.tool()
    def echo(text: str) -> str:
        """Say ``text`` back."""
        return text

    @srv.tool()
    async def add_tool(name: str, ctx: Context) -> str:
        """Register a tool called ``name`` and say the tool list changed."""

        def dynamic(text: str = "") -> str:
            return f"{name}:{text}"

        srv.add_tool(dynamic, name=name, description=f"Added tool {name}.")
        await notify_tools_changed(ctx)
        return "added"

    @srv.tool()
    def break_lists() -> str:
        """Answer every ``tools/list`` from now on with an error."""
        hints.broken = True
        return "broken"

    @srv.tool()
    def mend_lists() -> str:
        """Answer ``tools/list`` again."""
        hints.broken = False
        return "mended"

    @srv.tool()
    async def touch(uri: str, ctx: Context) -> str:
        """Tell subscribers that ``uri`` changed (2026-07-28 ``subscriptions/listen`` streams)."""
        await ctx.notify_resource_updated(uri)
        return "touched"

    def own() -> int:
        return os.getpid()

    srv.add_tool(own, name=f"own_{os.getpid()}", description="The server process's id.")

    @srv.resource("hinted://about", name="about", mime_type="text/plain")
    def about() -> str:
        return f"about {os.getpid()}"

    @srv.resource("hinted://item/{name}", name="item", mime_type="text/plain")
    def item(name: str) -> str:
        return name

    low = srv._lowlevel_server
    plain_read = low._request_handlers["resources/read"].handler

    async def read(ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams) -> Any:
        if str(params.uri) != "hinted://gated":
            return await plain_read(ctx, params)
        if params.request_state is None:
            return types.InputRequiredResult(request_state="again")
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri="hinted://gated", text=f"gated {params.request_state}")]
        )

    low.add_request_handler("resources/read", types.ReadResourceRequestParams, read)

    @srv.prompt()
    def greet(who: str) -> str:
        """Greet someone."""
        return f"Hello {who}"

    return srv


def _from_env() -> MCPServer:
    ttl = os.environ.get("HINTED_TTL_MS")
    return build_server(
        log=os.environ.get("HINTED_LOG"),
        ttl_ms=int(ttl) if ttl else None,
        scope=os.environ.get("HINTED_SCOPE") or None,
    )


if __name__ == "__main__":
    run_cli(_from_env, description=__doc__)
