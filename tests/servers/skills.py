"""A server with the skills extension (``io.modelcontextprotocol/skills``, SEP-2640).

Built on the SDK's server extension API: an ``Extension`` that serves ``skills/list`` and
``skills/get``; each skill file is a resource (``skill://<skill-path>/<file>``) read with plain
``resources/read``.

The skills are the folders under ``$SKILLS_DIR`` that hold a ``SKILL.md`` (a folder with the
bundled skills below when unset); a skill's path is its folder's path under ``$SKILLS_DIR`` (so
``acme/billing/refunds`` is a skill named ``refunds``). Every ``skills/list`` reads the files as
they are now: their digests and sizes change when a test changes a file, and a test that changes
one after the client listed serves bytes the client's listing does not describe.

Knobs (files in ``$SKILLS_DIR``, read at each request):

- ``.ttl``: the listing's ``ttlMs`` (default 60000).
- ``.lie.json``: ``{skill-path: {frontmatter fields}}`` merged into that entry's ``frontmatter``
  (the listing then disagrees with the file).
- ``.hidden``: relative file paths (one per line, ``<skill-path>/<file>``) left out of the
  listing's ``resources`` but still served by ``resources/read``.
- ``.dynamic``: skill paths (one per line) listed with ``resources: "dynamic"``.
- ``.scope``: the listing's ``cacheScope`` (default ``private``).
- ``.loop``: present: every page's ``nextCursor`` is ``"0"`` (a server that pages for ever).
- ``.omit``: skill paths (one per line) left out of ``skills/list`` (``skills/get`` still answers).
- ``.stray.json``: ``{skill-path: [uri, ...]}`` extra resource entries listed for that skill
  (e.g. a file of another skill, or another scheme), with a made-up digest.

Every request about skills is appended to ``$SKILLS_DIR/.log`` as one JSON line: ``{"method":
"skills/list" | "skills/get" | "resources/read", "uri"?: ...}``.

Tools: ``echo(text)``, so the server is also an ordinary tool server.
"""

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp.server.context import HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import FunctionResource
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, RequestParams

from tests.servers._runner import run_cli

EXTENSION = "io.modelcontextprotocol/skills"

BUNDLED: dict[str, str] = {
    "pdf-processing/SKILL.md": (
        "---\n"
        "name: pdf-processing\n"
        "description: Extract, fill, and assemble PDF documents\n"
        "allowed-tools: echo\n"
        "---\n\n"
        "# PDF processing\n\n"
        "To fill a form, read [the forms guide](references/FORMS.md) first.\n"
    ),
    "pdf-processing/references/FORMS.md": "# Forms\n\nFill every field named on the first page.\n",
    "code-review/SKILL.md": (
        "---\n"
        "name: code-review\n"
        "description: Review a change for correctness and style\n"
        "metadata:\n"
        "  owner: platform\n"
        "---\n\n"
        "Read the diff twice before you comment.\n"
    ),
    "acme/billing/refunds/SKILL.md": (
        "---\nname: refunds\ndescription: Refund an order the acme way\n---\n\nRefund within 30 days.\n"
    ),
}


def folder(given: str | Path | None = None) -> Path:
    """``given`` (else ``$SKILLS_DIR``), made with the bundled skills when unset or empty."""
    given = given or os.environ.get("SKILLS_DIR")
    root = Path(given or tempfile.mkdtemp(prefix="skills-"))
    root.mkdir(parents=True, exist_ok=True)
    if not any(root.rglob("SKILL.md")):
        write_bundled(root)
    return root


def write_bundled(root: Path) -> None:
    for rel, text in BUNDLED.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def log(root: Path) -> list[dict[str, Any]]:
    """The requests about skills the server of ``root`` answered, in order."""
    path = root / ".log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def reads(root: Path) -> list[str]:
    """The URIs the server of ``root`` read (``resources/read``), in order."""
    return [e["uri"] for e in log(root) if e["method"] == "resources/read"]


def _log(root: Path, **entry: Any) -> None:
    with (root / ".log").open("a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def _knob(root: Path, name: str, default: Any) -> Any:
    path = root / name
    if not path.exists():
        return default
    text = path.read_text(encoding="utf-8")
    if name.endswith(".json"):
        return json.loads(text)
    if isinstance(default, int):
        return int(text.strip())
    return {line.strip() for line in text.splitlines() if line.strip()}


def _frontmatter(text: str) -> dict[str, Any]:
    import yaml

    if not text.startswith("---\n"):
        return {}
    end = text.find("\n---", 4)
    loaded = yaml.safe_load(text[4:end]) if end > 0 else None
    return loaded if isinstance(loaded, dict) else {}


def _skill_paths(root: Path) -> list[str]:
    return sorted(
        str(p.parent.relative_to(root)) for p in root.rglob("SKILL.md") if not p.parent.name.startswith(".")
    )


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def entry(root: Path, path: str) -> dict[str, Any]:
    """The listing's entry for the skill at ``path``, from the files as they are now."""
    skill = root / path
    lie = _knob(root, ".lie.json", {}).get(path, {})
    frontmatter = {**_frontmatter((skill / "SKILL.md").read_text(encoding="utf-8")), **lie}
    uri = f"skill://{path}/SKILL.md"
    if path in _knob(root, ".dynamic", set()):
        return {"uri": uri, "frontmatter": frontmatter, "resources": "dynamic"}
    hidden = _knob(root, ".hidden", set())
    resources = []
    for file in sorted(p for p in skill.rglob("*") if p.is_file()):
        rel = str(file.relative_to(root))
        if rel in hidden or any(part.startswith(".") for part in file.relative_to(skill).parts):
            continue
        if file.name == "SKILL.md" and file.parent != skill:
            continue  # a nested skill's files are its own
        data = file.read_bytes()
        resources.append({"uri": f"skill://{rel}", "digest": _digest(data), "size": len(data)})
    for stray in _knob(root, ".stray.json", {}).get(path, []):
        resources.append({"uri": stray, "digest": _digest(b"stray"), "size": 5})
    return {"uri": uri, "frontmatter": frontmatter, "resources": resources}


class ListParams(RequestParams):
    cursor: str | None = None


class GetParams(RequestParams):
    uri: str


PAGE = 2
"""Entries per ``skills/list`` page (so that listings are paged)."""


def build_server(name: str = "skills", root: str | Path | None = None) -> MCPServer:
    """The server of the skills under ``root`` (default ``$SKILLS_DIR``)."""
    root = folder(root)

    async def list_skills(ctx: ServerRequestContext[Any, Any], params: ListParams) -> HandlerResult:
        _log(root, method="skills/list", cursor=params.cursor)
        omitted = _knob(root, ".omit", set())
        paths = [p for p in _skill_paths(root) if p not in omitted]
        start = int(params.cursor or 0)
        page = paths[start : start + PAGE]
        result: dict[str, Any] = {
            "skills": [entry(root, p) for p in page],
            "ttlMs": _knob(root, ".ttl", 60000),
            "cacheScope": (root / ".scope").read_text().strip() if (root / ".scope").exists() else "private",
        }
        if (root / ".loop").exists():
            result["nextCursor"] = "0"
        elif start + PAGE < len(paths):
            result["nextCursor"] = str(start + PAGE)
        return result

    async def get_skill(ctx: ServerRequestContext[Any, Any], params: GetParams) -> HandlerResult:
        _log(root, method="skills/get", uri=params.uri)
        for path in _skill_paths(root):
            if params.uri == f"skill://{path}/SKILL.md":
                return {
                    "skill": entry(root, path),
                    "ttlMs": _knob(root, ".ttl", 60000),
                    "cacheScope": "private",
                }
        raise MCPError(INVALID_PARAMS, f"no skill at {params.uri}")

    class Skills(Extension):
        identifier = EXTENSION

        def methods(self) -> list[MethodBinding]:
            return [
                MethodBinding("skills/list", ListParams, list_skills),
                MethodBinding("skills/get", GetParams, get_skill),
            ]

    srv: MCPServer = MCPServer(name, extensions=[Skills()])

    def reader(rel: str) -> Any:
        def read() -> str | bytes:
            _log(root, method="resources/read", uri=f"skill://{rel}")
            data = (root / rel).read_bytes()
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError:
                return data

        return read

    for path in _skill_paths(root):
        for file in sorted(p for p in (root / path).rglob("*") if p.is_file()):
            rel = str(file.relative_to(root))
            if any(part.startswith(".") for part in file.relative_to(root).parts):
                continue
            mime = "text/markdown" if file.suffix == ".md" else None
            srv.add_resource(FunctionResource.from_function(reader(rel), f"skill://{rel}", mime_type=mime))

    @srv.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    return srv


if __name__ == "__main__":
    run_cli(build_server)
