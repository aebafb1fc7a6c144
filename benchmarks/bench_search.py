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
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _common import quiet  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402

from langgraph_mcp import MCPPool, create_mcp_agent  # noqa: E402
from langgraph_mcp._search import ToolSearcher  # noqa: E402
from langgraph_mcp._toolset import ToolSet  # noqa: E402
from langgraph_mcp.options import ToolSearch  # noqa: E402
from langgraph_mcp.testing import ScriptedChatModel  # noqa: E402

HERE = Path(__file__).parent
DOMAINS: dict[str, list[str]] = {
    "crm": [
        "contact",
        "lead",
        "account",
        "opportunity",
        "deal",
        "note",
        "task",
        "campaign",
        "segment",
        "pipeline",
    ],
    "billing": [
        "invoice",
        "payment",
        "subscription",
        "refund",
        "customer",
        "coupon",
        "price",
        "tax_rate",
        "credit_note",
        "payout",
    ],
    "calendar": [
        "event",
        "calendar",
        "attendee",
        "reminder",
        "room",
        "availability",
        "invitation",
        "recurrence",
        "timezone_rule",
        "booking",
    ],
    "storage": [
        "bucket",
        "object",
        "folder",
        "snapshot",
        "volume",
        "share_link",
        "lifecycle_rule",
        "replica",
        "quota",
        "upload",
    ],
    "tickets": [
        "ticket",
        "comment",
        "assignee",
        "label",
        "sla",
        "queue",
        "macro",
        "escalation",
        "attachment",
        "survey",
    ],
    "inventory": [
        "product",
        "stock_level",
        "warehouse",
        "supplier",
        "purchase_order",
        "shipment",
        "sku",
        "batch",
        "transfer",
        "stocktake",
    ],
    "analytics": [
        "dashboard",
        "report",
        "metric",
        "saved_query",
        "chart",
        "funnel",
        "cohort",
        "alert",
        "dataset",
        "export_job",
    ],
    "hr": [
        "employee",
        "leave_request",
        "payslip",
        "position",
        "candidate",
        "interview",
        "review",
        "benefit",
        "timesheet",
        "department",
    ],
    "messaging": [
        "channel",
        "message",
        "thread",
        "reaction",
        "direct_message",
        "user_group",
        "webhook",
        "emoji",
        "pin",
        "status",
    ],
    "devops": [
        "deployment",
        "pipeline_run",
        "container",
        "cluster",
        "secret",
        "log_stream",
        "incident",
        "build",
        "environment",
        "release",
    ],
}
ACTIONS: list[tuple[str, str, list[str]]] = [
    ("list", "List the {o}s of the {d} system, with optional filters.", ["filter", "limit"]),
    ("get", "Get one {o} of the {d} system by its id.", ["{k}_id"]),
    ("create", "Create a new {o} in the {d} system.", ["fields"]),
    ("update", "Update fields of an existing {o} in the {d} system.", ["{k}_id", "fields"]),
    ("delete", "Delete a {o} from the {d} system permanently.", ["{k}_id"]),
    ("search", "Search the {o}s of the {d} system by free text.", ["query", "limit"]),
    ("archive", "Archive a {o} of the {d} system: hidden from lists but kept.", ["{k}_id"]),
    ("export", "Export the {o}s of the {d} system as a CSV file.", ["filter", "format"]),
    ("count", "Count the {o}s of the {d} system that match a filter.", ["filter"]),
    ("history", "Show the change history of a {o} in the {d} system.", ["{k}_id", "since"]),
]


def _function(name: str, arguments: list[str]) -> Any:
    params = [
        inspect.Parameter(a, inspect.Parameter.KEYWORD_ONLY, annotation=str, default="") for a in arguments
    ]

    def fn(**kwargs: Any) -> str:
        return f"{name}:" + json.dumps(kwargs, sort_keys=True)

    fn.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    fn.__name__ = name.replace("-", "_")
    return fn


def synthetic(servers: int, per_server: int) -> dict[str, MCPServer]:
    """``servers`` servers of ``per_server`` tools (domains and objects repeat past ten)."""
    made: dict[str, MCPServer] = {}
    domains = list(DOMAINS.items())
    for s in range(servers):
        domain, objects = domains[s % len(domains)]
        name = domain if s < len(domains) else f"{domain}{s // len(domains)}"
        server = MCPServer(name)
        for t in range(per_server):
            key = objects[t % len(objects)]
            verb, text, arguments = ACTIONS[(t // len(objects)) % len(ACTIONS)]
            tool = f"{verb}_{key}" if t < len(objects) * len(ACTIONS) else f"{verb}_{key}_{t}"
            args = [a.format(k=key) for a in arguments]
            description = text.format(o=key.replace("_", " "), d=domain)
            server.add_tool(_function(tool, args), name=tool, description=description)
        made[name] = server
    return made


def reference() -> dict[str, MCPServer]:
    made: dict[str, MCPServer] = {}
    for name, tools in json.loads((HERE / "reference_tools.json").read_text()).items():
        server = MCPServer(name)
        for tool in tools:
            server.add_tool(
                _function(tool["name"], tool["arguments"]),
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


if __name__ == "__main__":
    asyncio.run(main())
