"""A server that reports the W3C trace context each ``tools/call`` request carried in its ``_meta``.

- ``seen_trace(token="")``: the ``traceparent`` its own request carried (``none`` without one);
  ``token`` is taken and never shown (a client may fill it as a hidden argument).
- ``fail_trace()``: an ``isError`` result.
- ``wait_trace(seconds)``: ``waited`` after ``seconds``.
- ``confirm_trace()``: asks one question (``Proceed?``, era-agnostic: a live elicitation on
  2025-11-25, an ``InputRequiredResult`` round on 2026-07-28), then answers
  ``<action> <traceparent>``, the trace context of the request that carried the answer.

Every ``traceparent`` received is also appended to ``$TRACED_LOG`` when it is set.
"""

import contextvars
import os
import sys
from pathlib import Path
from typing import Annotated, Any

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import AcceptedElicitation, Elicit, ElicitationResult, MCPServer, Resolve
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel

from tests.servers._runner import run_cli

_SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("traced_seen", default="none")


class Proceed(BaseModel):
    ok: bool


async def ask_proceed() -> Elicit[Proceed]:
    return Elicit("Proceed?", Proceed)


async def _record(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    if ctx.method == "tools/call":
        seen = (ctx.meta or {}).get("traceparent")
        _SEEN.set(seen if isinstance(seen, str) else "none")
        if os.environ.get("TRACED_LOG"):
            with open(os.environ["TRACED_LOG"], "a", encoding="utf-8") as log:
                log.write(_SEEN.get() + "\n")
    return await call_next(ctx)


def build_server(name: str = "traced") -> MCPServer:
    srv: MCPServer = MCPServer(name, middleware=[_record])

    @srv.tool()
    async def seen_trace(token: str = "") -> str:
        """The ``traceparent`` this request carried."""
        return _SEEN.get()

    @srv.tool()
    async def fail_trace() -> CallToolResult:
        """Fail (an ``isError`` result)."""
        return CallToolResult(content=[TextContent(type="text", text="it broke")], is_error=True)

    @srv.tool()
    async def wait_trace(seconds: float) -> str:
        """Answer ``waited`` after ``seconds``."""
        await anyio.sleep(seconds)
        return "waited"

    @srv.tool()
    async def confirm_trace(answer: Annotated[ElicitationResult[Proceed], Resolve(ask_proceed)]) -> str:
        """Ask ``Proceed?``; answer with the action and the ``traceparent`` of this request."""
        action = "accept" if isinstance(answer, AcceptedElicitation) else answer.action
        return f"{action} {_SEEN.get()}"

    return srv


def main() -> None:
    from tests.servers import traced

    run_cli(traced.build_server, description=__doc__)


if __name__ == "__main__":
    main()
