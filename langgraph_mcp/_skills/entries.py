"""The skills a run may load: each server's listing entries, checked, named per server.

A listing entry (:class:`~langgraph_mcp._session.skills.SkillEntry`) becomes an :class:`MCPSkill` only
when it could be loaded as the extension says: its ``uri`` names a ``SKILL.md`` whose folder's last
segment is the frontmatter's ``name`` (a valid skill name), every file it lists lies within that
folder, is listed once and includes the ``SKILL.md``, and the listing stays within the limits
every host supports (512 files, 16 MiB). Any other entry is left out with a warning: it could
never be loaded.

A skill is known by its server and its path (``docs:acme/billing/refunds``): names are labels,
not identities, so two servers' ``review`` skills (or two paths of one server ending in the same
name) stay apart, and a bare name that more than one skill answers to is refused, never resolved
to one of them (:meth:`SkillSet.resolve`).
"""

from __future__ import annotations

import logging
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from langgraph_mcp._session.skills import SkillEntry
from langgraph_mcp._session.skillwire import entry_fingerprint
from langgraph_mcp._support.sanitise import sanitise_text

__all__ = [
    "MAX_SKILL_BYTES",
    "MAX_SKILL_FILES",
    "MCPSkill",
    "MCPSkillFile",
    "SkillSet",
    "check_entry",
    "skill_id",
]

logger = logging.getLogger("langgraph_mcp.skills")

MAX_SKILL_FILES = 512
"""The most files one skill may list (the extension's limit, ``SKILL.md`` included)."""
MAX_SKILL_BYTES = 16 * 1024 * 1024
"""The most bytes one skill's files may add up to (the extension's limit)."""
MAX_DESCRIPTION = 1024
"""A description is cut to this many characters where the model sees it."""
MAX_PATH = 256
"""The longest skill path, and file path within a skill, a listing may give."""
_SEGMENT = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=:@%-]+")
_NAME = re.compile(r"^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$")
_SKILL_MD = "SKILL.md"


@dataclass(frozen=True)
class MCPSkillFile:
    """One file of a skill: its URI, path within the skill's folder, digest and size."""

    uri: str
    path: str
    digest: str
    size: int


@dataclass(frozen=True)
class MCPSkill:
    """A skill one server lists, checked (:func:`check_entry`).

    ``id`` is ``<server>:<path>``: how the model and the state name it. ``files`` is ``None`` for a
    skill whose server lists its files as ``"dynamic"`` (nothing can be checked against a digest).
    ``fingerprint`` stands for the whole listed set (every file's URI and digest, and the
    frontmatter): an approval holds for that fingerprint only.
    """

    server: str
    uri: str
    path: str
    name: str
    description: str
    frontmatter: Mapping[str, Any]
    files: tuple[MCPSkillFile, ...] | None
    fingerprint: str
    root: str = field(repr=False)
    """The skill's folder URI (its ``SKILL.md`` URI without ``/SKILL.md``)."""

    @property
    def id(self) -> str:
        return skill_id(self.server, self.path)

    @property
    def dynamic(self) -> bool:
        return self.files is None

    @property
    def allowed_tools(self) -> tuple[str, ...]:
        """The frontmatter's ``allowed-tools`` (a space- or comma-separated string, or a list)."""
        value = self.frontmatter.get("allowed-tools")
        if isinstance(value, str):
            return tuple(t for t in re.split(r"[\s,]+", value) if t)
        if isinstance(value, list):
            return tuple(str(t) for t in value if isinstance(t, str) and t)
        return ()

    def file(self, uri: str) -> MCPSkillFile | None:
        """The listed file at ``uri`` (``None``: not listed)."""
        for f in self.files or ():
            if f.uri == uri:
                return f
        return None

    def uri_of(self, path: str) -> str | None:
        """The URI of ``path``, relative to the skill's folder as a file system path resolves
        (``None``: it leaves the folder)."""
        if "\\" in path or "\x00" in path or path.startswith("/"):
            return None
        normal = posixpath.normpath(path)
        if normal in ("", ".") or normal == ".." or normal.startswith("../"):
            return None
        return f"{self.root}/{normal}"


def skill_id(server: str, path: str) -> str:
    return f"{server}:{path}"


def check_entry(server: str, entry: SkillEntry) -> MCPSkill | str:
    """``entry`` as an :class:`MCPSkill`, or why it cannot be loaded (the reason never repeats
    the server's URIs: they may hold what a log must not)."""
    uri = entry.uri
    if "://" not in uri or not uri.endswith("/" + _SKILL_MD):
        return "its uri does not name a SKILL.md"
    root = uri[: -len(_SKILL_MD) - 1]
    path = root.split("://", 1)[1]
    if len(path) > MAX_PATH or not _plain_path(path):
        return f"its skill path is not {MAX_PATH} or fewer plain URI path characters in non-empty segments"
    segments = path.split("/")
    name = entry.frontmatter.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        return "its frontmatter name is not a valid skill name (1-64 of a-z, 0-9 and single hyphens)"
    if segments[-1] != name:
        return f"its uri's last segment is not its name {name!r}"
    description = entry.frontmatter.get("description")
    if not isinstance(description, str) or not description.strip():
        return "its frontmatter has no description"
    files: tuple[MCPSkillFile, ...] | None = None
    if entry.resources != "dynamic":
        if len(entry.resources) > MAX_SKILL_FILES:
            return f"it lists {len(entry.resources)} files, more than {MAX_SKILL_FILES}"
        seen: set[str] = set()
        listed = []
        for f in entry.resources:
            if f.uri in seen:
                return "it lists a file twice"
            seen.add(f.uri)
            rel = f.uri[len(root) + 1 :]
            if not f.uri.startswith(root + "/") or len(rel) > MAX_PATH or not _plain_path(rel):
                return "it lists a file that is not within the skill, or whose path is not plain"
            listed.append(MCPSkillFile(f.uri, rel, f.digest, f.size))
        if uri not in seen:
            return "its files do not include its SKILL.md"
        total = sum(f.size for f in listed)
        if total > MAX_SKILL_BYTES:
            return f"its files add up to {total} bytes, more than {MAX_SKILL_BYTES}"
        files = tuple(listed)
    return MCPSkill(
        server=server,
        uri=uri,
        path=path,
        name=name,
        description=" ".join(sanitise_text(description, MAX_DESCRIPTION).split()),
        frontmatter=entry.frontmatter,
        files=files,
        fingerprint=entry_fingerprint(entry),
        root=root,
    )


def _plain_path(path: str) -> bool:
    """Is ``path`` made of non-empty segments of URI path characters, none of them ``.`` or
    ``..`` once percent-decoded, and nothing a text could be broken out of with (quotes, angle
    brackets, backticks, spaces, control characters)?"""
    for segment in path.split("/"):
        if not _SEGMENT.fullmatch(segment):
            return False
        decoded = unquote(segment)
        if decoded in (".", "..") or not decoded.isprintable() or any(c in decoded for c in '/\\"<>` '):
            return False
    return True


@dataclass(frozen=True)
class SkillSet:
    """The skills one run may load, from every server that lists some for it."""

    skills: tuple[MCPSkill, ...] = ()
    by_id: Mapping[str, MCPSkill] = field(default_factory=dict)

    @classmethod
    def of(cls, skills: Iterable[MCPSkill]) -> SkillSet:
        ordered = tuple(sorted(skills, key=lambda s: (s.server, s.path)))
        return cls(ordered, {s.id: s for s in ordered})

    def resolve(self, ref: str, servers: Sequence[str]) -> MCPSkill | str:
        """The skill ``ref`` names (``server:path``, ``server:name``, or a bare name or path that
        only one skill has), or why none is loaded: unknown, or ambiguous (the candidates are
        named)."""
        ref = ref.strip()
        found = self.by_id.get(ref)
        if found is not None:
            return found
        # "server:<name or path>", with the longest server name that prefixes it.
        for server in sorted(servers, key=len, reverse=True):
            if ref.startswith(server + ":"):
                rest = ref[len(server) + 1 :]
                return self._one(
                    [s for s in self.skills if s.server == server and rest in (s.name, s.path)], ref
                )
        return self._one([s for s in self.skills if ref in (s.name, s.path)], ref)

    def _one(self, matches: list[MCPSkill], ref: str) -> MCPSkill | str:
        if len(matches) == 1:
            return matches[0]
        if not matches:
            return f"no skill is called {ref!r}"
        ids = ", ".join(repr(s.id) for s in matches)
        return f"{len(matches)} skills are called {ref!r} ({ids}): name one by its id"
