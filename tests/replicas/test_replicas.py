"""The graphs on two replicas of the stock LangGraph API server sharing PostgreSQL and Redis.

The runtime is ``langgraph-runtime-pg`` (see ``tests/replicas/cluster.py``): a run is queued in
PostgreSQL and executed by whichever replica claims it first, its stream reaches the client
through Redis from any replica, and a run whose replica stopped heart-beating is queued again.
Clients talk to one replica or the other with ``langgraph-sdk``, as a load balancer would send
them. The MCP servers are real stdio children of the replicas, and the sign-in fixture server
(per-user OAuth, over HTTP) that all replicas share.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import signal
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import NotFoundError

from langgraph_mcp.elicitation import accept, resume_elicitations
from tests.deploy.signin import ERAS, authorize, callback_of, calls, come_back, tampered
from tests.helpers import check, pid_alive, until
from tests.langgraph_server import cmdline
from tests.replicas.cluster import Cluster, Replica, versions

pytestmark = [pytest.mark.slow, pytest.mark.deploy, pytest.mark.timeout(300)]
"""Several processes each (the first test also builds ``tests/replicas/.venv`` if needed)."""

PREFIX = {"auto": "", "legacy": "legacy_"}
"""The tools of the servers pinned to 2025-11-25 carry this prefix (``cluster.mcp_config``)."""


def client(replica: Replica, user: str | None = None) -> LangGraphClient:
    """A client of ``replica``, signed in as ``user`` (``anonymous`` without one)."""
    headers = {"Authorization": f"Bearer {user}"} if user is not None else None
    return get_client(url=replica.url, timeout=120, headers=headers)


async def stream(
    on: Replica, thread_id: str, user: str | None = None, **kwargs: Any
) -> list[tuple[str, Any]]:
    return [
        (part.event, part.data)
        async for part in client(on, user).runs.stream(
            thread_id, "tools", stream_mode=["updates", "custom"], **kwargs
        )
    ]


def interrupts_of(events: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    return [i for e, d in events if e == "updates" and "__interrupt__" in d for i in d["__interrupt__"]]


def answer_yes(question: dict[str, Any], reason: str) -> dict[str, Any]:
    command = resume_elicitations(
        [question],
        lambda payload: {r["key"]: accept({"ok": True, "reason": reason}) for r in payload["requests"]},
    )
    return {"resume": command.resume}


def tool_results(state: Any) -> dict[str, str]:
    return {m["name"]: m["content"] for m in state["values"]["messages"] if m["type"] == "tool"}


def ran_on(cluster: Cluster, tag: str) -> Replica:
    """The replica whose demo server ran the ``gauge`` call tagged ``tag``."""
    runners = [r for r in (cluster["A"], cluster["B"]) if r.gauge_events(tag)]
    assert len(runners) == 1, {r.name: r.gauge_events(tag) for r in (cluster["A"], cluster["B"])}
    return runners[0]


def other(cluster: Cluster, replica: Replica) -> Replica:
    return cluster["B"] if replica is cluster["A"] else cluster["A"]


async def settled(on: Replica, thread_id: str, run_id: str, timeout: float = 90) -> dict[str, Any]:
    """The run, once it succeeded or failed (asked of ``on``)."""
    deadline = time.monotonic() + timeout
    while True:
        run = await client(on).runs.get(thread_id, run_id)
        if run["status"] in ("success", "error", "interrupted", "timeout"):
            return dict(run)
        assert time.monotonic() < deadline, f"run still {run['status']} after {timeout} s"
        await asyncio.sleep(0.1)


async def pending_calls(
    on: Replica, thread_id: str, timeout: float = 30, user: str | None = None
) -> list[str]:
    """The tool calls whose questions ``on`` shows pending in the thread's state, once it shows
    any (or none at the deadline): the stream ends with the run's last event, and the state
    other replicas read is written just after, by whichever replica ran it."""
    deadline = time.monotonic() + timeout
    while True:
        state = await client(on, user).threads.get_state(thread_id)
        pending = [
            i["value"]["tool_call_id"]
            for task in state.get("tasks", [])
            for i in task.get("interrupts", [])
            if isinstance(i.get("value"), dict) and "tool_call_id" in i["value"]
        ]
        if pending or time.monotonic() >= deadline:
            return pending
        await asyncio.sleep(0.1)


async def test_the_replicas_run_the_pinned_runtime_with_the_projects_libraries(cluster: Cluster) -> None:
    """What the docs say was tested: langgraph-runtime-pg 0.11.1.post1 on langgraph-api 0.11.1,
    with the same langgraph, langchain-core and MCP SDK as the rest of the suite."""
    shared = ("langgraph", "langchain-core", "mcp")
    assert versions(cluster.python, "langgraph-runtime-pg", "langgraph-api", *shared) == {
        "langgraph-runtime-pg": "0.11.1.post1",
        "langgraph-api": "0.11.1",
        **{name: importlib.metadata.version(name) for name in shared},
    }
    for replica in (cluster["A"], cluster["B"]):
        info = await client(replica).http.get("/info")
        assert info["version"] == "0.11.1", info


@pytest.mark.parametrize("era", ["auto", "legacy"])
async def test_a_question_asked_through_one_replica_is_answered_through_the_other(
    cluster: Cluster, era: str
) -> None:
    """Progress streams through replica A, the question too; the answer goes to replica B."""
    a, b = cluster["A"], cluster["B"]
    p = PREFIX[era]
    order, item = {"auto": ("A-1001", "2 x espresso beans"), "legacy": ("A-1002", "1 x grinder")}[era]
    tag = f"{era}-{uuid.uuid4().hex[:8]}"
    thread = (await client(a).threads.create())["thread_id"]
    calls = [
        {"name": f"{p}gauge", "args": {"tag": tag, "seconds": 0}, "id": "mark"},
        {"name": f"{p}sleep", "args": {"seconds": 0.5}, "id": "nap"},
        {"name": f"{p}cancel_order", "args": {"order_id": order}, "id": "cancel"},
    ]
    events = await stream(a, thread, input={"tool_calls": calls})
    progress = [d for e, d in events if e == "custom" and d.get("type") == "mcp_progress"]
    assert progress and {e["tool_call_id"] for e in progress} == {"nap"}, events
    assert [e["progress"] for e in progress] == sorted(e["progress"] for e in progress)
    assert progress[-1]["progress"] == progress[-1]["total"] == 10
    for event in progress:
        check("progress-event", event)
    [question] = interrupts_of(events)
    assert question["value"]["tool_call_id"] == "cancel"
    assert question["value"]["requests"][0]["message"] == f"Cancel order {order} ({item})?"
    assert await pending_calls(b, thread) == ["cancel"]  # replica B sees the question
    asked_on = ran_on(cluster, tag).name

    events = await stream(b, thread, command=answer_yes(question, "replicas"))
    assert not interrupts_of(events), events
    state = await client(b).threads.get_state(thread)
    assert tool_results(state) == {
        f"{p}gauge": tag,
        f"{p}sleep": "slept 0.5",
        f"{p}cancel_order": f"order {order} cancelled (replicas)",
    }
    assert state["next"] == []
    assert await pending_calls(a, thread, timeout=0) == []
    print(f"\n[{era}] streamed from A, answered through B; the first run executed on replica {asked_on}")


async def test_a_run_whose_replica_is_killed_mid_call_finishes_on_the_other(cluster: Cluster) -> None:
    """SIGKILL of the replica running a call: the other replica sweeps the run back into the
    queue once its heartbeat expired, runs it again, and it succeeds (at least once)."""
    tag = f"kill-{uuid.uuid4().hex[:8]}"
    thread = (await client(cluster["A"]).threads.create())["thread_id"]
    call = {"name": "gauge", "args": {"tag": tag, "seconds": 4}, "id": "work"}
    run = await client(cluster["A"]).runs.create(thread, "tools", input={"tool_calls": [call]})
    await until(lambda: any(r.gauge_events(tag) for r in (cluster["A"], cluster["B"])), timeout=60)
    runner = ran_on(cluster, tag)
    survivor = other(cluster, runner)
    children = runner.mcp_children()
    assert children and runner.pid_files() <= children
    assert runner.gauge_events(tag) == ["start"]  # mid-call
    runner.kill()
    killed = time.monotonic()

    done = await settled(survivor, thread, run["run_id"])
    taken_over = time.monotonic() - killed
    assert done["status"] == "success", done
    assert done["run_id"] == run["run_id"]
    state = await client(survivor).threads.get_state(thread)
    assert tool_results(state) == {"gauge": tag}
    assert survivor.gauge_events(tag)[-1] == "done"
    runs = runner.gauge_events(tag).count("start") + survivor.gauge_events(tag).count("start")
    assert runs >= 2  # the killed replica started it, the survivor ran it again
    # The killed replica's MCP servers see their stdin close and exit.
    await until(lambda: not any(pid_alive(pid) for pid in children), timeout=30)
    print(
        f"\nkilled replica {runner.name} mid-call; replica {survivor.name} finished the run "
        f"{taken_over:.1f} s later; the tool started {runs} times"
    )


async def test_sigterm_of_a_replica_leaves_no_mcp_server_and_its_question_is_answered_elsewhere(
    cluster: Cluster,
) -> None:
    """The replica that ran a call and holds a 2025-11-25 call open for its question is stopped
    with SIGTERM: it exits, no MCP server it started outlives it, and the question is answered
    through the other replica (which sends the call again and replays the answer)."""
    tag = f"term-{uuid.uuid4().hex[:8]}"
    thread = (await client(cluster["A"]).threads.create())["thread_id"]
    calls = [
        {"name": "gauge", "args": {"tag": tag, "seconds": 0}, "id": "mark"},
        {"name": "legacy_cancel_order", "args": {"order_id": "A-1003"}, "id": "cancel"},
    ]
    [question] = interrupts_of(await stream(cluster["A"], thread, input={"tool_calls": calls}))
    runner = ran_on(cluster, tag)
    survivor = other(cluster, runner)
    children = runner.mcp_children()
    demos = runner.pid_files()
    assert demos and demos <= children
    kinds = sorted(Path(cmdline(pid).split()[-1]).stem for pid in children - demos)
    assert kinds == ["shop_server", "shop_server"], kinds  # one per era; the 2025-11-25 one holds a call

    code = await asyncio.to_thread(runner.stop)
    assert code in (0, -signal.SIGTERM), runner.log_text()[-3000:]
    left = {pid: cmdline(pid) for pid in children if pid_alive(pid)}
    assert not left, f"MCP servers outlived replica {runner.name}: {left}"

    events = await stream(survivor, thread, command=answer_yes(question, "after stop"))
    assert not interrupts_of(events), events
    assert tool_results(await client(survivor).threads.get_state(thread)) == {
        "gauge": tag,
        "legacy_cancel_order": "order A-1003 cancelled (after stop)",
    }
    print(
        f"\nSIGTERM of replica {runner.name} (exit {code}): {len(children)} MCP servers, none left; "
        f"the question answered through replica {survivor.name}"
    )


def run_of(events: list[tuple[str, Any]]) -> str:
    [run_id] = [d["run_id"] for e, d in events if e == "metadata"]
    return str(run_id)


def runner_of(cluster: Cluster, run_id: str) -> Replica:
    """The replica that ran the run ``run_id`` (its log says it started it)."""
    runners = [r for r in (cluster["A"], cluster["B"]) if r.ran(run_id)]
    assert len(runners) == 1, run_id
    return runners[0]


@pytest.mark.parametrize("era", ["auto", "legacy"])
async def test_a_user_connects_on_the_replica_that_did_not_ask_and_the_run_resumes(
    cluster: Cluster, era: str
) -> None:
    """Per-user OAuth across replicas: Alice's call, requested through replica A, raises the
    ``mcp_authorization`` interrupt on the replica that ran it; her browser comes back to the
    redirect route of the other replica, which exchanges the code with the PKCE verifier the
    first one kept in the shared PostgreSQL store and stores her tokens there, sealed with the
    key from the configuration (``${MCP_OAUTH_KEY}``); the resume, through replica B, makes
    the call with her token, wherever it runs."""
    started = time.monotonic()
    a, b = cluster["A"], cluster["B"]
    p = ERAS[era]
    whoami = {"tool_calls": [{"name": f"{p}whoami", "args": {}, "id": "who"}]}
    thread = (await client(a, "alice").threads.create())["thread_id"]
    events = await stream(a, thread, "alice", input=whoami)
    [question] = interrupts_of(events)
    check("authorization-interrupt", question["value"])
    assert (question["value"]["reason"], question["value"]["tool_call_id"]) == ("connect", "who")
    asked_on = runner_of(cluster, run_of(events))
    assert await pending_calls(b, thread, user="alice") == ["who"]  # replica B sees the question
    # Bob, through replica B: Alice's thread is not his; he is asked for himself.
    bob = client(b, "bob")
    for refused in (bob.threads.get(thread), bob.runs.create(thread, "tools", command={"resume": True})):
        with pytest.raises(NotFoundError):
            await refused
    shown = await bob.threads.get_state(thread)  # this runtime answers with an empty state
    assert (shown["values"], shown["interrupts"], shown["tasks"]) == ({}, [], [])
    bobs = interrupts_of(await stream(b, (await bob.threads.create())["thread_id"], "bob", input=whoami))
    assert [q["value"]["reason"] for q in bobs] == ["connect"]
    assert bobs[0]["value"]["url"] != question["value"]["url"]

    connected_on = other(cluster, asked_on)
    callback = callback_of(await authorize(question["value"]["url"], "alice"), connected_on.url)
    assert (await come_back(tampered(callback), "alice")).status_code == 400
    answer = await come_back(callback, "alice")
    assert (answer.status_code, "Connected" in answer.text) == (200, True), answer.text + connected_on.tail()
    for replica in (connected_on, asked_on):  # good once, on any replica
        assert (await come_back(callback.replace(connected_on.url, replica.url), "alice")).status_code == 400

    events = await stream(b, thread, "alice", command={"resume": True})
    assert not interrupts_of(events), events
    resumed_on = runner_of(cluster, run_of(events))
    assert tool_results(await client(a, "alice").threads.get_state(thread)) == {
        f"{p}whoami": "signed in as alice"
    }
    # The call with her token went out from the replica that ran the resumed run.
    taken = [c for c in await calls(cluster.signin or "") if c["status"] == 200]
    assert taken and taken[-1] == {"status": 200, "user": "alice", "replica": resumed_on.name}, taken
    print(
        f"\n[{era}] asked through A, ran on {asked_on.name}; connected on {connected_on.name}; "
        f"resumed through B, ran on {resumed_on.name}: {time.monotonic() - started:.1f} s"
    )


async def _event_runs(cluster: Cluster) -> dict[str, list[dict[str, Any]]]:
    """The runs the replicas' trigger started, by event id. Read from the database: the trigger
    starts them through the server's in-process client, which LangGraph runs without custom auth,
    so no user owns them (and no user's client lists them)."""
    import psycopg

    query = (
        "SELECT r.run_id::text, r.status, r.metadata->>'mcp_event_id' FROM runs r"
        " JOIN threads t ON t.thread_id = r.thread_id WHERE t.metadata->>'mcp_trigger' = 'tickets'"
    )
    async with await psycopg.AsyncConnection.connect(cluster.env["DATABASE_URI"]) as conn:
        rows = await (await conn.execute(query)).fetchall()
    found: dict[str, list[dict[str, Any]]] = {}
    for run_id, status, event_id in rows:
        found.setdefault(event_id, []).append({"run_id": run_id, "status": status})
    return found


async def _until_event_runs(
    cluster: Cluster, *event_ids: str, timeout: float = 90
) -> dict[str, list[dict[str, Any]]]:
    deadline = time.monotonic() + timeout
    while True:
        found = await _event_runs(cluster)
        if all(any(r["status"] == "success" for r in found.get(e, [])) for e in event_ids):
            return found
        assert time.monotonic() < deadline, f"no finished run for {event_ids}: {found}"
        await asyncio.sleep(0.2)


async def test_the_replica_holding_the_trigger_is_killed_and_the_other_takes_it_over(
    cluster: Cluster,
) -> None:
    """The replicas run one event trigger (push) and the task wake-ups. One replica holds the
    trigger's lease and subscribes; it is SIGKILLed; events made while it is dead run on the other,
    which takes the trigger over from the kept cursor within a lease window: every event runs
    once. A run parked on a task meanwhile is woken when the task finishes, by whichever replica
    holds the wake-ups (the killed one's are taken over the same way)."""
    from tests.replicas.conftest import LEASE
    from tests.servers import events as fixture
    from tests.servers import tasks as tasks_fixture

    root, tasks = cluster.events_dir, cluster.tasks_dir
    assert root is not None and tasks is not None

    def streams() -> list[dict[str, Any]]:
        return [e for e in fixture.log(root) if e["method"] == "events/stream"]

    def task_log() -> list[dict[str, Any]]:
        return tasks_fixture.log(tasks)

    # Earlier tests of the module killed and restarted replicas: the trigger may have moved.
    # Its holder is the replica of the last stream, once no new one came for a lease window
    # and more (one subscriber at a time).
    await until(lambda: bool(streams()), timeout=60)
    while True:
        seen = len(streams())
        await asyncio.sleep(LEASE * 1.5)
        if len(streams()) == seen:
            break
    holder = cluster[streams()[-1]["replica"]]
    before = len(streams())
    survivor = other(cluster, holder)
    for n in range(3):
        fixture.append(root, "ticket.created", {"n": n, "queue": "r"}, event_id=f"r{n}")
    await _until_event_runs(cluster, "r0", "r1", "r2")

    thread = (await client(survivor).threads.create())["thread_id"]
    park = {"tool_calls": [{"name": "gated_job", "args": {"label": "r"}, "id": "c1"}]}
    await client(survivor).runs.wait(thread, "tools", input=park)
    assert [i["value"]["type"] for i in (await client(survivor).threads.get_state(thread))["interrupts"]] == [
        "mcp_task"
    ]
    await until(lambda: any(e["event"] == "listen" and e["honored"] == 1 for e in task_log()), timeout=60)
    watcher = [e for e in task_log() if e["event"] == "listen"][-1]["replica"]

    holder.kill()
    killed = time.monotonic()
    for n in range(3, 6):
        fixture.append(root, "ticket.created", {"n": n, "queue": "r"}, event_id=f"r{n}")
    (tasks / "release-r").touch()
    found = await _until_event_runs(cluster, *(f"r{n}" for n in range(6)))
    taken_over = time.monotonic() - killed
    assert {e: len(runs) for e, runs in found.items()} == {f"r{n}": 1 for n in range(6)}
    later = streams()[before:]
    assert later and {s["replica"] for s in later} == {survivor.name}
    assert later[0]["params"].get("cursor")  # from the kept cursor, not from now

    async def woken() -> bool:
        state = await client(survivor).threads.get_state(thread)
        return tool_results(state) == {"gated_job": "done r"}

    deadline = time.monotonic() + 90
    while not await woken():
        assert time.monotonic() < deadline, "the parked run was not woken"
        await asyncio.sleep(0.2)
    runs = await client(survivor).runs.list(thread)
    assert [r["metadata"].get("mcp_task_wakeup") for r in runs if r["metadata"].get("mcp_task_wakeup")] == [
        "c1"
    ]
    print(
        f"\ntrigger held by {holder.name}, killed; {survivor.name} ran every event once, "
        f"the last {taken_over:.1f} s after the kill; the wake-ups were held by {watcher}"
    )
