"""Webhook deliveries of MCP events: the Standard Webhooks signature, freshness, the receiver's
answers (challenge, refusal, duplicate, full queue), and what an event must be to be given."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any

import anyio
import httpx2 as httpx
import pytest

from langgraph_mcp._events.webhooks import QUEUE, Delivery, WebhookReceiver, subscription_path
from langgraph_mcp._session.eventwire import (
    MAX_EVENT_BYTES,
    MAX_EVENT_DEPTH,
    EventType,
    occurrence_or_refusal,
)
from langgraph_mcp.errors import MCPConfigError
from langgraph_mcp.events import check_delivery, new_secret, sign


def delivery(secret: str, body: dict[str, Any], *, webhook_id: str = "evt-1", at: float | None = None) -> Any:
    raw = json.dumps(body).encode()
    stamp = int(time.time() if at is None else at)
    headers = {
        "webhook-id": webhook_id,
        "webhook-timestamp": str(stamp),
        "webhook-signature": sign(secret, webhook_id, stamp, raw),
        "content-type": "application/json",
    }
    return headers, raw


EVENT = {"eventId": "evt-1", "name": "ticket.created", "timestamp": "2026-12-05T10:00:00Z", "data": {"n": 1}}


def test_the_signature_is_standard_webhooks() -> None:
    """Computed by hand from the scheme: HMAC-SHA256 over ``id.timestamp.body`` keyed by the
    secret's bytes, base64, ``v1,`` first."""
    secret = new_secret()
    key = base64.b64decode(secret.removeprefix("whsec_"))
    assert secret.startswith("whsec_") and len(key) == 32
    mac = hmac.new(key, b"msg_1.1700000000." + b'{"a":1}', hashlib.sha256).digest()
    assert sign(secret, "msg_1", 1700000000, b'{"a":1}') == "v1," + base64.b64encode(mac).decode()


def test_a_delivery_is_taken_only_signed_fresh_and_whole() -> None:
    secret = new_secret()
    headers, body = delivery(secret, EVENT)
    taken = check_delivery(secret, headers, body)
    assert isinstance(taken, Delivery) and taken.kind == "event" and taken.body["eventId"] == "evt-1"
    # another secret, a changed body, an old or future timestamp, missing headers: refused
    assert "does not verify" in str(check_delivery(new_secret(), headers, body))
    assert "does not verify" in str(check_delivery(secret, headers, body.replace(b"1}", b"2}")))
    old_headers, old_body = delivery(secret, EVENT, at=time.time() - 301)
    assert "timestamp" in str(check_delivery(secret, old_headers, old_body))
    future_headers, future_body = delivery(secret, EVENT, at=time.time() + 301)
    assert "timestamp" in str(check_delivery(secret, future_headers, future_body))
    assert "webhook-id" in str(check_delivery(secret, {**headers, "webhook-id": ""}, body))
    # one of several signatures (a rotated secret) verifying is enough
    rotated = {**headers, "webhook-signature": f"v1,AAAA {headers['webhook-signature']}"}
    assert isinstance(check_delivery(secret, rotated, body), Delivery)
    # the reason never holds the secret or the signature
    refused = str(check_delivery(new_secret(), headers, body))
    assert secret not in refused and headers["webhook-signature"] not in refused


def test_a_secret_that_is_not_one_is_refused() -> None:
    for bad in ("whsec_short", "nothing", "whsec_" + base64.b64encode(b"x" * 65).decode()):
        with pytest.raises(ValueError, match="webhook secret"):
            sign(bad, "i", 1, b"")


def test_events_too_large_too_deep_or_not_the_shape_are_refused() -> None:
    assert occurrence_or_refusal(EVENT).event_id == "evt-1"  # type: ignore[union-attr]
    big = {**EVENT, "data": {"text": "x" * MAX_EVENT_BYTES}}
    assert "bytes long" in str(occurrence_or_refusal(big))
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(MAX_EVENT_DEPTH + 1):
        node["d"] = {}
        node = node["d"]
    assert "deeper" in str(occurrence_or_refusal({**EVENT, "data": deep}))
    assert "not an event" in str(occurrence_or_refusal({**EVENT, "data": [1, 2]}))
    assert "not an event" in str(occurrence_or_refusal({**EVENT, "eventId": ""}))
    refusal = str(occurrence_or_refusal({**EVENT, "data": {"secret": "hunter2" * 50_000}}))
    assert "hunter2" not in refusal


def test_an_event_type_keeps_the_modes_it_knows() -> None:
    kind = EventType.model_validate({"name": "a", "delivery": ["webhook", "carrier-pigeon", "poll"]})
    assert kind.delivery == ("webhook", "poll")
    with pytest.raises(ValueError):
        EventType.model_validate({"name": "a", "delivery": ["carrier-pigeon"]})


async def test_the_receiver_answers_the_challenge_refuses_forgeries_and_takes_each_id_once() -> None:
    receiver = WebhookReceiver("https://hooks.example/mcp")
    path = subscription_path("tickets", "ticket.created", {"queue": "q"})
    assert path == subscription_path("tickets", "ticket.created", {"queue": "q"})  # stable
    assert path != subscription_path("tickets", "ticket.created", {"queue": "r"})
    secret = new_secret()
    deliveries = receiver.open(path, secret)
    transport = httpx.ASGITransport(app=receiver)
    async with httpx.AsyncClient(transport=transport, base_url="https://hooks.example") as client:
        url = f"/mcp/{path}"
        headers, body = delivery(secret, {"type": "verification", "challenge": "c-123"}, webhook_id="msg_v")
        answer = await client.post(url, content=body, headers=headers)
        assert answer.status_code == 200 and answer.json() == {"challenge": "c-123"}
        headers, body = delivery(new_secret(), EVENT)
        assert (await client.post(url, content=body, headers=headers)).status_code == 401
        headers, body = delivery(secret, EVENT)
        assert (await client.post(url, content=body, headers=headers)).status_code == 204
        assert (await client.post(url, content=body, headers=headers)).status_code == 204  # again
        # a path no subscription takes (yet): the server retries later (410 would end it)
        assert (await client.post("/mcp/unknown", content=body, headers=headers)).status_code == 503
        # headers no sender of good faith writes are refused, never a server error
        odd: dict[str, Any] = {**headers, "webhook-timestamp": "\u00b2".encode()}
        assert (await client.post(url, content=body, headers=odd)).status_code == 401
        odd = {**headers, "webhook-signature": "v1,\u00e9t\u00e9".encode()}
        assert (await client.post(url, content=body, headers=odd)).status_code == 401
        too_big = b"x" * (MAX_EVENT_BYTES + 1)
        assert (await client.post(url, content=too_big, headers=headers)).status_code == 413
        taken = deliveries.receive_nowait()
        assert taken.body["eventId"] == "evt-1"
        with pytest.raises(anyio.WouldBlock):  # nothing more was taken
            deliveries.receive_nowait()
        # a full queue answers 503 (the server retries), never drops silently
        for n in range(QUEUE):
            headers, body = delivery(secret, {**EVENT, "eventId": f"e{n}"}, webhook_id=f"e{n}")
            assert (await client.post(url, content=body, headers=headers)).status_code == 204
        headers, body = delivery(secret, {**EVENT, "eventId": "over"}, webhook_id="over")
        assert (await client.post(url, content=body, headers=headers)).status_code == 503
    with pytest.raises(MCPConfigError, match="already takes the deliveries of the same subscription"):
        receiver.open(path, new_secret())  # one reader per subscription: two would split its events
    receiver.close(path)
    deliveries.close()


async def test_a_websocket_to_the_receiver_is_closed_at_once() -> None:
    receiver = WebhookReceiver("https://hooks.example/mcp")
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "websocket", "path": "/mcp/x", "headers": []}
    with anyio.fail_after(5):
        await receiver(scope, receive, send)
    assert sent == [{"type": "websocket.close", "code": 1008}]
