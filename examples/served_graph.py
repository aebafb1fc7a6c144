"""A LangGraph graph served as an MCP server: its ``interrupt()`` becomes a question to the client.

The graph drafts a release note for a version and asks a person to approve the wording before
it is published. Served over stdio, it is one MCP tool, ``release_note``; any MCP client (Claude
Desktop, an IDE, another agent) calls it, answers the question, and gets the note. Offline, no
API key.

    uv run python -m langgraph_mcp.serve examples/served_graph.py:graph          # stdio
    uv run python -m langgraph_mcp.serve examples/served_graph.py:graph --transport http --port 8000
    uv run examples/served_graph.py          # serves it over stdio, the same as the first line

See ``examples/served_roundtrip.py`` for a graph that calls this one through ``MCPToolNode``.
"""

from __future__ import annotations

from typing import Any

from langgraph.config import get_stream_writer
from langgraph.graph import START, StateGraph
from langgraph.types import interrupt
from typing_extensions import TypedDict


class Release(TypedDict, total=False):
    version: str
    """The version to announce, e.g. ``1.2.0``."""
    note: str
    published: bool


class ReleaseInput(TypedDict):
    version: str


def draft(state: Release) -> dict[str, Any]:
    get_stream_writer()({"message": f"drafting the note for {state['version']}"})
    return {"note": f"Version {state['version']} is out: faster, smaller, kinder."}


def review(state: Release) -> dict[str, Any]:
    # A plain interrupt() value: the client is asked with a one-field form ("answer").
    answer = interrupt({"question": f"Publish this note? {state['note']!r} (yes, or a new wording)"})
    text = str(answer).strip()
    if text.lower() in ("yes", "y", "ok"):
        return {"published": True}
    return {"note": text, "published": True}


builder = StateGraph(Release, input_schema=ReleaseInput)
builder.add_node("draft", draft)
builder.add_node("review", review)
builder.add_edge(START, "draft")
builder.add_edge("draft", "review")
graph = builder.compile(name="release_note")


if __name__ == "__main__":
    from langgraph_mcp.serve import create_mcp_server

    create_mcp_server(graph, name="releases").run("stdio")
