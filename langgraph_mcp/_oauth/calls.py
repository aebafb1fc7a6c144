"""A call to a per-user OAuth server: whose it is, with which token, and the interrupt that asks
the user to connect.

:func:`user_session` wraps one tool call. It finds the run's user (LangGraph's authenticated
user, else ``oauth.user_key``), loads the user's tokens from the graph's store (refreshing
them when they expire soon) and runs the call on the user's own session, whose requests carry
the token (:class:`UserBearer`). With no usable token, or when the server refuses the token
(HTTP 401) or asks for more scopes (HTTP 403 ``insufficient_scope``), it runs discovery, keeps
the PKCE verifier in the store under a fresh ``state`` and raises an ``mcp_authorization``
interrupt. The resumed run makes the call again from the start, with the token the callback
route stored; if there is still none, the call fails with an error saying so (it asks once per
call). A refusal as the user's session connects (its ``initialize`` or listing, made by the
connection's own task) is read from the session's bearer, so it asks just as for a call.

:func:`evict` closes a user's sessions (when their authorization is revoked).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import httpx2
from langgraph.prebuilt import ToolRuntime
from langgraph.store.base import BaseStore
from langgraph.types import interrupt
from mcp.client.auth import PKCEParameters
from mcp.client.auth.utils import should_use_client_metadata_url, union_scopes

from langgraph_mcp._oauth import flow
from langgraph_mcp._oauth.options import UserOAuth
from langgraph_mcp._oauth.records import (
    Pending,
    Sealer,
    TokenRecord,
    delete_tokens,
    load_client,
    load_tokens,
    put_pending,
    save_client,
    save_tokens,
)
from langgraph_mcp.errors import MCPAuthenticationError, MCPConnectionError
from langgraph_mcp.types._oauth import AUTHORIZATION_INTERRUPT_TYPE, MCPAuthorizationInterrupt

__all__ = [
    "UserBearer",
    "UserListing",
    "connect_user",
    "evict",
    "stored_user_session",
    "user_in",
    "user_listing",
    "user_of",
    "user_session",
]

logger = logging.getLogger("langgraph_mcp.oauth")

_MAX_USER = 256
_challenges: contextvars.ContextVar[list[tuple[int, str]] | None] = contextvars.ContextVar(
    "langgraph_mcp_oauth_challenges", default=None
)


class UserBearer(httpx2.Auth):
    """The ``httpx2.Auth`` of one user's sessions to one server: puts the user's current access
    token on each request, and notes each 401/403 challenge for the call that sent it."""

    def __init__(self) -> None:
        self.token: str | None = None
        self.refused: tuple[int, str] | None = None
        """The last 401/403 answer to a request with :attr:`token`, and its challenge (for a
        refusal met by the session's own task, outside any call's context)."""

    def __repr__(self) -> str:
        return "UserBearer(<token hidden>)"

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if self.token is not None:
            request.headers["Authorization"] = f"Bearer {self.token}"
        response = yield request
        if response.status_code in (401, 403):
            refusal = (response.status_code, response.headers.get("WWW-Authenticate", "")[:4096])
            self.refused = refusal
            seen = _challenges.get()
            if seen is not None:
                seen.append(refusal)


_BEARERS: weakref.WeakKeyDictionary[Any, weakref.WeakValueDictionary[str, UserBearer]] = (
    weakref.WeakKeyDictionary()
)
"""Each user's bearer, per server, while a session of theirs holds it (its HTTP client's auth):
a user whose sessions are all closed leaves no token here."""
_POOLS: weakref.WeakSet[Any] = weakref.WeakSet()
"""The pools that opened a user's session (for :func:`evict`)."""


_REVOKES = [0]
"""How many times :func:`evict` ran in this process: a call that loaded its tokens while one ran
loads them again (they may be the revoked ones)."""


def evict(server: str, user: str) -> int:
    """Close ``user``'s sessions to per-user OAuth server ``server`` in every pool of this
    process, and forget the token their bearers hold; how many sessions were closed."""
    _REVOKES[0] += 1
    for shared, users in list(_BEARERS.items()):
        if shared.name == server and (bearer := users.pop(user, None)) is not None:
            bearer.token = None
    return sum(pool._threads.evict_user(server, user) for pool in list(_POOLS))


def known_keys(server: str) -> list[str]:
    """The ``encryption_key`` of per-user OAuth server ``server`` in every pool of this process
    that opened a user's session to it (for :func:`~langgraph_mcp.oauth.revoke` without
    ``config``)."""
    found: dict[str, None] = {}
    for pool in list(_POOLS):
        config = getattr(pool, "servers", {}).get(server)
        oauth = getattr(config, "oauth", None)
        if isinstance(oauth, UserOAuth):
            found.setdefault(oauth.encryption_key)
    return list(found)


def user_of(runtime: ToolRuntime | None, oauth: UserOAuth) -> str | None:
    """The run's user: ``configurable["langgraph_auth_user"]``'s identity, else ``oauth.user_key``
    of the run's context or ``configurable``; ``None`` when there is none (or it is not a
    non-empty string of at most 256 characters). An empty identity (a LangGraph server without
    custom auth names its anonymous user so) counts as none: ``user_key`` is read then."""
    if runtime is None:
        return user_in(None, None, oauth)
    return user_in(runtime.config, runtime.context, oauth)


def user_in(config: Mapping[str, Any] | None, context: Any, oauth: UserOAuth) -> str | None:
    """:func:`user_of`, from a run's config and context (where there is no ``ToolRuntime``: a
    model call)."""
    configurable = (config or {}).get("configurable") or {}
    user: Any = None
    auth_user = configurable.get("langgraph_auth_user")
    if auth_user is not None:
        user = (
            auth_user.get("identity") if isinstance(auth_user, dict) else getattr(auth_user, "identity", None)
        )
        if user == "":
            user = None
    if user is None and oauth.user_key is not None:
        if isinstance(context, dict):
            user = context.get(oauth.user_key)
        elif context is not None:
            user = getattr(context, oauth.user_key, None)
        if user is None:
            user = configurable.get(oauth.user_key)
    if not isinstance(user, str) or not user or len(user) > _MAX_USER:
        return None
    return user


class _Call:
    """One call's view of its server, user and store."""

    def __init__(
        self, shared: Any, runtime: ToolRuntime | None, tool_name: str, tool_call_id: str | None
    ) -> None:
        self._setup(
            shared,
            tool_name,
            runtime.tool_call_id if runtime is not None else tool_call_id,
            runtime.config if runtime is not None else None,
            runtime.context if runtime is not None else None,
            runtime.store if runtime is not None else None,
        )

    @classmethod
    def of_run(cls, shared: Any, config: Mapping[str, Any] | None, context: Any, store: Any) -> _Call:
        """The view of a run that makes no call (its tools are listed for a model call)."""
        self = cls.__new__(cls)
        self._setup(shared, "", None, config, context, store)
        return self

    def _setup(
        self,
        shared: Any,
        tool_name: str,
        tool_call_id: str | None,
        config: Mapping[str, Any] | None,
        context: Any,
        store: Any,
    ) -> None:
        self.name: str = shared.name
        self.url: str = shared.config.url
        oauth = shared.config.oauth
        assert isinstance(oauth, UserOAuth)
        self.oauth = oauth
        self.sealer = Sealer(oauth.encryption_key)
        self.tool_name = tool_name
        self.tool_call_id = tool_call_id
        user = user_in(config, context, oauth)
        if user is None:
            raise MCPConnectionError(
                self.name,
                "the server acts for a user (per-user OAuth) but this run has no user: run it as an "
                "authenticated LangGraph user"
                + (f" or give '{oauth.user_key}' in its context" if oauth.user_key else ""),
            )
        self.user = user
        if not isinstance(store, BaseStore):
            raise MCPConnectionError(
                self.name, "per-user OAuth keeps tokens in the graph's store, and this graph has none"
            )
        self.store = store
        configurable = (config or {}).get("configurable") or {}
        thread = configurable.get("thread_id")
        self.thread = None if thread is None else str(thread)

    async def token(self, *, forget: bool = True) -> tuple[TokenRecord | None, bool]:
        """The user's usable tokens (refreshed if they expire soon), and whether there were any.
        Tokens given for another resource (the server's URL changed, or another graph's server
        of the same name) are not used. One refresh at a time per user and server in this
        process: a call that waited finds the tokens the other one stored.
        ``forget=False`` keeps tokens whose refresh was refused (the call that asks the user
        again forgets them).

        Raises:
            MCPConnectionError: the refresh could not be done now (the authorization server is
                unreachable or failing); the tokens are kept for the next call.
        """
        async with _refreshing(self.name, self.user):
            record = await load_tokens(self.store, self.sealer, self.user, self.name)
            if record is not None and not _same_resource(record.resource, self.url):
                return None, False
            if record is None or not record.expiring(self.oauth.refresh_margin):
                return record, record is not None
            return await self._refreshed(record, forget)

    async def _refreshed(self, record: TokenRecord, forget: bool) -> tuple[TokenRecord | None, bool]:
        if record.refresh_token is not None:
            try:
                async with flow.client() as http:
                    answer = await flow.refresh(http, record)
            except flow.RefusedGrant as exc:
                logger.info("MCP server %r: a token refresh was refused: %s", self.name, exc)
            except flow.OAuthProblem as exc:
                raise MCPConnectionError(
                    self.name, f"per-user OAuth: the token could not be refreshed now ({exc}); try again"
                ) from None
            else:
                record.access_token = answer["access_token"]
                record.expires_at = answer["expires_at"]
                record.refresh_token = answer.get("refresh_token") or record.refresh_token
                if isinstance(answer.get("scope"), str):
                    record.scopes = answer["scope"].split()
                await save_tokens(self.store, self.sealer, record)
                return record, True
        if forget:
            await delete_tokens(self.store, self.sealer, self.user, self.name)
        return None, True

    async def ask(self, reason: str, challenge: str | None, scopes: list[str] | None = None) -> Any:
        """Raise the ``mcp_authorization`` interrupt (the resumed run gets its resume value)."""
        try:
            async with flow.client() as http:
                found = await flow.discover(http, self.url, self.oauth, challenge)
                wanted = scopes if scopes is not None else found.scopes
                client = await self._client(http, found, wanted)
        except (flow.OAuthProblem, ValueError) as exc:
            raise MCPConnectionError(self.name, f"per-user OAuth: {exc}") from None
        pkce = PKCEParameters.generate()
        expires_at = time.time() + self.oauth.state_ttl
        pending = Pending(
            server=self.name,
            user=self.user,
            thread=self.thread,
            expires_at=expires_at,
            verifier=pkce.code_verifier,
            issuer=found.issuer,
            iss_supported=bool(found.metadata.authorization_response_iss_parameter_supported),
            token_endpoint=str(found.metadata.token_endpoint),
            client_id=client.client_id,
            redirect_uri=self.oauth.redirect_uri,
            resource=found.resource,
            scopes=wanted,
            client_secret=client.client_secret,
            auth_method=client.auth_method,
            revocation_endpoint=str(found.metadata.revocation_endpoint or "") or None,
        )
        state = await put_pending(self.store, self.sealer, pending)
        payload: MCPAuthorizationInterrupt = {
            "type": AUTHORIZATION_INTERRUPT_TYPE,
            "server": self.name,
            "tool_name": self.tool_name,
            "tool_call_id": self.tool_call_id,
            "url": flow.authorization_url(found, client, self.oauth.redirect_uri, state, pkce, wanted),
            "scopes": wanted,
            "issuer": found.issuer,
            "reason": reason,  # type: ignore[typeddict-item]
            "expires_at": expires_at,
        }
        return interrupt(payload)

    async def _client(
        self, http: httpx2.AsyncClient, found: flow.Discovered, wanted: list[str]
    ) -> flow.Client:
        dynamic = self.oauth.client_id is None and not should_use_client_metadata_url(
            found.metadata, self.oauth.client_metadata_url
        )
        redirect = self.oauth.redirect_uri
        if dynamic:
            kept = await load_client(self.store, self.sealer, self.name, found.issuer, redirect)
            if kept is not None and set(wanted) <= set(kept.get("scopes") or ()):
                return flow.Client(
                    kept["client_id"],
                    kept.get("client_secret"),
                    kept.get("auth_method", "none"),
                    kept.get("scopes"),
                )
        client = await flow.register(http, self.oauth, found, wanted)
        if dynamic:
            kept = {"client_id": client.client_id, "client_secret": client.client_secret}
            kept.update(auth_method=client.auth_method, scopes=client.scopes)
            await save_client(self.store, self.sealer, self.name, found.issuer, redirect, kept)
        return client


_REFRESH_LOCKS: dict[tuple[str, str], asyncio.Lock] = {}
_REFRESH_LOCKS_MAX = 4096


@asynccontextmanager
async def _refreshing(server: str, user: str) -> AsyncIterator[None]:
    key = (server, user)
    lock = _REFRESH_LOCKS.get(key)
    if lock is None:
        if len(_REFRESH_LOCKS) >= _REFRESH_LOCKS_MAX:  # drop the idle ones
            for idle in [k for k, v in _REFRESH_LOCKS.items() if not v.locked()]:
                del _REFRESH_LOCKS[idle]
        lock = _REFRESH_LOCKS[key] = asyncio.Lock()
    async with lock:
        yield


def _same_resource(resource: str, url: str) -> bool:
    """Were tokens for ``resource`` given for the server at ``url`` (the same origin, and the
    URL's path within the resource's)?"""
    a, b = urlsplit(resource), urlsplit(url)
    if (a.scheme.lower(), (a.netloc or "").lower()) != (b.scheme.lower(), (b.netloc or "").lower()):
        return False
    base = a.path.rstrip("/")
    return b.path == base or b.path.startswith(base + "/") or not base


async def _current_token(call: _Call, *, forget: bool = True) -> tuple[TokenRecord | None, bool]:
    """:meth:`_Call.token`, loaded again when a revocation ran meanwhile (what was loaded may be
    the revoked tokens); none when revocations keep coming."""
    for _ in range(3):
        before = _REVOKES[0]
        record, had = await call.token(forget=forget)
        if _REVOKES[0] == before:
            return record, had
    return None, False


def _bearer(shared: Any, user: str) -> UserBearer:
    users = _BEARERS.setdefault(shared, weakref.WeakValueDictionary())
    bearer = users.get(user)
    if bearer is None:
        bearer = users[user] = UserBearer()
    return bearer


@asynccontextmanager
async def user_session(
    pool: Any, shared: Any, runtime: ToolRuntime | None, tool_name: str, tool_call_id: str | None
) -> AsyncIterator[Any]:
    """The connection one call to per-user OAuth server ``shared`` runs on: the run's user's own,
    with the user's token; raises the ``mcp_authorization`` interrupt when the user must connect.

    Raises:
        MCPConnectionError: the run has no user or no store, discovery failed, or the user was
            asked and has still not connected when the run resumed.
        GraphInterrupt: the user is asked to connect.
    """
    call = _Call(shared, runtime, tool_name, tool_call_id)
    record, had = await _current_token(call)
    asked = False
    if record is None:
        await call.ask("expired" if had else "connect", None)
        asked = True
        record, _ = await _current_token(call)
        if record is None:
            raise MCPConnectionError(
                call.name,
                "the user has not connected their account to this server (authorization not completed)",
            )
    # No await between the check in _current_token and here: a revocation from now on finds
    # this bearer (and blanks its token).
    bearing = _Bearing(pool, shared, call, record)
    try:
        async with bearing.session() as connection:
            yield connection
    except MCPAuthenticationError as exc:
        status, challenge = bearing.refusal(exc)
        if asked:
            raise
        if status == 403 and "insufficient_scope" in challenge:
            needed = union_scopes(" ".join(record.scopes), " ".join(flow.challenge_scope(challenge)))
            await call.ask("step_up", challenge, (needed or "").split())
        elif status == 401:
            await delete_tokens(call.store, call.sealer, call.user, call.name)
            await call.ask("expired", challenge)
        raise


@asynccontextmanager
async def stored_user_session(pool: Any, shared: Any, user: str, store: Any) -> AsyncIterator[Any]:
    """The connection to per-user OAuth server ``shared`` of ``user``, with the tokens kept for
    them in ``store``, outside any run (an events subscription in a script or a deployment's
    process): nobody can be asked to connect here.

    Raises:
        MCPConnectionError: no store, or ``user`` has not connected their account (or their
            tokens expired and cannot be refreshed).
    """
    config = {"configurable": {"langgraph_auth_user": {"identity": user}}}
    call = _Call.of_run(shared, config, None, store)
    record, _had = await _current_token(call)
    if record is None:
        raise MCPConnectionError(
            call.name, "the user has not connected their account to this server (no usable tokens kept)"
        )
    # Not a run's _Bearing: nobody is asked for a step-up here, and this session may be held
    # across an async generator's yields (entered and left in different contexts).
    bearer = _bearer(shared, call.user)
    bearer.token, bearer.refused = record.access_token, None
    token = (record.access_token,)
    _POOLS.add(pool)
    with shared.redact.holding(token):
        async with pool.using(call.name, None, user=call.user, auth=bearer) as connection:
            with connection.redact.holding(token):
                yield connection


class _Bearing:
    """A call's user's own session to a per-user OAuth server, every request bearing the user's
    token (masked in what the server's connections log or raise while it is used), and the
    refusal a request met (HTTP 401/403 with its challenge)."""

    def __init__(self, pool: Any, shared: Any, call: _Call, record: TokenRecord) -> None:
        self.pool, self.shared, self.call, self.record = pool, shared, call, record
        self.seen: list[tuple[int, str]] = []
        self.bearer = _bearer(shared, call.user)
        self.bearer.token, self.bearer.refused = record.access_token, None

    def refusal(self, exc: MCPAuthenticationError) -> tuple[int, str]:
        """The status and challenge of the refusal behind ``exc``: the last one a request of
        this call met, else the session's own (its connect), else ``exc``'s status."""
        return self.seen[-1] if self.seen else (self.bearer.refused or (exc.status, ""))

    @asynccontextmanager
    async def session(self) -> AsyncIterator[Any]:
        call, token = self.call, (self.record.access_token,)
        _POOLS.add(self.pool)
        reset = _challenges.set(self.seen)
        try:
            with self.shared.redact.holding(token):  # a server that echoes it
                async with self.pool.using(
                    call.name, call.thread, user=call.user, auth=self.bearer
                ) as connection:
                    try:
                        # The user's own connection builds the call's messages: it masks the token too.
                        with connection.redact.holding(token):
                            yield connection
                    except MCPAuthenticationError:
                        connection.retry()  # a new token is tried at once, without the refusal's back-off
                        raise
        finally:
            _challenges.reset(reset)


class UserListing:
    """What a per-user OAuth server lists for the run's user, without asking anyone.

    ``tools`` is the user's own listing (what ``list_tools`` gave), or ``None`` when there is
    none: ``reason`` then says why
    (``"connect"``: the user has not connected; ``"expired"``: their token is gone or was
    refused; ``"step_up"``: it lacks scopes the server wants; ``"no_user"`` / ``"no_store"``:
    the run has no user, or the graph no store). ``user`` is the run's user, if any."""

    __slots__ = ("reason", "tools", "user")

    def __init__(self, user: str | None, tools: Any, reason: str | None = None) -> None:
        self.user = user
        self.tools = tools
        self.reason = reason

    def __repr__(self) -> str:
        listed = "None" if self.tools is None else "<listed>"
        return f"UserListing(user=<hidden>, tools={listed}, reason={self.reason!r})"


async def user_listing(
    pool: Any,
    shared: Any,
    *,
    config: Mapping[str, Any] | None,
    context: Any,
    store: Any,
    list_tools: Callable[[Any], Awaitable[Any]],
) -> UserListing:
    """The run's user's own listing of per-user OAuth server ``shared``: ``list_tools(connection)``
    on the user's session, with their token (refreshed if it expires soon). Never interrupts: a
    user who must connect (or connect again) gets a :class:`UserListing` saying why.

    Raises:
        MCPConnectionError: the server could not be reached, or the token could not be
            refreshed now.
    """
    oauth = per_user(shared)
    user = user_in(config, context, oauth)
    if user is None:
        return UserListing(None, None, "no_user")
    if not isinstance(store, BaseStore):
        return UserListing(user, None, "no_store")
    call = _Call.of_run(shared, config, context, store)
    record, had = await _current_token(call, forget=False)  # the call that asks forgets them
    if record is None:
        return UserListing(user, None, "expired" if had else "connect")
    bearing = _Bearing(pool, shared, call, record)
    try:
        async with bearing.session() as connection:
            tools = await list_tools(connection)
    except MCPAuthenticationError as exc:
        status, challenge = bearing.refusal(exc)
        if status == 403 and "insufficient_scope" in challenge:
            return UserListing(user, None, "step_up")
        if status == 401:
            # Kept: the call (or the sign-in tool) that meets the refusal next forgets them and
            # asks the user again, saying why.
            return UserListing(user, None, "expired")
        raise
    return UserListing(user, tools, None)


async def connect_user(
    pool: Any, shared: Any, runtime: ToolRuntime | None, tool_name: str, tool_call_id: str | None
) -> list[Any]:
    """Connect the run's user to per-user OAuth server ``shared``: the ``mcp_authorization``
    interrupt when they have no usable token (or the server refuses it, or wants more scopes),
    then, once the run resumes with the token stored, their listing, made with it. A user already
    connected is not asked.

    Raises:
        MCPConnectionError: the run has no user or no store, discovery failed, or the user was
            asked and has still not connected when the run resumed.
        GraphInterrupt: the user is asked to connect.
    """
    async with user_session(pool, shared, runtime, tool_name, tool_call_id) as connection:
        tools: list[Any] = await connection.list_tools()
        return tools


def per_user(shared: Any) -> UserOAuth:
    oauth = getattr(shared.config, "oauth", None)
    assert isinstance(oauth, UserOAuth), "a per-user OAuth server"
    return oauth
