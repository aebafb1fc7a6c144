"""A real OAuth authorization server and a bearer-protected MCP endpoint, for per-user OAuth
tests (served on loopback by the tests, in the test's event loop).

The authorization server is the MCP SDK's (``create_auth_routes``) over :class:`Provider`, an
in-memory ``OAuthAuthorizationServerProvider`` that "logs in" as ``next_user`` (the browser the
test drives) and approves at once. :class:`Gate` guards an MCP server's ``tools/call`` requests
(and any request that carries a token) as a resource server does: 401 with a
``resource_metadata`` challenge without a valid token, 403 ``insufficient_scope`` when the token
lacks ``required`` scopes; it serves the protected-resource metadata itself. A request let through
with a token reaches the app with an ``x-authenticated-user`` header naming the token's user; the
gate drops any such header a client sent.

The SDK's token handler has no client credentials grant (RFC 6749 section 4.4): :class:`ClientGrant`
adds it in front of the SDK's routes, authenticating the client with the SDK's own
``ClientAuthenticator`` (a client secret, Basic or in the form), or with a ``private_key_jwt``
assertion (RFC 7523 section 2.2) checked against the client's registered public key. The SDK's
handler does take the JWT-bearer grant of enterprise-managed authorization (SEP-990, with
``identity_assertion_enabled``): :meth:`Provider.exchange_identity_assertion` checks the ID-JAG
against :attr:`Provider.idp_key`.
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode

import jwt
from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    IdentityAssertionParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request


async def read_body(scope: Any, receive: Any) -> tuple[bytes, Any]:
    """A POST request's body, read whole, and a ``receive`` that hands it on once (then what
    follows), so the app behind the reader gets the request as sent."""
    chunks, more = [], True
    while more and scope["method"] == "POST":
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    raw = b"".join(chunks)
    if scope["method"] != "POST":
        return raw, receive
    replayed = False

    async def replay() -> Any:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": raw, "more_body": False}
        return await receive()

    return raw, replay


class Provider:
    """In-memory authorization server state: clients, codes, tokens, and whose they are."""

    def __init__(self, *, token_ttl: int = 3600) -> None:
        self.next_user = "nobody"
        self.token_ttl = token_ttl
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, tuple[AuthorizationCode, str]] = {}
        self.access: dict[str, tuple[AccessToken, str]] = {}
        self.refresh: dict[str, tuple[RefreshToken, str]] = {}
        self.grants: list[str] = []
        """The grant type of each token request, in order."""
        self.code_requests = 0
        """Token requests that presented an authorization code (granted or not)."""
        self.issuer = ""
        """This server's issuer identifier (the audience of client and identity assertions)."""
        self.client_keys: dict[str, Any] = {}
        """Client id -> the public key its ``private_key_jwt`` assertions are checked with."""
        self.idp_key: Any = None
        """The public key of the enterprise identity provider whose ID-JAGs are taken."""
        self.refused = 0
        """Token requests refused (client authentication or grant failed)."""

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(16)
        assert client.client_id is not None
        self.codes[code] = (
            AuthorizationCode(
                code=code,
                scopes=params.scopes or [],
                expires_at=time.time() + 300,
                client_id=client.client_id,
                code_challenge=params.code_challenge,
                redirect_uri=params.redirect_uri,
                redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
                resource=params.resource,
            ),
            self.next_user,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: Any, authorization_code: str) -> AuthorizationCode | None:
        self.code_requests += 1
        found = self.codes.get(authorization_code)
        return found[0] if found is not None else None

    def _issue(self, client_id: str, scopes: list[str], resource: str | None, user: str) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
        expires = int(time.time()) + self.token_ttl
        self.access[access] = (
            AccessToken(token=access, client_id=client_id, scopes=scopes, expires_at=expires),
            user,
        )
        self.refresh[refresh] = (RefreshToken(token=refresh, client_id=client_id, scopes=scopes), user)
        return OAuthToken(
            access_token=access, expires_in=self.token_ttl, scope=" ".join(scopes), refresh_token=refresh
        )

    async def exchange_authorization_code(
        self, client: Any, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.grants.append("authorization_code")
        _, user = self.codes.pop(authorization_code.code)
        return self._issue(
            authorization_code.client_id, authorization_code.scopes, authorization_code.resource, user
        )

    def issue_to_client(self, client_id: str, scopes: list[str], grant: str) -> OAuthToken:
        """A token for the client itself (no refresh token: the client asks again)."""
        self.grants.append(grant)
        token = self._issue(client_id, scopes, None, f"client:{client_id}")
        assert token.refresh_token is not None
        self.refresh.pop(token.refresh_token)
        return OAuthToken(access_token=token.access_token, expires_in=token.expires_in, scope=token.scope)

    async def exchange_identity_assertion(
        self, client: OAuthClientInformationFull, params: IdentityAssertionParams
    ) -> OAuthToken:
        """SEP-990 leg 2: an ID-JAG signed by :attr:`idp_key`, for this issuer, naming the
        resource and a subject, is traded for a token issued to its subject."""
        try:
            claims = jwt.decode(
                params.assertion, self.idp_key, algorithms=["ES256"], audience=self.issuer,
                options={"require": ["exp", "sub", "aud"]},
            )  # fmt: skip
        except jwt.InvalidTokenError as exc:
            self.refused += 1
            raise TokenError("invalid_grant", type(exc).__name__) from None
        if claims.get("resource") != params.resource or claims.get("client_id") != client.client_id:
            self.refused += 1
            raise TokenError("invalid_grant", "the ID-JAG is for another resource or client")
        self.grants.append("jwt-bearer")
        assert client.client_id is not None
        token = self._issue(client.client_id, params.scopes or [], params.resource, str(claims["sub"]))
        assert token.refresh_token is not None
        self.refresh.pop(token.refresh_token)
        return OAuthToken(access_token=token.access_token, expires_in=token.expires_in, scope=token.scope)

    async def load_refresh_token(self, client: Any, refresh_token: str) -> RefreshToken | None:
        found = self.refresh.get(refresh_token)
        return found[0] if found is not None else None

    async def exchange_refresh_token(
        self, client: Any, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.grants.append("refresh_token")
        _, user = self.refresh.pop(refresh_token.token)
        return self._issue(refresh_token.client_id, scopes or refresh_token.scopes, None, user)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        return found[0] if found is not None else None

    async def revoke_token(self, token: Any) -> None:
        self.access.pop(getattr(token, "token", ""), None)
        self.refresh.pop(getattr(token, "token", ""), None)

    def user_of(self, access_token: str) -> str | None:
        found = self.access.get(access_token)
        return found[1] if found is not None else None


USER_HEADER = b"x-authenticated-user"


class Gate:
    """ASGI: an MCP endpoint as an OAuth resource server (see the module docstring)."""

    def __init__(self, app: Any, provider: Provider, issuer: str) -> None:
        self.app = app
        self.provider = provider
        self.issuer = issuer
        self.required = {"read"}
        self.origin = ""
        self.seen_tokens: list[str] = []
        """The tokens of the requests let through, in order."""
        self.everything = False
        """Guard every MCP request (the handshake and listings too), not only calls."""
        self.users_seen: list[str] = []
        """The user of each request let through with a token, in order (as ``x-authenticated-user``)."""

    def metadata_url(self) -> str:
        return f"{self.origin}/.well-known/oauth-protected-resource/mcp"

    async def _refuse(self, send: Any, status: int, challenge: str) -> None:
        headers = [(b"content-type", b"application/json"), (b"www-authenticate", challenge.encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b'{"error": "refused"}'})

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = dict(scope["headers"]).get(b"host", b"").decode()
        self.origin = f"http://{host}"
        if scope["path"].startswith("/.well-known/oauth-protected-resource"):
            body = json.dumps(
                {
                    "resource": f"{self.origin}/mcp",
                    "authorization_servers": [self.issuer],
                    "scopes_supported": ["read"],
                }
            ).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        raw, receive = await read_body(scope, receive)
        given = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        try:
            method = json.loads(raw).get("method") if raw else None
        except (ValueError, AttributeError):
            method = None
        if given or method == "tools/call" or self.everything:
            token = given[7:] if given.startswith("Bearer ") else ""
            access = self.provider.access.get(token)
            if access is None:
                await self._refuse(
                    send, 401, f'Bearer error="invalid_token", resource_metadata="{self.metadata_url()}"'
                )
                return
            if not self.required <= set(access[0].scopes):
                wanted = " ".join(sorted(self.required))
                challenge = f'Bearer error="insufficient_scope", scope="{wanted}"'
                await self._refuse(send, 403, f'{challenge}, resource_metadata="{self.metadata_url()}"')
                return
            self.seen_tokens.append(token)
            user = self.provider.user_of(token)
        else:
            user = None
        # Whose the request is, for the app behind: only the gate says so, never the client.
        headers = [(k, v) for k, v in scope["headers"] if k.lower() != USER_HEADER]
        if user is not None:
            self.users_seen.append(user)
            headers.append((USER_HEADER, user.encode("latin-1")))
        await self.app({**scope, "headers": headers}, receive, send)


class ClientGrant:
    """ASGI: the token endpoint's client credentials grant in front of ``app`` (the SDK's
    authorization server routes), which answers everything else (see the module docstring)."""

    def __init__(self, app: Any, provider: Provider) -> None:
        self.app = app
        self.provider = provider
        self.token_requests: list[dict[str, list[str]]] = []
        """The form of each client credentials token request, in order."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != "/token" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        raw, replay = await read_body(scope, receive)
        form = parse_qs(raw.decode())
        if form.get("grant_type") != ["client_credentials"]:
            await self.app(scope, replay, send)
            return
        self.token_requests.append(form)
        status, body = await self._grant(scope, form)
        if status != 200:
            self.provider.refused += 1
        headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": json.dumps(body).encode()})

    async def _grant(self, scope: Any, form: dict[str, list[str]]) -> tuple[int, Any]:
        if form.get("client_assertion_type") == ["urn:ietf:params:oauth:client-assertion-type:jwt-bearer"]:
            client_id = self._assertion_client(form.get("client_assertion", [""])[0])
            client = self.provider.clients.get(client_id or "")
            if client is None or client.token_endpoint_auth_method != "private_key_jwt":
                return 401, {"error": "invalid_client", "error_description": "assertion not accepted"}
        else:
            if "client_id" not in form:  # Basic: the SDK's authenticator looks the client up by the form's
                header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
                if header.startswith("Basic "):
                    decoded = base64.b64decode(header[6:]).decode(errors="replace")
                    form["client_id"] = [unquote(decoded.split(":", 1)[0])]
            body = urlencode(form, doseq=True).encode()

            async def given() -> Any:
                return {"type": "http.request", "body": body, "more_body": False}

            try:
                client = await ClientAuthenticator(self.provider).authenticate_request(Request(scope, given))
            except AuthenticationError as exc:
                return 401, {"error": "invalid_client", "error_description": exc.message}
        if "client_credentials" not in (client.grant_types or []):
            return 400, {"error": "unauthorized_client"}
        assert client.client_id is not None
        scopes = form.get("scope", [""])[0].split() or (client.scope or "").split()
        token = self.provider.issue_to_client(client.client_id, scopes, "client_credentials")
        return 200, token.model_dump(exclude_none=True)

    def _assertion_client(self, assertion: str) -> str | None:
        """The client a ``private_key_jwt`` assertion authenticates, if its signature (with the
        client's registered key), audience (this issuer), ``iss`` = ``sub`` and expiry hold."""
        try:
            claimed = jwt.decode(assertion, options={"verify_signature": False})
            key = self.provider.client_keys.get(str(claimed.get("iss")))
            if key is None or claimed.get("sub") != claimed.get("iss"):
                return None
            jwt.decode(
                assertion, key, algorithms=["RS256", "ES256"], audience=self.provider.issuer,
                options={"require": ["exp", "iat", "jti"]},
            )  # fmt: skip
        except jwt.InvalidTokenError:
            return None
        return str(claimed["iss"])


class MetadataOverride:
    """ASGI: an authorization server whose metadata document (``/.well-known/...``) has some
    fields replaced by ``overrides`` (e.g. an endpoint moved to another origin), the rest of the
    app untouched."""

    def __init__(self, app: Any, overrides: dict[str, Any]) -> None:
        self.app = app
        self.overrides = overrides

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/.well-known/oauth-authorization-server"):
            await self.app(scope, receive, send)
            return
        started: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def keep(message: Any) -> None:
            if message["type"] == "http.response.start":
                started.update(message)
            else:
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, keep)
        body = b"".join(chunks)
        if started.get("status") == 200:
            body = json.dumps({**json.loads(body), **self.overrides}).encode()
        headers = [(k, v) for k, v in started.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": started.get("status", 500), "headers": headers})
        await send({"type": "http.response.body", "body": body})
