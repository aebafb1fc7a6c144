"""Tool search over large catalogs: the model sees a search tool and the tools it revealed.

With ``tool_search`` on, an agent's model is not given every MCP tool's schema. It is given a
search tool (``search_tools``) that ranks the MCP tools of every server by BM25 (see
:mod:`langgraph_mcp._catalog.bm25`) over their name, title, description, server and model-visible
argument names (never a hidden argument), and returns the best matches the run may use (the
``tool_filter``; never a tool meant only for an MCP Apps view). The tools it returns are revealed:
their ``"server/tool"`` entries go into the graph state under
:data:`~langgraph_mcp.options.REVEALED_KEY` through a ``Command``, and from the next model call on
the model is offered them too. Being in the state, the reveals of a thread survive interrupts,
a resume in another process and subgraphs; entries name tools by server and MCP name, so they keep
their meaning while exposed names change, and can later point into a catalog of servers not
started yet.

A call to an MCP tool that was not revealed in the thread is refused with ``ToolNode``'s
invalid-tool message (fail closed): the model calls only tools whose schema it was shown.

A search starts no server: it ranks the tools as offered, those of a ``lazy`` server not started
yet as the tool catalog keeps them (fingerprinted), and reveals them so. The server starts at the
first call to one of its tools, which is refused when the server now lists that tool otherwise
than it was shown (see :func:`~langgraph_mcp._call.pipeline.lazy_start`).

With ``ToolSearch(embeddings=...)`` or ``store_index=True`` the tools are also ranked by meaning,
and the two rankings fused (:mod:`langgraph_mcp._catalog.semantic`).
"""

from collections import OrderedDict
from collections.abc import Mapping
from typing import Annotated, Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt import ToolRuntime
from langgraph.types import Command

from langgraph_mcp._call.adapter import MCPTool
from langgraph_mcp._call.view import model_visible
from langgraph_mcp._catalog.bind import Bound, ToolSet
from langgraph_mcp._catalog.bm25 import MAX_QUERY_CHARS, BM25Index
from langgraph_mcp._catalog.semantic import DEPTH, Semantic, fuse
from langgraph_mcp._catalog.users import RunTools, UserCatalogs
from langgraph_mcp._catalog.view import ToolView, tool_ref
from langgraph_mcp._support.pace import Pace
from langgraph_mcp._support.sync import run_sync
from langgraph_mcp.options import REVEALED_KEY, ToolSearch

__all__ = ["ToolSearcher"]

MAX_LINE = 200
"""Characters of a tool's description shown in a search result."""

# Weights of a tool's fields: a word in its name says more than one in its description.
NAME_WEIGHT = 3.0
TITLE_WEIGHT = 2.0
TEXT_WEIGHT = 1.0

DEFAULT_DESCRIPTION = (
    "Search the available tools. Only tools found with this search can be called: describe what "
    "you want to do in a few words (e.g. 'read a file', 'create a calendar event'); the best "
    "matching tools are returned with their arguments and become available to call."
)


def _line(text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first if len(first) <= MAX_LINE else first[: MAX_LINE - 3].rstrip() + "..."


def _arguments(tool: MCPTool) -> list[str]:
    """The argument names the model sees (the bound schema: hidden arguments are gone)."""
    schema = tool.args_schema
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    return [str(k) for k in properties] if isinstance(properties, Mapping) else list(tool.args)


def _text(tool: MCPTool, title: str, arguments: list[str]) -> str:
    """What is embedded of a tool for semantic ranking: its name as words, title, description
    (bounded), arguments and server."""
    name = tool.mcp_name.replace("_", " ").replace("-", " ")
    head = f"{title} ({name})" if title else name
    listed = ", ".join(arguments) or "none"
    return f"{head}: {tool.description[:MAX_EMBEDDED_CHARS]}\nArguments: {listed}. Server: {tool.server}."


MAX_EMBEDDED_CHARS = 2000
"""Characters of a tool's description embedded."""


class _Index:
    """The search index of one tool set: BM25 over its tools and, with semantic ranking, their
    texts and (once embedded) vectors."""

    __slots__ = ("bm25", "docs", "source", "texts", "vectors")

    def __init__(self, source: Bound) -> None:
        self.source = source
        self.bm25 = BM25Index()
        self.docs: list[MCPTool] = []
        self.texts: list[str] = []
        self.vectors: list[list[float]] | None = None


_MAX_INDEXES = 64
"""Indexes kept for per-user tool sets (one per distinct set; the least recently used beyond this
are dropped and built again when needed)."""


class ToolSearcher:
    """The search tool of one node or middleware, over its :class:`ToolSet`. With per-user servers
    (``users``), a run searches its user's own tools: one index per distinct tool set, so users
    with the same listing share one."""

    def __init__(self, toolset: ToolSet, settings: ToolSearch, users: UserCatalogs | None = None) -> None:
        self.toolset = toolset
        self.settings = settings
        self.users = users
        self._indexes: OrderedDict[int, _Index] = OrderedDict()
        self.semantic = Semantic(settings.embeddings, store_index=settings.store_index)
        self.tool: BaseTool = self._make_tool()

    # -- the search ----------------------------------------------------------------------------

    async def _run_tools(self, runtime: ToolRuntime | None) -> RunTools | None:
        """The tools of the run's user, when some server is per user (else ``None``)."""
        await self.toolset.tools()
        if self.users is None or not self.users.active or runtime is None:
            return None
        return await self.users.for_run(
            config=runtime.config, context=runtime.context, store=runtime.store, state=runtime.state
        )

    async def _indexed(self, source: Bound) -> _Index:
        """The index of ``source``'s tools (built once per tool set)."""
        known = self._indexes.get(id(source))
        if known is not None and known.source is source:
            self._indexes.move_to_end(id(source))
            return known
        index = _Index(source)
        pace = Pace()  # a large catalog takes a while to index: let other calls run
        for tool in source.tools:
            await pace()
            if not model_visible(tool.mcp_meta):
                continue  # meant only for an MCP Apps view: never found
            title = str((tool.metadata or {}).get("mcp", {}).get("title") or "")
            names = " ".join(dict.fromkeys([tool.name, tool.mcp_name]))
            arguments = _arguments(tool)
            index.bm25.add(
                [
                    (names, NAME_WEIGHT),
                    (title, TITLE_WEIGHT),
                    (tool.description, TEXT_WEIGHT),
                    (" ".join(arguments), TEXT_WEIGHT),
                    (tool.server, TEXT_WEIGHT),
                ]
            )
            index.docs.append(tool)
            if self.semantic.on:
                index.texts.append(_text(tool, title, arguments))
        self._indexes[id(source)] = index
        while len(self._indexes) > _MAX_INDEXES:
            self._indexes.popitem(last=False)
        return index

    async def search(self, query: str, limit: int | None, view: ToolView, store: Any = None) -> list[MCPTool]:
        """The best ``limit`` tools (within the settings' bounds) for ``query`` that ``view``'s run
        may use (its tools: the user's own, for per-user servers), from the tools as offered: a
        ``lazy`` server not started yet is not started (its tools are the catalog's). With semantic
        ranking on (``embeddings``, or ``store_index`` with the graph's ``store``), BM25's ranking
        and the semantic one are fused (:func:`~langgraph_mcp._catalog.semantic.fuse`)."""
        index = await self._indexed(view.bound)
        docs = index.docs
        k = min(max(limit or self.settings.limit, 1), self.settings.max_limit)
        query = query[:MAX_QUERY_CHARS] if isinstance(query, str) else ""

        def keep(doc: int) -> bool:
            return view.allows(docs[doc])

        meaning, index.vectors = await self.semantic.ranking(
            query, index.texts, keep, vectors=index.vectors, store=store
        )
        if meaning is None:
            return [docs[doc] for doc in index.bm25.top(query, k, keep)]
        lexical = index.bm25.top(query, DEPTH, keep)
        return [docs[doc] for doc in fuse([lexical, meaning])[:k]]

    async def found(
        self, query: str, limit: int | None, context: Any, runtime: ToolRuntime | None = None
    ) -> list[MCPTool]:
        """:meth:`search` for the search tool's call (``runtime``: its run's user is searched for,
        with the graph's store)."""
        run = await self._run_tools(runtime)
        view = ToolView(self.toolset, context=context, run=run)  # the search tool's run: for the model
        return await self.search(query, limit, view, runtime.store if runtime is not None else None)

    async def _arun(self, query: str, limit: int | None, runtime: ToolRuntime) -> Command[Any] | ToolMessage:
        return self._answer(await self.found(query, limit, runtime.context, runtime), runtime)

    def _run(self, query: str, limit: int | None, runtime: ToolRuntime) -> Command[Any] | ToolMessage:
        found = run_sync(lambda: self.found(query, limit, runtime.context, runtime), pool=self.toolset.pool)
        return self._answer(found, runtime)

    def _answer(self, tools: list[MCPTool], runtime: ToolRuntime) -> Command[Any] | ToolMessage:
        name, call_id = self.settings.name, runtime.tool_call_id or ""
        if not tools:
            return ToolMessage(
                "No tool matches this search. Try other words: what the tool acts on (a file, an "
                "issue, an event) or what it does (read, create, search).",
                name=name,
                tool_call_id=call_id,
            )
        found = [
            {
                "name": t.name,
                "server": t.server,
                "description": _line(t.description),
                "arguments": _arguments(t),
            }
            for t in tools
        ]
        lines = [f"Found {len(found)} tool(s); you can call them now:"]
        for n, item in enumerate(found, 1):
            arguments = ", ".join(item["arguments"]) or "none"
            lines.append(
                f"{n}. {item['name']} (server {item['server']!r}): {item['description']} "
                f"Arguments: {arguments}."
            )
        message = ToolMessage(
            "\n".join(lines),
            name=name,
            tool_call_id=call_id,
            artifact={"tools": found},
        )
        return Command(
            update={REVEALED_KEY: [tool_ref(t) for t in tools], self.toolset.messages_key: [message]}
        )

    def _make_tool(self) -> BaseTool:
        settings = self.settings
        # The annotations are evaluated here (this module does not postpone them): the limit's
        # description names this search's bounds.
        limit_text = f"How many tools to return (default {settings.limit}, at most {settings.max_limit})."

        async def search_tools(
            query: Annotated[str, "What you want to do, in a few words."],
            limit: Annotated[int | None, limit_text] = None,
            *,
            runtime: ToolRuntime,
        ) -> Any:
            return await self._arun(query, limit, runtime)

        def search_tools_sync(
            query: Annotated[str, "What you want to do, in a few words."],
            limit: Annotated[int | None, limit_text] = None,
            *,
            runtime: ToolRuntime,
        ) -> Any:
            return self._run(query, limit, runtime)

        return StructuredTool.from_function(
            func=search_tools_sync,
            coroutine=search_tools,
            name=settings.name,
            description=settings.description or DEFAULT_DESCRIPTION,
        )
