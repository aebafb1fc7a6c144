"""``MCPMiddleware``: MCP tools for ``langchain.agents.create_agent``.

``create_agent`` builds its own ``ToolNode`` and takes no custom node, so the MCP tools reach it
as dynamic tools: the middleware adds them to each model request (connecting on the first one,
so nothing is awaited at import or build time) and runs the model's calls to them through the
agent's own tool node, which hands each call the full ``ToolRuntime``. Everything
``MCPToolNode`` does per call happens here too: elicitation interrupts (each call is its own
task in ``create_agent``, so parallel questions surface together), progress and log events,
timeouts and error messages, hidden arguments, per-call headers and ``_meta``, results into
state, approval, and the per-run ``tool_filter`` (applied to the model's tool list and again
when a call arrives). With ``tool_search`` on, the model is offered a search tool and only the MCP
tools revealed in the thread (see :mod:`langgraph_mcp._catalog.search`).

It composes with langchain's own middleware: ``HumanInTheLoopMiddleware`` sees the MCP tool
calls by name; ``ToolCallLimitMiddleware`` counts them; ``ToolRetryMiddleware`` (before or after
it) retries the failure kinds listed in ``raise_errors`` (those are raised as
:class:`~langgraph_mcp.MCPToolCallError` instead of returned as error messages, so the retry
middleware sees them); summarisation leaves the tools alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Annotated, Any, NotRequired, Self

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
    ProviderToolSearchMiddleware,
    hook_config,
)
from langchain.agents.middleware.types import PrivateStateAttr, ToolCallRequest
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.types import Command

from langgraph_mcp._call.adapter import MCPTool
from langgraph_mcp._call.approval import (
    EDITED,
    GIVEN,
    ApprovalMode,
    rekeyed,
    skill_granted,
)
from langgraph_mcp._call.results import RAISE_KINDS
from langgraph_mcp._catalog.bind import DEFAULT_DECISIONS, ToolSet
from langgraph_mcp._catalog.search import ToolSearcher
from langgraph_mcp._catalog.users import RunTools, UserCatalogs
from langgraph_mcp._catalog.view import ToolView, revealed_in
from langgraph_mcp._compat.langchain import native_search_provider
from langgraph_mcp._compat.langgraph import adropped_step, dropped_step, graph_config, graph_store
from langgraph_mcp._graph.batch import Turn, ask_turn, judge_turn, resuming, risk_keys, risk_policies
from langgraph_mcp._graph.instructions import with_instructions
from langgraph_mcp._graph.node import MCPToolNode
from langgraph_mcp._graph.spec import MCPOptions, PoolHolder
from langgraph_mcp._graph.unanswered import made_up, what_happened
from langgraph_mcp._graph.viewcalls import (
    VIEW_CALLS_KEY,
    MCPAppCallsState,
    app_context_message,
    build_views_node,
    own_call,
    refuse_all,
)
from langgraph_mcp._pool.pool import OnConnectionError
from langgraph_mcp._support.sync import run_sync
from langgraph_mcp.config import DEFAULT_CALL_TIMEOUT
from langgraph_mcp.errors import FailureKind
from langgraph_mcp.options import (
    ApprovalPolicy,
    ToolFilter,
    ToolOptions,
    ToolSearch,
    ToolSearchState,
)
from langgraph_mcp.types import SKILL_GRANTS_KEY

__all__ = ["MCPMiddleware"]


class MCPMiddleware(PoolHolder, AgentMiddleware):
    """Gives a ``create_agent`` agent the tools of MCP servers.

    Args:
        connections: As for :class:`~langgraph_mcp.MCPToolNode`.
        tool_options: As for :class:`~langgraph_mcp.MCPToolNode`.
        server_options: As for :class:`~langgraph_mcp.MCPToolNode`.
        approval: As for :class:`~langgraph_mcp.MCPToolNode`.
        approval_decisions: As for :class:`~langgraph_mcp.MCPToolNode`.
        approval_mode: As for :class:`~langgraph_mcp.MCPToolNode`. ``"batched"`` (the default
            here) asks after the model answers (an ``after_model`` hook, as
            ``HumanInTheLoopMiddleware`` does), keeps the decisions in the agent state
            (``mcp_approval_decisions``, private) until the calls run, and shows an edited call
            with its edited arguments in the AI message's tool call.
        tool_filter: As for :class:`~langgraph_mcp.MCPToolNode`.
        tool_search: ``True`` or a :class:`~langgraph_mcp.options.ToolSearch`: instead of every MCP
            tool, the model is offered a search tool (``search_tools``) and the MCP tools a search
            revealed in the graph state (``mcp_revealed_tools``, still subject to ``tool_filter``); a
            call to an MCP tool not revealed gets ``ToolNode``'s invalid-tool message. Off by
            default. The agent state gets the ``mcp_revealed_tools`` key. With
            ``ToolSearch(native=...)``, a model whose provider searches tools on its side
            (Anthropic, OpenAI) is sent every MCP tool the run may use marked ``defer_loading`` plus
            the provider's tool-search tool, instead of the search tool.
        raise_errors: Failure kinds (``"connection"``, ``"timeout"``, ``"protocol"``,
            ``"tool_error"``, ...) raised as :class:`~langgraph_mcp.MCPToolCallError` instead of
            returned as error ``ToolMessage`` s, for a ``ToolRetryMiddleware``
            (``retry_on=(MCPToolCallError,)``).
        state_schema: Extra agent state (e.g. the keys a ``ResultToState`` updates).
        name: The middleware's name (two MCP middlewares in one agent need different names).
        on_connection_error: As for :class:`~langgraph_mcp.MCPToolNode`.
        default_timeout: As for :class:`~langgraph_mcp.MCPToolNode`.
        view_calls: Take the calls of MCP Apps views (``langgraph_mcp.apps``): the agent state gets
            the ``mcp_app_calls`` and ``mcp_app_context`` keys and a ``before_agent`` hook that
            answers a run started for a view's call (the route's runs) with the view-calls node
            :attr:`~langgraph_mcp.MCPMiddleware.view_calls`, under the middleware's policies, then
            ends the run without reaching the model. Serve its route with
            ``app_routes(middleware)``. A view's model context (``mcp_app_context``) is given to the
            model before the conversation, as data (``langgraph_mcp.apps.app_context_message``).

    Before each model call (``before_model``), a result a UI made up for an MCP call whose
    question was left unanswered (Agent Chat UI's "Successfully handled tool call." when the
    person types instead of answering) is replaced by what happened: the call's real result if it
    finished in the step the new input dropped, else an error saying it did not run.

    A server that cannot be reached when the model is called leaves its tools out (they come
    back once it answers); with every server down and ``on_connection_error="raise"`` the model
    call fails with :class:`~langgraph_mcp.MCPConnectionError`.
    """

    toolset: ToolSet
    search: ToolSearcher | None
    """The tool search (``None`` when ``tool_search`` is off)."""
    tools: Sequence[BaseTool]
    """``read_tool_output`` when a server keeps cut outputs in the store, and the search
    tool when ``tool_search`` is on (else none)."""
    raise_errors: frozenset[FailureKind]
    view_calls: MCPToolNode | None
    """The node answering MCP Apps views' calls (``view_calls=True``), else ``None``."""
    agent_tools: frozenset[str]
    """Names of the agent's own (non-MCP) tools when known up front (``create_mcp_agent``
    sets them): a batch of approvals never asks about their calls."""

    def __init__(
        self,
        connections: Any,
        *,
        tool_options: Mapping[str, ToolOptions] | None = None,
        server_options: Mapping[str, ToolOptions] | None = None,
        approval: ApprovalPolicy = None,
        approval_decisions: Sequence[str] = DEFAULT_DECISIONS,
        approval_mode: ApprovalMode = "batched",
        tool_filter: ToolFilter | None = None,
        tool_search: bool | ToolSearch = False,
        raise_errors: Collection[FailureKind] = (),
        state_schema: type[Any] | None = None,
        name: str | None = None,
        on_connection_error: OnConnectionError = "raise",
        default_timeout: float | None = DEFAULT_CALL_TIMEOUT,
        view_calls: bool = False,
    ) -> None:
        super().__init__()
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
            raise_errors=raise_errors,
            view_calls=view_calls,
        )
        self.state_schema = self._setup(connections, options, state_schema=state_schema, name=name)

    @classmethod
    def _from_options(cls, connections: Any, options: MCPOptions) -> Self:
        """A middleware of these options (``create_mcp_agent``'s: no state schema or name of its own)."""
        self: Self = cls.__new__(cls, approval_mode=options.approval_mode, view_calls=options.view_calls)
        super(MCPMiddleware, self).__init__()
        self.state_schema = self._setup(connections, options, state_schema=None, name=None)
        return self

    def _setup(
        self, connections: Any, options: MCPOptions, *, state_schema: type[Any] | None, name: str | None
    ) -> type[Any]:
        """Sets the middleware up; its agent state schema."""
        self._options = options
        """The middleware's MCP options (its view-call node is made from them)."""
        self.pool, self._owns_pool = options.hold_pool(connections)
        self.toolset = options.toolset(self.pool, messages_key="messages")
        self.users = UserCatalogs(self.toolset)
        """The per-user part of each run's tools (per-user OAuth, or per_user headers)."""
        self.search = options.searcher(self.toolset, self.users)
        self.tools = [*options.readers(self.pool), *([self.search.tool] if self.search is not None else [])]
        self.raise_errors = frozenset(options.raise_errors)
        self._may_ask = options.may_ask
        """Can any call need approval here? If not, a turn is looked at only to apply a question
        asked before the policy changed."""
        schema = state_schema or self.state_schema
        if options.approval_mode == "batched":
            schema = _with_decisions(state_schema or AgentState)
        if self.search is not None:
            schema = _with_revealed(schema)
        self.view_calls = None
        if options.view_calls:
            self.view_calls = build_views_node(self.pool, options)
            schema = _with_views(schema)
        self._name = name or type(self).__name__
        self._others: frozenset[str] = frozenset()
        """Names of the agent's own (non-MCP) tools, as last offered to the model."""
        self._native = ProviderToolSearchMiddleware()
        """Provider-native tool search (``ToolSearch.native``): langchain's middleware adds the
        provider's search tool and sends the tools marked ``defer_loading`` as deferred."""
        self._native_seen = False
        """A model request used provider-native search: the provider searched, so calls to any
        MCP tool the run may use are served (there is no reveal in the state). Kept by the
        middleware, not by the run: once set, no later call's reveals are checked."""
        self.agent_tools = frozenset()
        return schema

    def __new__(
        cls, *args: Any, approval_mode: ApprovalMode = "batched", view_calls: bool = False, **kwargs: Any
    ) -> Any:
        # ``create_agent`` adds a graph node for a middleware whose class defines
        # ``after_model`` (only the batched mode has one) or ``before_agent`` (only with
        # ``view_calls``), so other agents keep their shape.
        batched = approval_mode == "batched" and not issubclass(cls, _BatchedApprovals)
        views = view_calls and not issubclass(cls, _ViewCalls)
        if batched or views:
            cls = _variant(cls, batched, views)
        return super().__new__(cls)

    @property
    def name(self) -> str:
        return self._name

    async def get_tools(self, context: Any = None) -> list[MCPTool]:
        """The MCP tools a run with this ``context`` may use (connects on first use); never a tool
        meant only for an MCP Apps view (``_meta.ui.visibility`` without ``"model"``). For a
        per-user server, those of the run's user (read from the run's config when called in a
        graph node)."""
        await self.toolset.tools()
        run = await self._run(graph_config(), context, graph_store(), None)
        return ToolView(self.toolset, context=context, run=run).allowed

    async def start(self) -> None:
        """Connect every server now and list their tools."""
        await self.toolset.tools()

    # -- the model's side --------------------------------------------------------------------

    async def _current(self) -> list[MCPTool]:
        return await self.toolset.current()  # on a failed listing, the last known tools

    async def _run(self, config: Any, context: Any, store: Any, state: Any) -> RunTools | None:
        """The tools of the run's user, when some server is per user (else ``None``)."""
        if not self.pool.per_user_servers:
            return None
        return await self.users.for_run(config=config, context=context, store=store, state=state)

    def _view(self, context: Any, revealed: frozenset[str] | None, run: RunTools | None = None) -> ToolView:
        """A tool view for one model call, tool call or turn."""
        search = self.search.settings.name if self.search is not None else None
        return ToolView(
            self.toolset,
            context=context,
            revealed=revealed,
            local=sorted(self._others | {search}) if search is not None else sorted(self._others),
            quiet=self.agent_tools,
            lists="agent",
            run=run,
        )

    def _calls_view(self, context: Any, state: Any, run: RunTools | None = None) -> ToolView:
        """The view a model turn's calls are answered by: after provider-native search was used
        once (``_native_seen``), no reveal is checked."""
        checks = self.search is not None and not self._native_seen
        return self._view(context, revealed_in(state) if checks else None, run)

    def _with_tools(self, request: ModelRequest, run: RunTools | None) -> ModelRequest:
        taken = {t.name if isinstance(t, BaseTool) else None for t in request.tools}
        self._others = frozenset(n for n in taken if n is not None)
        revealed = revealed_in(request.state) if self.search is not None else None
        view = self._view(request.runtime.context, revealed, run)
        allowed = [t for t in [*view.signin, *view.offered] if t.name not in taken]
        return self._with_view_context(request.override(tools=[*request.tools, *allowed]), view)

    def _with_view_context(self, request: ModelRequest, view: ToolView) -> ModelRequest:
        """With ``view_calls``: what an MCP Apps view said the user sees (``mcp_app_context``),
        given to the model as data before the conversation (``app_context_message``); and the
        instructions of the servers whose tools the run may use, where they opt in."""
        request = with_instructions(request, self.pool, {t.server for t in view.allowed})
        context = app_context_message(request.state) if self.view_calls is not None else None
        return request if context is None else request.override(messages=[context, *request.messages])

    def _goes_native(self, request: ModelRequest) -> bool:
        """Does this model request use the provider's own tool search (``ToolSearch.native``)?"""
        native = self.search.settings.native if self.search is not None else False
        if native == "auto":
            native = native_search_provider(request.model, request.runtime) is not None
        if native:
            self._native_seen = True
        return bool(native)

    def _deferred(self, request: ModelRequest, run: RunTools | None) -> ModelRequest:
        """Provider-native search: every MCP tool this run may use, marked ``defer_loading``
        (the provider loads its schema when its search finds it), instead of the search tool."""
        assert self.search is not None
        search = self.search.settings.name
        own = [t for t in request.tools if not (isinstance(t, BaseTool) and t.name == search)]
        taken = {t.name for t in own if isinstance(t, BaseTool)}
        self._others = frozenset(taken)
        view = self._view(request.runtime.context, None, run)
        bound = view.bound  # the copies are made once per listing
        deferred = [bound.deferred(t) for t in view.offered if t.name not in taken]
        signin = [t for t in view.signin if t.name not in taken]
        return self._with_view_context(request.override(tools=[*own, *signin, *deferred]), view)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse | AIMessage:
        """Offers the MCP tools this run may use to the model."""
        await self._current()
        run = await self._run(graph_config(), request.runtime.context, request.runtime.store, request.state)
        if self._goes_native(request):
            return await self._native.awrap_model_call(self._deferred(request, run), handler)
        return await handler(self._with_tools(request, run))

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse | AIMessage:
        """Synchronous agents: the tools are listed on the package's own event loop."""
        config = graph_config()

        async def tools() -> RunTools | None:
            await self._current()
            return await self._run(config, request.runtime.context, request.runtime.store, request.state)

        run = run_sync(tools, pool=self.pool)
        if self._goes_native(request):
            return self._native.wrap_model_call(self._deferred(request, run), handler)
        return handler(self._with_tools(request, run))

    # -- questions left unanswered ------------------------------------------------------------

    def before_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """A result a UI made up for an MCP call whose question was left unanswered never reaches
        the model as a success: it is replaced by what happened, read from the thread's
        checkpoints (its real result if it finished, else an error saying it did not run)."""
        found = made_up(state)
        if not found:
            return None
        conf = get_config().get("configurable")
        if any(self.toolset.get(name) is None for _, name in found):
            run_sync(self._current, pool=self.pool)  # a new process: the tools are listed first
        return what_happened(found, dropped_step(conf), self.toolset.get)

    async def abefore_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """As :meth:`before_model`."""
        found = made_up(state)
        if not found:
            return None
        if any(self.toolset.get(name) is None for _, name in found):
            await self._current()  # a new process: the tools are listed first
        return what_happened(found, await adropped_step(get_config().get("configurable")), self.toolset.get)

    # -- the tools' side ---------------------------------------------------------------------

    def _route(self, request: ToolCallRequest, run: RunTools | None) -> ToolCallRequest | ToolMessage | None:
        """The request to run with the MCP tool (or a sign-in tool), a refusal, or ``None`` (not
        an MCP tool)."""
        name = request.tool_call["name"]
        if request.tool is None and run is not None and name not in run.bound.by_name:
            signin = run.serves.get(name)
            if signin is not None:
                return request.override(tool=signin)
        if request.tool is not None and not isinstance(request.tool, MCPTool):
            return None
        bound = run.bound if run is not None else self.toolset.bound
        if request.tool is not None and bound.by_name.get(name) is None:
            return None  # an MCP tool, but not one of this middleware's
        # Not one of the MCP tools: None (the agent's tool node answers), unless its server is
        # down (then a message says so rather than "not a tool"); fail closed on reveals.
        view = self._calls_view(request.runtime.context, request.state, run)
        routed = view.route(name, request.tool_call["id"])
        if routed is None or isinstance(routed, ToolMessage):
            return routed
        return request.override(tool=routed)

    async def _run_of_call(self, request: ToolCallRequest) -> RunTools | None:
        """The run's tools for routing one call: not looked up (no listing, no token read) for a
        call to a shared tool of a server that is not per user, whose route they cannot change."""
        per_user = self.pool.per_user_servers
        shared = self.toolset.get(request.tool_call["name"])
        if not per_user or (shared is not None and shared.server not in per_user):
            return None
        runtime = request.runtime
        return await self._run(runtime.config, runtime.context, runtime.store, request.state)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Runs a call to an MCP tool (other calls pass through unchanged)."""
        if request.tool is None and self.toolset.get(request.tool_call["name"]) is None:
            # E.g. a run resumed in a new process: the tools were listed by the old one.
            await self._current()
        run = await self._run_of_call(request)
        routed = self._route(request, run)
        if routed is None:
            return await handler(request)
        if isinstance(routed, ToolMessage):
            return routed
        token = RAISE_KINDS.set(self.raise_errors)
        given = GIVEN.set(routed.state.get(DECISIONS_KEY) if isinstance(routed.state, Mapping) else None)
        edited: dict[str, dict[str, Any]] = {}
        noting = EDITED.set(edited)
        try:
            return self._shown_edited(routed, await handler(routed), edited)
        finally:
            EDITED.reset(noting)
            GIVEN.reset(given)
            RAISE_KINDS.reset(token)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Synchronous agents: the call runs on the package's own event loop."""
        unknown = request.tool is None and self.toolset.get(request.tool_call["name"]) is None

        async def tools() -> RunTools | None:
            if unknown:
                await self._current()
            return await self._run_of_call(request)

        run = run_sync(tools, pool=self.pool) if unknown or self.pool.per_user_servers else None
        routed = self._route(request, run)
        if routed is None:
            return handler(request)
        if isinstance(routed, ToolMessage):
            return routed
        token = RAISE_KINDS.set(self.raise_errors)
        given = GIVEN.set(routed.state.get(DECISIONS_KEY) if isinstance(routed.state, Mapping) else None)
        edited: dict[str, dict[str, Any]] = {}
        noting = EDITED.set(edited)
        try:
            return self._shown_edited(routed, handler(routed), edited)
        finally:
            EDITED.reset(noting)
            GIVEN.reset(given)
            RAISE_KINDS.reset(token)

    def _shown_edited(
        self,
        request: ToolCallRequest,
        result: ToolMessage | Command[Any],
        edited: Mapping[str, dict[str, Any]],
    ) -> ToolMessage | Command[Any]:
        """A call a person edited when it ran (its own question): the AI message's tool call is
        shown with the arguments that ran, as ``HumanInTheLoopMiddleware`` shows an edit, when no
        other call of the turn can edit it too (batched mode asks at most one call of a turn on
        its own; else only a turn of one call)."""
        call_id = request.tool_call["id"]
        if call_id is None or call_id not in edited or not isinstance(result, ToolMessage):
            return result
        messages = request.state.get("messages") if isinstance(request.state, Mapping) else None
        ai = _asking(messages or [], call_id)
        if ai is None or (not isinstance(self, _BatchedApprovals) and len(ai.tool_calls) > 1):
            return result
        shown = _with_args(ai, {call_id: edited[call_id]})
        if shown is None:
            return result
        return Command(update={"messages": [shown, result]})


DECISIONS_KEY = "mcp_approval_decisions"
"""Agent state key of the decisions taken for the last model turn's MCP calls (batched mode):
question key -> decision. Private (not in the agent's input or output schema)."""


def _asking(messages: Sequence[Any], call_id: str) -> AIMessage | None:
    """The AI message that made the call ``call_id`` (the latest such)."""
    for message in reversed(messages):
        if isinstance(message, AIMessage) and any(c.get("id") == call_id for c in message.tool_calls):
            return message
    return None


def _with_args(ai: AIMessage, args: Mapping[str, dict[str, Any]]) -> AIMessage | None:
    """``ai`` with the tool calls named in ``args`` (by id) given those arguments (``None``: they
    already have them). Same message id, so it replaces ``ai`` in the state."""
    calls = [
        {**c, "args": dict(edited)}
        if (edited := args.get(c.get("id") or "")) is not None and c["args"] != edited
        else c
        for c in ai.tool_calls
    ]
    if calls == ai.tool_calls:
        return None
    return ai.model_copy(update={"tool_calls": calls})


def _with_decisions(schema: type[Any]) -> type[Any]:
    """``schema`` plus the private decisions key."""

    class WithDecisions(schema):  # type: ignore[misc]  # a TypedDict class, given at run time
        mcp_approval_decisions: NotRequired[Annotated[dict[str, Any], PrivateStateAttr]]  # type: ignore[valid-type]

    WithDecisions.__name__ = WithDecisions.__qualname__ = f"{schema.__name__}WithMCPApprovals"
    return WithDecisions


def _with_revealed(base: type[Any]) -> type[Any]:
    """``base`` plus the revealed tools' key (public: a parent graph with the key keeps the
    reveals of an agent run as its subgraph)."""

    class WithRevealed(base, ToolSearchState):  # type: ignore[misc]  # TypedDicts, given at run time
        pass

    WithRevealed.__name__ = WithRevealed.__qualname__ = f"{base.__name__}WithMCPSearch"
    return WithRevealed


def _with_views(base: type[Any]) -> type[Any]:
    """``base`` plus the keys of MCP Apps views (``mcp_app_calls``, ``mcp_app_context``)."""

    class WithViews(base, MCPAppCallsState):  # type: ignore[misc]  # TypedDicts, given at run time
        pass

    WithViews.__name__ = WithViews.__qualname__ = f"{base.__name__}WithMCPApps"
    return WithViews


def _variant(cls: type[MCPMiddleware], batched: bool, views: bool) -> type[MCPMiddleware]:
    """``cls`` with the batched mode's ``after_model`` hook and/or the views' ``before_agent``
    hook (same name, so the agent's nodes for the hooks are named after the middleware as
    usual); one per combination."""
    key = (cls, batched, views)
    if key not in _VARIANTS:
        mixins = (*((_ViewCalls,) if views else ()), *((_BatchedApprovals,) if batched else ()))
        names = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
        _VARIANTS[key] = type(cls.__name__, (*mixins, cls), names)
    return _VARIANTS[key]


_VARIANTS: dict[tuple[type[MCPMiddleware], bool, bool], type[MCPMiddleware]] = {}


class _BatchedApprovals(MCPMiddleware):
    """:class:`MCPMiddleware` with ``approval_mode="batched"``: after the model answers, the MCP
    calls of its turn that need approval are asked about in one interrupt; the decisions are
    kept in the agent state, where each call finds its own by its question key (a call whose
    arguments changed since finds none and asks on its own)."""

    def _turn(self, state: Mapping[str, Any]) -> list[Any]:
        """The MCP calls of the model's last turn, but those a skill's grant lets run unasked."""
        messages = state.get("messages") or []
        last = messages[-1] if messages else None
        calls = list(last.tool_calls) if isinstance(last, AIMessage) else []
        if not state.get(SKILL_GRANTS_KEY):
            return calls
        get = self.toolset.get
        return [
            c
            for c in calls
            if (tool := get(c.get("name", ""))) is None
            or not skill_granted(state, tool.server, tool.mcp_name, self.pool.connection(tool.server))
        ]

    async def _judged(
        self, state: Mapping[str, Any], calls: list[Any], view: ToolView, resumes: str | None
    ) -> Turn:
        """The turn's questions, their risk judged (calls with an approval policy by risk)."""
        requests = await view.approvals(calls)
        tools = view.bound.by_name
        judged = await risk_keys(calls, tools) if resumes == "turn" else ()
        messages = list(state.get("messages") or [])
        return await judge_turn(requests, risk_policies(requests, tools), messages, resumes, judged)

    def _decided(self, state: Mapping[str, Any], turn: Turn) -> dict[str, Any] | None:
        """The turn's decisions into the state and, for edited calls, the AI message showing the
        arguments they will run with (each found under its edited question key too)."""
        given = ask_turn(turn)
        if given is None:
            return {DECISIONS_KEY: {}} if state.get(DECISIONS_KEY) else None
        edits: dict[str, dict[str, Any]] = {}
        for request in turn.asked:
            decision = given.get(request.key) or {}
            if decision.get("type") == "edit" and request.tool_call_id is not None:
                args = dict(decision["edited_action"]["args"])
                edits[request.tool_call_id] = args
                given[rekeyed(request, args)] = decision
        update: dict[str, Any] = {DECISIONS_KEY: given}
        messages: list[AnyMessage] = list(state.get("messages") or [])
        last = messages[-1] if messages else None
        shown = _with_args(last, edits) if edits and isinstance(last, AIMessage) else None
        if shown is not None:
            update["messages"] = [shown]
        return update

    def _asks(self, state: Mapping[str, Any]) -> list[Any]:
        """The turn's calls to look at: none when no call can need approval (no approval policy,
        and no turn's question asked under an earlier one is resumed)."""
        return self._turn(state) if self._may_ask or resuming() == "turn" else []

    async def aafter_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Asks about the turn's MCP calls that need approval, together."""
        calls = self._asks(state)
        if not calls:
            return {DECISIONS_KEY: {}} if state.get(DECISIONS_KEY) else None
        await self._current()
        run = await self._run(get_config(), runtime.context, runtime.store, state)
        view = self._calls_view(runtime.context, state, run)
        turn = await self._judged(state, calls, view, resuming())
        return self._decided(state, turn)

    def after_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Synchronous agents: as :meth:`aafter_model`, the tools listed on the package's loop."""
        calls = self._asks(state)
        if not calls:
            return {DECISIONS_KEY: {}} if state.get(DECISIONS_KEY) else None

        config = get_config()
        resumes = resuming()

        async def judged() -> Turn:
            await self._current()
            run = await self._run(config, runtime.context, runtime.store, state)
            view = self._calls_view(runtime.context, state, run)
            return await self._judged(state, calls, view, resumes)

        return self._decided(state, run_sync(judged, pool=self.pool))


class _ViewCalls(MCPMiddleware):
    """:class:`MCPMiddleware` with ``view_calls=True``: a run started for a view's call (see
    :func:`~langgraph_mcp._graph.viewcalls.own_call`) is answered by the view-calls node in
    ``before_agent`` and ends there; any other run goes on to the model, and a view call an earlier
    run left waiting for its approval is dropped (never run)."""

    @hook_config(can_jump_to=["end"])
    async def abefore_agent(self, state: Any, runtime: Runtime[Any]) -> Any:
        """Answers the run's own view call, then ends the run."""
        config = get_config()
        if self.view_calls is None or own_call(state, config) is None:
            return None
        out = await self.view_calls.ainvoke(state, config)
        return _then_end(out)

    @hook_config(can_jump_to=["end"])
    def before_agent(self, state: Any, runtime: Runtime[Any]) -> Any:
        """Synchronous runs refuse a view's call (views' calls come as asynchronous runs)."""
        call = own_call(state, get_config())
        if self.view_calls is None or call is None:
            return None
        return {VIEW_CALLS_KEY: refuse_all(call), "jump_to": "end"}


def _then_end(out: Any) -> Any:
    """The view-calls node's update, and the jump that ends the agent's run."""
    if isinstance(out, dict):
        return {**out, "jump_to": "end"}
    return [*out, Command(update={"jump_to": "end"})]
