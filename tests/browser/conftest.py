"""One ``langgraph dev`` (its UI bundled) and the chat page, shared by every browser test (each
test has threads of its own): bundling the UI costs seconds of CPU at each server start.

The server runs the repository's ``langgraph.json`` with two graphs added, ``reviewed_agent``
(``tests/browser/reviewed.py``) and ``viewed`` (``tests/browser/viewed.py``), their UI registered
like the others', and LangGraph custom auth (``tests/browser/app_auth.py``: a bearer token names
the user, no token is ``anonymous``, each thread is its creator's). Its MCP servers: the bundled
demo servers, the demo fixture server, and the MCP Apps fixture server twice, over stdio
(``apps``) and over streamable HTTP (``apps_http``), both with ``apps: true``, each logging its
``refresh_chart`` calls to a file of its own (``Served.logs``). The chat model is the scripted one.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
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


@dataclass
class Served:
    server: DevServer
    page_url: str
    logs: dict[str, Path] = field(default_factory=dict)

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
    with http_server_process("apps", env={"APPS_LOG": str(logs["apps_http"])}) as url:
        servers = json.loads(mcp_config(folder, demo=True).read_text())["mcpServers"]
        servers["apps"] = {
            "command": sys.executable,
            "args": ["-m", "tests.servers.apps"],
            "cwd": str(REPO_ROOT),
            "env": {"APPS_LOG": str(logs["apps"]), "PYTHONPATH": str(REPO_ROOT)},
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
            yield Served(server, page_url, logs)
