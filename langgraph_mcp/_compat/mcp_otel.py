"""The mcp SDK's request span, kept free of what the other side said.

The SDK opens a span ``MCP send <method> [<name>]`` around each request it sends
(``mcp.shared.jsonrpc_dispatcher``, through ``mcp.shared._otel.otel_span``). On a JSON-RPC error
it puts the peer's error message in the span's status description, and an exception raised
through it is recorded as an event with its message and stack. Both can repeat a secret the
server was configured with (its env values, an ``Authorization`` header) and are shipped by any
exporter. :func:`quiet_request_spans` replaces the dispatcher's span helper with one that keeps
the span, its kind, name, parent and attributes (``error.type``, ``rpc.response.status_code``:
the error's code), and its ``ERROR`` status, but never a description, an exception event or an
exception's message: an exception sets ``error.type`` to its class name only.

Private SDK names used: ``mcp.shared.jsonrpc_dispatcher.otel_span`` (the name the dispatcher
calls) and ``mcp.shared._otel.otel_span`` (the helper it normally is).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from mcp.shared import _otel as sdk_otel
from mcp.shared import jsonrpc_dispatcher
from opentelemetry.context import Context
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.span import Span, SpanContext
from opentelemetry.util import types as otel_types

__all__ = ["QuietSpan", "quiet_request_spans", "quiet_span"]

_sdk_span = sdk_otel.otel_span


class QuietSpan(Span):
    """A span that takes no status description and records no exception: everything else is
    passed to the span it wraps."""

    def __init__(self, span: Span) -> None:
        self._span = span

    def end(self, end_time: int | None = None) -> None:
        self._span.end(end_time)

    def get_span_context(self) -> SpanContext:
        return self._span.get_span_context()

    def set_attributes(self, attributes: Mapping[str, otel_types.AnyValue]) -> None:
        self._span.set_attributes(attributes)

    def set_attribute(self, key: str, value: otel_types.AttributeValue) -> None:
        self._span.set_attribute(key, value)

    def add_event(
        self, name: str, attributes: otel_types.Attributes = None, timestamp: int | None = None
    ) -> None:
        self._span.add_event(name, attributes, timestamp)

    def add_link(self, context: SpanContext, attributes: otel_types.Attributes = None) -> None:
        self._span.add_link(context, attributes)

    def update_name(self, name: str) -> None:
        self._span.update_name(name)

    def is_recording(self) -> bool:
        return self._span.is_recording()

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        code = status.status_code if isinstance(status, Status) else status
        self._span.set_status(code)  # the description would be the peer's own words

    def record_exception(
        self,
        exception: BaseException,
        attributes: otel_types.Attributes = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        self._span.set_attribute("error.type", type(exception).__qualname__)


@contextmanager
def quiet_span(
    name: str,
    *,
    kind: SpanKind,
    attributes: dict[str, Any] | None = None,
    context: Context | None = None,
    record_exception: bool = True,
    set_status_on_exception: bool = True,
) -> Iterator[Span]:
    """``mcp.shared._otel.otel_span``, made quiet (see the module docstring)."""
    with _sdk_span(
        name,
        kind=kind,
        attributes=attributes,
        context=context,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        quiet = QuietSpan(span)
        try:
            yield quiet
        except Exception as exc:  # as OpenTelemetry's own use_span: not for cancellation
            if record_exception or set_status_on_exception:
                quiet.record_exception(exc)
            if set_status_on_exception:
                quiet.set_status(StatusCode.ERROR)
            raise


def quiet_request_spans() -> None:
    """Make the SDK's request spans quiet, for the whole process (idempotent)."""
    setattr(jsonrpc_dispatcher, "otel_span", quiet_span)  # noqa: B010 - not re-exported by the SDK
