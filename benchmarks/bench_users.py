"""Per-user catalogs with many signed-in users: a user's first run, memory and connections per user.

    uv run python benchmarks/bench_users.py [--users 1000] [--distinct 10] [--protocol auto]
                                            [--tracemalloc]

One process: the per-user fixture server (``tests/servers/peruser.py`` behind
``tests/servers/authorization.py``'s ``Gate(everything=True)``, which names each request's user
from its bearer token) served with uvicorn on loopback, and ``create_mcp_agent(ScriptedChatModel,
pool, checkpointer=InMemorySaver(), store=InMemoryStore())`` as the client. ``--users`` users are
signed in without a browser: each one's token is minted by the fixture's ``Provider`` and stored
as the OAuth callback route stores it (a sealed ``TokenRecord`` in the graph's store). All but
``--distinct`` of them list the same tools (``catalog.named = False``: descriptions do not name
the user); the others list a tool of their own each.

Each user's run, one after another, on a thread of its own: the model is offered the user's
tools (their listing, made on their own session with their token) and calls ``whoami``; the
tool's answer must be ``user=<that user>``; a second model call answers. Two phases, each with a
pool and agent of its own (the first pool stays open during the second):

* ``closed``: ``thread_session_ttl=1``; after the last run, waits until the pool holds no user
  session, then measures (RSS, TCP connections at the server);
* ``open``: ``thread_session_ttl=600`` and ``max_thread_sessions`` above ``--users``: every user's
  session is still open when measured.

Printed: each phase's run latency (1st user, last user, medians of users 2..N and of the first
and last tenth), distinct tool sets built (``UserCatalogs``' composed sets), RSS (``VmRSS`` after
``gc.collect()``) before any user signs in, after the ``closed`` phase (sessions closed) and
after the ``open`` phase (sessions open), KB per user, and ESTABLISHED TCP connections whose
local port is the server's (``/proc/self/net/tcp``: the server's side of each connection).
``--tracemalloc`` also traces allocations (slower; the latencies are then not comparable) and
prints what each phase left allocated, by file. Results: RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import statistics
import time
import tracemalloc
from collections.abc import Sequence
from contextlib import AsyncExitStack
from typing import Any

from _common import ROOT, load_average, proc_status, quiet, table
from cryptography.fernet import Fernet
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langgraph_mcp import MCPPool, create_mcp_agent
from langgraph_mcp._oauth.records import Sealer, TokenRecord, save_tokens
from langgraph_mcp.config import load_connections
from langgraph_mcp.testing import ScriptedChatModel
from tests.conftest_servers import serve_in_loop
from tests.servers import peruser
from tests.servers.authorization import Gate, Provider

KEY = Fernet.generate_key().decode()
CLIENT_ID = "bench-client"
SHARED_TOOLS = ["whoami", "reports", "search", "files", "calendar"]
"""What most users list (the same content for each: ``catalog.named = False``)."""
OPEN_TTL = 600.0
CLOSED_TTL = 1.0
CLOSE_DEADLINE = 60.0


def user_name(i: int) -> str:
    return f"user{i:05d}"


def distinct_indexes(n: int, distinct: int) -> set[int]:
    """Which users list tools of their own: spread over the run, never the first or the last."""
    if n < 3:
        return set()
    return {min(n - 2, max(1, round((k + 0.5) * n / distinct))) for k in range(distinct)}


class GCClock:
    """Time spent in the garbage collector (``gc.callbacks``), ms, and the full collections."""

    def __init__(self) -> None:
        self.ms = 0.0
        self.full = 0
        self._start = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.ms += (time.perf_counter() - self._start) * 1000
            self.full += info["generation"] == 2


GC = GCClock()


class Peers:
    """ASGI: the TCP connections the server accepted (one client port each)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: set[tuple[str, int]] = set()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("client"):
            self.seen.add(tuple(scope["client"]))
        await self.app(scope, receive, send)


def established(port: int) -> int:
    """ESTABLISHED TCP connections whose local port is ``port`` (the server's side of each)."""
    count = 0
    for table_path in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        try:
            with open(table_path, encoding="ascii") as f:
                next(f)
                for line in f:
                    fields = line.split()
                    if fields[3] == "01" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        count += 1
        except FileNotFoundError:
            continue
    return count


def rss_kib() -> float:
    gc.collect()
    return proc_status("VmRSS") / 1024


async def sign_in(
    provider: Provider, store: InMemoryStore, url: str, issuer: str, users: Sequence[str]
) -> None:
    """Each user connected, as the callback route leaves it: a token from the authorization
    server, kept sealed in the graph's store."""
    sealer = Sealer(KEY)
    for user in users:
        token = provider._issue(CLIENT_ID, ["read"], None, user)
        record = TokenRecord(
            user=user,
            server="api",
            issuer=issuer,
            access_token=token.access_token,
            token_endpoint=f"{issuer}/token",
            client_id=CLIENT_ID,
            resource=url,
            refresh_token=token.refresh_token,
            expires_at=time.time() + (token.expires_in or 3600),
            scopes=(token.scope or "").split(),
            auth_method="none",
            revocation_endpoint=f"{issuer}/revoke",
        )
        await save_tokens(store, sealer, record)


class Runs:
    """Each user's first run, in order: wall time, this process's CPU time (client and server
    both), and the part of the wall time spent in the garbage collector; ms."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.gc: list[float] = []
        self.offered: set[frozenset[str]] = set()
        """The tool sets the users' model calls were offered (by name)."""


async def run_users(agent: Any, model: ScriptedChatModel, users: Sequence[str], tag: str) -> Runs:
    """Each user's first run, one after another, on a thread of its own."""
    runs = Runs()
    for user in users:
        config = {"configurable": {"thread_id": f"{tag}-{user}", "langgraph_auth_user": {"identity": user}}}
        collecting, cpu = GC.ms, time.process_time()
        start = time.perf_counter()
        out = await agent.ainvoke({"messages": [HumanMessage("who am I?")]}, config)
        runs.wall.append((time.perf_counter() - start) * 1000)
        runs.cpu.append((time.process_time() - cpu) * 1000)
        runs.gc.append(GC.ms - collecting)
        answer = [m for m in out["messages"] if isinstance(m, ToolMessage)][-1]
        if answer.status != "success" or answer.content != f"user={user}":
            raise RuntimeError(f"{user}: whoami answered {answer.content!r} ({answer.status})")
        runs.offered.add(frozenset(model.calls[0].tools))
        model.calls.clear()  # (the model keeps every call: not the package's memory)
    return runs


async def wait_closed(pool: MCPPool, within: float) -> float:
    """Wait until the pool holds no user session (each closes once idle for its TTL), and their
    closing is done; seconds waited."""
    start = time.monotonic()
    while pool._threads.connections():  # the pool's own state: no event to wait on
        if time.monotonic() - start > within:
            raise RuntimeError(f"{len(pool._threads.connections())} user sessions still open after {within}s")
        await asyncio.sleep(0.05)
    await pool._threads.settled()
    return time.monotonic() - start


def latency_rows(phase: str, runs: Runs) -> list[list[str]]:
    """Wall and CPU time of the 1st and last user's runs, and medians of users 2..N and of the
    first and last tenth of the users."""
    rows = []
    for what, ms in (("wall", runs.wall), ("CPU", runs.cpu)):
        tenth = max(1, len(ms) // 10)
        rest = statistics.median(ms[1:] or ms)
        first, last = statistics.median(ms[:tenth]), statistics.median(ms[-tenth:])
        rows.append(
            [
                f"{phase} {what}",
                f"{ms[0]:.1f}",
                f"{ms[-1]:.1f} ({ms[-1] / ms[0]:.2f}x)",
                f"{rest:.1f} ({rest / ms[0]:.2f}x)",
                f"{first:.1f}",
                f"{last:.1f} ({last / first:.2f}x)",
                f"{max(ms):.1f}",
            ]
        )
    tenth = max(1, len(runs.gc) // 10)
    rows[0].append(f"{sum(runs.gc[:tenth]) / tenth:.1f} / {sum(runs.gc[-tenth:]) / tenth:.1f}")
    rows[1].append("")
    return rows


def traced_diff(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot, label: str, n: int) -> None:
    stats = after.compare_to(before, "filename")
    total = sum(s.size_diff for s in stats)
    print(f"\ntracemalloc, {label}: {total / 1024:,.0f} KiB more ({total / 1024 / n:.1f} KiB per user)")
    for s in stats[:15]:
        name = s.traceback[0].filename.split("site-packages/")[-1].replace(str(ROOT) + "/", "")
        print(f"  {s.size_diff / 1024:>10,.0f} KiB {s.count_diff:>+9,d} blocks  {name}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--distinct", type=int, default=10, help="users with a listing of their own")
    parser.add_argument("--protocol", default="auto", choices=["auto", "legacy"])
    parser.add_argument("--tracemalloc", action="store_true", help="trace allocations (slower)")
    ns = parser.parse_args()
    n = ns.users
    users = [user_name(i) for i in range(n)]
    own = distinct_indexes(n, ns.distinct)
    if ns.tracemalloc:
        tracemalloc.start(1)

    provider = Provider(token_ttl=24 * 3600)
    catalog = peruser.PerUserCatalog(tools={})
    catalog.named = False
    for i, user in enumerate(users):
        catalog.tools[user] = ["whoami", "reports", f"own_{i}"] if i in own else SHARED_TOOLS
    warm = "warmup"  # one run before the timed ones, with a listing of its own: code paths warm
    catalog.tools[warm] = ["whoami", "warmup_only"]
    gates: list[Gate] = []
    peers: list[Peers] = []

    def wrap(app: Any) -> Any:
        gates.append(Gate(app, provider, "http://127.0.0.1"))
        gates[-1].everything = True
        peers.append(Peers(gates[-1]))
        return peers[-1]

    async with AsyncExitStack() as stack:
        url = await stack.enter_async_context(serve_in_loop(peruser.build_server(catalog), "http", wrap=wrap))
        port = int(url.split(":")[2].split("/")[0])
        issuer = f"http://127.0.0.1:{port}"
        gates[0].issuer = issuer
        store = InMemoryStore()

        def agent_for(ttl: float) -> tuple[MCPPool, ScriptedChatModel, Any]:
            servers = load_connections(
                {
                    "api": {
                        "url": url,
                        "protocol": ns.protocol,
                        "timeout": 20,
                        "max_thread_sessions": n + 16,
                        "thread_session_ttl": ttl,
                        "oauth": {"redirect_uri": f"{issuer}/oauth/callback", "encryption_key": KEY},
                    }
                }
            )
            pool = MCPPool(servers)
            model = ScriptedChatModel([[("whoami", {})], "done"])
            return pool, model, create_mcp_agent(model, pool, checkpointer=InMemorySaver(), store=store)

        closed_pool, closed_model, closed_agent = agent_for(CLOSED_TTL)
        await stack.enter_async_context(closed_pool)
        open_pool, open_model, open_agent = agent_for(OPEN_TTL)
        await stack.enter_async_context(open_pool)
        await sign_in(provider, store, url, issuer, [warm])
        await run_users(closed_agent, closed_model, [warm], "warm")
        await run_users(open_agent, open_model, [warm], "warm")
        await wait_closed(closed_pool, CLOSE_DEADLINE)
        for seen in (catalog.listed, catalog.called, gates[0].seen_tokens, gates[0].users_seen):
            seen.clear()  # (what the fixture records per request)

        rss0 = rss_kib()
        snap0 = tracemalloc.take_snapshot() if ns.tracemalloc else None
        conns0 = established(port)
        start = time.perf_counter()
        await sign_in(provider, store, url, issuer, users)
        signin_s = time.perf_counter() - start
        rss_signed = rss_kib()

        start = time.perf_counter()
        closed = await run_users(closed_agent, closed_model, users, "closed")
        closed_s = time.perf_counter() - start
        waited = await wait_closed(closed_pool, CLOSE_DEADLINE)
        conns_closed = established(port)
        rss_closed = rss_kib()
        snap_closed = tracemalloc.take_snapshot() if ns.tracemalloc else None
        closed_sets = len(closed_agent.mcp.users._composed) - 1  # (less the warm-up user's)

        start = time.perf_counter()
        opened = await run_users(open_agent, open_model, users, "open")
        open_s = time.perf_counter() - start
        sessions_open = len(open_pool._threads.connections())
        conns_open = established(port)
        rss_open = rss_kib()
        snap_open = tracemalloc.take_snapshot() if ns.tracemalloc else None
        open_sets = len(open_agent.mcp.users._composed) - 1
        listed, called = len(catalog.listed), len(catalog.called)

    print(f"{n} users: {n - len(own)} list the same {len(SHARED_TOOLS)} tools, {len(own)} their own listing")
    print(f"protocol {ns.protocol}; {load_average()}")
    print(f"signing in {n} users: {signin_s:.2f} s; runs: closed phase {closed_s:.1f} s, open {open_s:.1f} s")
    print(
        f"server saw {listed} listings, {called} calls, {len(peers[0].seen)} TCP connections accepted in all"
    )
    print(
        "\nA user's first run (model call offered their tools + whoami + model call), ms; "
        "CPU: this process's (client and server)"
    )
    print(
        table(
            [
                *["phase", "1st user", f"user {n}", f"median 2..{n}", "median 1st tenth"],
                *["median last tenth", "max", "mean GC ms 1st / last tenth"],
            ],
            [*latency_rows("closed (ttl 1 s)", closed), *latency_rows("open (ttl 600 s)", opened)],
        )
    )
    print("\nTool sets")
    print(
        table(
            ["phase", "distinct tool sets built", "distinct tool sets offered", "user sessions open at end"],
            [
                ["closed", closed_sets, len(closed.offered), f"0 (after {waited:.1f} s)"],
                ["open", open_sets, len(opened.offered), sessions_open],
            ],
        )
    )
    print("\nMemory (VmRSS after gc.collect()) and TCP connections to the server (ESTABLISHED, server side)")
    print(
        table(
            ["when", "RSS MiB", "KB per user vs before", "TCP connections"],
            [
                ["before any user", f"{rss0 / 1024:.1f}", "", conns0],
                [
                    f"{n} signed in (tokens stored)",
                    f"{rss_signed / 1024:.1f}",
                    f"{(rss_signed - rss0) / n:.1f}",
                    "",
                ],
                [
                    "each ran once, sessions closed",
                    f"{rss_closed / 1024:.1f}",
                    f"{(rss_closed - rss0) / n:.1f}",
                    conns_closed,
                ],
                [
                    "each ran once more on a 2nd pool, sessions open",
                    f"{rss_open / 1024:.1f}",
                    f"{(rss_open - rss_closed) / n:.1f} (vs the row above)",
                    conns_open,
                ],
            ],
        )
    )
    if snap0 is not None and snap_closed is not None and snap_open is not None:
        traced_diff(snap0, snap_closed, "signed in, ran once, sessions closed (vs before any user)", n)
        traced_diff(snap_closed, snap_open, "2nd pool, sessions open (vs sessions closed)", n)


if __name__ == "__main__":
    quiet()
    logging.getLogger("langgraph_mcp").setLevel(logging.WARNING)
    asyncio.run(main())
