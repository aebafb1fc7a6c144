"""MCP Apps UI message types; re-exported by (and documented in) :mod:`langgraph_mcp.types`."""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

__all__ = [
    "APP_UI_NAME",
    "MCPAppCallRequest",
    "MCPAppCallResponse",
    "MCPAppContext",
    "MCPAppToolResult",
    "MCPAppUIProps",
]

APP_UI_NAME = "mcp-app"
"""The component name of the generative-UI message that carries a tool's MCP Apps view."""


class MCPAppToolResult(TypedDict):
    """A successful ``tools/call`` result in MCP's own JSON shape (what an MCP Apps view is sent
    as ``ui/notifications/tool-result``), without the server's secrets."""

    content: list[dict[str, Any]]
    """The result's content blocks as the server sent them (``type``, ``text``, ``data``,
    ``mimeType``, ...)."""
    structuredContent: NotRequired[dict[str, Any]]
    """The result's structured content, when the server sent one."""
    isError: Literal[False]
    """Always ``False``: a call that failed shows no view."""
    _meta: NotRequired[dict[str, Any]]
    """The result's ``_meta``, when the server sent one (protocol keys left out)."""
    truncated: NotRequired[Literal[True]]
    """Present when the result was over 256,000 characters of JSON: ``content`` is then empty and
    ``structuredContent`` left out (the tool's message still has the result)."""


class MCPAppUIProps(TypedDict):
    """The props of the generative-UI message (``name`` :data:`APP_UI_NAME`) that carries the
    ``ui://`` view of one successful call of an MCP Apps tool, with the call's arguments and
    result, pushed once per call (id ``mcp-app:<tool_call_id>``) with ``push_ui_message``.

    The view is meant to run in a sandboxed iframe built from ``csp`` and ``permissions`` (see the
    MCP Apps specification); nothing here renders it."""

    server: str
    tool_name: str
    """The tool's name as the model saw it."""
    mcp_tool: str
    """The tool's name on the server."""
    tool_call_id: str
    thread_id: NotRequired[str]
    """The LangGraph thread the call ran in (absent outside a checkpointed thread): the thread the
    view's own calls go to (``POST /mcp-apps/threads/<thread_id>/call``)."""
    resource_uri: str
    """The view's ``ui://`` URI."""
    mime_type: Literal["text/html;profile=mcp-app"]
    html: NotRequired[str]
    """The view's HTML document; absent when it is longer than 256,000 characters."""
    csp: NotRequired[dict[str, Any]]
    """The view's ``_meta.ui.csp`` as the server declared it (``connectDomains``,
    ``resourceDomains``, ``frameDomains``, ``baseUriDomains``); absent: the specification's
    restrictive default applies."""
    permissions: NotRequired[dict[str, Any]]
    """The view's ``_meta.ui.permissions`` as the server declared it (``camera``, ``microphone``,
    ``geolocation``, ``clipboardWrite``); absent: none."""
    domain: NotRequired[str]
    """The view's ``_meta.ui.domain``, when declared."""
    prefers_border: NotRequired[bool]
    """The view's ``_meta.ui.prefersBorder``, when declared."""
    arguments: dict[str, Any]
    """The arguments the call was made with, as the model (or a person editing them) gave them:
    hidden arguments are never included."""
    result: MCPAppToolResult
    """The call's result."""


class MCPAppCallRequest(TypedDict):
    """What the ``mcp-app`` component sends the deployment's route
    (``POST /mcp-apps/threads/<thread_id>/call``) for one call its view makes."""

    server: str
    """The view's MCP server (the ``server`` of its :class:`MCPAppUIProps`)."""
    method: Literal["tools/call", "resources/read"]
    params: dict[str, Any]
    """MCP's own params: ``{"name", "arguments"}`` (the tool's name on the server) or ``{"uri"}``."""
    assistant_id: NotRequired[str]
    """The assistant (or graph) to run the call with; by default the one the thread last ran."""


class MCPAppCallResponse(TypedDict):
    """The route's answer to a view's call: its result, or that it waits for a person's answer
    (then ``GET /mcp-apps/threads/<thread_id>/calls/<call_id>`` answers again once it ran)."""

    status: Literal["done", "pending"]
    result: NotRequired[dict[str, Any]]
    """With ``"done"``: the MCP result (``CallToolResult`` or ``ReadResourceResult`` JSON)."""
    call_id: NotRequired[str]
    """With ``"pending"``: the call's id (``mcp-app-call:<hex>``)."""


class MCPAppContext(TypedDict):
    """A view's model context (``ui/update-model-context``), kept in the ``mcp_app_context``
    state key when the component sends the view's next message."""

    server: str
    tool_call_id: str
    """The call whose view set it."""
    content: NotRequired[list[dict[str, Any]]]
    structuredContent: NotRequired[dict[str, Any]]
