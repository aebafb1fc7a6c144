"""The deployment's own OAuth (``oauth`` with ``flow``: a headless agent, no person signing in)
against a real authorization server on loopback (the MCP SDK's routes over
``tests/servers/authorization.py``'s ``Provider``, with its ``ClientGrant`` for the client
credentials grant) and an MCP server that takes only its tokens (``Gate``)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from mcp.server.auth.routes import create_auth_routes
from mcp.shared.auth import JWT_BEARER_GRANT_TYPE, OAuthClientInformationFull
from pydantic import AnyHttpUrl
from starlette.applications import Starlette

from langgraph_mcp import MCPAuthenticationError, MCPPool
from langgraph_mcp.config import HTTPServerConfig
from tests.conftest_servers import serve_in_loop
from tests.helpers import call, tools_by_name
from tests.servers import demo
from tests.servers._runner import bind_socket, make_uvicorn_server
from tests.servers.authorization import ClientGrant, Gate, Provider

SECRET = "s3cret-agent-value"
RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
PEM = RSA_KEY.private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
).decode()
IDP_KEY = ec.generate_private_key(ec.SECP256R1())
"""The enterprise identity provider's signing key (the authorization server trusts its public half)."""


@dataclass
class AuthorizationServer:
    provider: Provider
    grant: ClientGrant
    issuer: str
    """The issuer identifier, as its metadata renders it."""


@asynccontextmanager
async def authorization_server(token_ttl: int = 600) -> AsyncIterator[AuthorizationServer]:
    provider = Provider(token_ttl=token_ttl)
    sock = bind_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    provider.issuer = str(AnyHttpUrl(base))
    provider.idp_key = IDP_KEY.public_key()
    routes = create_auth_routes(provider, AnyHttpUrl(base), identity_assertion_enabled=True)  # type: ignore[arg-type]
    grant = ClientGrant(Starlette(routes=routes), provider)
    server = make_uvicorn_server(grant)
    serving = asyncio.ensure_future(server.serve([sock]))
    try:
        await asyncio.wait_for(server.ready.wait(), 10)
        yield AuthorizationServer(provider, grant, provider.issuer)
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving, 10)
        sock.close()


def register(
    a: AuthorizationServer, client_id: str, method: str, grant: str = "client_credentials", **extra: Any
) -> None:
    a.provider.clients[client_id] = OAuthClientInformationFull(
        client_id=client_id,
        redirect_uris=None,
        grant_types=[grant],
        token_endpoint_auth_method=method,  # type: ignore[arg-type]
        scope="read",
        **extra,
    )


@asynccontextmanager
async def protected(advertised: str) -> AsyncIterator[tuple[str, Gate]]:
    """A demo MCP server whose protected-resource metadata names ``advertised``."""
    gates: list[Gate] = []
    holder = Provider()

    def wrap(app: Any) -> Gate:
        gates.append(Gate(app, holder, advertised))
        return gates[-1]

    async with serve_in_loop(demo.build_server(counters=demo.Counters()), wrap=wrap) as url:
        yield url, gates[0]


@asynccontextmanager
async def setup(**oauth: Any) -> AsyncIterator[tuple[AuthorizationServer, str, Gate]]:
    """An authorization server with the client ``agent`` (secret, Basic), and an MCP server whose
    gate takes that authorization server's tokens."""
    async with authorization_server() as a, protected(a.issuer) as (url, gate):
        gate.provider = a.provider
        register(a, "agent", oauth.pop("method", "client_secret_basic"), client_secret=SECRET)
        yield a, url, gate


def cc(a: AuthorizationServer, **changes: Any) -> dict[str, Any]:
    return {"flow": "client_credentials", "client_id": "agent", "client_secret": SECRET,
            "issuer": a.issuer, "scopes": ["read"], **changes}  # fmt: skip


def whose(a: AuthorizationServer, text: str) -> str | None:
    return a.provider.user_of(text.removeprefix("Bearer "))


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
async def test_a_call_carries_the_deployments_client_credentials_token(protocol: str, method: str) -> None:
    async with setup(method=method) as (a, url, gate):
        oauth = cc(a, token_endpoint_auth_method=method)
        async with MCPPool({"api": {"url": url, "protocol": protocol, "oauth": oauth}}) as pool:
            tools = await tools_by_name(pool)
            first = await call(tools["header"], {"name": "authorization"})
            assert first.status == "success", first.content
            assert whose(a, str(first.content)) == "client:agent"
            assert (await call(tools["add"], {"a": 2, "b": 3})).content == "5"
            # Resources are the deployment's too: not refused as a per-user server's would be.
            await pool.list_resources("api")
    assert a.provider.grants == ["client_credentials"]  # one token, reused
    [form] = a.grant.token_requests
    assert form["scope"] == ["read"]
    assert ("client_secret" in form) == (method == "client_secret_post")
    assert len(set(gate.seen_tokens)) == 1


async def test_every_session_of_the_server_shares_one_token() -> None:
    async with setup() as (a, url, gate):
        config = {"url": url, "oauth": cc(a), "session_scope": "thread"}
        async with MCPPool({"api": config}) as pool:
            for thread in ("t1", "t2", None):
                result = await pool.connection_for("api", thread).call_tool(
                    "header", {"name": "authorization"}
                )
                assert not result.is_error, result
            assert pool.thread_sessions("api") == ["t1", "t2"]
    assert a.provider.grants == ["client_credentials"]
    # Every request of the three sessions that carried a token carried the one token.
    assert len(gate.seen_tokens) >= 3 and len(set(gate.seen_tokens)) == 1


async def test_a_token_the_server_no_longer_takes_is_replaced() -> None:
    async with setup() as (a, url, gate), MCPPool({"api": {"url": url, "oauth": cc(a)}}) as pool:
        tools = await tools_by_name(pool)
        assert (await call(tools["echo"], {"text": "one"})).content == "one"
        a.provider.access.clear()  # the token expired at the authorization server
        assert (await call(tools["echo"], {"text": "two"})).content == "two"
    assert a.provider.grants == ["client_credentials", "client_credentials"]
    assert len(set(gate.seen_tokens)) == 2


async def test_a_token_past_its_lifetime_is_not_sent_but_replaced() -> None:
    # expires_in 0: by the client's clock the token has expired at its next request.
    async with authorization_server(token_ttl=0) as a, protected(a.issuer) as (url, gate):
        gate.provider = a.provider
        register(a, "agent", "client_secret_basic", client_secret=SECRET)
        async with MCPPool({"api": {"url": url, "oauth": cc(a)}}) as pool:
            tools = await tools_by_name(pool)
            assert (await call(tools["echo"], {"text": "one"})).content == "one"
            assert (await call(tools["echo"], {"text": "two"})).content == "two"
    assert a.provider.grants == ["client_credentials", "client_credentials"]
    first, second = gate.seen_tokens
    assert first != second  # the expired token was not presented again


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_server_that_takes_nothing_without_a_token_is_connected_with_one(protocol: str) -> None:
    async with setup() as (a, url, gate):
        gate.everything = True  # the handshake and the listing need a token too
        async with MCPPool({"api": {"url": url, "protocol": protocol, "oauth": cc(a)}}) as pool:
            assert (await call((await tools_by_name(pool))["add"], {"a": 1, "b": 2})).content == "3"
    assert a.provider.grants == ["client_credentials"]


async def test_a_connect_whose_token_is_refused_says_why() -> None:
    async with setup() as (a, url, gate):
        gate.everything = True
        config = {"url": url, "oauth": cc(a, client_secret="wrong-s3cret-value")}
        async with MCPPool({"api": config}, on_connection_error="warn") as pool:
            with pytest.raises(MCPAuthenticationError) as raised:
                await pool.list_resources("api")
    assert raised.value.oauth is not None and "invalid_client" in raised.value.oauth
    assert "no OAuth token could be obtained" in str(raised.value)
    assert "wrong-s3cret-value" not in str(raised.value)


async def test_a_wrong_secret_fails_the_call_with_a_clear_error_without_the_secret(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "not-the-s3cret-value"
    async with (
        setup() as (a, url, gate),
        MCPPool({"api": {"url": url, "oauth": cc(a, client_secret=wrong)}}) as pool,
    ):
        message = await call((await tools_by_name(pool))["echo"], {"text": "x"})
    assert message.status == "error"
    text = str(message.content)
    assert "401" in text and "invalid_client" in text, text
    assert wrong not in text and SECRET not in text
    assert wrong not in caplog.text
    assert a.provider.grants == [] and a.provider.refused == 1
    assert gate.seen_tokens == []


async def test_the_secret_is_never_sent_to_another_authorization_server() -> None:
    async with authorization_server() as a, authorization_server() as other:
        register(a, "agent", "client_secret_basic", client_secret=SECRET)
        register(other, "agent", "client_secret_basic", client_secret=SECRET)
        # The MCP server now names `other` as its authorization server.
        async with (
            protected(other.issuer) as (url, _),
            MCPPool({"api": {"url": url, "oauth": cc(a)}}) as pool,
        ):
            message = await call((await tools_by_name(pool))["echo"], {"text": "x"})
    assert message.status == "error"
    assert "issuer" in str(message.content), message.content
    assert other.grant.token_requests == [] and a.grant.token_requests == []
    assert SECRET not in str(message.content)


@pytest.mark.parametrize("source", ["inline", "file"])
async def test_private_key_jwt_signs_each_token_request(source: str, tmp_path: Path) -> None:
    async with setup() as (a, url, _):
        register(a, "signer", "private_key_jwt")
        a.provider.client_keys["signer"] = RSA_KEY.public_key()
        key: dict[str, Any] = {"private_key": PEM}
        if source == "file":
            (tmp_path / "key.pem").write_text(PEM)
            key = {"private_key_file": str(tmp_path / "key.pem")}
        oauth = {"flow": "private_key_jwt", "client_id": "signer", "issuer": a.issuer, **key}
        async with MCPPool({"api": {"url": url, "oauth": oauth}}) as pool:
            message = await call((await tools_by_name(pool))["header"], {"name": "authorization"})
    assert whose(a, str(message.content)) == "client:signer", message.content
    [form] = a.grant.token_requests
    assert "client_secret" not in form
    claims = jwt.decode(
        form["client_assertion"][0], RSA_KEY.public_key(), algorithms=["RS256"], audience=a.issuer
    )
    assert (claims["iss"], claims["sub"]) == ("signer", "signer")


async def test_a_key_the_authorization_server_does_not_know_gets_no_token() -> None:
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = other.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    async with setup() as (a, url, _):
        register(a, "signer", "private_key_jwt")
        a.provider.client_keys["signer"] = RSA_KEY.public_key()
        oauth = {"flow": "private_key_jwt", "client_id": "signer", "issuer": a.issuer, "private_key": pem}
        async with MCPPool({"api": {"url": url, "oauth": oauth}}) as pool:
            message = await call((await tools_by_name(pool))["echo"], {"text": "x"})
    assert message.status == "error" and "invalid_client" in str(message.content)
    assert "PRIVATE KEY" not in str(message.content)
    assert a.provider.grants == []


def id_jag(audience: str, resource: str, *, subject: str = "alice@corp.example") -> str:
    now = int(time.time())
    claims = {"iss": "https://idp.corp.example", "sub": subject, "aud": audience, "resource": resource,
              "client_id": "enterprise", "iat": now, "exp": now + 300, "jti": str(now)}  # fmt: skip
    return jwt.encode(claims, IDP_KEY, algorithm="ES256", headers={"typ": "oauth-id-jag+jwt"})


@pytest.mark.parametrize("source", ["callable", "file"])
async def test_an_identity_assertion_is_traded_for_a_token(source: str, tmp_path: Path) -> None:
    asked: list[tuple[str, str]] = []

    async def assertion(audience: str, resource: str) -> str:
        asked.append((audience, resource))
        return id_jag(audience, resource)

    async with setup() as (a, url, _):
        register(a, "enterprise", "client_secret_post", grant=JWT_BEARER_GRANT_TYPE, client_secret=SECRET)
        given: dict[str, Any] = {"assertion": assertion}
        if source == "file":
            (tmp_path / "id-jag").write_text(id_jag(a.issuer, url))
            given = {"assertion_file": str(tmp_path / "id-jag")}
        oauth = {"flow": "identity_assertion", "client_id": "enterprise", "client_secret": SECRET,
                 "issuer": a.issuer, "scopes": ["read"], **given}  # fmt: skip
        config = HTTPServerConfig(url=url, oauth=oauth)
        async with MCPPool({"api": config}) as pool:
            message = await call((await tools_by_name(pool))["header"], {"name": "authorization"})
    assert whose(a, str(message.content)) == "alice@corp.example", message.content
    assert a.provider.grants == ["jwt-bearer"]
    if source == "callable":
        assert asked == [(a.issuer, url)]


async def test_a_refused_identity_assertion_fails_the_call() -> None:
    async def assertion(audience: str, resource: str) -> str:
        return id_jag("https://another-issuer.example", resource)

    async with setup() as (a, url, gate):
        register(a, "enterprise", "client_secret_post", grant=JWT_BEARER_GRANT_TYPE, client_secret=SECRET)
        oauth = {"flow": "identity_assertion", "client_id": "enterprise", "client_secret": SECRET,
                 "issuer": a.issuer, "assertion": assertion}  # fmt: skip
        async with MCPPool({"api": {"url": url, "oauth": oauth}}) as pool:
            message = await call((await tools_by_name(pool))["echo"], {"text": "x"})
    assert message.status == "error" and "invalid_grant" in str(message.content), message.content
    assert SECRET not in str(message.content)
    assert a.provider.grants == [] and gate.seen_tokens == []


async def test_an_identity_assertion_is_never_traded_at_a_plain_http_token_endpoint() -> None:
    from mcp.client.auth import OAuthFlowError

    from langgraph_mcp._oauth.deployauth import deployment_auth

    async def assertion(audience: str, resource: str) -> str:
        return "jag"

    oauth = {"flow": "identity_assertion", "client_id": "enterprise", "client_secret": SECRET,
             "issuer": "https://issuer.example", "assertion": assertion}  # fmt: skip
    provider: Any = deployment_auth(HTTPServerConfig(url="https://mcp.example/mcp", oauth=oauth))
    provider._token_endpoint = "http://issuer.example/token"  # as if discovery had named it
    with pytest.raises(OAuthFlowError, match="https"):
        provider._build_token_request("read", "jag")
    provider._token_endpoint = "https://issuer.example/token"
    assert provider._build_token_request("read", "jag").url.scheme == "https"
