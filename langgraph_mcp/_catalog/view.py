"""Which of a face's MCP tools one run may see and call, answered once.

:class:`ToolView` is built for one run (a node's run, a model call, a tool call) over a face's
bound listing (:class:`~langgraph_mcp._catalog.bind.Bound`) from four inputs: the audience (the
model, or an MCP Apps view), the run's context (what the ``tool_filter`` is given), the tools
revealed in the state when tool search is on, and the names the face serves itself. ``MCPToolNode``,
``MCPMiddleware``, the search tool and the MCP Apps view-call node and route all ask it instead of
working the answer out again: which tools exist, which the model is offered, whether a call may
reach its tool (or the message refusing it), which calls of a turn ask no approval.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from functools import cached_property
from typing import Any, Literal
from urllib.parse import quote

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import INVALID_TOOL_NAME_ERROR_TEMPLATE

from langgraph_mcp._call.adapter import MCPTool
from langgraph_mcp._call.approval import ApprovalRequest
from langgraph_mcp._call.view import app_visible, model_visible
from langgraph_mcp._catalog.bind import Bound, ToolSet
from langgraph_mcp._catalog.users import RunTools
from langgraph_mcp.options import REVEALED_KEY

__all__ = ["Audience", "ToolView", "invalid", "revealed_in", "tool_ref"]

Audience = Literal["model", "app"]


def tool_ref(tool: MCPTool) -> str:
    """The tool's entry in :data:`~langgraph_mcp.options.REVEALED_KEY`: ``"server/tool"``
    (configured server, MCP name), the server's name percent-encoded so that a ``/`` in either name
    cannot make two tools one entry (``"a"`` + ``"b/c"`` and ``"a/b"`` + ``"c"``)."""
    return f"{quote(tool.server, safe='')}/{tool.mcp_name}"


def revealed_in(state: Any) -> frozenset[str]:
    """The entries revealed in ``state`` (a mapping or an object with the key as attribute)."""
    value = state.get(REVEALED_KEY) if isinstance(state, Mapping) else getattr(state, REVEALED_KEY, None)
    if not isinstance(value, list | tuple):
        return frozenset()
    return frozenset(e for e in value if isinstance(e, str))


def invalid(name: str, tool_call_id: str | None, available: Sequence[str]) -> ToolMessage:
    """``ToolNode``'s message for a call to a tool it does not have, listing ``available``."""
    return ToolMessage(
        INVALID_TOOL_NAME_ERROR_TEMPLATE.format(requested_tool=name, available_tools=", ".join(available)),
        name=name,
        tool_call_id=tool_call_id or "",
        status="error",
    )


class ToolView:
    """One run's answers about a face's bound MCP tools.

    Args:
        toolset: The face's tool set; the view reads its bound listing as it is now
            (:attr:`~langgraph_mcp._catalog.bind.ToolSet.bound`, no I/O).
        audience: ``"model"`` (never a tool meant only for an MCP Apps view) or ``"app"`` (only
            tools whose visibility includes ``"app"``).
        context: The run's context, given to the ``tool_filter``.
        revealed: With tool search, the entries revealed in the state (only those tools are
            offered, and a call to another MCP tool is refused); ``None``: every tool the run may
            use is offered.
        local: The names the face serves itself (local tools, readers, the search tool), in the
            order its invalid-tool message lists them; their calls are not MCP calls.
        quiet: More names whose calls ask no approval in a batch (an agent's own tools).
        run: The tools of the run's user (:meth:`~langgraph_mcp._catalog.users.UserCatalogs.for_run`:
            their own for per-user servers, and the sign-in tools standing for those they have not
            connected); ``None``: the shared tools, no sign-in tool.
        lists: Which invalid-tool message the face gives, as each gave it before the view (the two
            differ, and both are kept): ``"node"`` (``MCPToolNode``) refuses a call to an unknown
            tool while some tools are kept from the model, and lists ``local`` and the offered
            tools in each refusal; ``"agent"`` (``MCPMiddleware``) leaves an unknown tool to the
            agent's own tool node, lists only the allowed MCP tools when the filter refuses, and
            ``local`` and the offered tools when the tool was not revealed.

    :meth:`allows` asks the ``tool_filter`` at most once per tool: one view per run calls it at
    most once per tool per run.
    """

    def __init__(
        self,
        toolset: ToolSet,
        *,
        audience: Audience = "model",
        context: Any = None,
        revealed: frozenset[str] | None = None,
        local: Sequence[str] = (),
        quiet: Collection[str] = (),
        lists: Literal["node", "agent"] = "node",
        run: RunTools | None = None,
    ) -> None:
        self.toolset = toolset
        self.bound: Bound = run.bound if run is not None else toolset.bound
        model = run is not None and audience == "model"
        self.signin: tuple[BaseTool, ...] = run.signin if run is not None and model else ()
        """The sign-in tools the model is offered next to :attr:`offered` (the face serves them)."""
        self.serves: Mapping[str, BaseTool] = run.serves if run is not None and model else {}
        """Every sign-in tool a call may name (the face runs them)."""
        self.audience: Audience = audience
        self.context = context
        self.revealed = revealed
        self.local = tuple(local)
        self._quiet = frozenset(quiet)
        self._lists = lists
        self._allows: dict[int, tuple[MCPTool, bool]] = {}

    # -- what exists, and what the model is offered -------------------------------------------------

    @property
    def tools(self) -> list[MCPTool]:
        """Every MCP tool of the bound listing (those kept from this audience included)."""
        return self.bound.tools

    def visible(self, tool: MCPTool) -> bool:
        """Is ``tool`` meant for this audience (see :func:`~langgraph_mcp._call.view.model_visible`
        and :func:`~langgraph_mcp._call.view.app_visible`)? The ``tool_filter`` is not asked."""
        return (app_visible if self.audience == "app" else model_visible)(tool.mcp_meta)

    def allows(self, tool: MCPTool) -> bool:
        """May this run see and call ``tool``: meant for this audience, and the ``tool_filter``
        (asked once per tool) lets it through."""
        known = self._allows.get(id(tool))
        if known is not None and known[0] is tool:
            return known[1]
        tool_filter = self.toolset.tool_filter
        answer = self.visible(tool) and (tool_filter is None or bool(tool_filter(tool, self.context)))
        self._allows[id(tool)] = (tool, answer)  # the tool is kept: its id cannot be reused meanwhile
        return answer

    def shows(self, tool: MCPTool) -> bool:
        """Was ``tool`` revealed (always, without tool search)?"""
        return self.revealed is None or tool_ref(tool) in self.revealed

    @cached_property
    def allowed(self) -> list[MCPTool]:
        """The MCP tools this run may use, in listing order."""
        return [t for t in self.bound.tools if self.allows(t)]

    @cached_property
    def offered(self) -> list[MCPTool]:
        """The MCP tools the model is offered: those this run may use and, with tool search,
        that were revealed."""
        if self.revealed is None:
            return self.allowed
        if not self.revealed:
            return []
        return [t for t in self.bound.tools if tool_ref(t) in self.revealed and self.allows(t)]

    @property
    def hides_any(self) -> bool:
        """Are some tools of the listing kept from this run (a ``tool_filter``, tools meant only for
        an MCP Apps view, or the view's audience)?"""
        return self.toolset.tool_filter is not None or self.bound.app_only or self.audience == "app"

    def find(self, server: str, mcp_name: str) -> MCPTool | None:
        """The bound tool of ``server`` named ``mcp_name`` by its server (visibility not checked)."""
        return self.bound.by_ref.get((server, mcp_name))

    # -- one call -----------------------------------------------------------------------------------

    def unavailable(self, name: str, tool_call_id: str | None) -> ToolMessage | None:
        """For a call to ``name``, a tool the listing does not offer: an error message when it is
        withheld (its options could not be bound to it alone) or, while some server cannot be
        reached (it may be that tool's server), one saying so instead of calling the tool unknown;
        ``None`` otherwise."""
        if name in self.bound.withheld:
            return ToolMessage(
                f"Error: {name} cannot be called: its configured options could not be bound to one "
                "MCP server's tool, so it is not offered. Try another tool.",
                name=name,
                tool_call_id=tool_call_id or "",
                status="error",
            )
        down = self.toolset.pool.unreachable()
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

    def route(self, name: str, tool_call_id: str | None) -> MCPTool | ToolMessage | None:
        """The MCP tool a call to ``name`` runs with; or the message refusing it (withheld, a
        server down, not allowed, not revealed: ``ToolNode``'s invalid-tool message, fail closed);
        or ``None``: not an MCP tool of this view, left to the face (a local tool, or an unknown
        tool given ``ToolNode``'s own message)."""
        if (self._lists == "node" and name in self.local) or (
            name in self.serves and name not in self.bound.by_name  # an MCP tool's name wins
        ):
            return None
        tool = self.bound.by_name.get(name)
        if tool is None:
            outage = self.unavailable(name, tool_call_id)
            if outage is not None or self._lists == "agent" or not self.hides_any:
                return outage
            return invalid(name, tool_call_id, self._listed())
        if not self.allows(tool):
            if self._lists == "agent":
                return invalid(name, tool_call_id, [t.name for t in self.allowed])
            return invalid(name, tool_call_id, self._listed())
        if not self.shows(tool):
            return invalid(name, tool_call_id, self._listed())
        return tool

    def _listed(self) -> list[str]:
        return [*self.local, *(t.name for t in self.signin), *(t.name for t in self.offered)]

    # -- one turn -----------------------------------------------------------------------------------

    def not_asked(self) -> frozenset[str]:
        """Names whose calls ask no approval question in a batch: the face's own and, with tool
        search, the MCP tools not revealed (their calls are refused). The ``tool_filter`` is
        applied by :meth:`approvals`."""
        names = {*self.local, *self._quiet, *self.serves}
        if self.revealed is not None:
            names.update(t.name for t in self.bound.tools if tool_ref(t) not in self.revealed)
        return frozenset(names)

    async def approvals(self, calls: Sequence[Mapping[str, Any]]) -> list[ApprovalRequest]:
        """The approval questions the MCP ``calls`` of one model turn ask together (see
        :meth:`~langgraph_mcp._catalog.bind.ToolSet.approvals_of_turn`)."""
        return await self.toolset.approvals_of_turn(calls, self.allows, self.not_asked(), self.bound)
