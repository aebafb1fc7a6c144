"""What one tool call gives the graph: the one place where a call's outcome becomes a
``ToolMessage`` (or a ``Command``), or an :class:`~langgraph_mcp.MCPToolCallError`.

* :func:`failure`: an error ``ToolMessage`` for a call with a tool-call id, else (or when the
  failure's kind is in :data:`RAISE_KINDS`) the exception;
* :func:`call_failed`: what the session layer raised, in words a model and a person can act on;
* :func:`call_result`: a ``tools/call`` result (an ``isError`` one included), its content cut to
  ``max_chars`` with the rest kept as ``overflow`` says, and mapped to a ``Command`` by the
  tool's result mapping;
* :func:`to_result`: the call's step that turns what came back into its outcome.
"""

from __future__ import annotations

import contextvars
import logging
import re
from dataclasses import dataclass
from typing import Any, cast

import mcp_types as types
from langchain_core.messages import ToolMessage
from langgraph.prebuilt import ToolRuntime

from langgraph_mcp._call.call import Call, Next
from langgraph_mcp._call.output import READ_TOOL_NAME, cut_text, marker, store_output, with_marker
from langgraph_mcp._pool.content import convert_result, error_text
from langgraph_mcp.config import OutputHandling
from langgraph_mcp.errors import (
    FailureKind,
    MCPConnectionError,
    MCPError,
    MCPProtocolError,
    MCPServerError,
    MCPTimeoutError,
    MCPToolCallError,
    MissingValue,
)
from langgraph_mcp.options import ResultMapping, ResultToState
from langgraph_mcp.types import MCPToolArtifact

__all__ = [
    "RAISE_KINDS",
    "CALL_FAILURES",
    "CallSite",
    "call_failed",
    "call_result",
    "call_site",
    "failure",
    "not_listed",
    "to_result",
]

logger = logging.getLogger("langgraph_mcp.tools")

RAISE_KINDS: contextvars.ContextVar[frozenset[FailureKind]] = contextvars.ContextVar(
    "langgraph_mcp_raise_kinds", default=frozenset()
)
"""Failure kinds raised as :class:`MCPToolCallError` instead of returned as messages, in this
context (``MCPMiddleware(raise_errors=...)`` sets it, so an outer retry middleware sees them)."""

# How servers word their refusal to send a request the 2026-07-28 protocol has no room for: the
# MCP SDK's "no back-channel for server-initiated requests", FastMCP's "elicitation via
# server-initiated requests is unavailable on 2026-07-28 connections".
_SERVER_REQUEST_REFUSED = re.compile(
    r"no back-channel for server-initiated requests|server-initiated requests? (?:is|are) unavailable",
    re.IGNORECASE,
)
_LEGACY_HINT = (
    "The server tried to ask the client something (elicitation, sampling or roots) with a request "
    "of its own, which the 2026-07-28 protocol negotiated with it cannot carry; "
    'set "protocol": "legacy" for MCP server {server!r} to use the 2025-11-25 protocol, where it can.'
)


@dataclass(frozen=True)
class CallSite:
    """Which call an outcome belongs to: the tool as exposed (``name``), its server and MCP name,
    the tool-call id (``None``: invoked directly, failures raise), and the era negotiated with the
    server (for hints)."""

    name: str
    server: str
    mcp_name: str
    tool_call_id: str | None
    era: str | None = None


def failure(
    site: CallSite, text: str, *, kind: FailureKind = "tool_error", artifact: Any = None
) -> tuple[ToolMessage, None]:
    """An error ``ToolMessage`` saying ``text``.

    Raises:
        MCPToolCallError: the call has no tool-call id, or ``kind`` is in :data:`RAISE_KINDS`.
    """
    if site.tool_call_id is None or kind in RAISE_KINDS.get():
        raise MCPToolCallError(text, kind=kind)
    message = ToolMessage(
        content=text,
        name=site.name,
        tool_call_id=site.tool_call_id,
        status="error",
        artifact=artifact,
        response_metadata={"mcp_server": site.server},  # an MCP call's, even without an artifact
    )
    return message, None


def not_listed(
    site: CallSite, offered: types.Tool, listed: list[types.Tool]
) -> tuple[ToolMessage, None] | None:
    """The error for a call to a tool offered as ``offered`` (from the tool catalog) that its
    server, now started, no longer lists as such (``None``: it does); the call is not sent."""
    now = next((t for t in listed if t.name == offered.name), None)
    if now is None:
        return failure(
            site,
            f"MCP tool {site.mcp_name!r} is no longer offered by server {site.server!r} (its tools "
            "changed since they were kept in the tool catalog): it was not called and is no longer "
            "offered. Try another tool.",
        )
    if now != offered:
        return failure(
            site,
            f"MCP tool {site.mcp_name!r} of server {site.server!r} changed since it was kept in the tool "
            "catalog: it was not called. It is offered with its new definition from the next turn; "
            "call it again with that.",
        )
    return None


def call_failed(site: CallSite, exc: MCPError, *, limit: str) -> tuple[ToolMessage, None]:
    """The message for a call that the session layer could not complete (``limit`` names the
    time limit that applied).

    Raises:
        MCPToolCallError: as :func:`failure`; and ``exc`` itself if it is not a call failure.
    """
    server, name = site.server, site.mcp_name
    if isinstance(exc, MCPConnectionError):
        # A request that was sent says its outcome is unknown; one that never was, does not.
        return failure(site, str(exc), kind="connection")
    if isinstance(exc, MCPTimeoutError):
        return failure(
            site,
            f"MCP tool {name!r} on server {server!r} timed out after {exc.seconds:g}s ({limit}); "
            "the server was asked to cancel it.",
            kind="timeout",
        )
    if isinstance(exc, MCPServerError):
        text = f"MCP server {server!r} rejected the call to {name!r}: {exc.reason} (MCP error {exc.code})"
        return failure(site, _era_hint(site, text), kind="protocol")
    if isinstance(exc, MCPProtocolError):
        return failure(
            site,
            f"MCP server {server!r} returned an invalid result for {name!r}: {exc.reason}",
            kind="protocol",
        )
    if isinstance(exc, MCPToolCallError):  # e.g. a sampling request nobody may answer
        return failure(site, str(exc), kind=exc.kind)
    raise exc


async def call_result(
    site: CallSite,
    result: types.CallToolResult,
    *,
    handling: OutputHandling,
    runtime: ToolRuntime | None,
    mapping: ResultMapping | None,
    messages_key: str,
) -> tuple[Any, Any]:
    """``(content, artifact)`` for a ``tools/call`` result, or ``(message or Command, None)``.

    An ``isError`` result is an error message (its text cut to ``handling.max_chars``). A
    successful one is converted as ``handling`` routes its blocks; text beyond ``max_chars`` is
    cut and kept as ``overflow`` says; ``mapping`` (the tool's result mapping) turns it into a
    ``Command`` when the call has a tool-call id.

    Raises:
        MCPToolCallError: as :func:`failure`.
    """
    if result.is_error:
        artifact = (
            {"structured_content": result.structured_content, "content": []}
            if result.structured_content is not None
            else None
        )
        text = error_text(result)
        if handling.max_chars is not None:
            cut, full, shown = cut_text(text, handling.max_chars)
            if full is not None:
                text = f"{cut}\n{marker(shown, len(full))}"
        return failure(site, _era_hint(site, text, error_text(result)), artifact=artifact)
    content, converted = convert_result(result, handling, server=site.server)
    if handling.max_chars is not None:
        content, converted = await _limit(site, content, converted, handling, runtime)
    if mapping is None or site.tool_call_id is None:
        return content, converted
    if runtime is None and not isinstance(mapping, ResultToState):
        return content, converted  # a result function needs the graph's runtime
    message = ToolMessage(
        content=cast(Any, content), artifact=converted, name=site.name, tool_call_id=site.tool_call_id
    )
    try:
        if isinstance(mapping, ResultToState):
            return mapping.command(message, messages_key), None
        assert runtime is not None
        return mapping(message, runtime), None
    except MissingValue as exc:
        return failure(
            site,
            f"MCP tool {site.name!r} (server {site.server!r}) returned a result its state mapping "
            f"cannot use: {exc}",
            kind="result_mapping",
            artifact=converted,
        )


async def _limit(
    site: CallSite,
    content: str | list[dict[str, Any]],
    artifact: MCPToolArtifact,
    handling: OutputHandling,
    runtime: ToolRuntime | None,
) -> tuple[str | list[dict[str, Any]], MCPToolArtifact]:
    """Cut the model's text to ``handling.max_chars``; keep the rest as ``overflow`` says."""
    assert handling.max_chars is not None
    cut, full, shown = cut_text(content, handling.max_chars)
    if full is None:
        return content, artifact
    overflow, where = handling.overflow, ""
    tool_call_id = site.tool_call_id
    if overflow == "store":
        try:
            stored = (
                runtime is not None
                and tool_call_id is not None
                and await store_output(
                    runtime,
                    tool_call_id,
                    full,
                    server=site.server,
                    tool=site.mcp_name,
                    chunk=handling.max_chars,
                )
            )
        except Exception as exc:  # the store failed: the result, which ran, is kept anyway
            logger.warning(
                "MCP tool %r of server %r: the store refused the full output (%s: %s); it is kept "
                "in the artifact instead",
                site.mcp_name,
                site.server,
                type(exc).__name__,
                exc,
            )
            stored = None
        if stored:
            where = f"; read more with {READ_TOOL_NAME}(handle={tool_call_id!r}, offset={shown})"
        else:
            if stored is not None:  # (a store that failed was reported above)
                logger.warning(
                    "MCP tool %r of server %r: overflow 'store' needs a graph with a store and a "
                    "tool call id; the full output is kept in the artifact instead",
                    site.mcp_name,
                    site.server,
                )
            overflow = "artifact"
    if overflow == "artifact":
        artifact = {**artifact, "full_text": full}
        where = "; the full output is kept for the application"
    return cast(Any, with_marker(cut, marker(shown, len(full), where))), artifact


def _era_hint(site: CallSite, text: str, cause: str | None = None) -> str:
    """``text``, plus what to configure when the server failed the call because it asked the
    client something through a server-initiated request (elicitation, sampling, roots), which a
    2026-07-28 session cannot carry. ``cause`` is the server's own error text when ``text`` may
    have been cut."""
    if site.era != "2026-07-28" or not _SERVER_REQUEST_REFUSED.search(cause or text):
        return text
    return f"{text}\n\n{_LEGACY_HINT.format(server=site.server)}"


CALL_FAILURES = (MCPConnectionError, MCPTimeoutError, MCPServerError, MCPProtocolError, MCPToolCallError)
"""What the session layer raises for a call that could not complete (:func:`call_failed`)."""


def call_site(call: Call) -> CallSite:
    """Who and where, for ``call``'s messages (the era as the connection knows it now)."""
    return CallSite(call.name, call.server, call.mcp_name, call.tool_call_id, era=call.connection.era)


async def to_result(call: Call, next_step: Next) -> Any:
    """A step of the call (:func:`~langgraph_mcp._call.pipeline.run_pipeline`): back, the
    server's result as the call's outcome (messages, cut outputs, ``Command``s), or the message
    for a call the session layer could not complete."""
    if call.tool_timeout is not None:
        limit = "the tool's timeout"
    else:
        limit = call.connection.timeout_for(call.mcp_name)[1]
    try:
        result = await next_step(call)
    except CALL_FAILURES as exc:
        return call_failed(call_site(call), exc, limit=limit)
    return await call_result(
        call_site(call),
        result,
        handling=call.connection.config.output_for(call.mcp_name),
        runtime=call.runtime,
        mapping=call.options.result,
        messages_key=call.messages_key,
    )
