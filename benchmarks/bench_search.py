"""Tool search over a large catalog: what the model receives per turn, search latency, and
retrieval quality.

    uv run python benchmarks/bench_search.py [--servers 10] [--tools 100] [--repeats 20]

Catalog: ``--servers`` in-process MCP servers of ``--tools`` generated tools each (1,000 by
default: ten business domains, each ten objects times ten actions, with a description and
arguments of their own), plus in-process copies of the reference servers' tools
(``benchmarks/reference_tools.json``: filesystem, memory, everything, time and git, captured
from the servers the interoperability tests start; names, descriptions and argument names as
they list them, every argument a string).

1. Tool definitions per model turn: a ``create_mcp_agent`` run with a scripted model (search,
   call the revealed tool, answer), with and without ``tool_search``; the figure is the
   characters of the JSON function definitions (``convert_to_openai_tool``: name, description,
   parameters) bound for each model call. Characters only: tiktoken is not a dependency, and
   its encodings are downloaded at run time, which this machine cannot do.
2. Search latency: building the index once, then ``--repeats`` rounds of every request of the
   retrieval set through the search tool's ranking (no model, no wire).
3. Retrieval quality: recall@5 over ``benchmarks/search_requests.json`` (realistic requests,
   each labelled with the tool(s) that answer it), ranked over the whole catalog.
4. Processes started (lazy servers): the generated servers run as stdio processes
   (``benchmarks/search_catalog.py``, each writing its pid to a folder when it starts); a ``create_mcp_agent``
   run with a scripted model (search for invoices, call the revealed ``list_invoice``, answer)
   counts the server processes started by each model call: the first one is before any tool
   call, the third after the first MCP tool call. Three runs: servers not lazy; ``lazy: true``
   with an empty tool catalog (the first run, which fills it); ``lazy: true`` with the catalog
   kept by that run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _common import quiet  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402
from search_catalog import function, synthetic  # noqa: E402

from langgraph_mcp import MCPPool, create_mcp_agent  # noqa: E402
from langgraph_mcp._catalog.bind import ToolSet  # noqa: E402
from langgraph_mcp._catalog.search import ToolSearcher  # noqa: E402
from langgraph_mcp.options import ToolSearch  # noqa: E402
from langgraph_mcp.testing import ScriptedChatModel  # noqa: E402

HERE = Path(__file__).parent


def reference() -> dict[str, MCPServer]:
    made: dict[str, MCPServer] = {}
    for name, tools in json.loads((HERE / "reference_tools.json").read_text()).items():
        server = MCPServer(name)
        for tool in tools:
            server.add_tool(
                function(tool["name"], tool["arguments"]),
                name=tool["name"],
                title=tool.get("title"),
                description=tool["description"],
            )
        made[name] = server
    return made


class Measured(ScriptedChatModel):
    """Records, per model call, the characters of the tool definitions it was bound with."""

    sizes: ClassVar[list[int]] = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        size = len(json.dumps([convert_to_openai_tool(t) for t in tools]))
        bound = super().bind_tools(tools, **kwargs)
        Measured.sizes.append(size)
        return bound


async def per_turn(servers: dict[str, MCPServer], search: bool) -> list[int]:
    commit = ("git_commit", {"message": "m", "repo_path": "."}, "c1")
    turns: list[Any] = [[commit]]
    if search:
        turns = [[("search_tools", {"query": "commit the staged changes"}, "s1")], [commit]]
    model = Measured(turns=[*turns, "done"])
    Measured.sizes.clear()
    agent = create_mcp_agent(model, servers, tool_search=search)
    try:
        await agent.ainvoke({"messages": [("user", "what changed?")]})
    finally:
        await agent.mcp.aclose()
    return list(Measured.sizes)


class Counting(ScriptedChatModel):
    """Records, per model call, how many server processes have started (pid files)."""

    pid_dir: str = ""
    started: ClassVar[list[int]] = []

    def _play(self, messages: Any) -> Any:
        Counting.started.append(len(os.listdir(self.pid_dir)))
        return super()._play(messages)


def stdio_servers(count: int, tools: int, pids: str, *, lazy: bool) -> dict[str, Any]:
    names = list(synthetic(count, 1))  # the same names as the generated catalog's
    return {
        name: {
            "command": sys.executable,
            "args": [str(HERE / "search_catalog.py"), str(i), str(tools)],
            "env": {"SEARCH_PID_DIR": pids},  # not part of what identifies the server
            "lazy": lazy,
        }
        for i, name in enumerate(names)
    }


async def processes(count: int, tools: int) -> list[tuple[str, list[int], float]]:
    """Processes started by each model call: servers not lazy, lazy with an empty catalog (it
    fills it), lazy with the catalog kept; and seconds until the run's answer."""
    turns: list[Any] = [
        [("search_tools", {"query": "list the invoices of the billing system", "limit": 5}, "s1")],
        [("list_invoice", {"filter": "open"}, "c1")],
        "done",
    ]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, lazy, catalog in (
            ("not lazy", False, Path(tmp, "unused.json")),
            ("lazy, empty catalog (first run)", True, Path(tmp, "catalog.json")),
            ("lazy, catalog kept by the first run", True, Path(tmp, "catalog.json")),
        ):
            pids = Path(tempfile.mkdtemp(dir=tmp))
            Counting.started.clear()
            model = Counting(turns=turns, pid_dir=str(pids))
            agent = create_mcp_agent(
                model,
                stdio_servers(count, tools, str(pids), lazy=lazy),
                tool_search=ToolSearch(catalog=catalog),
            )
            started = time.perf_counter()
            try:
                await agent.ainvoke({"messages": [("user", "which invoices are open?")]})
            finally:
                await agent.mcp.aclose()
            rows.append((label, list(Counting.started), time.perf_counter() - started))
    return rows


def rank_of(found: list[str], wanted: list[str]) -> int | None:
    hits = [i for i, ref in enumerate(found) if ref in wanted]
    return hits[0] + 1 if hits else None


async def main() -> None:
    quiet()
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--servers", type=int, default=10)
    p.add_argument("--tools", type=int, default=100)
    p.add_argument("--repeats", type=int, default=20)
    args = p.parse_args()
    servers = {**synthetic(args.servers, args.tools), **reference()}
    requests = json.loads((HERE / "search_requests.json").read_text())["requests"]

    without = await per_turn(servers, search=False)
    with_search = await per_turn(servers, search=True)
    async with MCPPool(servers) as pool:
        toolset = ToolSet(pool, reserved=["search_tools"])
        searcher = ToolSearcher(toolset, ToolSearch())
        tools = await toolset.tools()
        started = time.perf_counter()
        await searcher.search("warm up", 5, None)  # builds the index
        build = time.perf_counter() - started
        times: list[float] = []
        ranks: list[tuple[dict[str, Any], int | None]] = []
        for round_ in range(args.repeats):
            for request in requests:
                started = time.perf_counter()
                found = await searcher.search(request["query"], 5, None)
                times.append(time.perf_counter() - started)
                if round_ == 0:
                    ranks.append(
                        (request, rank_of([f"{t.server}/{t.mcp_name}" for t in found], request["tools"]))
                    )

    print(f"catalog: {len(tools)} tools on {len(servers)} servers")
    print("\n## Tool definitions the model receives per turn (characters of JSON)\n")
    print("| turn | all tools | tool_search | share |")
    print("|---|---|---|---|")
    for n, size in enumerate(with_search):
        print(f"| {n + 1} | {without[0]:,} | {size:,} | {size / without[0]:.2%} |")
    print("\n## Search latency\n")
    times.sort()
    print(f"index build (first search, {len(tools)} tools): {build * 1000:.1f} ms")
    print(
        f"search ({len(times)} queries): median {statistics.median(times) * 1000:.2f} ms, "
        f"p95 {times[int(len(times) * 0.95)] * 1000:.2f} ms, max {times[-1] * 1000:.2f} ms"
    )
    print("\n## Retrieval quality (recall@5, recall@1)\n")
    print("| requests | n | recall@5 | recall@1 |")
    print("|---|---|---|---|")
    for label, subset in (
        ("reference servers", [r for r in ranks if r[0]["catalog"] == "reference"]),
        ("synthetic catalog", [r for r in ranks if r[0]["catalog"] == "synthetic"]),
        ("all", ranks),
    ):
        at5 = sum(1 for _, rank in subset if rank is not None) / len(subset)
        at1 = sum(1 for _, rank in subset if rank == 1) / len(subset)
        print(f"| {label} | {len(subset)} | {at5:.3f} | {at1:.3f} |")
    missed = [r["query"] for r, rank in ranks if rank is None]
    if missed:
        print("\nnot in the top 5: " + "; ".join(missed))
    print(
        f"\n## Server processes started ({args.servers} stdio servers, {args.servers * args.tools:,} tools)\n"
    )
    print(
        "| run | model call 1 (no tool called yet) | 2 (after the search) | 3 (after the MCP call) | run s |"
    )
    print("|---|---|---|---|---|")
    for label, counts, seconds in await processes(args.servers, args.tools):
        print(f"| {label} | " + " | ".join(map(str, counts[:3])) + f" | {seconds:.1f} |")


if __name__ == "__main__":
    asyncio.run(main())
