"""The MCP tools one node or middleware offers, bound to its options, and which of them one run
may use.

:class:`ToolSet` is shared by ``MCPToolNode`` and ``MCPMiddleware``: it loads the pool's tools
(:func:`~langgraph_mcp.load_mcp_tools`), binds each to its
:class:`~langgraph_mcp.options.ToolOptions` and approval setting once per listing, and applies
the per-run ``tool_filter``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Self

from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import INVALID_TOOL_NAME_ERROR_TEMPLATE

from langgraph_mcp._pool import MCPPool, OnConnectionError
from langgraph_mcp._tools import MCPTool, load_mcp_tools
from langgraph_mcp.config import DEFAULT_CALL_TIMEOUT
from langgraph_mcp.errors import MCPConfigError
from langgraph_mcp.options import ApprovalPolicy, ToolFilter, ToolOptions, is_destructive

__all__ = ["DEFAULT_DECISIONS", "PoolHolder", "ToolSet", "merge_options"]

logger = logging.getLogger("langgraph_mcp.tools")

DEFAULT_DECISIONS: tuple[str, ...] = ("approve", "edit", "reject")


def merge_options(base: ToolOptions | None, own: ToolOptions | None) -> ToolOptions:
    """``own`` laid over ``base``: each field that ``own`` sets wins; ``hidden`` is merged."""
    if base is None:
        return own or ToolOptions()
    if own is None:
        return base
    return ToolOptions(
        hidden={**base.hidden, **own.hidden},
        headers=own.headers or base.headers,
        meta=own.meta or base.meta,
        result=own.result if own.result is not None else base.result,
        approval=own.approval if own.approval is not None else base.approval,
    )


class ToolSet:
    """The bound MCP tools of one node or middleware.

    Raises at construction (``ValueError``) for options that name no configured server or an
    unknown approval policy.
    """

    def __init__(
        self,
        pool: MCPPool,
        *,
        tool_options: Mapping[str, ToolOptions] | None = None,
        server_options: Mapping[str, ToolOptions] | None = None,
        approval: ApprovalPolicy = None,
        approval_decisions: Sequence[str] = DEFAULT_DECISIONS,
        tool_filter: ToolFilter | None = None,
        messages_key: str = "messages",
        reserved: Collection[str] = (),
    ) -> None:
        self.pool = pool
        self.tool_options = dict(tool_options or {})
        self.server_options = dict(server_options or {})
        unknown = sorted(set(self.server_options) - set(pool.servers))
        if unknown:
            raise MCPConfigError(
                None,
                None,
                f"server_options names no configured MCP server: {unknown}; configured: {list(pool.servers)}",
            )
        if not (
            approval is None
            or isinstance(approval, bool)
            or approval == "destructive"
            or (
                not isinstance(approval, str | bytes)
                and isinstance(approval, Collection)
                and all(isinstance(n, str) for n in approval)
            )
        ):
            raise MCPConfigError(
                None,
                None,
                "approval must be 'destructive', a collection of tool names, True (every tool), False "
                f"or None; got {approval!r}",
            )
        if not approval_decisions:
            raise MCPConfigError(None, None, "approval_decisions must allow at least one decision")
        self.approval = approval
        self.approval_decisions = tuple(approval_decisions)
        self.tool_filter = tool_filter
        self.messages_key = messages_key
        self.reserved = frozenset(reserved)
        self._source: list[MCPTool] | None = None
        self._bound: list[MCPTool] = []
        self._by_name: dict[str, MCPTool] = {}

    async def tools(self) -> list[MCPTool]:
        """Every MCP tool, bound; the same objects until a listing changes.

        Raises:
            MCPConnectionError: per the pool's ``on_connection_error``.
        """
        source = await load_mcp_tools(self.pool, reserved=self.reserved)
        if source is not self._source:
            bound = [self._bind(tool) for tool in source]
            names = {t.name for t in bound}
            for name in sorted(set(self.tool_options) - names):
                self.pool.warn_once(
                    logger,
                    "tool_options names %r, which no reachable MCP server offers (tools: %s)",
                    name,
                    sorted(names),
                    key=f"tool_options {name}",
                )
            # Swapped whole: runs already in flight keep a consistent view.
            self._source, self._bound, self._by_name = source, bound, {t.name: t for t in bound}
        return self._bound

    @property
    def known(self) -> list[MCPTool]:
        """The tools of the last listing (no I/O)."""
        return self._bound

    def get(self, name: str) -> MCPTool | None:
        """The bound tool exposed as ``name`` in the last listing."""
        return self._by_name.get(name)

    @staticmethod
    def invalid(name: str, tool_call_id: str | None, available: Sequence[str]) -> ToolMessage:
        """``ToolNode``'s message for a call to a tool it does not have, listing ``available``."""
        return ToolMessage(
            INVALID_TOOL_NAME_ERROR_TEMPLATE.format(
                requested_tool=name, available_tools=", ".join(available)
            ),
            name=name,
            tool_call_id=tool_call_id or "",
            status="error",
        )

    def outage(self, name: str, tool_call_id: str | None) -> ToolMessage | None:
        """For a call to ``name``, a tool no reachable server offers: while some server cannot be
        reached (it may be that tool's server), an error message saying so, instead of calling
        the tool unknown; ``None`` when every server answered."""
        down = self.pool.unreachable()
        if not down:
            return None
        servers = ", ".join(repr(s) for s in down)
        return ToolMessage(
            f"Error: {name} cannot be called now: MCP server(s) {servers} could not be reached, and no "
            "reachable server offers it. Try again later.",
            name=name,
            tool_call_id=tool_call_id or "",
            status="error",
        )

    def allows(self, tool: MCPTool, context: Any) -> bool:
        """May a run with this context see and call ``tool``?"""
        return self.tool_filter is None or bool(self.tool_filter(tool, context))

    def allowed(self, tools: Sequence[MCPTool], context: Any) -> list[MCPTool]:
        return [t for t in tools if self.allows(t, context)]

    def _bind(self, tool: MCPTool) -> MCPTool:
        server = self.server_options.get(tool.server)
        if server is not None and server.hidden:
            # A server's hidden arguments go only to the tools that declare them.
            declared = set(tool.args)
            server = dataclasses.replace(
                server, hidden={k: v for k, v in server.hidden.items() if k in declared}
            )
        options = merge_options(server, self.tool_options.get(tool.name))
        return tool.with_options(
            options,
            approval=self.approval_decisions if self._needs_approval(tool, options) else (),
            messages_key=self.messages_key,
        )

    def _needs_approval(self, tool: MCPTool, options: ToolOptions) -> bool:
        if options.approval is not None:
            return options.approval
        if self.approval is None or isinstance(self.approval, bool):
            return bool(self.approval)
        if self.approval == "destructive":
            return is_destructive(tool)
        return tool.name in self.approval


class PoolHolder:
    """What ``MCPToolNode`` and ``MCPMiddleware`` share: a pool, either their own (made from
    connections; they close it) or a shared :class:`MCPPool` (left to its owner)."""

    pool: MCPPool
    _owns_pool: bool

    def _hold_pool(
        self,
        connections: Any,
        *,
        on_connection_error: OnConnectionError = "raise",
        default_timeout: float | None = DEFAULT_CALL_TIMEOUT,
    ) -> None:
        if isinstance(connections, MCPPool):
            self.pool, self._owns_pool = connections, False
        else:
            self.pool = MCPPool(
                connections, on_connection_error=on_connection_error, default_timeout=default_timeout
            )
            self._owns_pool = True

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
