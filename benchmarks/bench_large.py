"""Large tool results over stdio and streamable HTTP: time, client peak memory, and the latency
of a small call while a large result streams in.

    uv run python benchmarks/bench_large.py [--sizes 1 10 50] [--busy-mb 20] [--paths ...]

Fixture: ``tests/servers/bulky.py`` (the ``bulky`` tool returns about N million characters of
ASCII text; it is built ahead by ``prepare``, so the timing leaves out building it). The HTTP
server runs in its own process on 127.0.0.1 (a free port), the stdio one as the client's child.

Paths (the client side of one ``tools/call``):

* ``sdk-stdio``     bare ``mcp.Client.call_tool`` over the SDK's own ``stdio_client`` (baseline)
* ``ours-stdio``    bare ``mcp.Client.call_tool`` over ``langgraph_mcp``'s stdio transport
* ``sdk-http``      bare ``mcp.Client.call_tool`` over the SDK's streamable HTTP transport (no
                    cap on SSE events)
* ``ours-http``     bare ``mcp.Client.call_tool`` over ``langgraph_mcp``'s streamable HTTP
                    transport (the SDK's, with the package's response reader)
* ``tool-stdio``    ``MCPTool.ainvoke`` -> ``ToolMessage`` through an ``MCPPool`` over stdio
* ``tool-http``     the same over streamable HTTP

Each (path, size) runs in a fresh Python process, so its peak RSS is its own: the figure is the
client process's peak resident memory during the call minus its resident memory just before it
(Linux: the peak is reset through ``/proc/self/clear_refs`` first). The server's memory is not
counted (it is another process). Each case runs ``--repeats`` times (``sdk-stdio``:
``--sdk-stdio-repeats``), the paths taking turns (one run of each, then the next round), so a
change in the machine's load falls on every path alike; the tables show the median time and the
median peak.

The busy-latency section times the ``small`` tool on an idle session, then again when started
as soon as the server says a ``--busy-mb`` result is on its way (on the same session).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _common import proc_status, reset_peak  # noqa: E402

from tests.conftest_servers import spawn_http_server, stdio_params  # noqa: E402
from tests.servers.bulky import bulky_length  # noqa: E402

PATHS = ("sdk-stdio", "ours-stdio", "sdk-http", "ours-http", "tool-stdio", "tool-http")
BUSY_PATHS = ("sdk-stdio", "ours-stdio", "tool-stdio", "sdk-http", "ours-http", "tool-http")
KIND = "ascii"
CHILD_TIMEOUT = 900.0
OnSending = Callable[[], None] | None


# -- the child process: one path, one measurement ------------------------------------------------


async def _open(stack: AsyncExitStack, path: str, url: str) -> Callable[..., Awaitable[Any]]:
    """Open ``path``'s session; return ``call(name, args, on_sending=None) -> text``."""
    params = stdio_params("bulky")
    if path.startswith("tool-"):
        from langgraph_mcp import MCPPool, load_mcp_tools

        where = params if path == "tool-stdio" else {"url": url}
        config = {**where, "log_level": "info"}
        pool = await stack.enter_async_context(MCPPool({"bulky": config}))
        tools = {t.name: t for t in await load_mcp_tools(pool)}
        server_log = logging.getLogger("langgraph_mcp.server.bulky")
        server_log.setLevel(logging.INFO)
        server_log.propagate = False

        async def tool_call(name: str, args: dict[str, Any], on_sending: OnSending = None) -> Any:
            handler: logging.Handler | None = None
            if on_sending is not None:
                handler = _OnMessage("sending", on_sending)
                server_log.addHandler(handler)
            try:
                call = {"name": name, "args": args, "id": "c1", "type": "tool_call"}
                message = await tools[name].ainvoke(call)
            finally:
                if handler is not None:
                    server_log.removeHandler(handler)
            return message.content

        return tool_call

    from mcp import Client

    target: Any
    if path == "sdk-http":
        from mcp.client.streamable_http import streamable_http_client

        # The SDK caps an SSE event at 1 MiB by default: a larger result sent as an event (as it
        # is when the call asks for progress) failed as a lost connection.
        target = streamable_http_client(url, max_sse_event_size=None)
    elif path == "ours-http":
        import httpx2

        from langgraph_mcp._compat.mcp_http import streamable_http
        from langgraph_mcp._session.stdio import MAX_MESSAGE_BYTES

        http = await stack.enter_async_context(httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=None)))
        target = streamable_http(url, http_client=http, max_message_bytes=MAX_MESSAGE_BYTES)
    elif path == "sdk-stdio":
        from mcp.client.stdio import StdioServerParameters, stdio_client

        devnull = stack.enter_context(open(os.devnull, "w"))  # noqa: ASYNC230, SIM115
        target = stdio_client(StdioServerParameters(**params), errlog=devnull)
    else:
        from langgraph_mcp._session.stdio import StdioParams, stdio_transport

        target = stdio_transport(StdioParams(**params), server="bulky")
    client = await stack.enter_async_context(Client(target))

    async def client_call(name: str, args: dict[str, Any], on_sending: OnSending = None) -> Any:
        async def progress(done: float, total: float | None, message: str | None) -> None:
            if on_sending is not None:
                on_sending()

        result = await client.call_tool(name, args, progress_callback=progress if on_sending else None)
        return result.content[0].text  # type: ignore[union-attr]

    return client_call


class _OnMessage(logging.Handler):
    def __init__(self, prefix: str, fn: Callable[[], None]) -> None:
        super().__init__()
        self._prefix, self._fn = prefix, fn

    def emit(self, record: logging.LogRecord) -> None:
        if prefix_in(record.getMessage(), self._prefix):
            self._fn()


def prefix_in(text: str, prefix: str) -> bool:
    return text.startswith(prefix) or text.startswith(f"[bulky] {prefix}")


async def child_size(path: str, mb: float, url: str) -> dict[str, Any]:
    async with AsyncExitStack() as stack:
        call = await _open(stack, path, url)
        expected = await call("prepare", {"mb": mb, "kind": KIND})
        assert int(expected.split()[0]) == bulky_length(mb, KIND), expected
        await call("bulky", {"mb": 0.01, "kind": KIND})  # warm up the code path
        await call("small", {})
        gc.collect()
        before = proc_status("VmRSS")
        reset = reset_peak()
        start = time.perf_counter()
        text = await call("bulky", {"mb": mb, "kind": KIND})
        seconds = time.perf_counter() - start
        peak = proc_status("VmHWM")
        assert len(text) == bulky_length(mb, KIND), (len(text), bulky_length(mb, KIND))
        del text
    return {"seconds": seconds, "rss_before": before, "peak": peak, "increase": peak - before, "reset": reset}


async def child_busy(path: str, mb: float, url: str, repeats: int) -> dict[str, Any]:
    async with AsyncExitStack() as stack:
        call = await _open(stack, path, url)
        await call("prepare", {"mb": mb, "kind": KIND})
        for _ in range(5):
            await call("small", {})
        idle = []
        for _ in range(20):
            start = time.perf_counter()
            await call("small", {})
            idle.append(time.perf_counter() - start)
        busy, big = [], []
        for _ in range(repeats):
            sending = asyncio.Event()
            start = time.perf_counter()
            large = asyncio.ensure_future(call("bulky", {"mb": mb, "kind": KIND}, sending.set))
            await sending.wait()
            small_start = time.perf_counter()
            assert await call("small", {}) == "small"
            busy.append(time.perf_counter() - small_start)
            assert len(await large) == bulky_length(mb, KIND)
            big.append(time.perf_counter() - start)
    return {"idle": statistics.median(idle), "busy": statistics.median(busy), "big": statistics.median(big)}


# -- the parent: run every case in its own process, print the tables ----------------------------


def run_child(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", *args],
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
        cwd=ROOT,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        print(f"case {args[:3]} failed:\n{done.stderr[-3000:]}", file=sys.stderr)
        return {"error": last[:120]}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def available(path: str) -> bool:
    if path != "ours-stdio":
        return True
    try:
        import langgraph_mcp._session.stdio  # noqa: F401
    except ImportError:
        return False
    return True


async def main(args: argparse.Namespace) -> None:
    paths = [p for p in args.paths if available(p)]
    sizes: list[float] = args.sizes
    results: dict[tuple[str, float], dict[str, Any]] = {}
    busy: dict[str, dict[str, Any]] = {}
    async with spawn_http_server("bulky") as url:
        for mb in sizes:
            runs: dict[str, list[dict[str, Any]]] = {}
            failed: dict[str, dict[str, Any]] = {}
            todo = [p for p in paths if not (p == "sdk-stdio" and mb > args.sdk_stdio_max)]
            for turn in range(max(args.repeats, args.sdk_stdio_repeats)):
                for path in todo:  # the paths take turns: one run of each per round
                    repeats = args.sdk_stdio_repeats if path == "sdk-stdio" else args.repeats
                    if turn >= repeats or path in failed:
                        continue
                    out = await asyncio.to_thread(run_child, "size", path, str(mb), url)
                    if "error" in out:
                        print(f"{path:>10} {mb:>5g} MB: failed: {out['error']}", flush=True)
                        failed[path] = out
                        continue
                    runs.setdefault(path, []).append(out)
                    seconds, peak = out["seconds"], out["increase"] / 1e6
                    print(f"{path:>10} {mb:>5g} MB: {seconds:8.3f} s, peak +{peak:7.1f} MB", flush=True)
            for path in todo:
                results[(path, mb)] = median_run(runs[path]) if path in runs else failed[path]
        if args.busy_mb:
            for path in [p for p in BUSY_PATHS if p in paths]:
                out = await asyncio.to_thread(
                    run_child, "busy", path, str(args.busy_mb), url, str(args.busy_repeats)
                )
                busy[path] = out
                if "error" in out:
                    print(f"{path:>10} small call while {args.busy_mb:g} MB streams: failed", flush=True)
                    continue
                print(
                    f"{path:>10} small call: idle {out['idle'] * 1000:.2f} ms, while {args.busy_mb:g} MB "
                    f"streams {out['busy'] * 1000:.1f} ms (the large call {out['big']:.3f} s)",
                    flush=True,
                )
    print()
    print_tables(paths, sizes, results, busy, args.busy_mb)


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median time and the median peak of several runs of one case."""
    return {
        "seconds": statistics.median(r["seconds"] for r in runs),
        "increase": statistics.median(r["increase"] for r in runs),
        "runs": len(runs),
    }


def print_tables(
    paths: list[str],
    sizes: list[float],
    results: dict[tuple[str, float], dict[str, Any]],
    busy: dict[str, dict[str, Any]],
    busy_mb: float,
) -> None:
    def cell(path: str, mb: float) -> str:
        out = results.get((path, mb))
        if out is None:
            return "-"
        if "error" in out:
            return "failed"
        return f"{out['seconds']:.2f} s / +{out['increase'] / 1e6:.0f} MB"

    print("| path | " + " | ".join(f"{mb:g} MB" for mb in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for path in paths:
        print(f"| `{path}` | " + " | ".join(cell(path, mb) for mb in sizes) + " |")
    pairs = [
        ("sdk-stdio", "sdk-http"),
        ("ours-stdio", "sdk-http"),
        ("ours-stdio", "ours-http"),
        ("tool-stdio", "tool-http"),
    ]
    for stdio, http in pairs:
        if stdio not in paths or http not in paths:
            continue
        row = []
        for mb in sizes:
            a, b = results.get((stdio, mb), {}), results.get((http, mb), {})
            row.append(f"{a['seconds'] / b['seconds']:.2f}x" if "seconds" in a and "seconds" in b else "-")
        print(f"| time `{stdio}` / `{http}` | " + " | ".join(row) + " |")
    if busy:
        print()
        size = f"{busy_mb:g} MB"
        print(f"| path | small call, idle | small call while {size} streams | that {size} call |")
        print("|---|---|---|---|")
        for path, out in busy.items():
            if "error" in out:
                print(f"| `{path}` | failed | failed | failed |")
                continue
            idle, during = out["idle"] * 1000, out["busy"] * 1000
            print(f"| `{path}` | {idle:.2f} ms | {during:.1f} ms | {out['big']:.3f} s |")


def child_main(argv: list[str]) -> None:
    what, path, mb, url, *rest = argv
    if what == "size":
        out = asyncio.run(child_size(path, float(mb), url))
    else:
        out = asyncio.run(child_busy(path, float(mb), url, int(rest[0])))
    print(json.dumps(out))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child_main(sys.argv[2:])
        sys.exit(0)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1.0, 10.0, 50.0])
    parser.add_argument("--paths", nargs="+", choices=PATHS, default=list(PATHS))
    parser.add_argument("--busy-mb", type=float, default=20.0, help="0 leaves out the busy-latency section")
    parser.add_argument("--busy-repeats", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3, help="processes per case (median reported)")
    parser.add_argument("--sdk-stdio-repeats", type=int, default=1, help="the same for sdk-stdio (slow)")
    parser.add_argument(
        "--sdk-stdio-max", type=float, default=1000.0, help="skip sdk-stdio above this many MB (it is slow)"
    )
    asyncio.run(main(parser.parse_args()))
