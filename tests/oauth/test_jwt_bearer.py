"""Workload identity (RFC 7523 JWT-bearer grant) against a real MCP server behind OAuth on
loopback: protected-resource metadata, an authorization server that verifies the workload's JWT
with its platform's public key, and bearer tokens on every MCP request."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from base64 import urlsafe_b64encode
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from mcp.client.auth import OAuthFlowError, TokenStorage
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from langgraph_mcp import MCPPool
from langgraph_mcp.auth import JWT_BEARER_GRANT, DPoPAuth, JWTBearerOAuthProvider
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
    dpop: bool = False
    """Bind tokens to the DPoP key of the token request's proof (token_type DPoP), and take them
    only with a proof of that key; otherwise plain bearer tokens."""
    presented: list[str] = field(default_factory=list)
    """The Authorization headers the MCP server was given."""
    bound: dict[str, str] = field(default_factory=dict)
    """Token -> the thumbprint of the key it is bound to."""
    token_headers: dict[str, str] = field(default_factory=dict)

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
            self.token_headers = {k.decode(): v.decode() for k, v in scope["headers"]}
            await self._token(path.removesuffix("/token"), receive, send)
        elif self._authorized(scope):
            await self.app(scope, receive, send)
        else:
            challenge = f'Bearer resource_metadata="{self.base}/.well-known/oauth-protected-resource/mcp"'
            await _json(send, 401, {"error": "invalid_token"}, [(b"www-authenticate", challenge.encode())])

    def _authorized(self, scope: Any) -> bool:
        headers = dict(scope["headers"])
        given = headers.get(b"authorization", b"").decode()
        if given:
            self.presented.append(given)
        if not self.dpop:
            return given.removeprefix("Bearer ") in self.issued
        token = given.removeprefix("DPoP ")
        if not given.startswith("DPoP ") or token not in self.issued:
            return False
        proof = _verified_proof(headers.get(b"dpop", b"").decode())
        ath = urlsafe_b64encode(hashlib.sha256(token.encode()).digest()).rstrip(b"=").decode()
        return proof is not None and proof[1].get("ath") == ath and proof[0] == self.bound[token]

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
        if self.dpop:
            proof = _verified_proof(self.token_headers.get("dpop", ""))
            if proof is None:
                await _json(send, 400, {"error": "invalid_dpop_proof"})
                return
            self.bound[token] = proof[0]
            await _json(send, 200, {"access_token": token, "token_type": "DPoP", "expires_in": 3600})
            return
        await _json(send, 200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600})


def _verified_proof(proof: str) -> tuple[str, dict[str, Any]] | None:
    """A DPoP proof checked as a server checks it: its key's thumbprint and its claims."""
    try:
        header = jwt.get_unverified_header(proof)
        if header.get("typ") != "dpop+jwt" or "d" in header["jwk"]:
            return None
        key = jwt.PyJWK(header["jwk"], algorithm="ES256")
        claims = jwt.decode(proof, key, algorithms=["ES256"])
    except (jwt.InvalidTokenError, KeyError, ValueError):
        return None
    members = {k: header["jwk"][k] for k in ("crv", "kty", "x", "y")}
    canonical = json.dumps(members, separators=(",", ":"), sort_keys=True).encode()
    return urlsafe_b64encode(hashlib.sha256(canonical).digest()).rstrip(b"=").decode(), claims


async def _json(send: Any, status: int, body: Any, headers: list[tuple[bytes, bytes]] = ()) -> None:  # type: ignore[assignment]
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), *headers],
    })  # fmt: skip
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})


@asynccontextmanager
async def protected(advertised: str = "/as", dpop: bool = False) -> AsyncIterator[tuple[str, Gate]]:
    gates: list[Gate] = []

    def wrap(app: Any) -> Gate:
        gates.append(Gate(app, advertised=advertised, dpop=dpop))
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


# -- DPoP around the JWT-bearer grant: a headless workload with sender-constrained tokens -------


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_dpop_bound_tokens_go_out_with_a_fresh_proof_each_time(protocol: str) -> None:
    async with protected(dpop=True) as (url, gate):
        inner = JWTBearerOAuthProvider(url, Tokens(), "workload-client", workload_jwt(gate.base + "/as"))
        auth = DPoPAuth(inner)
        async with MCPPool({"api": {"url": url, "auth": auth, "protocol": protocol}}) as pool:
            tools = await tools_by_name(pool)
            assert (await call(tools["add"], {"a": 1, "b": 1})).content == "2"
            assert (await call(tools["echo"], {"text": "x"})).content == "x"
    [token] = gate.bound
    assert gate.bound[token] == auth.thumbprint
    assert gate.presented and all(h == f"DPoP {token}" for h in gate.presented)


async def test_a_token_not_bound_to_the_key_is_never_presented() -> None:
    async with protected(dpop=False) as (url, gate):  # this server hands out plain bearer tokens
        inner = JWTBearerOAuthProvider(url, Tokens(), "workload-client", workload_jwt(gate.base + "/as"))
        async with MCPPool(
            {"api": {"url": url, "auth": DPoPAuth(inner)}}, on_connection_error="warn"
        ) as pool:
            assert await tools_by_name(pool) == {}
    assert len(gate.token_requests) == 1
    assert gate.presented == []  # the unbound token never reached the MCP server


def test_a_proof_names_the_request_the_token_and_the_key() -> None:
    auth = DPoPAuth(
        JWTBearerOAuthProvider("http://127.0.0.1:9/mcp", Tokens(), "c", workload_jwt("https://as.test"))
    )
    proof = auth.proof("POST", "https://mcp.test/mcp?x=1#f", access_token="tok", nonce="n-1")
    checked = _verified_proof(proof)
    assert checked is not None
    thumbprint, claims = checked
    assert thumbprint == auth.thumbprint
    assert (claims["htm"], claims["htu"], claims["nonce"]) == ("POST", "https://mcp.test/mcp", "n-1")
    assert claims["ath"] == urlsafe_b64encode(hashlib.sha256(b"tok").digest()).rstrip(b"=").decode()
    assert _verified_proof(auth.proof("POST", "https://mcp.test/mcp"))[1]["jti"] != claims["jti"]  # type: ignore[index]
    with pytest.raises(ValueError, match="P-256"):
        DPoPAuth(auth.provider, key=ec.generate_private_key(ec.SECP384R1()))


class _OneTokenFlow:
    """A provider stand-in: one token request to ``token_endpoint``, then the request itself."""

    def __init__(self, token_endpoint: str) -> None:
        self.token_endpoint = token_endpoint
        self.context = None  # DPoPAuth tells token requests by the request, not the metadata

    async def async_auth_flow(self, request: httpx2.Request) -> Any:
        answer = yield httpx2.Request("POST", self.token_endpoint, data={"grant_type": "client_credentials"})
        body = json.loads(await answer.aread())
        request.headers["Authorization"] = f"Bearer {body['access_token']}"
        yield request


@pytest.mark.parametrize("endpoint", ["https://as.test/token", "https://as.test/token?tenant=a"])
async def test_every_token_request_has_a_proof_and_an_unbound_answer_is_refused(endpoint: str) -> None:
    auth = DPoPAuth(_OneTokenFlow(endpoint))  # type: ignore[arg-type]
    flow = auth.async_auth_flow(httpx2.Request("POST", "https://mcp.test/mcp", content=b"{}"))
    token_request = await flow.__anext__()
    assert _verified_proof(token_request.headers["DPoP"]) is not None
    answer = httpx2.Response(200, json={"access_token": "t", "token_type": "Bearer"}, request=token_request)
    with pytest.raises(OAuthFlowError, match="not one bound to the DPoP key"):
        await flow.asend(answer)
