"""Tool search ranked by meaning too: ``ToolSearch(embeddings=...)`` or the graph store's vector
index (``store_index=True``), fused with BM25 by reciprocal rank fusion. The catalog is embedded
once per version; a failing embedding falls back to BM25 with one warning."""

from __future__ import annotations

import asyncio
import logging
import math
import re
import zlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.messages import ToolMessage
from langgraph.store.memory import InMemoryStore

from langgraph_mcp import MCPConfigError, MCPPool, create_mcp_agent
from langgraph_mcp._catalog import semantic
from langgraph_mcp._catalog.bind import ToolSet
from langgraph_mcp._catalog.search import ToolSearcher
from langgraph_mcp._catalog.semantic import STORE_NAMESPACE, fuse
from langgraph_mcp._catalog.view import ToolView
from langgraph_mcp.options import ToolSearch
from tests.chat import ScriptModel
from tests.helpers import thread
from tests.servers import travel

SEARCH = "search_tools"

# A small hand-made lexicon of meanings: what a real embedding model knows about these words,
# cut down to the test's tools. Words it does not know are hashed into a few more dimensions
# (weak), so that the embedding is deterministic for any text.
CONCEPTS: dict[str, tuple[str, ...]] = {
    "weather": ("weather", "forecast", "rain", "umbrella", "sunny", "temperature", "snow", "storm", "wind"),
    "lodging": ("hotel", "hotels", "stay", "room", "sleep", "nights", "accommodation"),
    "flight": ("flight", "fly", "plane", "airport", "airports", "ticket"),
    "money": ("currency", "money", "euros", "dollars", "exchange", "convert", "amount"),
    "sights": ("guide", "sights", "museums", "visit", "visitor", "see", "sightseeing"),
    "air": ("air", "pollution", "pollen", "quality", "breathe", "allergy"),
    "daylight": ("sunrise", "sunset", "dawn", "dusk", "daylight", "dark"),
}
MEANING = {word: i for i, words in enumerate(CONCEPTS.values()) for word in words}
HASHED = 16


class Lexicon(Embeddings):
    """A deterministic offline embedding (see :data:`CONCEPTS`); counts what it embeds."""

    def __init__(self) -> None:
        self.documents: list[list[str]] = []
        self.queries: list[str] = []

    @staticmethod
    def vector(text: str) -> list[float]:
        out = [0.0] * (len(CONCEPTS) + HASHED)
        for word in re.findall(r"[a-z]+", text.lower()):
            if word in MEANING:
                out[MEANING[word]] += 1.0
            else:
                out[len(CONCEPTS) + zlib.crc32(word.encode()) % HASHED] += 0.2
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents.append(list(texts))
        return [self.vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return self.vector(text)


class Failing(Embeddings):
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise ConnectionError("the embedding service is down")

    def embed_query(self, text: str) -> list[float]:
        raise ConnectionError("the embedding service is down")


def servers() -> dict[str, Any]:
    return {"weather": {"server": travel.build_weather()}, "trips": {"server": travel.build_trips()}}


@pytest.fixture
async def pool() -> AsyncIterator[MCPPool]:
    async with MCPPool(servers()) as pool:
        yield pool


async def names(pool: MCPPool, settings: ToolSearch, query: str, store: Any = None, k: int = 3) -> list[str]:
    searcher = ToolSearcher(ToolSet(pool, reserved=[SEARCH]), settings)
    await searcher.toolset.tools()
    return [t.name for t in await searcher.search(query, k, ToolView(searcher.toolset), store)]


UMBRELLA = "do I need an umbrella in Lyon tomorrow"
STAY = "somewhere to stay in Rome"


def test_reciprocal_rank_fusion() -> None:
    assert fuse([[1, 2, 3], [3, 1]]) == [1, 3, 2]  # 1: 1/61 + 1/62; 3: 1/63 + 1/61; 2: 1/62
    assert fuse([[], [7, 8]]) == [7, 8]
    assert fuse([[5], [4]]) == [5, 4]  # the same score: the first ranking's (BM25's) wins the tie


async def test_a_paraphrase_bm25_misses_is_found_by_the_fused_ranking(pool: MCPPool) -> None:
    assert await names(pool, ToolSearch(), UMBRELLA) == []  # no word in common with any tool
    assert await names(pool, ToolSearch(), STAY) == []
    fused = ToolSearch(embeddings=Lexicon())
    assert "get_forecast" in (await names(pool, fused, UMBRELLA))[:2]  # with current_conditions
    assert (await names(pool, fused, STAY))[0] == "find_hotels"
    # What BM25 finds well stays first.
    assert (await names(pool, ToolSearch(), "convert currency"))[0] == "convert_currency"
    assert (await names(pool, fused, "convert currency"))[0] == "convert_currency"


async def test_the_catalog_is_embedded_once_and_each_query_once(pool: MCPPool) -> None:
    lexicon = Lexicon()
    searcher = ToolSearcher(ToolSet(pool, reserved=[SEARCH]), ToolSearch(embeddings=lexicon))
    await searcher.toolset.tools()
    view = ToolView(searcher.toolset)
    await asyncio.gather(searcher.search(UMBRELLA, 3, view), searcher.search(STAY, 3, view))
    await searcher.search("hotel", 3, view)
    assert len(lexicon.documents) == 1 and len(lexicon.documents[0]) == 8  # eight tools, once
    assert "Arguments: city, days" in next(t for t in lexicon.documents[0] if t.startswith("get forecast"))
    assert sorted(lexicon.queries) == sorted([UMBRELLA, STAY, "hotel"])


async def test_a_failing_embedding_falls_back_to_bm25_with_one_warning(
    pool: MCPPool, caplog: pytest.LogCaptureFixture
) -> None:
    searcher = ToolSearcher(ToolSet(pool, reserved=[SEARCH]), ToolSearch(embeddings=Failing()))
    await searcher.toolset.tools()
    view = ToolView(searcher.toolset)
    with caplog.at_level(logging.WARNING, logger="langgraph_mcp.search"):
        assert [t.name for t in await searcher.search("weather forecast", 1, view)] == ["get_forecast"]
        assert await searcher.search(UMBRELLA, 3, view) == []
    warnings = [r.getMessage() for r in caplog.records if r.name == "langgraph_mcp.search"]
    assert warnings == [
        "tool search: semantic ranking failed (the embedding service is down); ranking by BM25 only for 60s"
    ]


class Slow(Lexicon):
    """Embeds the catalog only once ``go`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.go = asyncio.Event()

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        await self.go.wait()
        return self.embed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return self.embed_query(text)


async def test_a_slow_catalog_embedding_leaves_searches_to_bm25_until_it_is_done(
    pool: MCPPool, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic, "EMBED_TIMEOUT", 0.01)
    slow = Slow()
    searcher = ToolSearcher(ToolSet(pool, reserved=[SEARCH]), ToolSearch(embeddings=slow))
    await searcher.toolset.tools()
    view = ToolView(searcher.toolset)
    with caplog.at_level(logging.WARNING, logger="langgraph_mcp.search"):
        assert await searcher.search(STAY, 3, view) == []  # BM25 alone, the embedding goes on
        assert await searcher.search(STAY, 3, view) == []
    assert len([r for r in caplog.records if r.name == "langgraph_mcp.search"]) == 1
    slow.go.set()
    assert (await names_of(searcher, STAY, view))[0] == "find_hotels"
    assert len(slow.documents) == 1  # embedded once, by the task the first search started


async def names_of(searcher: ToolSearcher, query: str, view: ToolView) -> list[str]:
    return [t.name for t in await searcher.search(query, 3, view)]


def counting_store(lexicon: Lexicon) -> InMemoryStore:
    return InMemoryStore(index={"dims": len(CONCEPTS) + HASHED, "embed": lexicon, "fields": ["text"]})


async def test_the_graph_stores_vector_index_ranks_once_per_catalog_version(pool: MCPPool) -> None:
    lexicon = Lexicon()
    store = counting_store(lexicon)
    settings = ToolSearch(store_index=True)
    assert "get_forecast" in (await names(pool, settings, UMBRELLA, store))[:2]
    assert (await names(pool, settings, STAY, store))[0] == "find_hotels"  # another searcher, same store
    assert len(lexicon.documents) == 1 and len(lexicon.documents[0]) == 8  # written once
    [namespace] = await store.alist_namespaces(prefix=STORE_NAMESPACE)
    assert len(namespace) == 3 and len(await store.asearch(namespace, limit=20)) == 9  # 8 tools, 1 mark


async def test_a_store_without_an_index_ranks_by_bm25_with_one_warning(
    pool: MCPPool, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="langgraph_mcp.search"):
        assert await names(pool, ToolSearch(store_index=True), UMBRELLA, InMemoryStore()) == []
    assert [r.getMessage() for r in caplog.records if r.name == "langgraph_mcp.search"] == [
        "tool search: store_index is set but the graph's store has no vector index "
        "(index={'embed': ..., 'dims': ...}); ranking by BM25 only"
    ]


async def test_an_agent_searches_its_graphs_store_index() -> None:
    lexicon = Lexicon()
    model = ScriptModel(
        turns=[[(SEARCH, {"query": STAY, "limit": 2}, "s1")], [("find_hotels", {"city": "Rome"}, "c1")]]
    )
    agent = create_mcp_agent(
        model, servers(), tool_search=ToolSearch(store_index=True), store=counting_store(lexicon)
    )
    try:
        out = await agent.ainvoke({"messages": [("user", "a room in Rome?")]}, thread())
    finally:
        await agent.mcp.aclose()
    got = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert got["s1"].artifact["tools"][0]["name"] == "find_hotels"
    assert got["c1"].text == 'find_hotels:{"city": "Rome", "nights": 1}'


def test_semantic_settings_are_checked() -> None:
    with pytest.raises(MCPConfigError, match="LangChain Embeddings"):
        ToolSearch(embeddings="text-embedding-3-small")
    with pytest.raises(MCPConfigError, match="not both"):
        ToolSearch(embeddings=Lexicon(), store_index=True)
    assert ToolSearch(embeddings=Lexicon()) == ToolSearch()  # compared like the catalog: not at all
    assert math.isclose(sum(x * x for x in Lexicon.vector("rain")), 1.0)
