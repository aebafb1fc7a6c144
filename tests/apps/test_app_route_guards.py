"""The MCP Apps route (``app_routes``) where it must hold against callers and a failing API: a
caller who may not use the thread, or never finishes sending, holds no place; only a server with
a view is read from; the LangGraph API failing or answering nonsense is a 502.

A small Starlette app stands in for the LangGraph API (only ``Bearer good``, ``other`` and
``third`` may use a thread; threads :data:`BUSY` stay busy, thread :data:`TEXT` is answered with a
page, thread :data:`LIST` with a JSON list); the MCP servers are real (the apps and library
fixture servers)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from langgraph_mcp import MCPPool, MCPToolNode
from langgraph_mcp._graph import approute as _approute
from langgraph_mcp.apps import app_routes, view_calls_node
from tests.apps.test_apps import apps_config  # noqa: F401  (the fixture: both transports, both eras)
from tests.conftest_servers import stdio_params

THREAD = "0b7ad5b6-77f3-4c57-9a43-1f0a1b2c3d4e"
TEXT = "7e1f0c2a-0000-4000-8000-000000000001"
LIST = "7e1f0c2a-0000-4000-8000-000000000002"
CHART = "ui://apps/chart.html"
CALL_ID = "mcp-app-call:" + "0" * 32
GOOD = {"authorization": "Bearer good"}
USERS = ("Bearer good", "Bearer other", "Bearer third")
BUSY = "b0b0b0b0-0000-4000-8000-"
"""Threads whose ids start so are always busy (a view's call on one waits, holding its place)."""
ASKED: dict[str, int] = {}
WAITING: dict[str, asyncio.Event] = {}
"""Set for a busy thread once a view's call waits for it (it has taken its place)."""


def _api() -> Starlette:
    """The LangGraph API, as far as the route asks it."""

    async def thread(request: Request) -> Response:
        if request.headers.get("authorization") not in USERS:
            return JSONResponse({"detail": "no"}, status_code=401)
        tid = request.path_params["tid"]
        if tid.startswith(BUSY):
            ASKED[tid] = ASKED.get(tid, 0) + 1
            if ASKED[tid] == 2:  # once to check the caller, then in the wait for the busy thread
                WAITING.setdefault(tid, asyncio.Event()).set()
            return JSONResponse({"thread_id": tid, "status": "busy", "metadata": {"graph_id": "agent"}})
        if tid == TEXT:
            return PlainTextResponse("<html>a proxy's error page</html>")
        if tid == LIST:
            return JSONResponse([tid])
        return JSONResponse({"thread_id": tid, "status": "idle", "metadata": {"graph_id": "agent"}})

    async def state(request: Request) -> Response:
        return PlainTextResponse("not JSON")

    return Starlette(routes=[Route("/threads/{tid}", thread), Route("/threads/{tid}/state", state)])


def _route(pool: MCPPool, api: Any = None, **limits: int) -> httpx.AsyncClient:
    api = api if api is not None else httpx.ASGITransport(app=_api())
    app = Starlette(routes=app_routes(view_calls_node(MCPToolNode(pool)), api=api, **limits))
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://deployment", timeout=30)


def _read(server: str, uri: str) -> dict[str, Any]:
    return {"server": server, "method": "resources/read", "params": {"uri": uri}}


async def test_a_caller_that_may_not_use_the_thread_or_never_sends_its_body_holds_no_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reading = asyncio.Event()
    never = asyncio.Event()

    async def stalled_body() -> AsyncIterator[bytes]:
        yield b'{"server": "apps", '
        reading.set()  # the route asked for more: it is reading the body
        await never.wait()

    url = f"/mcp-apps/threads/{THREAD}/call"
    pool = MCPPool({"apps": stdio_params("apps")})
    async with pool, _route(pool, max_calls_per_thread=1, max_calls=1) as c:
        json_type = {"content-type": "application/json"}
        stalled = asyncio.create_task(c.post(url, content=stalled_body(), headers=json_type))
        try:
            await asyncio.wait_for(reading.wait(), 10)
            # An anonymous caller sending its whole body is refused by the API, and holds no place.
            anonymous = await c.post(url, json=_read("apps", CHART))
            assert anonymous.status_code == 401
            # Neither holds the one place: a signed-in caller is served.
            served = await c.post(url, json=_read("apps", CHART), headers=GOOD)
            assert served.status_code == 200, served.text
            assert served.json()["result"]["contents"][0]["uri"] == CHART
        finally:
            stalled.cancel()
        # A body that does not arrive in time is refused.
        monkeypatch.setattr(_approute, "BODY_TIMEOUT", 0.05)
        reading.clear()
        late = await c.post(url, content=stalled_body(), headers=json_type)
        assert late.status_code == 408 and "did not arrive" in late.json()["error"]
        assert reading.is_set()


async def test_only_a_server_with_a_view_is_read_from(apps_config: dict[str, Any]) -> None:  # noqa: F811
    servers = {"apps": {**apps_config, "apps": True}, "library": stdio_params("library")}
    async with MCPPool(servers) as pool, _route(pool) as c:
        url = f"/mcp-apps/threads/{THREAD}/call"
        read = await c.post(url, json=_read("apps", CHART), headers=GOOD)
        assert read.status_code == 200, read.text
        # A server with no view: refused, though it lists the resource.
        other = await c.post(url, json=_read("library", "notes://counter"), headers=GOOD)
        assert other.status_code == 403 and "no MCP Apps view" in other.json()["error"]
        # The view's server: still only what it declares.
        undeclared = await c.post(url, json=_read("apps", "ui://apps/secret.html"), headers=GOOD)
        assert undeclared.status_code == 403 and "may read only" in undeclared.json()["error"]


async def test_a_langgraph_api_that_fails_or_answers_no_json_object_is_a_502() -> None:
    call = {"server": "apps", "method": "tools/call", "params": {"name": "refresh_chart", "arguments": {}}}
    async with MCPPool({"apps": stdio_params("apps")}) as pool:
        async with _route(pool, api="http://127.0.0.1:9") as c:  # nothing listens there
            posted = await c.post(f"/mcp-apps/threads/{THREAD}/call", json=call, headers=GOOD)
            polled = await c.get(f"/mcp-apps/threads/{THREAD}/calls/{CALL_ID}", headers=GOOD)
            for answer in (posted, polled):
                assert answer.status_code == 502, answer.text
                assert "could not be reached" in answer.json()["error"]
        async with _route(pool) as c:
            for tid in (TEXT, LIST):
                posted = await c.post(f"/mcp-apps/threads/{tid}/call", json=call, headers=GOOD)
                polled = await c.get(f"/mcp-apps/threads/{tid}/calls/{CALL_ID}", headers=GOOD)
                assert (posted.status_code, polled.status_code) == (502, 502), (posted.text, polled.text)
            # The thread answers, its state is not JSON.
            polled = await c.get(f"/mcp-apps/threads/{THREAD}/calls/{CALL_ID}", headers=GOOD)
            assert polled.status_code == 502 and "not JSON" in polled.json()["error"]


async def test_the_caps_must_nest_and_a_users_share_defaults_to_a_quarter_of_the_route() -> None:
    async with MCPPool({"apps": stdio_params("apps")}) as pool:
        views = view_calls_node(MCPToolNode(pool))
        for limits in (
            {"max_calls_per_thread": 0},
            {"max_calls_per_thread": 8, "max_calls_per_user": 4},
            {"max_calls": 8, "max_calls_per_user": 9},
        ):
            with pytest.raises(ValueError, match="max_calls_per_thread <= max_calls_per_user <= max_calls"):
                app_routes(views, **limits)
        assert _approute.user_share(_approute.MAX_CALLS_PER_THREAD, _approute.MAX_CALLS) == 16
        assert _approute.MAX_CALLS_PER_USER == 16
        assert _approute.user_share(2, 3) == 2 and _approute.user_share(1, 1) == 1


async def test_with_the_api_elsewhere_each_callers_credentials_have_their_own_share() -> None:
    call = {"server": "apps", "method": "tools/call", "params": {"name": "refresh_chart", "arguments": {}}}
    a, b = BUSY + "000000000001", BUSY + "000000000002"

    def post(c: httpx.AsyncClient, tid: str, who: str) -> asyncio.Task[httpx.Response]:
        headers = {"authorization": f"Bearer {who}"}
        return asyncio.create_task(c.post(f"/mcp-apps/threads/{tid}/call", json=call, headers=headers))

    pool = MCPPool({"apps": {**stdio_params("apps"), "apps": True}})
    async with pool, _route(pool, max_calls_per_thread=1, max_calls_per_user=1, max_calls=2) as c:
        waiting = [post(c, a, "good")]
        try:
            await asyncio.wait_for(WAITING.setdefault(a, asyncio.Event()).wait(), 20)  # holds its place
            mine = await post(c, b, "good")
            assert mine.status_code == 429 and "this user" in mine.json()["error"], mine.text
            waiting.append(post(c, b, "other"))  # someone else is served
            await asyncio.wait_for(WAITING.setdefault(b, asyncio.Event()).wait(), 20)
            full = await post(c, BUSY + "000000000003", "third")
            assert full.status_code == 429 and "in all" in full.json()["error"], full.text
        finally:
            for task in waiting:
                task.cancel()
            await asyncio.gather(*waiting, return_exceptions=True)
