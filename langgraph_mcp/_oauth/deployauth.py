"""The deployment's own OAuth of an HTTP server (``oauth`` with a ``flow`` other than
``authorization_code``): the MCP SDK's provider for the flow, as the session's ``httpx2.Auth``.

One provider per server configuration (its URL and its ``oauth``: client, issuer, credentials)
and event loop, so every session of the server (the shared one, thread sessions, a session
opened again after a lost connection) presents the same token, kept in memory by the provider.
The provider gets a token when the server first answers 401, replaces one that expired (or that
the server refuses) the same way, and sends the client's credentials only to ``issuer``.

On top of the SDK's checks, the token endpoint must be ``https://`` (``http://`` only to a
loopback host), as for per-user OAuth.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import anyio
import httpx2
from mcp.client.auth import OAuthFlowError, TokenStorage
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from langgraph_mcp._oauth.deployment import ClientCredentialsOAuth, IdentityAssertionOAuth, PrivateKeyJWTOAuth
from langgraph_mcp._oauth.options import secure_url

__all__ = [
    "MemoryTokens",
    "auth_problems",
    "deployment_auth",
    "noting_auth_problems",
    "start_auth_problems",
    "stop_auth_problems",
]

_MAX_PROVIDERS = 256
"""Providers kept per event loop (the least recently used goes first: its next use gets a new
token)."""

_MAX_PROBLEM = 500
"""At most this many characters of an OAuth failure are kept (the authorization server's answer
is in it)."""

_problems: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "langgraph_mcp_auth_problems", default=None
)


@contextmanager
def auth_problems() -> Iterator[list[str]]:
    """What went wrong getting a token for the requests sent from this context, in order (the
    SDK sends each request from a task that copies the sender's context)."""
    seen, token = start_auth_problems()
    try:
        yield seen
    finally:
        stop_auth_problems(token)


def start_auth_problems() -> tuple[list[str], contextvars.Token[list[str] | None]]:
    """:func:`auth_problems` without a block: its list, and the token that
    :func:`stop_auth_problems` takes where the block would end."""
    seen: list[str] = []
    return seen, _problems.set(seen)


def stop_auth_problems(token: contextvars.Token[list[str] | None]) -> None:
    _problems.reset(token)


def noting_auth_problems() -> list[str]:
    """Note the OAuth failures of requests sent from here on in this context (a task of its own,
    such as a session's owner, whose requests run in tasks that copy it) in a new list."""
    seen: list[str] = []
    _problems.set(seen)
    return seen


class _Reporting(httpx2.Auth):
    """Notes an OAuth failure of the flow for :func:`auth_problems` (the transport turns it into
    a bare 401 or a lost connection), then lets it go on."""

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = super().async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        except (OAuthFlowError, ValueError) as exc:
            seen = _problems.get()
            if seen is not None:
                seen.append((str(exc) or type(exc).__name__)[:_MAX_PROBLEM])
            raise
        finally:
            await flow.aclose()


_providers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, collections.OrderedDict[Any, httpx2.Auth]]
_providers = weakref.WeakKeyDictionary()


class MemoryTokens(TokenStorage):
    """The SDK's ``TokenStorage`` in memory: the deployment's token, never written anywhere."""

    def __init__(self) -> None:
        self._tokens: OAuthToken | None = None

    def __repr__(self) -> str:
        return "MemoryTokens(...)"

    async def get_tokens(self) -> OAuthToken | None:
        return self._tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return None  # (the client is configured, never registered)

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        return None


def _secure_endpoint(url: str) -> str:
    if not secure_url(url):
        raise OAuthFlowError(
            "the authorization server's token endpoint is not an https:// URL "
            "(http:// only to a loopback host); the client's credentials are not sent to it"
        )
    return url


class _ClientCredentials(_Reporting, ClientCredentialsOAuthProvider):
    def __repr__(self) -> str:
        return f"ClientCredentialsOAuthProvider(issuer={self._issuer!r})"

    def _get_token_endpoint(self) -> str:
        return _secure_endpoint(super()._get_token_endpoint())


class _PrivateKeyJWT(_Reporting, PrivateKeyJWTOAuthProvider):
    def __repr__(self) -> str:
        return f"PrivateKeyJWTOAuthProvider(issuer={self._issuer!r})"

    def _get_token_endpoint(self) -> str:
        return _secure_endpoint(super()._get_token_endpoint())


class _IdentityAssertion(_Reporting, IdentityAssertionOAuthProvider):
    def __repr__(self) -> str:
        return f"IdentityAssertionOAuthProvider(issuer={self._issuer!r})"

    def _build_token_request(self, scope: str | None, assertion: str) -> httpx2.Request:
        _secure_endpoint(self._token_endpoint or "")  # the client's secret goes with it
        return super()._build_token_request(scope, assertion)


def _signed_assertions(oauth: PrivateKeyJWTOAuth) -> Callable[[str], Awaitable[str]]:
    """Client assertions signed with the configured key (read again from its file each time)."""

    async def make(audience: str) -> str:
        key = (
            oauth.private_key
            if oauth.private_key is not None
            else await anyio.to_thread.run_sync(oauth.signing_key)
        )
        assert key is not None
        parameters = SignedJWTParameters(
            issuer=oauth.client_id,
            subject=oauth.client_id,
            signing_key=key,
            signing_algorithm=oauth.algorithm,
            lifetime_seconds=oauth.assertion_lifetime,
        )
        return await parameters.create_assertion_provider()(audience)

    return make


class _HTTPServer(Protocol):
    """What a deployment's flow is built from: an HTTP server's configuration
    (:class:`~langgraph_mcp.config.HTTPServerConfig`), its URL and its ``oauth``."""

    @property
    def url(self) -> str: ...

    @property
    def oauth(self) -> object: ...


def _build(config: _HTTPServer) -> httpx2.Auth:
    oauth = config.oauth
    if isinstance(oauth, ClientCredentialsOAuth):
        return _ClientCredentials(
            config.url,
            MemoryTokens(),
            oauth.client_id,
            oauth.client_secret,
            token_endpoint_auth_method=oauth.token_endpoint_auth_method,
            scope=oauth.scope,
            issuer=oauth.issuer,
        )
    if isinstance(oauth, PrivateKeyJWTOAuth):
        return _PrivateKeyJWT(
            config.url,
            MemoryTokens(),
            oauth.client_id,
            _signed_assertions(oauth),
            scope=oauth.scope,
            issuer=oauth.issuer,
        )
    assert isinstance(oauth, IdentityAssertionOAuth)
    return _IdentityAssertion(
        config.url,
        MemoryTokens(),
        oauth.client_id,
        oauth.client_secret,
        oauth.issuer,
        oauth.source(),
        scope=oauth.scope,
        token_endpoint_auth_method=oauth.token_endpoint_auth_method,
    )


def deployment_auth(config: _HTTPServer) -> httpx2.Auth | None:
    """The provider of ``config``'s deployment OAuth flow, shared by every session of the server
    in this event loop (``None`` without one: no ``oauth``, or per-user OAuth)."""
    oauth = config.oauth
    if not isinstance(oauth, (ClientCredentialsOAuth, PrivateKeyJWTOAuth, IdentityAssertionOAuth)):
        return None
    loop = asyncio.get_running_loop()
    kept = _providers.get(loop)
    if kept is None:
        kept = _providers[loop] = collections.OrderedDict()
    key = (config.url, oauth)
    provider = kept.get(key)
    if provider is None:
        provider = kept[key] = _build(config)
        while len(kept) > _MAX_PROVIDERS:
            kept.popitem(last=False)
    kept.move_to_end(key)
    return provider
