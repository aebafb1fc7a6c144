"""A view's calls through Agent Chat UI's ``/api`` passthrough (``passthrough.mjs``: the npm
package ``langgraph-nextjs-api-passthrough`` as a Node server), in front of the MCP Apps route.

The passthrough sends the body as ``text/plain`` and passes on only ``x-*`` headers and
``Authorization``: the ``mcp-app`` component's calls (``ui/mcp-app-host.ts``, bundled and run by
Node as shipped) carry ``X-MCP-App-Call: 1``, with which the route reads such a body as JSON; a
post without it, through the passthrough or straight from another site, is still refused. A call
the route refuses fails at once, with the route's message, never retried.

The route runs on loopback with the apps fixture server (in process); the LangGraph API behind it is the
small stand-in of ``tests/apps/test_app_route_guards.py`` (``Bearer good`` may use any thread).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import subprocess
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from langgraph_mcp import MCPPool, MCPToolNode
from langgraph_mcp.apps import app_routes, view_calls_node
from tests.apps.test_app_route_guards import CHART, THREAD, _api
from tests.langgraph_server import REPO_ROOT
from tests.servers import apps
from tests.servers._runner import serve_asgi

pytestmark = [pytest.mark.slow]

HARNESS = REPO_ROOT / "tests" / "browser"

CASES = """
import * as host from "./host.mjs";
const [api, thread, chart] = process.argv.slice(2);
const stream = { client: { threads: { apiUrl: api, defaultHeaders: { authorization: "Bearer good" } } },
  assistantId: "agent" };
const props = { server: "apps", tool_name: "show_chart", mcp_tool: "show_chart", tool_call_id: "c1",
  thread_id: thread, resource_uri: chart, mime_type: "text/html;profile=mcp-app", arguments: {}, result: {} };
const out = {};
const read = await host.viewCall(stream, props, "resources/read", { uri: chart });
out.read = read.contents[0].uri;
const started = Date.now();
try {
  await host.viewCall(stream, props, "tools/call", { name: "plain_echo", arguments: { text: "x" } });
  out.refused = "not refused";
} catch (error) {
  out.refused = error.message;
}
out.refused_ms = Date.now() - started;
// A post through the passthrough without the component's header (a form another site sends there).
const bare = await fetch(`${api}/mcp-apps/threads/${thread}/call`, { method: "POST",
  body: JSON.stringify({ server: "apps", method: "resources/read", params: { uri: chart } }) });
out.bare = [bare.status, (await bare.json()).error];
console.log(JSON.stringify(out));
"""


def _node() -> str:
    node = shutil.which("node")
    if node is None or not (HARNESS / "node_modules" / "esbuild").is_dir():
        pytest.fail("node and the browser harness's esbuild are needed: run python3 tests/browser/install.py")
    return node


def _bundle(node: str, folder: Path) -> None:
    bundle = (
        "require('esbuild').build({entryPoints: [process.argv[1]], outfile: process.argv[2], bundle: true, "
        "format: 'esm', platform: 'neutral', logLevel: 'error'}).catch(() => process.exit(1))"
    )
    subprocess.run(
        [node, "-e", bundle, str(REPO_ROOT / "ui" / "mcp-app-host.ts"), str(folder / "host.mjs")],
        cwd=HARNESS,
        check=True,
        timeout=60,
    )
    (folder / "cases.mjs").write_text(CASES)


Asgi = Callable[[MutableMapping[str, Any], Any, Any], Awaitable[None]]


def _counting(app: Asgi, posts: list[str]) -> Asgi:
    async def counted(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            posts.append(scope["path"])
        await app(scope, receive, send)

    return counted


@pytest.mark.timeout(60)
async def test_a_views_calls_pass_through_agent_chat_uis_api_passthrough(tmp_path: Path) -> None:
    node = _node()
    await asyncio.to_thread(_bundle, node, tmp_path)
    posts: list[str] = []
    listening: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    async with MCPPool({"apps": {"server": apps.build_server()}}) as pool:
        routes = app_routes(view_calls_node(MCPToolNode(pool)), api=httpx.ASGITransport(app=_api()))
        app = _counting(Starlette(routes=routes), posts)
        served = asyncio.create_task(serve_asgi(lambda _port: app, on_listening=listening.set_result))
        passthrough = None
        try:
            route = f"http://127.0.0.1:{await asyncio.wait_for(listening, 10)}"
            passthrough = await asyncio.create_subprocess_exec(
                node, str(HARNESS / "passthrough.mjs"), route, "deployment-key", stdout=subprocess.PIPE
            )
            assert passthrough.stdout is not None
            line = await asyncio.wait_for(passthrough.stdout.readline(), 10)
            api = f"http://127.0.0.1:{line.decode().split()[1]}/api"
            ran = await asyncio.create_subprocess_exec(
                node,
                str(tmp_path / "cases.mjs"),
                api,
                THREAD,
                CHART,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            stdout, stderr = await asyncio.wait_for(ran.communicate(), 30)
            assert ran.returncode == 0, stderr.decode()
            out = json.loads(stdout)

            # The view's read arrives as the passthrough sends it (text/plain) and is answered.
            assert out["read"] == CHART
            # A refused call fails at once with the route's own words: one request, no retries.
            assert out["refused"] == (
                "a view of 'apps' may not call 'plain_echo': not one of its server's tools for views "
                "(HTTP 403)"
            )
            assert out["refused_ms"] < 2000
            call = f"/mcp-apps/threads/{THREAD}/call"
            assert posts[:2] == [call, call]
            # Without the component's header, text through the passthrough is refused...
            assert out["bare"][0] == 415 and "X-MCP-App-Call".lower() in out["bare"][1].lower()
            assert len(posts) == 3
            # ... and so is a cross-site form post of plain text straight to the route.
            async with httpx.AsyncClient(base_url=route) as client:
                body = json.dumps({"server": "apps", "method": "resources/read", "params": {"uri": CHART}})
                headers = {"content-type": "text/plain", "origin": "https://elsewhere.example", **_good()}
                refused = await client.post(call, content=body, headers=headers)
                assert refused.status_code == 415
                accepted = await client.post(call, content=body, headers={**headers, "x-mcp-app-call": "1"})
                assert accepted.status_code == 200, accepted.text
        finally:
            if passthrough is not None:
                with contextlib.suppress(ProcessLookupError):
                    passthrough.kill()
                await passthrough.wait()
            served.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await served


def _good() -> dict[str, str]:
    return {"authorization": "Bearer good"}


@contextlib.contextmanager
def api_passthrough(api_url: str) -> Iterator[str]:
    """Agent Chat UI's ``/api`` passthrough (``passthrough.mjs``) in front of ``api_url``, on
    loopback; its ``.../api`` URL (what that UI's ``apiUrl`` is)."""
    process = subprocess.Popen(
        [_node(), str(HARNESS / "passthrough.mjs"), api_url, ""], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("listening "), line
        yield f"http://127.0.0.1:{line.split()[1]}/api"
    finally:
        process.kill()
        process.wait()
