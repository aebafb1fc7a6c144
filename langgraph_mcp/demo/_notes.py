"""The notes demo server: an in-memory note book (each process or in-process server its own)."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("notes", instructions="A tiny note book.")

NOTES: dict[str, str] = {
    "groceries": "oat milk, lemons, 2kg flour",
    "trip": "train to Lyon on Friday 08:12, platform 4",
    "ideas": "MCP tools that stream progress into LangGraph",
}


@server.tool()
def search_notes(query: str) -> list[str]:
    """Titles of the notes whose title or text contains ``query`` (case-insensitive)."""
    q = query.lower()
    return [title for title, text in NOTES.items() if q in title or q in text.lower()]


@server.tool()
def read_note(title: str) -> str:
    """The text of one note."""
    try:
        return NOTES[title]
    except KeyError:
        raise ToolError(f"no note titled {title!r}; try search_notes first") from None


@server.tool()
def write_note(title: str, text: str) -> str:
    """Create or replace a note."""
    NOTES[title] = text
    return f"saved {title!r}"
