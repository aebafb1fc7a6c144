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
    written to the graph's LangGraph store (namespace :func:`output_namespace`: ``("langgraph_mcp",
    "outputs", "thread", <the thread id, base64url>)``, key: the tool call id); the marker gives
    the model the handle and the offset to go on from, and the tool :data:`read_tool_output`
    (added to ``MCPToolNode`` / ``MCPMiddleware`` whenever a server uses this) reads the next
    piece. Only the same thread can read it. Without a store in the graph, or in a run without a
    ``thread_id``, the full text goes to the artifact instead (with a warning).

Any thread id works: it is encoded (UTF-8, then unpadded base64url), since a store refuses a
namespace label with a ``.`` (an e-mail address) or an empty one; the encoding is reversible, so
two thread ids never share outputs. Outputs stored by earlier versions, under the raw thread id
(``("langgraph_mcp", "outputs", <thread>)``), are still read when nothing is found under the
encoded one. Whatever goes wrong in :data:`read_tool_output` (no thread, no store, a store that
fails, an unknown handle) is an error ``ToolMessage`` for the model, never an exception that
ends the run.

The marker reads, e.g.::

    [output truncated: 2,000 of 50,000 characters shown; read more with
    read_tool_output(handle="call_1", offset=2000)]
"""

from __future__ import annotations

import asyncio
import base64
import logging
from typing import Any

from langchain_core.tools import BaseTool, ToolException, tool
from langgraph.prebuilt import ToolRuntime

from langgraph_mcp.errors import MCPError

__all__ = [
    "OUTPUT_NAMESPACE",
    "READ_TOOL_NAME",
    "cut_text",
    "marker",
    "output_namespace",
    "read_tool_output",
    "reader_tools",
    "store_output",
    "with_marker",
]

logger = logging.getLogger("langgraph_mcp.tools")

OUTPUT_NAMESPACE = ("langgraph_mcp", "outputs")
"""Where ``overflow: "store"`` keeps full outputs (see :func:`output_namespace`)."""
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


class NoThreadId(MCPError, ValueError):
    """The run has no ``thread_id``, so an output kept now could never be read back."""

    def __init__(self) -> None:
        super().__init__(
            "this run has no thread_id, so it has no stored tool outputs to read "
            "(they are kept per conversation)"
        )


def _thread(runtime: ToolRuntime) -> str:
    """The run's thread id.

    Raises:
        NoThreadId: there is none.
    """
    configurable = (runtime.config or {}).get("configurable") or {}
    thread_id = configurable.get("thread_id")
    if thread_id is None or thread_id == "":
        raise NoThreadId()
    return str(thread_id)


def output_namespace(thread_id: str) -> tuple[str, ...]:
    """The store namespace of one thread's kept outputs: any ``thread_id`` gives a valid one, and
    two thread ids never the same one (the label is the unpadded base64url of its UTF-8)."""
    label = base64.urlsafe_b64encode(thread_id.encode("utf-8", "surrogatepass")).rstrip(b"=").decode()
    return (*OUTPUT_NAMESPACE, "thread", label)


def _legacy_namespace(thread_id: str) -> tuple[str, ...] | None:
    """Where versions before :func:`output_namespace` kept the thread's outputs (only thread ids
    a store accepted as a label could have any)."""
    if "." in thread_id or "\x00" in thread_id:
        return None
    return (*OUTPUT_NAMESPACE, thread_id)


async def store_output(
    runtime: ToolRuntime, key: str, text: str, *, server: str, tool: str, chunk: int
) -> bool:
    """Keep ``text`` in the graph's store for :data:`read_tool_output`; whether there was a store.

    Raises:
        ValueError: the run has no ``thread_id``.
        Exception: what the store raises.
    """
    store = runtime.store
    if store is None:
        return False
    namespace = output_namespace(_thread(runtime))
    value = {"text": text, "server": server, "tool": tool, "chunk": chunk}
    try:
        await store.aput(namespace, key, value)
    except NotImplementedError:  # a synchronous-only store
        await asyncio.to_thread(store.put, namespace, key, value)
    return True


async def _get(store: Any, namespace: tuple[str, ...], key: str) -> Any:
    try:
        return await store.aget(namespace, key)
    except NotImplementedError:  # a synchronous-only store
        return await asyncio.to_thread(store.get, namespace, key)


async def _read(handle: str, offset: int, runtime: ToolRuntime) -> str:
    """The piece of output ``handle`` from ``offset`` on.

    Raises:
        ToolException: saying why nothing can be read (the model gets it as an error message).
    """
    store = runtime.store
    if store is None:
        raise ToolException("Error: this graph has no store, so no stored tool output can be read.")
    try:
        thread_id = _thread(runtime)
        item = await _get(store, output_namespace(thread_id), handle)
        legacy = _legacy_namespace(thread_id)
        if item is None and legacy is not None:
            item = await _get(store, legacy, handle)
    except NoThreadId as exc:
        raise ToolException(f"Error: {exc}.") from None
    except Exception as exc:  # the details go to the log only: a store's error may name its DSN
        logger.warning("read_tool_output: the store failed (%s: %s)", type(exc).__name__, exc)
        raise ToolException(
            f"Error: the stored tool output could not be read (the store failed: {type(exc).__name__})."
        ) from None
    if item is None:
        raise ToolException(f"Error: no stored tool output {handle!r} in this conversation.")
    text: str = item.value["text"]
    chunk: int = item.value["chunk"]
    if offset < 0 or offset >= len(text):
        raise ToolException(
            f"Error: offset {offset} is outside the output ({len(text):,} characters; offsets from 0)."
        )
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


# What cannot be read is an error message for the model (status "error"), not a failed run.
read_tool_output.handle_tool_error = True


def reader_tools(configs: Any) -> list[BaseTool]:
    """``[read_tool_output]`` when any server keeps overflowing output in the store, else ``[]``."""
    for config in configs.values():
        handlings = [config.output_handling, *(config.output_for(name) for name in config.tool_output)]
        if any(h.overflow == "store" and h.max_chars is not None for h in handlings):
            return [read_tool_output]
    return []
