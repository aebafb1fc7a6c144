"""What a tool is built from: the server it lives on, its MCP definition and the name the model
sees (the catalog names tools; the adapter is built from one entry)."""

from __future__ import annotations

from dataclasses import dataclass

import mcp_types as types

__all__ = ["CatalogEntry"]


@dataclass(frozen=True)
class CatalogEntry:
    """One exposed tool: the server it lives on, its MCP definition, its exposed name."""

    server: str
    tool: types.Tool
    name: str
