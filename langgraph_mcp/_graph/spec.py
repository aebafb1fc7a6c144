"""The MCP options the faces share, checked once: :class:`MCPOptions`, and :data:`OPTION_DOCS`.

``MCPToolNode``, ``MCPMiddleware`` and ``create_mcp_agent`` take the same keyword options; each
keeps them in its own signature (the reference pages and IDEs read those) and builds one
:class:`MCPOptions` from them, which checks them and does what every face does with them: hold the
pool, bind the face's :class:`~langgraph_mcp._catalog.bind.ToolSet`, make the search tool and the
output readers. :data:`OPTION_DOCS` is each option's one description; every face's ``Args:``
entry for an option is that text, or refers to :class:`~langgraph_mcp.MCPToolNode`'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Self

from langchain_core.tools import BaseTool

from langgraph_mcp._call.approval import APPROVAL_MODES, ApprovalMode
from langgraph_mcp._call.output import reader_tools
from langgraph_mcp._catalog.bind import DEFAULT_DECISIONS, ToolSet
from langgraph_mcp._catalog.search import ToolSearcher
from langgraph_mcp._catalog.users import UserCatalogs
from langgraph_mcp._pool.pool import MCPPool, OnConnectionError
from langgraph_mcp.config import DEFAULT_CALL_TIMEOUT
from langgraph_mcp.errors import FAILURE_KINDS, FailureKind, MCPConfigError
from langgraph_mcp.options import ApprovalByRisk, ApprovalPolicy, ToolFilter, ToolOptions, ToolSearch

__all__ = ["AS_FOR_MIDDLEWARE", "AS_FOR_NODE", "OPTION_DOCS", "SHARED", "MCPOptions", "PoolHolder"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True, eq=False)
class MCPOptions:
    """The MCP options of one face, checked when made (:class:`~langgraph_mcp.MCPConfigError`,
    a ``ValueError``, names the bad one). ``raise_errors`` and ``view_calls`` are
    ``MCPMiddleware``'s own; a node's options leave them at their defaults."""

    tool_options: Mapping[str, ToolOptions] | None = None
    server_options: Mapping[str, ToolOptions] | None = None
    approval: ApprovalPolicy = None
    approval_decisions: Sequence[str] = DEFAULT_DECISIONS
    approval_mode: ApprovalMode = "per_call"
    tool_filter: ToolFilter | None = None
    tool_search: bool | ToolSearch = False
    on_connection_error: OnConnectionError = "raise"
    default_timeout: float | None = DEFAULT_CALL_TIMEOUT
    raise_errors: Collection[FailureKind] = ()
    view_calls: bool = False
    search: ToolSearch | None = dataclasses.field(init=False, default=None)
    """The settings ``tool_search`` means (``None``: search is off)."""

    def __post_init__(self) -> None:
        unknown = sorted(set(self.raise_errors) - FAILURE_KINDS)
        if unknown:
            raise MCPConfigError(
                None, None, f"raise_errors has unknown kind(s) {unknown}; choose from {sorted(FAILURE_KINDS)}"
            )
        object.__setattr__(self, "search", _search_settings(self.tool_search))
        approval = self.approval
        if not (
            approval is None
            or isinstance(approval, bool)
            or approval == "destructive"
            or isinstance(approval, ApprovalByRisk)
            or (
                not isinstance(approval, str | bytes)
                and isinstance(approval, Collection)
                and all(isinstance(n, str) for n in approval)
            )
        ):
            raise MCPConfigError(
                None,
                None,
                "approval must be 'destructive', a collection of tool names, an ApprovalByRisk, True "
                f"(every tool), False or None; got {approval!r}",
            )
        if not self.approval_decisions:
            raise MCPConfigError(None, None, "approval_decisions must allow at least one decision")
        if self.approval_mode not in APPROVAL_MODES:
            raise MCPConfigError(
                None, None, f"approval_mode must be one of {list(APPROVAL_MODES)}; got {self.approval_mode!r}"
            )

    @property
    def may_ask(self) -> bool:
        """Can a call need a person's approval under these options (the face's ``approval``, or a
        tool's or server's ``ToolOptions(approval=...)``)?"""
        own = [*(self.tool_options or {}).values(), *(self.server_options or {}).values()]
        return self.approval not in (None, False) or any(o.approval not in (None, False) for o in own)

    def hold_pool(self, connections: Any) -> tuple[MCPPool, bool]:
        """The face's pool and whether the face owns it: ``connections`` itself when it is an
        :class:`~langgraph_mcp.MCPPool` (left to its owner), else a pool made from them."""
        catalog = self.search.catalog if self.search is not None else None
        if isinstance(connections, MCPPool):
            if catalog is not None and connections.catalog is None:
                raise MCPConfigError(
                    None,
                    None,
                    "ToolSearch.catalog is for a pool made from connections: give a shared MCPPool "
                    "its catalog as MCPPool(..., tool_catalog=...)",
                )
            return connections, False
        pool = MCPPool(
            connections,
            on_connection_error=self.on_connection_error,
            default_timeout=self.default_timeout,
            tool_catalog=catalog,
        )
        return pool, True

    def toolset(self, pool: MCPPool, *, messages_key: str, local: Collection[str] = ()) -> ToolSet:
        """The face's tools bound to these options; no MCP tool takes a name in ``local`` (the
        face's own tools) or the search tool's."""
        search = (self.search.name,) if self.search is not None else ()
        return ToolSet(
            pool,
            tool_options=self.tool_options,
            server_options=self.server_options,
            approval=self.approval,
            approval_decisions=self.approval_decisions,
            approval_mode=self.approval_mode,
            tool_filter=self.tool_filter,
            messages_key=messages_key,
            reserved=[*local, *search],
        )

    def searcher(self, toolset: ToolSet, users: UserCatalogs | None = None) -> ToolSearcher | None:
        """The search tool over ``toolset`` and, for per-user servers, each run's user's own tools
        (``users``); ``None`` when ``tool_search`` is off."""
        return ToolSearcher(toolset, self.search, users) if self.search is not None else None

    @staticmethod
    def readers(pool: MCPPool) -> list[BaseTool]:
        """``read_tool_output`` when a server of ``pool`` keeps cut outputs in the store, else none."""
        return reader_tools(pool.servers)

    def for_views(self) -> Self:
        """These options for the node answering MCP Apps views' calls: the same tool options,
        approval and ``tool_filter``; no search (views are offered none), no view calls."""
        return dataclasses.replace(self, tool_search=False, raise_errors=(), view_calls=False)


def _search_settings(value: bool | ToolSearch | None) -> ToolSearch | None:
    if value is None or value is False:
        return None
    if value is True:
        return ToolSearch()
    if isinstance(value, ToolSearch):
        return value
    raise MCPConfigError(None, None, f"tool_search must be True, False or a ToolSearch; got {value!r}")


class PoolHolder:
    """What ``MCPToolNode`` and ``MCPMiddleware`` share: a pool, either their own (made from
    connections; they close it) or a shared :class:`MCPPool` (left to its owner)."""

    pool: MCPPool
    _owns_pool: bool

    async def drain(self, timeout: float) -> bool:
        """See :meth:`MCPPool.drain` (the pool, shared or not)."""
        return await self.pool.drain(timeout)

    async def aclose(self) -> None:
        """Close an own pool (a shared pool is left to its owner)."""
        if self._owns_pool:
            await self.pool.aclose()

    def close(self) -> None:
        """:meth:`aclose` from synchronous code."""
        if self._owns_pool:
            self.pool.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


SHARED: tuple[str, ...] = (
    "connections",
    "tool_options",
    "server_options",
    "approval",
    "approval_decisions",
    "approval_mode",
    "tool_filter",
    "tool_search",
    "on_connection_error",
    "default_timeout",
)
"""The options ``MCPToolNode``, ``MCPMiddleware`` and ``create_mcp_agent`` all take."""

AS_FOR_NODE = "As for :class:`~langgraph_mcp.MCPToolNode`."
"""An ``Args:`` entry that means :data:`OPTION_DOCS`' text (face-specific sentences may follow)."""

AS_FOR_MIDDLEWARE = "As for :class:`~langgraph_mcp.MCPMiddleware`."
"""``create_mcp_agent``'s entry for an option whose meaning is ``MCPMiddleware``'s."""

OPTION_DOCS: Mapping[str, str] = {
    "connections": (
        "An :class:`~langgraph_mcp.MCPPool` to share, or anything "
        ":func:`~langgraph_mcp.load_connections` accepts (a dict of servers, a JSON config path, "
        "an ``MCPServer``): then a pool of its own is made, closed with ``aclose``."
    ),
    "tool_options": (
        ':class:`~langgraph_mcp.options.ToolOptions` per tool (``"server/tool"``, or the MCP tool '
        "name, prefixed or not; see :mod:`langgraph_mcp.options`): hidden arguments, headers, "
        "``_meta``, results into state, approval."
    ),
    "server_options": ":class:`~langgraph_mcp.options.ToolOptions` per server, for all of its tools.",
    "approval": (
        'Which tools wait for a person\'s approval before each call (``"destructive"``, a '
        "collection of tool names as for ``tool_options``, ``True``, or ``None``), or an "
        ":class:`~langgraph_mcp.options.ApprovalByRisk`: the calls it finds risky (by MCP "
        "annotations, a risk classifier, or both) ask, low-risk ones run unasked."
    ),
    "approval_decisions": (
        'The decisions a person may take (default approve, edit, reject; ``"respond"`` may be added).'
    ),
    "approval_mode": (
        '``"per_call"``: each call asks in an interrupt of its own when it runs '
        '(:class:`~langgraph_mcp.types.MCPApprovalInterrupt`). ``"batched"``: the calls of one '
        "model turn that need approval are asked together in one interrupt "
        "(:class:`~langgraph_mcp.types.MCPApprovalsInterrupt`, langchain's ``HITLRequest`` shape; "
        "a single one keeps its own ``MCPApprovalInterrupt``) answered with one decision per call, "
        "in order, before any of them runs, as UIs that resume without an interrupt id (Agent Chat "
        'UI) need. Default: ``"per_call"`` for ``MCPToolNode``, ``"batched"`` for '
        "``MCPMiddleware`` and ``create_mcp_agent`` (as ``HumanInTheLoopMiddleware``)."
    ),
    "tool_filter": (
        "``(tool, run context) -> bool``: which MCP tools a run may call; the model is offered only "
        "those, and a call to another gets ``ToolNode``'s invalid-tool message."
    ),
    "tool_search": (
        "``True`` or a :class:`~langgraph_mcp.options.ToolSearch`: instead of every MCP tool, the "
        "model is offered a search tool (``search_tools``) and the MCP tools a search revealed in "
        "the graph state (``mcp_revealed_tools``, still subject to ``tool_filter``); a call to an "
        "MCP tool not revealed gets ``ToolNode``'s invalid-tool message. Off by default."
    ),
    "on_connection_error": "For a pool made from ``connections``; see :class:`~langgraph_mcp.MCPPool`.",
    "default_timeout": "For a pool made from ``connections``; see :class:`~langgraph_mcp.MCPPool`.",
    "raise_errors": (
        'Failure kinds (``"connection"``, ``"timeout"``, ``"protocol"``, ``"tool_error"``, '
        "...) raised as :class:`~langgraph_mcp.MCPToolCallError` instead of returned as error "
        "``ToolMessage`` s, for a ``ToolRetryMiddleware`` (``retry_on=(MCPToolCallError,)``)."
    ),
    "view_calls": (
        "Take the calls of MCP Apps views (``langgraph_mcp.apps``): the agent state gets the "
        "``mcp_app_calls`` and ``mcp_app_context`` keys and a ``before_agent`` hook that answers a "
        "run started for a view's call (the route's runs) with the view-calls node "
        ":attr:`~langgraph_mcp.MCPMiddleware.view_calls`, under the middleware's policies, then "
        "ends the run without reaching the model. Serve its route with ``app_routes(middleware)``. "
        "A view's model context (``mcp_app_context``) is given to the model before the "
        "conversation, as data (``langgraph_mcp.apps.app_context_message``)."
    ),
}
"""Each option's one description, the text of the faces' ``Args:`` entries (pinned by a test)."""
