"""The MCP tools one node or middleware offers, bound to its options.

:class:`ToolSet` is shared by ``MCPToolNode`` and ``MCPMiddleware``: it loads the pool's tools
(:func:`~langgraph_mcp._catalog.build.load_catalog`: those meant only for an MCP Apps view too),
binds each to its :class:`~langgraph_mcp.options.ToolOptions` and approval setting once per listing
(by server and MCP name, see :mod:`langgraph_mcp._catalog.refs`) and withholds a tool whose options
cannot be bound to it alone. The result is one :class:`Bound` per listing version; which of its
tools one run may use (the per-run ``tool_filter``, visibility, reveals) is
:class:`~langgraph_mcp._catalog.view.ToolView`'s question. A tool that a new listing gives as the
same object, with the same options, keeps its bound copy (its model schema and argument checker).
"""

from __future__ import annotations

import dataclasses
import logging
import operator
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import cached_property
from typing import Any

from langgraph_mcp._call.adapter import MCPTool
from langgraph_mcp._call.approval import (
    DECISIONS,
    ApprovalMode,
    ApprovalRequest,
    allowed_in,
    recorded_turn,
    turn_pending,
)
from langgraph_mcp._call.view import model_visible
from langgraph_mcp._catalog.build import load_catalog
from langgraph_mcp._catalog.refs import ToolRef, exposed_names, may_also_mean, parse_refs, unqualified_forms
from langgraph_mcp._compat.langgraph import injected_args
from langgraph_mcp._pool.pool import MCPPool
from langgraph_mcp._support.pace import Pace
from langgraph_mcp.config import HTTPServerConfig
from langgraph_mcp.errors import MCPConfigError, MCPConnectionError
from langgraph_mcp.options import ApprovalByRisk, ApprovalPolicy, ToolFilter, ToolOptions, is_destructive

__all__ = ["DEFAULT_DECISIONS", "Bound", "ToolSet", "merge_options"]

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
        # A per-user server's headers are its runs' credentials: a tool's own never replace them.
        headers=base.headers if base.per_user else own.headers or base.headers,
        meta=own.meta or base.meta,
        result=own.result if own.result is not None else base.result,
        approval=own.approval if own.approval is not None else base.approval,
        per_user=base.per_user,
    )


@dataclasses.dataclass(frozen=True, eq=False)
class Bound:
    """One listing version's MCP tools, bound to one face's options; a new object only when the
    bound tools change. What depends on these tools alone is worked out here, once per listing."""

    tools: list[MCPTool]
    withheld: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Names of tools not offered, and why (their options could not be bound to them alone)."""
    _deferred: dict[int, MCPTool] = dataclasses.field(default_factory=dict, repr=False)

    @cached_property
    def by_name(self) -> Mapping[str, MCPTool]:
        return {t.name: t for t in self.tools}

    @cached_property
    def by_ref(self) -> Mapping[tuple[str, str], MCPTool]:
        """The tools by server and MCP name (the first, should a listing name one twice)."""
        refs: dict[tuple[str, str], MCPTool] = {}
        for tool in self.tools:
            refs.setdefault((tool.server, tool.mcp_name), tool)
        return refs

    @cached_property
    def app_only(self) -> bool:
        """Are some tools meant only for an MCP Apps view?"""
        return any(not model_visible(t.mcp_meta) for t in self.tools)

    @cached_property
    def injected(self) -> Mapping[str, Any]:
        """``ToolNode``'s injected arguments of each tool, by name."""
        # LangGraph works a tool's injected arguments out from a pydantic model it builds per tool
        # name (~5 ms each). For MCP tools they depend only on what the tools share (a JSON-schema
        # ``args_schema`` and the injected-runtime signature), so they are worked out once per kind.
        shared: dict[tuple[Any, ...], Any] = {}
        injected = {}
        for tool in self.tools:
            kind = (type(tool), tool.func, tool.coroutine, isinstance(tool.args_schema, dict))
            if kind not in shared or not kind[3]:
                shared[kind] = injected_args(tool)
            injected[tool.name] = shared[kind]
        return injected

    def deferred(self, tool: MCPTool) -> MCPTool:
        """``tool`` marked ``defer_loading`` (provider-native tool search), copied once."""
        copy = self._deferred.get(id(tool))
        if copy is None:
            copy = self._deferred[id(tool)] = tool.model_copy(
                update={"extras": {**(tool.extras or {}), "defer_loading": True}}
            )
        return copy


class ToolSet:
    """The bound MCP tools of one node or middleware.

    Raises at construction (:class:`~langgraph_mcp.MCPConfigError`, a ``ValueError``) for options
    that name no configured server or a ``"server/tool"`` reference its server never exposes (the
    options themselves are checked by the face's
    :class:`~langgraph_mcp._graph.spec.MCPOptions`).
    """

    def __init__(
        self,
        pool: MCPPool,
        *,
        tool_options: Mapping[str, ToolOptions] | None = None,
        server_options: Mapping[str, ToolOptions] | None = None,
        approval: ApprovalPolicy = None,
        approval_decisions: Sequence[str] = DEFAULT_DECISIONS,
        approval_mode: ApprovalMode = "per_call",
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
        for key, options in self.tool_options.items():
            if options.per_user:
                raise MCPConfigError(
                    None,
                    None,
                    f"tool_options[{key!r}]: per_user belongs in server_options (it is the server's)",
                )
        for server, options in self.server_options.items():
            if options.per_user:
                _check_per_user(server, options, pool)
                pool.acts_per_user(server)
        self.approval_mode: ApprovalMode = approval_mode
        self.approval = approval
        configs = pool.servers
        self._option_refs = parse_refs(self.tool_options, configs, "tool_options")
        self._approval_refs = (
            parse_refs(approval, configs, "approval")
            if approval is not None and not isinstance(approval, bool | str | ApprovalByRisk)
            else []
        )
        self.approval_decisions = tuple(approval_decisions)
        self.tool_filter = tool_filter
        self.messages_key = messages_key
        self.reserved = frozenset(reserved)
        self._source: list[MCPTool] | None = None
        self._bindings: dict[int, _Binding] = {}
        self.bound = Bound([])
        """The tools of the last listing, bound (no I/O); swapped whole when they change."""

    async def tools(self) -> list[MCPTool]:
        """Every MCP tool, bound; the same objects until a listing changes. A tool whose
        ``tool_options`` key may also mean another server's tool is withheld (logged).

        Raises:
            MCPConnectionError: per the pool's ``on_connection_error``.
        """
        source = await load_catalog(self.pool, reserved=self.reserved)
        if source is not self._source:
            bindings, bound, withheld, used = await self.bind(source, self._bindings)
            if source is self._source:
                return self.bound.tools  # bound meanwhile by a concurrent call
            self._warn_unmatched(used, exposed_names(self.pool.servers, self.pool.remembered))
            last = self.bound
            if not (
                withheld == last.withheld
                and len(bound) == len(last.tools)
                and all(map(operator.is_, bound, last.tools))
            ):
                # Swapped whole: runs already in flight keep a consistent view. The same tools keep
                # the same Bound (and list), so callers see no change.
                self.bound = Bound(bound, withheld)
            self._source, self._bindings = source, bindings
        return self.bound.tools

    async def bind(
        self, source: list[MCPTool], previous: Mapping[int, _Binding], *, private: bool = False
    ) -> tuple[dict[int, _Binding], list[MCPTool], dict[str, str], set[str]]:
        """``source``'s tools bound to their options: the bindings by source tool, the bound
        tools, the withheld ones (name -> why) and the option keys used. A tool bound before
        (in ``previous``) with the same options keeps its bound copy. ``private``: the tools are
        one user's (a per-user server's listing): a tool withheld is logged without its name."""
        names = exposed_names(self.pool.servers, self.pool.remembered)
        bindings: dict[int, _Binding] = {}
        bound: list[MCPTool] = []
        withheld: dict[str, str] = {}
        used: set[str] = set()
        pace = Pace()  # binding a thousand tools takes a while: let other calls run
        for tool in source:
            await pace()
            own, reason = self._own_options(tool, names, used)
            if reason is not None:
                self._needs_approval(tool, ToolOptions(), used)  # its approval names are not unmatched
                withheld[tool.name] = reason
                if private:
                    self.pool.warn_once(
                        logger,
                        "a tool MCP server %r lists for a user is withheld: its tool_options key may "
                        "mean more than one server's tool; write 'server/tool' keys",
                        tool.server,
                        key=f"withheld private {tool.server}",
                    )
                else:
                    self.pool.warn_once(
                        logger,
                        "MCP tool %r of server %r is withheld: %s",
                        tool.mcp_name,
                        tool.server,
                        reason,
                        key=f"withheld {tool.server}/{tool.mcp_name} {reason}",
                    )
                continue
            options, approval = self._options_for(tool, own, used)
            # A tool of the listing before, with the same options, keeps its bound copy:
            # its model schema and argument checker are not built again.
            binding = previous.get(id(tool))
            if not (
                binding is not None
                and binding.source is tool
                and binding.options == options
                and binding.approval == approval
            ):
                binding = _Binding(
                    tool,
                    options,
                    approval,
                    tool.with_options(options, approval=approval, messages_key=self.messages_key),
                )
            bindings[id(tool)] = binding
            bound.append(binding.bound)
        return bindings, bound, withheld, used

    async def current(self) -> list[MCPTool]:
        """:meth:`tools`, or when listing fails the tools of the last listing, if any (their calls
        report the error); raises as :meth:`tools` does when there are none."""
        try:
            return await self.tools()
        except MCPConnectionError:
            if not self.bound.tools:
                raise
            return self.bound.tools

    @property
    def known(self) -> list[MCPTool]:
        """The tools of the last listing (no I/O)."""
        return self.bound.tools

    def per_call_identity(self, server: str) -> bool:
        """Do calls to ``server`` carry per-call headers or ``_meta`` (its ``server_options``, or
        any of its listed tools' options)? Those are computed in a run, from its runtime."""
        own = self.server_options.get(server)
        if own is not None and (own.headers is not None or own.meta is not None):
            return True
        return any(
            b.source.server == server and (b.options.headers is not None or b.options.meta is not None)
            for b in self._bindings.values()
        )

    def get(self, name: str) -> MCPTool | None:
        """The bound tool exposed as ``name`` in the last listing."""
        return self.bound.by_name.get(name)

    async def approvals_of_turn(
        self,
        calls: Sequence[Mapping[str, Any]],
        allows: Callable[[MCPTool], bool],
        skip: Collection[str] = (),
        bound: Bound | None = None,
    ) -> list[ApprovalRequest]:
        """With ``approval_mode="batched"``: the approval questions the MCP ``calls`` of one model
        turn would ask, in call order (calls to tools the run may not use, ``allows`` says, calls
        to tools named in ``skip``, and calls whose arguments break the schema ask none: they fail
        without asking). Empty in ``"per_call"`` mode. ``bound``: the run's tools (default: the
        shared ones)."""
        get = (bound or self.bound).by_name.get
        requests = []
        if self.approval_mode == "batched":
            for call in calls:
                tool = None if call.get("name") in skip else get(call.get("name", ""))
                args = call.get("args")
                if tool is None or not tool.needs_approval or not isinstance(args, Mapping):
                    continue
                if not allows(tool):
                    continue
                request = await tool.approval_request(args, call.get("id"))
                if request is not None:
                    requests.append(request)
        return await self._as_asked(calls, requests, get)

    async def _as_asked(
        self,
        calls: Sequence[Mapping[str, Any]],
        requests: list[ApprovalRequest],
        get: Callable[[str], MCPTool | None],
    ) -> list[ApprovalRequest]:
        """``requests``, unless the run resumes a question about this turn's calls that asked
        about others (this process's policy or mode changed since it was asked): then that
        question's calls, rebuilt in the order it asked them, so that the person's answer is
        taken and applied (a reject stays a reject)."""
        if not turn_pending():
            return requests
        asked: dict[str, ApprovalRequest] = {}
        for call in calls:
            tool = get(call.get("name", ""))
            args = call.get("args")
            if tool is not None and isinstance(args, Mapping):
                request = await tool.approval_request(args, call.get("id"), allowed=DECISIONS)
                if request is not None:
                    asked.setdefault(request.key, request)
        keys = recorded_turn(list(asked)) if asked else None
        if keys is None or keys == [r.key for r in requests] or not set(keys) <= set(asked):
            return requests
        rebuilt = []
        for key in keys:
            tool = get(asked[key].name)
            request = (
                await tool.approval_request(
                    asked[key].payload["args"], asked[key].tool_call_id, allowed=allowed_in(key)
                )
                if tool is not None
                else None
            )
            if request is None:  # cannot be: it was built above
                return requests
            rebuilt.append(request)
        return rebuilt

    def _own_options(
        self, tool: MCPTool, names: dict[str, frozenset[str] | None], used: set[str]
    ) -> tuple[ToolOptions | None, str | None]:
        """The ``tool_options`` entry that is this tool's, and why it cannot be bound (or ``None``).

        A ``"server/tool"`` key wins; otherwise an unqualified key (the MCP name, or the name with
        the server's prefix) applies only if no other server offers, or may offer, that name."""
        qualified = [r for r in self._option_refs if r.server == tool.server and r.tool == tool.mcp_name]
        if qualified:
            used.add(qualified[0].key)
            return self.tool_options[qualified[0].key], None
        config = self.pool.servers[tool.server]
        forms = unqualified_forms(config, tool.mcp_name)
        keys = [r.key for r in self._option_refs if r.server is None and r.key in forms]
        if not keys:
            if any(r.server is None and r.key == tool.name for r in self._option_refs):
                used.add(tool.name)
                return None, (
                    f"tool_options key {tool.name!r} is the name it is exposed under only while tool "
                    f"names collide (it changes with which servers can be reached); write "
                    f"{tool.server + '/' + tool.mcp_name!r}"
                )
            return None, None
        used.update(keys)
        if len(keys) > 1:
            return None, (
                f"tool_options has two keys for it ({', '.join(map(repr, keys))}); keep one, or "
                f"write {tool.server + '/' + tool.mcp_name!r}"
            )
        others = may_also_mean(keys[0], tool.server, tool.mcp_name, self.pool.servers, names)
        if others:
            unknown = [o for o in others if names.get(o) is None]
            if unknown:
                why = (
                    f"MCP server(s) {', '.join(map(repr, unknown))} have not listed their tools yet "
                    "and may offer it too"
                )
            elif others == [tool.server]:
                why = f"another tool of MCP server {tool.server!r} has that name too"
            else:
                why = f"MCP server(s) {', '.join(map(repr, others))} offer it too"
            return None, (
                f"tool_options key {keys[0]!r} may mean more than one server's tool ({why}); write "
                f"{tool.server + '/' + tool.mcp_name!r} to bind the options to this one"
            )
        return self.tool_options[keys[0]], None

    def _options_for(
        self, tool: MCPTool, own: ToolOptions | None, used: set[str]
    ) -> tuple[ToolOptions, tuple[str, ...]]:
        """The options ``tool`` is bound to (its server's laid under its own) and the decisions a
        person may take before each of its calls (empty: no approval)."""
        server = self.server_options.get(tool.server)
        if server is not None and server.hidden:
            # A server's hidden arguments go only to the tools that declare them.
            declared = set(tool.args)
            server = dataclasses.replace(
                server, hidden={k: v for k, v in server.hidden.items() if k in declared}
            )
        options = merge_options(server, own)
        if options.approval is None and isinstance(self.approval, ApprovalByRisk):
            # The face's risk policy goes with the tool's options: each call judges its risk.
            options = dataclasses.replace(options, approval=self.approval)
        return options, self.approval_decisions if self._needs_approval(tool, options, used) else ()

    def _needs_approval(self, tool: MCPTool, options: ToolOptions, used: set[str]) -> bool:
        if options.approval is not None:
            return options.approval is not False  # True, or a risk policy (it may ask)
        if self.approval is None or isinstance(self.approval, bool):
            return bool(self.approval)
        if self.approval == "destructive":
            return is_destructive(tool)
        # Every tool a name may mean is asked about: a name never matches nothing by accident.
        # The name it is exposed under now counts too (a collision's name: asking more is safe).
        forms = unqualified_forms(self.pool.servers[tool.server], tool.mcp_name) | {tool.name}
        hits = [r.key for r in self._approval_refs if _means(r, tool, forms)]
        used.update(f"approval {k}" for k in hits)
        return bool(hits)

    def _warn_unmatched(self, used: set[str], names: dict[str, frozenset[str] | None]) -> None:
        unknown = [s for s, n in names.items() if n is None]
        later = (
            f"; MCP server(s) {', '.join(map(repr, unknown))} have not listed their tools yet"
            if unknown
            else ""
        )
        refs = [("tool_options", r, r.key) for r in self._option_refs]
        refs += [("approval", r, f"approval {r.key}") for r in self._approval_refs]
        for what, ref, mark in refs:
            if mark in used:
                continue
            self.pool.warn_once(
                logger,
                "%s names %r, which matches no MCP tool offered (a name is an MCP tool name, the name "
                "with its server's prefix, or 'server/tool')%s",
                what,
                ref.key,
                later,
                key=f"{what} {ref.key}",
            )


@dataclasses.dataclass(frozen=True, slots=True)
class _Binding:
    """A listed tool, the options and approval it was bound to, and the bound copy."""

    source: MCPTool
    options: ToolOptions
    approval: tuple[str, ...]
    bound: MCPTool


def _means(ref: ToolRef, tool: MCPTool, forms: frozenset[str]) -> bool:
    if ref.server is not None:
        return ref.server == tool.server and ref.tool == tool.mcp_name
    return ref.key in forms


def _check_per_user(server: str, options: ToolOptions, pool: MCPPool) -> None:
    """``server_options[server]`` with ``per_user``: it needs ``headers`` (the credentials), an
    HTTP server, and no ``oauth`` (which already makes the server per user).

    Raises:
        MCPConfigError: one of those does not hold.
    """
    config = pool.servers[server]
    why = None
    if options.headers is None:
        why = "per_user needs headers: the function that gives the run's credentials"
    elif not isinstance(config, HTTPServerConfig):
        why = "per_user is for streamable HTTP servers (credentials travel in HTTP headers)"
    elif getattr(config, "oauth", None) is not None:
        why = "the server has 'oauth': per_user headers and OAuth are two ways to act for a user; use one"
    if why is not None:
        raise MCPConfigError(server, None, f"server_options[{server!r}]: {why}")
