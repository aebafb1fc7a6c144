"""MCP Apps views on a real ``langgraph dev`` server: the ``mcp-app`` component (``ui/``) renders
a tool's view in headless Chromium and passes the view's own calls to the deployment's route
(``graphs/app.py``: ``langgraph_mcp.apps.app_routes``), which runs them on the thread.

The server has LangGraph custom auth (``tests/browser/app_auth.py``: a bearer token names the
user, each thread is its creator's) and the apps fixture server twice, over stdio (``apps``) and
over streamable HTTP (``apps_http``), both with ``apps: true``; both log each ``refresh_chart``
call to a file.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from langgraph_sdk import get_client
from playwright.async_api import async_playwright, expect

from tests.browser.test_chat_ui import CHROMIUM, WAIT_MS, page_server, say
from tests.conftest_servers import http_server_process
from tests.langgraph_server import REPO_ROOT, DevServer, langgraph_dev, ui_bundle

pytestmark = [pytest.mark.deploy, pytest.mark.slow]

ASSETS = REPO_ROOT / "docs" / "assets"
SERVERS = ["apps", "apps_http"]


@dataclass
class Served:
    server: DevServer
    page_url: str
    logs: dict[str, Path]

    def client(self, user: str) -> Any:
        return get_client(url=self.server.url, headers={"Authorization": f"Bearer {user}"})

    async def route(self, user: str, method: str, path: str, body: Any = None) -> httpx.Response:
        async with httpx.AsyncClient(base_url=self.server.url, timeout=60) as http:
            headers = {"Authorization": f"Bearer {user}"}
            return await http.request(method, f"/mcp-apps/threads/{path}", json=body, headers=headers)


def _config(folder: Path) -> Path:
    config = json.loads((REPO_ROOT / "langgraph.json").read_text())
    config["dependencies"] = [str(REPO_ROOT)]
    config["graphs"]["viewed"] = "tests.browser.viewed:graph"
    config["ui"]["viewed"] = config["ui"]["agent"]
    config["auth"] = {"path": str(REPO_ROOT / "tests/browser/app_auth.py") + ":auth"}
    path = folder / "langgraph.json"
    path.write_text(json.dumps(config))
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("apps")
    logs = {name: folder / f"{name}.log" for name in SERVERS}
    with http_server_process("apps", env={"APPS_LOG": str(logs["apps_http"])}) as url:
        servers = {
            "apps": {
                "command": sys.executable,
                "args": ["-m", "tests.servers.apps"],
                "cwd": str(REPO_ROOT),
                "env": {"APPS_LOG": str(logs["apps"]), "PYTHONPATH": str(REPO_ROOT)},
                "apps": True,
            },
            "apps_http": {"url": url, "apps": True},
        }
        (folder / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
        env = {"LANGGRAPH_MCP_CONFIG": str(folder / "mcp.json"), "LANGGRAPH_MCP_MODEL": "scripted"}
        workdir = folder / "server"
        with (
            langgraph_dev(workdir, _config(folder), env, ui=True) as server,
            page_server(server.url) as page_url,
        ):
            ui_bundle(workdir, "agent")
            yield Served(server, page_url, logs)


def _log(served: Served, server: str) -> str:
    path = served.logs[server]
    return path.read_text() if path.exists() else ""


@pytest.mark.timeout(120)
async def test_the_view_renders_and_its_click_calls_the_server_through_the_route(served: Served) -> None:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM)
        page = await browser.new_page(viewport={"width": 760, "height": 420})
        page.set_default_timeout(WAIT_MS)
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on(
            "response", lambda r: problems.append(f"HTTP {r.status} {r.url}") if r.status >= 400 else None
        )
        await page.goto(
            f"{served.page_url}?{urlencode({'apiUrl': served.server.url, 'assistantId': 'agent'})}"
        )
        await say(page, 'show_chart {"city": "Oslo"}')

        # The component renders the view in its iframe; the view got the call's input and result.
        app = page.locator('[data-testid="mcp-app"]')
        await expect(app).to_have_attribute("data-status", "ready")
        assert await app.locator("iframe").get_attribute("sandbox") == "allow-scripts"
        view = page.frame_locator('[data-testid="mcp-app"] iframe')
        await expect(view.locator("#city")).to_have_text("Oslo")
        await expect(view.locator("#temps")).to_have_text("11, 14, 9")
        assert "refresh_chart" not in _log(served, "apps")

        # A click in the view calls the app-only tool through the route; the server logs it.
        await view.locator("#refresh").click()
        await expect(view.locator("#refreshed")).to_have_text("refreshed Oslo: 11, 14, 9")
        assert "refresh_chart called: city='Oslo'" in _log(served, "apps")
        if os.environ.get("LANGGRAPH_MCP_SCREENSHOTS"):
            await page.locator("main").screenshot(path=str(ASSETS / "mcp-app.png"))

        # The view's message becomes the thread's next human message, sent with the model
        # context it set before; the agent answers it.
        await view.locator("#ask").click()
        await expect(view.locator("#refreshed")).to_have_text("asked")
        reply = page.get_by_test_id("message-ai").last
        await expect(reply).to_contain_text("plain_echo: asked from the view about Oslo")
        [thread] = await get_client(url=served.server.url).threads.search(limit=1)
        state = await get_client(url=served.server.url).threads.get_state(thread["thread_id"])
        assert state["values"]["mcp_app_context"]["structuredContent"] == {
            "city": "Oslo",
            "looking_at": "the chart",
        }
        assert state["values"]["mcp_app_context"]["server"] == "apps"
        assert not [p for p in problems if "Content Security Policy" in p], (
            problems
        )  # the view kept to its CSP
        await browser.close()


async def _thread(served: Served, user: str) -> str:
    thread = await served.client(user).threads.create()
    return str(thread["thread_id"])


@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.timeout(60)
async def test_a_view_may_call_only_its_servers_tools_for_views(served: Served, server: str) -> None:
    tid = await _thread(served, "alice")
    call = {"server": server, "method": "tools/call", "assistant_id": "agent"}

    answer = await served.route(
        "alice",
        "POST",
        f"{tid}/call",
        {**call, "params": {"name": "refresh_chart", "arguments": {"city": "Rome"}}},
    )
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    assert (
        result["structuredContent"] == {"city": "Rome", "temps": [11, 14, 9]} and result["isError"] is False
    )
    assert "refresh_chart called: city='Rome'" in _log(served, server)

    # A model-only tool is refused before any run; so is a tool the server does not have.
    for name in ("plain_echo", "no_such_tool"):
        answer = await served.route(
            "alice", "POST", f"{tid}/call", {**call, "params": {"name": name, "arguments": {"text": "x"}}}
        )
        assert answer.status_code == 403, answer.text
        assert "may not call" in answer.json()["error"]
    answer = await served.route(
        "alice", "POST", f"{tid}/call", {**call, "server": "nope", "params": {"name": "x"}}
    )
    assert answer.status_code == 404

    # resources/read goes through the thread's session of the view's server.
    answer = await served.route(
        "alice",
        "POST",
        f"{tid}/call",
        {"server": server, "method": "resources/read", "params": {"uri": "ui://apps/chart.html"}},
    )
    assert answer.status_code == 200, answer.text
    assert "chart v" in answer.json()["result"]["contents"][0]["text"]

    # The model's conversation is untouched.
    state = await served.client("alice").threads.get_state(tid)
    assert state["values"].get("messages", []) == []


@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.timeout(60)
async def test_a_view_call_that_needs_approval_waits_for_the_threads_interrupt(
    served: Served, server: str
) -> None:
    client = served.client("alice")
    tid = await _thread(served, "alice")
    body = {
        "server": server,
        "method": "tools/call",
        "assistant_id": "viewed",
        "params": {"name": "refresh_chart", "arguments": {"city": "Lima"}},
    }

    answer = await served.route("alice", "POST", f"{tid}/call", body)
    assert answer.status_code == 202, answer.text
    call_id = answer.json()["call_id"]
    assert answer.json()["status"] == "pending"
    thread = await client.threads.get(tid)
    assert thread["status"] == "interrupted"
    [interrupt] = [i for items in thread["interrupts"].values() for i in items]
    assert interrupt["value"]["type"] == "tool_approval" and interrupt["value"]["server"] == server
    assert interrupt["value"]["args"] == {"city": "Lima"}
    assert "city='Lima'" not in _log(served, server)

    # Still pending; another view call is refused while the person has not answered.
    answer = await served.route("alice", "GET", f"{tid}/calls/{call_id}")
    assert answer.status_code == 202
    answer = await served.route("alice", "POST", f"{tid}/call", body)
    assert answer.status_code == 409

    # The person approves, like any approval; the view's call then has its result.
    await client.runs.wait(tid, "viewed", command={"resume": {"type": "approve"}})
    answer = await served.route("alice", "GET", f"{tid}/calls/{call_id}")
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["structuredContent"]["city"] == "Lima"
    assert "refresh_chart called: city='Lima'" in _log(served, server)


@pytest.mark.timeout(60)
async def test_a_call_for_a_thread_the_caller_cannot_access_is_refused(served: Served) -> None:
    tid = await _thread(served, "alice")
    body = {
        "server": "apps",
        "method": "tools/call",
        "assistant_id": "agent",
        "params": {"name": "refresh_chart", "arguments": {"city": "Quito"}},
    }

    answer = await served.route("mallory", "POST", f"{tid}/call", body)
    assert answer.status_code == 404, answer.text
    answer = await served.route(
        "mallory",
        "POST",
        f"{tid}/call",
        {**body, "method": "resources/read", "params": {"uri": "ui://apps/chart.html"}},
    )
    assert answer.status_code == 404
    answer = await served.route("mallory", "GET", f"{tid}/calls/mcp-app-call:0")
    assert answer.status_code == 404
    answer = await served.route("not a user", "POST", f"{tid}/call", body)
    assert answer.status_code == 401
    assert "city='Quito'" not in _log(served, "apps")

    # Its owner may.
    answer = await served.route("alice", "POST", f"{tid}/call", body)
    assert answer.status_code == 200, answer.text
