"""How much of a tool's output the model sees: ``max_chars`` and what happens to the rest.

A server's ``output_handling`` (or a tool's entry in ``tool_output``) may set ``max_chars``: the
text of a result (and of an error) that reaches the model is cut to that many characters, and a
marker says so, and how much there was. Non-text blocks in the content (images) are kept; only
text counts. What happens to the full text is ``overflow``:

``"truncate"``
    dropped.
``"artifact"``
    kept in full in the ``ToolMessage`` artifact (``artifact["full_text"]``) for the application;
    the model sees the cut text.
``"store"``
    written to the graph's LangGraph store (namespace ``("langgraph_mcp", "outputs", <thread>)``,
    key: the tool call id); the marker gives the model the handle and the offset to go on from,
    and the tool :data:`read_tool_output` (added to ``MCPToolNode`` / ``MCPMiddleware`` whenever
    a server uses this) reads the next piece. Only the same thread can read it. Without a store
    in the graph, the full text goes to the artifact instead (with a warning).

The marker reads, e.g.::

    [output truncated: 2,000 of 50,000 characters shown; read more with
    read_tool_output(handle="call_1", offset=2000)]
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from langchain_core.tools import BaseTool, tool
from langgraph.prebuilt import ToolRuntime

__all__ = [
    "OUTPUT_NAMESPACE",
    "READ_TOOL_NAME",
    "cut_text",
    "marker",
    "read_tool_output",
    "reader_tools",
    "store_output",
    "with_marker",
]

logger = logging.getLogger("langgraph_mcp.tools")

OUTPUT_NAMESPACE = ("langgraph_mcp", "outputs")
"""Where ``overflow: "store"`` keeps full outputs (then the thread id)."""
READ_TOOL_NAME = "read_tool_output"


def _text_length(content: str | list[Any]) -> int:
    if isinstance(content, str):
        return len(content)
    return sum(len(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")


def _full_text(content: str | list[Any]) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text")


def cut_text(content: str | list[Any], max_chars: int) -> tuple[str | list[Any], str | None, int]:
    """``content`` with its text cut to ``max_chars`` characters: ``(cut, full_text, shown)``;
    ``full_text`` (text blocks joined by newlines) is ``None`` (and ``content`` returned as is)
    when it was within the limit; ``shown`` is where the cut falls in ``full_text``.

    In a list, text blocks are kept in order until the budget runs out (the last one cut, the
    rest dropped); other blocks stay."""
    total = _text_length(content)
    if total <= max_chars:
        return content, None, total
    full = _full_text(content)
    if isinstance(content, str):
        return content[:max_chars], full, max_chars
    budget = max_chars
    kept: list[Any] = []
    texts: list[str] = []
    for block in content:
        if not (isinstance(block, dict) and block.get("type") == "text"):
            kept.append(block)
            continue
        if budget <= 0:
            continue
        text = block["text"][:budget]
        budget -= len(text)
        texts.append(text)
        kept.append({**block, "text": text})
    return kept, full, len("\n".join(texts))  # where the cut falls in the full text


def marker(shown: int, total: int, where: str = "") -> str:
    """The note that tells the model its output was cut."""
    return f"[output truncated: {shown:,} of {total:,} characters shown{where}]"


def with_marker(content: str | list[Any], note: str) -> str | list[Any]:
    if isinstance(content, str):
        return f"{content}\n{note}"
    return [*content, {"type": "text", "text": note}]


def _thread(runtime: ToolRuntime) -> str:
    configurable = (runtime.config or {}).get("configurable") or {}
    return str(configurable.get("thread_id") or "")


async def store_output(
    runtime: ToolRuntime, key: str, text: str, *, server: str, tool: str, chunk: int
) -> bool:
    """Keep ``text`` in the graph's store for :data:`read_tool_output`; whether there was a store."""
    store = runtime.store
    if store is None:
        return False
    namespace = (*OUTPUT_NAMESPACE, _thread(runtime))
    value = {"text": text, "server": server, "tool": tool, "chunk": chunk}
    try:
        await store.aput(namespace, key, value)
    except NotImplementedError:  # a synchronous-only store
        await asyncio.to_thread(store.put, namespace, key, value)
    return True


async def _read(handle: str, offset: int, runtime: ToolRuntime) -> str:
    store = runtime.store
    if store is None:
        return "Error: this graph has no store, so no stored tool output can be read."
    namespace = (*OUTPUT_NAMESPACE, _thread(runtime))
    try:
        item = await store.aget(namespace, handle)
    except NotImplementedError:
        item = await asyncio.to_thread(store.get, namespace, handle)
    if item is None:
        return f"Error: no stored tool output {handle!r} in this conversation."
    text: str = item.value["text"]
    chunk: int = item.value["chunk"]
    if offset < 0 or offset >= len(text):
        return f"Error: offset {offset} is outside the output ({len(text):,} characters; offsets from 0)."
    piece = text[offset : offset + chunk]
    end = offset + len(piece)
    if end < len(text):
        return with_marker(
            piece,
            marker(
                len(piece),
                len(text),
                f" from offset {offset}; read more with {READ_TOOL_NAME}(handle={handle!r}, offset={end})",
            ),
        )  # type: ignore[return-value]
    return f"{piece}\n[end of output: characters {offset:,} to {end:,} of {len(text):,}]"


@tool(READ_TOOL_NAME)
async def read_tool_output(handle: str, offset: int, runtime: ToolRuntime) -> str:
    """Read more of a tool output that was cut short. Use the handle and offset given in the
    "[output truncated: ...]" note; each call returns the next piece and the offset to go on from."""
    return await _read(handle, offset, runtime)


def reader_tools(configs: Any) -> list[BaseTool]:
    """``[read_tool_output]`` when any server keeps overflowing output in the store, else ``[]``."""
    for config in configs.values():
        handlings = [config.output_handling, *(config.output_for(name) for name in config.tool_output)]
        if any(h.overflow == "store" and h.max_chars is not None for h in handlings):
            return [read_tool_output]
    return []
