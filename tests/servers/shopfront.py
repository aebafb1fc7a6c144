"""Fixture server for graph-side options: hidden arguments, headers and ``_meta``, structured
results, annotations for approval.

- ``whoami(user_id, note="")``: structured ``{"user_id", "note"}``.
- ``add_to_cart(user_id, item, quantity=1)``: keeps a cart per user (per process); structured
  ``{"items": [...], "count": n}``.
- ``list_items()``: read-only; ``delete_item(item)``: destructive; ``rename_item(item, name)``:
  a write that says it is not destructive; ``unannotated(item)``: no annotations at all.
- ``request_info()``: the call's ``_meta`` (without the protocol's own keys) and its
  ``authorization`` / ``x-tenant`` HTTP headers.
- ``confirm_info(item)``: asks ``Confirm <item>?`` first, then answers like ``request_info``
  (plus ``ok``): headers and ``_meta`` of the request that carried the answer.
- ``progress_work(steps)``: reports ``steps`` progress notifications, then answers.
- ``flaky(marker)``: kills its own process the first time (then ``steady``).

Environment: ``DEMO_PID_DIR`` (write a file named after the PID at startup).
"""

import os
import sys
from pathlib import Path
from typing import Annotated, Any

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio
from mcp.server.mcpserver import AcceptedElicitation, Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp_types import ToolAnnotations
from pydantic import BaseModel

from tests.servers._runner import run_cli
from tests.servers.asker import Confirm
from tests.servers.demo import write_pid_file

ITEMS = ["apple", "pear", "plum"]


async def ask_confirm(item: str) -> Elicit[Confirm]:
    return Elicit(f"Confirm {item}?", Confirm)


class Who(BaseModel):
    user_id: str
    note: str


class Cart(BaseModel):
    items: list[str]
    count: int


def build_server(name: str = "shopfront") -> MCPServer:
    carts: dict[str, list[str]] = {}
    srv: MCPServer = MCPServer(name)

    @srv.tool(annotations=ToolAnnotations(read_only_hint=True))
    def whoami(user_id: str, note: str = "") -> Who:
        """Who is calling."""
        return Who(user_id=user_id, note=note)

    @srv.tool(annotations=ToolAnnotations(destructive_hint=False))
    def add_to_cart(user_id: str, item: str, quantity: int = 1) -> Cart:
        """Add ``quantity`` of ``item`` to the user's cart; the whole cart."""
        cart = carts.setdefault(user_id, [])
        cart.extend([item] * quantity)
        return Cart(items=list(cart), count=len(cart))

    @srv.tool(annotations=ToolAnnotations(read_only_hint=True))
    def list_items() -> list[str]:
        """The shop's items."""
        return list(ITEMS)

    @srv.tool(annotations=ToolAnnotations(destructive_hint=True))
    def delete_item(item: str) -> str:
        """Delete an item."""
        return f"deleted {item}"

    @srv.tool(annotations=ToolAnnotations(destructive_hint=False))
    def rename_item(item: str, name: str) -> str:
        """Rename an item."""
        return f"renamed {item} to {name}"

    @srv.tool()
    def unannotated(item: str) -> str:
        """A tool without annotations."""
        return f"touched {item}"

    @srv.tool()
    def request_info(ctx: Context) -> dict[str, Any]:
        """This call's ``_meta`` and its authorization / x-tenant headers."""
        meta = ctx.request_context.meta or {}
        if not isinstance(meta, dict):
            meta = meta.model_dump(by_alias=True, exclude_none=True)
        own = {
            k: v
            for k, v in meta.items()
            if not k.startswith("io.modelcontextprotocol/") and k not in ("progressToken", "progress_token")
        }
        headers = {k.lower(): v for k, v in (ctx.headers or {}).items()}
        return {
            "meta": own,
            "authorization": headers.get("authorization"),
            "tenant": headers.get("x-tenant"),
        }

    @srv.tool()
    async def confirm_info(
        item: str, answer: Annotated[ElicitationResult[Confirm], Resolve(ask_confirm)], ctx: Context
    ) -> dict[str, Any]:
        """Ask ``Confirm <item>?``, then what ``request_info`` says, with the answer."""
        return {**request_info(ctx), "ok": isinstance(answer, AcceptedElicitation) and answer.data.ok}

    @srv.tool()
    async def progress_work(steps: int, ctx: Context) -> str:
        """Report ``steps`` progress notifications, then answer."""
        for i in range(1, steps + 1):
            await ctx.report_progress(i, steps, f"step {i}")
            await anyio.sleep(0.01)
        return f"done {steps}"

    @srv.tool()
    def flaky(marker: str) -> str:
        """The first call (no file at ``marker`` yet) creates the file and kills the process;
        later calls answer ``steady``."""
        path = Path(marker)
        if not path.exists():
            path.write_text("crashed once")
            os._exit(3)
        return "steady"

    return srv


def main() -> None:
    from tests.servers import shopfront

    run_cli(shopfront.build_server, description=__doc__, on_start=write_pid_file)


if __name__ == "__main__":
    main()
