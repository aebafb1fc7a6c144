"""The two eras of the MCP protocol, and how this client names itself to servers.

``2026-07-28`` is stateless (``server/discover``; a server asks for input through
``InputRequiredResult`` rounds); ``legacy`` is 2025-11-25 and older (the ``initialize``
handshake; a server asks with requests of its own, in the middle of a call).
"""

from __future__ import annotations

from typing import Literal

import mcp_types as types
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from langgraph_mcp._version import __version__

__all__ = ["CLIENT_NAME", "MODERN", "Era", "client_info", "era_of", "is_handshake_version"]

CLIENT_NAME = "langgraph-mcp"
Era = Literal["2026-07-28", "legacy"]
MODERN: Era = "2026-07-28"


def era_of(protocol_version: str | None) -> Era | None:
    """The era of a negotiated protocol version (``None`` before one was negotiated)."""
    if protocol_version is None:
        return None
    return "legacy" if protocol_version in HANDSHAKE_PROTOCOL_VERSIONS else MODERN


def is_handshake_version(protocol_version: str | None) -> bool:
    """Was ``protocol_version`` negotiated with the ``initialize`` handshake?"""
    return protocol_version in HANDSHAKE_PROTOCOL_VERSIONS


def client_info() -> types.Implementation:
    """What this client says it is (``clientInfo``)."""
    return types.Implementation(name=CLIENT_NAME, version=__version__)
