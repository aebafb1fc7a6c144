"""A burst of MCP events that start runs: runs started, duplicates, lost, and time to drain.

    uv run python benchmarks/bench_events.py [--events 1000] [--in-flight 10] [--postgres]

One ``langgraph dev`` (in memory, offline, the repository's ``agent`` graph with the scripted
model) and the events fixture server (``tests/servers/events.py``) over loopback HTTP. With
``--postgres``: one replica of the stock LangGraph API server on ``langgraph-runtime-pg``
instead, its runs, threads, store and checkpoints in a private PostgreSQL and its streams in a
private Redis (the replicas' test deployment, ``tests/replicas/cluster.py``, without custom
auth). Each
event is appended to the fixture's log **twice with the same event id** (a server that delivers
everything twice), so ``--events`` ids arrive as twice as many deliveries.

* **baseline**: the same number of runs created directly through the server's API (a new thread
  each, ``runs.create`` then ``runs.join``, ``--in-flight`` at a time): what the deployment
  itself costs;
* **triggers**: an event trigger (push, a new thread per event, ``max_runs_in_flight`` =
  ``--in-flight``, ``max_events_per_minute`` 100,000, its most, so the burst is not paced) started in the
  deployment's lifespan; the events are appended in one burst once it subscribed, and the clock
  runs until every event id has a finished run.

Printed: runs started, event ids with more than one run (duplicates), event ids with none
(lost), the time to drain, and the ratio to the baseline. Results: RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langgraph_sdk import get_client  # noqa: E402

from tests.conftest_servers import spawn_http_server  # noqa: E402
from tests.helpers import until  # noqa: E402
from tests.langgraph_server import REPO_ROOT, langgraph_dev  # noqa: E402
from tests.servers import events as fixture  # noqa: E402

TICKET = "ticket.created"


async def finished_runs(client: Any) -> dict[str, list[str]]:
    """Event id -> statuses of its runs (the trigger's threads)."""
    out: dict[str, list[str]] = {}
    offset = 0
    while True:
        threads = await client.threads.search(metadata={"mcp_trigger": "burst"}, limit=1000, offset=offset)
        if not threads:
            return out
        for thread in threads:
            for run in await client.runs.list(thread["thread_id"], limit=10):
                key = (run.get("metadata") or {}).get("mcp_event_id")
                out.setdefault(key, []).append(run["status"])
        offset += len(threads)


async def idle_threads(client: Any) -> int:
    """The trigger's threads whose run finished (one per event id: a new thread per event)."""
    count, offset = 0, 0
    while True:
        page = await client.threads.search(
            metadata={"mcp_trigger": "burst"}, status="idle", limit=1000, offset=offset, select=["thread_id"]
        )
        count += len(page)
        if len(page) < 1000:
            return count
        offset += len(page)


async def baseline(client: Any, count: int, in_flight: int) -> float:
    gate = asyncio.Semaphore(in_flight)

    async def one(n: int) -> None:
        async with gate:
            thread = (await client.threads.create())["thread_id"]
            run = await client.runs.create(
                thread, "agent", input={"messages": [{"role": "user", "content": f"event {n}"}]}
            )
            await client.runs.join(thread, run["run_id"])

    started = time.perf_counter()
    await asyncio.gather(*(one(n) for n in range(count)))
    return time.perf_counter() - started


@contextmanager
def deployment(folder: Path, env: dict[str, str], url: str, postgres: bool) -> Iterator[Any]:
    """``langgraph dev`` in memory, or one replica on PostgreSQL and Redis."""
    if not postgres:
        with langgraph_dev(folder / "server", REPO_ROOT / "langgraph.json", env) as server:
            yield server
        return
    from tests.postgres import postgres_cluster
    from tests.replicas.cluster import Cluster, prepare, redis_server, replica_env
    from tests.replicas.install import ensure_installed

    python = ensure_installed()
    with postgres_cluster() as database, redis_server(folder / "redis") as redis:
        replica = replica_env(database, redis)
        replica.pop("LANGGRAPH_AUTH")  # the benchmark's client reads the trigger's threads
        project = json.loads((REPO_ROOT / "langgraph.json").read_text())
        replica["LANGGRAPH_HTTP"] = json.dumps(project["http"])
        replica.update({k: v for k, v in env.items() if k != "LANGGRAPH_MCP_CONFIG"})
        prepare(python, replica)
        cluster = Cluster(python, folder / "replicas", replica, servers={"tickets": {"url": url}})
        (folder / "replicas").mkdir()
        try:
            cluster.ensure("A")
            server = cluster["A"]

            yield server
        finally:
            cluster.close()


async def main(count: int, in_flight: int, args_log: str | None = None, postgres: bool = False) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        root = folder / "events"
        root.mkdir()
        (root / ".heartbeat_ms").write_text("1000")
        async with spawn_http_server("events", env={"EVENTS_DIR": str(root)}) as url:
            mcp = folder / "mcp.json"
            mcp.write_text(json.dumps({"mcpServers": {"tickets": {"url": url}}}))
            trigger = {
                "server": "tickets",
                "event": TICKET,
                "assistant": "agent",
                "max_runs_in_flight": in_flight,
                "max_events_per_minute": 100_000,
            }
            triggers = folder / "triggers.json"
            triggers.write_text(json.dumps({"triggers": {"burst": trigger}}))
            env = {
                "LANGGRAPH_MCP_CONFIG": str(mcp),
                "LANGGRAPH_MCP_TRIGGERS": str(triggers),
                "LANGGRAPH_MCP_MODEL": "scripted",
            }
            with deployment(folder, env, url, postgres) as server:
                client = get_client(url=server.url, timeout=120)
                base = await baseline(client, count, in_flight)
                await until(lambda: any(e["method"] == "events/stream" for e in fixture.log(root)), 60)
                started = time.perf_counter()
                with (root / "events.jsonl").open("a") as log:
                    for n in range(count):
                        line = json.dumps({"name": TICKET, "data": {"n": n}, "eventId": f"e{n}"})
                        log.write(line + "\n" + line + "\n")  # every event delivered twice
                ids = {f"e{n}" for n in range(count)}
                deadline = time.monotonic() + 30 + count
                # Each event has a thread of its own: once all of them are idle (cheap to ask),
                # every event id must have a finished run (asked thread by thread).
                while True:
                    if time.monotonic() > deadline:
                        raise SystemExit(f"not drained in time\n{server.log_text()[-4000:]}")
                    await asyncio.sleep(0.5)
                    if await idle_threads(client) < count:
                        continue
                    runs = await finished_runs(client)
                    if all(any(s == "success" for s in runs.get(i, [])) for i in ids):
                        break
                drained = time.perf_counter() - started
                runs = await finished_runs(client)
                if args_log:
                    await asyncio.to_thread(Path(args_log).write_text, server.log_text())
    started_runs = sum(len(v) for k, v in runs.items() if k in ids)
    duplicates = sum(1 for i in ids if len(runs.get(i, [])) > 1)
    lost = sum(1 for i in ids if not runs.get(i))
    where = "one replica on PostgreSQL and Redis" if postgres else "langgraph dev in memory"
    print(f"events: {count} ids, {2 * count} deliveries; runs in flight at most {in_flight}; {where}")
    print(f"baseline (runs created directly): {base:.1f} s ({count / base:.1f} runs/s)")
    print(f"triggers: runs started {started_runs}, duplicates {duplicates}, lost {lost}")
    rate = count / drained
    print(f"triggers: drained in {drained:.1f} s ({rate:.1f} runs/s), {drained / base:.2f}x the baseline")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--in-flight", type=int, default=10)
    parser.add_argument("--server-log", help="write the LangGraph server's log there")
    parser.add_argument("--postgres", action="store_true", help="one replica on PostgreSQL and Redis")
    args = parser.parse_args()
    asyncio.run(main(args.events, args.in_flight, args.server_log, args.postgres))
