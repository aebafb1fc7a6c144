"""Webhook deliveries of MCP events: the secret, the signature check, and a receiver.

A webhook subscription (``events/subscribe``) gives the server a URL and a secret
(``whsec_`` + base64 of random bytes); the server POSTs each event there as a Standard Webhooks
delivery: ``webhook-id`` (the event id), ``webhook-timestamp`` (Unix seconds) and
``webhook-signature: v1,<base64 HMAC-SHA256(key, id + "." + timestamp + "." + body)>``, the key
being the secret's bytes. :func:`check_delivery` is the one check of a delivery: a signature
that does not verify under the subscription's secret, or a timestamp more than
:data:`TOLERANCE` seconds from now, is refused before the body is read.

Hand-written on purpose: it is ten lines of the standard library (``hmac``, ``hashlib``,
``base64``), and the one maintained package for it would add its own HTTP client and date
libraries to every install.

:class:`WebhookReceiver` is an ASGI app (mount it where the server can reach it, behind
https): one path per subscription, named by a digest of the subscription (server, type and
arguments), so a renewed subscription keeps its URL. It answers the server's ``verification``
challenge, refuses what does not verify (401), answers 2xx before the event is handled, and
hands each subscription its deliveries in the order received; a full queue, or a path no
subscription takes (yet), answers 503 (the server retries later).
"""

from __future__ import annotations

import base64
import binascii
import collections
import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from langgraph_mcp._session.eventwire import MAX_EVENT_BYTES
from langgraph_mcp.errors import MCPConfigError

__all__ = [
    "TOLERANCE",
    "Delivery",
    "WebhookReceiver",
    "check_delivery",
    "new_secret",
    "sign",
    "subscription_path",
]

logger = logging.getLogger("langgraph_mcp.events")

TOLERANCE = 300
"""Seconds a delivery's ``webhook-timestamp`` may be from now (either way) and be taken."""

QUEUE = 1000
"""Deliveries held per subscription until read; more are answered 503 (retried by the server)."""

_SEEN = 10_000


def new_secret() -> str:
    """A fresh webhook secret: ``whsec_`` + base64 of 32 random bytes."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def _key(secret: str) -> bytes:
    if not secret.startswith("whsec_"):
        raise ValueError("a webhook secret starts with 'whsec_'")
    try:
        key = base64.b64decode(secret[len("whsec_") :], validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("a webhook secret is 'whsec_' and base64") from None
    if not 24 <= len(key) <= 64:
        raise ValueError("a webhook secret holds 24 to 64 bytes")
    return key


def sign(secret: str, webhook_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` value of a delivery (``v1,<base64>``)."""
    mac = hmac.new(_key(secret), f"{webhook_id}.{timestamp}.".encode() + body, hashlib.sha256)
    return "v1," + base64.b64encode(mac.digest()).decode()


@dataclass(frozen=True)
class Delivery:
    """A delivery that verified: its id, and its body (an event, or a control message:
    ``verification``, ``gap``, ``terminated``)."""

    webhook_id: str
    kind: Literal["event", "verification", "gap", "terminated"]
    body: Mapping[str, Any]


def check_delivery(
    secret: str, headers: Mapping[str, str], body: bytes, *, now: float | None = None
) -> Delivery | str:
    """The delivery, if it verifies under ``secret`` and is fresh; else why not (no secret, no
    signature and nothing of the body in the words)."""
    webhook_id = headers.get("webhook-id", "")
    stamp = headers.get("webhook-timestamp", "")
    signatures = headers.get("webhook-signature", "")
    if (
        not webhook_id
        or len(webhook_id) > 512
        or not (stamp.isascii() and stamp.isdigit())
        or len(stamp) > 12
    ):
        return "the delivery has no valid webhook-id or webhook-timestamp"
    if len(body) > MAX_EVENT_BYTES:
        return f"the delivery is over {MAX_EVENT_BYTES} bytes"
    moment = time.time() if now is None else now
    if abs(moment - int(stamp)) > TOLERANCE:
        return f"the delivery's timestamp is more than {TOLERANCE} s from now"
    expected = sign(secret, webhook_id, int(stamp), body)
    offered = [given for given in signatures.split(" ") if given.startswith("v1,") and given.isascii()]
    if not any(hmac.compare_digest(expected, given) for given in offered):
        return "the delivery's signature does not verify"
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):
        return "the delivery is not JSON"
    if not isinstance(parsed, dict):
        return "the delivery is not a JSON object"
    kind = parsed.get("type")
    if kind in ("verification", "gap", "terminated"):
        return Delivery(webhook_id, kind, parsed)
    return Delivery(webhook_id, "event", parsed)


def subscription_path(server: str, name: str, arguments: Mapping[str, Any]) -> str:
    """The receiver's path segment for a subscription: a digest of its server, type and
    arguments (canonical JSON), so the same subscription keeps its URL."""
    canonical = json.dumps([server, name, arguments], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


class _Route:
    def __init__(self, secret: str) -> None:
        self.secrets = [secret]
        self.send, self.receive = anyio.create_memory_object_stream[Delivery](QUEUE)
        self.seen: collections.OrderedDict[str, None] = collections.OrderedDict()


class WebhookReceiver:
    """An ASGI app receiving MCP events' webhook deliveries at ``<public_url>/<path>``.

    Args:
        public_url: Where the servers reach this app (``https://...``; its path prefix included),
            as they must be given it.
    """

    def __init__(self, public_url: str) -> None:
        self.public_url = public_url.rstrip("/")
        self._routes: dict[str, _Route] = {}

    def url(self, path: str) -> str:
        """The public URL of a subscription's path."""
        return f"{self.public_url}/{path}"

    def open(self, path: str, secret: str) -> MemoryObjectReceiveStream[Delivery]:
        """Take deliveries at ``path`` signed with ``secret``.

        Raises:
            MCPConfigError: deliveries at ``path`` are taken already (the same subscription is read
                twice: each reader would get some of its events).
        """
        if path in self._routes:
            raise MCPConfigError(
                None,
                "receiver",
                "this receiver already takes the deliveries of the same subscription (server, event "
                "type and arguments): one subscription reads them",
            )
        route = self._routes[path] = _Route(secret)
        return route.receive

    def close(self, path: str) -> None:
        route = self._routes.pop(path, None)
        if route is not None:
            route.send.close()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # policy: webhooks are POSTs
            return
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        response = await self._answer(request)
        await response(scope, receive, send)

    async def _answer(self, request: Request) -> Response:
        if request.method != "POST":
            return Response(status_code=405)
        path = request.url.path.rstrip("/").rpartition("/")[2]
        route = self._routes.get(path)
        if route is None:
            # Not (or not yet, after a restart) taken here: the server retries later. Never 410,
            # which tells it to give up on the subscription.
            return Response(status_code=503)
        body = await _body(request)
        if body is None:
            return Response(status_code=413)
        headers = {k.lower(): v for k, v in request.headers.items()}
        checked: Delivery | str = "no secret"
        for secret in route.secrets:
            checked = check_delivery(secret, headers, body)
            if isinstance(checked, Delivery):
                break
        if isinstance(checked, str):
            logger.warning("an MCP events webhook delivery was refused: %s", checked)
            return Response(status_code=401)
        if checked.kind == "verification":
            challenge = checked.body.get("challenge")
            return JSONResponse({"challenge": challenge if isinstance(challenge, str) else ""})
        if checked.webhook_id in route.seen:
            return Response(status_code=204)  # delivered twice: taken once
        try:
            route.send.send_nowait(checked)
        except anyio.WouldBlock:
            return Response(status_code=503)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return Response(status_code=503)
        route.seen[checked.webhook_id] = None
        if len(route.seen) > _SEEN:
            route.seen.popitem(last=False)
        return Response(status_code=204)


async def _body(request: Request) -> bytes | None:
    """The request's body, or ``None`` once it is over :data:`MAX_EVENT_BYTES` (not read on)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_EVENT_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)
