"""Small MCP servers for trying the package out, installed with it.

They need nothing beyond the package's own dependencies, and run from any folder:

- ``math``: ``add``, ``multiply``, ``describe`` (statistics, structured output) and
  ``count_primes`` (slow, reports progress).
- ``notes``: ``search_notes``, ``read_note``, ``write_note`` on an in-memory note book.
- ``shop``: ``cancel_order`` and ``book_trip``, which ask the person for input (elicitation).
- ``skills``: two skills (``io.modelcontextprotocol/skills``: ``release-notes``, with a template
  file, and ``incident-review``) and the tool ``word_count``.
- ``events``: two event types (``io.modelcontextprotocol/events``, by poll or push:
  ``note.added``, fired by the tool ``add_note``, and ``clock.tick``, one a second), for
  ``MCPPool.events``.

Start one over stdio from a connection::

    {"math": {"command": sys.executable, "args": ["-m", "langgraph_mcp.demo", "math"]}}

(``sys.executable``: the Python that runs your program, so the server finds the package too.)
On a terminal, ``python -m langgraph_mcp.demo math --http 8765`` serves it over streamable HTTP
at ``http://127.0.0.1:8765/mcp``. In-process, pass the server object itself:
``{"notes": demo_server("notes")}``.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence
from typing import Final

from mcp.server.mcpserver import MCPServer

__all__ = ["SERVER_NAMES", "demo_server", "main"]

SERVER_NAMES: Final = ("math", "notes", "shop", "skills", "events")
"""The names of the demo servers, for :func:`demo_server` and ``python -m langgraph_mcp.demo``."""


def demo_server(name: str) -> MCPServer:
    """The demo server called ``name`` (one of :data:`SERVER_NAMES`), to run in-process.

    Raises:
        ValueError: ``name`` is not a demo server.
    """
    if name not in SERVER_NAMES:
        raise ValueError(f"no demo server named {name!r}; the demo servers are {', '.join(SERVER_NAMES)}")
    server = importlib.import_module(f"langgraph_mcp.demo._{name}").server
    assert isinstance(server, MCPServer)
    return server


def main(argv: Sequence[str] | None = None) -> None:
    """Run a demo server: ``python -m langgraph_mcp.demo NAME [--http PORT]``.

    Over stdio by default (what a connection's ``command``/``args`` start), or over streamable
    HTTP on ``127.0.0.1:PORT`` with ``--http PORT``.
    """
    parser = argparse.ArgumentParser(
        prog="python -m langgraph_mcp.demo", description="Run one of langgraph-mcp's demo MCP servers."
    )
    parser.add_argument("name", choices=SERVER_NAMES, help="which server")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT")
    ns = parser.parse_args(argv)
    server = demo_server(ns.name)
    if ns.http:
        server.run("streamable-http", host="127.0.0.1", port=ns.http)
    else:
        server.run("stdio")
