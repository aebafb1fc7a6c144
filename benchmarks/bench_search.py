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
   each labelled with the tool(s) that answer it), ranked over the whole catalog: by BM25 alone,
   and fused with a ranking by meaning (``ToolSearch(embeddings=...)``, reciprocal rank fusion)
   for two deterministic offline embeddings: character trigrams hashed into 512 dimensions
   (:class:`Trigrams`: shares sub-words, knows no synonyms), and a random vector per text
   (:class:`Noise`, as langchain_core's ``DeterministicFakeEmbedding``, which needs numpy: what
   fusing with a ranking that knows nothing costs). No real embedding model runs on this machine
   (no network beyond the package registries, no model weights on disk): ``--embeddings
   module:Class`` measures one where it can run (e.g. ``langchain_openai:OpenAIEmbeddings``).
4. Processes started (lazy servers): the generated servers run as stdio processes
   (``benchmarks/search_catalog.py``, each writing its pid to a folder when it starts); a ``create_mcp_agent``
   run with a scripted model (a search whose answers span several servers, call the revealed
   ``list_invoice``, answer) counts the server processes started by each model call: the first
   one is before any tool call, the second after the search, the third after the first MCP tool
   call; and how many servers the search revealed tools of. Three runs: servers not lazy; ``lazy: true``
   with an empty tool catalog (the first run, which fills it); ``lazy: true`` with the catalog
   kept by that run.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any, ClassVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _common import quiet  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402
from langchain_core.messages import ToolMessage  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402
from search_catalog import function, synthetic  # noqa: E402

from langgraph_mcp import MCPPool, create_mcp_agent  # noqa: E402
from langgraph_mcp._catalog.bind import ToolSet  # noqa: E402
from langgraph_mcp._catalog.search import ToolSearcher  # noqa: E402
from langgraph_mcp._catalog.view import ToolView  # noqa: E402
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


class Trigrams(Embeddings):
    """A deterministic offline embedding: each word's character trigrams (``#word#``) and the word
    itself, hashed into 512 dimensions. Similar where texts share sub-words ("deleting" and
    "delete"); blind to synonyms ("remove" and "delete")."""

    dims = 512

    def _vector(self, text: str) -> list[float]:
        out = [0.0] * self.dims
        for word in re.findall(r"[a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower()):
            out[zlib.crc32(word.encode()) % self.dims] += 1.0
            padded = f"#{word}#"
            for i in range(len(padded) - 2):
                out[zlib.crc32(padded[i : i + 3].encode()) % self.dims] += 0.5
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


class Noise(Embeddings):
    """A random unit-free vector per text (seeded by the text): a ranking that knows nothing."""

    dims = 512

    def _vector(self, text: str) -> list[float]:
        rng = random.Random(zlib.crc32(text.encode()))
        return [rng.gauss(0.0, 1.0) for _ in range(self.dims)]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


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


SPANNING = "list the open invoices and the support tickets and contacts about them"
"""A search whose answers span several servers (billing, tickets, crm)."""


async def processes(count: int, tools: int) -> list[tuple[str, list[int], float, int]]:
    """Processes started by each model call: servers not lazy, lazy with an empty catalog (it
    fills it), lazy with the catalog kept; seconds until the run's answer; and how many servers
    the search revealed tools of."""
    turns: list[Any] = [
        [("search_tools", {"query": SPANNING, "limit": 5}, "s1")],
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
                out = await agent.ainvoke({"messages": [("user", "which invoices are open?")]})
            finally:
                await agent.mcp.aclose()
            [found] = [m for m in out["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "s1"]
            servers = len({t["server"] for t in found.artifact["tools"]})
            rows.append((label, list(Counting.started), time.perf_counter() - started, servers))
    return rows


def rank_of(found: list[str], wanted: list[str]) -> int | None:
    hits = [i for i, ref in enumerate(found) if ref in wanted]
    return hits[0] + 1 if hits else None


def recall_rows(ranks: list[tuple[dict[str, Any], int | None]]) -> list[tuple[str, int, float, float]]:
    rows = []
    for label, subset in (
        ("reference servers", [r for r in ranks if r[0]["catalog"] == "reference"]),
        ("synthetic catalog", [r for r in ranks if r[0]["catalog"] == "synthetic"]),
        ("all", ranks),
    ):
        at5 = sum(1 for _, rank in subset if rank is not None) / len(subset)
        at1 = sum(1 for _, rank in subset if rank == 1) / len(subset)
        rows.append((label, len(subset), at5, at1))
    return rows


async def fused_quality(
    pool: MCPPool, requests: list[dict[str, Any]], embeddings: Embeddings
) -> tuple[list[tuple[dict[str, Any], int | None]], float, list[float]]:
    """Ranks of every request with ``embeddings`` fused with BM25; seconds to embed the catalog
    (the first search), and each search's seconds after it."""
    toolset = ToolSet(pool, reserved=["search_tools"])
    searcher = ToolSearcher(toolset, ToolSearch(embeddings=embeddings))
    await toolset.tools()
    view = ToolView(toolset)
    started = time.perf_counter()
    await searcher.search("warm up", 5, view)  # builds the index, embeds the catalog
    build = time.perf_counter() - started
    ranks: list[tuple[dict[str, Any], int | None]] = []
    times: list[float] = []
    for request in requests:
        started = time.perf_counter()
        found = await searcher.search(request["query"], 5, view)
        times.append(time.perf_counter() - started)
        ranks.append((request, rank_of([f"{t.server}/{t.mcp_name}" for t in found], request["tools"])))
    return ranks, build, times


def loaded(spec: str) -> Embeddings:
    module, _, name = spec.partition(":")
    made: Embeddings = getattr(importlib.import_module(module), name)()
    return made


async def main() -> None:
    quiet()
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--servers", type=int, default=10)
    p.add_argument("--tools", type=int, default=100)
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--embeddings", default=None, help="module:Class of a LangChain Embeddings to measure too")
    p.add_argument("--skip-processes", action="store_true", help="leave out section 4 (stdio servers)")
    args = p.parse_args()
    servers = {**synthetic(args.servers, args.tools), **reference()}
    requests = json.loads((HERE / "search_requests.json").read_text())["requests"]

    without = await per_turn(servers, search=False)
    with_search = await per_turn(servers, search=True)
    async with MCPPool(servers) as pool:
        toolset = ToolSet(pool, reserved=["search_tools"])
        searcher = ToolSearcher(toolset, ToolSearch())
        tools = await toolset.tools()
        view = ToolView(toolset)
        started = time.perf_counter()
        await searcher.search("warm up", 5, view)  # builds the index
        build = time.perf_counter() - started
        times: list[float] = []
        ranks: list[tuple[dict[str, Any], int | None]] = []
        for round_ in range(args.repeats):
            for request in requests:
                started = time.perf_counter()
                found = await searcher.search(request["query"], 5, view)
                times.append(time.perf_counter() - started)
                if round_ == 0:
                    ranks.append(
                        (request, rank_of([f"{t.server}/{t.mcp_name}" for t in found], request["tools"]))
                    )
        embeddings: list[tuple[str, Embeddings]] = [
            ("character trigrams (`Trigrams`, 512 dims)", Trigrams()),
            ("a random vector per text (`Noise`, 512 dims)", Noise()),
        ]
        if args.embeddings:
            embeddings.append((f"`{args.embeddings}`", loaded(args.embeddings)))
        fused = [(label, *await fused_quality(pool, requests, made)) for label, made in embeddings]

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
    print("| ranking | requests | n | recall@5 | recall@1 |")
    print("|---|---|---|---|---|")
    for label, n, at5, at1 in recall_rows(ranks):
        print(f"| BM25 | {label} | {n} | {at5:.3f} | {at1:.3f} |")
    for name, fused_ranks, _, _ in fused:
        for label, n, at5, at1 in recall_rows(fused_ranks):
            print(f"| BM25 + {name} | {label} | {n} | {at5:.3f} | {at1:.3f} |")
    missed = [r["query"] for r, rank in ranks if rank is None]
    if missed:
        print("\nBM25, not in the top 5: " + "; ".join(missed))
    for name, fused_ranks, build, fused_times in fused:
        bm25_rank = {r["query"]: rank for r, rank in ranks}
        gained = [r["query"] for r, rank in fused_ranks if rank is not None and bm25_rank[r["query"]] is None]
        lost = [r["query"] for r, rank in fused_ranks if rank is None and bm25_rank[r["query"]] is not None]
        fused_times.sort()
        print(
            f"\nBM25 + {name}: catalog embedded in {build * 1000:.0f} ms (first search); a search then "
            f"median {statistics.median(fused_times) * 1000:.2f} ms, max {fused_times[-1] * 1000:.2f} ms"
        )
        print("  found only when fused: " + ("; ".join(gained) or "none"))
        print("  lost by the fusion: " + ("; ".join(lost) or "none"))
    if args.skip_processes:
        return
    print(
        f"\n## Server processes started ({args.servers} stdio servers, {args.servers * args.tools:,} tools)\n"
    )
    print(f"search: {SPANNING!r}, limit 5\n")
    print(
        "| run | servers revealed | model call 1 (no tool called yet) | 2 (after the search) "
        "| 3 (after the MCP call) | run s |"
    )
    print("|---|---|---|---|---|---|")
    for label, counts, seconds, revealed in await processes(args.servers, args.tools):
        print(f"| {label} | {revealed} | " + " | ".join(map(str, counts[:3])) + f" | {seconds:.1f} |")


if __name__ == "__main__":
    asyncio.run(main())
