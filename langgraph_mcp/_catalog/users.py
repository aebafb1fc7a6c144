"""Per-user catalogs: the tools of servers that act for each user, as one run's user sees them.

A per-user OAuth server (``oauth`` with the ``authorization_code`` flow) is spoken to as a user:
its session, its listing and its calls are each user's own. A face's shared tools
(:attr:`~langgraph_mcp._catalog.bind.ToolSet.bound`) hold what such a server lists to anyone (often
nothing: most remote servers list only for a signed-in user). :class:`UserCatalogs` works out, for
one run, the tools its user is offered (:class:`RunTools`):

* the user has connected: the server's public tools are replaced by the user's own listing, made
  on the user's session with their token, cached by that session as any listing is (the server's
  TTL hints, ``list_changed``), and bound to the face's options;
* the user has not connected (or their token was refused): the public tools stay; a server that
  lists nothing publicly is stood for by one small tool, ``connect_<server>``, whose call asks the
  user to connect (the ``mcp_authorization`` interrupt) and, after the resume, says what the
  server now offers; the next model call is offered the user's own tools;
* the run has no user: the public tools only.

A server whose runs carry their user's credentials (``ToolOptions(headers=..., per_user=True)``)
is per user the same way, with those credentials in place of a token: each distinct set of them
lists on sessions of its own; a run without them is offered none of the server's tools (there is
no sign-in tool: the credentials come with the run).

Users whose listings are the same share one built and bound tool set (memory grows with distinct
listings, not with users): a listing is known by a digest of its content. A user's listing is
never written anywhere another user reads: not to the persisted tool catalog, not to logs (a
warning about a user's tools names the server, never a tool).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import mcp_types as types
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt import ToolRuntime

from langgraph_mcp._call.adapter import build_tool
from langgraph_mcp._catalog.bind import Bound, ToolSet
from langgraph_mcp._catalog.naming import build_catalog, safe_tool_name
from langgraph_mcp._oauth.calls import UserListing, connect_user, user_listing
from langgraph_mcp._oauth.options import per_user_oauth
from langgraph_mcp._pool.credentials import credential_key, credential_session
from langgraph_mcp._pool.resources import with_read_tool
from langgraph_mcp._session import ServerConnection
from langgraph_mcp._support.pace import Pace
from langgraph_mcp._support.sync import run_sync
from langgraph_mcp.errors import MCPAuthenticationError, MCPConnectionError

__all__ = ["RunTools", "UserCatalogs", "is_signin", "signin_tool"]

logger = logging.getLogger("langgraph_mcp.tools")

_MAX_COMPOSED = 1024
"""Distinct tool sets kept (a set per distinct combination of users' listings): the least
recently used beyond this are dropped (and built again when a user needs one)."""
_MAX_COMPOSED_TOOLS = 20_000
"""The tools of the kept sets, together: large listings keep fewer sets (a bound tool is a few
kilobytes)."""
_NONE = "none"
"""The digest standing for no listing: the server offers the run nothing."""


def _no_stream(_: Any) -> None:
    """The stream writer of a ``ToolRuntime`` made outside a tool call (nothing is streamed)."""


@dataclasses.dataclass(frozen=True, eq=False)
class RunTools:
    """The tools one run's user is offered: the bound MCP tools (shared ones, and the user's own
    for per-user servers they connected) and the sign-in tools standing for the per-user servers
    they have not connected."""

    bound: Bound
    signin: tuple[BaseTool, ...] = ()
    """The sign-in tools the model is offered (for the per-user servers the user has not
    connected)."""
    serves: Mapping[str, BaseTool] = dataclasses.field(default_factory=dict)
    """Every sign-in tool a call may name, offered or not (a call made before the user connected
    still runs once they have: it then says they are connected)."""


class UserCatalogs:
    """The per-user part of one face's tools (see the module docstring)."""

    def __init__(self, toolset: ToolSet) -> None:
        self.toolset = toolset
        self.pool = toolset.pool
        self._composed: OrderedDict[tuple[Any, ...], tuple[Bound, RunTools]] = OrderedDict()
        self._signin: dict[tuple[str, str], BaseTool] = {}
        self._serves: dict[str, BaseTool] = {}
        self._plain: RunTools | None = None
        self._kept = 0
        """The tools of the sets in ``_composed``, together."""
        for name in self.servers:
            if per_user_oauth(self.pool.servers[name]) is not None:
                self._signin_tool(name, set())

    @property
    def servers(self) -> list[str]:
        """The per-user servers, in configuration order (per-user OAuth, or credentials in
        headers: a face may mark a shared pool's server so after this one was made)."""
        return [name for name in self.pool.servers if name in self.pool.per_user_servers]

    @property
    def active(self) -> bool:
        """Are some servers per user (else every run sees the shared tools)?"""
        return bool(self.pool.per_user_servers)

    def shared(self) -> RunTools:
        """The shared tools (no I/O): what a run is offered when it has no tools of its own. The
        same object while the shared tools and sign-in tools stay the same (a face keeps what it
        derives from it)."""
        plain = self._plain
        if plain is None or plain.bound is not self.toolset.bound or plain.serves is not self._serves:
            plain = self._plain = RunTools(self.toolset.bound, serves=self._serves)
        return plain

    async def for_run(
        self, *, config: Mapping[str, Any] | None, context: Any, store: Any, state: Any = None
    ) -> RunTools:
        """The tools the run's user is offered (the shared ones when no server is per user).
        Lists each per-user server for the user (on their session, with their token or
        credentials); a server that cannot be reached now offers them nothing until it answers.
        ``state``: the run's graph state (the ``ToolRuntime`` a ``headers`` function is given)."""
        shared = self.toolset.bound
        servers = self.servers
        if not servers:
            return self.shared()
        listings = await asyncio.gather(
            *(self._listing(name, config, context, store, state) for name in servers)
        )
        own: dict[str, tuple[list[types.Tool], str]] = {}
        signin: list[str] = []
        public = {t.server for t in shared.tools}
        for name, listing in zip(servers, listings, strict=True):
            if listing.tools is not None:
                listed: _Listed = listing.tools
                own[name] = (listed.tools, listed.digest)
            elif (
                listing.user is not None
                and listing.reason in ("connect", "expired", "step_up")
                and name not in public
            ):
                signin.append(name)
            elif name in public and self._credentialed(name):
                own[name] = ([], _NONE)  # credentials or none: never the listing made without them
        if not own and not signin:
            return self.shared()
        key = (id(shared), tuple((name, digest) for name, (_, digest) in own.items()), tuple(signin))
        found = self._composed.get(key)
        if found is not None and found[0] is shared:
            self._composed.move_to_end(key)
            return found[1]
        tools = await self._compose(shared, {name: tools for name, (tools, _) in own.items()}, signin)
        self._composed[key] = (shared, tools)
        self._kept += len(tools.bound.tools)
        while len(self._composed) > 1 and (
            len(self._composed) > _MAX_COMPOSED or self._kept > _MAX_COMPOSED_TOOLS
        ):
            _, (_, dropped) = self._composed.popitem(last=False)
            self._kept -= len(dropped.bound.tools)
        return tools

    def _credentialed(self, server: str) -> bool:
        return per_user_oauth(self.pool.servers[server]) is None

    async def _listing(self, server: str, config: Any, context: Any, store: Any, state: Any) -> UserListing:
        shared = self.pool.connection(server)
        try:
            if self._credentialed(server):
                return await self._credential_listing(server, config, context, store, state)
            return await user_listing(
                self.pool, shared, config=config, context=context, store=store, list_tools=_listed
            )
        except GraphBubbleUp:
            raise
        except Exception as exc:  # a server down, a store failing: that server only, that run only
            self.pool.warn_once(
                logger,
                "MCP server %r could not list a user's tools (%s); its tools are left out of that "
                "user's runs until it answers",
                server,
                _kind(exc),
                key=f"user listing {server} {type(exc).__name__}",
            )
            return UserListing(None, None, "unreachable")

    async def _credential_listing(
        self, server: str, config: Any, context: Any, store: Any, state: Any
    ) -> UserListing:
        """The listing made with the run's credentials (``per_user`` headers of this face's
        ``server_options``); none without them, or when the server refuses them."""
        options = self.toolset.server_options.get(server)
        if options is None or not options.per_user or options.headers is None:
            self.pool.warn_once(
                logger,
                "MCP server %r acts for each user by the credentials another node or middleware on "
                "this pool gives (per_user headers); this one gives none, so it offers none of its "
                "tools: give it the same server_options",
                server,
                key=f"per_user elsewhere {server}",
            )
            return UserListing(None, None, "no_credentials")
        runtime = ToolRuntime(
            state=state,
            context=context,
            config=dict(config or {}),  # type: ignore[arg-type]
            stream_writer=_no_stream,
            tool_call_id=None,
            store=store,
        )
        try:
            headers = options.headers(runtime)
        except Exception as exc:  # the user's function: its run gets no tools, others are not touched
            self.pool.warn_once(
                logger,
                "MCP server %r: the per_user headers function failed (%s); that run is offered none of "
                "its tools",
                server,
                type(exc).__name__,
                key=f"credentials failed {server} {type(exc).__name__}",
            )
            return UserListing(None, None, "no_credentials")
        if not headers or not any(headers.values()):
            return UserListing(None, None, "no_credentials")
        configurable = (config or {}).get("configurable") or {}
        thread = configurable.get("thread_id")
        try:
            async with credential_session(
                self.pool, server, None if thread is None else str(thread), headers
            ) as connection:
                tools = await _listed(connection)
        except MCPAuthenticationError:
            self.pool.warn_once(
                logger,
                "MCP server %r refused a run's credentials (per_user headers); that run is offered "
                "none of its tools",
                server,
                key=f"credentials refused {server}",
            )
            return UserListing(None, None, "refused")
        return UserListing(credential_key(headers), tools)

    async def _compose(
        self, shared: Bound, own: Mapping[str, list[types.Tool]], signin: list[str]
    ) -> RunTools:
        """The shared tools with the servers in ``own`` replaced by those listings (named after
        the shared tools, which keep theirs; an empty listing: the server offers nothing), bound to
        the face's options; and a sign-in tool for each server in ``signin``."""
        kept = [t for t in shared.tools if t.server not in own]
        # A user's tool never takes a shared tool's name, a withheld one's, or a sign-in tool's.
        taken = set(self.toolset.reserved) | {t.name for t in kept} | set(shared.withheld) | set(self._serves)
        previous = {(t.server, t.mcp_name): t.name for t in shared.tools if t.server in own}
        entries = build_catalog(
            own,
            {name: self.pool.servers[name] for name in self.servers if name in own},
            reserved=taken,
            previous=previous,
            warn=self._private_warning,
        )
        built = []
        pace = Pace()  # a user's listing may hold thousands of tools: let other runs go on
        for entry in entries:
            await pace()
            built.append(build_tool(entry, self.pool.connection(entry.server), self.pool))
        _, bound, withheld, _ = await self.toolset.bind(built, {}, private=True)
        order = {name: i for i, name in enumerate(self.pool.servers)}
        tools = sorted([*kept, *bound], key=lambda t: order[t.server])  # stable: listing order kept
        merged = Bound(tools, {**shared.withheld, **withheld})
        taken = {t.name for t in tools} | set(self.toolset.reserved) | set(merged.withheld)
        return RunTools(merged, tuple(self._signin_tool(name, taken) for name in signin), serves=self._serves)

    def _private_warning(self, msg: str, *args: Any) -> None:
        """Naming warnings about a user's listing, without the names (they are that user's)."""
        server = next((a for a in args if isinstance(a, str) and a in self.pool.servers), None)
        self.pool.warn_once(
            logger,
            "MCP server %r lists a tool for a user whose name is taken or repeated; it is exposed "
            "under another name (give the server a 'prefix' for stable names)",
            server,
            key=f"private name {server}",
        )

    def _signin_tool(self, server: str, taken: set[str]) -> BaseTool:
        base = safe_tool_name(f"connect_{server}")
        name, n = base, 2
        while name in taken:
            name = safe_tool_name(f"{base}_{n}")
            n += 1
        key = (server, name)
        tool = self._signin.get(key)
        if tool is None:
            tool = self._signin[key] = signin_tool(self.pool.connection(server), name, self.pool)
            self._serves = {**self._serves, name: tool}  # swapped whole: runs in flight keep theirs
        return tool


class _Listed:
    """A user's listing and a digest of its content (the same tools give the same digest, whoever
    listed them)."""

    __slots__ = ("digest", "tools")

    def __init__(self, tools: list[types.Tool], digest: str) -> None:
        self.tools = tools
        self.digest = digest


_DIGEST = "catalog: listing digest"


async def _listed(connection: ServerConnection) -> _Listed:
    """The listing of ``connection`` (a user's), with its digest: worked out once per listing, and
    kept on the connection, so it goes with the user's session."""
    listing = await connection.list_tools()
    memo = connection.attached.get(_DIGEST)
    if isinstance(memo, tuple) and memo[0] is listing:
        return memo[1]  # type: ignore[no-any-return]
    tools = await with_read_tool(connection, listing)
    digest = hashlib.sha256()
    pace = Pace()  # a listing of thousands of tools takes a while: let other runs go on
    for tool in tools:
        await pace()
        body = json.dumps(tool.model_dump(mode="json", by_alias=True, exclude_none=True), sort_keys=True)
        digest.update(body.encode())
        digest.update(b"\0")
    listed = _Listed(tools, digest.hexdigest())
    connection.attached[_DIGEST] = (listing, listed)
    return listed


def _kind(exc: Exception) -> str:
    return type(exc).__name__


def signin_tool(shared: ServerConnection, name: str, pool: Any) -> BaseTool:
    """The tool standing for per-user server ``shared`` until the run's user connects: its call
    asks the user to connect (the ``mcp_authorization`` interrupt) and, once the run resumes with
    their token stored, lists the server's tools for them and says which."""

    async def connect(runtime: ToolRuntime) -> str:
        try:
            tools = await connect_user(pool, shared, runtime, name, runtime.tool_call_id)
        except MCPConnectionError as exc:
            raise ToolException(f"Error: {exc}") from None
        names = ", ".join(t.name for t in tools[:50]) or "none"
        return (
            f"Connected to MCP server {shared.name!r}: its tools are offered from the next step "
            f"({len(tools)}: {names})."
        )

    def connect_sync(runtime: ToolRuntime) -> str:
        return run_sync(lambda: connect(runtime), pool=pool)

    return StructuredTool.from_function(
        func=connect_sync,
        coroutine=connect,
        name=name,
        description=(
            f"Connect the user's account to the MCP server {shared.name!r}. Its tools are offered "
            "only once the user has connected: call this when the user asks for something that "
            f"{shared.name!r} may do. The user is asked to sign in; afterwards its tools are offered."
        ),
        handle_tool_error=True,
        metadata={"mcp": {"server": shared.name, "signin": True}},
    )


def is_signin(tool: Any) -> bool:
    """Is ``tool`` a sign-in tool (see :func:`signin_tool`)?"""
    meta = getattr(tool, "metadata", None) or {}
    mcp = meta.get("mcp") if isinstance(meta, Mapping) else None
    return isinstance(mcp, Mapping) and bool(mcp.get("signin"))
