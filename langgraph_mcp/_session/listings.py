"""A server's listings: its tools (``tools/list``), resources, resource templates and prompts.

Every page is read as the server sent it, and each entry is checked on its own: one that is not
valid is left out with a warning and the others stay. Listings are cached until the server says
that list changed, or the session is replaced (``loops.ConnectionBase._tools_changed`` and
``_lists_changed``), or the lifetime its freshness hints or ``listing_ttl`` give it ends; a
``public`` one may come from another session of the same server
(:class:`~langgraph_mcp._session.freshness.ListingShare`).

A tool listing is bounded: its first ``max_tools`` entries (server option, default 1,000) are
read and the rest left out with one warning; at most ``_MAX_PAGES`` pages are fetched, so a
server that pages forever cannot hold a listing forever. Tools are checked in a worker thread, a
page at a time: checking a thousand schemas is about a second of CPU, and the event loop (every
other user's call) goes on meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError as SDKError
from pydantic import ValidationError

from langgraph_mcp._compat.mcp import absorb_tool_listing, read_resource_rounds, send_unchecked
from langgraph_mcp._session.era import MODERN
from langgraph_mcp._session.failures import TRANSPORT_ERRORS, SessionExpired, Wording, translate
from langgraph_mcp._session.freshness import Hints, Stamp
from langgraph_mcp._session.loops import LISTINGS, Listing
from langgraph_mcp._session.requests import Requests
from langgraph_mcp._session.transports import describe, http_statuses, refusal
from langgraph_mcp._session.wire import sending
from langgraph_mcp._support.pace import Pace, full_collections_put_off
from langgraph_mcp._support.schema import vet_tool
from langgraph_mcp.errors import MCPAuthenticationError, MCPConnectionError, MCPProtocolError

__all__ = ["Listings"]

logger = logging.getLogger("langgraph_mcp.pool")

_MAX_PAGES = 1000
_MAX_ENTRIES = 10_000
"""The most entries of a listing other than tools that are read (further pages are not fetched)."""


class Listings(Requests):
    """The server's tools and its other listings."""

    async def refresh_tools(self) -> list[types.Tool]:
        """Drop the cached listing and list again (the server's listing differs from it: no
        session of the server may reuse a shared one either)."""
        self._tools_changed(notice=True)
        return await self.list_tools()

    async def list_tools(self) -> list[types.Tool]:
        """The server's tools (every page), cached until ``list_changed``, a reconnect, or the end
        of the listing's lifetime (:class:`~langgraph_mcp._session.freshness.ListingShare`).

        Each tool is checked on its own (:func:`~langgraph_mcp._support.schema.vet_tool`): one that
        cannot be offered to a model or called is left out with a warning, and the others stay.

        When listing again only because the listing's lifetime ended fails with a connection
        error on the same live session, the last listing is offered meanwhile (with a warning),
        and listing is tried again at the next use; never after the server said it changed.

        Raises:
            MCPConnectionError: the server could not be reached or did not answer.
            MCPProtocolError: an answer was not a ``tools/list`` result at all.
        """
        try:
            return await self._listed_again()
        except MCPConnectionError as exc:
            stale, session, share = self._stale_tools, self._session_here(), self.listing_share
            if (
                stale is None
                or session is None
                or stale[2] is not session
                or not session.alive
                or share.heard_changed("tools", stale[1])
            ):
                raise
            # Kept as already stale: listing is tried again at the next use.
            told = self._stale_told
            self._keep_tools(stale[0], Stamp(share.clock(), stale[1].generation))
            self._stale_tools, self._stale_told = stale, True
            if not told:
                logger.warning(
                    "MCP server %r: listing its tools again (the last listing's lifetime ended) "
                    "failed; the last listing is offered until it answers: %s",
                    self.name,
                    exc,
                )
            return stale[0]

    async def _listed_again(self) -> list[types.Tool]:
        try:
            return await self._list_tools()
        except SessionExpired:
            # The server rejected the listing unread (it no longer knows the session): once more,
            # on a new session.
            try:
                return await self._list_tools()
            except SessionExpired as exc:
                raise MCPConnectionError(self.name, f"tools/list failed: {exc.message}") from None

    async def _list_tools(self) -> list[types.Tool]:
        session = await self._session()
        if (cached := self._cached_tools()) is not None:
            return cached
        async with self.scope().tools_lock:
            if (cached := self._cached_tools()) is not None:
                return cached
            client = session.client
            assert client is not None
            # (Shared listings are 2026-07-28 answers: only a session of that era takes one.)
            if self.era == MODERN and (shared := self.listing_share.take("tools")) is not None:
                # Listed by another session of this server, and public: this session's calls
                # derive their headers from it as from their own listing.
                adopted: list[types.Tool] = shared[0]
                absorb_tool_listing(client.session, types.ListToolsResult(tools=adopted), complete=True)
                self._keep_tools(adopted, shared[1])
                return list(adopted)
            version = self.tools_version
            generation = self.listing_share.generation("tools")
            hints = Hints()
            tools: list[types.Tool] = []
            cursor: str | None = None
            entries = beyond = 0
            limit = self.config.max_tools
            try:
                with sending() as sent, http_statuses() as statuses, session.request():
                    for _ in range(_MAX_PAGES):
                        with anyio.fail_after(self.config.connect_timeout):
                            # Read as sent, so that one malformed tool costs only itself.
                            answer = await send_unchecked(
                                client.session, "tools/list", {"cursor": cursor} if cursor else None
                            )
                        listed, next_cursor = self._tools_page(answer)
                        hints.add(answer)
                        del answer
                        if len(listed) > limit - entries:
                            beyond += len(listed) - (limit - entries)
                            await _drop_tail(listed, limit - entries)
                        page = await asyncio.to_thread(self._vet_page, listed, entries) if listed else []
                        entries += len(listed)
                        absorb_tool_listing(
                            client.session,
                            types.ListToolsResult(tools=page, next_cursor=next_cursor),
                            complete=cursor is None and next_cursor is None,
                        )
                        tools.extend(page)
                        cursor = next_cursor
                        if not cursor or beyond:
                            break
                    else:
                        logger.warning(
                            "MCP server %r: its tools/list answer still named a next page after %d pages; "
                            "the tools of those pages are offered and the rest left out",
                            self.name,
                            _MAX_PAGES,
                        )
            except (SDKError, TimeoutError, OSError, *TRANSPORT_ERRORS) as exc:
                # Whatever went wrong, the server's tools cannot be offered now: a connection
                # error, unless the session expired (list again) or the credentials were refused.
                if isinstance(exc, SDKError):
                    wording = Wording("tools/list", "tools/list", "to tools/list")
                    meant = await translate(
                        exc,
                        server=self.name,
                        session=session,
                        sent=sent,
                        statuses=statuses,
                        redact=self.redact,
                        wording=wording,
                    )
                    if isinstance(meant, (SessionExpired, MCPAuthenticationError)):
                        raise meant from exc
                elif (status := refusal(statuses)) is not None:
                    raise MCPAuthenticationError(self.name, status) from exc
                raise MCPConnectionError(
                    self.name, self.redact(f"tools/list failed: {describe(exc)}") + session.stderr_hint()
                ) from exc
            if beyond:
                logger.warning(
                    "MCP server %r lists %s%d tools, more than its max_tools (%d): the first %d are "
                    "read and the rest left out (set 'max_tools' in its configuration to read more)",
                    self.name,
                    "at least " if cursor else "",
                    entries + beyond,
                    limit,
                    limit,
                )
            if version == self.tools_version and session is self.scope().owner.session:
                share = self.listing_share
                stamp = share.stamp("tools", hints, modern=self.era == MODERN, generation=generation)
                self._keep_tools(tools, stamp)
                share.offer("tools", tools, stamp)
            return tools

    def _cached_tools(self) -> list[types.Tool] | None:
        """The cached tool listing, if it may still be used."""
        # Read once: a session on another loop's thread may drop the cache at any moment.
        tools, stamp = self._tools, self._tools_stamp
        if tools is None:
            return None
        if stamp is not None and not self.listing_share.fresh("tools", stamp):
            self._tools_changed(expired=True)
            return None
        return tools

    def _keep_tools(self, tools: list[types.Tool], stamp: Stamp) -> None:
        self._stale_tools, self._stale_told = None, False
        self._tools = tools
        self._tools_stamp = stamp
        self._by_name = {t.name: t for t in reversed(tools)}

    def _vet_page(self, listed: list[Any], first: int) -> list[types.Tool]:
        """The tools of one page that can be offered
        (:func:`~langgraph_mcp._support.schema.vet_tool`); ``first`` is the position of the page's
        first entry in the whole listing. Runs in a worker thread."""
        modern = self.era == MODERN
        tasks = bool(self.config.tasks) and (modern or bool(getattr(self, "legacy_tasks", False)))
        return [
            tool
            for i, raw in enumerate(listed)
            if (
                tool := vet_tool(
                    self.name, raw, position=first + i, modern=modern, tasks=tasks, private=self.private
                )
            )
            is not None
        ]

    def _tools_page(self, answer: Any) -> tuple[list[Any], str | None]:
        """A ``tools/list`` answer's tools (unchecked) and next cursor."""
        tools = answer.get("tools") if isinstance(answer, dict) else None
        cursor = answer.get("nextCursor") if isinstance(answer, dict) else None
        if not isinstance(tools, list):
            raise MCPProtocolError(self.name, "its tools/list answer has no list of tools")
        if cursor is not None and not isinstance(cursor, str):
            raise MCPProtocolError(self.name, "its tools/list answer has a nextCursor that is not a string")
        return tools, cursor

    def listed(self, name: str) -> types.Tool | None:
        """The tool called ``name`` in the last listing, if any."""
        return self._by_name.get(name)

    def cached_listing(self, kind: Listing) -> list[Any] | None:
        """The ``kind`` listing this connection last received, if it has one and nothing said it
        changed since (its lifetime may have ended: it is not listed again here, no request is
        sent)."""
        return self._lists.get(kind)

    def forget_listing(self, kind: Listing) -> None:
        """Drop the cached ``kind`` listing: what it says was found stale (a skill file that does
        not match its entry); the next use lists again. A listing this session shares with the
        server's other sessions (``cacheScope: "public"``) is dropped there too."""
        self._lists_changed(kind, notice=True)

    async def listing(self, kind: Listing) -> list[Any]:
        """The server's resources, resource templates or prompts (every page), cached until the
        server says that list changed, a reconnect, or the end of the listing's lifetime
        (:class:`~langgraph_mcp._session.freshness.ListingShare`). An entry that is not valid is
        left out with a warning; the others stay.

        Raises:
            MCPConnectionError, MCPTimeoutError, MCPServerError (e.g. the server has no such
            list), MCPProtocolError (an answer is not a listing at all).
        """
        await self._live()  # a new session forgets the listings: connect before reading one
        share = self.listing_share
        if (cached := self._lists.get(kind)) is not None:
            stamp = self._list_stamps.get(kind)
            if stamp is None or share.fresh(kind, stamp):
                return cached
            self._lists_changed(kind)
        if self.era == MODERN and (shared := share.take(kind)) is not None:  # another session's, public
            self._lists[kind], self._list_stamps[kind] = shared
            return list(shared[0])
        version = self._list_versions[kind]
        generation = share.generation(kind)
        method, key, model = LISTINGS[kind]

        async def pages(client: Client) -> tuple[list[Any], Hints]:
            items: list[Any] = []
            hints = Hints()
            cursor: str | None = None
            seen: set[str] = set()
            pace = Pace()
            for _ in range(_MAX_PAGES):
                with anyio.fail_after(self.config.connect_timeout):
                    answer = await send_unchecked(
                        client.session, method, {"cursor": cursor} if cursor else None
                    )
                entries = answer.get(key) if isinstance(answer, dict) else None
                cursor = answer.get("nextCursor") if isinstance(answer, dict) else None
                if not isinstance(entries, list) or (cursor is not None and not isinstance(cursor, str)):
                    raise MCPProtocolError(self.name, f"its {method} answer is not a valid listing")
                hints.add(answer)
                for raw in entries:
                    await pace()
                    try:
                        items.append(model.model_validate(raw))
                    except ValidationError as exc:
                        logger.warning(
                            "MCP server %r: an entry of its %s answer is not valid and is left out: %s",
                            self.name,
                            method,
                            self.redact(str(exc).splitlines()[0] + " " + _brief(raw)),
                        )
                if not cursor or cursor in seen or len(items) >= _MAX_ENTRIES:
                    if cursor:  # a cursor seen before, or too many entries: the rest is left out
                        logger.warning(
                            "MCP server %r: its %s listing stops here (a cursor it sent before, or "
                            "over %d entries); the rest is left out",
                            self.name,
                            method,
                            _MAX_ENTRIES,
                        )
                    break
                seen.add(cursor)
            return items, hints

        # Skills are listed for every model call of an agent: the whole listing is bounded too.
        whole = self.config.connect_timeout if kind == "skills" else None
        items, hints = await self.request(method, pages, timeout=whole)
        if version == self._list_versions[kind]:
            stamp = share.stamp(kind, hints, modern=self.era == MODERN, generation=generation)
            self._lists[kind], self._list_stamps[kind] = items, stamp
            share.offer(kind, items, stamp)
        return items

    def forget_read(self, uri: str) -> None:
        """Reuse no kept read of ``uri`` (what it gave was found stale); the next read asks."""
        self.reads.updated(uri)
        self.listing_share.reads.updated(uri)

    async def read(
        self, uri: str, *, timeout: float | Literal["default"] | None = "default", limited: bool = False
    ) -> types.ReadResourceResult:
        """``resources/read`` of ``uri`` (see :meth:`request`), reused while its freshness hints
        allow (:class:`~langgraph_mcp._session.freshness.ReadCache`): this connection's own
        ``private`` reads, or a ``public`` one of any session of the server."""
        await self._live()  # a new session forgets the reads: connect before looking
        share = self.listing_share
        hit = self.reads.get(uri, share)
        if hit is None and self.era == MODERN:
            hit = share.reads.get(uri, share)
        if hit is not None:
            return hit
        own, shared = self.reads.version, share.reads.version
        result, first = await self.request(
            f"resources/read {uri}",
            lambda client: read_resource_rounds(client, uri),
            timeout=timeout,
            limited=limited,
        )
        hints = Hints.of_result(result)
        if first and (stamp := share.read_stamp(hints, modern=self.era == MODERN)) is not None:
            if hints.public:
                share.reads.put(uri, result, stamp, shared)
            else:
                self.reads.put(uri, result, stamp, own)
        return result


async def _drop_tail(items: list[Any], keep: int) -> None:
    """Cut ``items`` to its first ``keep``, freeing the rest a slice at a time (freeing 100,000
    parsed tools at once holds the event loop for a tenth of a second)."""
    pace = Pace()
    with full_collections_put_off():
        while len(items) > keep:
            del items[max(keep, len(items) - 2000) :]
            await pace()


def _brief(raw: Any, limit: int = 200) -> str:
    text = json.dumps(raw, default=str) if not isinstance(raw, str) else raw
    return text if len(text) <= limit else text[:limit] + "..."
