"""Shared by the benchmark scripts: fixture servers, graphs, statistics and tables."""

from __future__ import annotations

import gc
import logging
import os
import resource
import statistics
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.conftest_servers import spawn_http_server, stdio_params  # noqa: E402

TRANSPORTS = ("stdio", "http")
PROTOCOLS = ("legacy", "auto")


def quiet() -> None:
    """Keep the SDK's and httpx2's per-request logging out of the tables."""
    logging.getLogger("mcp").setLevel(logging.ERROR)
    logging.getLogger("httpx2").setLevel(logging.WARNING)


def settle() -> None:
    """Start a timed section with a collected, frozen heap."""
    gc.collect()
    gc.freeze()


def sdk_stdio(module: str, *args: str) -> StdioServerParameters:
    """The bare SDK's parameters for ``python -m tests.servers.<module> *args`` over stdio."""
    params = stdio_params(module, *args)
    return StdioServerParameters(
        command=params["command"], args=params["args"], cwd=params["cwd"], env=params["env"]
    )


@asynccontextmanager
async def server(transport: str, module: str = "demo") -> AsyncIterator[tuple[dict[str, Any], Any]]:
    """A fixture server: ``(connection config for langgraph_mcp, target for mcp.Client)``.

    stdio: both spawn their own child; http: one server process on a free loopback port.
    """
    if transport == "stdio":
        yield stdio_params(module), sdk_stdio(module)
    elif transport == "http":
        async with spawn_http_server(module) as url:
            yield {"url": url}, url
    else:
        raise ValueError(f"transport must be one of {TRANSPORTS}, got {transport!r}")


def one_node_graph(node: Any, checkpointer: Any = None) -> Any:
    """``START -> tools`` over ``MessagesState``."""
    from langgraph.graph import START, MessagesState, StateGraph

    builder = StateGraph(MessagesState)
    builder.add_node(node)
    builder.add_edge(START, "tools")
    return builder.compile(checkpointer=checkpointer)


def percentile(samples: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``samples``, nearest rank."""
    ordered = sorted(samples)
    rank = max(1, round(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples)


def rss_mib() -> float:
    """This process's resident set size now (Linux), MiB."""
    with open(f"/proc/{os.getpid()}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def proc_status(field: str) -> int:
    """A memory field of this process's ``/proc/self/status`` (``VmRSS``, ``VmHWM``...), bytes."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def reset_peak() -> bool:
    """Reset this process's peak resident set size (``VmHWM``); whether the kernel allowed it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def peak_rss_mib() -> float:
    """This process's peak resident set size so far (``ru_maxrss``, KiB on Linux), MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} CPUs"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table (cells formatted by the caller)."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
