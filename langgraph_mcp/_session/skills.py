"""MCP skills on the wire (``io.modelcontextprotocol/skills``, SEP-2640): a ``skills/list``
entry, ``skills/get``, and a skill file read back as its raw bytes.

A server that declares the extension lists its skills with ``skills/list`` (paged; cached like
the other listings, see :meth:`~langgraph_mcp._session.listings.Listings.listing`, under the
kind ``"skills"``). An entry names the skill's ``SKILL.md`` (``uri``), repeats its frontmatter,
and lists every file of the skill with its size and SHA-256 digest, or says ``"dynamic"``. Files
are plain resources, read with ``resources/read``; what they mean (and whether they match their
entry) is decided above this layer (:mod:`langgraph_mcp._skills`).
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any

import mcp_types as types

from langgraph_mcp._compat.mcp import send_unchecked
from langgraph_mcp._session.skillwire import (
    MAX_FRONTMATTER_KEYS,
    SKILLS_EXTENSION,
    SkillEntry,
    SkillFileEntry,
)
from langgraph_mcp.errors import MCPProtocolError

if TYPE_CHECKING:
    from langgraph_mcp._session.connection import ServerConnection

__all__ = [
    "MAX_FRONTMATTER_KEYS",
    "SKILLS_EXTENSION",
    "SkillEntry",
    "SkillFileEntry",
    "declares_skills",
    "get_skill",
    "read_skill_file",
]


def declares_skills(connection: ServerConnection) -> bool:
    """Did the server declare the skills extension on its live (or last) session?"""
    extensions = connection.server_extensions
    return SKILLS_EXTENSION in extensions


async def get_skill(connection: ServerConnection, uri: str) -> SkillEntry:
    """``skills/get`` of the skill whose ``SKILL.md`` is at ``uri``: its entry now.

    Raises:
        MCPServerError: the server refused (``-32602``: it serves no skill there).
        MCPProtocolError: the answer holds no valid entry.
        MCPConnectionError, MCPTimeoutError: as for any request.
    """

    async def send(client: Any) -> Any:
        return await send_unchecked(client.session, "skills/get", {"uri": uri})

    answer = await connection.request(f"skills/get {uri}", send)
    raw = answer.get("skill") if isinstance(answer, dict) else None
    try:
        entry = SkillEntry.model_validate(raw)
    except ValueError:
        raise MCPProtocolError(
            connection.name, f"its skills/get answer for {uri} holds no valid skill"
        ) from None
    if entry.uri != uri:
        raise MCPProtocolError(connection.name, f"its skills/get answer for {uri} is about another skill")
    return entry


async def read_skill_file(connection: ServerConnection, uri: str) -> tuple[bytes, str | None]:
    """``resources/read`` of one skill file: its raw bytes (a text's UTF-8 encoding, a blob's
    decoded bytes) and MIME type. The answer must hold exactly one entry for ``uri``.

    Raises:
        MCPProtocolError: no entry (or several) for ``uri``, or a blob that is not base64.
        MCPServerError, MCPConnectionError, MCPTimeoutError: as for any request.
    """
    result = await connection.read(uri)
    entries = [c for c in result.contents if str(c.uri) == uri]
    if len(entries) != 1:
        raise MCPProtocolError(
            connection.name, f"its resources/read answer for {uri} holds {len(entries)} entries for it, not 1"
        )
    entry = entries[0]
    if isinstance(entry, types.TextResourceContents):
        try:
            return entry.text.encode("utf-8"), entry.mime_type
        except UnicodeEncodeError:  # a lone surrogate: no UTF-8 bytes stand for this text
            raise MCPProtocolError(
                connection.name, f"its file {uri} is text that is not valid Unicode"
            ) from None
    try:
        return base64.b64decode(entry.blob, validate=True), entry.mime_type
    except (binascii.Error, ValueError):
        raise MCPProtocolError(connection.name, f"its file {uri} is a blob that is not base64") from None
