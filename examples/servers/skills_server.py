"""An MCP server that serves a folder of skills (``io.modelcontextprotocol/skills``, SEP-2640).

Every folder under the root that holds a ``SKILL.md`` is a skill; its path under the root is the
skill's path (``release-notes``, or ``acme/billing/refunds`` for a nested one), and the last
segment of that path must be the ``name`` of the ``SKILL.md``'s frontmatter. The server:

* declares the extension (``capabilities.extensions["io.modelcontextprotocol/skills"]``);
* answers ``skills/list`` with one entry per skill: the URI of its ``SKILL.md``, the
  frontmatter, and every file of the skill (``SKILL.md`` included) with its size and
  ``sha256:<hex>`` digest, plus ``ttlMs`` and ``cacheScope`` (the folder is the same for every
  client: ``public``);
* answers ``skills/get`` with the entry of one skill (``-32602`` for a URI that is no skill's);
* serves each file as a resource, ``skill://<skill-path>/<file>``, read with ``resources/read``
  (``text/markdown`` for ``.md`` files).

The folder is read once, at start: the listing and the bytes served always agree. Restart the
server after changing a skill. Folders and files whose name starts with a dot are left out, and
so is a folder whose ``SKILL.md`` has no valid ``name`` and ``description`` (with a warning).

    python examples/servers/skills_server.py                       # stdio, examples/skills/
    python examples/servers/skills_server.py --root ~/my-skills    # another folder
    python examples/servers/skills_server.py --http 8766           # streamable HTTP, 127.0.0.1:8766

From a client: ``{"skills": {"command": sys.executable, "args": ["examples/servers/skills_server.py"]}}``.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from mcp.server.context import HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding, ResourceBinding
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import Resource
from mcp.server.mcpserver.resources.types import BinaryResource, TextResource
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, RequestParams

EXTENSION = "io.modelcontextprotocol/skills"
DEFAULT_ROOT = Path(__file__).resolve().parents[1] / "skills"
TTL_MS = 5 * 60 * 1000
"""How long a client may reuse a listing (the folder is read only at start)."""
PAGE_SIZE = 100
"""Skills per ``skills/list`` page."""

_NAME = re.compile(r"^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$")
_FRONTMATTER = re.compile(r"^---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.DOTALL)
_MIME = {".md": "text/markdown", ".txt": "text/plain", ".json": "application/json", ".py": "text/x-python"}

logger = logging.getLogger("skills_server")


@dataclass(frozen=True)
class SkillFile:
    uri: str
    data: bytes

    def listed(self) -> dict[str, Any]:
        """The file as a listing entry gives it: URI, digest and size."""
        digest = "sha256:" + hashlib.sha256(self.data).hexdigest()
        return {"uri": self.uri, "digest": digest, "size": len(self.data)}


@dataclass(frozen=True)
class Skill:
    path: str
    frontmatter: dict[str, Any]
    files: tuple[SkillFile, ...]

    @property
    def uri(self) -> str:
        return f"skill://{self.path}/SKILL.md"

    def entry(self) -> dict[str, Any]:
        """The skill's ``skills/list`` / ``skills/get`` entry."""
        files = [f.listed() for f in self.files]
        return {"uri": self.uri, "frontmatter": self.frontmatter, "resources": files}


def frontmatter_of(text: str) -> dict[str, Any] | None:
    """The YAML frontmatter of a ``SKILL.md`` (``None``: none, or not a mapping)."""
    match = _FRONTMATTER.match(text.removeprefix("\ufeff"))
    if match is None:
        return None
    try:
        loaded = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return None
    return loaded if isinstance(loaded, dict) else None


def _hidden(path: Path, root: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(root).parts)


def load_skills(root: Path) -> list[Skill]:
    """The skills under ``root``, by path; each with every file of its folder (a nested skill's
    files are its own)."""
    folders = sorted(p.parent for p in root.rglob("SKILL.md") if p.is_file() and not _hidden(p, root))
    skills = []
    for folder in folders:
        path = folder.relative_to(root).as_posix()
        frontmatter = frontmatter_of((folder / "SKILL.md").read_text(encoding="utf-8"))
        if frontmatter is None or frontmatter.get("name") != folder.name or not _NAME.match(folder.name):
            logger.warning(
                "%s/SKILL.md: the frontmatter's name must be the folder's name (a-z, 0-9, hyphens); left out",
                path,
            )
            continue
        if not isinstance(frontmatter.get("description"), str) or not frontmatter["description"].strip():
            logger.warning("%s/SKILL.md: the frontmatter has no description; left out", path)
            continue
        files = []
        for file in sorted(p for p in folder.rglob("*") if p.is_file() and not _hidden(p, root)):
            inner = file.relative_to(folder)
            if any((folder / p / "SKILL.md").is_file() for p in inner.parents if str(p) != "."):
                continue  # it belongs to a skill nested in this one
            files.append(SkillFile(f"skill://{path}/{inner.as_posix()}", file.read_bytes()))
        skills.append(Skill(path, frontmatter, tuple(files)))
    return skills


def _resource(skill: Skill, file: SkillFile) -> Resource:
    """``file`` as a resource: text when it is UTF-8 (the client hashes its UTF-8 encoding,
    the same bytes), else a blob."""
    suffix = Path(file.uri).suffix
    meta: dict[str, Any] = {"uri": file.uri, "mime_type": _MIME.get(suffix, "application/octet-stream")}
    if file.uri == skill.uri:  # the SKILL.md: named and described as the skill is
        meta |= {"name": skill.frontmatter["name"], "description": skill.frontmatter["description"]}
    else:
        meta["name"] = file.uri.removeprefix("skill://")
    try:
        return TextResource(text=file.data.decode("utf-8"), **meta)
    except UnicodeDecodeError:
        return BinaryResource(data=file.data, **meta)


class ListParams(RequestParams):
    cursor: str | None = None


class GetParams(RequestParams):
    uri: str


class Skills(Extension):
    """The skills extension for the skills under one folder: its two methods and its files."""

    identifier = EXTENSION

    def __init__(self, root: Path) -> None:
        self.skills = load_skills(root)
        self.by_uri = {s.uri: s for s in self.skills}

    def methods(self) -> list[MethodBinding]:
        return [
            MethodBinding("skills/list", ListParams, self.list_skills),
            MethodBinding("skills/get", GetParams, self.get_skill),
        ]

    def resources(self) -> list[ResourceBinding]:
        return [ResourceBinding(_resource(s, f)) for s in self.skills for f in s.files]

    async def list_skills(self, ctx: ServerRequestContext[Any, Any], params: ListParams) -> HandlerResult:
        try:
            start = int(params.cursor or 0)
        except ValueError:
            raise MCPError(INVALID_PARAMS, f"not a cursor of this server: {params.cursor!r}") from None
        page = self.skills[start : start + PAGE_SIZE]
        result: dict[str, Any] = {"skills": [s.entry() for s in page]}
        result |= {"ttlMs": TTL_MS, "cacheScope": "public"}
        if start + PAGE_SIZE < len(self.skills):
            result["nextCursor"] = str(start + PAGE_SIZE)
        return result

    async def get_skill(self, ctx: ServerRequestContext[Any, Any], params: GetParams) -> HandlerResult:
        skill = self.by_uri.get(params.uri)
        if skill is None:
            raise MCPError(INVALID_PARAMS, f"no skill at {params.uri}")
        return {"skill": skill.entry(), "ttlMs": TTL_MS, "cacheScope": "public"}


def build_server(root: str | Path = DEFAULT_ROOT, name: str = "skills") -> MCPServer:
    """The server of the skills under ``root``, to run in-process or with :func:`main`."""
    root = Path(root).resolve()
    if not root.is_dir():
        raise FileNotFoundError(f"no folder of skills at {root}")
    skills = Skills(root)
    logger.info("serving %d skills from %s", len(skills.skills), root)
    return MCPServer(name, instructions=f"Skills from {root.name}/.", extensions=[skills])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a folder of skills over MCP.")
    parser.add_argument("--root", default=str(DEFAULT_ROOT), help="default: examples/skills")
    parser.add_argument("--name", default="skills", help="the server's name")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT")
    ns = parser.parse_args(argv)
    if not Path(ns.root).is_dir():
        parser.error(f"no folder of skills at {ns.root}")
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")  # stderr only
    server = build_server(ns.root, ns.name)
    if ns.http:
        server.run("streamable-http", host="127.0.0.1", port=ns.http)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
