"""A small MCP server for the examples: arithmetic and statistics over stdio.

Run it on its own with ``python examples/servers/math_server.py`` (stdio) or
``python examples/servers/math_server.py --http 8765`` (streamable HTTP).
"""

from __future__ import annotations

import argparse
import statistics

from mcp.server.mcpserver import MCPServer
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


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT")
    ns = parser.parse_args()
    if ns.http:
        server.run("streamable-http", host="127.0.0.1", port=ns.http)
    else:
        server.run("stdio")
