"""Per-user catalogs on a real ``langgraph dev`` server with custom auth, driven by ``langgraph-sdk``.

The server runs a ``create_mcp_agent`` graph (:data:`AGENT`, written next to the server's config:
the scripted model, which notes on each reply the tools that model call was offered) over the
server's shared pool (``graphs.shared``), and ``graphs.app:app``, which serves the OAuth redirect
route (``/oauth/callback``), with LangGraph custom auth (``tests/browser/app_auth.py``: a bearer
token names the user; each thread is its creator's) applied to the custom routes too.

Its protected MCP server is the per-user catalog fixture server (``tests/servers/peruser.py``)
behind a gate that refuses every request without a user's token, the handshake and listings
included (``tests/servers/authorization.py``), next to the SDK's authorization server:
:func:`peruser_site` serves them on one port, in a thread of their own, so that the test reads
what the server saw (``catalog.listed``, ``catalog.called``, ``gate.users_seen``) while the
deployment runs. The server is configured with per-user ``oauth`` once per protocol era, next to
one ordinary server (``tests/servers/other.py``, stdio). The browser is httpx.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk.client import LangGraphClient
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from pydantic import AnyHttpUrl
from starlette.applications import Starlette

from tests.conftest_servers import stdio_params
from tests.deploy.signin import KEY_ENV, PUBLIC, authenticated, authorize, callback_of, come_back, new_key
from tests.deploy.test_langgraph_dev import interrupts_of
from tests.deploy.test_oauth_deploy import as_user, asked
from tests.langgraph_server import REPO_ROOT, langgraph_dev
from tests.servers._runner import bind_socket, make_app, make_uvicorn_server
from tests.servers.authorization import Gate, Provider, read_body
from tests.servers.peruser import PerUserCatalog, build_server

GRAPH = "peruser"
AGENT = '''"""``peruser``: ``create_mcp_agent`` over the server's shared pool, with the scripted model
(a line ``tool {args}`` of the last human message is a call); each reply's ``response_metadata``
says which tools that model call was offered (``offered``)."""

from typing import Any

from graphs.shared import pool
from langgraph_mcp import create_mcp_agent
from langgraph_mcp.testing import ScriptedChatModel


class Noting(ScriptedChatModel):
    def _note(self, result: Any) -> Any:
        result.generations[0].message.response_metadata["offered"] = sorted(self.bound_tools or {})
        return result

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        return self._note(super()._generate(messages, stop, run_manager, **kwargs))

    async def _agenerate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> Any:
        return self._note(await super()._agenerate(messages, stop, run_manager, **kwargs))


graph = create_mcp_agent(Noting(unbound="reply"), pool, name="peruser")
'''
HELLO = "hello []"  # a line whose arguments are no JSON object: the model answers in text
OWN = {"whoami", "alice_reports", "bob_admin"}


@dataclass
class Site:
    """The per-user fixture server (``url``, its ``/mcp``) and its authorization server."""

    url: str
    provider: Provider
    gate: Gate
    catalog: PerUserCatalog
    requests: list[tuple[str | None, str | None, str | None]] = field(default_factory=list)
    """``(X-Replica header, the user of the bearer token, JSON-RPC method)`` of each MCP request
    that reached the gate, in order (``None`` for what it lacked)."""

    def seen(self) -> list[tuple[str | None, str | None, str | None]]:
        return list(self.requests)


@contextmanager
def peruser_site() -> Iterator[Site]:
    """The per-user fixture server behind a :class:`Gate` that guards every request (``/mcp``),
    and the SDK's authorization server over a :class:`Provider` that logs a browser in as the
    user its ``login`` cookie names (as ``tests/servers/signin.py`` does), on one port of
    127.0.0.1, served by an event loop in a thread of its own."""
    sock = bind_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    provider = Provider(token_ttl=3600)
    catalog = PerUserCatalog()
    mcp = make_app(build_server(catalog), "http")
    gate = Gate(mcp, provider, base)
    gate.everything = True
    authorization = Starlette(
        routes=create_auth_routes(
            provider,
            AnyHttpUrl(base),
            client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=["read"]),
            revocation_options=RevocationOptions(enabled=True),
        )
    )
    site = Site(f"{base}/mcp", provider, gate, catalog)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":  # the lifespan: the MCP server's session manager
            await mcp(scope, receive, send)
            return
        headers = dict(scope["headers"])
        path = scope["path"]
        if path == "/mcp" or path.startswith("/.well-known/oauth-protected-resource"):
            raw, receive = await read_body(scope, receive)
            try:
                method = json.loads(raw).get("method") if raw else None
            except (ValueError, AttributeError):
                method = None
            token = headers.get(b"authorization", b"").decode("latin-1").removeprefix("Bearer ")
            replica = headers.get(b"x-replica", b"").decode("latin-1") or None
            site.requests.append((replica, provider.user_of(token) if token else None, method))
            await gate(scope, receive, send)
            return
        if path == "/authorize":
            cookies = SimpleCookie(headers.get(b"cookie", b"").decode("latin-1"))
            provider.next_user = cookies["login"].value if "login" in cookies else "nobody"
        await authorization(scope, receive, send)

    server = make_uvicorn_server(app)  # type: ignore[arg-type]
    started = threading.Event()
    failed: list[BaseException] = []

    async def serve() -> None:
        serving = asyncio.ensure_future(server.serve([sock]))
        ready = asyncio.ensure_future(server.ready.wait())
        await asyncio.wait({serving, ready}, return_when=asyncio.FIRST_COMPLETED)
        started.set()
        await serving

    def run() -> None:
        try:
            asyncio.run(serve())
        except BaseException as exc:  # reported to the test's thread
            failed.append(exc)
        finally:
            started.set()

    thread = threading.Thread(target=run, name="peruser-site", daemon=True)
    thread.start()
    try:
        assert started.wait(30) and server.started, f"the per-user site did not start: {failed}"
        yield site
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
    assert not failed, failed


def peruser_servers(url: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """``mcpServers``: the per-user server at ``url`` with per-user OAuth once per protocol era
    (``api``, and ``legacy_api`` pinned to 2025-11-25 whose tools are ``legacy_<name>``), and
    one ordinary server (``other``: ``echo``)."""
    oauth = {"redirect_uri": f"{PUBLIC}/oauth/callback", "encryption_key": f"${{{KEY_ENV}}}"}
    entry = {"url": url, "oauth": oauth, "timeout": 30, **({"headers": headers} if headers else {})}
    return {
        "api": {**entry, "protocol": "auto"},
        "legacy_api": {**entry, "protocol": "legacy", "prefix": "legacy_"},
        "other": {**stdio_params("other", fork=False), "protocol": "auto"},
    }


def with_agent(folder: Path, base: dict[str, Any]) -> dict[str, Any]:
    """``base`` (a ``langgraph.json``) with the ``peruser`` graph (:data:`AGENT`, written to
    ``folder``) added."""
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "peruser_agent.py"
    source.write_text(AGENT)
    return {**base, "graphs": {**base["graphs"], GRAPH: f"{source}:graph"}}


async def run(client: LangGraphClient, thread: str, **kwargs: Any) -> list[tuple[str, Any]]:
    """A run of the graph in ``thread``, streamed; once its stream ended, waits until the run is
    done (on a runtime with a shared database the run's state is written just after its stream's
    last event)."""
    events = [
        (part.event, part.data)
        async for part in client.runs.stream(thread, GRAPH, stream_mode=["updates"], **kwargs)
    ]
    [run_id] = [data["run_id"] for event, data in events if event == "metadata"]
    await client.runs.join(thread, run_id)
    return events


async def say(client: LangGraphClient, thread: str, text: str) -> list[tuple[str, Any]]:
    """The user says ``text`` in ``thread`` (each line ``tool {args}`` is a call the model makes)."""
    return await run(client, thread, input={"messages": [{"role": "user", "content": text}]})


async def resume(client: LangGraphClient, thread: str) -> list[tuple[str, Any]]:
    return await run(client, thread, command={"resume": True})


async def messages(client: LangGraphClient, thread: str) -> list[dict[str, Any]]:
    values: Any = (await client.threads.get_state(thread))["values"]
    found: list[dict[str, Any]] = values["messages"]
    return found


async def offered(client: LangGraphClient, thread: str) -> set[str]:
    """The tools the thread's last model call was offered (as its reply notes them)."""
    last = [m for m in await messages(client, thread) if m["type"] == "ai"][-1]
    return set(last["response_metadata"]["offered"])


async def last_tool(client: LangGraphClient, thread: str) -> str:
    """The text of the thread's last tool message, which must be a success."""
    last = [m for m in await messages(client, thread) if m["type"] == "tool"][-1]
    assert last.get("status", "success") == "success", last
    return str(last["content"])


async def connect(client: LangGraphClient, deployment: str, thread: str, user: str, server: str) -> str:
    """``user`` asks for ``connect_<server>`` in ``thread`` (through ``client``): the run stops
    with the ``mcp_authorization`` interrupt, the browser signs in at the authorization server
    and comes back through the callback route of ``deployment`` (a URL), the run resumes through
    ``client``; the sign-in tool's answer."""
    question = asked(await say(client, thread, f"connect_{server}"))
    assert (question["server"], question["tool_name"]) == (server, f"connect_{server}"), question
    callback = callback_of(await authorize(question["url"], user), deployment)
    answer = await come_back(callback, user)
    assert (answer.status_code, "Connected" in answer.text) == (200, True), answer.text
    assert not interrupts_of(await resume(client, thread))
    return await last_tool(client, thread)


@pytest.mark.slow
@pytest.mark.deploy
@pytest.mark.timeout(300)
async def test_each_user_is_offered_a_signin_tool_then_their_own_catalog(tmp_path: Path) -> None:
    """A per-user server that refuses every request without a user's token: Alice's first run is
    offered ``connect_api`` (nothing was listed for her), its call asks her to connect, her
    browser comes back through the deployment's callback route, and the resumed run's next model
    call is offered her own tools; ``alice_reports`` answers for her. Bob signs in for himself
    and is offered his catalog, never hers. The 2025-11-25 server (the same one, pinned to that
    era) takes Alice through the same steps. At the server, every listing and call carried its
    run's user's token."""
    started = time.monotonic()
    base = with_agent(tmp_path / "graph", json.loads((REPO_ROOT / "langgraph.json").read_text()))
    with peruser_site() as site:
        config = tmp_path / "mcp.json"
        config.write_text(json.dumps({"mcpServers": peruser_servers(site.url)}))
        env = {"LANGGRAPH_MCP_CONFIG": str(config), **new_key()}
        with langgraph_dev(tmp_path / "server", authenticated(tmp_path, base), env) as server:
            alice, bob = as_user(server.url, "alice"), as_user(server.url, "bob")
            # Alice has not connected: the sign-in tools and the ordinary server's, none of hers.
            a1 = (await alice.threads.create())["thread_id"]
            await say(alice, a1, HELLO)
            first = await offered(alice, a1)
            assert {"connect_api", "connect_legacy_api", "echo"} <= first, first
            assert not first & {*OWN, *(f"legacy_{n}" for n in OWN)}, first
            assert site.catalog.listed == [] and site.gate.users_seen == []  # nothing without a token

            # She calls it, is asked, signs in through the deployment's route; the run resumes.
            answer = await connect(alice, server.url, a1, "alice", "api")
            assert answer.startswith("Connected to MCP server 'api'") and "alice_reports" in answer, answer
            after = await offered(alice, a1)  # the model call after the resume
            assert {"whoami", "alice_reports", "echo", "connect_legacy_api"} <= after, after
            assert not after & {"connect_api", "bob_admin"}, after
            await say(alice, a1, "alice_reports")
            assert await last_tool(alice, a1) == "alice_reports for alice"
            # Her other thread is offered her tools at once.
            a2 = (await alice.threads.create())["thread_id"]
            await say(alice, a2, HELLO)
            assert {"whoami", "alice_reports"} <= await offered(alice, a2)

            # Bob: asked for himself, then his own catalog; never Alice's.
            b1 = (await bob.threads.create())["thread_id"]
            await say(bob, b1, HELLO)
            bobs = await offered(bob, b1)
            assert "connect_api" in bobs and not bobs & OWN, bobs
            assert "bob_admin" in await connect(bob, server.url, b1, "bob", "api")
            bobs = await offered(bob, b1)
            assert {"whoami", "bob_admin", "echo"} <= bobs and not bobs & {"alice_reports", "connect_api"}
            await say(bob, b1, "whoami")
            assert await last_tool(bob, b1) == "user=bob"
            await say(bob, b1, "alice_reports")  # not his: the model has no such tool, no call is made
            assert await offered(bob, b1) == bobs

            # The 2025-11-25 era: offered the sign-in tool, asked, connected, her own tools.
            a3 = (await alice.threads.create())["thread_id"]
            await say(alice, a3, HELLO)
            assert "connect_legacy_api" in await offered(alice, a3)
            assert "legacy_alice_reports" not in await offered(alice, a3)
            answer = await connect(alice, server.url, a3, "alice", "legacy_api")
            assert answer.startswith("Connected to MCP server 'legacy_api'"), answer
            after = await offered(alice, a3)
            assert {"legacy_whoami", "legacy_alice_reports", "whoami", "alice_reports"} <= after, after
            assert not after & {"connect_legacy_api", "connect_api", "bob_admin", "legacy_bob_admin"}, after
            await say(alice, a3, "legacy_alice_reports")
            assert await last_tool(alice, a3) == "alice_reports for alice"

            # At the server: only the signed-in users' requests got through, each call and
            # listing with its own run's user's token.
            assert set(site.catalog.listed) == {"alice", "bob"}, site.catalog.listed
            assert site.catalog.called == [("alice", "alice_reports"), ("bob", "whoami"),
                                           ("alice", "alice_reports")]  # fmt: skip
            assert set(site.gate.users_seen) == {"alice", "bob"}
            tokened = [(user, method) for _, user, method in site.seen() if user is not None]
            assert {user for user, _ in tokened} == {"alice", "bob"}
            log = server.log_text()
            assert "Traceback" not in log, log[-3000:]
            assert env[KEY_ENV] not in log
    print(f"\nper-user catalogs on langgraph dev: {time.monotonic() - started:.1f} s")
