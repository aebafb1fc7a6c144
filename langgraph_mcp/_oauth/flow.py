"""The OAuth steps, over HTTP: MCP authorization discovery, client registration, the
authorization URL (PKCE S256), the code exchange and refresh.

Built on the MCP SDK's OAuth helpers (``mcp.client.auth.utils``, ``PKCEParameters``). Every
answer read is bounded (:data:`_MAX_BODY`), redirects are not followed, and no error raised here
holds a token, code, verifier, secret or response body: only statuses and OAuth ``error`` codes.
"""

from __future__ import annotations

import base64
import json
import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx2
from mcp.client.auth import OAuthFlowError, PKCEParameters
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    build_protected_resource_metadata_discovery_urls,
    create_oauth_metadata_request,
    extract_resource_metadata_from_www_auth,
    extract_scope_from_www_auth,
    get_client_metadata_scopes,
    issuers_match,
    should_use_client_metadata_url,
)
from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata
from mcp.shared.auth_utils import check_resource_allowed, resource_url_from_server_url
from pydantic import ValidationError

from langgraph_mcp._oauth.options import UserOAuth, secure_url
from langgraph_mcp.errors import MCPError

__all__ = [
    "MAX_EXPIRES_IN",
    "Client",
    "Discovered",
    "OAuthProblem",
    "discover",
    "exchange",
    "refresh",
    "register",
    "revoke_token",
]

_MAX_BODY = 256 * 1024
MAX_EXPIRES_IN = 366 * 24 * 3600
"""Seconds an access token is taken to last at most, whatever ``expires_in`` its answer gives."""
_TIMEOUT = httpx2.Timeout(10.0)
_GRANTS = ["authorization_code", "refresh_token"]
_ENDPOINTS = ("authorization_endpoint", "token_endpoint", "registration_endpoint", "revocation_endpoint")


class OAuthProblem(MCPError):
    """A step failed; the message says which, never with a secret in it."""


class RefusedGrant(OAuthProblem):
    """The token endpoint refused the grant itself (HTTP 400 or 401: an expired, revoked or
    reused refresh token): asking again is the way on. Anything else (unreachable, 5xx) may
    pass."""


def client() -> httpx2.AsyncClient:
    return httpx2.AsyncClient(timeout=_TIMEOUT, follow_redirects=False)


async def _send(http: httpx2.AsyncClient, request: httpx2.Request) -> tuple[int, bytes, httpx2.Headers]:
    try:
        response = await http.send(request, stream=True)
        try:
            body = b""
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > _MAX_BODY:
                    raise OAuthProblem(f"{request.url.host} answered with more than {_MAX_BODY} bytes")
        finally:
            await response.aclose()
    except httpx2.HTTPError as exc:
        raise OAuthProblem(f"cannot reach {request.url.host}: {type(exc).__name__}") from None
    return response.status_code, body, response.headers


def _error_code(body: bytes) -> str:
    """The OAuth ``error`` code of an error answer (only a short token: never its text)."""
    try:
        code = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return ""
    return f" ({code})" if isinstance(code, str) and re.fullmatch(r"[A-Za-z0-9_.\-]{1,64}", code) else ""


@dataclass
class Discovered:
    """What discovery found for one server."""

    issuer: str
    metadata: OAuthMetadata
    resource: str
    scopes: list[str]


def challenge_scope(header: str) -> list[str]:
    """The scopes a ``WWW-Authenticate`` challenge names."""
    scope = extract_scope_from_www_auth(httpx2.Response(401, headers={"WWW-Authenticate": header[:4096]}))
    return scope.split() if scope else []


async def discover(http: httpx2.AsyncClient, url: str, oauth: UserOAuth, challenge: str | None) -> Discovered:
    """Run MCP authorization discovery for the server at ``url``: its protected-resource
    metadata (from the challenge's ``resource_metadata``, else the well-known URLs), then its
    authorization server's metadata (whose ``issuer`` must be the one named)."""
    if challenge is None:  # ask the server itself, without a token
        probe = httpx2.Request(
            "POST",
            url,
            json={"jsonrpc": "2.0", "id": 0, "method": "ping"},
            headers={"Accept": "application/json, text/event-stream"},
        )
        status, _, headers = await _send(http, probe)
        challenge = headers.get("WWW-Authenticate", "")[:4096] if status in (401, 403) else ""
    answer = httpx2.Response(401, headers={"WWW-Authenticate": challenge})
    prm: ProtectedResourceMetadata | None = None
    for candidate in build_protected_resource_metadata_discovery_urls(
        extract_resource_metadata_from_www_auth(answer), url
    ):
        status, body, _ = await _send(http, create_oauth_metadata_request(candidate))
        if status == 200:
            try:
                prm = ProtectedResourceMetadata.model_validate_json(body)
                break
            except ValidationError:
                continue
    if prm is None:
        raise OAuthProblem("the server publishes no protected-resource metadata")
    resource = str(prm.resource)
    if not check_resource_allowed(resource_url_from_server_url(url), resource):
        raise OAuthProblem("the server's protected-resource metadata names another resource")
    named = str(prm.authorization_servers[0])
    if not secure_url(named):
        raise OAuthProblem(
            "the server's authorization server is not an https:// URL (http:// only to a loopback host)"
        )
    metadata: OAuthMetadata | None = None
    for candidate in build_oauth_authorization_server_metadata_discovery_urls(named, url):
        status, body, _ = await _send(http, create_oauth_metadata_request(candidate))
        if status == 200:
            try:
                metadata = OAuthMetadata.model_validate_json(body)
                break
            except ValidationError:
                continue
        if status >= 500:
            break
    if metadata is None:
        raise OAuthProblem("the authorization server publishes no metadata")
    issuer = str(metadata.issuer)
    if not issuers_match(issuer, named):
        raise OAuthProblem("the authorization server's metadata names another issuer")
    if oauth.issuer is not None and not issuers_match(issuer, oauth.issuer):
        raise OAuthProblem(
            "the server's authorization server is not the issuer its client is registered with "
            "(oauth.issuer): the client is not used with it"
        )
    for name in _ENDPOINTS:
        endpoint = getattr(metadata, name, None)
        if endpoint is not None and not secure_url(str(endpoint)):
            raise OAuthProblem(
                f"the authorization server's {name.replace('_', ' ')} is not an https:// URL "
                "(http:// only to a loopback host)"
            )
    if "S256" not in (metadata.code_challenge_methods_supported or []):
        raise OAuthProblem("the authorization server does not support PKCE with S256")
    if oauth.scopes is not None:
        scopes = list(oauth.scopes)
    else:
        chosen = get_client_metadata_scopes(extract_scope_from_www_auth(answer), prm, metadata, _GRANTS)
        scopes = chosen.split() if chosen else []
    return Discovered(issuer, metadata, resource, scopes)


@dataclass
class Client:
    client_id: str
    client_secret: str | None
    auth_method: str
    scopes: list[str] | None = None
    """The scopes a dynamically registered client was registered for."""

    def __repr__(self) -> str:
        return f"Client(client_id={self.client_id!r}, auth_method={self.auth_method!r})"


async def register(
    http: httpx2.AsyncClient, oauth: UserOAuth, found: Discovered, wanted: list[str]
) -> Client:
    """The client to use with ``found``'s authorization server: the pre-registered one, a
    client ID metadata document, or a dynamically registered one."""
    methods = found.metadata.token_endpoint_auth_methods_supported or ["client_secret_basic"]
    if oauth.client_id is not None:
        if oauth.client_secret is None:
            return Client(oauth.client_id, None, "none")
        method = "client_secret_post" if "client_secret_post" in methods else "client_secret_basic"
        return Client(oauth.client_id, oauth.client_secret, method)
    if should_use_client_metadata_url(found.metadata, oauth.client_metadata_url):
        assert oauth.client_metadata_url is not None
        return Client(oauth.client_metadata_url, None, "none")
    endpoint = found.metadata.registration_endpoint
    if endpoint is None:
        raise OAuthProblem(
            "the authorization server offers no dynamic client registration: configure oauth.client_id"
        )
    metadata = {
        "redirect_uris": [oauth.redirect_uri],
        "grant_types": _GRANTS,
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "client_name": oauth.client_name,
    }
    # Registered for every scope the server offers, so that a step-up can ask for more.
    offered = [*wanted, *(s for s in found.metadata.scopes_supported or () if s not in wanted)]
    if offered:
        metadata["scope"] = " ".join(offered)
    status, body, _ = await _send(http, httpx2.Request("POST", str(endpoint), json=metadata))
    if status not in (200, 201):
        raise OAuthProblem(f"client registration was refused: HTTP {status}{_error_code(body)}")
    try:
        info = json.loads(body)
        client_id, secret = info["client_id"], info.get("client_secret")
        method = info.get("token_endpoint_auth_method") or ("client_secret_basic" if secret else "none")
    except (ValueError, KeyError, TypeError, AttributeError):
        raise OAuthProblem("the client registration answer is not usable") from None
    if not isinstance(client_id, str) or not (secret is None or isinstance(secret, str)):
        raise OAuthProblem("the client registration answer is not usable")
    scope = info.get("scope")
    granted = scope.split() if isinstance(scope, str) else list(offered)
    return Client(client_id, secret, method if secret else "none", granted)


def authorization_url(
    found: Discovered, client: Client, redirect_uri: str, state: str, pkce: PKCEParameters, scopes: list[str]
) -> str:
    params = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": pkce.code_challenge,
        "code_challenge_method": "S256",
        "resource": found.resource,
    }
    if scopes:
        params["scope"] = " ".join(scopes)
    endpoint = str(found.metadata.authorization_endpoint)
    return f"{endpoint}{'&' if '?' in endpoint else '?'}{urlencode(params)}"


async def _token_request(
    http: httpx2.AsyncClient,
    endpoint: str,
    data: dict[str, str],
    *,
    client_id: str,
    client_secret: str | None,
    auth_method: str,
) -> dict[str, Any]:
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
    data = {**data, "client_id": client_id}
    if client_secret is not None and auth_method == "client_secret_post":
        data["client_secret"] = client_secret
    elif client_secret is not None:
        pair = f"{client_id}:{client_secret}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    status, body, _ = await _send(http, httpx2.Request("POST", endpoint, data=data, headers=headers))
    if status in (400, 401):
        raise RefusedGrant(f"the token request was refused: HTTP {status}{_error_code(body)}")
    if status != 200:
        raise OAuthProblem(f"the token request was refused: HTTP {status}{_error_code(body)}")
    try:
        answer = json.loads(body)
    except ValueError:
        answer = None
    if (
        not isinstance(answer, dict)
        or not isinstance(answer.get("access_token"), str)
        or str(answer.get("token_type", "")).lower() != "bearer"
    ):
        raise OAuthProblem("the token answer holds no bearer access token")
    expires_in = answer.get("expires_in")
    if isinstance(expires_in, bool) or not isinstance(expires_in, (int, float)) or not expires_in > 0:
        expires_in = None  # (NaN too)
    # Clamped first: a huge integer would overflow the float it is added to.
    answer["expires_at"] = None if expires_in is None else time.time() + min(expires_in, MAX_EXPIRES_IN)
    return answer


async def exchange(http: httpx2.AsyncClient, pending: Any, code: str) -> dict[str, Any]:
    """Trade an authorization code for tokens (with the PKCE verifier kept for it)."""
    return await _token_request(
        http,
        pending.token_endpoint,
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": pending.redirect_uri,
            "code_verifier": pending.verifier,
            "resource": pending.resource,
        },
        client_id=pending.client_id,
        client_secret=pending.client_secret,
        auth_method=pending.auth_method,
    )


async def refresh(http: httpx2.AsyncClient, record: Any) -> dict[str, Any]:
    """New tokens for a record's refresh token."""
    return await _token_request(
        http,
        record.token_endpoint,
        {"grant_type": "refresh_token", "refresh_token": record.refresh_token, "resource": record.resource},
        client_id=record.client_id,
        client_secret=record.client_secret,
        auth_method=record.auth_method,
    )


async def revoke_token(http: httpx2.AsyncClient, record: Any, token: str, hint: str) -> int:
    """Ask the authorization server to revoke one token (RFC 7009); its HTTP status."""
    data = {"token": token, "token_type_hint": hint, "client_id": record.client_id}
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if record.client_secret is not None and record.auth_method == "client_secret_post":
        data["client_secret"] = record.client_secret
    elif record.client_secret is not None:
        pair = f"{record.client_id}:{record.client_secret}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    status, _, _ = await _send(
        http, httpx2.Request("POST", record.revocation_endpoint, data=data, headers=headers)
    )
    return status


def check_iss(iss: str | None, issuer: str, supported: bool) -> None:
    """RFC 9207: an ``iss`` given must be the issuer asked (simple string comparison); one the
    server said it sends must be there."""
    if iss is not None and not issuers_match(iss, issuer):
        raise OAuthFlowError("the authorization response comes from another issuer")
    if iss is None and supported:
        raise OAuthFlowError("the authorization response lacks the iss its server advertises")
