"""Which skills a run may load, and the session a skill's files are read on.

A server's skills are its ``skills/list`` listing (cached by the session like its other listings:
the server's ``ttlMs``, a change of its resources, a reconnect), checked once per listing
(:func:`~langgraph_mcp._skills.entries.check_entry`). Nothing else is read: a skill's files are
fetched only when the skill is loaded (:mod:`langgraph_mcp._skills.loader`).

Where a server acts for each user, so do its skills: a per-user OAuth server is listed on the
run's user's session with their token (a user who has not connected is offered none of its
skills; the MCP middleware's ``connect_<server>`` tool signs them in), and a server whose runs
carry credentials (``ToolOptions(headers=..., per_user=True)``) on the session of those
credentials. A ``session_scope: "thread"`` server is listed and read on the run's thread session.
Servers that do not declare the extension, that turn it off (``skills: false``), or ``lazy``
servers not started yet offer none.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Collection, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from typing import Any

from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt import ToolRuntime

from langgraph_mcp._oauth.calls import user_listing, user_session
from langgraph_mcp._oauth.options import per_user_oauth
from langgraph_mcp._pool.credentials import credential_session
from langgraph_mcp._pool.pool import MCPPool
from langgraph_mcp._session import ServerConnection
from langgraph_mcp._session.skills import SkillEntry, declares_skills, get_skill
from langgraph_mcp._skills.entries import MCPSkill, SkillSet, check_entry
from langgraph_mcp._support.pace import Pace
from langgraph_mcp.errors import MCPConfigError, MCPConnectionError, MCPError, MCPServerError

__all__ = ["Run", "SkillCatalog"]

logger = logging.getLogger("langgraph_mcp.skills")

_CHECKED = "skills: checked listing"

Headers = Callable[[ToolRuntime], Mapping[str, str] | None]
"""A ``per_user`` server's credentials for one run (``ToolOptions.headers``)."""


class Run:
    """What of a run decides its skills: its config (thread, user), context, store and state."""

    __slots__ = ("config", "context", "state", "store")

    def __init__(self, config: Any, context: Any, store: Any, state: Any) -> None:
        self.config, self.context, self.store, self.state = config, context, store, state

    @classmethod
    def of(cls, runtime: ToolRuntime) -> Run:
        return cls(runtime.config, runtime.context, runtime.store, runtime.state)

    @property
    def thread(self) -> str | None:
        configurable = (self.config or {}).get("configurable") or {}
        thread = configurable.get("thread_id")
        return None if thread is None else str(thread)

    def runtime(self, tool_call_id: str | None = None) -> ToolRuntime:
        return ToolRuntime(
            state=self.state,
            context=self.context,
            config=dict(self.config or {}),  # type: ignore[arg-type]
            stream_writer=lambda _: None,
            tool_call_id=tool_call_id,
            store=self.store,
        )


class SkillCatalog:
    """The skills of ``pool``'s servers (``servers``: only those; default every server), for
    one run at a time. ``credentials`` gives each ``per_user`` server's headers function."""

    def __init__(
        self,
        pool: MCPPool,
        *,
        servers: Collection[str] | None = None,
        credentials: Mapping[str, Headers] | None = None,
    ) -> None:
        self.pool = pool
        names = list(pool.connections) if servers is None else list(servers)
        for name in names:
            pool.connection(name)  # MCPUnknownServerError names what is configured
        self.servers = tuple(names)
        self.credentials = dict(credentials or {})
        for name in self.credentials:
            if name not in pool.connections:
                raise MCPConfigError(name, "server_options", "no MCP server of that name is configured")

    async def for_run(self, run: Run) -> SkillSet:
        """The skills ``run`` may load, from every server that lists some for it (a server that
        cannot be reached now offers none, with a warning; the others are not held up)."""
        listed = await asyncio.gather(*(self._server_skills(server, run) for server in self.servers))
        return SkillSet.of(skill for server in listed for skill in server)

    async def get(self, ref: str, run: Run, runtime: ToolRuntime | None = None) -> MCPSkill | str:
        """The skill whose ``SKILL.md`` is at the URI ``ref`` (``<server>:<uri>``, or the URI alone
        where one server offers skills), as its server answers ``skills/get`` now; or why not."""
        server, uri = None, ref
        for name in sorted(self.servers, key=len, reverse=True):
            if ref.startswith(name + ":") and "://" in ref[len(name) + 1 :]:
                server, uri = name, ref[len(name) + 1 :]
                break
        if server is None:
            offering = [s for s in self.servers if self._offers(s) and _declared(self.pool.connection(s))]
            if len(offering) != 1:
                return f"no listed skill is at {ref!r}: name its server, as '<server>:{ref}'"
            server = offering[0]
        if not self._offers(server):
            return f"MCP server {server!r} offers no skills here"
        try:
            async with self.session(server, run, runtime) as connection:
                await connection.connect()
                if not declares_skills(connection):
                    return f"MCP server {server!r} does not offer skills"
                entry = await get_skill(connection, uri)
        except GraphBubbleUp:
            raise
        except MCPServerError as exc:
            return f"MCP server {server!r} serves no skill at {uri!r} ({exc.reason})"
        except MCPError as exc:
            return f"MCP server {server!r} could not be asked for the skill at {uri!r}: {exc}"
        checked = check_entry(server, entry)
        return (
            checked if isinstance(checked, MCPSkill) else f"the skill at {uri!r} cannot be loaded: {checked}"
        )

    def _offers(self, server: str) -> bool:
        connection = self.pool.connection(server)
        return bool(connection.config.skills) and not self.pool.waiting(server)

    async def _server_skills(self, server: str, run: Run) -> tuple[MCPSkill, ...]:
        if not self._offers(server):
            return ()
        try:
            if self.pool.per_user(server):
                return await self._user_skills(server, run)
            async with self.session(server, run) as connection:
                return await _checked(connection)
        except GraphBubbleUp:
            raise
        except Exception as exc:  # that server only, that run only
            self.pool.warn_once(
                logger,
                "MCP server %r: its skills could not be listed (%s); they are left out until it answers",
                server,
                type(exc).__name__,
                key=f"skills {server} {type(exc).__name__}",
            )
            return ()

    async def _user_skills(self, server: str, run: Run) -> tuple[MCPSkill, ...]:
        shared = self.pool.connection(server)
        if per_user_oauth(shared.config) is not None:
            listing = await user_listing(
                self.pool,
                shared,
                config=run.config,
                context=run.context,
                store=run.store,
                list_tools=_checked,
            )
            return tuple(listing.tools or ())  # a user who has not connected: none
        headers = self._headers(server, run)
        if headers is None:
            return ()
        async with credential_session(self.pool, server, run.thread, headers) as connection:
            return await _checked(connection)

    def _headers(self, server: str, run: Run) -> Mapping[str, str] | None:
        function = self.credentials.get(server)
        if function is None:
            self.pool.warn_once(
                logger,
                "MCP server %r acts for each user by the credentials its runs carry (per_user "
                "headers), and the skills middleware was given no headers function for it: give it "
                "the same server_options as the MCP middleware",
                server,
                key=f"skills no credentials {server}",
            )
            return None
        headers = function(run.runtime())
        return headers if headers and any(headers.values()) else None

    def session(
        self, server: str, run: Run, runtime: ToolRuntime | None = None
    ) -> AbstractAsyncContextManager[ServerConnection]:
        """The session ``run`` reads ``server``'s skill files on: the user's own for a per-user
        server (a per-user OAuth server asks the user to connect, as a tool call does), the
        thread's for a ``session_scope: "thread"`` server, else the shared one.

        Raises:
            MCPConnectionError: a per-user server and the run has no user or credentials.
            GraphInterrupt: the user is asked to connect (per-user OAuth, with ``runtime``).
        """
        pool = self.pool
        shared = pool.connection(server)
        if pool.per_user(server):
            if per_user_oauth(shared.config) is not None:
                if runtime is None:
                    raise MCPConnectionError(server, "its skills are read only in a run of a signed-in user")
                return user_session(pool, shared, runtime, "load_skill", runtime.tool_call_id)
            return _credentialed(pool, server, run.thread, self._headers(server, run))
        if shared.config.session_scope != "thread" or run.thread is None:
            return nullcontext(shared)
        return pool.using(server, run.thread)


@asynccontextmanager
async def _credentialed(
    pool: MCPPool, server: str, thread: str | None, headers: Mapping[str, str] | None
) -> AsyncIterator[ServerConnection]:
    async with credential_session(pool, server, thread, headers) as connection:
        yield connection


def _declared(connection: ServerConnection) -> bool:
    """Did the server declare skills (``True`` too while it has not connected yet: it is asked)."""
    return not connection.server_extensions or declares_skills(connection)


async def _checked(connection: ServerConnection) -> tuple[MCPSkill, ...]:
    """The loadable skills of ``connection``'s listing (none where the server does not declare
    the extension), checked once per listing; an entry that cannot be loaded is left out with a
    warning naming the server (and, on a shared session, the skill)."""
    await connection.connect()
    if not declares_skills(connection):
        return ()
    listing: list[SkillEntry] = await connection.listing("skills")
    memo = connection.attached.get(_CHECKED)
    if isinstance(memo, tuple) and memo[0] is listing:
        return memo[1]  # type: ignore[no-any-return]
    skills: list[MCPSkill] = []
    seen: set[str] = set()
    pace = Pace()  # thousands of entries are checked a slice at a time: other runs go on
    for entry in listing:
        await pace()
        if entry.uri in seen:  # listed twice (a page sent again): the first entry counts
            continue
        seen.add(entry.uri)
        checked = check_entry(connection.name, entry)
        if isinstance(checked, MCPSkill):
            skills.append(checked)
        elif connection.private:
            logger.warning(
                "MCP server %r: a skill it lists for a user cannot be loaded: %s", connection.name, checked
            )
        else:
            logger.warning(
                "MCP server %r: its skill %s cannot be loaded and is left out: %s",
                connection.name,
                connection.redact(entry.uri)[:200],
                checked,
            )
    result = tuple(skills)
    connection.attached[_CHECKED] = (listing, result)
    return result
