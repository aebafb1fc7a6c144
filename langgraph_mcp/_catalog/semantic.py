"""Ranking tools by meaning for tool search, fused with BM25.

Two sources of embeddings, chosen on :class:`~langgraph_mcp.options.ToolSearch`:

* ``embeddings=`` (a LangChain ``Embeddings``): each tool's text is embedded in this process, once
  per text (a new listing embeds only the tools that changed), with ``aembed_documents`` (which a
  local model runs in a worker thread, off the event loop); the vectors are kept in memory. A
  search embeds its query (``aembed_query``) and scores every tool by cosine similarity, paced on
  the event loop.
* ``store_index=True``: the graph's own store, when it was given a vector index
  (``index={"embed": ..., "dims": ...}``). The tools are written once per catalog version under
  :data:`STORE_NAMESPACE` plus a digest of their texts (one item per tool, and a last item saying
  the version is complete), so a persistent store embeds a catalog once for every process; a search
  is the store's ``asearch(namespace, query=...)``.

The two rankings, each cut at its first :data:`DEPTH` tools the run may use, are fused by
reciprocal rank fusion: a tool's score is the sum of ``1 / (RRF_K + rank)`` over the rankings it is
in (``RRF_K = 60``, the constant of Cormack, Clarke and Büttcher, 2009). Fusing ranks, not scores,
needs no calibration between BM25 scores and cosine similarities.

Embedding never fails a search: an error, or no answer within :data:`EMBED_TIMEOUT`, falls back to
BM25 alone with one warning, and the semantic ranking is tried again :data:`RETRY_AFTER` seconds
later (one warning per outage). Embedding the catalog runs as a task of its own: a search waits for
it at most :data:`EMBED_TIMEOUT` and then ranks by BM25 alone, while the embedding goes on for the
searches after it.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import operator
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from langgraph_mcp._support.pace import Pace

__all__ = [
    "DEPTH",
    "EMBED_TIMEOUT",
    "RETRY_AFTER",
    "RRF_K",
    "STORE_NAMESPACE",
    "Semantic",
    "fuse",
]

logger = logging.getLogger("langgraph_mcp.search")

RRF_K = 60
"""The constant of reciprocal rank fusion (a tool ranked ``r`` adds ``1 / (RRF_K + r)``)."""
DEPTH = 50
"""How many tools of each ranking are fused."""
EMBED_TIMEOUT = 30.0
"""Seconds one embedding request (a catalog, a query, a store's search) may take."""
RETRY_AFTER = 60.0
"""Seconds the semantic ranking is left out after it failed."""
STORE_NAMESPACE: tuple[str, ...] = ("langgraph_mcp", "tool_search")
"""Where ``store_index`` writes the tools in the graph's store (a digest of the catalog's texts is
appended: one namespace per catalog version)."""
_COMPLETE = "complete"
"""The key of the item written after a version's tools (not a tool: tools are keyed by number)."""
_MAX_VECTORS = 200_000
"""Texts whose vectors are kept in memory; past this, only those of the indexes in use are kept."""


def fuse(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> list[int]:
    """Reciprocal rank fusion of ``rankings`` (document numbers, best first): by the summed
    ``1 / (k + rank)``; a tie goes to the document the earlier ranking (BM25's) holds, higher."""
    scores: dict[int, float] = {}
    first: dict[int, tuple[int, int]] = {}
    for which, ranking in enumerate(rankings):
        for rank, doc in enumerate(ranking, 1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
            first.setdefault(doc, (which, rank))
    return sorted(scores, key=lambda doc: (-scores[doc], first[doc]))


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [float(x) / norm for x in vector] if norm else [0.0 for _ in vector]


def digest(texts: Sequence[str]) -> str:
    """What names one catalog version in the store: SHA-256 of its texts, in order."""
    h = hashlib.sha256()
    for text in texts:
        h.update(text.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()[:32]


class Semantic:
    """The semantic ranking of one search tool (see the module docstring).

    Args:
        embeddings: A LangChain ``Embeddings`` (embedded in this process), or ``None``.
        store_index: Rank with the graph store's vector index (the store is given per search).
    """

    def __init__(self, embeddings: Any = None, *, store_index: bool = False) -> None:
        self.embeddings = embeddings
        self.store_index = store_index
        self._vectors: dict[str, list[float]] = {}
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )  # a lock per event loop: a pool may serve several
        self._stored: dict[tuple[int, str], Any] = {}  # (id(store), version) -> store: written
        self._pending: dict[tuple[Any, ...], asyncio.Task[Any]] = {}
        self._down_until = 0.0
        self._warned = False

    @property
    def on(self) -> bool:
        return self.embeddings is not None or self.store_index

    async def ranking(
        self,
        query: str,
        texts: Sequence[str],
        keep: Callable[[int], bool],
        *,
        vectors: list[list[float]] | None,
        store: Any = None,
    ) -> tuple[list[int] | None, list[list[float]] | None]:
        """The first :data:`DEPTH` documents ``keep`` accepts, most similar to ``query`` first, and
        the vectors of ``texts`` (give them back next time: they are computed once per index);
        ``None`` for the ranking when there is none (off, no index in the store, failed)."""
        if not self.on or time.monotonic() < self._down_until or not texts or not query.strip():
            return None, vectors
        try:
            if self.embeddings is not None:
                if vectors is None:
                    vectors = await self._ready(("embed", digest(texts)), lambda: self._embed(texts))
                    if vectors is None:
                        return None, None  # still embedding the catalog
                ranked = await self._by_vectors(query, vectors, keep)
            else:
                if store is None or getattr(store, "index_config", None) is None:
                    self._warn(
                        "tool search: store_index is set but the graph's store has no vector index "
                        "(index={'embed': ..., 'dims': ...}); ranking by BM25 only"
                    )
                    return None, vectors
                version = digest(texts)
                namespace = (*STORE_NAMESPACE, version)
                if self._stored.get((id(store), version)) is not store:
                    written = await self._ready(
                        ("store", id(store), version), lambda: self._write(store, namespace, texts)
                    )
                    if written is None:
                        return None, vectors  # still writing the catalog
                    self._stored[(id(store), version)] = store
                ranked = await asyncio.wait_for(
                    self._by_store(query, len(texts), keep, store, namespace), EMBED_TIMEOUT
                )
        except Exception as exc:  # any failure of the embedding service: BM25 alone
            self._down_until = time.monotonic() + RETRY_AFTER
            self._warn(
                "tool search: semantic ranking failed (%s); ranking by BM25 only for %gs",
                type(exc).__name__ if isinstance(exc, TimeoutError) else exc,
                RETRY_AFTER,
            )
            return None, vectors
        self._warned = False
        return ranked, vectors

    async def _ready(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        """The result of the catalog's embedding ``make()``, run once per ``key`` as a task of its
        own (a slow one is not cancelled by a search that stops waiting): waited for at most
        :data:`EMBED_TIMEOUT` (then ``None``, with one warning: BM25 alone meanwhile)."""
        loop = asyncio.get_running_loop()
        task = self._pending.get(key)
        if task is None or task.get_loop() is not loop:
            task = self._pending[key] = loop.create_task(make())
            task.add_done_callback(lambda t: t.cancelled() or t.exception())  # read: never "lost"
        done, _ = await asyncio.wait({task}, timeout=EMBED_TIMEOUT)
        if not done:
            self._warn(
                "tool search: the tool catalog is still being embedded after %gs; ranking by BM25 "
                "only until it is done",
                EMBED_TIMEOUT,
            )
            return None
        if self._pending.get(key) is task:
            del self._pending[key]
        return task.result()  # raises what the embedding raised

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        return lock

    def _warn(self, msg: str, *args: Any) -> None:
        if not self._warned:
            self._warned = True
            logger.warning(msg, *args)

    # -- embeddings in this process ------------------------------------------------------------

    async def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        """The unit vectors of ``texts``, embedding only those not embedded before (one request)."""
        async with self._lock():  # concurrent first searches embed once
            missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
            if missing:
                got = await self.embeddings.aembed_documents(missing)
                if len(got) != len(missing):
                    raise ValueError(f"{len(got)} embeddings for {len(missing)} texts")
                if len(self._vectors) + len(missing) > _MAX_VECTORS:
                    keep = set(texts)
                    self._vectors = {t: v for t, v in self._vectors.items() if t in keep}
                pace = Pace()
                for text, vector in zip(missing, got, strict=True):
                    await pace()
                    self._vectors[text] = _unit(vector)
            return [self._vectors[t] for t in texts]

    async def _by_vectors(
        self, query: str, vectors: list[list[float]], keep: Callable[[int], bool]
    ) -> list[int]:
        target = _unit(await asyncio.wait_for(self.embeddings.aembed_query(query), EMBED_TIMEOUT))
        if vectors and len(target) != len(vectors[0]):
            raise ValueError(f"the query has {len(target)} dimensions, the tools {len(vectors[0])}")
        scores: list[tuple[float, int]] = []
        pace = Pace()
        for doc, vector in enumerate(vectors):
            await pace()
            scores.append((sum(map(operator.mul, target, vector)), doc))
        scores.sort(key=lambda item: (-item[0], item[1]))
        ranked: list[int] = []
        for _, doc in scores:
            if len(ranked) >= DEPTH:
                break
            if keep(doc):
                ranked.append(doc)
        return ranked

    # -- the graph store's vector index --------------------------------------------------------

    async def _write(self, store: Any, namespace: tuple[str, ...], texts: Sequence[str]) -> bool:
        """Write ``texts`` to ``store`` under ``namespace`` unless a process did already (the last
        item marks them complete)."""
        from langgraph.store.base import PutOp

        if await store.aget(namespace, _COMPLETE) is None:
            puts = [
                PutOp(namespace, str(doc), {"text": text}, index=["text"]) for doc, text in enumerate(texts)
            ]
            await store.abatch([*puts, PutOp(namespace, _COMPLETE, {"tools": len(texts)}, index=False)])
        return True

    async def _by_store(
        self, query: str, count: int, keep: Callable[[int], bool], store: Any, namespace: tuple[str, ...]
    ) -> list[int]:
        ranked: list[int] = []
        offset = 0
        while len(ranked) < DEPTH and offset < count:
            items = await store.asearch(namespace, query=query, limit=DEPTH, offset=offset)
            if not items:
                break
            offset += len(items)
            for item in items:
                if item.key.isdigit() and int(item.key) < count and keep(int(item.key)):
                    ranked.append(int(item.key))
            if len(items) < DEPTH:
                break
        return ranked[:DEPTH]
