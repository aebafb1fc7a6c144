"""Which MCP tools are exposed, and under which provider-safe names.

Names must match ``^[a-zA-Z0-9_-]{1,64}$`` (the strictest common provider
rule). Each name is the server's ``prefix`` plus the MCP tool name with every
other character replaced by ``_``; names over 64 characters are shortened with
a stable hash suffix. Collisions are settled in configuration order, then
listing order: the first tool keeps its name, later ones are renamed
``<server>_<name>`` (then ``_2``, ``_3``, ...) with a warning. Names of local
tools are reserved first.

A name never depends on which servers happen to be reachable, so a call the
model made (and a checkpoint kept) can never be routed to another server's
tool of the same name:

* a server that cannot be reached keeps its names reserved when they are
  known: from its last listing in this process, or its ``tools`` allow-list;
* while an earlier server's names are unknown (never listed, no allow-list),
  a later server's tool gets the plain name only if that server could not
  have it (it has a ``prefix`` the name does not start with); otherwise it is
  exposed as ``<server>_<name>``;
* a tool keeps the name it was given before (``previous``) while that name
  is free, so names do not change when a server comes back.

For names that never change, give servers distinct ``prefix`` values or
``tools`` allow-lists.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

import mcp_types as types

from langgraph_mcp._call.entry import CatalogEntry
from langgraph_mcp.config import ServerConfig

__all__ = ["CatalogEntry", "build_catalog", "safe_tool_name"]

logger = logging.getLogger("langgraph_mcp.catalog")

MAX_NAME_LENGTH = 64
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
SAFE_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def safe_tool_name(name: str) -> str:
    """Make ``name`` provider-safe; shorten over-long names with a stable hash."""
    safe = _UNSAFE.sub("_", name) or "tool"
    if len(safe) > MAX_NAME_LENGTH:
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        safe = f"{safe[: MAX_NAME_LENGTH - 9]}_{digest}"
    return safe


def build_catalog(
    listings: Mapping[str, list[types.Tool]],
    configs: Mapping[str, ServerConfig],
    *,
    reserved: Collection[str] = (),
    remembered: Mapping[str, Collection[str]] | None = None,
    previous: Mapping[tuple[str, str], str] | None = None,
    warn: Callable[..., Any] | None = None,
) -> list[CatalogEntry]:
    """Filter each server's tools and give every kept tool a unique safe name.

    ``configs`` is in configuration order, which settles collisions; ``listings`` holds the
    servers that answered (a configured server missing from it could not be reached).
    ``reserved`` are names already taken (local tools); ``remembered[server]`` the MCP tool names
    an unreachable server listed before; ``previous[(server, mcp_name)]`` the name a tool was
    exposed under before, for reachable and unreachable servers alike (kept while it is free; an
    unreachable server's tools keep theirs reserved). Warnings go to ``warn(msg, *args)`` (default:
    this module's logger).
    """
    remembered = remembered or {}
    previous = previous or {}
    say = warn or logger.warning
    taken = set(reserved)
    kept: list[tuple[str, types.Tool]] = []
    # Names held by servers that could not be reached; None: that server's names are unknown.
    held: dict[str, set[str] | None] = {}
    for server, config in configs.items():
        if server in listings:
            kept.extend((server, tool) for tool in _filtered(server, listings[server], config, say))
            continue
        known = remembered.get(server)
        if known is None and config.tools is not None:
            known = config.tools
        if known is None:
            held[server] = None
            continue
        allowed = set(config.tools) if config.tools is not None else None
        excluded = set(config.exclude_tools)
        held[server] = {
            # The name it was given before, if any: that is the name a call to it may carry.
            previous.get((server, name)) or safe_tool_name((config.prefix or "") + name)
            for name in known
            if (allowed is None or name in allowed) and name not in excluded
        }
    for reserved_names in held.values():
        taken |= reserved_names or set()
    order = list(configs)
    names: dict[int, str] = {}
    # Names given before stay, while free (a server that came back does not rename the others).
    for i, (server, tool) in enumerate(kept):
        name = previous.get((server, tool.name))
        if name is not None and name not in taken:
            taken.add(name)
            names[i] = name
    for i, (server, tool) in enumerate(kept):
        if i in names:
            continue
        config = configs[server]
        wanted = safe_tool_name((config.prefix or "") + tool.name)
        unknown_before = [
            other
            for other in order[: order.index(server)]
            if other in held and held[other] is None and _could_have(configs[other], wanted)
        ]
        name = wanted
        if name in taken or unknown_before:
            name = safe_tool_name(f"{server}_{wanted}")
            n = 2
            while name in taken:
                name = safe_tool_name(f"{server}_{wanted}_{n}")
                n += 1
            if unknown_before:
                say(
                    "MCP server(s) %s could not be reached and may also offer %r; exposing the tool of "
                    "MCP server %r as %r",
                    ", ".join(map(repr, unknown_before)),
                    wanted,
                    server,
                    name,
                )
            else:
                say("tool name %r of MCP server %r is already taken; exposing it as %r", wanted, server, name)
        taken.add(name)
        names[i] = name
    return [CatalogEntry(server=server, tool=tool, name=names[i]) for i, (server, tool) in enumerate(kept)]


def _filtered(
    server: str, tools: list[types.Tool], config: ServerConfig, say: Callable[..., Any]
) -> list[types.Tool]:
    """The tools of one listing that are exposed: allow-list, exclusions, first of duplicates."""
    allowed = set(config.tools) if config.tools is not None else None
    excluded = set(config.exclude_tools)
    if allowed is not None:
        missing = allowed - {t.name for t in tools}
        if missing:
            listed = ", ".join(sorted(missing))
            say("MCP server %r has no tool(s) %s listed in its 'tools' filter", server, listed)
    seen: set[str] = set()
    out: list[types.Tool] = []
    for tool in tools:
        if tool.name in seen:
            say("MCP server %r lists tool %r twice; using the first", server, tool.name)
            continue
        seen.add(tool.name)
        if (allowed is not None and tool.name not in allowed) or tool.name in excluded:
            continue
        out.append(tool)
    return out


def _could_have(config: ServerConfig, name: str) -> bool:
    """Could a server with this configuration expose a tool as ``name``?"""
    return config.prefix is None or name.startswith(safe_tool_name(config.prefix))
