"""OAuth providers for headless agents, to pass as a server's ``auth``.

The MCP SDK's providers cover the authorization code flow (a person signs in), client
credentials, private-key JWT client authentication and enterprise identity assertions. This
module adds the **JWT-bearer grant** of RFC 7523 for workload identity federation (the MCP
``io.modelcontextprotocol/auth/wif`` extension): a workload that already holds a signed JWT
from its platform (a Kubernetes service account token, a cloud identity token, a CI job's OIDC
token) trades it for an access token at the MCP server's authorization server, with no secret
of its own.

.. code-block:: python

    from langgraph_mcp.auth import JWTBearerOAuthProvider

    auth = JWTBearerOAuthProvider(
        server_url="https://mcp.example.com/mcp",
        storage=my_token_storage,
        client_id="my-workload",
        assertion=open("/var/run/secrets/tokens/mcp").read().strip(),
    )
    servers = {"tools": {"url": "https://mcp.example.com/mcp", "auth": auth}}

The assertion is sent only to the authorization server it was made for: a fixed assertion's own
``aud`` claim names that server (it is read, not verified: verifying is the server's job), and
the flow stops, without sending it, when the MCP server points anywhere else. An assertion made
per request (a callable) is asked for the audience it must carry, and ``issuer`` then names the
one server it may go to. A refused token request is an error: the grant is not retried and no
other grant is tried.
"""

from __future__ import annotations

import json
from base64 import urlsafe_b64decode
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError, TokenStorage
from mcp.client.auth.utils import issuers_match
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

__all__ = ["JWT_BEARER_GRANT", "JWTBearerOAuthProvider"]

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
