"""Fixture server whose tools differ per user and come with MCP Apps views: who the user is comes
from the ``x-authenticated-user`` request header, which :class:`tests.servers.authorization.Gate`
sets from the validated bearer token (as for ``tests/servers/peruser.py``). Serve it behind a
``Gate`` with ``everything = True``, so that every request (the handshake, listings, reads) carries
a token.

Each user lists ``whoami`` and the tools :data:`TOOLS` gives them:

- ``alice_board`` (alice) and ``bob_board`` (bob): for the model and the view, each naming the view
  :data:`BOARD` (``_meta.ui.resourceUri``);
- ``alice_refresh`` (alice) and ``bob_secret`` (bob): for the view only (``visibility: ["app"]``),
  naming the same view.

``whoami`` answers ``user=<user>``, any other tool ``<tool> for <user>`` (and structured content
``{"tool", "user"}``); a tool not in the caller's list answers an error result and runs nothing.

One view URI serves every user, and its HTML names the user it was read for (``board of
<user>``): a view read for one user and shown to another says so. ``resources/list`` lists
:data:`BOARD` to a user; ``resources/read`` serves it (as ``text/html;profile=mcp-app``) only to a
user, and refuses a request without one.

:class:`Seen` records what the server served: ``requests`` the ``(user, method, Mcp-Session-Id)``
of every request (``""`` where absent: 2026-07-28 requests have no session), ``listed`` the user
of each ``tools/list``, ``read`` the ``(user, uri)`` of each ``resources/read`` (refused ones
included), ``called`` the ``(user, tool)`` of each ``tools/call`` (refused ones included).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

from tests.servers.peruser import INPUT_SCHEMA, user_of

BOARD = "ui://peruser/board.html"
APP_MIME_TYPE = "text/html;profile=mcp-app"
FOR_BOTH: dict[str, Any] = {"ui": {"resourceUri": BOARD}}
FOR_VIEWS: dict[str, Any] = {"ui": {"resourceUri": BOARD, "visibility": ["app"]}}
TOOLS: dict[str, dict[str, dict[str, Any]]] = {
    "alice": {"alice_board": FOR_BOTH, "alice_refresh": FOR_VIEWS},
    "bob": {"bob_board": FOR_BOTH, "bob_secret": FOR_VIEWS},
}
"""User -> their tools with a view (name -> ``_meta``); every user lists ``whoami`` too."""


def board_html(user: str) -> str:
    """The view's document as read for ``user``."""
    return f"<!DOCTYPE html><html><body><p>board of {user}</p></body></html>"


@dataclass
class Seen:
    """What the server served (see the module docstring)."""

    requests: list[tuple[str, str, str]] = field(default_factory=list)
    listed: list[str] = field(default_factory=list)
    read: list[tuple[str, str]] = field(default_factory=list)
    called: list[tuple[str, str]] = field(default_factory=list)

    def sessions(self, user: str) -> set[str]:
        """The ``Mcp-Session-Id`` of every request of ``user`` (none in 2026-07-28)."""
        return {sid for who, _, sid in self.requests if who == user and sid}


def tools_of(user: str | None) -> dict[str, dict[str, Any] | None]:
    """The tools ``user`` lists (name -> ``_meta``); none without a user."""
    if not user:
        return {}
    return {"whoami": None, **TOOLS.get(user, {})}


def build_server(seen: Seen, name: str = "peruser-apps") -> MCPServer:
    """The server; ``seen`` (the caller's) records what it served."""

    async def record(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        headers = getattr(ctx.request, "headers", None)
        session_id = (headers.get("mcp-session-id") if headers is not None else None) or ""
        seen.requests.append((user_of(ctx) or "", str(getattr(ctx, "method", "") or ""), session_id))
        return await call_next(ctx)

    srv: MCPServer = MCPServer(name, middleware=[record])
    low = srv._lowlevel_server

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams
    ) -> types.ListToolsResult:
        user = user_of(ctx)
        seen.listed.append(user or "")
        tools = [
            types.Tool(
                name=tool,
                description=f"{tool.replace('_', ' ')} (of {user})",
                input_schema=dict(INPUT_SCHEMA),
                _meta=meta,
            )
            for tool, meta in tools_of(user).items()
        ]
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        user = user_of(ctx)
        seen.called.append((user or "", params.name))
        if user is None or params.name not in tools_of(user):
            text = f"unknown tool {params.name!r} for {user or 'nobody'}"
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
        text = f"user={user}" if params.name == "whoami" else f"{params.name} for {user}"
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content={"tool": params.name, "user": user},
        )

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams
    ) -> types.ListResourcesResult:
        found = [types.Resource(uri=BOARD, name="board", mime_type=APP_MIME_TYPE)] if user_of(ctx) else []
        return types.ListResourcesResult(resources=found)

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        user = user_of(ctx)
        uri = str(params.uri)
        seen.read.append((user or "", uri))
        if user is None or uri != BOARD:
            raise MCPError(code=types.INVALID_PARAMS, message=f"no resource {uri} for {user or 'nobody'}")
        html = board_html(user)
        board = types.TextResourceContents(uri=BOARD, mime_type=APP_MIME_TYPE, text=html)
        return types.ReadResourceResult(contents=[board])

    low.add_request_handler("tools/list", types.PaginatedRequestParams, list_tools)
    low.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
    low.add_request_handler("resources/list", types.PaginatedRequestParams, list_resources)
    low.add_request_handler("resources/read", types.ReadResourceRequestParams, read_resource)
    return srv
