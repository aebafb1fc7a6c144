"""Checking a skill file read from its server against the skill's listing entry.

Every file read is checked before anything uses it: its size and SHA-256 digest against the
entry's (a size that differs fails without hashing), and a ``SKILL.md``'s YAML frontmatter, field
by field, against the entry's ``frontmatter``. A skill whose files the server lists as
``"dynamic"`` has no digests: only its frontmatter can be compared.

The frontmatter is untrusted YAML: it is parsed with a safe loader that refuses anchors and
aliases (no "billion laughs"), from at most :data:`MAX_FRONTMATTER` characters, in a worker thread
so that a slow document never holds the event loop.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

import anyio
import yaml

from langgraph_mcp._skills.entries import MCPSkillFile
from langgraph_mcp.errors import MCPError

__all__ = ["MAX_FRONTMATTER", "Mismatch", "body_of", "check_bytes", "check_frontmatter", "frontmatter_of"]

MAX_FRONTMATTER = 64 * 1024
"""A ``SKILL.md`` whose frontmatter block is longer than this many characters fails its check."""

_BLOCK = re.compile(r"^---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.DOTALL)


class Mismatch(MCPError):
    """A file does not match its listing entry: ``kind`` is ``size``, ``digest`` or
    ``frontmatter``; the message says how (never the file's content)."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        super().__init__(message)


def check_bytes(listed: MCPSkillFile, data: bytes) -> None:
    """Raise :class:`Mismatch` unless ``data`` has the listed size and digest."""
    if len(data) != listed.size:
        raise Mismatch("size", f"{len(data)} bytes were served, the listing says {listed.size}")
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    if digest != listed.digest:
        raise Mismatch("digest", "its SHA-256 digest is not the one the listing gives")


class _NoAliases(yaml.SafeLoader):
    """PyYAML's safe loader, refusing anchors and aliases."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise yaml.YAMLError("aliases are not allowed in skill frontmatter")
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if getattr(event, "anchor", None) is not None:
            raise yaml.YAMLError("anchors are not allowed in skill frontmatter")
        return super().compose_node(parent, index)


def _split(text: str) -> tuple[str, str] | None:
    """The frontmatter block and the body after it (``None``: no block)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    match = _BLOCK.match(text)
    if match is None:
        return None
    return match.group(1), text[match.end() :]


def body_of(text: str) -> str:
    """``text`` without its frontmatter block."""
    parts = _split(text)
    return text if parts is None else parts[1]


def _parse(block: str) -> Any:
    return yaml.load(block, Loader=_NoAliases)


async def frontmatter_of(text: str) -> dict[str, Any]:
    """The YAML frontmatter of a ``SKILL.md``, as JSON would carry it (dates as ISO strings).

    Raises:
        Mismatch: no frontmatter block, one too long, not YAML, or not a mapping.
    """
    parts = _split(text)
    if parts is None:
        raise Mismatch("frontmatter", "the SKILL.md has no frontmatter block")
    block = parts[0]
    if len(block) > MAX_FRONTMATTER:
        raise Mismatch("frontmatter", f"its frontmatter is longer than {MAX_FRONTMATTER} characters")
    try:
        loaded = await anyio.to_thread.run_sync(_parse, block)
    except (yaml.YAMLError, RecursionError, ValueError) as exc:  # too deep, or not YAML at all
        raise Mismatch("frontmatter", f"its frontmatter is not valid YAML ({type(exc).__name__})") from None
    if not isinstance(loaded, dict):
        raise Mismatch("frontmatter", "its frontmatter is not a mapping")
    result: dict[str, Any] = _as_json(loaded)
    return result


def _as_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _as_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_as_json(v) for v in value]
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    return value


def check_frontmatter(listed: Mapping[str, Any], parsed: Mapping[str, Any]) -> None:
    """Raise :class:`Mismatch` unless the two frontmatters are equal field by field (a field
    one of them leaves out counts as ``null``)."""
    differ = sorted(
        key for key in set(listed) | set(parsed) if _canonical(listed.get(key)) != _canonical(parsed.get(key))
    )
    if differ:
        names = ", ".join(repr(k) for k in differ[:5])
        raise Mismatch("frontmatter", f"its frontmatter differs from the listing's in {names}")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)
