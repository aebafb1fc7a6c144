"""The events fixture (``tests/servers/events.py``) on the wire: raw JSON-RPC over loopback
streamable HTTP, no MCP client, so these prove the fixture itself."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import secrets
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.conftest_servers import serve_in_loop
from tests.servers import events

# The fixture's own checks: the events client's tests (tests/events) exercise the same wire.
pytestmark = pytest.mark.slow

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
EXT = events.EXTENSION
SUB = events.SUBSCRIPTION_ID


def frames(text: str) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an SSE body."""
    out = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        data = [line[5:].strip() for line in block.split("\n") if line.startswith("data:")]
        if data and "".join(data):
            out.append(json.loads("".join(data)))
    return out


class Raw:
    """A raw 2026-07-28 JSON-RPC caller: every request carries the per-request envelope."""

    def __init__(self, http: httpx2.AsyncClient, url: str) -> None:
        self.http, self.url, self.next_id = http, url, 0

    def request(
        self, method: str, params: dict[str, Any], rid: Any = None
    ) -> tuple[dict[str, Any], dict[str, str]]:
        if rid is None:
            self.next_id += 1
            rid = self.next_id
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**params, "_meta": meta}}
        headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            "mcp-protocol-version": MODERN,
            "mcp-method": method,
        }
        if method == "tools/call":
            headers["mcp-name"] = params["name"]
        return body, headers

    async def send(self, method: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Every message of the answer, in order (notifications, then the response)."""
        body, headers = self.request(method, params or {})
        answer = await self.http.post(self.url, json=body, headers=headers)
        if answer.headers["content-type"].startswith("text/event-stream"):
            return frames(answer.text)
        return [answer.json()]

    async def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The result, without the SDK's ``serverInfo`` stamp in ``_meta``; ``{"error": ...}``
        when the answer is an error."""
        *_, last = await self.send(method, params)
        if "result" not in last:
            return {"error": last["error"]}
        result = dict(last["result"])
        meta = {k: v for k, v in result.pop("_meta", {}).items() if k != "io.modelcontextprotocol/serverInfo"}
        return {**result, "_meta": meta} if meta else result


@asynccontextmanager
async def running(root: Path, **knobs: Any) -> AsyncIterator[Raw]:
    for name, value in knobs.items():
        (root / f".{name}").write_text(str(value))
    async with serve_in_loop(events.build_server(root=root)) as url, httpx2.AsyncClient(timeout=10) as http:
        yield Raw(http, url)


async def test_the_extension_is_declared_unless_told_not_to_and_served_in_both_eras(tmp_path: Path) -> None:
    client_info = {"name": "t", "version": "1"}
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": client_info},
    }
    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    for hidden in (False, True):
        root = tmp_path / str(hidden)
        root.mkdir()
        if hidden:
            (root / ".no-extension").touch()
        async with running(root) as raw:
            modern = (await raw.call("server/discover"))["capabilities"].get("extensions") or {}
            assert modern.get(EXT) == (None if hidden else {"listChanged": True})
            listing = await raw.call("events/list")  # answered all the same
            assert [e["name"] for e in listing["events"]] == [
                "ticket.created",
                "build.failed",
                "cursorless.ping",
            ]

            # 2025-11-25: the SDK's capabilities of that revision have no `extensions`, so the
            # handshake never declares it; the methods are served on such a session too.
            answer = await raw.http.post(raw.url, json=initialize, headers=accept)
            (body,) = frames(answer.text)
            assert "extensions" not in body["result"]["capabilities"]
            session = {
                **accept,
                "mcp-session-id": answer.headers["mcp-session-id"],
                "mcp-protocol-version": LEGACY,
            }
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert (await raw.http.post(raw.url, json=initialized, headers=session)).status_code == 202
            poll = {"jsonrpc": "2.0", "id": 2, "method": "events/poll", "params": {"name": "build.failed"}}
            (polled,) = frames((await raw.http.post(raw.url, json=poll, headers=session)).text)
            assert polled["result"]["cursor"] == "c-0" and polled["result"]["resultType"] == "complete"
        assert [e["method"] for e in events.log(root)] == ["events/list", "events/poll"]


async def test_list_is_paged_and_hides_fixture_keys(tmp_path: Path) -> None:
    async with running(tmp_path, page_size=2) as raw:
        first = await raw.call("events/list")
        assert first["resultType"] == "complete" and first["nextCursor"] == "2"
        assert [e["name"] for e in first["events"]] == ["ticket.created", "build.failed"]
        assert first["events"][0]["delivery"] == ["poll", "push", "webhook"]
        second = await raw.call("events/list", {"cursor": first["nextCursor"]})
        assert "nextCursor" not in second
        assert second["events"] == [
            {
                "name": "cursorless.ping",
                "description": "A ping with no replay",
                "delivery": ["poll", "push", "webhook"],
                "inputSchema": {"type": "object", "properties": {}},
                "payloadSchema": {"type": "object"},
            }
        ]


async def test_poll_from_now_then_after_appends_filtered_by_arguments(tmp_path: Path) -> None:
    async with running(tmp_path, next_poll_ms=3000) as raw:
        events.append(tmp_path, "ticket.created", {"queue": "old"})
        now = await raw.call("events/poll", {"name": "ticket.created", "arguments": {}, "cursor": None})
        assert now == {
            "resultType": "complete", "events": [], "cursor": "c-1",
            "truncated": False, "hasMore": False, "nextPollMs": 3000,
        }  # fmt: skip
        events.append(tmp_path, "ticket.created", {"queue": "a", "id": "T1"})
        events.append(tmp_path, "build.failed", {"build": "b1"})
        events.append(tmp_path, "ticket.created", {"queue": "b", "id": "T2"}, event_id="given")
        polled = await raw.call("events/poll", {"name": "ticket.created", "arguments": {}, "cursor": "c-1"})
        assert [(e["eventId"], e["data"]["id"]) for e in polled["events"]] == [
            ("evt-2", "T1"),
            ("given", "T2"),
        ]
        assert polled["cursor"] == "c-4" and polled["events"][0]["timestamp"].endswith("Z")
        only_b = await raw.call(
            "events/poll", {"name": "ticket.created", "arguments": {"queue": "b"}, "cursor": "c-1"}
        )
        assert [e["eventId"] for e in only_b["events"]] == ["given"]
        emitted = await raw.call(
            "tools/call", {"name": "emit", "arguments": {"name": "ticket.created", "data": {}}}
        )
        assert emitted["content"][0]["text"] == "evt-5"
        after = await raw.call("events/poll", {"name": "ticket.created", "cursor": "c-4"})
        assert [e["eventId"] for e in after["events"]] == ["evt-5"]
        unknown = await raw.call("events/poll", {"name": "nope", "arguments": {}, "cursor": None})
        assert unknown["error"]["code"] == -32023 and unknown["error"]["data"] == {"kind": "event"}
        push_only = await raw.call(
            "events/subscribe", {"name": "build.failed", "delivery": {"url": "https://x/h"}}
        )
        assert push_only["error"]["code"] == -32026
    logged = events.log(tmp_path)
    assert [e["params"].get("cursor", "absent") for e in logged[:3]] == [None, "c-1", "c-1"]
    assert all(isinstance(e["t"], float) for e in logged)


async def test_poll_pages_with_has_more_then_truncates_and_signals_list_changes(tmp_path: Path) -> None:
    async with running(tmp_path, max_events=2) as raw:
        for i in range(5):
            events.append(tmp_path, "build.failed", {"build": f"b{i}"})
        seen, cursor, more = [], "c-0", True
        while more:
            page = await raw.call("events/poll", {"name": "build.failed", "cursor": cursor})
            seen.append(([e["data"]["build"] for e in page["events"]], page["cursor"]))
            cursor, more = page["cursor"], page["hasMore"]
        assert seen == [(["b0", "b1"], "c-2"), (["b2", "b3"], "c-4"), (["b4"], "c-5")]
        one = await raw.call("events/poll", {"name": "build.failed", "cursor": "c-0", "maxEvents": 1})
        assert (len(one["events"]), one["hasMore"], one["cursor"]) == (1, True, "c-1")

        (tmp_path / ".truncate").touch()
        cut = await raw.call("events/poll", {"name": "build.failed", "cursor": "c-1"})
        assert (cut["events"], cut["cursor"], cut["truncated"]) == ([], "c-5", True)
        assert not (tmp_path / ".truncate").exists()

        (tmp_path / ".list_changed").touch()
        notice, answer = await raw.send("events/poll", {"name": "build.failed", "cursor": "c-5"})
        assert notice == {"jsonrpc": "2.0", "method": "notifications/events/list_changed"}
        assert answer["result"]["cursor"] == "c-5" and answer["result"]["truncated"] is False
        assert len(await raw.send("events/poll", {"name": "build.failed", "cursor": "c-5"})) == 1


async def test_cursorless_polls_hand_out_null_once_then_omit_the_cursor(tmp_path: Path) -> None:
    async with running(tmp_path) as raw:
        events.append(tmp_path, "cursorless.ping", {"n": 0})
        first = await raw.call("events/poll", {"name": "cursorless.ping", "cursor": None})
        assert (first["events"], first["cursor"]) == ([], None)
        events.append(tmp_path, "cursorless.ping", {"n": 1})
        second = await raw.call("events/poll", {"name": "cursorless.ping"})
        assert "cursor" not in second and [e["data"] for e in second["events"]] == [{"n": 1}]
        assert (await raw.call("events/poll", {"name": "cursorless.ping"}))["events"] == []


async def read_stream(
    raw: Raw, params: dict[str, Any], rid: Any, until: Any, got: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """The frames of an ``events/stream`` request until ``until(frames)`` holds (then hang up)."""
    body, headers = raw.request("events/stream", params, rid)
    got = [] if got is None else got
    async with raw.http.stream("POST", raw.url, json=body, headers=headers) as answer:
        async for line in answer.aiter_lines():
            if line.startswith("data:"):
                got.append(json.loads(line[5:]))
                if until(got):
                    break
    return got


async def test_a_stream_sends_active_events_and_heartbeats_then_ends_when_terminated(tmp_path: Path) -> None:
    async with running(tmp_path, heartbeat_ms=100) as raw:
        events.append(tmp_path, "ticket.created", {"id": "T0"})

        def until(got: list[dict[str, Any]]) -> bool:
            if len(got) == 1:
                events.append(tmp_path, "ticket.created", {"id": "T1", "queue": "a"})
                events.append(tmp_path, "ticket.created", {"id": "T2", "queue": "b"})
            return len([f for f in got if f["method"].endswith("heartbeat")]) >= 2

        params = {"name": "ticket.created", "arguments": {"queue": "a"}, "cursor": None}
        got = await asyncio.wait_for(read_stream(raw, params, "s-1", until), 5)
        assert got[0] == {
            "jsonrpc": "2.0",
            "method": "notifications/events/active",
            "params": {"cursor": "c-1", "truncated": False, "_meta": {SUB: "s-1"}},
        }
        assert all(f["params"]["_meta"] == {SUB: "s-1"} for f in got)
        (event,) = [f["params"] for f in got if f["method"] == "notifications/events/event"]
        assert (event["eventId"], event["name"], event["data"], event["cursor"]) == (
            "evt-2", "ticket.created", {"id": "T1", "queue": "a"}, "c-2",
        )  # fmt: skip
        assert [f["params"]["cursor"] for f in got if f["method"].endswith("heartbeat")] == ["c-3", "c-3"]

        # From a cursor: the events after it are replayed; a terminate knob ends it with a result.
        def terminate(got: list[dict[str, Any]]) -> bool:
            if len(got) == 3:
                (tmp_path / ".terminate").touch()
            return "id" in got[-1]

        params = {"name": "ticket.created", "arguments": {}, "cursor": "c-1"}
        got = await asyncio.wait_for(read_stream(raw, params, 7, terminate), 5)
        assert [f.get("method") for f in got] == [
            "notifications/events/active",
            "notifications/events/event",
            "notifications/events/event",
            "notifications/events/terminated",
            None,
        ]
        assert got[-2]["params"]["error"]["code"] == -32024
        assert got[-1]["id"] == 7 and got[-1]["result"]["resultType"] == "complete"
        assert got[-1]["result"]["_meta"][SUB] == 7


async def test_the_first_stream_of_a_type_goes_silent_after_n_heartbeats(tmp_path: Path) -> None:
    async with running(tmp_path, heartbeat_ms=50, silent_after=2) as raw:
        params = {"name": "build.failed", "cursor": None}
        got: list[dict[str, Any]] = []
        first = asyncio.ensure_future(read_stream(raw, params, 1, lambda g: False, got))
        await asyncio.sleep(0.5)
        events.append(tmp_path, "build.failed", {"build": "unseen"})
        await asyncio.sleep(0.3)
        assert not first.done()  # still open
        first.cancel()
        kinds = [f["method"].rsplit("/", 1)[1] for f in got]
        assert kinds == ["active", "heartbeat", "heartbeat"]
        # The next stream of the type keeps going.
        enough = lambda g: sum(f["method"].endswith("heartbeat") for f in g) >= 4  # noqa: E731
        second = await asyncio.wait_for(read_stream(raw, params, 2, enough), 5)
        assert [f["method"].rsplit("/", 1)[1] for f in second] == ["active", *["heartbeat"] * 4]


class Receiver:
    """A webhook endpoint on 127.0.0.1 (a thread): it answers verification challenges (when
    ``echo``) and records every POST as ``(headers, raw body)``."""

    def __init__(self, echo: bool = True) -> None:
        self.echo = echo
        self.posts: list[tuple[dict[str, str], bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                receiver.posts.append(({k.lower(): v for k, v in self.headers.items()}, body))
                payload = json.loads(body)
                if payload.get("type") == "verification" and receiver.echo:
                    answer = json.dumps({"challenge": payload["challenge"]}).encode()
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                else:
                    self.send_response(204)
                    self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"


@contextmanager
def receiver(echo: bool = True) -> Iterator[Receiver]:
    r = Receiver(echo)
    thread = threading.Thread(target=r.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield r
    finally:
        r.server.shutdown()
        r.server.server_close()


def verifies(secret: str, headers: dict[str, str], body: bytes) -> bool:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return hmac.compare_digest(expected, headers["webhook-signature"])


async def test_a_webhook_subscription_is_verified_then_delivers_signed_events(tmp_path: Path) -> None:
    secret = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
    async with running(tmp_path) as raw:
        with receiver() as hook:
            delivery = {"mode": "webhook", "url": hook.url, "secret": secret}
            params = {
                "name": "ticket.created",
                "arguments": {"queue": "a"},
                "delivery": delivery,
                "cursor": None,
            }
            granted = await raw.call("events/subscribe", params)
            assert granted["id"].startswith("sub-") and granted["cursor"] == "c-0"
            assert granted["truncated"] is False and granted["refreshBefore"].endswith("Z")
            ((headers, body),) = hook.posts
            assert json.loads(body)["type"] == "verification" and verifies(secret, headers, body)

            events.append(tmp_path, "ticket.created", {"queue": "b"})
            events.append(tmp_path, "ticket.created", {"queue": "a", "id": "T2"})
            for _ in range(100):
                if len(hook.posts) >= 2:
                    break
                await asyncio.sleep(0.05)
            headers, body = hook.posts[1]
            assert verifies(secret, headers, body)
            assert headers["webhook-id"] == "evt-2" and headers["x-mcp-subscription-id"] == granted["id"]
            assert headers["content-type"] == "application/json"
            delivered = json.loads(body)
            assert delivered.pop("timestamp").endswith("Z")
            assert delivered == {
                "eventId": "evt-2",
                "name": "ticket.created",
                "data": {"queue": "a", "id": "T2"},
                "cursor": "c-2",
            }

            again = await raw.call("events/subscribe", params)  # a refresh: same id, no new challenge
            assert again["id"] == granted["id"] and again["refreshBefore"] >= granted["refreshBefore"]
            assert await raw.call("events/unsubscribe", {**params, "delivery": {"url": hook.url}}) == {
                "resultType": "complete"
            }
            gone = await raw.call("events/unsubscribe", {**params, "delivery": {"url": hook.url}})
            assert gone["error"]["code"] == -32023 and gone["error"]["data"] == {"kind": "subscription"}
            assert len(hook.posts) == 2
        assert [(d["webhook-id"][:17], d["status"]) for d in events.deliveries(tmp_path)] == [
            (hook.posts[0][0]["webhook-id"][:17], 200),
            ("evt-2", 204),
        ]

        bad = {**params, "delivery": {**delivery, "secret": "whsec_" + base64.b64encode(b"short").decode()}}
        assert (await raw.call("events/subscribe", bad))["error"]["code"] == -32602
        with receiver(echo=False) as mute:
            refused = await raw.call(
                "events/subscribe", {**params, "delivery": {**delivery, "url": mute.url}}
            )
            assert refused["error"]["code"] == -32027
            assert refused["error"]["data"] == {"reason": "challenge_failed"}
