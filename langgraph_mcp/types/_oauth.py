"""The interrupt a call raises when a per-user OAuth server needs the user's authorization;
re-exported by (and documented in) :mod:`langgraph_mcp.types`."""

from __future__ import annotations

from typing import Final, Literal

from typing_extensions import TypedDict

__all__ = ["AUTHORIZATION_INTERRUPT_TYPE", "MCPAuthorizationInterrupt"]

AUTHORIZATION_INTERRUPT_TYPE: Final = "mcp_authorization"
"""The ``type`` of :class:`MCPAuthorizationInterrupt`."""


class MCPAuthorizationInterrupt(TypedDict):
    """The ``interrupt()`` value raised when a call to a per-user OAuth server (``oauth`` in its
    configuration) needs the user to connect: the user has no token for the server yet, the token
    was refused or could not be refreshed, or the call needs more scopes (step-up). Show ``url``
    as a "connect" link; once the browser has come back through the deployment's callback route,
    resume the run with any value (``True``): the call is retried with the new token (if the user
    did not connect, it fails with an error saying so)."""

    type: Literal["mcp_authorization"]
    server: str
    """The name of the MCP server that needs the authorization."""
    tool_name: str
    """The tool whose call needs it."""
    tool_call_id: str | None
    url: str
    """The authorization server's authorization URL to open in the user's browser."""
    scopes: list[str]
    """The scopes asked for (empty: the authorization server's default)."""
    issuer: str
    """The authorization server's issuer identifier."""
    reason: Literal["connect", "expired", "step_up"]
    """Why: no token yet (``connect``), a token refused or not refreshable (``expired``), or one
    lacking scopes the server now requires (``step_up``)."""
    expires_at: float
    """When ``url`` stops working (Unix time, seconds): after it, the resumed call asks again."""
