"""One ``langgraph dev`` (its UI bundled) and the chat page, shared by every browser test (each
test has threads of its own): bundling the UI costs seconds of CPU at each server start.

The server runs the repository's ``langgraph.json`` with two graphs added, ``reviewed_agent``
(``tests/browser/reviewed.py``) and ``viewed`` (``tests/browser/viewed.py``), their UI registered
like the others', and LangGraph custom auth (``tests/browser/app_auth.py``: a bearer token names
the user, no token is ``anonymous``, each thread is its creator's). Its MCP servers: the bundled
demo servers, the demo fixture server, and the MCP Apps fixture server twice, over stdio
(``apps``) and over streamable HTTP (``apps_http``), both with ``apps: true``, each logging its
``refresh_chart`` calls to a file of its own (``Served.logs``). The chat model is the scripted one.

Two probe servers on loopback (``Served.probe``) answer what the chart view's test controls load
(``tests/servers/apps.py``, ``$APPS_PROBE``): the first origin is declared in the chart's CSP, the
second is not; both log each request they get, and the first serves ``/elsewhere``, a page that
is not the view, speaking the MCP Apps protocol to whatever frame holds it.
"""

from __future__ import annotations

import http.server
import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from tests.browser.test_chat_ui import page_server
from tests.conftest_servers import http_server_process
from tests.deploy.test_langgraph_dev import mcp_config
from tests.langgraph_server import REPO_ROOT, DevServer, langgraph_dev, ui_bundle

APPS_SERVERS = ["apps", "apps_http"]


ELSEWHERE = """<!doctype html><html><body><p>elsewhere: sent <b id="sent">0</b>,
answered <b id="answered">0</b>, stray <b id="stray">-</b></p><script>
let sent = 0, answered = 0;
const show = (id, n) => { document.getElementById(id).textContent = String(n); };
addEventListener("message", (event) => {
  const m = event.data;
  if (!(m && m.jsonrpc === "2.0" && m.id !== undefined && m.method === undefined)) return;
  if (typeof m.id === "string" && m.id.startsWith("elsewhere-")) show("answered", ++answered);
  else show("stray", JSON.stringify(m.id));  // an answer to the view's own request, sent to its frame
});
const post = (method, params) => {
  window.parent.postMessage({ jsonrpc: "2.0", id: "elsewhere-" + ++sent, method, params }, "*");
  show("sent", sent);
};
post("ui/initialize", { protocolVersion: "2026-01-26", appInfo: { name: "elsewhere", version: "1" },
  appCapabilities: {} });
post("tools/call", { name: "refresh_chart", arguments: { city: "Elsewhere" } });
post("ui/message", { role: "user", content: [{ type: "text", text: "sent from elsewhere" }] });
const timer = setInterval(() => { post("ping", {}); if (sent >= 12) clearInterval(timer); }, 100);
</script></body></html>"""
"""The page the chart view's Leave button navigates its frame to: it asks its parent for the
bridge (``ui/initialize``, a tool call, a message, then a ping every 100 ms up to 12 requests,
each with an id of its own, ``elsewhere-<n>``) and counts the answers to them. A response to a
request the view itself sent before it left, posted to the frame as it navigated, is shown as
``stray`` (its id), not counted: it carries only what the view asked for."""

GIF = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b")


class _ProbeHandler(http.server.BaseHTTPRequestHandler):
    log_to: list[str]

    def do_GET(self) -> None:
        self.log_to.append(f"{self.server.server_address[1]} {self.path}")
        if self.path == "/elsewhere":
            body, kind = ELSEWHERE.encode(), "text/html"
        elif self.path == "/probe/img":
            body, kind = GIF, "image/gif"
        else:
            body, kind = b"ok", "text/plain"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def probe_servers(log: list[str]) -> Iterator[list[str]]:
    """Two loopback HTTP servers logging each request (``"<port> <path>"``) to ``log``; their
    origins."""
    handler = type("Handler", (_ProbeHandler,), {"log_to": log})
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) for _ in range(2)]
    for httpd in servers:
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield [f"http://127.0.0.1:{httpd.server_address[1]}" for httpd in servers]
    finally:
        for httpd in servers:
            httpd.shutdown()
            httpd.server_close()


@dataclass
class Served:
    server: DevServer
    page_url: str
    logs: dict[str, Path] = field(default_factory=dict)
    probe: list[str] = field(default_factory=list)
    """The probe servers' origins: declared in the chart's CSP, and not."""
    probed: list[str] = field(default_factory=list)
    """What the probe servers were asked for, ``"<port> <path>"`` each."""

    def client(self, user: str) -> Any:
        """An SDK client authenticated as ``user``."""
        return get_client(url=self.server.url, headers={"Authorization": f"Bearer {user}"})

    async def route(self, user: str, method: str, path: str, body: Any = None) -> httpx.Response:
        """A request to the MCP Apps route (``/mcp-apps/threads/<path>``) as ``user``."""
        async with httpx.AsyncClient(base_url=self.server.url, timeout=60) as http:
            headers = {"Authorization": f"Bearer {user}"}
            return await http.request(method, f"/mcp-apps/threads/{path}", json=body, headers=headers)

    def log(self, server: str) -> str:
        """What the apps fixture server ``server`` logged so far."""
        path = self.logs[server]
        return path.read_text() if path.exists() else ""


def chat_config(folder: Path) -> Path:
    config = json.loads((REPO_ROOT / "langgraph.json").read_text())
    config["dependencies"] = [str(REPO_ROOT)]
    for graph, path in (("reviewed_agent", "reviewed"), ("viewed", "viewed")):
        config["graphs"][graph] = f"tests.browser.{path}:graph"
        config["ui"][graph] = config["ui"]["agent"]
    config["auth"] = {"path": str(REPO_ROOT / "tests/browser/app_auth.py") + ":auth"}
    path = folder / "langgraph.json"
    path.write_text(json.dumps(config))
    return path


@pytest.fixture(scope="package")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("chat")
    logs = {name: folder / f"{name}.log" for name in APPS_SERVERS}
    probed: list[str] = []
    with (
        probe_servers(probed) as probe,
        http_server_process(
            "apps", env={"APPS_LOG": str(logs["apps_http"]), "APPS_PROBE": " ".join(probe)}
        ) as url,
    ):
        servers = json.loads(mcp_config(folder, demo=True).read_text())["mcpServers"]
        servers["apps"] = {
            "command": sys.executable,
            "args": ["-m", "tests.servers.apps"],
            "cwd": str(REPO_ROOT),
            "env": {
                "APPS_LOG": str(logs["apps"]),
                "PYTHONPATH": str(REPO_ROOT),
                "APPS_PROBE": " ".join(probe),
            },
            "apps": True,
        }
        servers["apps_http"] = {"url": url, "apps": True}
        (folder / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
        env = {"LANGGRAPH_MCP_CONFIG": str(folder / "mcp.json"), "LANGGRAPH_MCP_MODEL": "scripted"}
        workdir = folder / "server"
        with (
            langgraph_dev(workdir, chat_config(folder), env, ui=True) as server,
            page_server(server.url) as page_url,
        ):
            for graph in ("agent", "tools", "reviewed_agent"):
                ui_bundle(workdir, graph)
            yield Served(server, page_url, logs, probe, probed)
