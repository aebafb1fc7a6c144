"""The per-user catalog fixture (``tests/servers/peruser.py``) behind a real OAuth resource-server
gate that guards every request: each user's token lists that user's tools, in both protocol eras,
and the user is the one the gate names, never one the client claims.

Only the MCP SDK's client and plain HTTP here (tokens minted by the ``Provider`` directly), so
these prove the fixture itself, not any client feature built on it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp.client.client import Client
from mcp.client.session import IncomingMessage
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions
from mcp.shared.auth import OAuthClientInformationFull
from mcp_types.version import LATEST_HANDSHAKE_VERSION, MODERN_PROTOCOL_VERSIONS
from pydantic import AnyHttpUrl, AnyUrl
from starlette.applications import Starlette

from tests.conftest_servers import serve_in_loop
from tests.servers import peruser
from tests.servers._runner import bind_socket, make_uvicorn_server
from tests.servers.authorization import Gate, Provider

MODERN = "2026-07-28"
ERAS = ["auto", "legacy"]  # auto negotiates 2026-07-28 with this server; legacy is 2025-11-25


@dataclass
class Fixture:
    provider: Provider
    gate: Gate
    catalog: peruser.PerUserCatalog
    url: str
    issuer: str

    def token(self, user: str) -> str:
        return self.provider._issue("app", ["read"], None, user).access_token

    @asynccontextmanager
    async def client(
        self, user: str | None, mode: str, extra: dict[str, str] | None = None, **kwargs: Any
    ) -> AsyncIterator[Client]:
        headers = {"authorization": f"Bearer {self.token(user)}"} if user is not None else {}
        async with httpx2.AsyncClient(headers={**headers, **(extra or {})}, timeout=10) as http:
            transport = streamable_http_client(self.url, http_client=http)
            async with Client(transport, mode=mode, cache=None, **kwargs) as client:
                expected = LATEST_HANDSHAKE_VERSION if mode == "legacy" else MODERN
                assert client.protocol_version == expected
                yield client


@asynccontextmanager
async def fixture(gated: bool = True) -> AsyncIterator[Fixture]:
    """The peruser server behind ``Gate(everything=True)``, and the SDK's authorization server."""
    provider = Provider(token_ttl=600)
    sock = bind_socket()
    issuer = f"http://127.0.0.1:{sock.getsockname()[1]}"
    provider.clients["app"] = OAuthClientInformationFull(
        client_id="app",
        client_secret="app-secret",
        redirect_uris=[AnyUrl(f"{issuer}/oauth/callback")],
        token_endpoint_auth_method="client_secret_post",
        grant_types=["authorization_code", "refresh_token"],
        scope="read",
    )
    gates: list[Gate] = []

    def wrap(app: Any) -> Any:
        if not gated:
            return app
        gates.append(Gate(app, provider, issuer))
        gates[-1].everything = True
        return gates[-1]

    catalog = peruser.PerUserCatalog()
    routes = create_auth_routes(
        provider,
        AnyHttpUrl(issuer),
        client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=["read"]),
    )
    authorization = make_uvicorn_server(Starlette(routes=routes))
    serving = asyncio.ensure_future(authorization.serve([sock]))
    try:
        await asyncio.wait_for(authorization.ready.wait(), 10)
        async with serve_in_loop(peruser.build_server(catalog), "http", wrap=wrap) as url:
            gate = gates[0] if gates else Gate(None, provider, issuer)
            try:
                yield Fixture(provider, gate, catalog, url, issuer)
            finally:
                authorization.should_exit = True  # both servers stop at once
    finally:
        authorization.should_exit = True
        await asyncio.wait_for(serving, 10)
        sock.close()


def names(listing: types.ListToolsResult) -> list[str]:
    return [tool.name for tool in listing.tools]


def text(result: types.CallToolResult) -> str:
    (content,) = result.content
    assert isinstance(content, types.TextContent)
    return content.text


@pytest.mark.parametrize("mode", ERAS)
async def test_each_user_lists_and_calls_their_own_tools(mode: str) -> None:
    async with fixture() as f:
        async with f.client("alice", mode) as alice, f.client("bob", mode) as bob:
            listing = await alice.list_tools()
            assert names(listing) == ["whoami", "alice_reports"]
            assert [t.description for t in listing.tools] == ["Who alice is", "Reports of alice"]
            assert all(t.input_schema == peruser.INPUT_SCHEMA for t in listing.tools)
            assert names(await bob.list_tools()) == ["whoami", "bob_admin"]

            assert text(await alice.call_tool("whoami", {})) == "user=alice"
            assert text(await bob.call_tool("bob_admin", {"q": "x"})) == "bob_admin for bob"
            refused = await alice.call_tool("bob_admin", {})
            assert refused.is_error and "bob_admin" in text(refused)
        async with f.client("carol", mode) as carol:  # a user the catalog does not name
            assert names(await carol.list_tools()) == ["whoami"]

        assert f.catalog.listed == ["alice", "bob", "carol"]
        assert f.catalog.called == [("alice", "whoami"), ("bob", "bob_admin"), ("alice", "bob_admin")]
        # Every request reached the server with a token: the handshake too, in either era.
        assert set(f.gate.users_seen) == {"alice", "bob", "carol"}
        assert len(f.gate.users_seen) == len(f.gate.seen_tokens) >= 7


async def test_untokened_handshakes_are_refused() -> None:
    async with fixture() as f, httpx2.AsyncClient(timeout=10) as http:
        accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        initialize = {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }  # fmt: skip
        discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
        modern = {**accept, "mcp-protocol-version": MODERN}
        for body, headers in [(initialize, accept), (discover, modern), (listing, modern)]:
            for extra in [{}, {"authorization": "Bearer not-a-token"}, {"x-authenticated-user": "alice"}]:
                answer = await http.post(f.url, content=json.dumps(body), headers={**headers, **extra})
                assert answer.status_code == 401, (body["method"], extra, answer.text)
                challenge = answer.headers["www-authenticate"]
                assert 'error="invalid_token"' in challenge and "resource_metadata=" in challenge
        # The challenge leads to the authorization server.
        metadata = (await http.get(challenge.split('resource_metadata="')[1].rstrip('"'))).json()
        assert metadata["authorization_servers"] == [f.issuer]
        with pytest.raises(ExceptionGroup) as raised:  # the SDK client cannot even initialize
            async with f.client(None, "legacy"):
                pass
        assert "Server returned an error response" in repr(raised.value)
        assert f.gate.seen_tokens == [] and f.catalog.listed == []


@pytest.mark.parametrize("mode", ERAS)
async def test_a_claimed_user_header_is_overwritten(mode: str) -> None:
    async with fixture() as f:
        async with f.client("alice", mode, extra={"x-authenticated-user": "bob"}) as alice:
            assert names(await alice.list_tools()) == ["whoami", "alice_reports"]
            assert text(await alice.call_tool("whoami", {})) == "user=alice"
            assert (await alice.call_tool("bob_admin", {})).is_error
        assert f.catalog.listed == ["alice"]
        assert "bob" not in f.gate.users_seen


async def test_without_the_gate_nobody_lists_anything() -> None:
    async with fixture(gated=False) as f:
        async with f.client(None, "auto", extra={"x-authenticated-user": ""}) as anonymous:
            assert names(await anonymous.list_tools()) == []
            refused = await anonymous.call_tool("whoami", {})
            assert refused.is_error and "no authenticated user" in text(refused)
        assert (f.catalog.listed, f.catalog.called) == ([""], [("", "whoami")])


async def test_a_change_is_pushed_and_seen_on_the_next_list_legacy() -> None:
    async with fixture() as f:
        pushed = asyncio.Event()

        async def handle(message: IncomingMessage) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                pushed.set()

        async with f.client("alice", "legacy", message_handler=handle) as alice:
            assert alice.server_capabilities.tools is not None
            assert alice.server_capabilities.tools.list_changed is True
            assert names(await alice.list_tools()) == ["whoami", "alice_reports"]
            f.catalog.tools["alice"] = ["whoami", "alice_reports", "alice_audit"]
            await f.catalog.changed("bob")  # not alice's session
            assert f.catalog.notified == []
            await f.catalog.changed("alice")
            await asyncio.wait_for(pushed.wait(), 5)
            assert f.catalog.notified == ["alice"]
            assert names(await alice.list_tools()) == ["whoami", "alice_reports", "alice_audit"]


async def test_a_change_is_pushed_and_seen_on_the_next_list_modern() -> None:
    async with fixture() as f:
        async with f.client("bob", "auto") as bob:
            assert bob.protocol_version in MODERN_PROTOCOL_VERSIONS
            assert names(await bob.list_tools()) == ["whoami", "bob_admin"]
            async with bob.listen(tools_list_changed=True) as events:
                del f.catalog.tools["bob"]
                await f.catalog.changed()
                event = await asyncio.wait_for(anext(aiter(events)), 5)
                assert type(event).__name__ == "ToolsListChanged"
            assert names(await bob.list_tools()) == ["whoami"]  # not in the catalog: whoami only
            f.catalog.tools["bob"] = ["bob_admin"]
            assert names(await bob.list_tools()) == ["bob_admin"]  # no notice needed to see it
            assert (await bob.call_tool("whoami", {})).is_error
        assert f.catalog.notified == []  # no 2025-11-25 session to push to
