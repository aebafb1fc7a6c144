"""Per-user OAuth against a real authorization server on loopback (the SDK's, see
``tests/servers/authorization.py``) and an MCP server that checks bearer tokens.

A call with no token for its user raises an ``mcp_authorization`` interrupt; the test drives the
browser with httpx (authorization URL -> the authorization server -> the callback route), then
resumes the run, which retries the call with the user's token.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import jsonschema
import pytest
from cryptography.fernet import Fernet
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolRuntime
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command
from mcp.client.auth.utils import issuers_match
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import OAuthClientInformationFull
from pydantic import AnyHttpUrl, AnyUrl
from starlette.applications import Starlette
from starlette.routing import Mount

from langgraph_mcp import MCPToolNode
from langgraph_mcp._oauth.calls import user_of
from langgraph_mcp.config import HTTPServerConfig, UserOAuth
from langgraph_mcp.oauth import oauth_callback_app, revoke
from langgraph_mcp.schemas import json_schema
from tests.conftest_servers import serve_in_loop
from tests.helpers import ai
from tests.servers import demo
from tests.servers._runner import bind_socket, make_uvicorn_server
from tests.servers.authorization import Gate, MetadataOverride, Provider

KEY = Fernet.generate_key().decode()


@dataclass
class World:
    provider: Provider
    gate: Gate
    issuer: str
    store: InMemoryStore
    graph: Any
    config: HTTPServerConfig

    async def run(
        self, user: str | None, thread: str, call_id: str = "c1", resume: bool = False
    ) -> dict[str, Any]:
        configurable: dict[str, Any] = {"thread_id": thread}
        if user is not None:
            configurable["langgraph_auth_user"] = {"identity": user}
        given: Any = (
            Command(resume=True)
            if resume
            else {"messages": [ai(("header", {"name": "authorization"}, call_id))]}
        )
        out: dict[str, Any] = await self.graph.ainvoke(given, {"configurable": configurable})
        return out

    def answered_as(self, out: dict[str, Any]) -> str | None:
        """Whose token the server saw for the last tool message of ``out``."""
        message = [m for m in out["messages"] if isinstance(m, ToolMessage)][-1]
        text = str(message.content)
        assert message.status == "success", text
        return self.provider.user_of(text.rsplit("Bearer ", 1)[-1].strip())

    async def browse(self, url: str, user: str) -> httpx2.Response:
        """A browser logged in at the authorization server, and signed in at the deployment
        (the ``user`` cookie :func:`signed_in` reads), as ``user`` opens ``url``."""
        self.provider.next_user = user
        async with httpx2.AsyncClient(follow_redirects=True, timeout=10, cookies={"user": user}) as browser:
            return await browser.get(url)


def payload(out: dict[str, Any]) -> dict[str, Any]:
    (raised,) = out["__interrupt__"]
    value: dict[str, Any] = raised.value
    return value


def failure(out: dict[str, Any]) -> str:
    message = [m for m in out["messages"] if isinstance(m, ToolMessage)][-1]
    assert message.status == "error", message.content
    return str(message.content)


def signed_in(request: Any) -> str | None:
    """Who the test browser is signed in as at the deployment (its ``user`` cookie)."""
    user = request.cookies.get("user")
    return user if isinstance(user, str) else None


@asynccontextmanager
async def world(
    protocol: str = "auto",
    user_of: Any = signed_in,
    session_scope: str = "shared",
    preregistered: bool = False,
    store: InMemoryStore | None = None,
    metadata: dict[str, Any] | None = None,
    server: Any = None,
    **oauth: Any,
) -> AsyncIterator[World]:
    provider = Provider(token_ttl=600)
    sock = bind_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    if preregistered:  # a confidential client registered beforehand, not dynamically
        provider.clients["app"] = OAuthClientInformationFull(
            client_id="app",
            client_secret="app-secret",
            redirect_uris=[AnyUrl(f"{base}/oauth/callback")],
            token_endpoint_auth_method="client_secret_post",
            grant_types=["authorization_code", "refresh_token"],
            scope="read admin",
        )
        oauth = {"client_id": "app", "client_secret": "app-secret", "issuer": base, **oauth}
    gates: list[Gate] = []

    def wrap(app: Any) -> Gate:
        gates.append(Gate(app, provider, base))
        return gates[-1]

    server = server if server is not None else demo.build_server(counters=demo.Counters())
    async with serve_in_loop(server, "http", wrap=wrap) as url:  # type: ignore[arg-type]
        config = HTTPServerConfig(
            url=url,
            protocol=protocol,
            session_scope=session_scope,
            timeout=20,
            oauth={"redirect_uri": f"{base}/oauth/callback", "encryption_key": KEY, **oauth},
        )
        store = store if store is not None else InMemoryStore()
        routes = create_auth_routes(
            provider,  # type: ignore[arg-type]
            AnyHttpUrl(base),
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=["read", "admin"]
            ),
            revocation_options=RevocationOptions(enabled=True),
        )
        app = Starlette(
            routes=[
                *routes,
                Mount("/oauth", oauth_callback_app({"api": config}, store=store, user_of=user_of)),
            ]
        )
        authorization = make_uvicorn_server(app if metadata is None else MetadataOverride(app, metadata))
        serving = asyncio.ensure_future(authorization.serve([sock]))
        try:
            await asyncio.wait_for(authorization.ready.wait(), 10)
            async with MCPToolNode({"api": config}) as node:
                builder = StateGraph(MessagesState)
                builder.add_node(node)
                builder.add_edge(START, "tools")
                graph = builder.compile(checkpointer=InMemorySaver(), store=store)
                yield World(provider, gates[0], base, store, graph, config)
        finally:
            authorization.should_exit = True
            await asyncio.wait_for(serving, 10)
            sock.close()


async def connect(w: World, user: str, thread: str) -> dict[str, Any]:
    """``user`` calls, is asked to connect, connects in the browser, and the run resumes."""
    asked = payload(await w.run(user, thread))
    answer = await w.browse(asked["url"], user)
    assert answer.status_code == 200, answer.text
    return await w.run(user, thread, resume=True)


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_two_users_one_connects(protocol: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    async with world(protocol) as w:
        asked = payload(await w.run("alice", "a1"))
        assert set(asked) == {
            "type", "server", "tool_name", "tool_call_id", "url", "scopes", "issuer", "reason", "expires_at",
        }  # fmt: skip
        assert (asked["type"], asked["server"], asked["tool_name"], asked["tool_call_id"]) == (
            "mcp_authorization", "api", "header", "c1",
        )  # fmt: skip
        assert (asked["scopes"], asked["reason"]) == (["read"], "connect")
        jsonschema.validate(asked, json_schema("authorization-interrupt"))
        jsonschema.validate(asked, json_schema("interrupt"))
        assert issuers_match(asked["issuer"], w.issuer)
        query = parse_qs(urlsplit(asked["url"]).query)
        assert asked["url"].startswith(f"{w.issuer}/authorize?")
        assert query["code_challenge_method"] == ["S256"] and query["resource"][0].endswith("/mcp")
        assert payload(await w.run("bob", "b1"))["reason"] == "connect"

        answer = await w.browse(asked["url"], "alice")
        assert (answer.status_code, "Connected" in answer.text) == (200, True)
        assert w.answered_as(await w.run("alice", "a1", resume=True)) == "alice"
        # Bob never connected: his resumed call fails, and sends nothing with a token.
        seen = list(w.gate.seen_tokens)
        assert "has not connected" in failure(await w.run("bob", "b1", resume=True))
        # Alice's other thread uses her token at once; a run without a user fails.
        assert w.answered_as(await w.run("alice", "a2")) == "alice"
        assert "this run has no user" in failure(await w.run(None, "n1"))
        assert {w.provider.user_of(t) for t in w.gate.seen_tokens} == {"alice"}
        assert len(w.gate.seen_tokens) > len(seen)

        # No refresh token in a checkpoint (the access token is there only as the tool's own
        # output: this tool echoes it), and none readable in the store.
        token, refresh = w.gate.seen_tokens[-1], list(w.provider.refresh)
        checkpoints = w.graph.checkpointer
        saved = repr(checkpoints.storage) + repr(checkpoints.writes)
        assert refresh and not any(r in saved for r in refresh)
        stored = [item.value for item in await w.store.asearch(("langgraph_mcp", "oauth", "tokens"))]
        assert len(stored) == 1 and token not in json.dumps(stored)
        assert not any(r in json.dumps(stored) for r in refresh)
        # Nor in a log record (access tokens reach the SDK's debug log only inside this tool's
        # own results).
        logged = [(r.name, r.getMessage()) for r in caplog.records]
        assert not any(t in m for _, m in logged for t in refresh)
        ours = [m for name, m in logged if name.startswith("langgraph_mcp")]
        assert ours and not any(t in m for m in ours for t in w.provider.access)


async def test_state_tampering_reuse_and_iss_are_refused() -> None:
    async with world() as w:
        asked = payload(await w.run("alice", "a1"))
        w.provider.next_user = "alice"
        async with httpx2.AsyncClient(timeout=10, cookies={"user": "alice"}) as browser:
            to_callback = (await browser.get(asked["url"])).headers["location"]
            parts = urlsplit(to_callback)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            callback = f"{parts.scheme}://{parts.netloc}{parts.path}"
            server, nonce, mac = query["state"].split(".")
            forged = [
                {**query, "state": f"{server}.{nonce}.{mac[:-2]}AA"},
                {**query, "state": f"{server}.{nonce[:-2]}AA.{mac}"},
                {**query, "state": "not-a-state"},
                {**query, "iss": "http://127.0.0.1:9/"},
            ]
            for params in forged[:3]:
                refused = await browser.get(callback, params=params)
                assert refused.status_code == 400
                assert query["code"] not in refused.text
            assert "has not connected" in failure(await w.run("alice", "a1", resume=True))
            assert w.provider.grants == []
            # A wrong iss spends the state (a fresh one is asked for), and nothing is stored.
            asked = payload(await w.run("alice", "a2"))
            to_callback = (await browser.get(asked["url"])).headers["location"]
            query = {k: v[0] for k, v in parse_qs(urlsplit(to_callback).query).items()}
            assert (
                await browser.get(callback, params={**query, "iss": "http://127.0.0.1:9/"})
            ).status_code == 400
            assert (await browser.get(callback, params=query)).status_code == 400  # used
            assert w.provider.grants == []
            # A good one works once.
            asked = payload(await w.run("alice", "a3"))
            good = (await browser.get(asked["url"])).headers["location"]
            assert (await browser.get(good)).status_code == 200
            assert (await browser.get(good)).status_code == 400
        assert w.answered_as(await w.run("alice", "a3", resume=True)) == "alice"


async def test_expired_state_is_refused() -> None:
    async with world(state_ttl=0.001) as w:
        asked = payload(await w.run("alice", "a1"))
        assert (await w.browse(asked["url"], "alice")).status_code == 400
        assert w.provider.grants == []


async def test_refresh_before_expiry_and_a_failed_refresh_asks_again() -> None:
    async with world(refresh_margin=3600) as w:  # the 600 s tokens always expire "soon"
        first = await connect(w, "alice", "a1")
        assert w.answered_as(first) == "alice"
        # Refreshed before each use (the run's listing, then its call): never used expiring.
        assert w.provider.grants[0] == "authorization_code"
        assert set(w.provider.grants[1:]) == {"refresh_token"}
        before = w.gate.seen_tokens[-1]
        assert w.answered_as(await w.run("alice", "a1", "c2")) == "alice"
        assert w.gate.seen_tokens[-1] != before
        assert w.provider.grants[-1] == "refresh_token"
        w.provider.refresh.clear()  # the authorization server forgets the refresh tokens
        assert payload(await w.run("alice", "a1", "c3"))["reason"] == "expired"


async def test_step_up_on_insufficient_scope() -> None:
    async with world() as w:
        assert w.answered_as(await connect(w, "alice", "a1")) == "alice"
        w.gate.required = {"read", "admin"}
        asked = payload(await w.run("alice", "a1", "c2"))
        assert asked["reason"] == "step_up" and set(asked["scopes"]) == {"read", "admin"}
        assert (await w.browse(asked["url"], "alice")).status_code == 200
        assert w.answered_as(await w.run("alice", "a1", resume=True)) == "alice"
        token = w.gate.seen_tokens[-1]
        assert set(w.provider.access[token][0].scopes) == {"read", "admin"}


async def test_revocation_asks_again_and_a_refused_token_reconnects() -> None:
    async with world(preregistered=True) as w:
        assert w.answered_as(await connect(w, "alice", "a1")) == "alice"
        assert w.answered_as(await connect(w, "bob", "b1")) == "bob"
        issued = dict(w.provider.access)
        await revoke(w.store, "alice", "api", config=w.config)
        # Revoked at the authorization server too: only Bob's tokens are left there.
        assert {w.provider.user_of(t) for t in w.provider.access} == {"bob"}
        assert {issued[t][1] for t in issued if t not in w.provider.access} == {"alice"}
        assert w.answered_as(await w.run("bob", "b1", "c2")) == "bob"
        asked = payload(await w.run("alice", "a1", "c2"))
        assert asked["reason"] == "connect"
        assert (await w.browse(asked["url"], "alice")).status_code == 200
        assert w.answered_as(await w.run("alice", "a1", resume=True)) == "alice"
        # The server stops taking the token while the session is open: 401 -> asked again.
        w.provider.access.clear()
        asked = payload(await w.run("alice", "a1", "c3"))
        assert asked["reason"] == "expired"
        assert (await w.browse(asked["url"], "alice")).status_code == 200
        assert w.answered_as(await w.run("alice", "a1", resume=True)) == "alice"


async def test_a_link_opened_by_another_signed_in_user_is_refused() -> None:
    async with world() as w:
        asked = payload(await w.run("alice", "a1"))
        async with httpx2.AsyncClient(timeout=10, cookies={"user": "mallory"}) as browser:
            w.provider.next_user = "mallory"
            to_callback = (await browser.get(asked["url"])).headers["location"]
            assert (await browser.get(to_callback)).status_code == 400
        assert w.provider.grants == []
        assert "has not connected" in failure(await w.run("alice", "a1", resume=True))
        # A browser signed in as nobody at the deployment is refused too.
        asked = payload(await w.run("alice", "a1"))
        async with httpx2.AsyncClient(timeout=10) as browser:
            w.provider.next_user = "alice"
            to_callback = (await browser.get(asked["url"])).headers["location"]
            assert (await browser.get(to_callback)).status_code == 400
        assert w.provider.grants == []
        asked = payload(await w.run("alice", "a2"))
        async with httpx2.AsyncClient(timeout=10, cookies={"user": "alice"}) as browser:
            w.provider.next_user = "alice"
            to_callback = (await browser.get(asked["url"])).headers["location"]
            assert (await browser.get(to_callback)).status_code == 200
        assert w.answered_as(await w.run("alice", "a2", resume=True)) == "alice"


async def test_thread_sessions_per_user_and_a_token_refused_at_connect() -> None:
    async with world(session_scope="thread") as w:
        assert w.answered_as(await connect(w, "alice", "a1")) == "alice"
        assert w.answered_as(await connect(w, "bob", "b1")) == "bob"
        assert w.answered_as(await w.run("alice", "a2")) == "alice"
        # Each (user, thread) has a session of its own.
        assert len(w.graph.nodes["tools"].bound.pool.thread_sessions("api")) == 3
        # Alice's token is refused as a new session opens: asked again, and the resumed call
        # connects at once (no back-off from the refused attempt).
        alice = {t for t in w.provider.access if w.provider.user_of(t) == "alice"}
        for token in alice:
            del w.provider.access[token]
        asked = payload(await w.run("alice", "a3"))
        assert asked["reason"] == "expired"
        assert (await w.browse(asked["url"], "alice")).status_code == 200
        assert w.answered_as(await w.run("alice", "a3", resume=True)) == "alice"
        assert w.answered_as(await w.run("bob", "b1", "c2")) == "bob"


class _AuthUser:
    """What the LangGraph server puts under ``langgraph_auth_user``: an object with ``identity``."""

    def __init__(self, identity: str) -> None:
        self.identity = identity


def _runtime(context: Any = None, **configurable: Any) -> ToolRuntime:
    return ToolRuntime(
        state={}, context=context, config={"configurable": configurable}, stream_writer=lambda _: None,
        tool_call_id="c1", store=None,
    )  # fmt: skip


def test_the_user_is_the_authenticated_one_else_the_configured_key() -> None:
    plain = UserOAuth(redirect_uri="https://a.example/cb", encryption_key=KEY)
    keyed = UserOAuth(redirect_uri="https://a.example/cb", encryption_key=KEY, user_key="user_id")
    assert user_of(_runtime(langgraph_auth_user=_AuthUser("alice")), plain) == "alice"
    assert user_of(_runtime(langgraph_auth_user={"identity": "alice"}), plain) == "alice"
    # The authenticated user wins over anything the run's input says.
    assert user_of(_runtime({"user_id": "bob"}, langgraph_auth_user=_AuthUser("alice")), keyed) == "alice"
    assert user_of(_runtime({"user_id": "bob"}), keyed) == "bob"
    assert user_of(_runtime(user_id="carol"), keyed) == "carol"
    # Without a configured key, nothing but the authenticated user counts; a bad id is no user.
    assert user_of(_runtime({"user_id": "bob"}, user_id="bob"), plain) is None
    assert user_of(_runtime({"user_id": ""}), keyed) is None
    assert user_of(_runtime({"user_id": "x" * 257}), keyed) is None
    assert user_of(_runtime({"user_id": 7}), keyed) is None
    assert user_of(None, keyed) is None
    # A LangGraph server without custom auth names its anonymous user with an empty identity:
    # that is no user, and the configured key is read.
    assert user_of(_runtime({"user_id": "bob"}, langgraph_auth_user=_AuthUser("")), keyed) == "bob"
    assert user_of(_runtime(langgraph_auth_user={"identity": ""}, user_id="carol"), keyed) == "carol"
    assert user_of(_runtime(langgraph_auth_user=_AuthUser("")), plain) is None


def test_tokens_are_used_only_for_the_resource_they_were_given_for() -> None:
    from langgraph_mcp._oauth.calls import _same_resource

    assert _same_resource("https://mail.example.com/mcp", "https://mail.example.com/mcp")
    assert _same_resource("https://mail.example.com/", "https://mail.example.com/mcp")
    assert _same_resource("HTTPS://Mail.example.com/mcp", "https://mail.example.com/mcp/")
    assert not _same_resource("https://mail.example.com/mcp", "https://files.example.com/mcp")
    assert not _same_resource("https://mail.example.com/mcp", "https://mail.example.com/mcp2")
    assert not _same_resource("https://mail.example.com/mcp", "http://mail.example.com/mcp")
