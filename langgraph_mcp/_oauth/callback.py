"""The per-user OAuth pieces a deployment mounts, as the public :mod:`langgraph_mcp.oauth` offers
them: the callback app, the store rule, revocation. The face's docstring states the contract."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlencode

from langgraph.store.base import BaseStore
from langgraph_sdk import Auth
from mcp.client.auth import OAuthFlowError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from langgraph_mcp._oauth import flow
from langgraph_mcp._oauth.calls import evict, known_keys
from langgraph_mcp._oauth.options import UserOAuth
from langgraph_mcp._oauth.records import (
    MAX_STATE,
    OtherUser,
    Sealer,
    TokenRecord,
    delete_tokens,
    load_tokens,
    save_tokens,
    split_state,
    take_pending,
)
from langgraph_mcp.errors import MCPConfigError

__all__ = ["PACKAGE_NAMESPACE", "guard_store", "oauth_callback_app", "revoke"]

logger = logging.getLogger("langgraph_mcp.oauth")

StoreSource = BaseStore | Callable[[], BaseStore | Awaitable[BaseStore]]
_MAX_CODE = 4096


def _oauth_of(servers: Mapping[str, Any], server: str) -> UserOAuth | None:
    config = servers.get(server)
    oauth = getattr(config, "oauth", None)
    return oauth if isinstance(oauth, UserOAuth) else None


async def _resolve(store: StoreSource) -> BaseStore:
    if isinstance(store, BaseStore):
        return store
    made = store()
    return await made if inspect.isawaitable(made) else made


def _without_code(query: Any) -> bytes:
    return urlencode([(k, "-" if k == "code" else v) for k, v in query.multi_items()]).encode("ascii")


def _page(status: int, title: str, text: str) -> HTMLResponse:
    body = f"<!doctype html><title>{title}</title><h1>{title}</h1><p>{text}</p>"
    return HTMLResponse(body, status_code=status, headers={"Cache-Control": "no-store"})


def oauth_callback_app(
    servers: Mapping[str, Any],
    *,
    store: StoreSource,
    user_of: Callable[[Request], str | Awaitable[str | None] | None],
    path: str = "/callback",
) -> Starlette:
    """A Starlette app with the OAuth redirect route (``GET <path>``) of per-user OAuth servers.

    The route checks the ``state`` the authorization server sends back (signed with the server's
    ``encryption_key``, bound to the user, server and thread it was made for, good once and only
    until ``state_ttl``), the ``iss`` of the answer (RFC 9207), exchanges the code with the PKCE
    verifier kept for it, and stores the user's tokens, sealed, in ``store``. Anything else
    (a tampered, expired or reused ``state``, a refused authorization, a failed exchange) is
    answered with HTTP 400 and stores nothing. No token, code or secret is shown or logged.

    Args:
        servers: The server configurations by name (``load_connections(...)`` or the mapping
            given to ``MCPPool``); only those with ``oauth`` are served.
        store: The graph's store (the one the runs use), or a function returning it (for a
            store made when the server starts).
        path: The route's path inside the app.
        user_of: Who the browser is signed in as, for the deployment (e.g. from its session
            cookie, or ``request.user.identity`` behind LangGraph's custom auth with
            ``enable_custom_route_auth``); ``None`` when nobody is. A callback whose ``state``
            was made for another user, or from a browser signed in as nobody, is refused:
            otherwise a link made for one user, opened by another, would attach the second
            person's account to the first (or the reverse). Required.

    Example::

        app = Starlette()
        app.mount(
            "/oauth",
            oauth_callback_app(load_connections(".mcp.json"), store=store, user_of=signed_in_user),
        )
    """
    configs = servers

    async def callback(request: Request) -> HTMLResponse:
        query = request.query_params
        # Read once: the request's log line (uvicorn's, LangGraph server's, written from this
        # same scope) then shows the code blanked.
        request.scope["query_string"] = _without_code(query)
        state = query.get("state", "")
        parts = split_state(state) if 0 < len(state) <= MAX_STATE else None
        oauth = _oauth_of(configs, parts[0]) if parts is not None else None
        if parts is None or oauth is None:
            return _page(400, "Not connected", "This link is not valid.")
        server, nonce, mac = parts
        sealer = Sealer(oauth.encryption_key)
        if not callable(user_of):  # fails closed: nobody can be told apart
            return _page(400, "Not connected", "This deployment cannot tell who you are.")
        browser = user_of(request)
        if inspect.isawaitable(browser):
            browser = await browser
        try:  # whose it is, checked before it is spent: another user's visit leaves it to its owner
            pending = await take_pending(
                await _resolve(store), sealer, server, nonce, mac, owner=lambda user: browser == user
            )
        except OtherUser:
            logger.warning("MCP server %r: an OAuth callback from another user than the link's", server)
            return _page(400, "Not connected", "This link was made for someone else.")
        if pending is None:
            logger.info("MCP server %r: an OAuth callback with an unknown, used or expired state", server)
            return _page(400, "Not connected", "This link has expired or was already used; try again.")
        if "error" in query:
            return _page(400, "Not connected", "The authorization was refused.")
        code = query.get("code", "")
        if not code or len(code) > _MAX_CODE:
            return _page(400, "Not connected", "The answer holds no authorization code.")
        try:
            flow.check_iss(query.get("iss"), pending.issuer, pending.iss_supported)
            async with flow.client() as http:
                answer = await flow.exchange(http, pending, code)
        except (flow.OAuthProblem, OAuthFlowError) as exc:
            logger.warning("MCP server %r: an OAuth callback failed: %s", server, exc)
            return _page(400, "Not connected", "The authorization could not be completed; try again.")
        scope = answer.get("scope")
        record = TokenRecord(
            user=pending.user,
            server=server,
            issuer=pending.issuer,
            access_token=answer["access_token"],
            token_endpoint=pending.token_endpoint,
            client_id=pending.client_id,
            resource=pending.resource,
            refresh_token=answer.get("refresh_token")
            if isinstance(answer.get("refresh_token"), str)
            else None,
            expires_at=answer["expires_at"],
            scopes=scope.split() if isinstance(scope, str) else list(pending.scopes),
            client_secret=pending.client_secret,
            auth_method=pending.auth_method,
            revocation_endpoint=pending.revocation_endpoint,
        )
        await save_tokens(await _resolve(store), sealer, record)
        return _page(200, "Connected", "You can close this window and go back to the conversation.")

    return Starlette(routes=[Route(path, callback, methods=["GET"])])


async def revoke(store: BaseStore, user: str, server: str, *, config: Any = None) -> None:
    """Forget ``user``'s tokens for ``server`` and close their sessions to it (in every pool of
    this process, calls in flight included): their next call asks them to connect again.

    Args:
        store: The store the tokens are kept in (the graph's).
        user: The user, as the runs name them (see the guide).
        server: The server's name.
        config: The server's configuration (an ``HTTPServerConfig`` with ``oauth``). Given, the
            tokens are also revoked at the authorization server (RFC 7009), when it has a
            revocation endpoint; a failure there is logged (without the tokens) and the tokens
            are forgotten all the same. Its ``oauth.encryption_key`` also names the store keys
            the tokens are kept under (keyed digests); not given, the key is taken from the pools
            of this process that opened a session to ``server``.

    Raises:
        MCPConfigError: ``config`` was not given and no pool of this process knows the server's
            key (the sessions are closed all the same; call again with ``config``).

    Example::

        await revoke(store, "alice", "mail", config=servers["mail"])
    """
    oauth = getattr(config, "oauth", None)
    if isinstance(oauth, UserOAuth):
        record = await load_tokens(store, Sealer(oauth.encryption_key), user, server)
        if record is not None and record.revocation_endpoint is not None:
            tokens = [(record.refresh_token, "refresh_token"), (record.access_token, "access_token")]
            try:
                async with flow.client() as http:
                    for token, hint in tokens:
                        if token is not None:
                            status = await flow.revoke_token(http, record, token, hint)
                            if status != 200:
                                logger.warning("MCP server %r: revoking a %s: HTTP %d", server, hint, status)
            except flow.OAuthProblem as exc:
                logger.warning("MCP server %r: revoking tokens failed: %s", server, exc)
    keys = [oauth.encryption_key] if isinstance(oauth, UserOAuth) else known_keys(server)
    if not keys:
        evict(server, user)
        raise MCPConfigError(
            server,
            None,
            f"revoke() cannot find {server!r}'s tokens without its key: they are kept under a key "
            "derived from its oauth encryption_key. Pass config=<the server's configuration>.",
        )
    await delete_tokens(store, [Sealer(k) for k in keys], user, server)
    evict(server, user)


PACKAGE_NAMESPACE: tuple[str, ...] = ("langgraph_mcp",)
"""The first label of every namespace the package keeps records under in a store: per-user OAuth
tokens, sign-ins in progress and registered clients (``("langgraph_mcp", "oauth", ...)``), large
tool outputs, the tool catalog."""


async def guard_store(ctx: Auth.types.AuthContext, value: Any) -> None:
    """A LangGraph custom-auth rule for the store API: refuses (HTTP 403) every request that
    reads, writes, deletes or searches the package's records (:data:`PACKAGE_NAMESPACE`), and
    lets every other one through unchanged. A search must name a namespace prefix that leaves
    them out (an empty prefix would reach them); listing namespaces shows only their names, and
    is let through. The graph itself, and the OAuth callback route, reach the store directly,
    not through this API: they are not affected.

    A LangGraph server runs one store rule per request (the most specific one registered), and
    a deployment whose auth has no store rule lets every signed-in user read and delete any
    item. Register this one, or call it **last** in your own, on the namespace your rule hands
    to the store (a rule that puts the user's identity first must be checked after it does: a
    user named ``langgraph_mcp`` would otherwise reach every user's records)::

        from langgraph_sdk import Auth
        from langgraph_mcp.oauth import guard_store

        auth = Auth()
        auth.on.store()(guard_store)

        # or, with a store rule of your own:
        @auth.on.store()
        async def store_rule(ctx: Auth.types.AuthContext, value: dict) -> None:
            value["namespace"] = (ctx.user.identity, *value["namespace"])
            await guard_store(ctx, value)

    A search whose first label is the start of ``langgraph_mcp`` (``("langgraph",)``) is refused
    too: a store that matches prefixes as text would reach the package's records through it.

    Raises:
        langgraph_sdk.Auth.exceptions.HTTPException: 403, the request reaches the package's records.
    """
    namespace = value.get("namespace") if isinstance(value, Mapping) else None
    labels = tuple(namespace) if isinstance(namespace, list | tuple) else ()
    action = getattr(ctx, "action", None)
    if action == "list_namespaces":
        return
    ours = labels[: len(PACKAGE_NAMESPACE)] == PACKAGE_NAMESPACE
    searching = action not in ("put", "get", "delete")
    reaches_all = not labels and searching  # a search of everything
    # A search whose first label is the start of ours: a store matching prefixes as text
    # ("langgraph%") would reach our records through it.
    as_text = (
        searching
        and bool(labels)
        and isinstance(labels[0], str)
        and PACKAGE_NAMESPACE[0].startswith(labels[0])
    )
    if ours or reaches_all or as_text:
        raise Auth.exceptions.HTTPException(
            status_code=403,
            detail="the store items under ('langgraph_mcp', ...) are not served through this API",
        )
