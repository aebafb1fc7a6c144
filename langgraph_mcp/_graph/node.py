"""``MCPToolNode``: LangGraph's ``ToolNode`` with tools that live on MCP servers.

Everything ``ToolNode`` defines is inherited unchanged: the four input shapes,
output shapes and ``Command`` merging, ``handle_tool_errors`` and its error
templates, ``Command`` validation, ``wrap_tool_call`` / ``awrap_tool_call``,
state/store/runtime injection, and execution through ``BaseTool.ainvoke`` (so
callbacks, tracing and ``stream_mode="tools"`` work). What this class adds:

* the tool set: before each run it makes sure the MCP servers are connected and
  their current tools are registered next to the local ``tools`` (a server that was
  unreachable is tried again, after its back-off, on a later run);
* in a checkpointed run with several calls, each call runs as its own LangGraph task
  (``mcp_tool_call``), whatever the servers' policies: every question surfaces at
  once, no answer and no stored result can reach the wrong call, and a call that
  finished is replayed from the checkpoint, not sent again, when the node runs again;
* graph-side options (:mod:`langgraph_mcp.options`): hidden arguments, per-call
  headers and ``_meta``, results into state, approval, and a per-run ``tool_filter``
  (a call to a tool the run may not use gets ``ToolNode``'s invalid-tool message);
* tool search (``tool_search=True``): a search tool among the node's tools, and
  :meth:`~MCPToolNode.get_tools` given the graph state offers only the MCP tools revealed in it;
  a call to an MCP tool not revealed gets the invalid-tool message;
* synchronous use (``graph.invoke``): the calls run on the package's own event loop.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, ClassVar, Self, cast

from langchain_core.messages import AnyMessage, ToolCall, ToolMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import get_config_list
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.func import task
from langgraph.prebuilt import ToolNode, ToolRuntime
from langgraph.prebuilt.tool_node import (
    AsyncToolCallWrapper,
    ToolCallWrapper,
)
from langgraph.runtime import Runtime
from pydantic import BaseModel

from langgraph_mcp._call.adapter import MCPTool
from langgraph_mcp._call.approval import GIVEN, ApprovalMode
from langgraph_mcp._catalog.bind import DEFAULT_DECISIONS, ToolSet
from langgraph_mcp._catalog.search import ToolSearcher
from langgraph_mcp._catalog.users import RunTools, UserCatalogs
from langgraph_mcp._catalog.view import Audience, ToolView, revealed_in
from langgraph_mcp._compat.langgraph import (
    adropped_step,
    default_handle_tool_errors,
    dropped_step,
    graph_config,
    graph_store,
    injected_args,
    is_checkpointed,
)
from langgraph_mcp._graph.batch import (
    Batch,
    Turn,
    ask_turn,
    first_failure,
    judge_turn,
    resuming,
    risk_keys,
    risk_policies,
)
from langgraph_mcp._graph.spec import MCPOptions, PoolHolder
from langgraph_mcp._graph.unanswered import made_up, what_happened
from langgraph_mcp._pool.pool import OnConnectionError
from langgraph_mcp._support.sync import run_sync
from langgraph_mcp.config import DEFAULT_CALL_TIMEOUT
from langgraph_mcp.errors import MCPConfigError
from langgraph_mcp.options import ApprovalPolicy, ToolFilter, ToolOptions, ToolSearch

__all__ = ["MCPToolNode"]


_BATCH: contextvars.ContextVar[Batch | None] = contextvars.ContextVar("langgraph_mcp_batch", default=None)

_VIEW: contextvars.ContextVar[ToolView | None] = contextvars.ContextVar("langgraph_mcp_view", default=None)
"""The tool view of the node's run (its calls ask it instead of building their own)."""

_TABLES: contextvars.ContextVar[tuple[Any, dict[str, BaseTool], dict[str, Any]] | None] = (
    contextvars.ContextVar("langgraph_mcp_tables", default=None)
)
"""For a run whose user sees tools of their own (per-user servers): the node, and its tool
table and injected arguments for that run."""


async def _run_tool_call(thunk: Callable[[], Awaitable[Any]]) -> Any:
    return await thunk()


def _run_tool_call_sync(thunk: Callable[[], Any]) -> Any:
    return thunk()


_tool_call_task: Any = task(name="mcp_tool_call")(_run_tool_call)  # type: ignore[arg-type]
_tool_call_task_sync: Any = task(name="mcp_tool_call")(cast(Any, _run_tool_call_sync))


class MCPToolNode(PoolHolder, ToolNode):
    """A drop-in ``ToolNode`` whose tools live on MCP servers.

    Args:
        connections: An :class:`~langgraph_mcp.MCPPool` to share, or anything
            :func:`~langgraph_mcp.load_connections` accepts (a dict of servers, a JSON config path,
            an ``MCPServer``): then a pool of its own is made, closed with ``aclose``.
        tools: Local LangChain tools (or callables) served by the same node.
            Their names win over MCP tool names.
        on_connection_error: For a pool made from ``connections``; see :class:`~langgraph_mcp.MCPPool`.
        default_timeout: For a pool made from ``connections``; see :class:`~langgraph_mcp.MCPPool`.
        tool_options: :class:`~langgraph_mcp.options.ToolOptions` per tool (``"server/tool"``, or the
            MCP tool name, prefixed or not; see :mod:`langgraph_mcp.options`): hidden arguments,
            headers, ``_meta``, results into state, approval.
        server_options: :class:`~langgraph_mcp.options.ToolOptions` per server, for all of its tools.
        approval: Which tools wait for a person's approval before each call (``"destructive"``, a
            collection of tool names as for ``tool_options``, ``True``, or ``None``), or an
            :class:`~langgraph_mcp.options.ApprovalByRisk`: the calls it finds risky (by MCP
            annotations, a risk classifier, or both) ask, low-risk ones run unasked.
        approval_decisions: The decisions a person may take (default approve, edit, reject;
            ``"respond"`` may be added).
        approval_mode: ``"per_call"``: each call asks in an interrupt of its own when it runs
            (:class:`~langgraph_mcp.types.MCPApprovalInterrupt`). ``"batched"``: the calls of one
            model turn that need approval are asked together in one interrupt
            (:class:`~langgraph_mcp.types.MCPApprovalsInterrupt`, langchain's ``HITLRequest`` shape;
            a single one keeps its own ``MCPApprovalInterrupt``) answered with one decision per
            call, in order, before any of them runs, as UIs that resume without an interrupt id
            (Agent Chat UI) need. Default: ``"per_call"`` for ``MCPToolNode``, ``"batched"`` for
            ``MCPMiddleware`` and ``create_mcp_agent`` (as ``HumanInTheLoopMiddleware``).
        tool_filter: ``(tool, run context) -> bool``: which MCP tools a run may call; the model is
            offered only those, and a call to another gets ``ToolNode``'s invalid-tool message.
            See :meth:`get_tools` for the model's side.
        tool_search: ``True`` or a :class:`~langgraph_mcp.options.ToolSearch`: instead of every MCP
            tool, the model is offered a search tool (``search_tools``) and the MCP tools a search
            revealed in the graph state (``mcp_revealed_tools``, still subject to ``tool_filter``); a
            call to an MCP tool not revealed gets ``ToolNode``'s invalid-tool message. Off by
            default. The node serves the search tool among its tools, and :meth:`get_tools` given
            the graph state offers only the revealed MCP tools (give the state schema
            :class:`~langgraph_mcp.options.ToolSearchState`'s key). ``ToolSearch(native=...)`` is
            refused: it changes the model request, which is
            :class:`~langgraph_mcp.MCPMiddleware`'s, not a node's.

    The remaining arguments are ``ToolNode``'s and mean exactly the same.

    Sessions open lazily on the first run (or with :meth:`start`) and stay open
    until :meth:`aclose` or ``async with`` exit; a node built on a shared pool
    leaves closing to the pool's owner. Synchronous runs (``invoke`` / ``stream``)
    work too: their calls run on the package's own event loop.
    """

    toolset: ToolSet
    search: ToolSearcher | None
    """The tool search (``None`` when ``tool_search`` is off)."""

    _audience: ClassVar[Audience] = "model"
    """Who calls through the node: the model, or (the view-call node) MCP Apps views, which are
    served no local tools, readers or search."""

    def __init__(
        self,
        connections: Any,
        *,
        tools: Sequence[BaseTool | Callable[..., Any]] = (),
        name: str = "tools",
        tags: list[str] | None = None,
        handle_tool_errors: Any = default_handle_tool_errors,
        messages_key: str = "messages",
        wrap_tool_call: ToolCallWrapper | None = None,
        awrap_tool_call: AsyncToolCallWrapper | None = None,
        on_connection_error: OnConnectionError = "raise",
        default_timeout: float | None = DEFAULT_CALL_TIMEOUT,
        tool_options: Mapping[str, ToolOptions] | None = None,
        server_options: Mapping[str, ToolOptions] | None = None,
        approval: ApprovalPolicy = None,
        approval_decisions: Sequence[str] = DEFAULT_DECISIONS,
        approval_mode: ApprovalMode = "per_call",
        tool_filter: ToolFilter | None = None,
        tool_search: bool | ToolSearch = False,
    ) -> None:
        options = MCPOptions(
            tool_options=tool_options,
            server_options=server_options,
            approval=approval,
            approval_decisions=approval_decisions,
            approval_mode=approval_mode,
            tool_filter=tool_filter,
            tool_search=tool_search,
            on_connection_error=on_connection_error,
            default_timeout=default_timeout,
        )
        self._setup(
            connections,
            options,
            tools,
            name=name,
            tags=tags,
            handle_tool_errors=handle_tool_errors,
            messages_key=messages_key,
            wrap_tool_call=wrap_tool_call,
            awrap_tool_call=awrap_tool_call,
        )

    @classmethod
    def _from_options(cls, connections: Any, options: MCPOptions, **node: Any) -> Self:
        """A node of these options; ``node``: ``ToolNode``'s keywords (no local tools)."""
        self = cls.__new__(cls)
        self._setup(connections, options, (), **node)
        return self

    def _setup(
        self,
        connections: Any,
        options: MCPOptions,
        tools: Sequence[BaseTool | Callable[..., Any]],
        **node: Any,
    ) -> None:
        """Sets the node up: ``tools`` are its local tools, ``node`` ``ToolNode``'s keywords."""
        settings = options.search
        if settings is not None and settings.native:
            raise MCPConfigError(
                None,
                None,
                "ToolSearch.native is for create_mcp_agent / MCPMiddleware (the model request is theirs); "
                "a graph of your own binds its model's tools itself",
            )
        super().__init__(list(tools), **node)
        self._options = options
        """The node's MCP options (the view-call node is made from them)."""
        self.pool, self._owns_pool = options.hold_pool(connections)
        readers = options.readers(self.pool) if self._audience == "model" else []
        for reader in readers:  # servers keeping cut outputs in the store
            if reader.name not in self._tools_by_name:
                self._tools_by_name[reader.name] = reader
                self._injected_args[reader.name] = injected_args(reader)
        self._local_tools = dict(self._tools_by_name)
        self._local_injected = dict(self._injected_args)
        self._mcp_tools: list[MCPTool] = []
        self.toolset = options.toolset(
            self.pool, messages_key=node.get("messages_key", "messages"), local=self._local_tools
        )
        if settings is not None and settings.name in self._local_tools:
            raise MCPConfigError(
                None,
                None,
                f"tool_search: a local tool is named {settings.name!r}; give ToolSearch another name",
            )
        self.users = UserCatalogs(self.toolset)
        """The per-user part of each run's tools (per-user OAuth, or per_user headers)."""
        self._run_tables: weakref.WeakKeyDictionary[RunTools, tuple[dict[str, BaseTool], dict[str, Any]]] = (
            weakref.WeakKeyDictionary()
        )
        self.search = options.searcher(self.toolset, self.users)
        if self.search is not None:
            self._tools_by_name[self.search.settings.name] = self.search.tool
            self._injected_args[self.search.settings.name] = injected_args(self.search.tool)
            self._local_tools = dict(self._tools_by_name)
            self._local_injected = dict(self._injected_args)

    async def get_tools(self, context: Any = None, *, state: Any = None) -> list[BaseTool]:
        """Local and MCP tools, ready for ``model.bind_tools(...)``; with a ``tool_filter``,
        only the MCP tools a run with this ``context`` may use. Never a tool meant only for an
        MCP Apps view (``_meta.ui.visibility`` without ``"model"``).

        With ``tool_search`` on: the local tools (the search tool among them) and, of the MCP
        tools, only those revealed in the graph ``state`` (none without it)::

            async def call_model(state: State, runtime: Runtime) -> dict:
                tools = await node.get_tools(runtime.context, state=state)
                return {"messages": [await model.bind_tools(tools).ainvoke(state["messages"])]}

        For a per-user server (per-user OAuth, per_user headers), the tools are those of the run's
        user (read from the run's config when called in a graph node): their own listing once they
        connected, else (OAuth) one ``connect_<server>`` tool standing for the server's tools,
        which asks them to connect.

        Connects the servers on first use. Raises per ``on_connection_error``.
        """
        await self._sync_tools()
        run = await self._run_tools(graph_config(), context, graph_store(), state)
        view = self._new_view(context, state, run)
        return [*self._local_tools.values(), *view.signin, *view.offered]

    @functools.cached_property
    def unanswered_repair(self) -> Runnable[Any, dict[str, Any] | None]:
        """A node (sync and async) for a graph of one's own that does what
        :class:`~langgraph_mcp.MCPMiddleware` does before each model call: a result a UI made up
        for an MCP call of this node's whose question was left unanswered (Agent Chat UI's
        "Successfully handled tool call." when the person types instead of answering) is replaced,
        same message id, by what happened to the call, read from the thread's checkpoints: its real
        result when it finished in the step the new input dropped, else an error saying it did not
        run and what it waited for. Other messages are left alone; no made-up result, no update.

        Put it first, before the model node (the made-up result comes with the new input)::

            builder.add_node("repair", tools.unanswered_repair)
            builder.add_edge(START, "repair")
            builder.add_edge("repair", "agent")
        """
        return RunnableLambda(self._repair, afunc=self._arepair, name="mcp_unanswered_repair")

    def _repair(self, state: Any) -> dict[str, Any] | None:
        found = made_up(state)
        if not found:
            return None
        if any(self.toolset.get(name) is None for _, name in found):
            run_sync(self.toolset.current, pool=self.pool)  # a new process: the tools are listed first
        return what_happened(found, dropped_step(get_config().get("configurable")), self.toolset.get)

    async def _arepair(self, state: Any) -> dict[str, Any] | None:
        found = made_up(state)
        if not found:
            return None
        if any(self.toolset.get(name) is None for _, name in found):
            await self.toolset.current()  # a new process: the tools are listed first
        return what_happened(found, await adropped_step(get_config().get("configurable")), self.toolset.get)

    @property
    def tools_by_name(self) -> dict[str, BaseTool]:
        """The node's tools by name: in a run whose user sees tools of their own (per-user
        servers), that run's."""
        tables = _TABLES.get()
        if tables is not None and tables[0] is self:
            return tables[1]
        return self._tools_by_name

    @property
    def _injected_args(self) -> dict[str, Any]:
        tables = _TABLES.get()
        if tables is not None and tables[0] is self:
            return tables[2]
        base: dict[str, Any] = self.__dict__["_injected_base"]
        return base

    @_injected_args.setter
    def _injected_args(self, value: dict[str, Any]) -> None:
        self.__dict__["_injected_base"] = value

    async def _run_tools(self, config: Any, context: Any, store: Any, state: Any) -> RunTools | None:
        """The tools of the run's user, when some server is per user (else ``None``)."""
        if not self.pool.per_user_servers:
            return None
        return await self.users.for_run(config=config, context=context, store=store, state=state)

    def _tables(self, run: RunTools | None) -> tuple[Any, dict[str, BaseTool], dict[str, Any]] | None:
        """The run's tool table and injected arguments, when its user sees tools of their own."""
        if run is None:
            return None
        tables = self._run_tables.get(run)
        if tables is None:
            signin = dict(run.serves)
            tables = self._run_tables[run] = (
                {**self._local_tools, **signin, **run.bound.by_name},
                {
                    **self._local_injected,
                    **{name: injected_args(t) for name, t in signin.items()},
                    **run.bound.injected,
                },
            )
        return (self, *tables)

    async def start(self) -> None:
        """Connect every server now (concurrently) and register their tools."""
        await self._sync_tools()

    async def _sync_tools(self, *, lenient: bool = False) -> None:
        """Registers the current MCP tools next to the local ones; ``lenient``: when listing fails,
        the last known tools are served (calls to an unreachable server become error messages)."""
        tools = await (self.toolset.current() if lenient else self.toolset.tools())
        if tools is self._mcp_tools:
            return
        bound = self.toolset.bound
        # Swap whole dicts so runs already in flight keep a consistent view.
        self._tools_by_name = {**self._local_tools, **bound.by_name}
        self._injected_args = {**self._local_injected, **bound.injected}
        self._mcp_tools = tools

    def _new_view(self, context: Any, state: Any, run: RunTools | None = None) -> ToolView:
        """The tool view of a run with this context and state (and user's tools)."""
        return ToolView(
            self.toolset,
            audience=self._audience,
            context=context,
            revealed=revealed_in(state) if self.search is not None else None,
            local=tuple(self._local_tools),
            run=run,
        )

    def _view(self, tool_runtime: ToolRuntime) -> ToolView:
        """The run's tool view, for one of its calls (a view of its own when the call's listing,
        context or reveals are not the run's)."""
        view = _VIEW.get()
        tables = _TABLES.get()
        own = tables is not None and tables[0] is self
        if (
            view is not None
            and (view.bound is self.toolset.bound or own)
            and view.context is tool_runtime.context
            and view.revealed == (revealed_in(tool_runtime.state) if self.search is not None else None)
        ):
            return view
        return self._new_view(tool_runtime.context, tool_runtime.state)

    async def _afunc(
        self,
        input: list[AnyMessage] | dict[str, Any] | BaseModel,
        config: RunnableConfig,
        runtime: Runtime,
    ) -> Any:
        await self._sync_tools(lenient=True)
        run = await self._run_tools(config, runtime.context, runtime.store, input)
        batch = None
        tool_calls = self._parse_input(input)[0]
        # One view for the run: its calls ask it (the tool_filter is asked once per tool).
        view = self._new_view(runtime.context, input, run)
        if is_checkpointed(config.get("configurable")) and len(tool_calls) > 1:
            batch = Batch(ask_turn(await self._judged(view, tool_calls, input, resuming())))
        token, viewing, tabling = _BATCH.set(batch), _VIEW.set(view), _TABLES.set(self._tables(run))
        try:
            return await super()._afunc(input, config, runtime)
        finally:
            _TABLES.reset(tabling)
            _VIEW.reset(viewing)
            _BATCH.reset(token)

    def _refused(self, call: ToolCall, tool_runtime: ToolRuntime) -> ToolMessage | None:
        """The refusal of a call this run may not make (see :meth:`ToolView.route`: withheld, a
        server down, the ``tool_filter``, MCP Apps visibility, not revealed), else ``None``:
        ``ToolNode`` runs it (or answers an unknown tool with its own message)."""
        routed = self._view(tool_runtime).route(call["name"], call["id"])
        return routed if isinstance(routed, ToolMessage) else None

    async def _arun_one(self, call: ToolCall, input_type: Any, tool_runtime: ToolRuntime) -> Any:
        """In a checkpointed run with several calls, each call runs as its own LangGraph task
        (``mcp_tool_call``): its questions get their own interrupt (all surface together and are
        resumed by id), its stored rounds are its own, and a call that finished is replayed from
        the checkpoint instead of running again when the node runs again. A call the
        ``tool_filter`` refuses is refused inside its task, so the tasks keep their order
        whatever the filter says on a later run."""
        batch = _BATCH.get()
        if batch is None:
            if (refused := self._refused(call, tool_runtime)) is not None:
                return refused
            return await super()._arun_one(call, input_type, tool_runtime)
        # Enrolled and started before the first await: tasks start in call order, so their ids
        # (and the results stored under them) are stable from one run of the node to the next.
        index = batch.enroll()
        result: Any = None
        try:
            future = _tool_call_task(
                functools.partial(self._arun_in_task, call, input_type, tool_runtime, batch.given)
            )
            result = await future
        except asyncio.CancelledError as exc:
            batch.settle(index, exc)
            raise
        except BaseException as exc:
            batch.settle(index, exc)
        else:
            batch.settle(index, None)
        await batch.done.wait()
        failure = batch.failure()
        if failure is not None and index == 0:
            raise failure
        return result

    async def _arun_in_task(
        self,
        call: ToolCall,
        input_type: Any,
        tool_runtime: ToolRuntime,
        given: Mapping[str, Mapping[str, Any]] | None,
    ) -> Any:
        # The call now runs in its own task: its interrupts and stored rounds must use that
        # task's config (scratchpad, namespace), not the node's.
        runtime = dataclasses.replace(tool_runtime, config={**tool_runtime.config, **get_config()})
        if (refused := self._refused(call, runtime)) is not None:
            return refused
        token = GIVEN.set(given)
        try:
            return await super()._arun_one(call, input_type, runtime)
        finally:
            GIVEN.reset(token)

    def _func(
        self,
        input: list[AnyMessage] | dict[str, Any] | BaseModel,
        config: RunnableConfig,
        runtime: Runtime,
    ) -> Any:
        """Synchronous runs: ``ToolNode``'s own sync path (sync ``wrap_tool_call`` included); each
        tool's call runs on the package's own event loop. In a checkpointed run with several
        calls, each call runs as its own task, scheduled in call order from this thread."""

        async def tools() -> RunTools | None:
            await self._sync_tools(lenient=True)
            return await self._run_tools(config, runtime.context, runtime.store, input)

        run = run_sync(tools, pool=self.pool)
        view = self._new_view(runtime.context, input, run)
        viewing, tabling = _VIEW.set(view), _TABLES.set(self._tables(run))
        try:
            return self._func_with(view, input, config, runtime)
        finally:
            _TABLES.reset(tabling)
            _VIEW.reset(viewing)

    def _func_with(
        self,
        view: ToolView,
        input: list[AnyMessage] | dict[str, Any] | BaseModel,
        config: RunnableConfig,
        runtime: Runtime,
    ) -> Any:
        tool_calls, input_type = self._parse_input(input)
        if not (is_checkpointed(config.get("configurable")) and len(tool_calls) > 1):
            return super()._func(input, config, runtime)
        resumes = resuming()

        given = ask_turn(run_sync(lambda: self._judged(view, tool_calls, input, resumes), pool=self.pool))
        futures = [
            _tool_call_task_sync(functools.partial(self._run_in_task, call, input_type, tool_runtime, given))
            for call, tool_runtime in zip(
                tool_calls, self._tool_runtimes(input, config, runtime), strict=True
            )
        ]
        outputs: list[Any] = []
        outcomes: list[BaseException | None] = []
        for future in futures:
            try:
                outputs.append(future.result())
                outcomes.append(None)
            except BaseException as exc:  # settled: raised below, after every call settled
                outputs.append(None)
                outcomes.append(exc)
        failure = first_failure(outcomes)
        if failure is not None:
            raise failure
        return self._combine_tool_outputs(outputs, input_type)

    async def _judged(self, view: ToolView, calls: list[ToolCall], input: Any, resumes: str | None) -> Turn:
        """The questions of the node's calls, their risk judged (approval policies by risk)."""
        requests = await view.approvals(calls)
        tools = view.bound.by_name
        judged = await risk_keys(calls, tools) if resumes == "turn" else ()
        policies = risk_policies(requests, tools)
        return await judge_turn(requests, policies, self._messages_of(input), resumes, judged)

    def _messages_of(self, input: list[AnyMessage] | dict[str, Any] | BaseModel) -> list[Any]:
        """The conversation of the node's input (a risk classifier is shown its end)."""
        if isinstance(input, list):
            return input
        key = self._messages_key
        messages = input.get(key) if isinstance(input, dict) else getattr(input, key, None)
        return list(messages) if isinstance(messages, list) else []

    def _tool_runtimes(
        self, input: list[AnyMessage] | dict[str, Any] | BaseModel, config: RunnableConfig, runtime: Runtime
    ) -> list[ToolRuntime]:
        """One ``ToolRuntime`` per call, as ``ToolNode._func`` builds them."""
        tool_calls, _ = self._parse_input(input)
        return [
            ToolRuntime(
                state=cast(Any, self._extract_state(input, cfg)),
                tool_call_id=call["id"],
                config=cfg,
                context=runtime.context,
                store=runtime.store,
                stream_writer=runtime.stream_writer,
                tools=list(self.tools_by_name.values()),
                execution_info=runtime.execution_info,
                server_info=runtime.server_info,
            )
            for call, cfg in zip(tool_calls, get_config_list(config, len(tool_calls)), strict=False)
        ]

    def _run_in_task(
        self,
        call: ToolCall,
        input_type: Any,
        tool_runtime: ToolRuntime,
        given: Mapping[str, Mapping[str, Any]] | None,
    ) -> Any:
        runtime = dataclasses.replace(tool_runtime, config={**tool_runtime.config, **get_config()})
        token = GIVEN.set(given)
        try:
            return self._run_one(call, input_type, runtime)
        finally:
            GIVEN.reset(token)

    def _run_one(self, call: ToolCall, input_type: Any, tool_runtime: ToolRuntime) -> Any:
        if (refused := self._refused(call, tool_runtime)) is not None:
            return refused
        return super()._run_one(call, input_type, tool_runtime)
