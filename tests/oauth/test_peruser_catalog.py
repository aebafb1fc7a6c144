"""Per-user catalogs: a per-user OAuth server that lists only for a signed-in user, and lists
each user their own tools (``tests/servers/peruser.py`` behind a gate that guards every request).

A deployment as the docs configure it: an agent (``create_mcp_agent``, or ``MCPMiddleware`` /
``MCPToolNode`` in a graph of one's own), the protected server with ``oauth``, a second ordinary
server, the SDK's authorization server and this package's callback route on loopback, two users.
Each user's model calls are offered their own tools only; a user who has not connected is offered
``connect_api``, whose call asks them to connect. What crossed is counted at the server.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx2
import pytest
from cryptography.fernet import Fernet
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph._internal._runnable import RunnableCallable
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition
from langgraph.runtime import Runtime
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.routing import Mount

from langgraph_mcp import MCPPool, MCPToolNode, create_mcp_agent
from langgraph_mcp._support.sync import run_sync
from langgraph_mcp.config import load_connections
from langgraph_mcp.errors import MCPConfigError
from langgraph_mcp.oauth import oauth_callback_app, revoke
from langgraph_mcp.options import ToolOptions
from tests.chat import ScriptModel
from tests.conftest_servers import serve_in_loop
from tests.servers import other, peruser
from tests.servers._runner import bind_socket, make_uvicorn_server
from tests.servers.authorization import Gate, Provider

KEY = Fernet.generate_key().decode()
ERAS = ["auto", "legacy"]  # 2026-07-28 with this server, and 2025-11-25
HELLO = "hello []"  # a line whose arguments are no JSON object: the model answers in text


@dataclass
class Deployment:
    provider: Provider
    gate: Gate
    catalog: peruser.PerUserCatalog
    store: InMemoryStore
    servers: dict[str, Any]
    pool: MCPPool
    model: ScriptModel
    agent: Any
    asked: list[dict[str, Any]] = field(default_factory=list)

    async def say(self, user: str, thread: str, text: str) -> dict[str, Any]:
        """``user`` says ``text`` in ``thread`` (each line ``tool {args}`` is a call the model makes)."""
        return await self._run(user, thread, {"messages": [HumanMessage(text)]})

    async def resume(self, user: str, thread: str) -> dict[str, Any]:
        return await self._run(user, thread, Command(resume=True))

    guard: Any = None
    """The guard the protected server's gates come from (a server started again uses it too)."""
    stop_api: Any = None
    """Stops the protected server (the deployment goes on without it)."""
    sync: bool = False
    """Run the graph with ``invoke`` (in a thread: the servers run on this loop)."""

    context: Any = None
    """The runs' context (``None``: none)."""

    async def _run(self, user: str, thread: str, given: Any) -> dict[str, Any]:
        config = {"configurable": {"thread_id": thread, "langgraph_auth_user": {"identity": user}}}
        if self.sync:
            done: dict[str, Any] = await asyncio.to_thread(
                self.agent.invoke, given, config, context=self.context
            )
            return done
        out: dict[str, Any] = await self.agent.ainvoke(given, config, context=self.context)
        return out

    def offered(self) -> set[str]:
        """The tools the last model call was offered."""
        return set(self.model.calls[-1].tools)

    async def browse(self, url: str, user: str) -> None:
        """``user``'s browser, signed in at the authorization server and at the deployment, opens
        the authorization URL and comes back through the callback route."""
        self.provider.next_user = user
        async with httpx2.AsyncClient(follow_redirects=True, timeout=10, cookies={"user": user}) as browser:
            answer = await browser.get(url)
        assert answer.status_code == 200, answer.text

    async def connect(self, user: str, thread: str) -> str:
        """``user`` asks for ``connect_api``, signs in, and the run resumes: the tool's answer."""
        out = await self.say(user, thread, "connect_api")
        (raised,) = out["__interrupt__"]
        asked: dict[str, Any] = raised.value
        self.asked.append(asked)
        assert (asked["type"], asked["server"], asked["tool_name"]) == (
            "mcp_authorization",
            "api",
            "connect_api",
        )
        await self.browse(asked["url"], user)
        done = await self.resume(user, thread)
        return last_tool(done)


def last_tool(out: dict[str, Any]) -> str:
    message = [m for m in out["messages"] if isinstance(m, ToolMessage)][-1]
    assert message.status == "success", message.content
    return str(message.content)


def signed_in(request: Any) -> str | None:
    user = request.cookies.get("user")
    return user if isinstance(user, str) else None


class GuardEverything:
    """Wraps an MCP server's app in a :class:`Gate` that guards every request (``wrap``), and
    keeps the gate (``gate``)."""

    def __init__(self, provider: Provider, issuer: str) -> None:
        self.provider, self.issuer = provider, issuer
        self.gates: list[Gate] = []

    def wrap(self, app: Any) -> Gate:
        self.gates.append(Gate(app, self.provider, self.issuer))
        self.gates[-1].everything = True
        return self.gates[-1]

    @property
    def gate(self) -> Gate:
        return self.gates[0]


@asynccontextmanager
async def signin_site(
    provider: Provider, sock: Any, base: str, servers: dict[str, Any], store: InMemoryStore
) -> AsyncIterator[None]:
    """The SDK's authorization server over ``provider`` and the deployment's callback route for
    ``servers`` (tokens into ``store``), served at ``base`` on ``sock`` until the block ends."""
    routes = create_auth_routes(
        provider,  # type: ignore[arg-type,unused-ignore]
        AnyHttpUrl(base),
        client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=["read"]),
        revocation_options=RevocationOptions(enabled=True),
    )
    app = Starlette(
        routes=[*routes, Mount("/oauth", oauth_callback_app(servers, store=store, user_of=signed_in))]
    )
    authorization = make_uvicorn_server(app)
    serving = asyncio.ensure_future(authorization.serve([sock]))
    try:
        await asyncio.wait_for(authorization.ready.wait(), 10)
        yield
    finally:
        authorization.should_exit = True
        await asyncio.wait_for(serving, 10)
        sock.close()


def own_graph(pool: MCPPool, model: ScriptModel, store: InMemoryStore, **options: Any) -> Any:
    """A graph of one's own: a model node that binds ``node.get_tools(...)``, and ``MCPToolNode``."""
    node = MCPToolNode(pool, **options)

    async def call_model(state: MessagesState, runtime: Runtime[Any]) -> dict[str, Any]:
        tools = await node.get_tools(runtime.context, state=state)
        return {"messages": [await model.bind_tools(tools).ainvoke(state["messages"])]}

    def call_model_sync(state: MessagesState, runtime: Runtime[Any]) -> dict[str, Any]:
        # On the package's own loop, in a copy of this context: get_tools reads the run's config
        # and store from it.
        found = run_sync(lambda: node.get_tools(runtime.context, state=state))
        return {"messages": [model.bind_tools(found).invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", RunnableCallable(call_model_sync, call_model))
    builder.add_node(node)
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder.compile(checkpointer=InMemorySaver(), store=store)


@asynccontextmanager
async def deployment(
    protocol: str,
    *,
    only_protected: bool = False,
    face: str = "agent",
    oauth: bool = True,
    tool_catalog: Any = None,
    lazy_other: bool = False,
    api: Any = None,
    **agent: Any,
) -> AsyncIterator[Deployment]:
    """The deployment; ``api``: the protected server (default ``tests/servers/peruser.py``)."""
    provider = Provider(token_ttl=600)
    sock = bind_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    guard = GuardEverything(provider, base)
    catalog = peruser.PerUserCatalog()
    protected = serve_in_loop(
        api if api is not None else peruser.build_server(catalog), "http", wrap=guard.wrap
    )
    url = await protected.__aenter__()
    stopped = False

    async def stop() -> None:
        nonlocal stopped
        if not stopped:
            stopped = True
            await protected.__aexit__(None, None, None)

    async with AsyncExitStack() as stack:
        stack.push_async_callback(stop)
        other_url = await stack.enter_async_context(serve_in_loop(other.build_server(), "http"))
        spec: dict[str, Any] = {
            "api": {
                "url": url,
                "protocol": protocol,
                "timeout": 20,
                "oauth": {"redirect_uri": f"{base}/oauth/callback", "encryption_key": KEY},
            }
        }
        if not oauth:  # the credentials come from the run (per_user headers)
            del spec["api"]["oauth"]
        if not only_protected:
            spec["other"] = {"url": other_url, "protocol": protocol, "lazy": lazy_other}
        servers = load_connections(spec)
        store = InMemoryStore()
        async with (
            signin_site(provider, sock, base, servers, store),
            MCPPool(servers, tool_catalog=tool_catalog) as pool,
        ):
            model = ScriptModel()
            if face == "agent":
                graph = create_mcp_agent(model, pool, checkpointer=InMemorySaver(), store=store, **agent)
            else:
                graph = own_graph(pool, model, store, **agent)
            deployed = Deployment(provider, guard.gate, catalog, store, servers, pool, model, graph)
            deployed.guard, deployed.stop_api = guard, stop
            yield deployed


@pytest.mark.parametrize("protocol", ERAS)
async def test_each_user_signs_in_and_is_offered_their_own_tools(
    protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with deployment(protocol) as d:
        # Alice has not connected: she is offered the other server's tools and the sign-in tool.
        await d.say("alice", "a1", HELLO)
        offered = d.offered()
        assert "connect_api" in offered and "echo" in offered
        assert not offered & {"whoami", "alice_reports", "bob_admin"}
        assert d.catalog.listed == []  # nothing was listed for anyone without a token

        answer = await d.connect("alice", "a1")
        assert "Connected to MCP server 'api'" in answer and "alice_reports" in answer
        # The model call after the resume is offered her own tools, and no sign-in tool.
        offered = d.offered()
        assert {"whoami", "alice_reports", "echo"} <= offered
        assert "connect_api" not in offered and "bob_admin" not in offered
        assert "alice_reports for alice" in last_tool(await d.say("alice", "a1", "alice_reports"))
        # Her other thread is offered her tools at once.
        await d.say("alice", "a2", HELLO)
        assert {"whoami", "alice_reports"} <= d.offered()

        # Bob: his own sign-in, then his own catalog; never alice's.
        await d.say("bob", "b1", HELLO)
        assert "connect_api" in d.offered() and "alice_reports" not in d.offered()
        assert "bob_admin" in await d.connect("bob", "b1")
        assert {"whoami", "bob_admin"} <= d.offered() and "alice_reports" not in d.offered()
        assert last_tool(await d.say("bob", "b1", "whoami")) == "user=bob"

        # At the server: each listing and call was made with its user's own token.
        assert set(d.catalog.listed) == {"alice", "bob"}
        assert set(d.catalog.called) == {("alice", "alice_reports"), ("bob", "whoami")}
        assert set(d.gate.users_seen) == {"alice", "bob"}
        # Nothing of a user's catalog in the shared pool's catalog, nor in a log line of ours.
        assert d.pool.remembered.get("api", ()) == ()
        ours = [r.getMessage() for r in caplog.records if r.name.startswith("langgraph_mcp")]
        assert not any(name in line for line in ours for name in ("alice_reports", "bob_admin"))


@pytest.mark.parametrize("protocol", ERAS)
async def test_the_protected_server_alone_and_a_revoked_user(protocol: str) -> None:
    async with deployment(protocol, only_protected=True) as d:
        # Every run used to fail here (the only server refused its listing): now the model is
        # offered the sign-in tool.
        await d.say("alice", "a1", HELLO)
        assert d.offered() == {"connect_api"}
        await d.connect("alice", "a1")
        assert d.offered() == {"whoami", "alice_reports"}

        # Alice's listing changes: her next model call is offered the new tool, bob is not.
        d.catalog.tools["alice"] = ["whoami", "alice_reports", "alice_audit"]
        await d.catalog.changed("alice")
        for _ in range(100):  # the change notice reaches her session; her next listing has it
            await d.say("alice", "a1", HELLO)
            if "alice_audit" in d.offered():
                break
            await asyncio.sleep(0.05)
        assert d.offered() == {"whoami", "alice_reports", "alice_audit"}

        # Revoked: her next run is asked to connect again.
        await revoke(d.store, "alice", "api", config=d.servers["api"])
        await d.say("alice", "a1", HELLO)
        assert d.offered() == {"connect_api"}
        out = await d.say("alice", "a1", "connect_api")
        (raised,) = out["__interrupt__"]
        assert raised.value["reason"] in ("connect", "expired")


async def test_users_with_the_same_listing_share_one_tool_set() -> None:
    """Tool sets are shared by listing content, never by user: two users who list the same tools
    share one built and bound set; a user with another listing has their own."""
    async with deployment("auto") as d:
        d.catalog.named = False
        d.catalog.tools["carol"] = ["whoami", "alice_reports"]  # the same listing as alice's
        for user in ("alice", "carol", "bob"):
            await d.connect(user, f"{user}-1")
        users = d.agent.mcp.users

        async def tools_of(user: str) -> Any:
            config = {"configurable": {"langgraph_auth_user": {"identity": user}}}
            return (await users.for_run(config=config, context=None, store=d.store)).bound

        alice, carol, bob = [await tools_of(u) for u in ("alice", "carol", "bob")]
        assert alice is carol and alice is not bob
        assert {t.name for t in bob.tools} >= {"bob_admin"} and "bob_admin" not in alice.by_name
        # Carol's tools are carol's at the server, though built from alice's listing.
        assert last_tool(await d.say("carol", "carol-1", "whoami")) == "user=carol"


@pytest.mark.parametrize("sync", [False, True], ids=["ainvoke", "invoke"])
async def test_a_graph_of_ones_own_with_mcptoolnode(sync: bool) -> None:
    async with deployment("auto", face="node") as d:
        d.sync = sync
        await d.say("alice", "a1", HELLO)
        assert "connect_api" in d.offered() and "alice_reports" not in d.offered()
        assert "alice_reports" in await d.connect("alice", "a1")
        assert {"whoami", "alice_reports"} <= d.offered() and "connect_api" not in d.offered()
        assert last_tool(await d.say("alice", "a1", "alice_reports")) == "alice_reports for alice"
        # Bob's run never reaches alice's tool: a call naming it is refused without a request.
        d.model.unbound = "call"
        out = await d.say("bob", "b1", "alice_reports")
        refused = [m for m in out["messages"] if isinstance(m, ToolMessage)][-1]
        assert refused.status == "error" and "alice_reports" in str(refused.content)
        assert ("bob", "alice_reports") not in d.catalog.called


async def test_sync_agent_signs_in_and_calls() -> None:
    async with deployment("legacy") as d:
        d.sync = True
        assert "alice_reports" in await d.connect("alice", "a1")
        assert last_tool(await d.say("alice", "a1", "alice_reports")) == "alice_reports for alice"


async def test_tool_search_searches_the_users_own_tools() -> None:
    async with deployment("auto", tool_search=True) as d:
        await d.say("alice", "a1", HELLO)
        # The sign-in tool is offered next to the search tool (no search finds it).
        assert {"search_tools", "connect_api"} <= d.offered()
        await d.connect("alice", "a1")
        found = last_tool(await d.say("alice", "a1", 'search_tools {"query": "reports of alice"}'))
        assert "alice_reports" in found
        assert "alice_reports" in d.offered()  # revealed: offered from the next model call on
        assert last_tool(await d.say("alice", "a1", "alice_reports")) == "alice_reports for alice"
        await d.connect("bob", "b1")
        found = last_tool(await d.say("bob", "b1", 'search_tools {"query": "reports admin"}'))
        assert "bob_admin" in found and "alice_reports" not in found


async def test_batched_approvals_ask_about_a_users_calls_together() -> None:
    async with deployment("auto", approval=True, approval_mode="batched") as d:
        await d.connect("alice", "a1")  # the sign-in tool asks no approval
        out = await d.say("alice", "a1", "whoami\nalice_reports")
        (raised,) = out["__interrupt__"]
        assert raised.value["type"] == "tool_approvals"
        assert [r["name"] for r in raised.value["action_requests"]] == ["whoami", "alice_reports"]
        assert d.catalog.called == []
        decisions = {"decisions": [{"type": "approve"}, {"type": "approve"}]}
        done = await d._run("alice", "a1", Command(resume=decisions))
        results = [str(m.content) for m in done["messages"] if isinstance(m, ToolMessage)][-2:]
        assert results == ["user=alice", "alice_reports for alice"]


def api_key(runtime: Any) -> dict[str, str]:
    """The run's user's credentials, from its context (as a deployment reads a user's API key)."""
    token = (runtime.context or {}).get("token")
    return {"authorization": f"Bearer {token}"} if token else {}


@pytest.mark.parametrize("protocol", ERAS)
async def test_credentials_from_the_run_make_a_server_per_user(
    protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    options = {"api": ToolOptions(headers=api_key, per_user=True)}
    async with deployment(protocol, oauth=False, server_options=options) as d:
        tokens = {u: d.provider._issue("app", ["read"], None, u).access_token for u in ("alice", "bob")}
        d.context = {"token": tokens["alice"]}
        await d.say("alice", "a1", HELLO)
        assert {"whoami", "alice_reports", "echo"} <= d.offered() and "bob_admin" not in d.offered()
        assert "connect_api" not in d.offered()  # no sign-in: the credentials come with the run
        assert last_tool(await d.say("alice", "a1", "alice_reports")) == "alice_reports for alice"

        d.context = {"token": tokens["bob"]}
        await d.say("bob", "b1", HELLO)
        assert {"whoami", "bob_admin"} <= d.offered() and "alice_reports" not in d.offered()
        assert last_tool(await d.say("bob", "b1", "whoami")) == "user=bob"

        # No credentials, or refused ones: none of the server's tools, the other server's still.
        for context in ({}, {"token": "not-a-token"}):
            d.context = context
            await d.say("carol", "c1", HELLO)
            assert "echo" in d.offered() and not d.offered() & {"whoami", "alice_reports", "bob_admin"}
        d.model.unbound = "call"
        d.context = {}
        out = await d.say("carol", "c1", "alice_reports")
        refused = [m for m in out["messages"] if isinstance(m, ToolMessage)][-1]
        assert refused.status == "error"

        assert set(d.catalog.listed) == {"alice", "bob"}
        assert set(d.catalog.called) == {("alice", "alice_reports"), ("bob", "whoami")}
        ours = [r.getMessage() for r in caplog.records if r.name.startswith("langgraph_mcp")]
        assert not any(t in line for line in ours for t in tokens.values())
        # The shared pool never listed the server with anyone's credentials.
        assert d.pool.remembered.get("api", ()) == ()


def test_per_user_headers_are_checked() -> None:
    servers = {"api": {"url": "http://127.0.0.1:1/mcp"}, "local": {"command": "python", "args": ["-V"]}}
    with pytest.raises(MCPConfigError, match="per_user needs headers"):
        MCPToolNode(servers, server_options={"api": ToolOptions(per_user=True)})
    with pytest.raises(MCPConfigError, match="streamable HTTP"):
        MCPToolNode(servers, server_options={"local": ToolOptions(headers=api_key, per_user=True)})
    with pytest.raises(MCPConfigError, match="belongs in server_options"):
        MCPToolNode(servers, tool_options={"api/x": ToolOptions(headers=api_key, per_user=True)})


@pytest.mark.parametrize("oauth", [True, False], ids=["oauth", "per_user-headers"])
async def test_a_users_listing_is_never_written_to_the_persisted_catalog(oauth: bool, tmp_path: Any) -> None:
    kept = tmp_path / "catalog.json"
    options = {} if oauth else {"server_options": {"api": ToolOptions(headers=api_key, per_user=True)}}
    async with deployment("auto", oauth=oauth, tool_catalog=str(kept), **options) as d:
        if oauth:
            await d.connect("alice", "a1")
        else:
            d.context = {"token": d.provider._issue("app", ["read"], None, "alice").access_token}
        assert last_tool(await d.say("alice", "a1", "alice_reports")) == "alice_reports for alice"
        written = kept.read_text()
        assert "echo" in written  # the other server's tools are kept, as for any server
        assert "alice_reports" not in written and "whoami" not in written


async def test_a_failing_store_takes_only_that_servers_tools_out_of_a_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The token store failing (a database down) leaves the per-user server out of the run; the
    run goes on with the other servers' tools instead of failing."""
    async with deployment("auto") as d:
        await d.connect("alice", "a1")
        real = InMemoryStore.aget

        async def failing(self: InMemoryStore, namespace: tuple[str, ...], *args: Any, **kwargs: Any) -> Any:
            if "oauth" in namespace:
                raise ConnectionError("store down")
            return await real(self, namespace, *args, **kwargs)

        monkeypatch.setattr(InMemoryStore, "aget", failing)
        out = await d.say("alice", "a1", 'echo {"text": "hi"}')
        assert "hi" in last_tool(out)
        assert "echo" in d.offered() and "alice_reports" not in d.offered()


async def test_a_failing_credentials_function_fails_its_call_only_and_shows_no_secret(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[str | None] = []

    def vault(runtime: Any) -> dict[str, str]:
        calls.append(runtime.tool_call_id)
        token = (runtime.context or {}).get("token")
        if runtime.tool_call_id is not None and (runtime.context or {}).get("vault_down"):
            raise RuntimeError(f"the vault refused key {token}")
        return {"authorization": f"Bearer {token}"}

    options = {"api": ToolOptions(headers=vault, per_user=True)}
    async with deployment("auto", oauth=False, server_options=options) as d:
        token = d.provider._issue("app", ["read"], None, "alice").access_token
        d.context = {"token": token}
        await d.say("alice", "a1", HELLO)
        calls.clear()
        assert last_tool(await d.say("alice", "a1", "whoami")) == "user=alice"
        # The call computes them once (its session carries them: they are not sent again as
        # per-call headers); the run's tools are listed with them for each model call and as
        # the call is routed.
        assert sum(c is not None for c in calls) == 1 and len(calls) == 4

        d.context = {"token": token, "vault_down": True}
        out = await d.say("alice", "a1", "whoami")
        failed = [m for m in out["messages"] if isinstance(m, ToolMessage)][-1]
        assert failed.status == "error" and "per_user headers function failed (RuntimeError)" in str(
            failed.content
        )
        assert token not in str(failed.content)
        assert not any(token in r.getMessage() for r in caplog.records if r.name.startswith("langgraph_mcp"))


async def test_a_users_invalid_tool_is_left_out_without_its_name_in_the_log(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        peruser, "INPUT_SCHEMA", {"type": "object", "properties": {"q": {"type": "string", "minLength": "x"}}}
    )
    async with deployment("auto") as d:
        await d.connect("alice", "a1")
        assert not d.offered() & {"whoami", "alice_reports"}
        warned = [r.getMessage() for r in caplog.records if r.name.startswith("langgraph_mcp")]
        assert any("a tool it listed for a user is left out" in line for line in warned)
        assert not any("alice_reports" in line or "whoami" in line for line in warned)


async def test_a_user_whose_sessions_closed_leaves_no_token_in_memory() -> None:
    from langgraph_mcp._oauth import calls

    async with deployment("auto") as d:
        await d.connect("alice", "a1")
        shared = d.pool.connection("api")
        assert "alice" in calls._BEARERS.get(shared, {})
        assert d.pool._threads.evict_user("api", "alice") >= 1
        await d.pool._threads.settled()
        for _ in range(50):  # the closed session's last references go as its tasks end
            gc.collect()
            if "alice" not in calls._BEARERS.get(shared, {}):
                break
            await asyncio.sleep(0.02)
        assert "alice" not in calls._BEARERS.get(shared, {})


async def test_a_lazy_server_waits_while_a_users_catalog_is_listed(tmp_path: Any) -> None:
    """With a kept catalog, a lazy server is not started by a run that only uses the per-user
    server's tools; it starts at its first call."""
    kept = tmp_path / "catalog.json"
    async with deployment("auto", tool_catalog=str(kept), lazy_other=True) as d:
        async with MCPPool(d.servers, tool_catalog=str(kept)) as earlier:  # an earlier process
            await earlier.start()
        await d.connect("alice", "a1")
        assert {"whoami", "alice_reports", "echo"} <= d.offered()  # echo: from the kept catalog
        assert last_tool(await d.say("alice", "a1", "alice_reports")) == "alice_reports for alice"
        assert d.pool.waiting("other") and not d.pool.waiting("api")
        assert "hi" in last_tool(await d.say("alice", "a1", 'echo {"text": "hi"}'))
        assert not d.pool.waiting("other")


async def test_users_running_at_once_each_get_their_own_tools_and_answers() -> None:
    """Three users' runs at once, three each: a model call offered anyone else's tools would fail
    the run (the scripted call of a tool it was not given raises), and each answer is the
    caller's."""
    async with deployment("auto") as d:
        d.catalog.tools["carol"] = ["whoami", "carol_notes"]
        for user in ("alice", "bob", "carol"):
            await d.connect(user, f"{user}-0")
        own = {"alice": "alice_reports", "bob": "bob_admin", "carol": "carol_notes"}
        before = len(d.catalog.called)

        async def run(user: str, n: int) -> tuple[str, str, str]:
            out = await d.say(user, f"{user}-{n}", f"{own[user]}\nwhoami")
            answers = [str(m.content) for m in out["messages"] if isinstance(m, ToolMessage)][-2:]
            return user, answers[0], answers[1]

        results = await asyncio.gather(*(run(u, n) for n in (1, 2, 3) for u in own))
        for user, tool_answer, whoami in results:
            assert (tool_answer, whoami) == (f"{own[user]} for {user}", f"user={user}")
        called = d.catalog.called[before:]
        assert sorted(called) == sorted([(u, t) for u in own for t in (own[u], "whoami")] * 3)


@pytest.mark.slow  # waits for the user's session to be tried again after its back-off (1 s)
async def test_a_per_user_server_down_fails_its_calls_only_and_comes_back() -> None:
    async with deployment("auto") as d:
        await d.connect("alice", "a1")
        assert "alice_reports" in d.offered()
        port = int(str(d.servers["api"].url).rsplit(":", 1)[1].split("/")[0])
        await d.stop_api()  # the server goes away
        out = await d.say("alice", "a1", 'echo {"text": "still here"}')
        assert "still here" in last_tool(out)  # the run goes on with the other server
        # Her tools, as last listed, stay offered (as a shared server's do): a call says why it
        # failed, and the run goes on.
        out = await d.say("alice", "a1", "alice_reports")
        failed = [m for m in out["messages"] if isinstance(m, ToolMessage)][-1]
        assert failed.status == "error" and "api" in str(failed.content)
        assert "connect_api" not in d.offered()  # she is not asked to sign in again

        back = serve_in_loop(peruser.build_server(d.catalog), "http", port=port, wrap=d.guard.wrap)
        await back.__aenter__()
        try:
            for _ in range(60):  # until her session is tried again (its back-off, 1 s)
                out = await d.say("alice", "a1", "alice_reports")
                answer = [m for m in out["messages"] if isinstance(m, ToolMessage)][-1]
                if answer.status == "success":
                    break
                await asyncio.sleep(0.1)
            assert str(answer.content) == "alice_reports for alice"
        finally:
            await back.__aexit__(None, None, None)
