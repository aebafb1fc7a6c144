"""The deployable graphs on a real ``langgraph dev`` server, driven by ``langgraph-sdk``.

Each server is its own OS process started from the repository's ``langgraph.json`` (or
``langgraph.postgres.json``); MCP servers are real stdio children of it.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from langgraph_mcp import MCPConfigError, MCPConnectionError, MCPPool, MCPToolNode
from langgraph_mcp.deploy import CONFIG_ENV, config_path, lifespan
from langgraph_mcp.elicitation import accept, resume_elicitations
from langgraph_mcp.streaming import MCPCalls
from tests.conftest_servers import stdio_params
from tests.helpers import ai, check, fill, spawned_pids, thread, tool_graph, until
from tests.helpers import pid_alive as alive
from tests.langgraph_server import REPO_ROOT, DevServer, cmdline, langgraph_dev, wait_ready

BUNDLED = REPO_ROOT / "graphs" / "mcp.json"

# -- langgraph_mcp.deploy, in process ----------------------------------------------------------


def test_config_path_prefers_the_environment_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen = tmp_path / "chosen.json"
    chosen.write_text("{}")
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    assert config_path(BUNDLED) == BUNDLED
    monkeypatch.setenv(CONFIG_ENV, "")  # empty counts as unset
    assert config_path(BUNDLED) == BUNDLED
    monkeypatch.setenv(CONFIG_ENV, str(chosen))
    assert config_path(BUNDLED) == chosen


def test_config_path_names_the_variable_that_chose_a_missing_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CONFIG_ENV, str(tmp_path / "nope.json"))
    with pytest.raises(MCPConfigError, match=f"nope.json.*does not exist.*{CONFIG_ENV}="):
        config_path(BUNDLED)
    monkeypatch.delenv(CONFIG_ENV)
    with pytest.raises(MCPConfigError, match=f"missing.json.*does not exist.*set {CONFIG_ENV}"):
        config_path(tmp_path / "missing.json")


async def test_lifespan_starts_at_startup_and_closes_at_shutdown(pid_dir: Path) -> None:
    pool = MCPPool({"demo": stdio_params("demo", env={"DEMO_PID_DIR": str(pid_dir)})})
    node = MCPToolNode({"other": stdio_params("other")})
    async with lifespan(pool, node, start=True)(object()):
        [pid] = spawned_pids(pid_dir)
        assert alive(pid)
        assert "echo" in {t.name for t in await node.get_tools()}
        assert node.pool.connections["other"].connected
    assert not alive(pid)
    assert not node.pool.connections["other"].connected


async def test_lifespan_is_lazy_by_default_and_closes_every_owner_when_one_fails(pid_dir: Path) -> None:
    class Broken:
        async def start(self) -> None:
            raise AssertionError("not started without start=True")

        async def drain(self, timeout: float) -> bool:
            return True

        async def aclose(self) -> None:
            raise RuntimeError("close failed")

    pool = MCPPool({"demo": stdio_params("demo", env={"DEMO_PID_DIR": str(pid_dir)})})
    pids: list[int] = []
    with pytest.raises(RuntimeError, match="close failed"):
        async with lifespan(Broken(), pool)(object()):
            assert spawned_pids(pid_dir) == []
            await pool.start()
            pids = spawned_pids(pid_dir)
    assert len(pids) == 1 and not alive(pids[0])


async def test_lifespan_lets_working_calls_finish_before_closing() -> None:
    """LangGraph server leaves the app's lifespan before it stops its runs."""
    pool = MCPPool({"demo": stdio_params("demo")})
    connection = pool.connection("demo")
    async with lifespan(pool, drain_timeout=30)(object()):
        call = asyncio.create_task(connection.call_tool("sleep", {"seconds": 1.0}))
        await until(lambda: connection.working() == 1)
    assert call.done()
    assert (await call).content[0].text == "slept 1.0"  # type: ignore[union-attr]
    assert not connection.connected


async def test_lifespan_ends_calls_that_outlast_the_drain(caplog: pytest.LogCaptureFixture) -> None:
    pool = MCPPool({"demo": stdio_params("demo")})
    connection = pool.connection("demo")
    started = time.monotonic()
    async with lifespan(pool, drain_timeout=0.3)(object()):
        call = asyncio.create_task(connection.call_tool("sleep", {"seconds": 30}))
        await until(lambda: connection.working() == 1)
    with pytest.raises(MCPConnectionError, match="closed during the call"):
        await call
    assert time.monotonic() - started < 15
    assert "still running 0.3s after shutdown began" in caplog.text


async def test_calls_waiting_for_a_person_are_not_drained() -> None:
    node = MCPToolNode({"asker": {**stdio_params("asker"), "protocol": "legacy"}})
    async with node:
        out = await tool_graph(node).ainvoke(
            {"messages": [ai(("delete_item", {"item": "a"}, "c1"))]}, thread()
        )
        assert "__interrupt__" in out  # the 2025-11-25 call is held open, waiting for the answer
        connection = node.pool.connection("asker")
        assert len(connection.router._calls) == 1 and connection.working() == 0
        started = time.monotonic()
        assert await node.drain(10)
        assert time.monotonic() - started < 1


# -- the graphs on a real langgraph dev server ------------------------------------------------


def mcp_config(folder: Path, *, stubborn: bool = False, demo: bool = False) -> Path:
    """The bundled ``graphs/mcp.json``, optionally with the stubborn server (which outlives its
    stdin) or the demo fixture server added."""
    servers: dict[str, Any] = json.loads(BUNDLED.read_text())["mcpServers"]
    for entry in servers.values():
        entry["cwd"] = str((BUNDLED.parent / entry["cwd"]).resolve())
    if stubborn:
        servers["stubborn"] = {
            "command": sys.executable,
            "args": [str(REPO_ROOT / "tests/servers/stubborn.py")],
        }
    if demo:
        servers["demo"] = {"command": sys.executable, "args": [str(REPO_ROOT / "tests/servers/demo.py")]}
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def with_reviewed_graph(folder: Path) -> Path:
    """The repository's ``langgraph.json`` with the ``reviewed`` graph (``tests/deploy/reviewed.py``)
    added."""
    config = json.loads((REPO_ROOT / "langgraph.json").read_text())
    config["dependencies"] = [str(REPO_ROOT)]
    config["graphs"]["reviewed"] = "tests.deploy.reviewed:graph"
    path = folder / "langgraph.json"
    path.write_text(json.dumps(config))
    return path


async def stream(server: DevServer, thread_id: str, graph: str, **kwargs: Any) -> list[tuple[str, Any]]:
    client = get_client(url=server.url)
    return [
        (part.event, part.data)
        async for part in client.runs.stream(thread_id, graph, stream_mode=["updates", "custom"], **kwargs)
    ]


def interrupts_of(events: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    return [
        i
        for event, data in events
        if event == "updates" and "__interrupt__" in data
        for i in data["__interrupt__"]
    ]


def answer_yes(interrupts: list[dict[str, Any]], reason: str) -> Any:
    command = resume_elicitations(
        interrupts,
        lambda payload: {r["key"]: accept({"ok": True, "reason": reason}) for r in payload["requests"]},
    )
    return {"resume": command.resume}


def tool_results(state: dict[str, Any]) -> dict[str, str]:
    return {m["name"]: m["content"] for m in state["values"]["messages"] if m["type"] == "tool"}


def assert_stops_cleanly(server: DevServer, children: set[int]) -> None:
    """SIGTERM the server: it exits, and every MCP child it had is gone with it."""
    # uvicorn shuts down gracefully on SIGTERM, then re-raises the signal: exit code -15.
    assert server.stop() in (0, -signal.SIGTERM), server.log_text()[-3000:]
    assert "Shutting down background workers" in server.log_text()
    left = {pid: cmdline(pid) for pid in children if alive(pid)}
    assert not left, f"MCP servers outlived langgraph dev: {left}"
    assert "BlockingError" not in server.log_text()


@pytest.mark.deploy
@pytest.mark.timeout(300)
async def test_tools_and_agent_graphs_serve_progress_questions_and_stop_cleanly(tmp_path: Path) -> None:
    config = mcp_config(tmp_path, stubborn=True)
    with langgraph_dev(
        tmp_path / "server", with_reviewed_graph(tmp_path), {"LANGGRAPH_MCP_CONFIG": str(config)}
    ) as server:
        client = get_client(url=server.url)
        assert server.mcp_children() == set(), "building the graphs must not start MCP servers"

        # The tool-runner graph: progress from one call, a question from the other.
        thread = (await client.threads.create())["thread_id"]
        calls = [
            {"name": "count_primes", "args": {"limit": 3000}, "id": "primes"},
            {"name": "cancel_order", "args": {"order_id": "A-1001"}, "id": "cancel"},
        ]
        events = await stream(server, thread, "tools", input={"tool_calls": calls})
        progress = [d for e, d in events if e == "custom" and d.get("type") == "mcp_progress"]
        assert progress and {p["tool_call_id"] for p in progress} == {"primes"}
        assert [p["progress"] for p in progress] == sorted(p["progress"] for p in progress)
        assert progress[-1]["progress"] == progress[-1]["total"] == 3000
        [question] = interrupts_of(events)
        assert question["value"]["type"] == "mcp_elicitation"
        assert question["value"]["tool_call_id"] == "cancel"
        assert question["value"]["requests"][0]["message"] == "Cancel order A-1001 (2 x espresso beans)?"
        assert (await client.threads.get(thread))["status"] == "interrupted"

        events = await stream(server, thread, "tools", command=answer_yes([question], "e2e"))
        assert not interrupts_of(events)
        state = await client.threads.get_state(thread)
        assert tool_results(state) == {"count_primes": "430", "cancel_order": "order A-1001 cancelled (e2e)"}
        assert state["next"] == []
        for event in progress:
            check("progress-event", event)

        # v3 event streaming through langgraph-sdk: the same calls, as MCP call snapshots on the
        # custom:mcp channel (graphs/tools.py compiles with MCPStreamTransformer).
        received: list[dict[str, Any]] = []
        async with client.threads.stream(assistant_id="tools") as v3:
            await v3.run.start(input={"tool_calls": calls})
            async with asyncio.timeout(60):  # the stream ends with the run (its interrupt)
                async for item in v3.extensions["mcp"]:
                    received.append(item)
                    check("mcp-call", item["payload"])
        # A running call's progress reaches the client as snapshots. (What the run's last step
        # makes, a finished call or a question, may come after the stream ended at the run's
        # interrupt: it depends on timing, and the docs say so; tests/stream/test_v3.py checks
        # those in process.)
        folded = MCPCalls.from_events(received)
        shown = [i["payload"]["progress"] for i in received if i["payload"]["tool_call_id"] == "primes"]
        assert folded["primes"]["server"] == "math" and folded["primes"]["args"] == {"limit": 3000}
        assert shown and shown == sorted(shown) and folded["primes"]["tool_name"] == "count_primes"

        # An approval, then the call's question, answered with the JSON the wire-format page
        # documents (docs/reference/wire-formats.md), as a client in another language sends it.
        thread = (await client.threads.create())["thread_id"]
        call = {"name": "cancel_order", "args": {"order_id": "A-1002"}, "id": "cancel"}
        [approval] = interrupts_of(await stream(server, thread, "reviewed", input={"tool_calls": [call]}))
        check("approval-interrupt", approval["value"])
        answer = fill('{"responses": {"$key": {"type": "approve"}}}', key=approval["value"]["key"])
        [question] = interrupts_of(await stream(server, thread, "reviewed", command={"resume": answer}))
        check("elicitation-interrupt", question["value"])
        answer = fill(
            '{"$id": {"responses": {"$key": {"action": "accept", "content": {"ok": true}}}}}',
            id=question["id"],
            key=question["value"]["requests"][0]["key"],
        )
        assert not interrupts_of(await stream(server, thread, "reviewed", command={"resume": answer}))
        assert tool_results(await client.threads.get_state(thread)) == {
            "cancel_order": "order A-1002 cancelled"
        }

        # The same over the REST API, as the page's curl example does it.
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as rest:
            thread = (await rest.post("/threads", json={})).json()["thread_id"]
            call = {"name": "cancel_order", "args": {"order_id": "A-1003"}}
            run = {"assistant_id": "tools", "input": {"tool_calls": [call]}}
            [pending] = (await rest.post(f"/threads/{thread}/runs/wait", json=run)).json()["__interrupt__"]
            check("elicitation-interrupt", pending["value"])
            [stored] = (await rest.get(f"/threads/{thread}/state")).json()["interrupts"]
            assert (stored["id"], stored["value"]) == (pending["id"], pending["value"])
            key = pending["value"]["requests"][0]["key"]
            # A resume that does not fit the question fails the run and leaves it pending.
            wrong = fill('{"responses": {"$key": {"action": "accept", "content": {"ok": 7}}}}', key=key)
            run = {"assistant_id": "tools", "command": {"resume": wrong}}
            out = (await rest.post(f"/threads/{thread}/runs/wait", json=run)).json()
            # The error says, for a person, which field and what to enter (no question key).
            assert out["__error__"]["error"] == "AnswerRefused", out
            assert (
                "Ok: 7 is not yes or no; answer yes (true) or no (false)." in out["__error__"]["message"]
            ), out
            assert key not in out["__error__"]["message"], out
            state = (await rest.get(f"/threads/{thread}/state")).json()
            assert [(i["id"], i["value"]) for i in state["interrupts"]] == [(pending["id"], pending["value"])]
            answer = fill('{"responses": {"$key": {"action": "decline"}}}', key=key)
            run = {"assistant_id": "tools", "command": {"resume": answer}}
            out = (await rest.post(f"/threads/{thread}/runs/wait", json=run)).json()
            assert out["messages"][-1]["content"] == "order A-1003 kept (decline)", out

        # The agent graph with the scripted model, chosen by the assistant's configurable.
        assistant = await client.assistants.create("agent", config={"configurable": {"model": "scripted"}})
        thread = (await client.threads.create())["thread_id"]
        out = await client.runs.wait(
            thread,
            assistant["assistant_id"],
            input={"messages": [{"role": "user", "content": 'add {"a": 2, "b": 40}\nping'}]},
        )
        assert isinstance(out, dict)
        assert out["messages"][-1]["content"] == "add: 42.0\nping: pong"

        # No model configured: the run fails with a message naming the variable.
        thread = (await client.threads.create())["thread_id"]
        events = await stream(
            server, thread, "agent", input={"messages": [{"role": "user", "content": "hi"}]}
        )
        errors = [d for e, d in events if e == "error"]
        assert errors and "LANGGRAPH_MCP_MODEL" in errors[0]["message"], events

        # The README's client example, as a user runs it.
        example = await asyncio.create_subprocess_exec(
            sys.executable, "examples/deploy_client.py", "--url", server.url,
            cwd=REPO_ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        stdout, stderr = await asyncio.wait_for(example.communicate(), 120)
        assert example.returncode == 0, stderr.decode()
        printed = stdout.decode()
        assert "progress count_primes: 3000/3000 430 primes so far" in printed
        assert "question from shop: Cancel order A-1001 (unknown)? -> yes" in printed
        assert "result count_primes: 430\nresult cancel_order: order A-1001 cancelled\n" in printed
        assert "agent: add: 42.0 | search_notes: groceries" in printed

        children = server.mcp_children()
        names = sorted(Path(cmdline(pid).split()[1]).stem for pid in children)
        assert names == ["apps_server", "math_server", "notes_server", "shop_server", "stubborn"], names
        assert_stops_cleanly(server, children)


@pytest.mark.deploy
@pytest.mark.timeout(300)
async def test_a_question_asked_by_one_server_process_is_answered_on_another(
    tmp_path: Path, postgres_uri: str
) -> None:
    """The checkpoint lives in PostgreSQL; the first server is stopped (SIGTERM) while the
    question is pending, with its thread metadata; a new server resumes the thread. (The
    2025-11-25 era's question across processes is the replicas' test, over the same PostgreSQL
    checkpointer kind, and ``tests/interop/test_mcp1.py``'s.)"""
    env = {"LANGGRAPH_MCP_POSTGRES_URI": postgres_uri}
    config = REPO_ROOT / "langgraph.postgres.json"
    thread = str(uuid.uuid4())
    call = {"name": "cancel_order", "args": {"order_id": "A-1002"}, "id": "cancel"}
    with langgraph_dev(tmp_path / "first", config, env) as first:
        assert "Using custom checkpointer: AsyncPostgresSaver" in first.log_text()
        await get_client(url=first.url).threads.create(thread_id=thread)
        [question] = interrupts_of(await stream(first, thread, "tools", input={"tool_calls": [call]}))
        assert question["value"]["requests"][0]["message"] == "Cancel order A-1002 (1 x grinder)?"
        assert_stops_cleanly(first, first.mcp_children())

    with langgraph_dev(tmp_path / "second", config, env) as second:
        events = await stream(
            second, thread, "tools", command=answer_yes([question], "later"), if_not_exists="create"
        )
        assert not interrupts_of(events), events
        state = await get_client(url=second.url).threads.get_state(thread)
        assert tool_results(state) == {"cancel_order": "order A-1002 cancelled (later)"}
        assert_stops_cleanly(second, second.mcp_children())


@pytest.mark.deploy
@pytest.mark.timeout(300)
async def test_a_hot_reload_closes_the_old_workers_mcp_servers(tmp_path: Path) -> None:
    config = mcp_config(tmp_path, stubborn=True)
    workdir = tmp_path / "server"
    env = {"LANGGRAPH_MCP_CONFIG": str(config)}
    with langgraph_dev(workdir, REPO_ROOT / "langgraph.json", env, reload=True) as server:
        client = get_client(url=server.url)
        call = {"tool_calls": [{"name": "ping", "args": {}}]}
        thread = (await client.threads.create())["thread_id"]
        await client.runs.wait(thread, "tools", input=call)
        before = server.mcp_children()
        assert len(before) == 5  # the four servers of the config, the stubborn one

        (workdir / "edited.py").write_text("EDITED = True\n")  # what a developer saving a file does
        deadline = time.monotonic() + 60
        while any(alive(pid) for pid in before):
            assert time.monotonic() < deadline, {pid: cmdline(pid) for pid in before if alive(pid)}
            await asyncio.sleep(0.1)
        assert "Reloading" in server.log_text()
        wait_ready(server)

        thread = (await client.threads.create())["thread_id"]
        out = await client.runs.wait(thread, "tools", input=call)
        assert isinstance(out, dict) and out["messages"][-1]["content"] == "pong"
        after = server.mcp_children()
        assert len(after) == 5 and not after & before
        assert_stops_cleanly(server, after)


@pytest.mark.deploy
@pytest.mark.timeout(300)
async def test_isolated_run_loops_get_sessions_of_their_own_and_leave_no_server(tmp_path: Path) -> None:
    """``BG_JOB_ISOLATED_LOOPS=true``: each of the 4 job slots runs graphs on a loop of its own,
    in its own thread; runs on different loops at the same time must all work, and nothing may
    be left after a stop."""
    config = mcp_config(tmp_path, stubborn=True)
    env = {"LANGGRAPH_MCP_CONFIG": str(config), "BG_JOB_ISOLATED_LOOPS": "true"}
    with langgraph_dev(tmp_path / "server", REPO_ROOT / "langgraph.json", env) as server:
        assert "Starting queue with isolated loops" in server.log_text()
        client = get_client(url=server.url)

        async def run(i: int) -> str:
            thread = (await client.threads.create())["thread_id"]
            calls = [{"name": "add", "args": {"a": i, "b": 1000}}, {"name": "ping", "args": {}}]
            out = await client.runs.wait(thread, "tools", input={"tool_calls": calls})
            assert isinstance(out, dict), out
            return " ".join(m["content"] for m in out["messages"] if m["type"] == "tool")

        for _ in range(2):
            assert await asyncio.gather(*(run(i) for i in range(8))) == [
                f"{i + 1000}.0 pong" for i in range(8)
            ]
        children = server.mcp_children()
        servers = [Path(cmdline(pid).split()[1]).stem for pid in children]
        # One session per server per loop that ran a graph: several loops, at most the 4 job slots.
        counts = {s: servers.count(s) for s in set(servers)}
        assert len(counts) == 5 and max(counts.values()) >= 2 and max(counts.values()) <= 4, counts
        assert_stops_cleanly(server, children)


@pytest.mark.deploy
@pytest.mark.timeout(300)
async def test_a_call_running_when_the_server_stops_finishes_and_is_kept(tmp_path: Path) -> None:
    """SIGTERM while a tool call runs: the call may finish (within the lifespan's drain time)
    and its result is what the thread keeps, not a 'connection closed' error."""
    workdir = tmp_path / "server"
    env = {"LANGGRAPH_MCP_CONFIG": str(mcp_config(tmp_path, demo=True))}
    with langgraph_dev(workdir, REPO_ROOT / "langgraph.json", env) as server:
        client = get_client(url=server.url)
        thread = (await client.threads.create())["thread_id"]
        calls = [{"name": "sleep", "args": {"seconds": 3}, "id": "nap"}]
        async for part in client.runs.stream(
            thread, "tools", input={"tool_calls": calls}, stream_mode="custom"
        ):
            if part.event == "custom":
                break  # the call is running: its first progress arrived
        children = server.mcp_children()
        await asyncio.to_thread(assert_stops_cleanly, server, children)

    with langgraph_dev(workdir, REPO_ROOT / "langgraph.json", env) as again:  # its saved state
        state = await get_client(url=again.url).threads.get_state(thread)
        [message] = [m for m in state["values"]["messages"] if m["type"] == "tool"]
        assert (message["status"], message["content"]) == ("success", "slept 3.0"), message
