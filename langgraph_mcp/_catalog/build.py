"""The pool's tools as LangChain tools: built from its listings once per listing version (see
:class:`~langgraph_mcp._support.buildcache.ToolCache`), bound to each server's connection
(:class:`~langgraph_mcp._call.adapter.MCPTool`)."""

from __future__ import annotations

import functools
from collections.abc import Collection

from langgraph_mcp._call.adapter import MCPTool, build_tool
from langgraph_mcp._call.view import model_visible
from langgraph_mcp._catalog.naming import build_catalog
from langgraph_mcp._catalog.naming import logger as catalog_logger
from langgraph_mcp._pool.pool import MCPPool
from langgraph_mcp._support.buildcache import ToolCache
from langgraph_mcp._support.pace import Pace

__all__ = ["builds_of", "load_catalog", "load_mcp_tools"]

_BUILDS = "catalog: built tools"


def builds_of(pool: MCPPool) -> ToolCache[MCPTool]:
    """The LangChain tools built for ``pool``, once per listing version and set of reserved names;
    kept in the pool's opaque slot for its lifetime (created on first use)."""
    cache = pool._attached.get(_BUILDS)
    if not isinstance(cache, ToolCache):
        cache = pool._attached[_BUILDS] = ToolCache()
    return cache


async def load_mcp_tools(pool: MCPPool, *, reserved: Collection[str] = ()) -> list[MCPTool]:
    """The pool's tools as LangChain tools, in configuration and listing order, without those meant
    only for an MCP Apps view (``_meta.ui.visibility`` without ``"model"``: never for a model).

    Connects servers that are not connected yet (concurrently), lists their tools once per
    connection and builds the tools once per listing: repeated calls return the same objects
    until a server's tool list changes, it reconnects, or the listing's lifetime ends (the
    server's ``listing_ttl``; on 2026-07-28 its ``ttlMs`` hint). A server that could not be reached is
    tried again on a later call once its back-off has passed (1 s, doubling up to 30 s), and its
    tools appear as soon as it answers. ``reserved`` names (e.g. local tools) are never reused.

    Raises:
        TypeError: ``pool`` is not an :class:`MCPPool` (wrap connections in ``MCPPool(...)``).
        MCPConnectionError: per the pool's ``on_connection_error``.
    """
    tools = await load_catalog(pool, reserved=reserved)
    if all(model_visible(t.mcp_meta) for t in tools):
        return tools
    return [t for t in tools if model_visible(t.mcp_meta)]


async def load_catalog(pool: MCPPool, *, reserved: Collection[str] = ()) -> list[MCPTool]:
    """Every tool of the pool, those meant only for an MCP Apps view included (see
    :func:`load_mcp_tools`); the same list until a listing changes."""
    if not isinstance(pool, MCPPool):
        raise TypeError(
            f"load_mcp_tools() takes an MCPPool, not a {type(pool).__name__}: wrap the connections "
            "in MCPPool(...), e.g. `async with MCPPool(connections) as pool: "
            "tools = await load_mcp_tools(pool)`"
        )
    key = frozenset(reserved)
    cache = builds_of(pool)
    version = pool.tools_version()
    cached = cache.current(key, version)
    if cached is not None:
        return cached
    return await cache.build_once(key, version, lambda: _build_catalog(pool, key, cache))


async def _build_catalog(pool: MCPPool, reserved: frozenset[str], cache: ToolCache[MCPTool]) -> list[MCPTool]:
    # The version is read before the listing it goes with: a listing that moves it (the first,
    # which connects; a change meanwhile) is looked at again at the next use, where the same
    # listings give the same tools. What is stored is never newer than what was listed.
    version = pool.tools_version()
    listings = await pool.list_all_tools()
    complete = len(listings) == len(pool.servers)
    if cache.built_from(reserved, listings):  # the version moved, the listings did not (a connect)
        tools = cache.last(reserved)
        cache.store(reserved, version if complete else None, tools, listings)
        return tools
    names = cache.names(reserved)
    entries = build_catalog(
        listings,
        pool.servers,
        reserved=reserved,
        remembered=pool.remembered,
        previous=names,
        warn=functools.partial(pool.warn_once, catalog_logger),
    )
    # Every name ever given in this pool stays known, those of servers now unreachable included.
    names.update({(e.server, e.tool.name): e.name for e in entries})
    previous = {(t.server, t.mcp_name, t.name): t for t in cache.last(reserved)}
    tools = []
    pace = Pace()  # a thousand tools take a tenth of a second or more to build
    for entry in entries:
        await pace()
        old = previous.get((entry.server, entry.tool.name, entry.name))
        if (
            old is not None
            and old._mcp_tool == entry.tool
            and old._connection is pool.connection(entry.server)
        ):
            tools.append(old)
        else:
            tools.append(build_tool(entry, pool.connection(entry.server), pool))
    # Cached only while every server answered: a missing one is tried again next time.
    cache.store(reserved, version if complete else None, tools, listings)
    return tools
