"""``agent``: a tool-calling agent loop whose tools live on the configured MCP servers.

The chat model comes from configuration, read on every run: the assistant's configurable
``model``, else the environment variable ``LANGGRAPH_MCP_MODEL``; either is an
``init_chat_model`` string (``"anthropic:claude-sonnet-4-5"``, ``"openai:gpt-4.1"``) whose
provider package and API key the deployment supplies. ``"scripted"`` selects an offline
scripted model (``graphs.scripted``) for demos and tests. No model configured fails the run
with a message naming the variable.

Anyone who may create assistants can choose the configurable ``model``; set
``LANGGRAPH_MCP_ALLOWED_MODELS`` (comma-separated) to limit what they may choose.

A result Agent Chat UI makes up for a call whose question the person left unanswered (they
typed instead) is replaced by what happened before the model sees it
(``MCPToolNode.unanswered_repair``, the graph's first node).

A call an MCP Apps view makes (``graphs.app``'s routes) runs as a run on the view's thread that
goes straight to ``mcp_app_calls`` (``langgraph_mcp.apps``), never to the model.

MCP tools are bound when the model node runs, not at import: ``await tools.get_tools()``
connects on first use and then answers from the cached listing.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import tools_condition

from graphs.scripted import scripted_model
from graphs.shared import ChatState, pool
from langgraph_mcp import MCPToolNode
from langgraph_mcp.apps import VIEW_CALLS_KEY, app_context_message, route_view_calls, view_calls_node
from langgraph_mcp.streaming import MCPStreamTransformer

MODEL_ENV = "LANGGRAPH_MCP_MODEL"
ALLOWED_ENV = "LANGGRAPH_MCP_ALLOWED_MODELS"

tools = MCPToolNode(pool)
views = view_calls_node(tools)
"""Runs the calls MCP Apps views make on a thread (through ``graphs.app``'s routes)."""


@functools.lru_cache(maxsize=8)
def _model(spec: str) -> BaseChatModel:
    if spec == "scripted":
        return scripted_model()
    return init_chat_model(spec)


def resolve_model(config: RunnableConfig) -> BaseChatModel:
    """The chat model this run uses (see the module docstring)."""
    chosen = (config.get("configurable") or {}).get("model")
    allowed = {m.strip() for m in os.environ.get(ALLOWED_ENV, "").split(",") if m.strip()}
    if chosen and allowed and chosen not in allowed:
        raise ValueError(f"model {chosen!r} is not allowed: {ALLOWED_ENV} lists {', '.join(sorted(allowed))}")
    spec = chosen or os.environ.get(MODEL_ENV)
    if not spec:
        raise ValueError(
            f"no chat model is configured for the agent graph: set the environment variable {MODEL_ENV} "
            "(or the assistant's configurable 'model') to an init_chat_model string such as "
            "'anthropic:claude-sonnet-4-5', or to 'scripted' for the offline scripted model"
        )
    return _model(str(spec))


async def call_model(state: ChatState, config: RunnableConfig) -> dict[str, Any]:
    model = resolve_model(config).bind_tools(await tools.get_tools())
    context = app_context_message(state)  # what an MCP Apps view said the user sees, if any
    messages = [context, *state["messages"]] if context is not None else state["messages"]
    return {"messages": [await model.ainvoke(messages, config)]}


builder = StateGraph(ChatState)
builder.add_node("agent", call_model)
builder.add_node(tools)
builder.add_node(views)
# A result Agent Chat UI made up for a call whose question the person left unanswered (they typed
# instead) is replaced by what happened before the model sees it.
builder.add_node("repair", tools.unanswered_repair)
builder.add_conditional_edges(START, route_view_calls("repair"), ["repair", VIEW_CALLS_KEY])
builder.add_edge("repair", "agent")
builder.add_edge(VIEW_CALLS_KEY, END)
builder.add_conditional_edges("agent", tools_condition)
builder.add_edge("tools", "agent")
# stream_events(version="v3") clients get each MCP call as run.extensions["mcp"] (custom:mcp).
graph = builder.compile(name="agent", transformers=[MCPStreamTransformer])
