"""Freshness hints (2026-07-28 ``ttlMs`` / ``cacheScope``) and the ``listing_ttl`` option.

A listing (or a resource read) is reused while its lifetime lasts and asked for again on the
first use after it; a change notice ends it at once; ``cacheScope: public`` ones are shared
between the sessions of one server in one pool, ``private`` ones never. The fixture server
records every request it answers (``tests/servers/hinted.py``); the pool's clock is a manual one.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp_types import TextResourceContents

from langgraph_mcp import MCPPool, load_mcp_tools
from langgraph_mcp._session.freshness import Hints, ListingShare
from tests.clock import ManualClock
from tests.conftest_servers import serve_in_loop, stdio_params
from tests.helpers import call, until
from tests.servers import hinted
from tests.servers.hinted import listed

MINUTE_MS = 60_000


@asynccontextmanager
async def served(
    transport: str, log: Path, *, ttl_ms: int | None = None, scope: str | None = None, **options: Any
) -> AsyncIterator[dict[str, Any]]:
    """A ``hinted`` server entry over ``transport``, its listing requests recorded in ``log``."""
    if transport == "stdio":
        env = {"HINTED_LOG": str(log)}
        if ttl_ms is not None:
            env["HINTED_TTL_MS"] = str(ttl_ms)
        if scope is not None:
            env["HINTED_SCOPE"] = scope
        yield {**stdio_params("hinted", env=env), **options}
    else:
        server = hinted.build_server(log=str(log), ttl_ms=ttl_ms, scope=scope)
        async with serve_in_loop(server) as url:
            yield {"url": url, **options}


def clocked(pool: MCPPool, server: str = "h") -> ManualClock:
    clock = ManualClock()
    pool.connection(server).listing_share.clock = clock
    return clock


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_listing_is_reused_within_its_ttl_and_listed_again_after(
    transport: str, tmp_path: Path
) -> None:
    log = tmp_path / "lists.log"
    async with (
        served(transport, log, ttl_ms=MINUTE_MS, scope="private") as config,
        MCPPool({"h": config}) as pool,
    ):
        clock = clocked(pool)
        first = {t.mcp_name: t for t in await load_mcp_tools(pool)}
        assert pool.connection("h").era == "2026-07-28"
        for _ in range(2):
            await pool.list_prompts("h")
            await pool.list_resources("h")
            await pool.list_resource_templates("h")
        clock.advance(59.9)
        again = {t.mcp_name: t for t in await load_mcp_tools(pool)}
        assert again == first
        await pool.list_prompts("h")
        for method in hinted.LISTS:
            assert len(listed(log, method)) == 1, method
        clock.advance(0.1)  # a minute after the answers came: stale
        after = {t.mcp_name: t for t in await load_mcp_tools(pool)}
        assert len(listed(log)) == 2
        assert after["echo"] is first["echo"]  # an unchanged tool keeps its object
        assert (await call(after["echo"], {"text": "hi"})).content == "hi"
        assert [p.name for p in await pool.list_prompts("h")] == ["greet"]
        assert [r.uri for r in await pool.list_resources("h")] == ["hinted://about"]
        assert len(listed(log, "prompts/list")) == 2
        assert len(listed(log, "resources/list")) == 2
        assert len(listed(log, "resources/templates/list")) == 1  # not used since: not listed


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_read_is_reused_within_its_ttl_until_the_resource_changes(
    transport: str, tmp_path: Path
) -> None:
    log = tmp_path / "lists.log"
    async with (
        served(transport, log, ttl_ms=MINUTE_MS, scope="private") as config,
        MCPPool({"h": config}) as pool,
    ):
        clock = clocked(pool)
        [first] = await pool.read_resource("h", "hinted://about")
        clock.advance(59.9)
        [again] = await pool.read_resource("h", "hinted://about")
        assert again.as_string() == first.as_string()
        assert len(listed(log, "resources/read")) == 1
        clock.advance(0.1)
        await pool.read_resource("h", "hinted://about")
        assert len(listed(log, "resources/read")) == 2
        async with pool.subscribe("h", "hinted://about") as updates:
            await pool.read_resource("h", "hinted://about")  # still fresh
            tools = {t.mcp_name: t for t in await load_mcp_tools(pool)}
            assert (await call(tools["touch"], {"uri": "hinted://about"})).content == "touched"
            assert (await updates.__anext__())["uri"] == "hinted://about"
            # The update is heard before the subscriber hears of it: this read is a new one.
            await pool.read_resource("h", "hinted://about")
        assert len(listed(log, "resources/read")) == 3


async def test_a_read_that_took_input_rounds_is_never_reused(tmp_path: Path) -> None:
    log = tmp_path / "lists.log"
    async with (
        served("stdio", log, ttl_ms=MINUTE_MS, scope="public") as config,
        MCPPool({"h": config}) as pool,
    ):
        clocked(pool)
        for _ in range(2):
            [blob] = await pool.read_resource("h", "hinted://gated")
            assert blob.as_string() == "gated again"
        assert len(listed(log, "resources/read")) == 4  # two rounds, twice


async def test_an_expired_listing_is_offered_while_listing_again_fails(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = tmp_path / "lists.log"
    async with (
        served("stdio", log, ttl_ms=MINUTE_MS, scope="public") as config,
        MCPPool({"h": config}, on_connection_error="warn") as pool,
    ):
        clock = clocked(pool)
        tools = {t.mcp_name: t for t in await load_mcp_tools(pool)}
        assert (await call(tools["break_lists"], {})).content == "broken"
        clock.advance(60.0)
        with caplog.at_level(logging.WARNING, logger="langgraph_mcp"):
            again = {t.mcp_name: t for t in await load_mcp_tools(pool)}
            assert again == tools  # the same tools, while the server cannot list
            await load_mcp_tools(pool)  # tried again at the next use
        assert len(listed(log)) == 3
        told = [r for r in caplog.records if "the last listing is offered" in r.getMessage()]
        assert len(told) == 1
        assert (await call(again["mend_lists"], {})).content == "mended"
        assert [t.mcp_name for t in await load_mcp_tools(pool)] == list(tools)
        await load_mcp_tools(pool)  # listed, and fresh again
        assert len(listed(log)) == 4
        # Never once the server said the list changed.
        assert (await call(again["break_lists"], {})).content == "broken"
        connection = pool.connection("h")
        version = connection.tools_version
        assert (await call(again["add_tool"], {"name": "fresh"})).content == "added"
        await until(lambda: connection.tools_version != version)
        assert await load_mcp_tools(pool) == []


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_change_notice_ends_a_listing_within_its_ttl(transport: str, tmp_path: Path) -> None:
    log = tmp_path / "lists.log"
    async with (
        served(transport, log, ttl_ms=10 * MINUTE_MS, scope="public") as config,
        MCPPool({"h": config}) as pool,
    ):
        clocked(pool)
        tools = {t.mcp_name: t for t in await load_mcp_tools(pool)}
        connection = pool.connection("h")
        version = connection.tools_version
        assert (await call(tools["add_tool"], {"name": "fresh"})).content == "added"
        await until(lambda: connection.tools_version != version)
        tools = {t.mcp_name: t for t in await load_mcp_tools(pool)}
        assert (await call(tools["fresh"], {"text": "x"})).content == "fresh:x"
        assert len(listed(log)) == 2


@pytest.mark.parametrize(
    ("transport", "protocol", "ttl_ms"),
    [
        ("stdio", "legacy", MINUTE_MS),
        ("http", "legacy", MINUTE_MS),
        ("stdio", "auto", None),
        ("stdio", "auto", 0),
    ],
)
async def test_without_a_usable_hint_a_listing_lasts_until_it_changes(
    transport: str, protocol: str, ttl_ms: int | None, tmp_path: Path
) -> None:
    """Handshake-era answers' hints are not taken (only 2026-07-28 defines them); no hint or
    ``ttlMs: 0`` leaves the listing cached until a change notice or a new session, as before."""
    log = tmp_path / "lists.log"
    async with (
        served(transport, log, ttl_ms=ttl_ms, scope="public", protocol=protocol) as config,
        MCPPool({"h": config}) as pool,
    ):
        clock = clocked(pool)
        first = await load_mcp_tools(pool)
        await pool.list_prompts("h")
        await pool.read_resource("h", "hinted://about")
        clock.advance(7 * 24 * 3600.0)
        assert await load_mcp_tools(pool) == first
        await pool.list_prompts("h")
        await pool.read_resource("h", "hinted://about")
        assert len(listed(log)) == 1
        assert len(listed(log, "prompts/list")) == 1
        assert len(listed(log, "resources/read")) == 2  # reads are reused only as hints say


@pytest.mark.parametrize("scope", ["public", "private"])
async def test_only_a_public_listing_is_shared_between_thread_sessions(scope: str, tmp_path: Path) -> None:
    log = tmp_path / "lists.log"
    async with (
        served("stdio", log, ttl_ms=MINUTE_MS, scope=scope, session_scope="thread") as config,
        MCPPool({"h": config}) as pool,
    ):
        clocked(pool)
        async with pool.using("h", "alice") as alice:
            alices = {t.name for t in await alice.list_tools()}
            await alice.listing("prompts")
            alices_read = (await alice.read("hinted://about")).contents[0]
        async with pool.using("h", "bob") as bob:
            bobs = {t.name for t in await bob.list_tools()}
            await bob.listing("prompts")
            bobs_read = (await bob.read("hinted://about")).contents[0]
        assert isinstance(alices_read, TextResourceContents) and isinstance(bobs_read, TextResourceContents)
        shared = {t.name for t in await pool.connection("h").list_tools()}  # calls without a thread
        (alice_own,) = (name for name in alices if name.startswith("own_"))
        if scope == "public":
            # The other sessions reuse the listing Alice's session got: one request in all.
            assert listed(log) == [alice_own.removeprefix("own_")]
            assert bobs == shared == alices
            assert len(listed(log, "prompts/list")) == 1
            assert listed(log, "resources/read") == [alice_own.removeprefix("own_")]
            assert bobs_read.text == alices_read.text
        else:
            # Each session lists for itself, and sees only what its own server process said.
            pids = listed(log)
            assert len(pids) == 3 and pids[0] == alice_own.removeprefix("own_")
            assert bobs == (alices - {alice_own}) | {f"own_{pids[1]}"}
            assert shared == (alices - {alice_own}) | {f"own_{pids[2]}"}
            assert alice.listed(f"own_{pids[1]}") is None and bob.listed(alice_own) is None
            assert len(listed(log, "prompts/list")) == 2
            assert listed(log, "resources/read") == pids[:2]
            assert bobs_read.text == f"about {pids[1]}"


async def test_a_change_heard_by_one_session_ends_the_shared_listing_for_all(tmp_path: Path) -> None:
    log = tmp_path / "lists.log"
    async with (
        served("stdio", log, ttl_ms=MINUTE_MS, scope="public", session_scope="thread") as config,
        MCPPool({"h": config}) as pool,
    ):
        clocked(pool)
        async with pool.using("h", "alice") as alice, pool.using("h", "bob") as bob:
            await alice.list_tools()
            await bob.list_tools()  # Alice's listing, shared
            assert len(listed(log)) == 1
            version = alice.tools_version
            await (await alice.client()).call_tool("add_tool", {"name": "fresh"})
            await until(lambda: alice.tools_version != version)  # Alice's session heard it
            # Bob's session heard nothing (its own server process did not change), but the
            # listing it reused is Alice's: it is not served again, and Bob's session lists.
            bobs = {t.name for t in await bob.list_tools()}
            assert "fresh" not in bobs
            pids = listed(log)
            assert len(pids) == 2 and pids[1] != pids[0] and f"own_{pids[1]}" in bobs


@pytest.mark.parametrize(
    ("pages", "ttl_ms", "public"),
    [
        ([{"ttlMs": 5000, "cacheScope": "public"}], 5000, True),
        ([{"ttlMs": 5000, "cacheScope": "public"}, {"ttlMs": 2000, "cacheScope": "public"}], 2000, True),
        ([{"ttlMs": 5000, "cacheScope": "public"}, {"ttlMs": 9000, "cacheScope": "private"}], 5000, False),
        ([{"ttlMs": 5000}], 5000, False),  # no scope: never shared
        ([{"cacheScope": "public"}], 0, True),  # no lifetime: (cached until changed, never shared)
        ([{"ttlMs": -5, "cacheScope": "public"}], 0, True),
        ([{"ttlMs": True, "cacheScope": "PUBLIC"}], 0, False),
        ([{"ttlMs": 2.5}], 0, False),
        ([{"ttlMs": "600000"}], 0, False),
        ([{"ttlMs": 10**30}], 24 * 3600 * 1000, False),  # capped at a day
        (["not an object"], 0, False),
    ],
)
def test_hints_are_read_conservatively(pages: list[Any], ttl_ms: int, public: bool) -> None:
    hints = Hints()
    for page in pages:
        hints.add(page)
    assert (hints.ttl_ms, hints.public) == (ttl_ms, public)
    share = ListingShare()
    share.clock = ManualClock()
    stamp = share.stamp("tools", hints, modern=True, generation=share.generation("tools"))
    assert (stamp.expires is None) == (ttl_ms == 0)
    assert (stamp.generation is not None) == (ttl_ms > 0 and public)
    assert share.stamp("tools", hints, modern=False, generation=0).expires is None  # handshake era


@pytest.mark.parametrize(
    ("setting", "protocol", "ttl_ms", "advance", "listings"),
    [
        ("ignore", "auto", MINUTE_MS, 3600.0, 1),  # hints ignored: cached until a change notice
        (5, "auto", MINUTE_MS, 5.0, 2),  # a fixed lifetime, shorter than the hint
        (5, "auto", MINUTE_MS, 4.9, 1),
        (120, "auto", 1000, 60.0, 1),  # ... or longer
        (5, "legacy", None, 5.0, 2),  # a fixed lifetime applies in the handshake era too
        (0, "auto", MINUTE_MS, 0.0, 2),  # listed again at every use
    ],
)
async def test_listing_ttl_overrides_the_hints(
    setting: Any, protocol: str, ttl_ms: int | None, advance: float, listings: int, tmp_path: Path
) -> None:
    log = tmp_path / "lists.log"
    async with (
        served("stdio", log, ttl_ms=ttl_ms, scope="public", protocol=protocol, listing_ttl=setting) as config,
        MCPPool({"h": config}) as pool,
    ):
        clock = clocked(pool)
        await load_mcp_tools(pool)
        await pool.list_prompts("h")
        await pool.read_resource("h", "hinted://about")
        clock.advance(advance)
        await load_mcp_tools(pool)
        await pool.list_prompts("h")
        await pool.read_resource("h", "hinted://about")
        assert len(listed(log)) == listings
        assert len(listed(log, "prompts/list")) == listings
        assert len(listed(log, "resources/read")) == 2  # a read is reused only as the server says
