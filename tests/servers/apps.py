"""Fixture server with MCP Apps tools (the SDK's ``Apps`` extension, ``io.modelcontextprotocol/ui``).

Tools:

* ``show_chart(city, account="")``: model and app (no ``visibility``: both by default); its view is
  ``ui://apps/chart.html`` (CSP and permissions in the resource's ``_meta.ui``). Returns
  structured content ``{"city", "account", "temps"}`` and one text block.
* ``refresh_chart(city)``: ``visibility: ["app"]``, never for the model.
* ``plain_echo(text)``: ``visibility: ["model"]``, no view.
* ``odd_visibility(text)``: ``visibility: "model"`` (a string, not a list: malformed).
* ``old_style(text)``: its view named only by the deprecated flat key ``_meta["ui/resourceUri"]``.
* ``broken_view(text)``: its view ``ui://apps/broken.html`` cannot be read (the read fails).
* ``fail_chart(city)``: the chart's view, but the call returns ``isError``.
* ``touch_view()``: the chart's HTML changes; resources/updated is sent for it (2026-07-28 to
  ``subscriptions/listen`` streams that watch it, earlier eras to the sessions that subscribed).
* ``add_view()``: the chart's HTML changes and a resource ``ui://apps/extra-<N>.html`` is added;
  the resource list is said to have changed.
* ``stats()`` (app-only): ``{"reads": {uri: count}, "advertised": <the client's
  capabilities.extensions, or null>}``.

The chart's HTML is ``<!DOCTYPE html><html><body>chart v<N></body></html>``; ``N`` starts at 1 and
grows with ``touch_view`` and ``add_view``. ``--big`` makes it ~300,000 characters long.
"""

import os
import sys
from pathlib import Path
from typing import Any

import mcp_types as types

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp.server.apps import APP_MIME_TYPE, Apps, ResourceCsp, ResourcePermissions
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resources import FunctionResource
from mcp.shared.exceptions import MCPError

from tests.servers._runner import parser, run_server

CHART_URI = "ui://apps/chart.html"
BROKEN_URI = "ui://apps/broken.html"
CSP = ResourceCsp(connect_domains=["https://api.example.com"], resource_domains=["https://cdn.example.com"])
PERMISSIONS = ResourcePermissions(clipboard_write={})
TEMPS = [11, 14, 9]


def chart_html(version: int, big: bool = False) -> str:
    padding = "<!--" + "x" * 300_000 + "-->" if big else ""
    return f"<!DOCTYPE html><html><body>chart v{version}{padding}</body></html>"


def build_server(name: str = "apps", *, big: bool = False, secret: str | None = None) -> MCPServer:
    """``secret`` (default: ``$APPS_KEY``) is named in the error of the broken view's read."""
    secret = secret if secret is not None else os.environ.get("APPS_KEY", "")
    apps = Apps()
    state: dict[str, Any] = {"version": 1, "reads": {}}

    def read_chart() -> str:
        state["reads"][CHART_URI] = state["reads"].get(CHART_URI, 0) + 1
        return chart_html(state["version"], big)

    def read_broken() -> str:
        state["reads"][BROKEN_URI] = state["reads"].get(BROKEN_URI, 0) + 1
        raise MCPError(code=types.INTERNAL_ERROR, message=f"the view is gone (key {secret})")

    ui_meta = {
        "ui": {
            "csp": CSP.model_dump(by_alias=True, exclude_none=True),
            "permissions": PERMISSIONS.model_dump(by_alias=True, exclude_none=True),
            "prefersBorder": True,
        }
    }
    apps.add_resource(
        FunctionResource(uri=CHART_URI, name="chart", mime_type=APP_MIME_TYPE, meta=ui_meta, fn=read_chart)
    )
    apps.add_resource(
        FunctionResource(uri=BROKEN_URI, name="broken", mime_type=APP_MIME_TYPE, fn=read_broken)
    )

    @apps.tool(resource_uri=CHART_URI, description="Show the temperatures of a city as a chart.")
    def show_chart(city: str, account: str = "") -> dict[str, Any]:
        return {"city": city, "account": account, "temps": TEMPS}

    @apps.tool(
        resource_uri=CHART_URI, visibility=["app"], description="Refresh the chart (the view calls it)."
    )
    def refresh_chart(city: str) -> dict[str, Any]:
        return {"city": city, "temps": TEMPS}

    @apps.tool(resource_uri=CHART_URI, description="The chart's tool with a long result.")
    def long_chart(size: int) -> str:
        return "x" * size

    @apps.tool(resource_uri=BROKEN_URI, description="A tool whose view cannot be read.")
    def broken_view(text: str) -> str:
        return f"broken {text}"

    @apps.tool(resource_uri=CHART_URI, description="The chart's tool, failing.")
    def fail_chart(city: str) -> str:
        raise ToolError(f"no chart for {city}")

    @apps.tool(resource_uri=CHART_URI, visibility=["app"], description="What the server saw.")
    def stats(ctx: Context) -> dict[str, Any]:
        caps = ctx.client_capabilities
        return {"reads": dict(state["reads"]), "advertised": caps.extensions if caps is not None else None}

    srv: MCPServer = MCPServer(name, extensions=[apps])

    @srv.tool(meta={"ui": {"visibility": ["model"]}})
    def plain_echo(text: str) -> str:
        """Echo, for the model only."""
        return text

    @srv.tool(meta={"ui": {"visibility": "model"}})
    def odd_visibility(text: str) -> str:
        """A tool whose visibility is not a list."""
        return text

    @srv.tool(meta={"ui/resourceUri": CHART_URI})
    def old_style(text: str) -> str:
        """A tool naming its view with the deprecated flat key."""
        return f"old {text}"

    subscribers: list[Any] = []  # handshake-era sessions that subscribed to the chart

    async def subscribe(ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams) -> Any:
        if str(params.uri) == CHART_URI:
            subscribers.append(ctx.session)
        return types.EmptyResult()

    async def unsubscribe(ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams) -> Any:
        if ctx.session in subscribers:
            subscribers.remove(ctx.session)
        return types.EmptyResult()

    low = srv._lowlevel_server
    low.add_request_handler("resources/subscribe", types.SubscribeRequestParams, subscribe)
    low.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, unsubscribe)

    @srv.tool()
    async def touch_view(ctx: Context) -> int:
        """Change the chart; tell who watches it."""
        state["version"] += 1
        await ctx.notify_resource_updated(CHART_URI)  # 2026-07-28: subscriptions/listen streams
        for session in list(subscribers):  # earlier: sessions that subscribed
            await session.send_resource_updated(CHART_URI)
        return int(state["version"])

    @srv.tool()
    async def add_view(ctx: Context) -> str:
        """Change the chart and add a resource; say the resource list changed."""
        state["version"] += 1
        uri = f"ui://apps/extra-{state['version']}.html"
        srv.add_resource(
            FunctionResource(uri=uri, name=uri, mime_type=APP_MIME_TYPE, fn=lambda: "<p>extra</p>")
        )
        await ctx.notify_resources_changed()  # 2026-07-28: subscriptions/listen streams
        await ctx.session.send_resource_list_changed()  # earlier: the session
        return uri

    return srv


if __name__ == "__main__":
    p = parser(__doc__)
    p.add_argument("--big", action="store_true")
    args = p.parse_args()
    run_server(build_server(big=args.big), args.transport, args.host, args.port)
