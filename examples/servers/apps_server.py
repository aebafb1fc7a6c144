"""An MCP Apps server (``io.modelcontextprotocol/ui``) whose view works in a LangGraph UI as it is.

Two tools, one view (``ui://weather/forecast.html``):

* ``show_forecast(city, days=3)``: for the model (and views). Its result is the forecast as
  structured content ``{"city", "days": [{"day", "high", "low", "sky"}], "updated"}``; a host
  that supports MCP Apps shows it in the view.
* ``refresh_forecast(city)``: for the view only (``visibility: ["app"]``, never offered to the
  model): the view's Refresh button calls it with the city it shows. A blank city is refused.

The forecast is made up (the same for a city every time, ``updated`` counting the refreshes): no
network, no key. The view is one HTML document with its script inline; it speaks the MCP Apps
protocol to its host over ``postMessage`` itself (``ui/initialize``, then
``ui/notifications/initialized``, the call's ``tool-input`` and ``tool-result``, ``tools/call``,
``size-changed``), shows "Waiting for the forecast..." as soon as it loads, and needs nothing from
the network (its CSP declares no origin).

    python examples/servers/apps_server.py              # stdio
    python examples/servers/apps_server.py --http 8767  # streamable HTTP on 127.0.0.1:8767

In a deployment's config (``graphs/mcp.json`` has it): ``{"weather": {"command": "python", "args":
["examples/servers/apps_server.py"], "apps": true}}``; ask the agent for the forecast of a city.
"""

from __future__ import annotations

import argparse
import hashlib
from typing import Any

from mcp.server.apps import APP_MIME_TYPE, Apps
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resources import FunctionResource

VIEW_URI = "ui://weather/forecast.html"
SKIES = ["sunny", "cloudy", "rain", "snow", "windy", "fog"]

VIEW = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><style>
body { font-family: system-ui, sans-serif; font-size: 14px; margin: 8px; color: #111827; }
table { border-collapse: collapse; margin: 6px 0; }
td, th { padding: 2px 10px 2px 0; text-align: left; }
#status { color: #6b7280; }
</style></head>
<body>
<h3 style="margin: 0 0 4px">Forecast for <span id="city">...</span></h3>
<table><thead><tr><th>Day</th><th>High</th><th>Low</th><th>Sky</th></tr></thead>
<tbody id="days"></tbody></table>
<button id="refresh" disabled>Refresh</button> <span id="status">Waiting for the forecast...</span>
<script>
(() => {
  // The view's side of the MCP Apps protocol: JSON-RPC 2.0 over postMessage to the host.
  let next = 1, city = "";
  const waiting = new Map();
  const post = (message) => window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
  const request = (method, params) => new Promise((resolve, reject) => {
    const id = next++;
    waiting.set(id, { resolve, reject });
    post({ id, method, params });
  });
  const $ = (id) => document.getElementById(id);
  const resize = () => post({ method: "ui/notifications/size-changed",
    params: { width: document.body.scrollWidth, height: document.body.scrollHeight + 16 } });
  const status = (text) => { $("status").textContent = text; resize(); };
  const setCity = (name) => {
    if (typeof name !== "string" || !name.trim()) return;
    city = name.trim();
    $("city").textContent = city;
    $("refresh").disabled = false;
  };
  const show = (result) => {
    const data = (result && result.structuredContent) || {};
    setCity(data.city);
    const rows = $("days");
    rows.replaceChildren();
    for (const day of Array.isArray(data.days) ? data.days : []) {
      const row = document.createElement("tr");
      for (const value of [day.day, day.high + "\\u00b0", day.low + "\\u00b0", day.sky]) {
        const cell = document.createElement("td");
        cell.textContent = String(value);
        row.appendChild(cell);
      }
      rows.appendChild(row);
    }
    resize();
    return data;
  };
  const failed = (result) => ((result && result.content) || []).map((b) => b.text || "").join(" ");
  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const m = event.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.id !== undefined && m.method === undefined && waiting.has(m.id)) {
      const { resolve, reject } = waiting.get(m.id);
      waiting.delete(m.id);
      m.error ? reject(new Error(m.error.message)) : resolve(m.result);
    } else if (m.method === "ui/notifications/tool-input") {
      setCity(m.params && m.params.arguments && m.params.arguments.city);
    } else if (m.method === "ui/notifications/tool-result") {
      if (m.params && m.params.isError) return status("The forecast failed: " + failed(m.params));
      const data = show(m.params);
      status("Updated " + (data.updated || 0) + " time(s).");
    } else if (m.method === "ping" && m.id !== undefined) {
      post({ id: m.id, result: {} });
    }
  });
  $("refresh").addEventListener("click", async () => {
    if (!city) return;
    $("refresh").disabled = true;
    status("Refreshing " + city + "...");
    try {
      const result = await request("tools/call", { name: "refresh_forecast", arguments: { city } });
      if (result.isError) {
        status("Refresh failed: " + failed(result));
      } else {
        const data = show(result);
        status("Refreshed " + data.city + ": updated " + data.updated + " time(s).");
      }
    } catch (error) {
      status("Refresh failed: " + error.message);
    } finally {
      $("refresh").disabled = !city;
    }
  });
  request("ui/initialize", {
    protocolVersion: "2026-01-26",
    appInfo: { name: "weather-forecast", version: "1.0.0" },
    appCapabilities: {},
  }).then(() => {
    post({ method: "ui/notifications/initialized", params: {} });
    resize();
  }, (error) => status("The host did not answer: " + error.message));
  resize();
})();
</script>
</body></html>
"""
"""The view: renders at once, then fills in the call's city and forecast when the host sends them."""


def forecast(city: str, days: int, updated: int) -> dict[str, Any]:
    """A made-up forecast, the same for a city every time."""
    seed = hashlib.sha256(city.strip().lower().encode()).digest()
    rows = []
    for i in range(days):
        low = seed[i] % 15 - 3
        rows.append(
            {
                "day": f"day {i + 1}",
                "high": low + 4 + seed[i + 8] % 8,
                "low": low,
                "sky": SKIES[seed[i + 16] % len(SKIES)],
            }
        )
    return {"city": city.strip(), "days": rows, "updated": updated}


def build_server() -> MCPServer:
    apps = Apps()
    refreshes: dict[str, int] = {}
    apps.add_resource(
        FunctionResource(
            uri=VIEW_URI,
            name="forecast",
            description="The forecast of a city, with a Refresh button.",
            mime_type=APP_MIME_TYPE,
            meta={"ui": {"prefersBorder": True}},
            fn=lambda: VIEW,
        )
    )

    @apps.tool(resource_uri=VIEW_URI, description="The weather forecast of a city, shown as a table.")
    def show_forecast(city: str, days: int = 3) -> dict[str, Any]:
        if not city.strip():
            raise ToolError("name a city")
        return forecast(city, max(1, min(days, 7)), refreshes.get(city.strip().lower(), 0))

    @apps.tool(
        resource_uri=VIEW_URI,
        visibility=["app"],
        description="Refresh the forecast of a city (the view's Refresh button calls it).",
    )
    def refresh_forecast(city: str) -> dict[str, Any]:
        if not city.strip():
            raise ToolError("name a city: the view sent none")
        key = city.strip().lower()
        refreshes[key] = refreshes.get(key, 0) + 1
        return forecast(city, 3, refreshes[key])

    return MCPServer("weather", extensions=[apps])


def main() -> None:
    parser = argparse.ArgumentParser(description="An MCP Apps server: a city's forecast and its view.")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT")
    args = parser.parse_args()
    server = build_server()
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
