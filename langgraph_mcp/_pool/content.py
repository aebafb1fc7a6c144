"""MCP tool results -> LangChain ``ToolMessage`` content and artifact.

Every MCP content block becomes a LangChain standard content block:

=================================  ==========================================
MCP                                LangChain
=================================  ==========================================
``TextContent``                    ``{"type": "text", "text"}``
``ImageContent``                   ``{"type": "image", "base64", "mime_type"}``
``AudioContent``                   ``{"type": "audio", "base64", "mime_type"}`` (*)
``EmbeddedResource`` (text/blob)   ``{"type": "file", "base64", "mime_type", "extras": {"uri"}}``
``ResourceLink``                   ``{"type": "file", "url", "mime_type"?, "extras": {"name", ...}}``
=================================  ==========================================

:class:`~langgraph_mcp.OutputHandling` routes each kind to the message
content (seen by the model) or to the artifact. A single text block becomes
a plain string, exactly what ``ToolNode`` produces for a local tool returning
a string.

(*) LangChain turns a tool message's whole content list into a JSON string if
it holds a block type it does not accept there, ``audio`` among them. Audio
therefore goes to the artifact by default; routed to the content it travels as
a ``file`` block with its audio MIME type. ``structuredContent`` always goes to the artifact; when no block
reaches the content, its JSON is used as the content instead, with the data of any block routed
to the artifact (an image's base64, also as a ``data:`` URI) replaced by a placeholder.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Literal, TypeAlias

import mcp_types as types

from langgraph_mcp.config import OutputHandling
from langgraph_mcp.types import MCPToolArtifact

__all__ = ["convert_block", "convert_result", "error_text"]

_PROTOCOL_META = "io.modelcontextprotocol/"
_Kind: TypeAlias = Literal["text", "image", "audio", "resource", "resource_link"]


def _kind(block: types.ContentBlock) -> _Kind:
    if isinstance(block, types.TextContent):
        return "text"
    if isinstance(block, types.ImageContent):
        return "image"
    if isinstance(block, types.AudioContent):
        return "audio"
    if isinstance(block, types.EmbeddedResource):
        return "resource"
    return "resource_link"


def convert_block(block: types.ContentBlock) -> dict[str, Any]:
    """One MCP content block as a LangChain standard content block."""
    if isinstance(block, types.TextContent):
        return {"type": "text", "text": block.text}
    if isinstance(block, types.ImageContent):
        return {"type": "image", "base64": block.data, "mime_type": block.mime_type}
    if isinstance(block, types.AudioContent):
        return {"type": "audio", "base64": block.data, "mime_type": block.mime_type}
    if isinstance(block, types.EmbeddedResource):
        res = block.resource
        if isinstance(res, types.TextResourceContents):
            data = base64.b64encode(res.text.encode("utf-8")).decode("ascii")
            mime = res.mime_type or "text/plain"
        else:
            data = res.blob
            mime = res.mime_type or "application/octet-stream"
        return {"type": "file", "base64": data, "mime_type": mime, "extras": {"uri": str(res.uri)}}
    if isinstance(block, types.ResourceLink):
        out: dict[str, Any] = {"type": "file", "url": str(block.uri)}
        if block.mime_type:
            out["mime_type"] = block.mime_type
        extras = {
            k: v
            for k, v in (
                ("name", block.name),
                ("title", block.title),
                ("description", block.description),
                ("size", block.size),
            )
            if v is not None
        }
        out["extras"] = extras
        return out
    raise TypeError(f"unknown MCP content block {type(block).__name__}")


def _note(kind: _Kind, block: types.ContentBlock) -> str:
    if isinstance(block, types.EmbeddedResource):
        res = block.resource
        return f"[resource {res.uri} ({res.mime_type or 'unknown type'}) is in the artifact]"
    if isinstance(block, types.ResourceLink):
        return f"[resource link {block.uri} is in the artifact]"
    if isinstance(block, (types.ImageContent, types.AudioContent)):
        return f"[{kind} ({block.mime_type}) is in the artifact]"
    return f"[{kind} content is in the artifact]"


def convert_result(
    result: types.CallToolResult, routing: OutputHandling, *, server: str | None = None
) -> tuple[str | list[dict[str, Any]], MCPToolArtifact]:
    """Split a successful result into ``(content, artifact)``. With ``server`` (the server that
    produced it), the artifact and each resource block's ``extras`` name it, so that resource
    links can be read from there (``MCPPool.resolve_link``)."""
    content: list[dict[str, Any]] = []
    routed: list[dict[str, Any]] = []
    notes: list[str] = []
    for block in result.content:
        kind = _kind(block)
        converted = convert_block(block)
        if server is not None and kind in ("resource", "resource_link"):
            converted["extras"] = {**converted.get("extras", {}), "server": server}
        if getattr(routing, kind) == "content":
            if kind == "audio":
                # LangChain keeps only text/image/file/... blocks in a tool message's content
                # (anything else turns the whole list into a JSON string): audio rides as a file.
                converted = {**converted, "type": "file"}
            content.append(converted)
        else:
            routed.append(converted)
            if kind != "text":
                notes.append(_note(kind, block))
    if not content and result.structured_content is not None:
        structured = _without_blobs(result.structured_content, routed)
        content.append({"type": "text", "text": json.dumps(structured, ensure_ascii=False)})
    content.extend({"type": "text", "text": note} for note in notes)
    artifact: MCPToolArtifact = {"structured_content": result.structured_content, "content": routed}
    if server is not None:
        artifact["server"] = server
    meta = {k: v for k, v in (result.meta or {}).items() if not k.startswith(_PROTOCOL_META)}
    if meta:
        artifact["meta"] = meta
    if len(content) == 1 and content[0]["type"] == "text":
        return content[0]["text"], artifact
    if not content:
        return "", artifact
    return content, artifact


BLOB_PLACEHOLDER = "[binary data: in the artifact]"


def _without_blobs(value: Any, routed: list[dict[str, Any]]) -> Any:
    """``value`` (structured content) with every string that holds the data of a block routed to
    the artifact (as is, or inside a ``data:`` URI) replaced by :data:`BLOB_PLACEHOLDER`: binary
    content kept from the model never reaches it through the JSON fallback."""
    blobs = {b["base64"] for b in routed if isinstance(b.get("base64"), str) and b["base64"]}
    if not blobs:
        return value

    def clean(item: Any) -> Any:
        if isinstance(item, str):
            if item in blobs or (item.startswith("data:") and item.partition(",")[2] in blobs):
                return BLOB_PLACEHOLDER
            return item
        if isinstance(item, dict):
            return {k: clean(v) for k, v in item.items()}
        if isinstance(item, list):
            return [clean(v) for v in item]
        return item

    return clean(value)


def error_text(result: types.CallToolResult) -> str:
    """The text of an ``isError`` result (non-text blocks are counted, never inlined)."""
    texts = [b.text for b in result.content if isinstance(b, types.TextContent)]
    if texts:
        return "\n".join(texts)
    if result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False)
    if result.content:
        return f"The tool reported an error with {len(result.content)} non-text content block(s)."
    return "The tool reported an error without details."
