"""The skills extension's wire shapes (``io.modelcontextprotocol/skills``, SEP-2640): a
``skills/list`` or ``skills/get`` entry and the files it lists (see
:mod:`langgraph_mcp._session.skills`)."""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["MAX_FRONTMATTER_KEYS", "SKILLS_EXTENSION", "SkillEntry", "SkillFileEntry", "entry_fingerprint"]

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
"""The skills extension identifier (the server declares it; the client advertises it too)."""

MAX_FRONTMATTER_KEYS = 64
"""An entry whose frontmatter has more keys than this is not valid (a bound on what one entry
may make the client compare and keep)."""


class SkillFileEntry(BaseModel):
    """One file of a skill as its listing entry gives it: its URI, ``sha256:<hex>`` digest and
    size in bytes."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    uri: Annotated[str, Field(min_length=1, max_length=2048)]
    digest: Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]
    size: Annotated[int, Field(ge=0, strict=True)]


class SkillEntry(BaseModel):
    """One skill as ``skills/list`` or ``skills/get`` gives it: the URI of its ``SKILL.md``, that
    file's frontmatter (as JSON) and every file of the skill (``"dynamic"``: the server does not
    list them, so they cannot be checked)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    uri: Annotated[str, Field(min_length=1, max_length=2048)]
    frontmatter: Annotated[dict[str, Any], Field(max_length=MAX_FRONTMATTER_KEYS)]
    resources: list[SkillFileEntry] | Literal["dynamic"]


def entry_fingerprint(entry: SkillEntry) -> str:
    """A digest of what an approval of the skill is bound to: its ``SKILL.md`` URI, every listed
    file's URI and digest, and the frontmatter (``"dynamic"`` for a skill whose files are not
    listed)."""
    files = "dynamic" if entry.resources == "dynamic" else sorted((f.uri, f.digest) for f in entry.resources)
    body = json.dumps([entry.uri, files, entry.frontmatter], sort_keys=True, default=str)
    return "sha256:" + hashlib.sha256(body.encode()).hexdigest()
