"""Exceptions raised by langgraph_mcp.

Every exception the package raises derives from :class:`MCPError` (each keeps the built-in base
it always had, so ``except ValueError`` or ``except TimeoutError`` still work). Arguments of the
wrong Python type (``TypeError``) and a blocking method called from a running event loop
(``RuntimeError``) are programming errors and raise the built-in types, as the standard library
does.

Configuration problems raise at construction (:class:`MCPConfigError`); a server name that is
not configured raises :class:`MCPUnknownServerError` (a ``KeyError``).

A request to a server fails in one of four ways, each its own type, raised by the session
layer (``pool.connection(name)``):

* :class:`MCPConnectionError`: the server could not be started or reached, or the connection
  died (the outcome of a request in flight is unknown); :class:`MCPAuthenticationError`, one
  kind of it: an HTTP server answered 401 or 403 (the request did not run);
* :class:`MCPTimeoutError`: the request outran its limit on the client's own clock (the server
  was asked to cancel it);
* :class:`MCPServerError`: the server answered with a JSON-RPC error (its code is kept, so a
  server's own ``-32001`` is never mistaken for a client-side timeout);
* :class:`MCPProtocolError`: the answer broke the protocol or the tool's ``outputSchema``.

An MCP tool called with a tool-call id (as ``ToolNode`` and ``MCPToolNode`` call it) turns every
one of them into ``ToolMessage(status="error")`` saying what happened, so a crashed or hung
server cannot take the graph run down; called without one it raises
:class:`MCPToolCallError`. Invalid arguments raise LangGraph's ``ToolInvocationError``, exactly
as for a local tool, so the node's ``handle_tool_errors`` decides.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any, Literal, TypeAlias, get_args

from langchain_core.tools import ToolException

__all__ = [
    "FAILURE_KINDS",
    "FailureKind",
    "MCPArgumentError",
    "MCPAuthenticationError",
    "MCPConfigError",
    "MCPConnectionError",
    "MCPError",
    "MCPProtocolError",
    "MCPServerError",
    "MCPSkillError",
    "MCPTimeoutError",
    "MCPToolCallError",
    "MCPUnknownServerError",
    "MissingValue",
]


OUTCOME_UNKNOWN = "The call's outcome is unknown: the server may have run it."
"""Said by an :class:`MCPConnectionError` for a request that was sent before the connection was
lost (never for one that could not be sent, such as a failed connect)."""


FailureKind: TypeAlias = Literal[
    "tool_error",
    "timeout",
    "connection",
    "protocol",
    "elicitation",
    "sampling",
    "hidden_argument",
    "header",
    "approval",
    "result_mapping",
]
"""How a tool call failed (:attr:`MCPToolCallError.kind`; ``MCPMiddleware(raise_errors=...)``):

* ``tool_error``: the tool ran and returned ``isError`` (the server's own failure message);
* ``timeout``: the call outran its limit (the server was asked to cancel it);
* ``connection``: the server could not be reached, or the connection died during the call;
* ``protocol``: the server rejected the call with a JSON-RPC error, broke the protocol or the
  tool's ``outputSchema``, or the tool's ``inputSchema`` cannot check arguments;
* ``elicitation``: a question from the server could not be asked or answered;
* ``sampling``: a sampling request from the server could not be answered;
* ``hidden_argument``: a hidden argument's source has no value for this call;
* ``header``: a per-call header (``ToolOptions.headers``) cannot be sent over HTTP (a line
  break, another control character, a non-ASCII character or whitespace at either end of its
  value, or a name that is not a valid header name); the call was not sent;
* ``approval``: the approval decision was not usable;
* ``result_mapping``: a successful result that the tool's result mapping cannot use.
"""

FAILURE_KINDS: frozenset[FailureKind] = frozenset(get_args(FailureKind))
"""Every :data:`FailureKind`."""


class MCPError(Exception):
    """The root of every exception this package raises."""


class MCPConfigError(MCPError, ValueError):
    """A connection config is invalid. ``server`` and ``field`` say where, and ``file`` in which
    config file (``None``: the config was not read from a file)."""

    def __init__(self, server: str | None, field: str | None, message: str, file: str | None = None) -> None:
        self.server = server
        self.field = field
        self.reason = message
        self.file = file
        where = [f"config file {file!r}"] if file is not None else []
        if server is not None:
            where.append(f"MCP server {server!r}")
        if field is not None:
            where.append(f"field {field!r}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)

    def __reduce__(self) -> Any:
        return type(self), (self.server, self.field, self.reason, self.file)


class MCPArgumentError(MCPError, ValueError):
    """Arguments for a server's prompt or resource are wrong (checked before anything is sent):
    ``server`` and ``argument`` say where, ``message`` what is wrong."""

    def __init__(self, server: str | None, argument: str | None, message: str) -> None:
        self.server = server
        self.argument = argument
        self.message = message
        where = [f"MCP server {server!r}"] if server is not None else []
        if argument:
            where.append(f"argument {argument!r}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)

    def __reduce__(self) -> Any:
        return type(self), (self.server, self.argument, self.message)


class _ServerProblem(MCPError, RuntimeError):
    """Something about server ``server``; ``reason`` says what."""

    def __init__(self, server: str, message: str) -> None:
        self.server = server
        self.reason = message
        super().__init__(f"MCP server {server!r}: {message}")

    def __reduce__(self) -> Any:
        return type(self), (self.server, self.reason)


class MCPConnectionError(_ServerProblem):
    """A server could not be started or reached, or its connection died."""


class MCPAuthenticationError(MCPConnectionError):
    """An HTTP server refused the credentials: it answered ``status`` (401 or 403), at connect
    time or to a later request (which then did not run)."""

    def __init__(self, server: str, status: int, oauth: str | None = None) -> None:
        self.status = status
        self.oauth = oauth
        """What went wrong getting the deployment's OAuth token (``oauth`` with a ``flow``), if
        that is why: the authorization server's answer, never a secret."""
        try:
            phrase = f"{status} {HTTPStatus(status).phrase}"
        except ValueError:
            phrase = str(status)
        if oauth is not None:
            message = (
                f"the server refused the request (HTTP {phrase}) and no OAuth token could be "
                f"obtained: {oauth}; check the 'oauth' of its configuration"
            )
        else:
            message = (
                f"the server refused the credentials (HTTP {phrase}); "
                "check the 'headers' and 'auth' of its configuration (a server that lists only for "
                "a signed-in user needs per-user 'oauth', or per_user headers from the run)"
            )
        super().__init__(server, message)

    def __reduce__(self) -> Any:
        return type(self), (self.server, self.status, self.oauth)


class MCPTimeoutError(MCPError, TimeoutError):
    """A request did not finish within ``seconds`` on the client's clock (time the client spent
    answering the server's own questions does not count)."""

    def __init__(self, server: str, what: str, seconds: float) -> None:
        self.server = server
        self.what = what
        self.seconds = seconds
        super().__init__(f"MCP server {server!r}: {what} timed out after {seconds:g}s")

    def __reduce__(self) -> Any:
        return type(self), (self.server, self.what, self.seconds)


class MCPServerError(MCPError, RuntimeError):
    """The server answered a request with a JSON-RPC error (``code``, ``reason``, ``data``)."""

    def __init__(self, server: str, code: int, reason: str, data: Any = None) -> None:
        self.server = server
        self.code = code
        self.reason = reason
        self.data = data
        super().__init__(f"MCP server {server!r}: {reason} (MCP error {code})")

    def __reduce__(self) -> Any:
        return type(self), (self.server, self.code, self.reason, self.data)


class MCPProtocolError(_ServerProblem):
    """A server's answer broke the protocol, or a tool's declared ``outputSchema``."""


class MCPSkillError(MCPError, ValueError):
    """A skill, or one of its files, is not given to the model (``langgraph_mcp.skills``):
    ``reason`` says why, in words the model (and a person reading the trace) can act on; ``kind``
    names the check that refused it: ``unknown`` or ``ambiguous`` (the name), ``rejected`` (a
    person), ``unlisted`` or ``outside`` (a file the skill does not list, or not within it),
    ``dynamic`` (its files cannot be checked), ``not_loaded`` or ``changed`` (a file asked for
    before its skill was loaded, or after the skill changed on its server), ``too_large``,
    ``size``, ``digest`` or ``frontmatter`` (the file does not match the server's listing),
    ``unreachable``."""

    def __init__(self, kind: str, reason: str) -> None:
        self.kind = kind
        self.reason = reason
        super().__init__(reason)

    def __reduce__(self) -> Any:
        return type(self), (self.kind, self.reason)


class MCPToolCallError(MCPError, ToolException):
    """A tool call failed; ``kind`` (a :data:`FailureKind`) says how. MCP tools called with a
    tool-call id return it as ``ToolMessage(status="error")`` instead of raising it, unless
    ``MCPMiddleware(raise_errors=...)`` names its kind."""

    def __init__(self, message: str, kind: FailureKind = "tool_error") -> None:
        self.kind: FailureKind = kind
        super().__init__(message)

    def __reduce__(self) -> Any:
        return type(self), (str(self), self.kind)


class MCPUnknownServerError(MCPError, KeyError):
    """No server of that name is configured (``server``; ``configured``: the names that are)."""

    def __init__(self, server: str, configured: list[str]) -> None:
        self.server = server
        self.configured = configured
        super().__init__(f"no MCP server named {server!r}; configured: {configured}")

    def __reduce__(self) -> Any:
        return type(self), (self.server, self.configured)


class MissingValue(MCPError, LookupError):
    """A hidden argument's source (or a result mapping's path) has no value for this call."""
