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
* ``echo_key()`` (app-only): the server's ``secret`` (``$APPS_KEY``) in its text, structured
  content and ``_meta``, as a careless server echoes a credential it was configured with.
* ``stats()`` (app-only): ``{"reads": {uri: count}, "advertised": <the client's
  capabilities.extensions, or null>}``.

The chart's HTML (:func:`chart_html`) says ``chart v<N>``; ``N`` starts at 1 and grows with
``touch_view`` and ``add_view``. ``--big`` makes it ~300,000 characters long. It is a working view:
it speaks the MCP Apps protocol to its host, shows the call's city and temperatures, and its
Refresh button calls ``refresh_chart``, which logs ``refresh_chart called: city=...`` to stderr and
to the file ``$APPS_LOG`` names (when set); its Ask button updates the model context
(``{"city", "looking_at"}``) and sends the message ``plain_echo {"text": "asked from the view
about <city>"}``.

With ``$APPS_PROBE`` set to two loopback origins (``"<declared> <undeclared>"``), the first is
added to the chart's declared ``connectDomains`` and ``resourceDomains``, and the view gets test
controls: Probe (loads an image from and fetches each origin, and lists the CSP violations it
saw), Leave (navigates its frame to ``<declared>/elsewhere``), Rewrite (fetches that page and
writes it over its own document with ``document.open``: no navigation, and the listeners of the
document it replaced are gone), Full screen, Picture in picture,
Download, Download big (over the host's size bound), Download exe (a file named
``report.pdf .exe.``), Sample (``sampling/createMessage``), Link (``ui/open-link`` to
``<declared>/linked?from=view``) and Policy (whether its frame may use the camera, write to the
clipboard, go full screen); each shows its answer,
or ``refused: <the JSON-RPC error's message>``, in ``#out``.
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


VIEW_SCRIPT = """<script>
(() => {
  // The view's side of the MCP Apps protocol, by hand: JSON-RPC over postMessage to the host.
  let next = 1, city = "";
  const waiting = new Map();
  const send = (message) => window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
  const request = (method, params) => new Promise((resolve, reject) => {
    const id = next++;
    waiting.set(id, { resolve, reject });
    send({ id, method, params });
  });
  const show = (id, text) => { document.getElementById(id).textContent = text; };
  const temps = (result) =>
    ((result && result.structuredContent && result.structuredContent.temps) || []).join(", ");
  window.addEventListener("message", (event) => {
    const m = event.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.id !== undefined && waiting.has(m.id)) {
      const { resolve, reject } = waiting.get(m.id);
      waiting.delete(m.id);
      m.error ? reject(new Error(m.error.message)) : resolve(m.result);
    } else if (m.method === "ui/notifications/tool-input") {
      city = String(m.params.arguments.city || "");
      show("city", city);
    } else if (m.method === "ui/notifications/tool-result") {
      show("temps", temps(m.params));
    } else if (m.method === "ui/notifications/host-context-changed" && m.params.displayMode) {
      show("mode", m.params.displayMode);
    } else if (m.method === "ping" && m.id !== undefined) {
      send({ id: m.id, result: {} });
    }
  });
  const act = (id, fn) => {
    const button = document.getElementById(id);
    if (!button) return;
    button.addEventListener("click", async () => {
      try {
        show("out", await fn());
      } catch (error) {
        show("out", "refused: " + error.message);
      }
    });
  };
  const probe = (document.body.dataset.probe || "").split(" ");
  const blocked = [];
  document.addEventListener("securitypolicyviolation", (event) => {
    blocked.push(event.violatedDirective.split(" ")[0] + " " + event.blockedURI);
    show("violations", blocked.join(" | "));
  });
  const image = (url) => new Promise((done) => {
    const img = new Image();
    img.onload = () => done("loaded");
    img.onerror = () => done("failed");
    img.src = url;
  });
  const get = (url) => fetch(url).then((r) => "fetched " + r.status, () => "failed");
  act("probe", async () => {
    const [declared, undeclared] = probe;
    const results = await Promise.all([
      image(declared + "/probe/img"), image(undeclared + "/probe/img"),
      get(declared + "/probe/fetch"), get(undeclared + "/probe/fetch"),
    ]);
    return "img declared: " + results[0] + ", img undeclared: " + results[1] +
      ", fetch declared: " + results[2] + ", fetch undeclared: " + results[3];
  });
  act("leave", async () => {
    location.href = probe[0] + "/elsewhere";
    return "leaving";
  });
  act("rewrite", async () => {
    const html = await (await fetch(probe[0] + "/elsewhere")).text();
    document.open();
    document.write(html);
    return "rewritten";
  });
  const displayMode = async (mode) =>
    "mode: " + (await request("ui/request-display-mode", { mode })).mode;
  act("fullscreen", () => displayMode("fullscreen"));
  act("pip", () => displayMode("pip"));
  const csv = (size) => ({
    contents: [{
      type: "resource",
      resource: {
        uri: "ui://apps/exports/../" + city + " temps:v1.csv",
        mimeType: "text/csv",
        text: "city,temp\\n" + city + ",11\\n" + "x".repeat(size),
      },
    }],
  });
  const download = async (size) =>
    (await request("ui/download-file", csv(size))).isError ? "not saved" : "saved";
  act("download", () => download(0));
  act("download-big", () => download(6000000));
  act("download-exe", async () => {
    const file = csv(0);
    file.contents[0].resource.uri = "ui://apps/exports/report.pdf .exe.";
    return (await request("ui/download-file", file)).isError ? "not saved" : "saved";
  });
  act("link", async () => {
    const answer = await request("ui/open-link", { url: probe[0] + "/linked?from=view" });
    return answer.isError ? "not opened" : "opened";
  });
  const allows = (f) => f + "=" + (document.featurePolicy ? document.featurePolicy.allowsFeature(f) : "?");
  act("policy", async () => ["camera", "clipboard-write", "fullscreen"].map(allows).join(","));
  act("sample", async () => JSON.stringify(await request("sampling/createMessage", {
    messages: [{ role: "user", content: { type: "text", text: "hello" } }], maxTokens: 10,
  })));
  document.getElementById("refresh").addEventListener("click", async () => {
    show("refreshed", "calling...");
    try {
      const result = await request("tools/call", { name: "refresh_chart", arguments: { city } });
      const text = result.isError ? "error: " + JSON.stringify(result.content) : "refreshed " + city;
      show("refreshed", result.isError ? text : text + ": " + temps(result));
    } catch (error) {
      show("refreshed", "error: " + error.message);
    }
  });
  document.getElementById("ask").addEventListener("click", async () => {
    try {
      await request("ui/update-model-context", { structuredContent: { city, looking_at: "the chart" } });
      const sent = await request("ui/message", {
        role: "user",
        content: [{ type: "text", text: 'plain_echo {"text": "asked from the view about ' + city + '"}' }],
      });
      show("refreshed", sent && sent.isError ? "not sent" : "asked");
    } catch (error) {
      show("refreshed", "refused: " + error.message);
    }
  });
  request("ui/initialize", {
    protocolVersion: "2026-01-26",
    appInfo: { name: "chart", version: "1" },
    appCapabilities: {},
  }).then((result) => {
    const context = (result && result.hostContext) || {};
    show("modes", (context.availableDisplayModes || []).join(","));
    show("mode", context.displayMode || "");
    send({ method: "ui/notifications/initialized", params: {} });
    const size = { width: document.body.scrollWidth, height: document.body.scrollHeight + 16 };
    send({ method: "ui/notifications/size-changed", params: size });
  });
})();
</script>"""
"""The chart's script: shows the call's city and temperatures; its button calls ``refresh_chart``
(through the host) and shows the answer."""


PROBE_CONTROLS = (
    '<div id="controls"><p><button id="probe">Probe</button> <button id="leave">Leave</button> '
    '<button id="rewrite">Rewrite</button> '
    '<button id="fullscreen">Full screen</button> <button id="pip">Picture in picture</button> '
    '<button id="download">Download</button> '
    '<button id="download-big">Download big</button> <button id="download-exe">Download exe</button> '
    '<button id="sample">Sample</button> <button id="link">Link</button> '
    '<button id="policy">Policy</button></p>'
    '<p>modes: <span id="modes"></span> · now: <span id="mode"></span></p>'
    '<p id="out"></p><p id="violations"></p></div>'
)
"""The test controls the chart gets with ``$APPS_PROBE`` set."""


def _probe_origins() -> list[str]:
    """``$APPS_PROBE``'s two origins (declared, undeclared), or none."""
    origins = os.environ.get("APPS_PROBE", "").split()
    return origins if len(origins) == 2 else []


def chart_html(version: int, big: bool = False) -> str:
    padding = "<!--" + "x" * 300_000 + "-->" if big else ""
    probe = _probe_origins()
    body = (
        f'<h3 style="margin:4px 0">chart v{version}</h3><p>City: <b id="city"></b> · temperatures: '
        '<span id="temps"></span></p><button id="refresh">Refresh</button> <button id="ask">Ask</button> '
        '<span id="refreshed"></span>'
    )
    if probe:
        body += PROBE_CONTROLS
    data = f' data-probe="{" ".join(probe)}"' if probe else ""
    page = f'<body style="font-family:sans-serif"{data}>{body}{padding}{VIEW_SCRIPT}</body>'
    return f"<!DOCTYPE html><html>{page}</html>"


def _log(line: str) -> None:
    """The server's log: stderr, and the file ``$APPS_LOG`` names (when set)."""
    print(line, file=sys.stderr, flush=True)
    if os.environ.get("APPS_LOG"):
        with open(os.environ["APPS_LOG"], "a") as log:
            log.write(line + "\n")


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

    csp = CSP
    if probe := _probe_origins():
        csp = ResourceCsp(
            connect_domains=[*(CSP.connect_domains or []), probe[0]],
            resource_domains=[*(CSP.resource_domains or []), probe[0]],
        )
    ui_meta = {
        "ui": {
            "csp": csp.model_dump(by_alias=True, exclude_none=True),
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
        _log(f"refresh_chart called: city={city!r}")
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

    @apps.tool(resource_uri=CHART_URI, visibility=["app"], description="The server's key, echoed.")
    def echo_key() -> types.CallToolResult:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"key {secret}")],
            structured_content={"key": secret, secret: "as a key"},
            _meta={"echo": f"key={secret}"},
        )

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
