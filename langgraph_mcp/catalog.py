"""Which MCP tools are exposed, and under which provider-safe names.

Names must match ``^[a-zA-Z0-9_-]{1,64}$`` (the strictest common provider
rule). Each name is the server's ``prefix`` plus the MCP tool name with every
other character replaced by ``_``; names over 64 characters are shortened with
a stable hash suffix. Collisions are settled deterministically, in
configuration order and then listing order: the first tool keeps its name,
later ones are renamed ``<server>_<name>`` (then ``_2``, ``_3``, ...) with a
warning. Names of local tools are reserved first.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from langgraph_mcp.config import ServerConfig

__all__ = ["CatalogEntry", "build_catalog", "safe_tool_name"]

logger = logging.getLogger("langgraph_mcp.catalog")

MAX_NAME_LENGTH = 64
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
SAFE_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass(frozen=True)
class CatalogEntry:
    """One exposed tool: the server it lives on, its MCP definition, its exposed name."""

    server: str
    tool: types.Tool
    name: str


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
    warn: Callable[..., Any] | None = None,
) -> list[CatalogEntry]:
    """Filter each server's tools and give every kept tool a unique safe name.

    ``listings`` must be in configuration order; ``reserved`` are names already
    taken (local tools). Warnings go to ``warn(msg, *args)`` (default: this
    module's logger).
    """
    taken = set(reserved)
    entries: list[CatalogEntry] = []
    for server, tools in listings.items():
        config = configs[server]
        allowed = set(config.tools) if config.tools is not None else None
        excluded = set(config.exclude_tools)
        if allowed is not None:
            missing = allowed - {t.name for t in tools}
            if missing:
                (warn or logger.warning)(
                    "MCP server %r has no tool(s) %s listed in its 'tools' filter",
                    server,
                    ", ".join(sorted(missing)),
                )
        seen: set[str] = set()
        for tool in tools:
            if tool.name in seen:
                (warn or logger.warning)(
                    "MCP server %r lists tool %r twice; using the first", server, tool.name
                )
                continue
            seen.add(tool.name)
            if (allowed is not None and tool.name not in allowed) or tool.name in excluded:
                continue
            name = safe_tool_name((config.prefix or "") + tool.name)
            if name in taken:
                wanted = name
                name = safe_tool_name(f"{server}_{wanted}")
                n = 2
                while name in taken:
                    name = safe_tool_name(f"{server}_{wanted}_{n}")
                    n += 1
                (warn or logger.warning)(
                    "tool name %r of MCP server %r is already taken; exposing it as %r",
                    wanted,
                    server,
                    name,
                )
            taken.add(name)
            entries.append(CatalogEntry(server=server, tool=tool, name=name))
    return entries
