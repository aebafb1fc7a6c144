"""The math demo server: arithmetic and statistics, and a slow tool that reports progress."""

from __future__ import annotations

import statistics

import anyio
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

server = MCPServer("math", instructions="Exact arithmetic and descriptive statistics.")


class Summary(BaseModel):
    count: int
    mean: float
    median: float
    stdev: float


@server.tool()
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


@server.tool()
def multiply(a: float, b: float) -> float:
    """Multiply two numbers."""
    return a * b


@server.tool()
def describe(values: list[float]) -> Summary:
    """Count, mean, median and standard deviation of a list of numbers."""
    if not values:
        raise ValueError("values must not be empty")
    stdev = statistics.stdev(values) if len(values) > 1 else 0.0
    return Summary(
        count=len(values),
        mean=statistics.fmean(values),
        median=statistics.median(values),
        stdev=stdev,
    )


@server.tool()
async def count_primes(limit: int, ctx: Context) -> int:
    """Count the primes below ``limit`` (slowly, reporting progress as it goes)."""
    found = 0
    chunk = max(1, limit // 40)
    for start in range(0, limit, chunk):
        found += sum(1 for n in range(start, min(start + chunk, limit)) if _is_prime(n))
        await ctx.report_progress(min(start + chunk, limit), limit, f"{found} primes so far")
        await anyio.sleep(0.02)  # a real server would be doing I/O here
    return found


def _is_prime(n: int) -> bool:
    if n < 2:
        return False
    return all(n % d for d in range(2, int(n**0.5) + 1))
