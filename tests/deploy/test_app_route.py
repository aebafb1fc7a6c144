"""The MCP Apps route (``app_routes``) of a ``create_mcp_agent`` deployment on a real
``langgraph dev`` with custom auth (``tests/deploy/app_agent.py``): views' calls of the prebuilt
agent, a call waiting for approval that a user's run drops, reads only of what the view's server
declares, and the cap on calls at once.

Its MCP servers: the apps fixture server over stdio in both protocol eras (``apps``,
``apps_legacy``) and one over streamable HTTP reached in both eras (``apps_http``,
``apps_http_legacy``) and once more with a per-call header (``apps_user``); the demo server (its
``hang`` tool keeps a thread busy)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from tests.conftest_servers import http_server_process
from tests.langgraph_server import REPO_ROOT, DevServer, langgraph_dev

pytestmark = [pytest.mark.deploy, pytest.mark.timeout(300)]

APPS = ["apps", "apps_legacy", "apps_http", "apps_http_legacy"]
CHART = "ui://apps/chart.html"
KEY = "apps-key-7d41c9e2b5"
"""The ``apps`` server's ``env`` secret, which its ``echo_key`` tool echoes."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    folder = tmp_path_factory.mktemp("app-route")
    with http_server_process("apps") as url:
        stdio = {"command": sys.executable, "args": ["-m", "tests.servers.apps"], "cwd": str(REPO_ROOT)}
        servers = {
            "apps": {**stdio, "apps": True, "env": {"APPS_KEY": KEY}},
            "apps_legacy": {**stdio, "apps": True, "protocol": "legacy"},
            "apps_http": {"url": url, "apps": True},
            "apps_http_legacy": {"url": url, "apps": True, "protocol": "legacy"},
            "apps_user": {"url": url, "apps": True},
            "demo": {"command": sys.executable, "args": [str(REPO_ROOT / "tests/servers/demo.py")]},
        }
        (folder / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
        config = {
            "dependencies": [str(REPO_ROOT)],
            "graphs": {"prebuilt": "tests.deploy.app_agent:graph", "routed": "tests.deploy.app_agent:routed"},
            "http": {"app": "tests.deploy.app_agent:app"},
            "auth": {"path": str(REPO_ROOT / "tests/deploy/app_agent.py") + ":auth"},
        }
        (folder / "langgraph.json").write_text(json.dumps(config))
        env = {"LANGGRAPH_MCP_CONFIG": str(folder / "mcp.json")}
        with langgraph_dev(folder / "server", folder / "langgraph.json", env) as running:
            yield running


def _client(server: DevServer, user: str) -> Any:
    return get_client(url=server.url, headers={"Authorization": f"Bearer {user}"})


async def _route(server: DevServer, user: str, method: str, path: str, body: Any = None) -> httpx.Response:
    async with httpx.AsyncClient(base_url=server.url, timeout=120) as http:
        headers = {"Authorization": f"Bearer {user}"}
        return await http.request(method, f"/mcp-apps/threads/{path}", json=body, headers=headers)


def _call(
    server_name: str, tool: str, arguments: dict[str, Any], assistant: str = "prebuilt"
) -> dict[str, Any]:
    return {
        "server": server_name,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
        "assistant_id": assistant,
    }


def _read(server_name: str, uri: str) -> dict[str, Any]:
    return {"server": server_name, "method": "resources/read", "params": {"uri": uri}}


@pytest.mark.parametrize("apps", APPS)
async def test_a_prebuilt_agents_view_calls_its_server_through_the_route(
    server: DevServer, apps: str
) -> None:
    thread = await _client(server, "alice").threads.create()
    tid = thread["thread_id"]
    answer = await _route(
        server, "alice", "POST", f"{tid}/call", _call(apps, "refresh_chart", {"city": "Oslo"})
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["structuredContent"] == {"city": "Oslo", "temps": [11, 14, 9]}
    state = await _client(server, "alice").threads.get_state(tid)
    assert state["values"].get("messages", []) == []  # the model never ran
    # Someone else's thread is not there for them; a model-only tool is refused before any run.
    other = await _route(server, "bob", "POST", f"{tid}/call", _call(apps, "refresh_chart", {"city": "X"}))
    assert other.status_code == 404
    model_only = await _route(
        server, "alice", "POST", f"{tid}/call", _call(apps, "plain_echo", {"text": "x"})
    )
    assert model_only.status_code == 403


@pytest.mark.parametrize("assistant", ["prebuilt", "routed"])
async def test_a_view_call_waiting_for_approval_is_answered_or_dropped_by_the_users_next_run(
    server: DevServer, assistant: str
) -> None:
    alice = _client(server, "alice")
    tid = (await alice.threads.create())["thread_id"]
    asked = await _route(
        server, "alice", "POST", f"{tid}/call", _call("apps_http", "show_chart", {"city": "Oslo"}, assistant)
    )
    assert asked.status_code == 202, asked.text
    call_id = asked.json()["call_id"]
    assert (await _route(server, "alice", "GET", f"{tid}/calls/{call_id}")).status_code == 202

    # A person approves: the call runs, and its answer is there.
    await alice.runs.wait(tid, assistant, command={"resume": {"type": "approve"}})
    done = await _route(server, "alice", "GET", f"{tid}/calls/{call_id}")
    assert done.status_code == 200, done.text
    assert done.json()["result"]["structuredContent"]["city"] == "Oslo"

    # Asked again, then the user writes instead: the message reaches the model, the call is dropped.
    asked = await _route(
        server, "alice", "POST", f"{tid}/call", _call("apps", "show_chart", {"city": "Rome"}, assistant)
    )
    assert asked.status_code == 202, asked.text
    call_id = asked.json()["call_id"]
    said = await alice.runs.wait(tid, assistant, input={"messages": [{"type": "human", "content": "hello"}]})
    assert said["messages"][-1]["type"] == "ai" and said["messages"][0]["content"] == "hello"
    assert (await alice.threads.get(tid))["status"] == "idle"
    dropped = await _route(server, "alice", "GET", f"{tid}/calls/{call_id}")
    assert dropped.status_code == 410 and "dropped" in dropped.json()["error"]
    # A resume reaching the idle thread later (a stale "continue", an approval sent twice)
    # revives nothing: the user's next message is the model's, its own tool runs, the call
    # stays dropped and nothing is asked.
    await alice.runs.wait(tid, assistant, command={"resume": {"type": "approve"}})
    said = await alice.runs.wait(
        tid, assistant, input={"messages": [{"type": "human", "content": 'plain_echo {"text": "hi"}'}]}
    )
    assert said["messages"][-1]["content"] == "plain_echo: hi", said["messages"][-1]
    thread = await alice.threads.get(tid)
    assert thread["status"] == "idle" and not thread["interrupts"], thread
    dropped = await _route(server, "alice", "GET", f"{tid}/calls/{call_id}")
    assert dropped.status_code == 410, dropped.text
    # The thread takes the next view call as usual.
    again = await _route(
        server, "alice", "POST", f"{tid}/call", _call("apps", "refresh_chart", {"city": "Rome"}, assistant)
    )
    assert again.status_code == 200, again.text


async def test_a_secret_the_server_echoes_is_masked_in_the_answer_to_a_views_call(server: DevServer) -> None:
    alice = _client(server, "alice")
    tid = (await alice.threads.create())["thread_id"]
    answer = await _route(server, "alice", "POST", f"{tid}/call", _call("apps", "echo_key", {}))
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    assert KEY not in answer.text, result
    assert result["content"][0]["text"] == "key ***"
    assert result["structuredContent"] == {"key": "***", "***": "as a key"}
    assert result["_meta"] == {"echo": "key=***"}
    # Polled afterwards: the same answer, masked too.
    [call] = [m for m in (await alice.threads.get_state(tid))["values"]["mcp_app_calls"] if m["type"] == "ai"]
    polled = await _route(server, "alice", "GET", f"{tid}/calls/{call['id']}")
    assert polled.status_code == 200 and KEY not in polled.text
    assert polled.json() == answer.json()


@pytest.mark.parametrize("apps", APPS)
async def test_a_view_reads_only_what_its_server_declares(server: DevServer, apps: str) -> None:
    tid = (await _client(server, "alice").threads.create())["thread_id"]
    read = await _route(server, "alice", "POST", f"{tid}/call", _read(apps, CHART))
    assert read.status_code == 200, read.text
    [content] = read.json()["result"]["contents"]
    assert content["uri"] == CHART and "chart v" in content["text"]
    for uri in ("ui://apps/secret.html", "file:///etc/passwd", "ui://apps/chart.html?x=1"):
        refused = await _route(server, "alice", "POST", f"{tid}/call", _read(apps, uri))
        assert refused.status_code == 403, (uri, refused.text)
        assert "may read only resources its server lists" in refused.json()["error"]
    other = await _route(server, "bob", "POST", f"{tid}/call", _read(apps, CHART))
    assert other.status_code == 404


async def test_a_read_that_would_go_without_the_users_per_call_headers_is_refused(server: DevServer) -> None:
    tid = (await _client(server, "alice").threads.create())["thread_id"]
    refused = await _route(server, "alice", "POST", f"{tid}/call", _read("apps_user", CHART))
    assert refused.status_code == 403 and "per-call headers" in refused.json()["error"]


async def test_the_cap_of_a_thread_holds_whatever_the_spelling_of_its_id(server: DevServer) -> None:
    alice = _client(server, "alice")
    tid = (await alice.threads.create())["thread_id"]
    run = await alice.runs.create(tid, "prebuilt", input={"messages": [{"type": "human", "content": "hang"}]})
    body = _call("apps", "refresh_chart", {"city": "Oslo"})
    # LangGraph takes a thread id in upper case and without its dashes as the same thread.
    spellings = [tid, tid.upper(), tid.replace("-", "")]
    pending: set[asyncio.Task[httpx.Response]] = set()
    try:
        assert (await alice.threads.get(spellings[2]))["thread_id"] == tid
        waiting = [asyncio.create_task(_route(server, "alice", "POST", f"{t}/call", body)) for t in spellings]
        done, pending = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED, timeout=60)
        assert len(done) == 1, "no call was refused: the spellings were counted as three threads"
        [refused] = [t.result() for t in done]
        assert refused.status_code == 429 and "this thread" in refused.json()["error"], refused.text
    finally:
        await alice.runs.cancel(tid, run["run_id"], wait=True)
        answers = await asyncio.gather(*pending)
    assert all(a.status_code in (200, 409) for a in answers), [a.text for a in answers]


async def _refused_one(tasks: list[asyncio.Task[httpx.Response]]) -> tuple[httpx.Response, set[Any]]:
    """The one request of ``tasks`` refused at once (the others wait for their busy thread)."""
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED, timeout=60)
    assert len(done) == 1, f"{len(done)} of {len(tasks)} requests answered at once"
    [refused] = [t.result() for t in done]
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "2", refused.text
    return refused, pending


async def test_views_calls_at_once_are_capped_per_thread_per_user_and_in_all(server: DevServer) -> None:
    # The route serves 2 calls of a thread, 3 of a user and 4 in all at once.
    users = {name: _client(server, name) for name in ("alice", "bob", "carol")}
    threads = {
        name: [(await client.threads.create())["thread_id"] for _ in range(2 if name == "alice" else 1)]
        for name, client in users.items()
    }
    hang = {"messages": [{"type": "human", "content": "hang"}]}
    runs = [
        (name, tid, await users[name].runs.create(tid, "prebuilt", input=hang))
        for name in ("alice", "bob")
        for tid in threads[name]
    ]
    body = _call("apps", "refresh_chart", {"city": "Oslo"})

    def post(user: str, tid: str, n: int) -> list[asyncio.Task[httpx.Response]]:
        return [asyncio.create_task(_route(server, user, "POST", f"{tid}/call", body)) for _ in range(n)]

    held: set[asyncio.Task[httpx.Response]] = set()
    try:
        # The threads are busy: each view call waits for its thread, holding its place.
        refused, pending = await _refused_one(post("alice", threads["alice"][0], 3))
        assert "this thread" in refused.json()["error"]
        held |= pending
        # Alice's own calls on her other thread: her share (3) is full, though the route is not.
        refused, pending = await _refused_one(post("alice", threads["alice"][1], 2))
        assert "this user" in refused.json()["error"], refused.text
        held |= pending
        # So Bob is still served: alice cannot keep him out.
        refused, pending = await _refused_one(post("bob", threads["bob"][0], 2))
        assert "in all" in refused.json()["error"], refused.text
        held |= pending
        assert len(held) == 4 and all(not t.done() for t in held)
    finally:
        for name, tid, run in runs:
            await users[name].runs.cancel(tid, run["run_id"], wait=True)
        answers = await asyncio.gather(*held)
    assert all(a.status_code in (200, 409) for a in answers), [a.text for a in answers]
    # Places are given back once their calls end (a cancelled run may leave its thread
    # "interrupted" for a moment: 409, not 429).
    again = await _route(server, "alice", "POST", f"{threads['alice'][0]}/call", body)
    assert again.status_code in (200, 409), again.text
    after = await _route(server, "carol", "POST", f"{threads['carol'][0]}/call", body)
    assert after.status_code == 200, after.text
