"""MCP events that start runs on a real ``langgraph dev``: the deployment's event triggers
(``LANGGRAPH_MCP_TRIGGERS``, run in ``graphs/app.py``'s lifespan) subscribe to the events fixture
over HTTP, keep their position even before any event, start one run per event, resume after a
restart from the kept cursor (an event made while the deployment was down runs once when it is
back), and start nothing for an event given again; a forged webhook delivery starts nothing; of
two processes running one trigger, one reads it, and the other takes it over when it dies."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client

from langgraph_mcp import MCPPool
from langgraph_mcp._events.triggers import TriggerRunner
from langgraph_mcp.events import EventTrigger, EventTriggers, MCPEvent, load_triggers
from tests.conftest_servers import spawn_http_server
from tests.langgraph_server import REPO_ROOT, langgraph_dev
from tests.servers import events as fixture

pytestmark = pytest.mark.deploy

TICKET = "ticket.created"


async def runs_by_event(client: Any, trigger: str = "tickets") -> dict[str, list[dict[str, Any]]]:
    """The runs ``trigger`` started, by the event id in their metadata."""
    found: dict[str, list[dict[str, Any]]] = {}
    for thread in await client.threads.search(metadata={"mcp_trigger": trigger}, limit=100):
        for run in await client.runs.list(thread["thread_id"], limit=100):
            found.setdefault((run.get("metadata") or {}).get("mcp_event_id"), []).append(run)
    return found


async def until_runs(
    client: Any, *event_ids: str, trigger: str = "tickets", timeout: float = 60.0
) -> dict[str, list[dict[str, Any]]]:
    """Wait until each event has a run that finished; the runs by event."""
    deadline = time.monotonic() + timeout
    while True:
        found = await runs_by_event(client, trigger)
        if all(any(r["status"] == "success" for r in found.get(e, [])) for e in event_ids):
            return found
        assert time.monotonic() < deadline, f"no finished run for {event_ids}: {found}"
        await asyncio.sleep(0.2)


async def until_kept(client: Any, cursor: str, timeout: float = 30.0) -> None:
    """Wait until the trigger's kept cursor is ``cursor``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            item = await client.store.get_item(["langgraph_mcp", "event_cursors"], "tickets")
        except Exception:  # not kept yet (404)
            item = None
        if item is not None and item["value"].get("cursor") == cursor:
            return
        assert time.monotonic() < deadline, f"the cursor kept is not {cursor!r}: {item}"
        await asyncio.sleep(0.2)


async def until_marked(client: Any, key: str, timeout: float = 30.0) -> dict[str, Any]:
    """Wait until the event mark ``key`` is in the store; the item."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            item = await client.store.get_item(["langgraph_mcp", "event_runs"], key)
        except Exception:  # not there yet (404)
            item = None
        if item is not None:
            return dict(item)
        assert time.monotonic() < deadline, f"no mark {key}"
        await asyncio.sleep(0.2)


def subscriptions(root: Path, method: str = "events/stream", queue: str | None = None) -> int:
    """How many ``method`` requests (of the subscription on ``queue``, if given) the server got."""
    return sum(
        e["method"] == method and (queue is None or e["params"]["arguments"].get("queue") == queue)
        for e in fixture.log(root)
    )


async def until_subscribed(
    root: Path, count: int, *, method: str = "events/stream", queue: str | None = None, timeout: float = 60.0
) -> None:
    deadline = time.monotonic() + timeout
    while subscriptions(root, method, queue) < count:
        assert time.monotonic() < deadline, "the trigger never subscribed"
        await asyncio.sleep(0.1)


@pytest.mark.timeout(300)
async def test_events_start_one_run_each_across_a_restart_and_a_redelivery(tmp_path: Path) -> None:
    root = tmp_path / "events"
    root.mkdir()
    (root / ".heartbeat_ms").write_text("200")
    async with spawn_http_server("events", env={"EVENTS_DIR": str(root)}) as url:
        mcp = tmp_path / "mcp.json"
        mcp.write_text(json.dumps({"mcpServers": {"tickets": {"url": url}}}))
        triggers = tmp_path / "triggers.json"
        trigger = {
            "server": "tickets",
            "event": TICKET,
            "assistant": "agent",
            "thread": {"by": "data.ticket"},
        }
        triggers.write_text(json.dumps({"triggers": {"tickets": trigger}}))
        env = {
            "LANGGRAPH_MCP_CONFIG": str(mcp),
            "LANGGRAPH_MCP_TRIGGERS": str(triggers),
            "LANGGRAPH_MCP_MODEL": "scripted",
        }
        workdir = tmp_path / "server"
        with langgraph_dev(workdir, REPO_ROOT / "langgraph.json", env) as server:
            client = get_client(url=server.url)
            await until_subscribed(root, 1)
            # No event yet: the position the subscription started from is kept all the same, so
            # what happens while the deployment is down is not skipped.
            await until_kept(client, "c-0")
            fixture.append(root, TICKET, {"ticket": "T-1", "title": "Printer on fire"}, event_id="e1")
            found = await until_runs(client, "e1")
            [run] = found["e1"]
            state = await client.threads.get_state(run["thread_id"])
            said = state["values"]["messages"][0]["content"]
            assert (
                '"name": "ticket.created"' in said
                and "Printer on fire" in said
                and "not from a person" in said
            )
            assert run["metadata"]["mcp_trigger"] == "tickets"
            fixture.append(root, TICKET, {"ticket": "T-4"}, event_id="e4")
            [e4_run] = (await until_runs(client, "e4"))["e4"]
            await until_kept(client, "c-2")
            # Each event that started a run is marked with its run.
            marks = (await client.store.search_items(["langgraph_mcp", "event_runs"], limit=100))["items"]
            assert sorted((m["value"]["thread_id"], m["value"]["run_id"]) for m in marks) == sorted(
                (r["thread_id"], r["run_id"]) for r in (run, e4_run)
            )
            # Set the kept cursor back before the deployment stops: e1 and e4 are given again at
            # the start. e1's thread is deleted (pruned): only its mark stops a second run. e4's
            # mark is deleted (as when the run was made just before a failure): its thread's runs
            # show it, and it is marked again.
            await client.store.put_item(["langgraph_mcp", "event_cursors"], "tickets", {"cursor": "c-0"})
            await client.threads.delete(run["thread_id"])
            [e4_mark] = [m for m in marks if m["value"]["run_id"] == e4_run["run_id"]]
            await client.store.delete_item(["langgraph_mcp", "event_runs"], e4_mark["key"])

        fixture.append(root, TICKET, {"ticket": "T-2"}, event_id="e2")  # while it is down
        with langgraph_dev(workdir, REPO_ROOT / "langgraph.json", env) as server:
            client = get_client(url=server.url)
            found = await until_runs(client, "e2")
            await until_subscribed(root, 2)
            fixture.append(root, TICKET, {"ticket": "T-1"}, event_id="e3")  # the first ticket's thread
            found = await until_runs(client, "e3")
            again = await until_marked(client, e4_mark["key"])
            assert again["value"]["run_id"] == e4_run["run_id"]
            # Three starts of one event at once (as when a subscription made again gives an event
            # whose earlier start still runs): one run. (Its subscription is never made.)
            runner = TriggerRunner("at-once", EventTrigger(**trigger), lambda *_: None, client)
            await runner.lease.acquire()
            same = MCPEvent("tickets", TICKET, "e-same", "2026-12-06T00:00:00Z", {"ticket": "T-9"})
            started = await asyncio.gather(*(runner.start(same) for _ in range(3)))
            assert sorted(started) == [False, False, True]
            assert (runner.started, runner.skipped) == (1, 2)
            await runner.aclose()
            assert len((await runs_by_event(client, "at-once"))["e-same"]) == 1
    # e1's thread was deleted: no run of it is left, and none was made again.
    assert {e: len(runs) for e, runs in found.items()} == {"e2": 1, "e3": 1, "e4": 1}
    e1_thread = run["thread_id"]
    assert found["e3"][0]["thread_id"] == e1_thread  # one thread per ticket
    assert found["e2"][0]["thread_id"] != e1_thread
    streams = [e["params"] for e in fixture.log(root) if e["method"] == "events/stream"]
    assert streams[0].get("cursor") is None  # the first start: from now
    assert streams[1].get("cursor") == "c-0"  # then from the kept cursor: e1 given again, no run


@pytest.mark.timeout(300)
async def test_webhooks_reach_the_deployment_and_one_process_at_a_time_reads_a_trigger(
    tmp_path: Path,
) -> None:
    """One deployment, two things on it (one ``langgraph dev`` start for both):

    - a webhook trigger of the deployment: the server POSTs to its ``/mcp-events`` route, which
      answers the challenge and checks each delivery; a delivery signed with another key is
      refused (401) and starts no run;
    - two processes' worth of the same trigger (two ``EventTriggers`` with pools of their own,
      talking to the deployment over HTTP): one holds the trigger's lease and subscribes, the
      other waits; when the holder dies (its tasks cancelled, no clean stop) the other takes the
      trigger over within a lease window, from the kept cursor. Every event runs once."""
    root = tmp_path / "events"
    root.mkdir()
    (root / ".ttl_ms").write_text("60000")
    (root / ".heartbeat_ms").write_text("200")
    async with spawn_http_server("events", env={"EVENTS_DIR": str(root)}) as url:
        mcp = tmp_path / "mcp.json"
        mcp.write_text(json.dumps({"mcpServers": {"tickets": {"url": url}}}))
        triggers = tmp_path / "triggers.json"
        hooks = {
            "server": "tickets",
            "event": TICKET,
            "arguments": {"queue": "w"},
            "assistant": "agent",
            "mode": "webhook",
        }
        triggers.write_text(json.dumps({"triggers": {"hooks": hooks}}))
        env = {
            "LANGGRAPH_MCP_CONFIG": str(mcp),
            "LANGGRAPH_MCP_TRIGGERS": str(triggers),
            "LANGGRAPH_MCP_EVENTS_URL": "http://127.0.0.1:{port}/mcp-events",
            "LANGGRAPH_MCP_MODEL": "scripted",
        }
        with langgraph_dev(tmp_path / "server", REPO_ROOT / "langgraph.json", env) as server:
            client = get_client(url=server.url)
            await until_subscribed(root, 1, method="events/subscribe")
            fixture.append(root, TICKET, {"ticket": "T-7", "queue": "w"}, event_id="w1")
            hooked = await until_runs(client, "w1", trigger="hooks")

            # Two processes' worth of one push trigger (on queue "t").
            takeover = {
                "server": "tickets",
                "event": TICKET,
                "arguments": {"queue": "t"},
                "assistant": "agent",
            }
            pools = [MCPPool({"tickets": {"url": url}}) for _ in range(2)]
            config = load_triggers({"triggers": {"takeover": takeover}})
            sides = [EventTriggers(pool, config, client=client, lease_window=1.0) for pool in pools]
            for side in sides:
                await side.start()
            try:
                await until_subscribed(root, 1, queue="t")
                await asyncio.sleep(2.5)  # two more lease windows: still one subscriber
                assert subscriptions(root, queue="t") == 1
                for n in range(5):
                    fixture.append(root, TICKET, {"n": n, "queue": "t"}, event_id=f"a{n}")
                await until_runs(client, *(f"a{n}" for n in range(5)), trigger="takeover")
                holder = next(s for s in sides if s.runners["takeover"].lease.valid())
                other = next(s for s in sides if s is not holder)
                # The holder dies: its tasks end, its lease is not given back, its pool goes.
                for task in holder._tasks:
                    task.cancel()
                await asyncio.gather(*holder._tasks, return_exceptions=True)
                await pools[sides.index(holder)].aclose()
                for n in range(3):
                    fixture.append(root, TICKET, {"n": n, "queue": "t"}, event_id=f"b{n}")  # nobody reads
                await until_subscribed(root, 2, queue="t")
                fixture.append(root, TICKET, {"n": 9, "queue": "t"}, event_id="b9")
                taken = await until_runs(client, "b0", "b1", "b2", "b9", trigger="takeover")
                assert other.runners["takeover"].lease.valid()
            finally:
                for side in sides:
                    await side.aclose()
                for pool in pools:
                    await pool.aclose()

            # A forged delivery of the webhook trigger starts nothing.
            (root / ".bad_signature").write_text("")
            fixture.append(root, TICKET, {"ticket": "T-8", "queue": "w"}, event_id="w2")
            deadline = time.monotonic() + 60
            while not any(d["webhook-id"] == "w2" for d in fixture.deliveries(root)):
                assert time.monotonic() < deadline, "w2 was never delivered"
                await asyncio.sleep(0.1)
            await asyncio.sleep(1.0)  # time for a run to appear, were one started
            hooked = await runs_by_event(client, "hooks")
    [delivered] = [d for d in fixture.deliveries(root) if d["webhook-id"] == "w2"]
    assert delivered["status"] == 401
    assert set(hooked) == {"w1"} and len(hooked["w1"]) == 1
    challenges = [d for d in fixture.deliveries(root) if d["webhook-id"].startswith("msg_verification")]
    assert challenges and challenges[0]["status"] == 200
    assert all("/mcp-events/" in d["url"] for d in fixture.deliveries(root))
    assert {e: len(runs) for e, runs in taken.items()} == {
        **{f"a{n}": 1 for n in range(5)},
        **{f"b{n}": 1 for n in (0, 1, 2, 9)},
    }
