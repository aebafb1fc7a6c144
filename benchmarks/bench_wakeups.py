"""Runs parked on MCP tasks, woken when their tasks finish: requests sent and time to wake.

    uv run python benchmarks/bench_wakeups.py [--runs 50] [--hold 10]

In process: one graph (``MCPToolNode`` with ``task_detach_after: 0``, an in-memory checkpointer
and store) parks ``--runs`` runs, each on a ``gated_job`` task of the fixture task server
(``tests/servers/tasks.py``) over loopback HTTP; ``TaskWakeups(pool, graph=graph)`` watches them.
The tasks are held ``--hold`` seconds, then all released at once; the clock runs until every run
has its result.

* **push**: the server acknowledges the tasks' ids on ``subscriptions/listen`` and sends
  ``notifications/tasks`` when they finish;
* **poll** (the baseline, in the same run): the server acknowledges none (``TASKS_NOTIFY=0``), so
  the wake-ups poll ``tasks/get`` (at the floor, once a second, since the fixture asks for 50 ms).

Printed per mode: ``tasks/get`` requests the server got while the tasks were held (the wake-ups'
cost of waiting) and after the release, listens, and the time from the release until the last
run finished. Results: RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cryptography.fernet import Fernet  # noqa: E402
from langgraph.store.memory import InMemoryStore  # noqa: E402

from langgraph_mcp import MCPPool, MCPToolNode  # noqa: E402
from langgraph_mcp.events import TASKS_KEY_ENV, TaskWakeups  # noqa: E402
from tests.conftest_servers import spawn_http_server  # noqa: E402
from tests.helpers import ai, tool_graph, until  # noqa: E402
from tests.servers import tasks as fixture  # noqa: E402


async def measure(mode: str, runs: int, hold: float) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix=f"wake-{mode}-"))
    env = {"TASKS_DIR": str(folder), "TASKS_NOTIFY": "1" if mode == "push" else "0"}
    async with spawn_http_server("tasks", env=env) as url:
        node = MCPToolNode({"tasks": {"url": url, "task_detach_after": 0}})
        graph = tool_graph(node)
        graph.store = InMemoryStore()
        threads = [{"configurable": {"thread_id": f"t{n}"}} for n in range(runs)]
        await asyncio.gather(
            *(
                graph.ainvoke({"messages": [ai(("gated_job", {"label": f"j{n}"}, f"c{n}"))]}, config)
                for n, config in enumerate(threads)
            )
        )
        pool = MCPPool({"tasks": {"url": url}})
        async with pool, TaskWakeups(pool, graph=graph, scan_interval=0.5) as wakeups:
            await until(lambda: any(e["event"] == "listen" for e in fixture.log(folder)), timeout=60)
            await asyncio.sleep(1.0)  # the first looks
            held_from = len(fixture.log(folder))
            await asyncio.sleep(hold)
            held = [e for e in fixture.log(folder)[held_from:] if e["event"] == "get"]
            released_at = len(fixture.log(folder))
            began = time.perf_counter()
            for n in range(runs):
                (folder / f"release-j{n}").touch()

            def done() -> bool:
                return all(not graph.get_state(config).next for config in threads)

            await until(done, timeout=300)
            took = time.perf_counter() - began
            after = [e for e in fixture.log(folder)[released_at:] if e["event"] == "get"]
            resumed = wakeups.resumed
        await node.aclose()
    listens = sum(e["event"] == "listen" for e in fixture.log(folder))
    return {
        "mode": mode,
        "gets_held": len(held),
        "gets_per_task_per_minute_held": round(len(held) / runs / (hold / 60), 2),
        "gets_after_release": len(after),
        "listens": listens,
        "resumed": resumed,
        "seconds_to_wake_all": round(took, 2),
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--hold", type=float, default=10.0)
    args = parser.parse_args()
    os.environ[TASKS_KEY_ENV] = Fernet.generate_key().decode()
    results = [await measure(mode, args.runs, args.hold) for mode in ("poll", "push")]
    for result in results:
        print(json.dumps(result))
    poll, push = results
    print(
        f"tasks/get while held: push {push['gets_held']} vs poll {poll['gets_held']}; "
        f"time to wake all {args.runs}: push {push['seconds_to_wake_all']} s vs poll "
        f"{poll['seconds_to_wake_all']} s ({push['seconds_to_wake_all'] / poll['seconds_to_wake_all']:.2f}x)"
    )


if __name__ == "__main__":
    asyncio.run(main())
