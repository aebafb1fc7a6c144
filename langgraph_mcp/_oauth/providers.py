"""The OAuth providers the public :mod:`langgraph_mcp.auth` offers: the JWT-bearer grant (RFC 7523)
and DPoP (RFC 9449) around any of the SDK's providers. The face's docstring states the contract."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from base64 import urlsafe_b64decode, urlsafe_b64encode
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx2
import jwt
from cryptography.hazmat.primitives.asymmetric import ec
from mcp.client.auth import OAuthClientProvider, OAuthFlowError, TokenStorage
from mcp.client.auth.utils import issuers_match
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

__all__ = ["JWT_BEARER_GRANT", "DPoPAuth", "JWTBearerOAuthProvider"]

JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
"""The ``grant_type`` of RFC 7523 section 2.1."""

_MAX_ASSERTION = 64 * 1024
"""The longest assertion read for its audience, in characters."""


def _assertion_audiences(assertion: str) -> list[str]:
    """The ``aud`` claim of a compact JWT, read without verifying it (``ValueError`` when it
    has none or is not a JWT)."""
    if len(assertion) > _MAX_ASSERTION:
        raise ValueError(f"the assertion is longer than {_MAX_ASSERTION} characters")
    parts = assertion.split(".")
    if len(parts) != 3:
        raise ValueError("the assertion is not a compact JWT (three dot-separated parts)")
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        claims = json.loads(urlsafe_b64decode(payload))
    except ValueError:
        raise ValueError("the assertion's claims are not base64url-encoded JSON") from None
    audience = claims.get("aud") if isinstance(claims, dict) else None
    audiences = [audience] if isinstance(audience, str) else audience
    if not isinstance(audiences, list) or not audiences or not all(isinstance(a, str) for a in audiences):
        raise ValueError("the assertion has no 'aud' claim naming its authorization server")
    return audiences


class JWTBearerOAuthProvider(OAuthClientProvider):
    """An access token for a workload identity JWT (RFC 7523 JWT-bearer grant).

    Args:
        server_url: The MCP server's URL.
        storage: Where tokens are kept (the SDK's ``TokenStorage``).
        client_id: The client id the authorization server knows this workload by (sent with
            the grant; no client secret).
        assertion: The workload's JWT, or an async callable that makes one for an audience (the
            authorization server's issuer URL): called for each token request, so a platform
            token that expires is fetched fresh.
        issuer: The authorization server the assertion may be sent to. Required with a
            callable; with a fixed assertion it defaults to the assertion's ``aud``, and must be
            among its audiences when given.
        scope: Space-separated scopes to ask for.

    Raises:
        ValueError: no issuer can be settled, or a fixed assertion is not a JWT with ``aud``.
    """

    def __init__(
        self,
        server_url: str,
        storage: TokenStorage,
        client_id: str,
        assertion: str | Callable[[str], Awaitable[str]],
        *,
        issuer: str | None = None,
        scope: str | None = None,
    ) -> None:
        if isinstance(assertion, str):
            audiences = _assertion_audiences(assertion)
            if issuer is None:
                issuer = audiences[0]
            elif not any(issuers_match(issuer, a) for a in audiences):
                raise ValueError("the assertion's 'aud' does not name the issuer it is to be sent to")
        elif issuer is None:
            raise ValueError("an assertion callable needs issuer: the one server its assertions may go to")
        metadata = OAuthClientMetadata(
            redirect_uris=None, grant_types=[JWT_BEARER_GRANT], token_endpoint_auth_method="none", scope=scope
        )
        super().__init__(server_url, metadata, storage, None, None)
        self._issuer = issuer
        self._assertion = assertion
        self._client = OAuthClientInformationFull(
            redirect_uris=None,
            client_id=client_id,
            grant_types=[JWT_BEARER_GRANT],
            token_endpoint_auth_method="none",
            scope=scope,
        )

    def __repr__(self) -> str:
        return f"JWTBearerOAuthProvider(client_id={self._client.client_id!r}, issuer={self._issuer!r})"

    async def _initialize(self) -> None:
        self.context.current_tokens = await self.context.storage.get_tokens()
        self.context.client_info = self._client
        self._initialized = True

    def _select_authorization_server(self, advertised: list[str]) -> str:
        return next((server for server in advertised if issuers_match(server, self._issuer)), advertised[0])

    async def _perform_authorization(self) -> httpx2.Request:
        metadata = self.context.oauth_metadata
        if metadata is None or not issuers_match(str(metadata.issuer), self._issuer):
            # The MCP server led elsewhere: the workload's identity is not sent there.
            self.context.oauth_metadata = None
            self.context.clear_tokens()
            found = "none was discovered" if metadata is None else f"the server leads to {metadata.issuer}"
            raise OAuthFlowError(f"the JWT-bearer assertion is for {self._issuer}, but {found}")
        made = self._assertion
        assertion = made if isinstance(made, str) else await made(self._issuer)
        data: dict[str, Any] = {
            "grant_type": JWT_BEARER_GRANT,
            "assertion": assertion,
            "client_id": self._client.client_id,
        }
        if self.context.should_include_resource_param(self.context.protocol_version):
            data["resource"] = self.context.get_resource_url()
        if self.context.client_metadata.scope:
            data["scope"] = self.context.client_metadata.scope
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        return httpx2.Request("POST", self._get_token_endpoint(), data=data, headers=headers)


# -- DPoP -------------------------------------------------------------------------------------


def _json_answer(response: httpx2.Response) -> bool:
    return 200 <= response.status_code < 300 and response.headers.get("Content-Type", "").startswith(
        "application/json"
    )


def _b64url(data: bytes) -> str:
    return urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class DPoPAuth(httpx2.Auth):
    """DPoP (RFC 9449) around one of the MCP SDK's OAuth providers.

    The provider runs its flow as ever (discovery, registration, authorization, refresh); this
    wrapper adds a DPoP proof, signed with ``key``, to each token request and to each request to
    the MCP server, and presents the access token with the ``DPoP`` scheme instead of
    ``Bearer``. A server's ``use_dpop_nonce`` challenge (the authorization server's 400 or the
    MCP server's 401, with a ``DPoP-Nonce`` header) is answered once, with a new proof carrying
    the nonce; nonces a server sends are used from then on.

    Fails closed: an authorization server that answers with a token not bound to the key (a
    ``Bearer`` token) stops the flow with an error instead of sending that token.

    Args:
        provider: The SDK provider whose tokens are to be DPoP-bound (an
            ``OAuthClientProvider`` or one of its subclasses).
        key: The P-256 private key proofs are signed with (ES256). Tokens are bound to it, so
            tokens kept in the provider's storage across processes need the same key: pass it.
            Default: a new key for this object.
    """

    requires_response_body = True

    def __init__(
        self, provider: OAuthClientProvider, *, key: ec.EllipticCurvePrivateKey | None = None
    ) -> None:
        if key is not None and not isinstance(key.curve, ec.SECP256R1):
            raise ValueError("the DPoP key must be a P-256 (ES256) key")
        self.provider = provider
        self._key = key if key is not None else ec.generate_private_key(ec.SECP256R1())
        numbers = self._key.public_key().public_numbers()
        self._jwk = {
            "kty": "EC",
            "crv": "P-256",
            "x": _b64url(numbers.x.to_bytes(32, "big")),
            "y": _b64url(numbers.y.to_bytes(32, "big")),
        }
        self._nonces: dict[str, str] = {}
        """Origin -> the last nonce that server sent."""

    def __repr__(self) -> str:
        return f"DPoPAuth({self.provider!r})"

    @property
    def thumbprint(self) -> str:
        """The key's JWK SHA-256 thumbprint (RFC 7638): what a bound token's ``cnf.jkt`` holds."""
        canonical = json.dumps(self._jwk, separators=(",", ":"), sort_keys=True).encode()
        return _b64url(hashlib.sha256(canonical).digest())

    def proof(
        self, method: str, url: str, *, access_token: str | None = None, nonce: str | None = None
    ) -> str:
        """A DPoP proof JWT for one request (``htu`` without query or fragment)."""
        parts = urlsplit(url)
        claims: dict[str, Any] = {
            "jti": uuid.uuid4().hex,
            "htm": method,
            "htu": urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")),
            "iat": int(time.time()),
        }
        if access_token is not None:
            claims["ath"] = _b64url(hashlib.sha256(access_token.encode("ascii")).digest())
        if nonce is not None:
            claims["nonce"] = nonce
        return jwt.encode(claims, self._key, algorithm="ES256", headers={"typ": "dpop+jwt", "jwk": self._jwk})

    @staticmethod
    def _is_token_request(request: httpx2.Request) -> bool:
        """Told by the request itself (a form POST with a ``grant_type``), not by its URL: a
        token endpoint with a query, or a redirect of the token request, is still one."""
        if request.method != "POST":
            return False
        kind = request.headers.get("Content-Type", "")
        return kind.startswith("application/x-www-form-urlencoded") and b"grant_type=" in request.content

    def _sign(self, request: httpx2.Request) -> str | None:
        """Put a proof on ``request`` if it needs one; the kind (``token``, ``resource``) or ``None``."""
        origin = f"{request.url.scheme}://{request.url.netloc.decode('ascii')}"
        nonce = self._nonces.get(origin)
        authorization = request.headers.get("Authorization", "")
        if authorization.startswith("Bearer ") or authorization.startswith("DPoP "):
            token = authorization.split(" ", 1)[1]
            request.headers["Authorization"] = f"DPoP {token}"
            request.headers["DPoP"] = self.proof(
                request.method, str(request.url), access_token=token, nonce=nonce
            )
            return "resource"
        if self._is_token_request(request):
            request.headers["DPoP"] = self.proof(request.method, str(request.url), nonce=nonce)
            return "token"
        return None

    def _challenged(self, kind: str | None, request: httpx2.Request, response: httpx2.Response) -> bool:
        """Note a nonce the response carries; was it a ``use_dpop_nonce`` challenge?"""
        nonce = response.headers.get("DPoP-Nonce")
        if kind is None or nonce is None or len(nonce) > 1024:
            return False
        self._nonces[f"{request.url.scheme}://{request.url.netloc.decode('ascii')}"] = nonce
        if kind == "resource":
            return response.status_code == 401 and "use_dpop_nonce" in response.headers.get(
                "WWW-Authenticate", ""
            )
        if response.status_code != 400:
            return False
        try:
            return bool(json.loads(response.content).get("error") == "use_dpop_nonce")
        except (ValueError, AttributeError):
            return False

    @staticmethod
    def _bound(response: httpx2.Response) -> httpx2.Response:
        """A token response as the SDK's model takes it (``token_type`` Bearer), once it is known
        to be a DPoP-bound token; an error otherwise."""
        if response.status_code not in (200, 201):
            return response
        try:
            body = json.loads(response.content)
        except ValueError:
            return response  # the provider reports what it cannot read
        if not isinstance(body, dict) or "access_token" not in body:
            return response
        kind = body.get("token_type")
        if not isinstance(kind, str) or kind.lower() != "dpop":
            raise OAuthFlowError(
                f"the authorization server answered with a {kind!r} token, not one bound to the DPoP key"
            )
        content = json.dumps({**body, "token_type": "Bearer"}).encode()
        headers = {
            k: v
            for k, v in response.headers.items()
            if k.lower() not in ("content-length", "content-encoding")
        }
        return httpx2.Response(
            response.status_code, headers=headers, content=content, request=response.request
        )

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = self.provider.async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                kind = self._sign(outgoing)
                response = yield outgoing
                if kind == "token":
                    await response.aread()  # small: the token answer (MCP answers may stream)
                if self._challenged(kind, outgoing, response):
                    self._sign(outgoing)  # once, with the nonce: a second challenge goes to the flow
                    response = yield outgoing
                    if kind == "token":
                        await response.aread()
                    self._challenged(kind, outgoing, response)
                if kind == "token" or (kind is None and _json_answer(response)):
                    # Any token the flow is handed is checked, whatever request it came from.
                    await response.aread()
                    response = self._bound(response)
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()
