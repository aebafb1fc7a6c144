"""The ``events`` demo server through ``MCPPool``: its event types, notes added with its tool
arriving by push and by poll (over stdio and in-process), the clock's ticks, and its poll
answers (paging, tag filter, a cursor older than the history, an unknown type)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from langgraph_mcp import MCPPool, MCPServerError
from langgraph_mcp._session.events import poll_events
from langgraph_mcp.demo import SERVER_NAMES, demo_server
from langgraph_mcp.demo import _events as events_demo
from langgraph_mcp.events import EventSubscription, MCPEvent

STDIO = {"command": sys.executable, "args": ["-m", "langgraph_mcp.demo", "events"]}


async def add_note(pool: MCPPool, text: str, tag: str) -> str:
    result = await pool.connection("ev").call_tool("add_note", {"text": text, "tag": tag})
    assert not result.is_error, result
    assert result.structured_content is not None, result
    return str(result.structured_content["result"])


async def first_note(pool: MCPPool, sub: EventSubscription, tag: str) -> tuple[MCPEvent, list[str]]:
    """The subscription's first event, adding notes (one of another tag before each of ``tag``)
    until it is established and one arrives; and the ids of the notes of ``tag`` added."""
    first = asyncio.ensure_future(anext(sub))  # a subscription reads only while awaited
    added = []
    async with asyncio.timeout(8):
        while not first.done():
            await add_note(pool, "not for this tag", "other")
            added.append(await add_note(pool, f"note {len(added) + 1}", tag))
            await asyncio.wait([first], timeout=0.1)
    return first.result(), added


@pytest.mark.parametrize("where", [pytest.param("stdio", marks=pytest.mark.slow), "in-process"])
async def test_notes_added_with_the_tool_arrive_by_push_and_by_poll(where: str) -> None:
    assert "events" in SERVER_NAMES
    connection: Any = STDIO if where == "stdio" else demo_server("events")
    async with MCPPool({"ev": connection}) as pool:
        kinds = {k.name: k for k in await pool.event_types("ev")}
        assert set(kinds) == {"note.added", "clock.tick"}
        assert kinds["note.added"].delivery == ("push", "poll")
        assert kinds["clock.tick"].delivery == ("poll", "push")
        assert kinds["note.added"].input_schema == {
            "type": "object",
            "properties": {"tag": {"type": "string"}},
        }
        for mode in ("push", "poll"):
            async with pool.events(
                "ev", "note.added", arguments={"tag": mode}, mode=mode, poll_floor=0.05
            ) as sub:
                event, added = await first_note(pool, sub, mode)
                assert event.server == "ev" and event.name == "note.added"
                assert event.event_id in added and event.data == {
                    "text": f"note {added.index(event.event_id) + 1}",
                    "tag": mode,
                }
                assert sub.cursor is not None


async def test_the_clock_ticks_by_push_with_increasing_counts() -> None:
    async with (
        MCPPool({"ev": events_demo.build_server(tick_seconds=0.05)}) as pool,
        pool.events("ev", "clock.tick", mode="push") as sub,
    ):
        async with asyncio.timeout(5):
            ticks = [await anext(sub) for _ in range(3)]
    counts = [t.data["n"] for t in ticks]
    assert counts == sorted(counts) and len(set(counts)) == 3
    assert all(t.event_id == f"tick-{t.data['n']}" for t in ticks)


async def test_polls_page_filter_report_a_lost_history_and_refuse_an_unknown_type() -> None:
    async with MCPPool({"ev": events_demo.build_server(history=4)}) as pool:
        connection = pool.connection("ev")
        now = await poll_events(connection, "note.added", {}, None)
        assert now.events == [] and now.cursor == "0" and not now.has_more and not now.truncated
        for n in range(4):
            await add_note(pool, f"n{n}", "a" if n % 2 else "b")

        page = await poll_events(connection, "note.added", {}, "0", max_events=2)
        assert [e["data"]["text"] for e in page.events] == ["n0", "n1"]
        assert page.has_more and page.cursor == "2" and page.next_poll_ms == 1000
        rest = await poll_events(connection, "note.added", {}, page.cursor)
        assert [e["eventId"] for e in rest.events] == ["note-3", "note-4"]
        assert not rest.has_more and rest.cursor == "4"
        assert rest.events[0]["data"] == {"text": "n2", "tag": "b"} and rest.events[0]["timestamp"]

        tagged = await poll_events(connection, "note.added", {"tag": "a"}, "0")
        assert [e["data"]["text"] for e in tagged.events] == ["n1", "n3"] and tagged.cursor == "4"

        await add_note(pool, "n4", "a")  # the oldest note (n0) is no longer kept
        lost = await poll_events(connection, "note.added", {}, "0")
        assert lost.truncated and lost.events == [] and lost.cursor == "1"
        kept = await poll_events(connection, "note.added", {}, lost.cursor)
        assert [e["data"]["text"] for e in kept.events] == ["n1", "n2", "n3", "n4"]

        with pytest.raises(MCPServerError) as caught:
            await poll_events(connection, "no.such.type", {}, None)
        assert caught.value.code == -32023 and caught.value.data == {"kind": "event"}
