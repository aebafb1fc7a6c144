"""Per-user OAuth, where it must hold against misuse: nothing is done for a per-user server
without its user, sessions of one user cannot be named by another, sign-ins expire and are
good once, the client's secret goes only to its own authorization server, revoking closes the
user's sessions, and the encryption key can be rotated.

Against the SDK's authorization server on loopback and a bearer-checking MCP server (see
``tests/oauth/test_oauth.py``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from cryptography.fernet import Fernet
from langgraph.store.base import BaseStore, GetOp, Op, Result, SearchOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.postgres import AsyncPostgresStore
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from langgraph_mcp import MCPConfigError, MCPConnectionError
from langgraph_mcp._oauth.calls import UserBearer
from langgraph_mcp._oauth.flow import MAX_EXPIRES_IN
from langgraph_mcp._oauth.records import (
    MAX_PENDING_PER_USER,
    PENDING,
    TOKENS,
    Pending,
    Sealer,
    TokenRecord,
    load_tokens,
    put_pending,
    save_tokens,
    split_state,
    take_pending,
)
from langgraph_mcp._session.era import MODERN
from langgraph_mcp.config import load_connections
from langgraph_mcp.oauth import guard_store, revoke
from tests.oauth.test_oauth import KEY, connect, failure, payload, world
from tests.servers import hinted

NEW_KEY = Fernet.generate_key().decode()


def pool_of(w: Any) -> Any:
    return w.graph.nodes["tools"].bound.pool


# -- 1. nothing without the user -----------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_requests_other_than_calls_are_refused_without_a_user(protocol: str) -> None:
    async with world(protocol) as w:
        assert w.answered_as(await connect(w, "alice", "a1")) == "alice"
        pool = pool_of(w)
        before = len(w.gate.seen_tokens)
        for attempt in (
            pool.list_resources("api"),
            pool.list_resource_templates("api"),
            pool.read_resource("api", "demo://greeting"),
            pool.list_prompts("api"),
            pool.get_prompt("api", "greet", {"name": "x"}),
            pool.complete("api", argument="name", value="x", prompt="greet"),
            pool.read_resource_template("api", "demo://{name}", {"name": "x"}),
            pool.client("api"),
        ):
            with pytest.raises(MCPConnectionError, match="acts for each user") as caught:
                await attempt
            assert KEY not in str(caught.value)
        with pytest.raises(MCPConnectionError, match="acts for each user"):
            pool.subscribe("api", "demo://greeting")
        assert len(w.gate.seen_tokens) == before


async def test_a_users_session_reuses_no_other_sessions_listing_or_read(tmp_path: Path) -> None:
    """The server marks its listings and reads public and reusable: still, each user's session
    asks it for itself, as that user (the server may answer each user differently)."""
    log = tmp_path / "lists.log"
    server = hinted.build_server(log=str(log), ttl_ms=60_000, scope="public")
    async with world(server=server) as w:
        pool = pool_of(w)
        texts = []
        for user in ("alice", "bob"):
            bearer = UserBearer()
            bearer.token = w.provider._issue("c", ["read"], None, user).access_token
            async with pool.using("api", None, user=user, auth=bearer) as connection:
                await connection.list_tools()
                assert connection.era == MODERN  # the era whose listings may be shared
                await connection.listing("prompts")
                texts.append((await connection.read("hinted://about")).contents[0])
            assert w.provider.user_of(w.gate.seen_tokens[-1]) == user
        methods = [line.split()[0] for line in log.read_text().splitlines()]
        # Each user's session listed for itself.
        assert (methods.count("tools/list"), methods.count("prompts/list")) == (2, 2)
        assert methods.count("resources/read") == 2


# -- 2. step-up as a session connects ------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_step_up_when_a_new_session_connects(protocol: str) -> None:
    async with world(protocol, session_scope="thread") as w:
        assert w.answered_as(await connect(w, "alice", "a1")) == "alice"
        w.gate.required = {"read", "admin"}
        asked = payload(await w.run("alice", "a2"))  # a new session: refused at initialize
        assert asked["reason"] == "step_up" and set(asked["scopes"]) == {"read", "admin"}
        assert (await w.browse(asked["url"], "alice")).status_code == 200
        assert w.answered_as(await w.run("alice", "a2", resume=True)) == "alice"


# -- 3. session keys no thread id can name -------------------------------------------------------


async def test_a_crafted_thread_id_cannot_reach_another_users_session() -> None:
    async with world(session_scope="thread") as w:
        assert w.answered_as(await connect(w, "alice", "a1")) == "alice"
        pool = pool_of(w)
        shared = pool.connection("api")
        (alice,) = pool._threads._servers["api"].open.values()
        for crafted in ("user:5:alice:a1", "user:5:alice:", "a1", str(("alice", "a1"))):
            assert pool.connection_for("api", crafted) is shared
        # Bob in a thread named like Alice's session is asked to connect, with his own session.
        asked = payload(await w.run("bob", "user:5:alice:a1"))
        assert asked["reason"] == "connect"
        assert (await w.browse(asked["url"], "bob")).status_code == 200
        assert w.answered_as(await w.run("bob", "user:5:alice:a1", resume=True)) == "bob"
        assert w.answered_as(await w.run("alice", "a1", "c2")) == "alice"
        assert alice in pool._threads._servers["api"].open.values()
        # Listing a server's sessions names threads, never users.
        assert sorted(pool.thread_sessions("api")) == ["a1", "user:5:alice:a1"]


# -- 4. abandoned sign-ins expire ----------------------------------------------------------------


def _pending(user: str, expires_at: float, server: str = "api") -> Pending:
    return Pending(
        server=server, user=user, thread="t", expires_at=expires_at, verifier="v" * 43,
        issuer="https://as.example/", iss_supported=False, token_endpoint="https://as.example/token",
        client_id="c", redirect_uri="https://app.example/cb", resource="https://mcp.example/mcp",
        scopes=[],
    )  # fmt: skip


async def _pending_count(store: BaseStore) -> int:
    return len(await store.asearch(PENDING, limit=1000))


async def test_abandoned_sign_ins_expire_and_are_bounded_per_user() -> None:
    await abandoned_sign_ins(InMemoryStore())


@pytest.mark.slow
async def test_abandoned_sign_ins_in_a_postgres_store(postgres_uri: str) -> None:
    """The sweep's filters (the expiry compared as a number, the owner) hold in the store a
    deployment runs with."""
    async with AsyncPostgresStore.from_conn_string(postgres_uri) as store:
        await store.setup()
        for item in await store.asearch(PENDING, limit=1000):  # the database is the session's
            await store.adelete(PENDING, item.key)
        await abandoned_sign_ins(store)


async def abandoned_sign_ins(store: BaseStore) -> None:
    sealer = Sealer(KEY)
    now = time.time()
    old = [await put_pending(store, sealer, _pending("alice", now - 1)) for _ in range(3)]
    await put_pending(store, sealer, _pending("bob", now + 600))
    # The expired ones are swept as a new one is kept: only Bob's is left.
    assert await _pending_count(store) == 1
    for state in old:
        server, nonce, mac = split_state(state)  # type: ignore[misc]
        assert await take_pending(store, sealer, server, nonce, mac) is None
    states = [await put_pending(store, sealer, _pending("alice", now + 600)) for _ in range(30)]
    assert await _pending_count(store) == MAX_PENDING_PER_USER + 1
    # Alice's newest are kept, and Bob's sign-in is untouched by hers.
    server, nonce, mac = split_state(states[-1])  # type: ignore[misc]
    assert await take_pending(store, sealer, server, nonce, mac) is not None
    server, nonce, mac = split_state(states[0])  # type: ignore[misc]
    assert await take_pending(store, sealer, server, nonce, mac) is None
    stored = await store.asearch(PENDING, limit=1000)
    owners = {item.value.get("owner") for item in stored}
    assert len(owners) == 2 and not any("alice" in str(o) or "bob" in str(o) for o in owners)
    # What is shown beside the sealed record is its owner's digest and its expiry, nothing else.
    assert all(set(item.value) == {"sealed", "owner", "expires_at"} for item in stored)
    assert not any("v" * 43 in json.dumps(item.value) for item in stored)


class CountingStore(InMemoryStore):
    """An in-memory store that notes the ``limit`` of each search."""

    def __init__(self) -> None:
        super().__init__()
        self.searched: list[int] = []

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        self.searched.extend(op.limit for op in ops if isinstance(op, SearchOp))
        return await super().abatch(ops)


async def test_a_sweep_reads_a_bounded_number_of_records() -> None:
    store, sealer = CountingStore(), Sealer(KEY)
    now = time.time()
    for i in range(150):  # expired, of many users: one sweep takes a bounded part of them
        await store.aput(PENDING, f"n{i}", {"sealed": "x", "owner": f"o{i}", "expires_at": now - 1})
    for _ in range(30):
        await put_pending(store, sealer, _pending("alice", now + 600))
    store.searched.clear()
    await put_pending(store, sealer, _pending("alice", now + 600))
    assert store.searched and all(limit <= 100 for limit in store.searched)
    # Each sweep removed some; together they removed all the expired ones.
    assert await _pending_count(store) == MAX_PENDING_PER_USER


# -- 5. the client's secret goes to its own authorization server only ----------------------------


async def test_a_pinned_client_is_not_used_with_another_issuer() -> None:
    async with world(preregistered=True, issuer="https://auth.other.example/") as w:
        says = failure(await w.run("alice", "a1"))
        assert "issuer" in says and "app-secret" not in says
        assert w.provider.grants == []


def test_a_client_secret_needs_its_issuer() -> None:
    raw = {
        "api": {
            "url": "https://mcp.example.com/mcp",
            "oauth": {
                "redirect_uri": "https://app.example.com/cb",
                "encryption_key": KEY,
                "client_id": "app",
                "client_secret": "s3cret-value",
            },
        }
    }
    with pytest.raises(MCPConfigError, match="issuer") as caught:
        load_connections(raw)
    assert "s3cret-value" not in str(caught.value)
    raw["api"]["oauth"]["issuer"] = "http://as.example.com/"  # type: ignore[index]
    with pytest.raises(MCPConfigError, match="https"):
        load_connections(raw)


@pytest.mark.parametrize("field", ["token_endpoint", "authorization_endpoint", "registration_endpoint"])
async def test_discovered_endpoints_must_be_https(field: str) -> None:
    async with world(metadata={field: "http://auth.example.test/oauth/x"}) as w:
        says = failure(await w.run("alice", "a1"))
        assert "https" in says and field.replace("_", " ") in says
        assert w.provider.clients == {} and w.provider.grants == []


async def test_the_authorization_server_must_be_https() -> None:
    async with world() as w:
        w.gate.issuer = "http://auth.example.test/"  # the server's metadata names it
        says = failure(await w.run("alice", "a1"))
        assert "authorization server is not an https:// URL" in says
        assert w.provider.clients == {}


# -- 6. a sign-in is good once, whatever the timing ----------------------------------------------


class MeetingStore(InMemoryStore):
    """An in-memory store whose first ``readers`` reads of sign-ins in progress wait for each
    other: as with a store over the network, each callback reads before the other has deleted."""

    def __init__(self, readers: int = 2) -> None:
        super().__init__()
        self.readers = readers
        self.met = asyncio.Event()

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        results = await super().abatch(ops)
        if self.readers and any(isinstance(op, GetOp) and op.namespace == PENDING for op in ops):
            self.readers -= 1  # read; the answer comes once the other reader has read too
            if self.readers:
                await asyncio.wait_for(self.met.wait(), 10)
            else:
                self.met.set()
        return results


async def test_two_concurrent_callbacks_exchange_the_code_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="langgraph_mcp")
    async with world(store=MeetingStore()) as w:
        asked = payload(await w.run("alice", "a1"))
        w.provider.next_user = "alice"
        async with httpx2.AsyncClient(timeout=10, cookies={"user": "alice"}) as browser:
            callback = (await browser.get(asked["url"])).headers["location"]
            answers = await asyncio.gather(browser.get(callback), browser.get(callback))
        assert sorted(a.status_code for a in answers) == [200, 400]
        # Only one of them sent the code to the token endpoint.
        assert (w.provider.code_requests, w.provider.grants) == (1, ["authorization_code"])
        code = parse_qs(urlsplit(callback).query)["code"][0]
        assert not any(code in a.text for a in answers)
        assert not any(code in r.getMessage() for r in caplog.records)
        assert w.answered_as(await w.run("alice", "a1", resume=True)) == "alice"


# -- 7. revoking closes the user's sessions ------------------------------------------------------


@pytest.mark.parametrize("scope", ["shared", "thread"])
async def test_revoking_closes_the_users_sessions(scope: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="langgraph_mcp")
    async with world(session_scope=scope) as w:
        assert w.answered_as(await connect(w, "alice", "a1")) == "alice"
        assert w.answered_as(await connect(w, "bob", "b1")) == "bob"
        pool = pool_of(w)
        opened = dict(pool._threads._servers["api"].open)
        (alice,) = [c for c in opened.values() if "alice" in c.key]
        await revoke(w.store, "alice", "api")  # not at the authorization server: the token still works
        remaining = pool._threads._servers["api"].open.values()
        assert alice not in remaining and len(remaining) == 1
        await pool._threads.settled()
        session = alice._session_here()
        assert session is None or not session.alive
        seen = len(w.gate.seen_tokens)
        assert payload(await w.run("alice", "a1", "c2"))["reason"] == "connect"
        assert len(w.gate.seen_tokens) == seen
        assert w.answered_as(await w.run("bob", "b1", "c2")) == "bob"
        logged = " ".join(r.getMessage() for r in caplog.records)
        assert not any(t in logged for t in [*w.provider.access, *w.provider.refresh])


# -- 8. key rotation -----------------------------------------------------------------------------


async def test_rotated_keys_open_old_records_and_reseal_them() -> None:
    store = InMemoryStore()
    record = TokenRecord(
        user="alice", server="api", issuer="https://as.example/", access_token="at-secret-1",
        token_endpoint="https://as.example/token", client_id="c", resource="https://mcp.example/mcp",
        refresh_token="rt-secret-1",
    )  # fmt: skip
    await save_tokens(store, Sealer(KEY), record)
    state = await put_pending(store, Sealer(KEY), _pending("alice", time.time() + 600))
    rotated = Sealer(f"{NEW_KEY},{KEY}")
    assert "at-secret" not in repr(rotated) and KEY not in repr(rotated) and NEW_KEY not in repr(rotated)
    loaded = await load_tokens(store, rotated, "alice", "api")
    assert loaded is not None and loaded.access_token == "at-secret-1"
    # Re-sealed with the new key: the new key alone opens it now.
    assert (await load_tokens(store, Sealer(NEW_KEY), "alice", "api")) is not None
    assert (await load_tokens(store, Sealer(KEY), "alice", "api")) is None
    # A sign-in begun before the rotation still completes.
    server, nonce, mac = split_state(state)  # type: ignore[misc]
    assert await take_pending(store, rotated, server, nonce, mac) is not None


def test_the_key_option_takes_several_keys_and_hides_them(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    entry = {
        "api": {
            "url": "https://mcp.example.com/mcp",
            "oauth": {"redirect_uri": "https://app.example.com/cb", "encryption_key": f"{NEW_KEY}, {KEY}"},
        }
    }
    (config,) = load_connections(entry).values()
    for shown in (repr(config), str(config)):
        assert KEY not in shown and NEW_KEY not in shown
    assert config.redactor()(f"{NEW_KEY} and {KEY}") == "*** and ***"  # type: ignore[union-attr]
    entry["api"]["oauth"]["encryption_key"] = f"{NEW_KEY},not-a-key"  # type: ignore[index]
    with pytest.raises(MCPConfigError, match="Fernet key") as caught:
        load_connections(entry)
    assert NEW_KEY not in str(caught.value)
    assert not any(NEW_KEY in r.getMessage() or KEY in r.getMessage() for r in caplog.records)


# -- 9. races and hostile answers ----------------------------------------------------------------


def _echoing_server() -> MCPServer:
    """An MCP server whose tool fails with a message quoting a request header."""
    server = MCPServer("echoing")

    @server.tool()
    def header(name: str, ctx: Context) -> str:  # type: ignore[type-arg]
        """Fails, quoting a request header."""
        raise ToolError(f"denied for {(ctx.headers or {}).get(name.lower(), '<none>')}")

    return server


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_server_echoing_the_users_token_in_an_error_shows_it_masked(protocol: str) -> None:
    async with world(protocol, server=_echoing_server()) as w:
        asked = payload(await w.run("alice", "a1"))
        assert (await w.browse(asked["url"], "alice")).status_code == 200
        error = failure(await w.run("alice", "a1", resume=True))
        token = w.gate.seen_tokens[-1]
        assert "denied for Bearer ***" in error and token not in error
        saved = await w.graph.aget_state({"configurable": {"thread_id": "a1"}})
        assert token not in repr(saved.values)


class GatedStore(InMemoryStore):
    """An in-memory store whose reads of tokens, once ``hold`` is set, wait for it to be cleared
    (after telling ``loaded``): a call is held just after it read the tokens."""

    def __init__(self) -> None:
        super().__init__()
        self.held: asyncio.Event | None = None
        self.loaded = asyncio.Event()

    async def aget(self, namespace: tuple[str, ...], key: str, **kwargs: Any) -> Any:
        item = await super().aget(namespace, key, **kwargs)
        if self.held is not None and namespace[-1] == "tokens":
            held, self.held = self.held, None
            self.loaded.set()
            await asyncio.wait_for(held.wait(), 10)
        return item


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_call_that_loaded_the_tokens_before_a_revocation_does_not_use_them(protocol: str) -> None:
    store = GatedStore()
    async with world(protocol, store=store) as w:
        assert w.answered_as(await connect(w, "alice", "a1")) == "alice"
        seen = len(w.gate.seen_tokens)
        store.held = release = asyncio.Event()
        call = asyncio.create_task(w.run("alice", "a2", "c2"))
        await asyncio.wait_for(store.loaded.wait(), 10)  # it has read alice's tokens
        await revoke(w.store, "alice", "api")
        release.set()
        assert payload(await call)["reason"] == "connect"  # asked again; the old token never sent
        assert len(w.gate.seen_tokens) == seen


async def test_another_user_opening_a_sign_in_link_does_not_spend_it() -> None:
    async with world() as w:
        asked = payload(await w.run("alice", "a1"))
        bob = await w.browse(asked["url"], "bob")
        assert bob.status_code == 400 and "made for someone else" in bob.text
        assert await _pending_count(w.store) == 1
        alice = await w.browse(asked["url"], "alice")
        assert alice.status_code == 200, alice.text
        assert w.answered_as(await w.run("alice", "a1", resume=True)) == "alice"


async def test_a_huge_expires_in_is_clamped_at_refresh_and_at_the_callback() -> None:
    async with world(refresh_margin=3600) as w:  # the 600 s tokens always expire "soon"
        assert w.answered_as(await connect(w, "alice", "a1")) == "alice"
        w.provider.token_ttl = 10**400  # valid JSON, beyond any float
        # Alice's next call refreshes her token, whose answer says it lasts "forever".
        assert w.answered_as(await w.run("alice", "a1", "c2")) == "alice"
        assert w.provider.grants[-1] == "refresh_token"
        # Bob connects: the code's exchange answers the same.
        assert w.answered_as(await connect(w, "bob", "b1")) == "bob"
        for user in ("alice", "bob"):
            record = await load_tokens(w.store, Sealer(KEY), user, "api")
            assert record is not None and record.expires_at is not None
            assert time.time() + 3600 < record.expires_at <= time.time() + MAX_EXPIRES_IN


# -- 9. record keys need the key; the store API rule -----------------------------------------------


def _alice_record(token: str = "at-secret-1", server: str = "api") -> TokenRecord:
    return TokenRecord(
        user="alice", server=server, issuer="https://as.example/", access_token=token,
        token_endpoint="https://as.example/token", client_id="c", resource="https://mcp.example/mcp",
    )  # fmt: skip


def _plain_digest(user: str, server: str) -> str:
    """What anyone could compute: the SHA-256 of (user, server), the key of earlier versions."""
    return hashlib.sha256("\0".join(["tokens", user, server]).encode()).hexdigest()


async def test_a_token_record_key_cannot_be_computed_without_the_key() -> None:
    store = InMemoryStore()
    await save_tokens(store, Sealer(KEY), _alice_record())
    [item] = await store.asearch(TOKENS)
    assert item.key != _plain_digest("alice", "api")
    # Another key (another deployment's, a guess) gives another record key: nothing there.
    assert item.key not in Sealer(NEW_KEY).token_keys("alice", "api")
    assert await load_tokens(store, Sealer(NEW_KEY), "alice", "api") is None
    # Each user and server has its own.
    assert item.key != Sealer(KEY).token_keys("bob", "api")[0]
    assert item.key != Sealer(KEY).token_keys("alice", "other")[0]


async def test_tokens_kept_under_the_plain_digest_are_read_then_moved_under_the_keyed_one() -> None:
    store = InMemoryStore()
    await store.aput(TOKENS, _plain_digest("alice", "api"), Sealer(KEY).seal(asdict(_alice_record())))
    loaded = await load_tokens(store, Sealer(KEY), "alice", "api")
    assert loaded is not None and loaded.access_token == "at-secret-1"
    [item] = await store.asearch(TOKENS)
    assert item.key == Sealer(KEY).token_keys("alice", "api")[0] != _plain_digest("alice", "api")
    assert (await load_tokens(store, Sealer(KEY), "alice", "api")) is not None


async def test_revoke_forgets_tokens_under_every_key_and_needs_the_key_to_find_them() -> None:
    store = InMemoryStore()
    old = Sealer(KEY).seal(asdict(_alice_record(server="vault")))
    await store.aput(TOKENS, _plain_digest("alice", "vault"), old)
    await save_tokens(store, Sealer(KEY), _alice_record("at-secret-2", server="vault"))
    await store.aput(TOKENS, _plain_digest("alice", "vault"), old)  # as an earlier version left it
    with pytest.raises(MCPConfigError, match="Pass config="):
        await revoke(store, "alice", "vault")  # no pool of this process knows 'vault': no key
    assert len(await store.asearch(TOKENS)) == 2
    oauth = {"redirect_uri": "https://app.example/cb", "encryption_key": KEY}
    config = load_connections({"vault": {"url": "https://mcp.example/mcp", "oauth": oauth}})["vault"]
    await revoke(store, "alice", "vault", config=config)
    assert await store.asearch(TOKENS) == []


@pytest.mark.parametrize(
    ("action", "namespace", "refused"),
    [
        ("delete", ("langgraph_mcp", "oauth", "tokens"), True),
        ("get", ("langgraph_mcp", "oauth", "tokens"), True),
        ("put", ("langgraph_mcp", "oauth", "tokens"), True),
        ("search", ("langgraph_mcp",), True),
        ("search", (), True),
        ("put", ("langgraph_mcp", "tool_catalog"), True),
        ("get", ("langgraph_mcp", "outputs", "thread", "dDE"), True),
        ("delete", ("alice", "notes"), False),
        ("search", ("alice",), False),
        ("put", ("langgraph_mcpx",), False),
        ("search", ("langgraph",), True),  # a store matching prefixes as text reaches ours
        ("search", ("l",), True),
        ("get", ("langgraph",), False),
        ("list_namespaces", None, False),
    ],
)
async def test_the_store_rule_refuses_the_packages_records_only(
    action: str, namespace: tuple[str, ...] | None, refused: bool
) -> None:
    from langgraph_sdk import Auth
    from langgraph_sdk.auth.types import StudioUser

    ctx = Auth.types.AuthContext(user=StudioUser("bob"), permissions=[], resource="store", action=action)  # type: ignore[arg-type]
    value = {"namespace": namespace, "key": "k"}
    if refused:
        with pytest.raises(Auth.exceptions.HTTPException) as raised:
            await guard_store(ctx, value)
        assert raised.value.status_code == 403
    else:
        assert await guard_store(ctx, value) is None
        assert value == {"namespace": namespace, "key": "k"}


@pytest.mark.parametrize("action", ["get", "put", "delete", "search"])
async def test_a_rule_that_puts_the_users_identity_first_is_guarded_on_what_the_store_receives(
    action: str,
) -> None:
    """The documented order: the deployment's own rule rewrites the namespace, then the guard
    checks it. A user whose identity is the package's label gets nothing of anyone's records."""
    from langgraph_sdk import Auth
    from langgraph_sdk.auth.types import StudioUser

    async def store_rule(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
        value["namespace"] = (ctx.user.identity, *value["namespace"])
        await guard_store(ctx, value)

    for identity, refused in (("langgraph_mcp", True), ("alice", False)):
        ctx = Auth.types.AuthContext(
            user=StudioUser(identity), permissions=[], resource="store", action=action
        )  # type: ignore[arg-type]
        value: dict[str, Any] = {"namespace": ("oauth", "tokens"), "key": "k"}
        if refused:
            with pytest.raises(Auth.exceptions.HTTPException) as raised:
                await store_rule(ctx, value)
            assert raised.value.status_code == 403
        else:
            await store_rule(ctx, value)
            assert value["namespace"] == ("alice", "oauth", "tokens")
