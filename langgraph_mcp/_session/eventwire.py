"""The events extension's wire shapes (``io.modelcontextprotocol/events``, SEP-3415).

The one home of what the draft says on the wire; the revision followed is :data:`EVENTS_REVISION`.
Where the draft moved (the capability's location, the error codes), both the draft's and the
earlier design sketch's forms are read, so servers built on either work:

- the capability: ``capabilities.extensions["io.modelcontextprotocol/events"]`` (the draft; a
  server of the sketch that says only ``capabilities.events`` is not read as offering events);
- the error codes: the draft's ``-32023``..``-32027`` and the sketch's ``-32011``..``-32015``
  (NotFound, Forbidden, ResourceExhausted, Unsupported, CallbackEndpointError).

Every shape here is read from an untrusted server: strings and collections are bounded, an
occurrence's ``data`` must be an object within :data:`MAX_EVENT_BYTES` and
:data:`MAX_EVENT_DEPTH`; anything else is refused where it is read
(:func:`occurrence_or_refusal`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from langgraph_mcp._support.coerce import json_depth

__all__ = [
    "DELIVERY_MODES",
    "EVENTS_EXTENSION",
    "EVENTS_REVISION",
    "MAX_EVENT_BYTES",
    "MAX_EVENT_DEPTH",
    "MAX_PAGE_EVENTS",
    "SUBSCRIPTION_META",
    "DeliveryMode",
    "EventOccurrence",
    "EventType",
    "PollAnswer",
    "SubscribeAnswer",
    "error_name",
    "occurrence_or_refusal",
]

EVENTS_EXTENSION = "io.modelcontextprotocol/events"
"""The events extension identifier (the server declares it)."""

EVENTS_REVISION = "SEP-3415 draft of 2026-10-05"
"""The revision of the draft this client follows."""

SUBSCRIPTION_META = "io.modelcontextprotocol/subscriptionId"
"""The ``_meta`` key naming, in each pushed frame, the ``events/stream`` request it belongs to."""

DeliveryMode = Literal["poll", "push", "webhook"]
"""How a subscription's events reach the client: it polls (``events/poll``), the server pushes
them on a stream (``events/stream``), or the server POSTs them to a URL (``events/subscribe``)."""

DELIVERY_MODES: tuple[DeliveryMode, ...] = ("push", "poll", "webhook")
"""Every delivery mode, in the order a subscription that names none prefers them."""

MAX_EVENT_BYTES = 256 * 1024
"""An occurrence whose JSON is longer than this is refused (the draft's webhook body bound)."""

MAX_EVENT_DEPTH = 32
"""An occurrence whose ``data`` nests deeper than this is refused."""

MAX_PAGE_EVENTS = 10_000
"""The most events an ``events/poll`` answer may hold; a longer one is not a poll answer."""

_ERRORS: Mapping[int, str] = {
    -32023: "NotFound",
    -32024: "Forbidden",
    -32025: "ResourceExhausted",
    -32026: "Unsupported",
    -32027: "CallbackEndpointError",
    # the design sketch's numbers, still sent by servers built on it
    -32011: "NotFound",
    -32012: "Forbidden",
    -32013: "ResourceExhausted",
    -32014: "Unsupported",
    -32015: "CallbackEndpointError",
}


def error_name(code: int) -> str | None:
    """The events error a JSON-RPC error code stands for (either numbering), if any."""
    return _ERRORS.get(code)


_Text = Annotated[str, Field(min_length=1, max_length=512)]
_ISO_8601 = r"^\d{4}-\d{2}-\d{2}[T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?$"


class EventType(BaseModel):
    """One event type of ``events/list``: its name, what it is, how it can be delivered, the
    JSON Schema of the ``arguments`` a subscription gives and of the ``data`` it carries."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    name: _Text
    description: Annotated[str, Field(max_length=4096)] | None = None
    delivery: tuple[DeliveryMode, ...]
    input_schema: dict[str, Any] | None = Field(default=None, alias="inputSchema")
    payload_schema: dict[str, Any] | None = Field(default=None, alias="payloadSchema")

    @field_validator("delivery", mode="before")
    @classmethod
    def _known_modes(cls, value: Any) -> Any:
        """Modes this client does not know are left out; none known left is not valid."""
        if not isinstance(value, list | tuple) or len(value) > 16:
            return value
        known = tuple(dict.fromkeys(m for m in value if m in DELIVERY_MODES))
        if not known:
            raise ValueError("no delivery mode this client knows")
        return known


class EventOccurrence(BaseModel):
    """One event as the server sends it: its id (unique per event, the key of deduplication),
    type name, time, data and, pushed or posted, the cursor after it."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    event_id: _Text = Field(alias="eventId")
    name: _Text
    timestamp: Annotated[
        str, Field(max_length=40, pattern=r"^\d{4}-\d{2}-\d{2}[T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?$")
    ]
    """ISO 8601 (checked: it is shown to the model)."""
    data: dict[str, Any]
    cursor: Annotated[str, Field(max_length=4096)] | None = None


class PollAnswer(BaseModel):
    """An ``events/poll`` result: events (raw; each is checked when read), the cursor to poll
    with next (``None``: the type keeps no history, poll with ``null`` again), whether history
    was lost, whether more are waiting now, and when to poll again."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    events: Annotated[list[Any], Field(max_length=MAX_PAGE_EVENTS)] = []
    cursor: Annotated[str, Field(max_length=4096)] | None = None
    truncated: bool = False
    has_more: bool = Field(default=False, alias="hasMore")
    next_poll_ms: Annotated[int, Field(ge=0)] | None = Field(default=None, alias="nextPollMs")


class SubscribeAnswer(BaseModel):
    """An ``events/subscribe`` result: the server's id of the subscription, when it must be
    renewed (``None``: no expiry), the cursor it starts from, and whether history was lost."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    id: Annotated[str, Field(max_length=512)] | None = None
    refresh_before: Annotated[str, Field(max_length=64)] | None = Field(default=None, alias="refreshBefore")
    cursor: Annotated[str, Field(max_length=4096)] | None = None
    truncated: bool = False


def occurrence_or_refusal(raw: Any) -> EventOccurrence | str:
    """``raw`` read as an occurrence, or why it is refused (too long, too deep, not the shape);
    the reason names no content of the event."""
    try:
        size = len(json.dumps(raw, separators=(",", ":"), default=str))
    except (TypeError, ValueError, RecursionError):
        return "it is not JSON"
    if size > MAX_EVENT_BYTES:
        return f"it is {size} bytes long, over the {MAX_EVENT_BYTES} bytes allowed"
    if isinstance(raw, Mapping) and json_depth(raw.get("data")) > MAX_EVENT_DEPTH:
        return f"its data nests deeper than {MAX_EVENT_DEPTH} levels"
    try:
        return EventOccurrence.model_validate(raw)
    except ValueError:
        return "it is not an event occurrence (eventId, name, timestamp and an object of data)"
