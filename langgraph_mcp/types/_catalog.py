"""The persisted tool catalog's format (a JSON file, or one store item per server), as
``TypedDict``s; :mod:`langgraph_mcp.types` re-exports them and :mod:`langgraph_mcp.schemas`
publishes their JSON Schema (``tool-catalog``)."""

from __future__ import annotations

from typing import Any, Literal

from typing_extensions import TypedDict

__all__ = ["MCPToolCatalog", "MCPToolCatalogServer"]


class MCPToolCatalogServer(TypedDict):
    """What one server listed, as kept in the tool catalog (a catalog file's ``servers[name]``,
    or the value of the store item named after the server)."""

    fingerprint: str
    """SHA-256 (hex) of ``tools`` as canonical JSON (sorted keys, no spaces): an entry whose
    tools do not match it is not used."""
    source: str
    """SHA-256 (hex) of what says which server this is (transport, and command, arguments and
    working directory, or URL without its secrets): an entry written for another configuration is
    not used."""
    era: Literal["2026-07-28", "legacy"]
    """The protocol era the server spoke when it listed ``tools``."""
    listed_at: float
    """When the server listed ``tools`` (seconds since the Unix epoch)."""
    tools: list[dict[str, Any]]
    """The ``tools/list`` entries as the server listed them (MCP ``Tool`` objects)."""


class MCPToolCatalog(TypedDict):
    """A tool catalog file: the tools of each server that listed them, by configured server
    name. Written by the pool whenever a server's tools change, read to offer the tools of
    ``lazy`` servers without starting them."""

    version: Literal[1]
    """The format's version."""
    servers: dict[str, MCPToolCatalogServer]
    """Each server's entry, by its configured name."""
