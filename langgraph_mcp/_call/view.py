"""MCP Apps (``io.modelcontextprotocol/ui``): which tools the model may see, and a tool's view
sent with its result as a generative-UI message.

Visibility: a tool's ``_meta.ui.visibility`` lists who may use it, ``"model"`` and/or ``"app"``
(absent: both). A tool whose visibility leaves out ``"model"`` is never offered to the model,
and a model's call to it is refused. A visibility that is present but not a list of strings (or
a ``_meta.ui`` that is not an object) is read as leaving the model out: the tool stays hidden
rather than reaching a model it may not have been meant for.

Views (servers with ``apps: true``): when a tool that names a ``ui://`` view
(``_meta.ui.resourceUri``, or the deprecated ``_meta["ui/resourceUri"]``) returns a successful
result, the view is read through the call's own session (cached, see
:class:`~langgraph_mcp._session.views.ViewCache`) and pushed with ``push_ui_message`` as component
:data:`~langgraph_mcp.types.APP_UI_NAME`, props :class:`~langgraph_mcp.types.MCPAppUIProps`, id
``mcp-app:<tool_call_id>``; its metadata names the ``tool_call_id`` and the ``message_id`` of the AI
message that made the call. It always goes to ``stream_mode="custom"``, and also to the graph's
``ui`` state key when the state has one. A view that cannot be read or shown leaves the call's
result as it is: the message is skipped and logged (without the server's secrets).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import mcp_types as types
from langgraph.graph.ui import push_ui_message
from langgraph.prebuilt import ToolRuntime

from langgraph_mcp._session import ServerConnection
from langgraph_mcp._session.views import View
from langgraph_mcp._stream.progress import UI_STATE_KEY, calling_message_id, has_key
from langgraph_mcp._support.redact import mask_all
from langgraph_mcp.errors import MCPError
from langgraph_mcp.types import APP_UI_NAME, MCPAppToolResult, MCPAppUIProps

__all__ = ["VIEW_CALL_PREFIX", "app_visible", "model_visible", "show_view", "view_uri"]

logger = logging.getLogger("langgraph_mcp.apps")

_MAX_URI = 2048
_PROTOCOL_META = "io.modelcontextprotocol/"
VIEW_CALL_PREFIX = "mcp-app-call:"
"""The start of the tool call id of every call a view makes (``langgraph_mcp.apps``): such a call
shows no view of its own (the view that made it is already on the page)."""
MAX_VIEW_RESULT = 256_000
"""Characters of JSON of a result sent to a view; a longer one is sent without its content."""
_UI_FIELDS: tuple[tuple[str, str, type[Any]], ...] = (
    ("csp", "csp", dict),
    ("permissions", "permissions", dict),
    ("domain", "domain", str),
    ("prefersBorder", "prefers_border", bool),
)
"""The view's ``_meta.ui`` fields shown: each one's props key, and the type it must have."""


def model_visible(meta: Any) -> bool:
    """May a tool with this ``_meta`` be offered to (and called by) the model?"""
    return _visible_to(meta, "model")


def app_visible(meta: Any) -> bool:
    """May a view of the tool's server call a tool with this ``_meta``? (A malformed
    ``visibility`` or ``_meta.ui`` leaves the view out too.)"""
    return _visible_to(meta, "app")


def _visible_to(meta: Any, audience: str) -> bool:
    if not isinstance(meta, Mapping) or "ui" not in meta:
        return True
    ui = meta["ui"]
    if not isinstance(ui, Mapping):
        return False
    if "visibility" not in ui:
        return True
    visibility = ui["visibility"]
    if not isinstance(visibility, list) or len(visibility) > 16:
        return False
    if not all(isinstance(v, str) for v in visibility):
        return False
    return audience in visibility


def view_uri(meta: Any) -> str | None:
    """The ``ui://`` view a tool with this ``_meta`` names, if any."""
    if not isinstance(meta, Mapping):
        return None
    ui = meta.get("ui")
    uri = ui.get("resourceUri") if isinstance(ui, Mapping) else None
    if uri is None:
        uri = meta.get("ui/resourceUri")  # the deprecated flat key
    if isinstance(uri, str) and uri.startswith("ui://") and len(uri) <= _MAX_URI:
        return uri
    return None


async def show_view(
    connection: ServerConnection,
    tool: types.Tool,
    name: str,
    arguments: Mapping[str, Any],
    result: types.CallToolResult,
    runtime: ToolRuntime | None,
    tool_call_id: str | None,
) -> None:
    """Push the view of ``tool`` with this successful call's ``result`` (see the module's
    docstring); nothing when the server does not host views, the tool names none, or the call
    ran outside a graph. Never raises for a view that cannot be read or shown."""
    if not connection.config.apps or runtime is None or tool_call_id is None or result.is_error:
        return
    if tool_call_id.startswith(VIEW_CALL_PREFIX):
        return
    uri = view_uri(tool.meta)
    if uri is None:
        return
    try:
        view = await connection.read_view(uri)
    except Exception as exc:  # the call's result stands whatever happened to its view
        reason = str(exc) if isinstance(exc, MCPError) else f"{type(exc).__name__}: {exc}"
        logger.warning(
            "MCP server %r: the view %s of tool %r could not be read, so it is not shown: %s",
            connection.name,
            connection.redact(uri),
            tool.name,
            connection.redact(reason),
        )
        return
    state = runtime.state
    metadata: dict[str, Any] = {"tool_call_id": tool_call_id}
    message_id = calling_message_id(state, tool_call_id)
    if message_id is not None:
        metadata["message_id"] = message_id
    try:
        props = _props(connection, view, tool=tool, name=name, arguments=arguments, result=result)
        props["tool_call_id"] = tool_call_id
        thread_id = ((runtime.config or {}).get("configurable") or {}).get("thread_id")
        if isinstance(thread_id, str) and thread_id:
            props["thread_id"] = thread_id
        push_ui_message(
            APP_UI_NAME,
            dict(props),
            id=f"{APP_UI_NAME}:{tool_call_id}",
            metadata=metadata,
            state_key=UI_STATE_KEY if has_key(state, UI_STATE_KEY) else None,
        )
    except Exception as exc:  # outside a graph, a state that refuses it
        logger.debug("dropped the MCP Apps view message of %r: %r", tool_call_id, exc)


def _props(
    connection: ServerConnection,
    view: View,
    *,
    tool: types.Tool,
    name: str,
    arguments: Mapping[str, Any],
    result: types.CallToolResult,
) -> MCPAppUIProps:
    redact = connection.redact
    props: MCPAppUIProps = {
        "server": connection.name,
        "tool_name": name,
        "mcp_tool": tool.name,
        "tool_call_id": "",
        "resource_uri": view.uri,
        "mime_type": "text/html;profile=mcp-app",
        "arguments": mask_all(dict(arguments), redact),
        "result": _result(result, redact),
    }
    if view.html is not None:
        props["html"] = view.html
    else:
        logger.info(
            "MCP server %r: the view %s of tool %r is too long to show; its message has no html",
            connection.name,
            redact(view.uri),
            tool.name,
        )
    for key, prop, kind in _UI_FIELDS:
        value = view.ui.get(key)
        if isinstance(value, kind):
            props[prop] = value  # type: ignore[literal-required]
    return props


def _result(result: types.CallToolResult, redact: Any) -> MCPAppToolResult:
    """The result as the view is sent it; its content left out past :data:`MAX_VIEW_RESULT`
    characters of JSON (the UI message is kept in the ``ui`` state, so in every checkpoint)."""
    blocks: list[dict[str, Any]] = []
    size = 0
    for block in result.content:
        dumped = mask_all(block.model_dump(mode="json", by_alias=True, exclude_none=True), redact)
        size += len(json.dumps(dumped, default=str))
        if size > MAX_VIEW_RESULT:
            break
        blocks.append(dumped)
    structured = None
    if size <= MAX_VIEW_RESULT and result.structured_content is not None:
        structured = mask_all(result.structured_content, redact)
        size += len(json.dumps(structured, default=str))
    shown: MCPAppToolResult = {"content": blocks, "isError": False}
    if size > MAX_VIEW_RESULT:
        shown = {"content": [], "isError": False, "truncated": True}
    elif structured is not None:
        shown["structuredContent"] = structured
    meta = {k: v for k, v in (result.meta or {}).items() if not k.startswith(_PROTOCOL_META)}
    if meta:
        shown["_meta"] = mask_all(meta, redact)
    return shown
