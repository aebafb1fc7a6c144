"""MCP Apps views calling back: the graph side of a view's ``tools/call``.

A view (the ``ui://`` HTML of a tool, shown by the ``mcp-app`` component) may call its own
server's tools whose ``_meta.ui.visibility`` includes ``"app"``. Such a call runs **as a run on
the view's thread**, through a second tool node built from the graph's own
(:func:`view_calls_node`): the same pool, the thread's session, hidden arguments, ``tool_filter``,
timeouts, redaction and approval. An approval it needs is the thread's ordinary interrupt, answered
by a person exactly like one the model's call raised.

The graph gets three additions::

    from langgraph_mcp.apps import VIEW_CALLS_KEY, MCPAppCallsState, route_view_calls, view_calls_node

    class State(MessagesState, MCPAppCallsState): ...

    tools = MCPToolNode(pool, approval="destructive")
    builder.add_node(tools)
    builder.add_node(view_calls_node(tools))          # named "mcp_app_calls"
    builder.add_conditional_edges(START, route_view_calls("agent"))
    builder.add_edge(VIEW_CALLS_KEY, END)

and the deployment's custom app serves :func:`app_routes` (its HTTP contract: the MCP Apps how-to
guide, "The route's contract"). An agent built with ``create_mcp_agent`` or ``MCPMiddleware``
takes views' calls with ``view_calls=True`` instead (a ``before_agent`` hook; serve
``app_routes(agent.mcp)``).

A view's call runs only in the run started for it, whose config names it
(:func:`view_call_config`; the route's runs do), or in the run that resumes it after its
approval (a run resuming the question asked about it). Any other run goes the graph's own way: a
call left waiting for its approval when the user's next message came is dropped, never run, and
stays dropped: a resume value that reaches the idle thread later (a stale "continue", an approval
sent twice) answers no question and revives nothing.

A view's call arrives in the ``mcp_app_calls`` state key as an AI message with one tool call
(id ``mcp-app-call:<hex>``; ``additional_kwargs["mcp_app"]["server"]`` names the view's server)
that replaces whatever the key held; the node answers it there with a ``ToolMessage``. The
model's ``messages`` are not touched, so the model never sees the view's calls.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import AIMessage, RemoveMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from starlette.routing import Route

from langgraph_mcp._call.view import VIEW_CALL_PREFIX
from langgraph_mcp._graph.approute import (
    MAX_CALLS,
    MAX_CALLS_PER_THREAD,
    MAX_CALLS_PER_USER,
    ROUTE_PREFIX,
    AppRoutes,
    user_share,
)
from langgraph_mcp._graph.middleware import MCPMiddleware
from langgraph_mcp._graph.node import MCPToolNode
from langgraph_mcp._graph.viewcalls import (
    CONTEXT_KEY,
    MAX_CONTEXT,
    VIEW_CALL_CONFIG,
    VIEW_CALLS_KEY,
    MCPAppCallsState,
    app_context_message,
    build_views_node,
    own_call,
)

__all__ = [
    "CONTEXT_KEY",
    "MAX_CALLS",
    "MAX_CALLS_PER_THREAD",
    "MAX_CALLS_PER_USER",
    "MAX_CONTEXT",
    "ROUTE_PREFIX",
    "VIEW_CALLS_KEY",
    "VIEW_CALL_CONFIG",
    "MCPAppCallsState",
    "app_context_message",
    "app_routes",
    "route_view_calls",
    "view_call_config",
    "view_call_input",
    "view_calls_node",
]


def view_call_input(
    server: str, tool: str, arguments: Mapping[str, Any], call_id: str | None = None
) -> dict[str, Any]:
    """The run input that makes one view call: ``tool`` is the tool's name as the graph exposes
    it (``MCPTool.name``). The call replaces the key's previous content, so it stays bounded.
    Run it with :func:`view_call_config` (``graph.ainvoke(payload, view_call_config(payload,
    config))``): a run whose config does not name the call does not run it."""
    call_id = call_id or f"{VIEW_CALL_PREFIX}{uuid.uuid4().hex}"
    call = {"name": tool, "args": dict(arguments), "id": call_id, "type": "tool_call"}
    message = AIMessage("", id=call_id, tool_calls=[call], additional_kwargs={"mcp_app": {"server": server}})
    return {VIEW_CALLS_KEY: [RemoveMessage(id=REMOVE_ALL_MESSAGES), message]}


def view_call_config(payload: Mapping[str, Any], config: RunnableConfig | None = None) -> RunnableConfig:
    """``config`` (or a new one) naming the view call of ``payload`` (a :func:`view_call_input`)
    as the run's own (``configurable[VIEW_CALL_CONFIG]``): only a run that names it runs it."""
    message = payload[VIEW_CALLS_KEY][-1]
    call_id = message.tool_calls[0]["id"]
    base: dict[str, Any] = dict(config or {})
    base["configurable"] = {**(base.get("configurable") or {}), VIEW_CALL_CONFIG: call_id}
    return base  # type: ignore[return-value]


def route_view_calls(default: str) -> Callable[..., str]:
    """The router for ``add_conditional_edges(START, ...)``: to the view-calls node when the run
    was started for the thread's pending view call (its config names it, see
    :func:`view_call_config`), else to ``default``. A run with other input on a thread whose
    last view call still waits for its approval goes to ``default``: that call is dropped, never
    run (its question went with the run that asked it)."""

    def route(state: Any, config: RunnableConfig) -> str:
        return VIEW_CALLS_KEY if own_call(state, config) is not None else default

    return route


def view_calls_node(node: MCPToolNode, *, name: str = VIEW_CALLS_KEY) -> MCPToolNode:
    """A tool node for views' calls, built from the graph's ``node``: its pool, ``tool_options``,
    ``server_options``, approval settings, ``tool_filter``, error handling and wrappers.

    It reads and answers calls under :data:`VIEW_CALLS_KEY` and serves only tools whose
    visibility includes ``"app"``, each only to a view of its own server (the server the call's
    message names); any other call gets an error ``ToolMessage`` and reaches no server. Local
    tools and tool search are not offered to views."""
    if node._awrap_tool_call is None and node._wrap_tool_call is not None:
        raise ValueError(
            "view_calls_node: the node has a synchronous wrap_tool_call and no awrap_tool_call; "
            "views' calls run asynchronously: give the node an awrap_tool_call too"
        )
    return build_views_node(
        node.pool,
        node._options,
        name=name,
        handle_tool_errors=node._handle_tool_errors,
        awrap_tool_call=node._awrap_tool_call,
    )


def app_routes(
    views: MCPToolNode | MCPMiddleware,
    *,
    prefix: str = ROUTE_PREFIX,
    api: Any = None,
    forward_headers: tuple[str, ...] = ("authorization", "x-api-key", "cookie"),
    max_calls_per_thread: int = MAX_CALLS_PER_THREAD,
    max_calls: int = MAX_CALLS,
    max_calls_per_user: int | None = None,
) -> list[Route]:
    """The Starlette routes through which the ``mcp-app`` component passes its views' calls
    (``tools/call``, ``resources/read``) for a thread; mount them in the app ``langgraph.json``'s
    ``http.app`` names: ``Starlette(routes=app_routes(views), lifespan=lifespan(pool))``.

    ``views`` is the graph's :func:`view_calls_node`, or the :class:`~langgraph_mcp.MCPMiddleware`
    of a ``create_agent`` agent built with ``view_calls=True`` (``create_mcp_agent(...,
    view_calls=True).mcp``). Each request is checked, and each call run, through the LangGraph
    API **as the caller**: its ``forward_headers`` go with every request to the API, so the
    deployment's own authentication (LangGraph custom auth, when configured) decides whether the
    caller may use the thread, and a thread it may not read is answered 404. ``api``: where the
    API is, by default the server this runs in (in process); a URL or an ``httpx`` transport
    otherwise. At most ``max_calls_per_thread`` requests of one thread (4 by default; a thread
    however its id is spelt), ``max_calls_per_user`` of one user (by default a quarter of
    ``max_calls``, never less than ``max_calls_per_thread``: 16) and ``max_calls`` in all (64)
    are served at once; one more is answered 429 with ``Retry-After``. So one user, however many
    threads they use, leaves ``max_calls - max_calls_per_user`` places (48) to everyone else. A
    user is who the deployment's LangGraph authentication says the caller is (when the route
    runs in the LangGraph server, the default ``api``), else the caller's credentials."""
    if isinstance(views, MCPMiddleware):
        if views.view_calls is None:
            raise ValueError(
                "app_routes: this MCPMiddleware takes no views' calls: build it (or create_mcp_agent) "
                "with view_calls=True"
            )
        views = views.view_calls
    per_user = (
        max_calls_per_user if max_calls_per_user is not None else user_share(max_calls_per_thread, max_calls)
    )
    if not 1 <= max_calls_per_thread <= per_user <= max_calls:
        raise ValueError("app_routes: need 1 <= max_calls_per_thread <= max_calls_per_user <= max_calls")
    return AppRoutes(
        views,
        VIEW_CALLS_KEY,
        view_call_input,
        api=api,
        forward_headers=forward_headers,
        limits=(max_calls_per_thread, max_calls, per_user),
    ).routes(prefix)
