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
  ``subscriptions/listen`` streams that watch it, earlier eras to the calling session).
* ``add_view()``: the chart's HTML changes; the resource list is said to have changed.
* ``stats()`` (app-only): ``{"reads": {uri: count}, "advertised": <the client's
  capabilities.extensions, or null>}``.

The chart's HTML is ``<!DOCTYPE html><html><body>chart v<N></body></html>``; ``N`` starts at 1 and
grows with ``touch_view`` and ``add_view``. ``--big`` makes it ~300,000 characters long.
"""

import sys
from pathlib import Path
from typing import Any

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp.server.apps import APP_MIME_TYPE, Apps, ResourceCsp, ResourcePermissions
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resources import FunctionResource

from tests.servers._runner import parser, run_server

CHART_URI = "ui://apps/chart.html"
BROKEN_URI = "ui://apps/broken.html"
CSP = ResourceCsp(connect_domains=["https://api.example.com"], resource_domains=["https://cdn.example.com"])
PERMISSIONS = ResourcePermissions(clipboard_write={})
TEMPS = [11, 14, 9]


def chart_html(version: int, big: bool = False) -> str:
    padding = "<!--" + "x" * 300_000 + "-->" if big else ""
    return f"<!DOCTYPE html><html><body>chart v{version}{padding}</body></html>"


def build_server(name: str = "apps", *, big: bool = False) -> MCPServer:
    apps = Apps()
    state: dict[str, Any] = {"version": 1, "reads": {}}

    def read_chart() -> str:
        state["reads"][CHART_URI] = state["reads"].get(CHART_URI, 0) + 1
        return chart_html(state["version"], big)

    def read_broken() -> str:
        state["reads"][BROKEN_URI] = state["reads"].get(BROKEN_URI, 0) + 1
        raise RuntimeError("the view is gone")

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

    @apps.tool(resource_uri=BROKEN_URI, description="A tool whose view cannot be read.")
    def broken_view(text: str) -> str:
        return f"broken {text}"

    @apps.tool(resource_uri=CHART_URI, description="The chart's tool, failing.")
    def fail_chart(city: str) -> str:
        raise ValueError(f"no chart for {city}")

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

    @srv.tool()
    async def touch_view(ctx: Context) -> int:
        """Change the chart; tell who watches it."""
        state["version"] += 1
        await ctx.notify_resource_updated(CHART_URI)
        if ctx.client_capabilities is not None and not _modern(ctx):
            await ctx.session.send_resource_updated(CHART_URI)
        return int(state["version"])

    @srv.tool()
    async def add_view(ctx: Context) -> int:
        """Change the chart; say the resource list changed."""
        state["version"] += 1
        await ctx.notify_resources_changed()
        if not _modern(ctx):
            await ctx.session.send_resource_list_changed()
        return int(state["version"])

    return srv


def _modern(ctx: Context) -> bool:
    version = getattr(ctx.session, "protocol_version", None) or ""
    return str(version) >= "2026"


if __name__ == "__main__":
    p = parser(__doc__)
    p.add_argument("--big", action="store_true")
    args = p.parse_args()
    run_server(build_server(big=args.big), args.transport, args.host, args.port)
