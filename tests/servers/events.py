"""A server with the events extension (``io.modelcontextprotocol/events``, 2026-10-05 draft).

Built on the SDK's server extension API: an ``Extension`` that serves ``events/list``,
``events/poll``, ``events/stream`` (push), ``events/subscribe`` and ``events/unsubscribe``
(webhooks), advertised as ``capabilities.extensions["io.modelcontextprotocol/events"] =
{"listChanged": true}``. Every result carries ``"resultType": "complete"``.

Everything lives in ``$EVENTS_DIR`` (a fresh temporary folder when unset):

- ``events.jsonl``: the event log, one JSON object a line, ``{"name": ..., "data": {...},
  "eventId"?: ..., "timestamp"?: ...}``, appended by tests (or by the ``emit`` tool). An event's
  id is its ``eventId`` when the line gives one (so a test can deliver the same id twice), else
  ``evt-<line number>``; its cursor is ``c-<line number>`` (lines count from 1; ``c-0`` is the
  start of an empty log); its timestamp is the line's ``timestamp``, else the time this server
  first read the line (ISO 8601 UTC). ``arguments`` filter events: ``{"queue": q}`` keeps only
  events whose ``data.queue`` is ``q``.
- ``types.json``: the event types (a list of descriptors, listed as given except for keys that
  start with ``x-``; ``"x-replay": false`` makes a type cursorless). Default: ``ticket.created``
  (poll, push, webhook; arguments ``{"queue"?: str}``), ``build.failed`` (poll, push) and
  ``cursorless.ping`` (poll, push, webhook; no replay: every cursor it hands out is ``null``, and
  every poll answer after its first one omits ``cursor``; a poll returns the events appended since
  the previous poll of that type and arguments, the first returns none).

Knobs (files in ``$EVENTS_DIR``, read at each request unless said otherwise; a knob that says
"then deleted" acts once):

- ``.no-extension``: present when the server is built: no capability is declared, but
  ``events/*`` are answered all the same (to catch a client that sends them anyway).
- ``.page_size``: ``events/list`` entries per page (``nextCursor`` when more remain).
- ``.max_events``: the most events one poll returns (default 50; ``maxEvents`` may ask fewer).
- ``.next_poll_ms``: every poll answer's ``nextPollMs`` (default 1000).
- ``.list_changed``: the next poll first sends ``notifications/events/list_changed`` (no params)
  on that request's stream, then answers; then deleted.
- ``.list_changed_listen``: a ``subscriptions/listen`` that opted in with ``eventsListChanged``
  (acknowledged, logged) sends ``notifications/events/list_changed`` on its stream, as the draft
  delivers it; then deleted.
- ``.truncate``: the next poll answers ``{"events": [], "cursor": <end>, "truncated": true}``; a
  live stream that sees it first re-sends ``active`` with ``truncated: true`` and the end cursor;
  a webhook subscription that sees it first POSTs a ``{"type": "gap", "cursor": <end>}`` envelope
  (``webhook-id: msg_gap_<random>``). Then deleted.
- ``.heartbeat_ms``: a stream's heartbeat interval (default 500).
- ``.silent_after``: N: the first stream of each event type sends nothing after its N-th
  heartbeat, and stays open (a dead stream a client must notice).
- ``.terminate``: a live stream sends ``notifications/events/terminated`` (Forbidden, -32024)
  and ends; then deleted.
- ``.ttl_ms``: a webhook subscription's lifetime (default 2500; a smaller ``ttlMs`` wins). A
  subscription not refreshed (subscribed again with the same url, name and arguments) before its
  ``refreshBefore`` lapses: its deliveries stop.
- ``.bad_signature``: webhook deliveries (the verification challenge too) are signed with a wrong
  key.
- ``.redeliver``: each webhook event is POSTed twice (same ``webhook-id``).
- ``.ignore_max_age``: present: ``maxAgeMs`` is ignored (older events are sent all the same).

Streams (``events/stream``) send, on the request's own stream (its SSE response over HTTP), each
with ``params._meta["io.modelcontextprotocol/subscriptionId"]`` = the request's JSON-RPC id:
``notifications/events/active`` ``{cursor, truncated: false}`` first, then
``notifications/events/event`` ``{eventId, name, timestamp, data, cursor}`` for each event after
the request's cursor (``null`` = from now; the log is read every 50 ms), and
``notifications/events/heartbeat`` ``{cursor}``. A stream ends when the client cancels it (or on
``.terminate``: its result is then ``{"resultType": "complete", "_meta": {subscriptionId}}``).

Webhooks (``events/subscribe``): the secret must be ``whsec_`` + base64 of 24..64 bytes, the url
https (or http to a loopback host), else -32602. Before answering for a url not verified yet, the
server POSTs a signed ``{"type": "verification", "challenge": ...}`` and needs a 2xx whose JSON
body echoes the challenge, else -32027 ``{"reason": "challenge_failed"}``. Deliveries are
Standard Webhooks POSTs (``webhook-id``, ``webhook-timestamp``, ``webhook-signature: v1,<base64
HMAC-SHA256(key, "<id>.<ts>." + body)>``, ``X-MCP-Subscription-Id``) of ``{eventId, name,
timestamp, data, cursor}``, retried on a connection error, 425, 429 or 5xx (every 0.2 s, 10 tries
at most); a 410 ends the subscription.

Errors: an unknown event type is -32023 ``{"kind": "event"}``, an unknown subscription -32023
``{"kind": "subscription"}``, a delivery mode the type does not offer -32026.

Logs: every ``events/*`` request, in order, is appended to ``$EVENTS_DIR/.log`` as ``{"method":
..., "params": <params as received>, "t": <time.time()>}`` (read it with :func:`log`); every
webhook POST attempt to ``$EVENTS_DIR/.deliveries`` as ``{"url", "webhook-id", "status"}``
(``status`` is ``"error"`` when the connection failed; read with :func:`deliveries`).

Tools: ``echo(text)``; ``emit(name, data)`` appends an event to the log and returns its id.
"""

import asyncio
import base64
import binascii
import hashlib
import hmac
import json
import os
import re
import secrets
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import httpx2
from mcp.server.context import HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, RequestParams, SubscriptionsListenRequestParams
from pydantic import BaseModel, ConfigDict, Field

from tests.servers._runner import run_cli

EXTENSION = "io.modelcontextprotocol/events"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

NOT_FOUND = -32023
FORBIDDEN = -32024
UNSUPPORTED = -32026
CALLBACK_ENDPOINT_ERROR = -32027

TICK = 0.05
"""Seconds between two reads of the event log by a stream or a webhook subscription."""

DEFAULT_TYPES: list[dict[str, Any]] = [
    {
        "name": "ticket.created",
        "description": "A support ticket was opened",
        "delivery": ["poll", "push", "webhook"],
        "inputSchema": {"type": "object", "properties": {"queue": {"type": "string"}}},
        "payloadSchema": {
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "queue": {"type": "string"},
                "title": {"type": "string"},
            },
        },
    },
    {
        "name": "build.failed",
        "description": "A CI build failed",
        "delivery": ["poll", "push"],
        "inputSchema": {"type": "object", "properties": {}},
        "payloadSchema": {"type": "object", "properties": {"build": {"type": "string"}}},
    },
    {
        "name": "cursorless.ping",
        "description": "A ping with no replay",
        "delivery": ["poll", "push", "webhook"],
        "inputSchema": {"type": "object", "properties": {}},
        "payloadSchema": {"type": "object"},
        "x-replay": False,
    },
]


def folder(given: str | Path | None = None) -> Path:
    """``given`` (else ``$EVENTS_DIR``, else a new temporary folder), created if missing."""
    given = given or os.environ.get("EVENTS_DIR")
    root = Path(given or tempfile.mkdtemp(prefix="events-"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def append(
    root: Path, name: str, data: dict[str, Any], event_id: str | None = None, timestamp: str | None = None
) -> str:
    """Append an event to the log of ``root`` (its time ``timestamp``, ISO 8601; default: when the
    server first reads it); return its id."""
    path = root / "events.jsonl"
    count = len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0
    line: dict[str, Any] = {"name": name, "data": data}
    if event_id is not None:
        line["eventId"] = event_id
    if timestamp is not None:
        line["timestamp"] = timestamp
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")
    return event_id or f"evt-{count + 1}"


def _lines(root: Path, name: str) -> list[dict[str, Any]]:
    path = root / name
    return (
        [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    )


def log(root: Path) -> list[dict[str, Any]]:
    """The ``events/*`` requests the server of ``root`` received, in order."""
    return _lines(root, ".log")


def deliveries(root: Path) -> list[dict[str, Any]]:
    """The webhook POST attempts the server of ``root`` made, in order."""
    return _lines(root, ".deliveries")


def _append_json(root: Path, name: str, entry: dict[str, Any]) -> None:
    with (root / name).open("a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def _int_knob(root: Path, name: str, default: int | None) -> int | None:
    path = root / name
    return int(path.read_text().strip()) if path.exists() else default


def _take(root: Path, name: str) -> bool:
    """Whether the one-shot knob ``name`` is set; it is deleted if so."""
    try:
        (root / name).unlink()
    except FileNotFoundError:
        return False
    return True


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _canonical(arguments: dict[str, Any] | None) -> str:
    return json.dumps(arguments or {}, sort_keys=True, separators=(",", ":"))


def _decode_secret(secret: str) -> bytes:
    if not re.fullmatch(r"whsec_[A-Za-z0-9+/]+={0,2}", secret):
        raise MCPError(INVALID_PARAMS, "the secret must be whsec_ followed by base64")
    try:
        key = base64.b64decode(secret[6:], validate=True)
    except binascii.Error:
        raise MCPError(INVALID_PARAMS, "the secret is not valid base64") from None
    if not 24 <= len(key) <= 64:
        raise MCPError(INVALID_PARAMS, "the secret must encode 24 to 64 bytes")
    return key


def sign(key: bytes, webhook_id: str, timestamp: str, body: bytes) -> str:
    """The Standard Webhooks ``webhook-signature`` value of a delivery."""
    mac = hmac.new(key, f"{webhook_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


class _Notification(BaseModel):
    """Any notification: what ``ServerSession.send_notification`` needs (a ``method`` and
    ``params`` to dump), for methods outside the spec's notification union."""

    method: str
    params: dict[str, Any] | None = None


class ListenParams(RequestParams):
    model_config = ConfigDict(extra="allow")
    notifications: dict[str, Any] = Field(default_factory=dict)


class ListParams(RequestParams):
    cursor: str | None = None


class PollParams(RequestParams):
    name: str
    arguments: dict[str, Any] | None = None
    cursor: str | None = None
    maxEvents: int | None = None
    maxAgeMs: int | None = None


class StreamParams(RequestParams):
    name: str
    arguments: dict[str, Any] | None = None
    cursor: str | None = None
    maxAgeMs: int | None = None


class Delivery(BaseModel):
    mode: str = "webhook"
    url: str
    secret: str | None = None


class SubscribeParams(RequestParams):
    name: str
    arguments: dict[str, Any] | None = None
    delivery: Delivery
    cursor: str | None = None
    ttlMs: int | None = None
    maxAgeMs: int | None = None


class UnsubscribeParams(RequestParams):
    name: str
    arguments: dict[str, Any] | None = None
    delivery: Delivery


@dataclass
class _Subscription:
    id: str
    url: str
    name: str
    arguments: dict[str, Any]
    key: bytes
    replay: bool
    position: int
    expires: float
    task: "asyncio.Task[None] | None" = None


@dataclass
class _State:
    stamps: dict[int, float] = field(default_factory=dict)
    streams: dict[str, int] = field(default_factory=dict)  # event type -> streams opened
    cursorless: dict[str, int] = field(default_factory=dict)  # (type, arguments) -> position
    cursorless_polled: set[str] = field(default_factory=set)
    verified: set[str] = field(default_factory=set)
    subscriptions: dict[tuple[str, str, str], _Subscription] = field(default_factory=dict)


def build_server(name: str = "events", root: str | Path | None = None) -> MCPServer:
    """The events server of ``root`` (default ``$EVENTS_DIR``)."""
    root = folder(root)
    state = _State()

    def types() -> list[dict[str, Any]]:
        path = root / "types.json"
        return json.loads(path.read_text()) if path.exists() else DEFAULT_TYPES

    def descriptor(event: str, mode: str) -> dict[str, Any]:
        for d in types():
            if d["name"] == event:
                if mode not in d.get("delivery", []):
                    raise MCPError(UNSUPPORTED, "Unsupported", {"feature": "deliveryMode", "value": mode})
                return d
        raise MCPError(NOT_FOUND, "NotFound", {"kind": "event"})

    def events() -> list[tuple[int, dict[str, Any]]]:
        """Every line of the log as ``(line number, line)``."""
        path = root / "events.jsonl"
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                out.append((n, json.loads(line)))
        return out

    def end(log_: list[tuple[int, dict[str, Any]]]) -> int:
        return log_[-1][0] if log_ else 0

    def matching(
        log_: list[tuple[int, dict[str, Any]]],
        event: str,
        arguments: dict[str, Any] | None,
        after: int,
        max_age_ms: int | None = None,
    ) -> list[tuple[int, dict[str, Any]]]:
        oldest = time.time() - max_age_ms / 1000 if max_age_ms is not None else None
        out = []
        for n, line in log_:
            if n <= after or line.get("name") != event:
                continue
            data = line.get("data") or {}
            if arguments and "queue" in arguments and data.get("queue") != arguments["queue"]:
                continue
            if oldest is not None and stamp(n, line) < oldest:
                continue
            out.append((n, line))
        return out

    def max_age(asked: int | None) -> int | None:
        return None if (root / ".ignore_max_age").exists() else asked

    def stamp(n: int, line: dict[str, Any]) -> float:
        if "timestamp" in line:
            return datetime.fromisoformat(line["timestamp"].replace("Z", "+00:00")).timestamp()
        return state.stamps.setdefault(n, time.time())

    def cursor(n: int, replay: bool) -> str | None:
        return f"c-{n}" if replay else None

    def position(given: str | None) -> int | None:
        """The line number a cursor stands for; None when it is not one of ours."""
        match = re.fullmatch(r"c-(\d+)", given or "")
        return int(match.group(1)) if match else None

    def occurrence(n: int, line: dict[str, Any], replay: bool, with_cursor: bool = True) -> dict[str, Any]:
        occ = {
            "eventId": line.get("eventId") or f"evt-{n}",
            "name": line["name"],
            "timestamp": _iso(stamp(n, line)),
            "data": line.get("data") or {},
        }
        if with_cursor:
            occ["cursor"] = cursor(n, replay)
        return occ

    def record(ctx: ServerRequestContext[Any, Any]) -> None:
        entry = {"method": ctx.method, "params": dict(ctx.params or {}), "t": time.time()}
        headers = getattr(ctx.request, "headers", None)
        if headers is not None and headers.get("x-replica"):
            entry["replica"] = headers.get("x-replica")  # which replica asked (HTTP)
        for header in ("authorization", "x-user"):  # whose session asked (HTTP)
            if headers is not None and headers.get(header):
                entry[header] = headers.get(header)
        _append_json(root, ".log", entry)

    async def notify(ctx: ServerRequestContext[Any, Any], method: str, params: dict[str, Any] | None) -> None:
        """Send a notification on the request's own stream (``related_request_id``)."""
        note = cast(Any, _Notification(method=method, params=params))
        await ctx.session.send_notification(note, related_request_id=ctx.request_id)

    # -- events/list --------------------------------------------------------------------------

    async def list_events(ctx: ServerRequestContext[Any, Any], params: ListParams) -> HandlerResult:
        record(ctx)
        listed = [{k: v for k, v in d.items() if not k.startswith("x-")} for d in types()]
        size = _int_knob(root, ".page_size", None)
        result: dict[str, Any] = {"resultType": "complete"}
        if size is None:
            result["events"] = listed
            return result
        start = int(params.cursor or 0)
        result["events"] = listed[start : start + size]
        if start + size < len(listed):
            result["nextCursor"] = str(start + size)
        return result

    # -- events/poll --------------------------------------------------------------------------

    async def poll(ctx: ServerRequestContext[Any, Any], params: PollParams) -> HandlerResult:
        record(ctx)
        kind = descriptor(params.name, "poll")
        replay = kind.get("x-replay", True) is not False
        if _take(root, ".list_changed"):
            await notify(ctx, "notifications/events/list_changed", None)
        log_ = events()
        last = end(log_)
        result: dict[str, Any] = {
            "resultType": "complete",
            "events": [],
            "truncated": False,
            "hasMore": False,
            "nextPollMs": _int_knob(root, ".next_poll_ms", 1000),
        }
        if not replay:
            key = f"{params.name} {_canonical(params.arguments)}"
            after = state.cursorless.get(key)
            state.cursorless[key] = last
            if after is not None:
                found = matching(log_, params.name, params.arguments, after, max_age(params.maxAgeMs))
                result["events"] = [occurrence(n, line, False, with_cursor=False) for n, line in found]
            if key not in state.cursorless_polled:
                state.cursorless_polled.add(key)
                result["cursor"] = None
            return result
        after = position(params.cursor)
        if _take(root, ".truncate") or (params.cursor is not None and after is None):
            return {**result, "cursor": cursor(last, True), "truncated": True}
        if after is None:  # from now
            return {**result, "cursor": cursor(last, True)}
        limit = cast(int, _int_knob(root, ".max_events", 50))
        if params.maxEvents is not None:
            limit = min(limit, params.maxEvents)
        found = matching(log_, params.name, params.arguments, after, max_age(params.maxAgeMs))
        page = found[:limit]
        result["events"] = [occurrence(n, line, True, with_cursor=False) for n, line in page]
        if len(found) > limit:
            result["hasMore"] = True
            result["cursor"] = cursor(page[-1][0] if page else after, True)
        else:
            result["cursor"] = cursor(last, True)
        return result

    # -- events/stream ------------------------------------------------------------------------

    async def stream(ctx: ServerRequestContext[Any, Any], params: StreamParams) -> HandlerResult:
        record(ctx)
        kind = descriptor(params.name, "push")
        replay = kind.get("x-replay", True) is not False
        meta = {SUBSCRIPTION_ID: ctx.request_id}
        state.streams[params.name] = opened = state.streams.get(params.name, 0) + 1
        silent_after = _int_knob(root, ".silent_after", None) if opened == 1 else None
        log_ = events()
        given = position(params.cursor) if replay else None
        truncated = params.cursor is not None and replay and given is None
        at = end(log_) if given is None else given
        await notify(
            ctx,
            "notifications/events/active",
            {"cursor": cursor(at, replay), "truncated": truncated, "_meta": meta},
        )
        age = max_age(params.maxAgeMs) if given is not None else None
        heartbeats = 0
        last_beat = time.monotonic()
        while True:
            if _take(root, ".terminate"):
                error = {
                    "code": FORBIDDEN,
                    "message": "Forbidden",
                    "data": {"reason": "terminated by the fixture"},
                }
                await notify(ctx, "notifications/events/terminated", {"error": error, "_meta": meta})
                return {"resultType": "complete", "_meta": meta}
            log_ = events()
            if _take(root, ".truncate"):
                at = end(log_)
                await notify(
                    ctx,
                    "notifications/events/active",
                    {"cursor": cursor(at, replay), "truncated": True, "_meta": meta},
                )
            for n, line in matching(log_, params.name, params.arguments, at, age):
                await notify(
                    ctx, "notifications/events/event", {**occurrence(n, line, replay), "_meta": meta}
                )
            at = max(at, end(log_))
            age = None
            beat_ms = cast(int, _int_knob(root, ".heartbeat_ms", 500))
            if time.monotonic() - last_beat >= beat_ms / 1000:
                await notify(
                    ctx, "notifications/events/heartbeat", {"cursor": cursor(at, replay), "_meta": meta}
                )
                last_beat = time.monotonic()
                heartbeats += 1
                if silent_after is not None and heartbeats >= silent_after:
                    await asyncio.Event().wait()  # silent and open until cancelled
            await asyncio.sleep(TICK)

    # -- events/subscribe, events/unsubscribe --------------------------------------------------

    def check_url(url: str) -> None:
        parts = urlsplit(url)
        loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
        if parts.scheme != "https" and not (parts.scheme == "http" and loopback):
            raise MCPError(INVALID_PARAMS, "the delivery url must be https")

    async def post(
        http: httpx2.AsyncClient, sub: _Subscription, webhook_id: str, payload: dict[str, Any]
    ) -> httpx2.Response | None:
        """POST one signed delivery, retried; the final response (None if never connected)."""
        body = json.dumps(payload, separators=(",", ":")).encode()
        answer: httpx2.Response | None = None
        for attempt in range(10):
            if attempt:
                await asyncio.sleep(0.2)
            timestamp = str(int(time.time()))
            key = b"not-the-subscription-key-at-all" if (root / ".bad_signature").exists() else sub.key
            headers = {
                "content-type": "application/json",
                "webhook-id": webhook_id,
                "webhook-timestamp": timestamp,
                "webhook-signature": sign(key, webhook_id, timestamp, body),
                "x-mcp-subscription-id": sub.id,
            }
            try:
                answer = await http.post(sub.url, content=body, headers=headers)
            except httpx2.HTTPError:
                _append_json(
                    root, ".deliveries", {"url": sub.url, "webhook-id": webhook_id, "status": "error"}
                )
                continue
            _append_json(
                root, ".deliveries", {"url": sub.url, "webhook-id": webhook_id, "status": answer.status_code}
            )
            if answer.status_code not in (425, 429) and answer.status_code < 500:
                return answer
        return answer

    async def deliver(sub: _Subscription) -> None:
        """Deliver the subscription's new events until it lapses or is removed."""
        async with httpx2.AsyncClient(timeout=5) as http:
            while time.time() < sub.expires:
                log_ = events()
                if _take(root, ".truncate"):
                    sub.position = end(log_)
                    gap = {"type": "gap", "cursor": cursor(sub.position, sub.replay)}
                    await post(http, sub, f"msg_gap_{secrets.token_hex(8)}", gap)
                for n, line in matching(log_, sub.name, sub.arguments, sub.position):
                    if time.time() >= sub.expires:
                        break
                    occ = occurrence(n, line, sub.replay)
                    for _ in range(2 if (root / ".redeliver").exists() else 1):
                        answer = await post(http, sub, occ["eventId"], occ)
                        if answer is not None and answer.status_code == 410:
                            drop(sub)
                            return
                    sub.position = n
                else:
                    sub.position = max(sub.position, end(log_))
                await asyncio.sleep(TICK)
        drop(sub)

    def drop(sub: _Subscription) -> None:
        key = (sub.url, sub.name, _canonical(sub.arguments))
        if state.subscriptions.get(key) is sub:
            del state.subscriptions[key]

    async def verify(url: str, sub: _Subscription) -> None:
        challenge = secrets.token_urlsafe(16)
        async with httpx2.AsyncClient(timeout=5) as http:
            answer = await post(
                http,
                sub,
                f"msg_verification_{secrets.token_hex(8)}",
                {"type": "verification", "challenge": challenge},
            )
        try:
            echoed = answer is not None and answer.is_success and answer.json().get("challenge") == challenge
        except ValueError:
            echoed = False
        if not echoed:
            raise MCPError(CALLBACK_ENDPOINT_ERROR, "CallbackEndpointError", {"reason": "challenge_failed"})
        state.verified.add(url)

    async def subscribe(ctx: ServerRequestContext[Any, Any], params: SubscribeParams) -> HandlerResult:
        record(ctx)
        if params.delivery.mode != "webhook":
            raise MCPError(
                UNSUPPORTED, "Unsupported", {"feature": "deliveryMode", "value": params.delivery.mode}
            )
        kind = descriptor(params.name, "webhook")
        replay = kind.get("x-replay", True) is not False
        check_url(params.delivery.url)
        key = _decode_secret(params.delivery.secret or "")
        arguments = params.arguments or {}
        index = (params.delivery.url, params.name, _canonical(arguments))
        ttl = cast(int, _int_knob(root, ".ttl_ms", 2500))
        if params.ttlMs is not None:
            ttl = min(ttl, params.ttlMs)
        expires = time.time() + ttl / 1000
        sub_id = "sub-" + hashlib.sha256("\n".join(index).encode()).hexdigest()[:16]
        live = state.subscriptions.get(index)
        if live is not None and time.time() < live.expires:
            live.key, live.expires = key, expires  # a refresh
            return {
                "resultType": "complete",
                "id": live.id,
                "refreshBefore": _iso(expires),
                "cursor": cursor(live.position, replay),
                "truncated": False,
            }
        given = position(params.cursor) if replay else None
        start = end(events()) if given is None else given
        sub = _Subscription(sub_id, params.delivery.url, params.name, arguments, key, replay, start, expires)
        if params.delivery.url not in state.verified:
            await verify(params.delivery.url, sub)
        state.subscriptions[index] = sub
        sub.task = asyncio.get_running_loop().create_task(deliver(sub))
        return {
            "resultType": "complete",
            "id": sub_id,
            "refreshBefore": _iso(expires),
            "cursor": cursor(start, replay),
            "truncated": params.cursor is not None and replay and given is None,
        }

    async def unsubscribe(ctx: ServerRequestContext[Any, Any], params: UnsubscribeParams) -> HandlerResult:
        record(ctx)
        index = (params.delivery.url, params.name, _canonical(params.arguments))
        sub = state.subscriptions.pop(index, None)
        if sub is None:
            raise MCPError(NOT_FOUND, "NotFound", {"kind": "subscription"})
        if sub.task is not None:
            sub.task.cancel()
        return {"resultType": "complete"}

    class Events(Extension):
        identifier = EXTENSION

        def settings(self) -> dict[str, Any]:
            return {"listChanged": True}

        def methods(self) -> list[MethodBinding]:
            return [
                MethodBinding("events/list", ListParams, list_events),
                MethodBinding("events/poll", PollParams, poll),
                MethodBinding("events/stream", StreamParams, stream),
                MethodBinding("events/subscribe", SubscribeParams, subscribe),
                MethodBinding("events/unsubscribe", UnsubscribeParams, unsubscribe),
            ]

    srv: MCPServer = MCPServer(name, extensions=[Events()])
    lowlevel = srv._lowlevel_server
    sdk_listen = lowlevel.get_request_handler("subscriptions/listen")
    assert sdk_listen is not None

    async def listen(ctx: ServerRequestContext[Any, Any], params: ListenParams) -> HandlerResult:
        """``eventsListChanged`` served here (the SDK's listen knows only the core filters)."""
        if not params.notifications.get("eventsListChanged"):
            sdk_params = SubscriptionsListenRequestParams.model_validate(params.model_dump(by_alias=True))
            return await sdk_listen.handler(ctx, sdk_params)
        record(ctx)
        meta = {SUBSCRIPTION_ID: ctx.request_id}
        await notify(
            ctx,
            "notifications/subscriptions/acknowledged",
            {"notifications": {"eventsListChanged": True}, "_meta": meta},
        )
        while True:
            await asyncio.sleep(TICK)
            if _take(root, ".list_changed_listen"):
                await notify(ctx, "notifications/events/list_changed", {"_meta": meta})

    lowlevel.add_request_handler("subscriptions/listen", ListenParams, listen)
    if (root / ".no-extension").exists():
        # The methods stay registered; only the advertisement goes.
        del srv._lowlevel_server.extensions[EXTENSION]

    @srv.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @srv.tool()
    def emit(name: str, data: dict[str, Any]) -> str:
        """Append an event to the log; return its id."""
        return append(root, name, data)

    return srv


if __name__ == "__main__":
    run_cli(build_server)
