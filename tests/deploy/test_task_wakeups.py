"""A run parked on an MCP task is resumed by the deployment itself when the task finishes, on a
real ``langgraph dev``: the bundled app's wake-ups (``LANGGRAPH_MCP_TASKS_KEY``) listen for the
task's status (``subscriptions/listen``), and the server's request log shows no poll loop."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet
from langgraph_sdk import get_client

from tests.conftest_servers import spawn_http_server
from tests.langgraph_server import REPO_ROOT, langgraph_dev
from tests.servers import tasks as fixture

pytestmark = pytest.mark.deploy


async def _until(condition: Any, what: str, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = await condition()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        await asyncio.sleep(0.1)


@pytest.mark.timeout(240)
async def test_a_run_parked_on_a_task_is_resumed_when_the_server_says_it_finished(tmp_path: Path) -> None:
    folder = tmp_path / "tasks"
    folder.mkdir()
    async with spawn_http_server("tasks", env={"TASKS_DIR": str(folder)}) as url:
        mcp = tmp_path / "mcp.json"
        mcp.write_text(json.dumps({"mcpServers": {"jobs": {"url": url, "task_detach_after": 0}}}))
        env = {"LANGGRAPH_MCP_CONFIG": str(mcp), "LANGGRAPH_MCP_TASKS_KEY": Fernet.generate_key().decode()}
        with langgraph_dev(tmp_path / "server", REPO_ROOT / "langgraph.json", env) as server:
            client = get_client(url=server.url)
            thread = await client.threads.create()
            calls = {"tool_calls": [{"name": "gated_job", "args": {"label": "d"}, "id": "c1"}]}
            await client.runs.wait(thread["thread_id"], "tools", input=calls)
            state = await client.threads.get_state(thread["thread_id"])
            [parked] = state["interrupts"]
            assert parked["value"]["type"] == "mcp_task" and parked["value"]["tool_call_id"] == "c1"
            [task] = [e["task"] for e in fixture.log(folder) if e["event"] == "created"]

            # The deployment listens for the task's status and looks at it once.
            async def listening() -> bool:
                log = fixture.log(folder)
                heard = [n for n, e in enumerate(log) if e["event"] == "listen" and e["honored"] == 1]
                return bool(heard) and any(e["event"] == "get" for e in log[heard[-1] + 1 :])

            await _until(listening, "the deployment listens for the task")
            gets = sum(e["event"] == "get" for e in fixture.log(folder))
            await asyncio.sleep(2.5)  # a poll loop would ask at least twice meanwhile
            assert sum(e["event"] == "get" for e in fixture.log(folder)) == gets

            (folder / "release-d").touch()

            async def finished() -> list[dict[str, Any]] | None:
                runs = await client.runs.list(thread["thread_id"])
                done = [r for r in runs if (r.get("metadata") or {}).get("mcp_task_wakeup")]
                return done if done and done[0]["status"] == "success" else None

            [woken] = await _until(finished, "the woken run finished")
            assert woken["metadata"]["mcp_task_wakeup"] == "c1"
            state = await client.threads.get_state(thread["thread_id"])
            assert not state["interrupts"]
            assert task not in json.dumps([state["values"], woken["metadata"], parked])
            [result] = [m for m in state["values"]["messages"] if m["type"] == "tool"]
            assert result["content"] == "done d" and result["tool_call_id"] == "c1"
            # Nothing about the task is readable in the deployment's store.
            items = await client.store.search_items(["langgraph_mcp", "parked_tasks"])
            assert items["items"] == []
    log = fixture.log(folder)
    assert [e["status"] for e in log if e["event"] == "notified"] == ["completed"]
    # After the release: the woken run's one tasks/get, and no poll.
    after = [e for e in log[[e["event"] for e in log].index("notified") :] if e["event"] == "get"]
    assert [e["status"] for e in after] == ["completed"]
    # The task id (a bearer token on some servers) is in no log of the deployment.
    logs = [p.read_text(errors="replace") for p in (tmp_path / "server").glob("server-*.log")]
    assert logs and not any(task in text for text in logs)
