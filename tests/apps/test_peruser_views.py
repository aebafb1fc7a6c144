"""MCP Apps views of a per-user OAuth server's tools: a user's view is read on that user's
session, with their token, and a call from it runs as that user; nothing of it reaches another
user's run.

The server (``tests/servers/peruser_apps.py``) lists each user their own tools with views, behind
a gate that guards every request (so it lists nothing without a token); one view URI serves every
user, and its HTML names the user it was read for. The deployment is the one of
``tests/oauth/test_peruser_catalog.py`` (the SDK's authorization server and the package's callback
route on loopback, alice and bob sign in through ``connect_api``), with ``apps: true`` and an agent
built with ``view_calls=True``. A view's call is driven as the route's run drives it
(``view_call_input`` + ``view_call_config`` on the view's thread, as the run's user), and once
through ``app_routes(agent.mcp)`` in process, with a small stand-in for the LangGraph API that
runs the agent as the caller. What crossed is counted at the server.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from langgraph_mcp import MCPPool, create_mcp_agent
from langgraph_mcp.apps import VIEW_CALL_CONFIG, VIEW_CALLS_KEY, app_routes, view_call_config, view_call_input
from langgraph_mcp.config import load_connections
from tests.chat import ScriptModel
from tests.conftest_servers import serve_in_loop
from tests.oauth.test_peruser_catalog import HELLO, KEY, Deployment, GuardEverything, last_tool, signin_site
from tests.servers import peruser_apps
from tests.servers._runner import bind_socket
from tests.servers.authorization import Provider

BOARD = peruser_apps.BOARD
A1, A2, B1 = (str(uuid.uuid4()) for _ in range(3))
"""Alice's threads and bob's (UUIDs: the route takes only those)."""


@dataclass
class Views(Deployment):
    """The deployment, its runs streamed: the MCP Apps views each user's runs were sent."""

    seen: peruser_apps.Seen = field(default_factory=peruser_apps.Seen)
    shown: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    """``(user, thread, props)`` of each ``mcp-app`` UI message a run streamed."""
    outputs: list[tuple[str, str]] = field(default_factory=list)
    """``(user, everything the run streamed and left in its thread, as JSON)`` of each run."""

    def config(self, user: str, thread: str) -> RunnableConfig:
        return {"configurable": {"thread_id": thread, "langgraph_auth_user": {"identity": user}}}

    async def _run(self, user: str, thread: str, given: Any, config: Any = None) -> dict[str, Any]:
        config = config or self.config(user, thread)
        out: dict[str, Any] = {}
        streamed: list[Any] = []
        async for mode, chunk in self.agent.astream(given, config, stream_mode=["custom", "values"]):
            streamed.append(chunk)
            if mode == "custom" and isinstance(chunk, dict) and chunk.get("name") == "mcp-app":
                self.shown.append((user, thread, chunk["props"]))
            elif mode == "values":
                out = chunk
        state = await self.agent.aget_state(config)
        if state.interrupts:
            out = {**state.values, "__interrupt__": state.interrupts}
        self.outputs.append((user, json.dumps([streamed, state.values], default=str)))
        return out

    def views_of(self, user: str) -> list[dict[str, Any]]:
        return [props for who, _, props in self.shown if who == user]

    def last_view(self, user: str) -> dict[str, Any]:
        """The view ``user``'s last run was sent (it must have been sent one)."""
        views = self.views_of(user)
        assert views, f"no MCP Apps view was sent to {user}'s run; the server read {self.seen.read}"
        return views[-1]

    async def view_call(self, user: str, thread: str, tool: str, args: dict[str, Any]) -> ToolMessage:
        """A call from the view on ``thread``, run as the route's run runs it (as ``user``)."""
        payload = view_call_input("api", tool, args)
        call_id = payload[VIEW_CALLS_KEY][-1].tool_calls[0]["id"]
        before = len(self.model.calls)
        await self._run(user, thread, payload, view_call_config(payload, self.config(user, thread)))
        assert len(self.model.calls) == before  # the model never ran, nor saw the call
        values = (await self.agent.aget_state(self.config(user, thread))).values
        [answer] = [
            m for m in values[VIEW_CALLS_KEY] if isinstance(m, ToolMessage) and m.tool_call_id == call_id
        ]
        return answer


@asynccontextmanager
async def deployment(protocol: str) -> AsyncIterator[Views]:
    """``tests/oauth/test_peruser_catalog.py``'s deployment, with the per-user server with views
    (``apps: true``) and an agent that takes views' calls."""
    provider = Provider(token_ttl=600)
    sock = bind_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    guard = GuardEverything(provider, base)
    seen = peruser_apps.Seen()
    async with serve_in_loop(peruser_apps.build_server(seen), "http", wrap=guard.wrap) as url:
        oauth = {"redirect_uri": f"{base}/oauth/callback", "encryption_key": KEY}
        servers = load_connections(
            {"api": {"url": url, "protocol": protocol, "timeout": 20, "apps": True, "oauth": oauth}}
        )
        store = InMemoryStore()
        async with signin_site(provider, sock, base, servers, store), MCPPool(servers) as pool:
            model = ScriptModel()
            agent = create_mcp_agent(model, pool, checkpointer=InMemorySaver(), store=store, view_calls=True)
            catalog: Any = None  # the server keeps what it saw in ``seen``
            yield Views(provider, guard.gate, catalog, store, servers, pool, model, agent, seen=seen)


def one_user_per_session(seen: peruser_apps.Seen) -> None:
    """No MCP session carried two users' requests (2025-11-25; 2026-07-28 has no sessions)."""
    users: dict[str, set[str]] = {}
    for user, _, sid in seen.requests:
        if sid:
            users.setdefault(sid, set()).add(user)
    assert all(len(who) == 1 for who in users.values()), users


def session_of(seen: peruser_apps.Seen, user: str, method: str) -> str:
    """The session of ``user``'s last ``method`` request."""
    return [sid for who, m, sid in seen.requests if who == user and m == method][-1]


async def test_a_users_view_is_read_with_their_token_and_shown_only_to_them() -> None:
    async with deployment("legacy") as d:  # 2025-11-25: the server sees each request's session
        assert "alice_board" in await d.connect("alice", A1)
        assert d.seen.read == []  # nothing read before a call of hers showed a view

        assert last_tool(await d.say("alice", A1, 'alice_board {"q": "today"}')) == "alice_board for alice"
        view = d.last_view("alice")
        assert (view["server"], view["tool_name"], view["resource_uri"]) == ("api", "alice_board", BOARD)
        assert view["html"] == peruser_apps.board_html("alice") and view["thread_id"] == A1
        assert view["result"]["structuredContent"] == {"tool": "alice_board", "user": "alice"}
        # Read at the server once, with her token, on the session her call ran on.
        assert d.seen.read == [("alice", BOARD)]
        assert session_of(d.seen, "alice", "resources/read") == session_of(d.seen, "alice", "tools/call")

        # Bob: the same view URI, read for him, with his token: never alice's copy of it.
        assert "bob_board" in await d.connect("bob", B1)
        assert last_tool(await d.say("bob", B1, "bob_board")) == "bob_board for bob"
        view = d.last_view("bob")
        assert view["html"] == peruser_apps.board_html("bob") and view["tool_name"] == "bob_board"
        assert d.seen.read == [("alice", BOARD), ("bob", BOARD)]

        # Her call in her other thread shows her view again (read with her token), never bob's.
        await d.say("alice", A2, "alice_board")
        assert [v["html"] for v in d.views_of("alice")] == [peruser_apps.board_html("alice")] * 2
        assert {user for user, _ in d.seen.read} == {"alice", "bob"}
        one_user_per_session(d.seen)
        assert "" not in {user for user, _, _ in d.seen.requests}  # the gate let nothing anonymous by


async def test_a_call_from_a_users_view_runs_as_them_and_never_reaches_another_users_tool() -> None:
    async with deployment("legacy") as d:  # 2025-11-25: the server sees each request's session
        await d.connect("alice", A1)
        await d.connect("bob", B1)
        await d.say("alice", A1, "alice_board")
        assert len(d.views_of("alice")) == 1
        board = session_of(d.seen, "alice", "tools/call")  # the session her view came with
        asked = len(d.model.calls)

        # Her view calls her tool meant for views: it runs at the server as alice.
        answer = await d.view_call("alice", A1, "alice_refresh", {"q": "now"})
        assert answer.status == "success" and answer.text == "alice_refresh for alice"
        assert answer.artifact["structured_content"] == {"tool": "alice_refresh", "user": "alice"}
        assert d.seen.called[-1] == ("alice", "alice_refresh")
        # On her own session: the one her call that showed the view ran on, which bob never used.
        assert session_of(d.seen, "alice", "tools/call") == board and board not in d.seen.sessions("bob")

        # A tool only bob lists: refused in her run, and nothing reaches the server.
        called = list(d.seen.called)
        for tool in ("bob_secret", "bob_board"):
            answer = await d.view_call("alice", A1, tool, {})
            assert answer.status == "error" and tool in answer.text
        assert d.seen.called == called

        # Bob's view calls his own; alice's is refused to him the same way.
        answer = await d.view_call("bob", B1, "bob_secret", {})
        assert answer.status == "success" and answer.text == "bob_secret for bob"
        answer = await d.view_call("bob", B1, "alice_refresh", {})
        assert answer.status == "error" and "alice_refresh" in answer.text
        assert d.seen.called == [*called, ("bob", "bob_secret")]
        assert len(d.model.calls) == asked  # the model saw none of these calls
        assert len(d.views_of("alice")) == 1 and d.views_of("bob") == []  # a view's call shows no view
        one_user_per_session(d.seen)


async def test_nothing_of_a_users_view_reaches_another_users_run() -> None:
    async with deployment("auto") as d:  # 2026-07-28: each request is the user's, no sessions
        await d.connect("alice", A1)
        await d.say("alice", A1, "alice_board")
        assert [v["html"] for v in d.views_of("alice")] == [peruser_apps.board_html("alice")]
        assert d.seen.read == [("alice", BOARD)]
        answer = await d.view_call("alice", A1, "alice_refresh", {})
        assert answer.text == "alice_refresh for alice" and d.seen.called[-1] == ("alice", "alice_refresh")

        await d.connect("bob", B1)
        await d.say("bob", B1, HELLO)
        assert {"bob_board", "whoami"} <= d.offered() and not d.offered() & {"alice_board", "alice_refresh"}
        await d.say("bob", B1, "bob_board")
        # A model's call naming alice's tool: refused without a request, and no view.
        d.model.unbound = "call"
        out = await d.say("bob", B1, "alice_board")
        message = [m for m in out["messages"] if isinstance(m, ToolMessage)][-1]
        assert message.status == "error" and ("bob", "alice_board") not in d.seen.called
        await d.view_call("bob", B1, "alice_refresh", {})

        # Whatever bob's runs streamed or left in his thread holds nothing of alice's view.
        bobs = [text for user, text in d.outputs if user == "bob"]
        assert bobs and not any("board of alice" in t or "alice_refresh for" in t for t in bobs)
        assert [v["html"] for v in d.views_of("bob")] == [peruser_apps.board_html("bob")]
        assert ("bob", BOARD) in d.seen.read and not [r for r in d.seen.read if r[0] not in ("alice", "bob")]

        # The route reads no view of a per-user server: bob cannot read the view URI through it.
        async with route(d) as client:
            read = {"server": "api", "method": "resources/read", "params": {"uri": BOARD}}
            refused = await client.post(f"/mcp-apps/threads/{B1}/call", json=read, headers=bearer("bob"))
            assert refused.status_code == 403 and "acts for each user" in refused.json()["error"]
            assert "board of" not in refused.text
        assert [r for r in d.seen.read if r[0] == "bob"] == [("bob", BOARD)]


# -- the route, in process ----------------------------------------------------------------------


def bearer(user: str) -> dict[str, str]:
    return {"authorization": f"Bearer {user}"}


def _jsonable(values: dict[str, Any]) -> dict[str, Any]:
    """A thread's values as the LangGraph API answers them (messages as dicts)."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, list):
            out[key] = [v.model_dump() if isinstance(v, BaseMessage) else v for v in value]
        else:
            out[key] = value
    return json.loads(json.dumps(out, default=str))  # type: ignore[no-any-return]


def stand_in_api(d: Views) -> Starlette:
    """The LangGraph API as far as the route asks it: a caller's bearer names the user, who may
    use only their own threads; a run runs the agent as that user."""
    threads = {A1: "alice", A2: "alice", B1: "bob"}

    def caller(request: Request) -> str | None:
        user = request.headers.get("authorization", "").removeprefix("Bearer ")
        return user if threads.get(request.path_params["tid"]) == user else None

    async def thread(request: Request) -> Response:
        if caller(request) is None:
            return JSONResponse({"detail": "not found"}, status_code=404)
        tid = request.path_params["tid"]
        return JSONResponse({"thread_id": tid, "status": "idle", "metadata": {"graph_id": "agent"}})

    async def wait(request: Request) -> Response:
        user = caller(request)
        if user is None:
            return JSONResponse({"detail": "not found"}, status_code=404)
        body = await request.json()
        config = d.config(user, request.path_params["tid"])
        config["configurable"][VIEW_CALL_CONFIG] = body["config"]["configurable"][VIEW_CALL_CONFIG]
        await d._run(user, request.path_params["tid"], body["input"], config)
        return JSONResponse(_jsonable((await d.agent.aget_state(config)).values))

    return Starlette(
        routes=[
            Route("/threads/{tid}", thread),
            Route("/threads/{tid}/runs/wait", wait, methods=["POST"]),
        ]
    )


@asynccontextmanager
async def route(d: Views) -> AsyncIterator[httpx.AsyncClient]:
    """``app_routes(agent.mcp)`` served in process, over the stand-in API."""
    api = httpx.ASGITransport(app=stand_in_api(d))
    app = Starlette(routes=app_routes(d.agent.mcp, api=api))
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://deployment", timeout=30) as client:
        yield client


def _call(tool: str) -> dict[str, Any]:
    return {"server": "api", "method": "tools/call", "params": {"name": tool, "arguments": {"q": "now"}}}


async def test_a_call_from_a_users_view_through_the_route_runs_as_them() -> None:
    async with deployment("auto") as d:
        await d.connect("alice", A1)
        await d.connect("bob", B1)
        await d.say("alice", A1, "alice_board")
        async with route(d) as client:
            # Bob may not use alice's thread: nothing runs.
            other = await client.post(
                f"/mcp-apps/threads/{A1}/call", json=_call("alice_refresh"), headers=bearer("bob")
            )
            assert other.status_code == 404
            answer = await client.post(
                f"/mcp-apps/threads/{A1}/call", json=_call("alice_refresh"), headers=bearer("alice")
            )
            assert answer.status_code == 200, answer.text
            result = answer.json()["result"]
            assert result["structuredContent"] == {"tool": "alice_refresh", "user": "alice"}
            assert d.seen.called[-1] == ("alice", "alice_refresh")
            # A tool only bob lists: refused in her view, whoever's tools the route knows.
            called = list(d.seen.called)
            refused = await client.post(
                f"/mcp-apps/threads/{A1}/call", json=_call("bob_secret"), headers=bearer("alice")
            )
            assert refused.status_code == 403 or refused.json()["result"]["isError"]
            assert d.seen.called == called
