"""Each MCP tool call made visible: an OpenTelemetry span and a LangChain child run.

:func:`traced` wraps one call (:func:`~langgraph_mcp._call.runner.run_call`) in the caller's own
task, so both hang under what the caller is doing:

* **OpenTelemetry** (only when the ``opentelemetry`` API is importable and a tracer provider is
  set; nothing else is touched otherwise): a span ``mcp.tool_call <tool>`` under the caller's
  current span. The SDK's own ``MCP send tools/call`` span, and the W3C trace context it puts
  into the request's ``_meta``, are opened in that same context, so they are its children and
  an instrumented server joins the trace. That span is made quiet when this module is imported
  (``_compat.mcp_otel``): it keeps its status and the error's code, never the server's error
  message or an exception's text, which can repeat a configured secret. In-process servers
  of 2026-07-28 get no ``_meta`` from the SDK: the span's context is put into ``_meta`` here.
* **LangChain callbacks** (only when the tool's run has handlers, e.g. LangSmith tracing): a
  chain-type child run of the tool's run. Callbacks run in the tool's context
  (``BaseTool.arun`` sets the config with ``run_manager.get_child()``), which is read here, so
  the synchronous path, and a call that does not pass the run manager down, are covered too.

Nothing here ever records arguments, results, headers or ``_meta`` values: only names, counts,
durations and the outcome.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, nullcontext
from typing import Any

import mcp_types as types
from langchain_core.callbacks import AsyncCallbackManager, BaseCallbackManager
from langchain_core.callbacks.manager import AsyncCallbackManagerForChainRun
from langchain_core.runnables.config import var_child_runnable_config
from langchain_core.tracers.base import BaseTracer
from langgraph.errors import GraphBubbleUp, GraphDrained

from langgraph_mcp._compat.mcp_otel import quiet_request_spans
from langgraph_mcp._session import CallStats, ServerConnection
from langgraph_mcp._version import __version__
from langgraph_mcp.errors import (
    MCPConnectionError,
    MCPError,
    MCPProtocolError,
    MCPServerError,
    MCPTimeoutError,
    MCPToolCallError,
)

try:  # the SDK depends on the API, but nothing here may fail without it
    from opentelemetry import trace as otel_trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
except ImportError:  # pragma: no cover - the mcp SDK requires opentelemetry-api
    otel_trace = None  # type: ignore[assignment]
    otel_inject = None
else:
    # W3C trace context only: the application's baggage (user ids, tenants) is not sent to servers.
    otel_inject = TraceContextTextMapPropagator().inject

try:  # LangGraph's handler behind stream_mode="messages": not a tracer, so no run is made for it
    from langgraph.pregel._messages import StreamMessagesHandler as _MessagesHandler

    _NOT_TRACERS: tuple[type, ...] = (_MessagesHandler,)
except ImportError:  # pragma: no cover - another langgraph layout
    _NOT_TRACERS = ()

__all__ = ["ATTRIBUTES", "TRACER_NAME", "CallTrace", "outcome_of", "traced", "tracer"]

TRACER_NAME = "langgraph_mcp"
"""The instrumentation scope of the spans (``otel.scope.name``)."""

ATTRIBUTES = {
    "server": "langgraph_mcp.server",
    "tool": "langgraph_mcp.tool",
    "server_tool": "gen_ai.tool.name",
    "tool_call_id": "gen_ai.tool.call.id",
    "era": "langgraph_mcp.era",
    "protocol": "mcp.protocol.version",
    "transport": "langgraph_mcp.transport",
    "rounds": "langgraph_mcp.rounds",
    "client_wait_s": "langgraph_mcp.client_wait_s",
    "resends": "langgraph_mcp.resends",
    "outcome": "langgraph_mcp.outcome",
    "result_bytes": "langgraph_mcp.result.content_bytes",
}
"""Span attribute for each fact of a call (the LangChain run's metadata uses ``mcp_<fact>``)."""

_cached: tuple[object, Any] | None = None

quiet_request_spans()


def tracer() -> Any:
    """The package's tracer, or ``None`` while OpenTelemetry is off (no API, or no tracer
    provider set: the global provider is still the API's proxy or no-op one)."""
    global _cached
    if otel_trace is None:  # pragma: no cover - see the import
        return None
    provider = otel_trace.get_tracer_provider()
    if isinstance(provider, otel_trace.ProxyTracerProvider | otel_trace.NoOpTracerProvider):
        return None
    cached = _cached
    if cached is not None and cached[0] is provider:
        return cached[1]
    found = provider.get_tracer(TRACER_NAME, __version__)
    _cached = (provider, found)
    return found


def outcome_of(exc: BaseException | None, result: types.CallToolResult | None = None) -> str:
    """How a call ended, in one word: ``ok``, ``tool_error``, ``timeout``, ``connection``,
    ``server_error``, ``protocol``, a :data:`~langgraph_mcp.errors.FailureKind` of the call,
    ``interrupted`` (a person is asked; the call goes on when the run resumes), ``drained``,
    ``cancelled`` or ``error``."""
    if exc is None:
        return "tool_error" if result is not None and result.is_error else "ok"
    if isinstance(exc, GraphDrained):
        return "drained"
    if isinstance(exc, GraphBubbleUp):
        return "interrupted"
    if isinstance(exc, MCPTimeoutError):
        return "timeout"
    if isinstance(exc, MCPConnectionError):
        return "connection"
    if isinstance(exc, MCPServerError):
        return "server_error"
    if isinstance(exc, MCPProtocolError):
        return "protocol"
    if isinstance(exc, MCPToolCallError):
        return exc.kind
    if isinstance(exc, asyncio.CancelledError):
        return "cancelled"
    return "error"


def _content_bytes(result: types.CallToolResult) -> int:
    """The size of the result's text and base64 data (what a model would be given), counted
    only while tracing."""
    size = 0
    for block in result.content:
        if isinstance(block, types.TextContent):
            size += len(block.text.encode("utf-8", "replace"))
        elif isinstance(block, types.ImageContent | types.AudioContent):
            size += len(block.data)
        elif isinstance(block, types.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, types.TextResourceContents):
                size += len(resource.text.encode("utf-8", "replace"))
            else:
                size += len(resource.blob)
    return size


class CallTrace:
    """One traced call: its span and child run (either may be absent), and what to report.
    The traced block sets :attr:`stats` (its clock's) and :attr:`result`, and calls
    :meth:`connected` once connected."""

    def __init__(
        self, connection: ServerConnection, tool: str, mcp_tool: str, tool_call_id: str | None
    ) -> None:
        self.connection = connection
        self.facts: dict[str, Any] = {"server": connection.name, "tool": tool, "server_tool": mcp_tool}
        if tool_call_id is not None:
            self.facts["tool_call_id"] = tool_call_id
        self.on = False
        """Is the call traced at all (else every method here is a no-op)?"""
        self.span: Any = None
        self.stats: CallStats | None = None
        self.result: types.CallToolResult | None = None

    def connected(self) -> None:
        """Note what is known once connected: the era, the protocol version, the transport."""
        if not self.on:
            return
        connection = self.connection
        found = {
            "era": connection.era,
            "protocol": connection.protocol_version,
            "transport": connection.transport or connection.config.transport,
        }
        found = {k: v for k, v in found.items() if v is not None}
        self.facts.update(found)
        if self.span is not None:
            self.span.set_attributes({ATTRIBUTES[k]: v for k, v in found.items()})

    def carry(self, meta: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        """``meta`` with this span's W3C trace context (for a transport whose SDK does not add
        its own; where it does, the SDK's span, a child of this one, replaces it)."""
        if self.span is None or otel_inject is None:
            return meta
        carrier: dict[str, Any] = dict(meta or {})
        otel_inject(carrier)
        return carrier

    def finish(self, exc: BaseException | None) -> dict[str, Any]:
        """The facts of the ended call."""
        stats, result = self.stats, self.result
        facts = dict(self.facts)
        facts["outcome"] = outcome_of(exc, result)
        if stats is not None:
            facts["rounds"] = stats.rounds
            facts["client_wait_s"] = round(stats.client_seconds, 6)
            facts["resends"] = stats.resends
        if result is not None and exc is None:
            facts["result_bytes"] = _content_bytes(result)
        return facts


def _callbacks() -> BaseCallbackManager | None:
    """The tool run's child callbacks, when they have a handler (else no run is made)."""
    config = var_child_runnable_config.get()
    if not config:
        return None
    callbacks = config.get("callbacks")
    if isinstance(callbacks, BaseCallbackManager) and any(
        not isinstance(h, _NOT_TRACERS) for h in callbacks.handlers
    ):
        return callbacks
    return None  # none, or a plain list: only seen before a run starts, so no tool run to join


_RESULT_FACTS = ("outcome", "era", "rounds", "client_wait_s", "resends", "result_bytes")


async def _start_run(callbacks: BaseCallbackManager, trace: CallTrace) -> AsyncCallbackManagerForChainRun:
    manager = AsyncCallbackManager.configure(
        inheritable_callbacks=callbacks,
        local_tags=["mcp"],
        local_metadata={f"mcp_{k}": v for k, v in trace.facts.items()},
    )
    facts = trace.facts
    return await manager.on_chain_start(
        None, {"server": facts["server"], "tool": facts["server_tool"]}, name=f"mcp.tool_call {facts['tool']}"
    )


async def _end_run(
    run: AsyncCallbackManagerForChainRun, facts: dict[str, Any], exc: BaseException | None
) -> None:
    # A run's metadata is fixed when it starts; what is known only now is added to the traced
    # run (a tracer such as LangSmith's sends it with the run's end), and given as its outputs.
    metadata = {f"mcp_{k}": v for k, v in facts.items()}
    for handler in run.handlers:
        if isinstance(handler, BaseTracer) and (found := handler.run_map.get(str(run.run_id))) is not None:
            found.extra.setdefault("metadata", {}).update(metadata)
    if exc is None or facts["outcome"] == "interrupted":
        await run.on_chain_end({k: facts[k] for k in _RESULT_FACTS if k in facts})
    elif isinstance(exc, MCPError | GraphDrained | asyncio.CancelledError):
        await run.on_chain_error(exc)  # the package's errors never hold a secret
    else:
        await run.on_chain_error(RuntimeError(f"the MCP tool call failed ({type(exc).__name__})"))


def _end_span(span: Any, facts: dict[str, Any]) -> None:
    span.set_attributes({ATTRIBUTES[k]: v for k, v in facts.items() if k not in ("server", "tool")})
    outcome = facts["outcome"]
    if outcome not in ("ok", "interrupted"):
        span.set_attribute("error.type", outcome)
        span.set_status(otel_trace.StatusCode.ERROR, outcome)


@asynccontextmanager
async def traced(
    connection: ServerConnection, *, tool: str, mcp_tool: str, tool_call_id: str | None
) -> AsyncIterator[CallTrace]:
    """Trace the call made in the block (see the module's docstring and :class:`CallTrace`)."""
    trace = CallTrace(connection, tool, mcp_tool, tool_call_id)
    otel = tracer()
    callbacks = _callbacks()
    if otel is None and callbacks is None:
        yield trace
        return
    trace.on = True
    trace.connected()  # what the last connect said (a call made before any has no era yet)
    run = await _start_run(callbacks, trace) if callbacks is not None else None
    spanning = (
        otel.start_as_current_span(
            f"mcp.tool_call {tool}",
            kind=otel_trace.SpanKind.INTERNAL,
            attributes={ATTRIBUTES[k]: v for k, v in trace.facts.items()},
            record_exception=False,
            set_status_on_exception=False,
        )
        if otel is not None
        else nullcontext(None)
    )
    with spanning as span:
        trace.span = span
        try:
            yield trace
        except BaseException as exc:
            facts = trace.finish(exc)
            if span is not None:
                _end_span(span, facts)
            if run is not None:
                await _end_run(run, facts, exc)
            raise
        facts = trace.finish(None)
        if span is not None:
            _end_span(span, facts)
        if run is not None:
            await _end_run(run, facts, None)
