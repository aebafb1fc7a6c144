"""Workload identity (RFC 7523 JWT-bearer grant) against a real MCP server behind OAuth on
loopback: protected-resource metadata, an authorization server that verifies the workload's JWT
with its platform's public key, and bearer tokens on every MCP request."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from mcp.client.auth import TokenStorage
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from langgraph_mcp import MCPPool
from langgraph_mcp.auth import JWT_BEARER_GRANT, JWTBearerOAuthProvider
from tests.conftest_servers import serve_in_loop
from tests.helpers import call, tools_by_name
from tests.servers import demo

KEY = ec.generate_private_key(ec.SECP256R1())
"""The workload platform's signing key (its public half is what the authorization server trusts)."""


def workload_jwt(audience: str, *, expires_in: int = 300) -> str:
    now = int(time.time())
    claims = {
        "iss": "https://platform.test",
        "sub": "workload-1",
        "aud": audience,
        "iat": now,
        "exp": now + expires_in,
    }
    return jwt.encode(claims, KEY, algorithm="ES256")


class Tokens(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        pass


@dataclass
class Gate:
    """ASGI wrapper in front of the MCP app: protected-resource metadata naming ``issuer`` (an
    authorization server served here under ``/as``), the server's metadata, a token endpoint
    for the JWT-bearer grant, and a bearer check on everything else."""

    app: Any
    base: str = ""
    advertised: str = "/as"
    """The path of the authorization server the resource metadata names."""
    token_requests: list[dict[str, list[str]]] = field(default_factory=list)
    issued: set[str] = field(default_factory=set)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        if path.startswith("/.well-known/oauth-protected-resource"):
            await _json(
                send,
                200,
                {"resource": f"{self.base}/mcp", "authorization_servers": [self.base + self.advertised]},
            )
        elif path.startswith("/.well-known/oauth-authorization-server/"):
            issuer = self.base + path.removeprefix("/.well-known/oauth-authorization-server")
            await _json(send, 200, {
                "issuer": issuer,
                "authorization_endpoint": f"{issuer}/authorize",
                "token_endpoint": f"{issuer}/token",
                "response_types_supported": ["code"],
                "grant_types_supported": [JWT_BEARER_GRANT],
                "token_endpoint_auth_methods_supported": ["none"],
            })  # fmt: skip
        elif path.endswith("/token"):
            await self._token(path.removesuffix("/token"), receive, send)
        elif (
            dict(scope["headers"]).get(b"authorization", b"").decode().removeprefix("Bearer ") in self.issued
        ):
            await self.app(scope, receive, send)
        else:
            challenge = f'Bearer resource_metadata="{self.base}/.well-known/oauth-protected-resource/mcp"'
            await _json(send, 401, {"error": "invalid_token"}, [(b"www-authenticate", challenge.encode())])

    async def _token(self, issuer_path: str, receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        form = parse_qs(body.decode())
        self.token_requests.append(form)
        if form.get("grant_type") != [JWT_BEARER_GRANT]:
            await _json(send, 400, {"error": "unsupported_grant_type"})
            return
        try:
            jwt.decode(
                form["assertion"][0], KEY.public_key(), algorithms=["ES256"], audience=self.base + issuer_path
            )
        except (jwt.InvalidTokenError, KeyError) as exc:
            await _json(send, 400, {"error": "invalid_grant", "error_description": type(exc).__name__})
            return
        token = uuid.uuid4().hex
        self.issued.add(token)
        await _json(send, 200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600})


def _bearer(scope: Any) -> str:
    return str(dict(scope["headers"]).get(b"authorization", b"").decode().removeprefix("Bearer "))


async def _json(send: Any, status: int, body: Any, headers: list[tuple[bytes, bytes]] = ()) -> None:  # type: ignore[assignment]
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), *headers],
    })  # fmt: skip
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})


@asynccontextmanager
async def protected(advertised: str = "/as") -> AsyncIterator[tuple[str, Gate]]:
    gates: list[Gate] = []

    def wrap(app: Any) -> Gate:
        gates.append(Gate(app, advertised=advertised))
        return gates[-1]

    async with serve_in_loop(demo.build_server(counters=demo.Counters()), wrap=wrap) as url:
        gates[0].base = url.removesuffix("/mcp")
        yield url, gates[0]


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_workload_jwt_is_traded_for_a_token_and_the_calls_carry_it(protocol: str) -> None:
    async with protected() as (url, gate):
        issuer = gate.base + "/as"
        auth = JWTBearerOAuthProvider(url, Tokens(), "workload-client", workload_jwt(issuer))
        async with MCPPool({"api": {"url": url, "auth": auth, "protocol": protocol}}) as pool:
            message = await call((await tools_by_name(pool))["add"], {"a": 2, "b": 3})
    assert message.content == "5"
    [request] = gate.token_requests
    assert request["grant_type"] == [JWT_BEARER_GRANT]
    assert request["client_id"] == ["workload-client"]
    assert "client_secret" not in request


async def test_an_assertion_made_per_request_is_made_for_the_issuer() -> None:
    asked: list[str] = []

    async def assertion(audience: str) -> str:
        asked.append(audience)
        return workload_jwt(audience)

    async with protected() as (url, gate):
        issuer = gate.base + "/as"
        auth = JWTBearerOAuthProvider(url, Tokens(), "workload-client", assertion, issuer=issuer)
        async with MCPPool({"api": {"url": url, "auth": auth}}) as pool:
            assert (await call((await tools_by_name(pool))["echo"], {"text": "hi"})).content == "hi"
    assert asked == [issuer]


async def test_the_assertion_is_never_sent_to_another_authorization_server() -> None:
    async with protected(advertised="/elsewhere") as (url, gate):
        auth = JWTBearerOAuthProvider(url, Tokens(), "workload-client", workload_jwt(gate.base + "/as"))
        async with MCPPool({"api": {"url": url, "auth": auth}}, on_connection_error="warn") as pool:
            assert await tools_by_name(pool) == {}
    assert gate.token_requests == []  # the workload's identity never left for /elsewhere


async def test_a_refused_assertion_is_not_retried_with_another_grant() -> None:
    async with protected() as (url, gate):
        expired = workload_jwt(gate.base + "/as", expires_in=-60)
        auth = JWTBearerOAuthProvider(url, Tokens(), "workload-client", expired)
        async with MCPPool({"api": {"url": url, "auth": auth}}, on_connection_error="warn") as pool:
            assert await tools_by_name(pool) == {}
    assert [r["grant_type"] for r in gate.token_requests] == [[JWT_BEARER_GRANT]]


def test_a_provider_that_cannot_tell_where_its_assertion_may_go_is_refused() -> None:
    url = "http://127.0.0.1:9/mcp"
    with pytest.raises(ValueError, match="not a compact JWT"):
        JWTBearerOAuthProvider(url, Tokens(), "c", "not-a-jwt")
    with pytest.raises(ValueError, match="does not name the issuer"):
        JWTBearerOAuthProvider(
            url, Tokens(), "c", workload_jwt("https://as.test"), issuer="https://other.test"
        )

    async def assertion(audience: str) -> str:
        return workload_jwt(audience)

    with pytest.raises(ValueError, match="needs issuer"):
        JWTBearerOAuthProvider(url, Tokens(), "c", assertion)
    assert "as.test" in repr(JWTBearerOAuthProvider(url, Tokens(), "c", workload_jwt("https://as.test")))
