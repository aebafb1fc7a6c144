"""The ``skills`` demo server: two skills (``io.modelcontextprotocol/skills``) and one tool.

``release-notes`` (a ``SKILL.md`` and ``templates/notes.md``) and ``incident-review``, served with
``skills/list`` and ``skills/get`` (the MCP SDK's server extension API) and read as
``skill://<name>/<file>`` resources; the tool ``word_count(text)``, which ``release-notes`` names
in its ``allowed-tools``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from mcp.server.context import HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import TextResource
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, RequestParams

SKILLS: dict[str, dict[str, str]] = {
    "release-notes": {
        "SKILL.md": (
            "---\n"
            "name: release-notes\n"
            "description: Write release notes for a version from its list of changes\n"
            "allowed-tools: word_count\n"
            "---\n\n"
            "# Release notes\n\n"
            "1. Group the changes into Added, Changed and Fixed.\n"
            "2. Fill in templates/notes.md, one line per change, most important first.\n"
            "3. Keep the summary under 60 words (check it with word_count).\n"
        ),
        "templates/notes.md": "## {version}\n\n{summary}\n\n### Added\n\n### Changed\n\n### Fixed\n",
    },
    "incident-review": {
        "SKILL.md": (
            "---\n"
            "name: incident-review\n"
            "description: Review an incident blamelessly, from timeline to follow-ups\n"
            "---\n\n"
            "Write the timeline first, in UTC. Name systems, not people. End with follow-ups, "
            "each with an owner and a date.\n"
        )
    },
}


def _entry(name: str) -> dict[str, Any]:
    files = SKILLS[name]
    resources = []
    for path, text in files.items():
        data = text.encode()
        resources.append(
            {
                "uri": f"skill://{name}/{path}",
                "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
                "size": len(data),
            }
        )
    frontmatter = {}
    for line in files["SKILL.md"].split("---\n")[1].splitlines():
        key, _, value = line.partition(": ")
        frontmatter[key] = value
    return {"uri": f"skill://{name}/SKILL.md", "frontmatter": frontmatter, "resources": resources}


class _ListParams(RequestParams):
    cursor: str | None = None


class _GetParams(RequestParams):
    uri: str


async def _list(ctx: ServerRequestContext[Any, Any], params: _ListParams) -> HandlerResult:
    return {"skills": [_entry(name) for name in SKILLS], "ttlMs": 300_000, "cacheScope": "public"}


async def _get(ctx: ServerRequestContext[Any, Any], params: _GetParams) -> HandlerResult:
    for name in SKILLS:
        if params.uri == f"skill://{name}/SKILL.md":
            return {"skill": _entry(name), "ttlMs": 300_000, "cacheScope": "public"}
    raise MCPError(INVALID_PARAMS, f"No skill is served at {params.uri}")


class _Skills(Extension):
    identifier = "io.modelcontextprotocol/skills"

    def methods(self) -> list[MethodBinding]:
        return [
            MethodBinding("skills/list", _ListParams, _list),
            MethodBinding("skills/get", _GetParams, _get),
        ]


server: MCPServer = MCPServer("skills", extensions=[_Skills()])

for _name, _files in SKILLS.items():
    for _path, _text in _files.items():
        server.add_resource(
            TextResource(
                uri=f"skill://{_name}/{_path}",
                name=_name if _path == "SKILL.md" else _path,
                text=_text,
                mime_type="text/markdown",
            )
        )


@server.tool()
def word_count(text: str) -> int:
    """The number of words in ``text``."""
    return len(text.split())
