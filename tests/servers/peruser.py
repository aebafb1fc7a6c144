"""Fixture server whose tool catalog differs per user: who the user is comes from the
``x-authenticated-user`` request header, which :class:`tests.servers.authorization.Gate` sets from
the validated bearer token (and strips from what clients send). Serve it behind a ``Gate`` with
``everything = True`` so that every request, the handshake and listings included, carries a token.

The test holds a :class:`PerUserCatalog` and may change it while the server runs:

- ``tools``: per user, the names of the tools listed (a user not in it lists ``["whoami"]``);
  a request without the header (none should get past the gate) lists no tools, and its calls fail.
- ``listed`` records the user of each ``tools/list`` served, ``called`` the ``(user, tool)`` of
  each ``tools/call`` (refused ones included).
- ``whoami`` answers ``user=<user>``, any other tool ``<tool> for <user>``; a tool not in the
  caller's current list answers an error result (``isError``) and runs nothing. Each tool's
  description names its user ("Reports of alice") and its input schema is
  ``{"type": "object", "properties": {"q": {"type": "string"}}}``.

``await catalog.changed()`` after editing ``tools`` tells connected clients the list changed:

- 2025-11-25 (initialize) sessions get a pushed ``notifications/tools/list_changed``, sent outside
  any request, so it travels on the session's standalone GET stream (a client without one open
  does not see it); ``initialize`` advertises ``tools.listChanged``. ``changed(user)`` notifies only
  the sessions whose latest request came from ``user``; ``changed()`` notifies them all.
- 2026-07-28 (stateless): the event is published on the server's subscription bus, so every open
  ``subscriptions/listen`` stream that asked for ``toolsListChanged`` gets it, whoever its user is
  (the bus has no notion of users: ``changed(user)`` reaches every listener too). A client that is
  not listening just sees the new list on its next ``tools/list``.

Either way the next ``tools/list`` of a user reflects the edit at once (nothing is cached here).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import MCPServer
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.subscriptions import ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

USER_HEADER = "x-authenticated-user"
INPUT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"q": {"type": "string"}}}
DEFAULT_TOOLS = {"alice": ["whoami", "alice_reports"], "bob": ["whoami", "bob_admin"]}

logger = logging.getLogger(__name__)


def _default_tools() -> dict[str, list[str]]:
    return {user: list(names) for user, names in DEFAULT_TOOLS.items()}


@dataclass
class PerUserCatalog:
    """What each user lists, and what the server saw (see the module docstring)."""

    tools: dict[str, list[str]] = field(default_factory=_default_tools)
    """User -> the names of the tools listed to them; a user not here lists ``["whoami"]``."""
    named: bool = True
    """Descriptions name the user ("Reports of alice"); ``False``: "Reports of the user", so that
    two users who list the same tools get listings of the same content."""
    listed: list[str] = field(default_factory=list)
    """The user of each ``tools/list`` served, in order (``""`` for one without a user)."""
    called: list[tuple[str, str]] = field(default_factory=list)
    """``(user, tool)`` of each ``tools/call``, in order, refused ones included."""
    notified: list[str] = field(default_factory=list)
    """The user of each 2025-11-25 session a ``notifications/tools/list_changed`` was sent to."""
    bus: InMemorySubscriptionBus = field(default_factory=InMemorySubscriptionBus)
    """The server's 2026-07-28 subscription bus (``subscriptions/listen``)."""
    sessions: dict[str, tuple[ServerSession, str]] = field(default_factory=dict, repr=False)
    """2025-11-25 sessions seen: ``Mcp-Session-Id`` -> (a session to send on, its latest request's user)."""

    def names_for(self, user: str | None) -> list[str]:
        """The tool names ``user`` lists now (none without a user)."""
        if not user:
            return []
        return list(self.tools.get(user, ["whoami"]))

    async def changed(self, user: str | None = None) -> None:
        """Tell clients the tool list changed (all users', or ``user``'s for 2025-11-25 sessions)."""
        await self.bus.publish(ToolsListChanged())
        for key, (session, whose) in list(self.sessions.items()):
            if user is not None and whose != user:
                continue
            try:
                await session.send_tool_list_changed()
            except Exception:  # a closed session: forget it
                logger.debug("peruser: dropping a closed session", exc_info=True)
                self.sessions.pop(key, None)
                continue
            self.notified.append(whose)


def user_of(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The authenticated user of the HTTP request ``ctx`` came in, if the gate named one."""
    headers = getattr(ctx.request, "headers", None)
    value = headers.get(USER_HEADER) if headers is not None else None
    return value or None


def describe(tool: str, user: str) -> str:
    if tool == "whoami":
        return f"Who {user} is"
    words = tool.removeprefix(f"{user}_").replace("_", " ").capitalize()
    return f"{words} of {user}"


def build_server(catalog: PerUserCatalog, name: str = "peruser") -> MCPServer:
    """The server over ``catalog``, which the caller keeps (to edit it and read what was seen)."""

    async def remember(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        # Each message gets a ServerSession of its own; one without a related request id sends on
        # the connection's standalone stream, so the latest one of an HTTP session will do.
        headers = getattr(ctx.request, "headers", None)
        session_id = headers.get("mcp-session-id") if headers is not None else None
        user = user_of(ctx)
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS and session_id and user is not None:
            catalog.sessions[session_id] = (ctx.session, user)
        return await call_next(ctx)

    srv: MCPServer = MCPServer(name, subscriptions=catalog.bus, middleware=[remember])
    low = srv._lowlevel_server
    plain_options = low.create_initialization_options

    def options(*args: Any, **kwargs: Any) -> Any:
        if not args and "notification_options" not in kwargs:
            kwargs["notification_options"] = NotificationOptions(tools_changed=True)
        return plain_options(*args, **kwargs)

    low.create_initialization_options = options  # type: ignore[method-assign]

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams
    ) -> types.ListToolsResult:
        user = user_of(ctx)
        catalog.listed.append(user or "")
        tools = [
            types.Tool(
                name=tool,
                description=describe(tool, user or "") if catalog.named else describe(tool, "the user"),
                input_schema=dict(INPUT_SCHEMA),
            )
            for tool in catalog.names_for(user)
        ]
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        user = user_of(ctx)
        catalog.called.append((user or "", params.name))
        if user is None:
            text, error = f"no authenticated user: {params.name} refused", True
        elif params.name not in catalog.names_for(user):
            text, error = f"unknown tool {params.name!r} for {user}", True
        elif params.name == "whoami":
            text, error = f"user={user}", False
        else:
            text, error = f"{params.name} for {user}", False
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)

    low.add_request_handler("tools/list", types.PaginatedRequestParams, list_tools)
    low.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
    return srv
