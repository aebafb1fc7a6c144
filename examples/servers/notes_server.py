"""The notes demo server, now installed with the package as ``langgraph_mcp.demo``.

This file is kept for the repository's own configurations (``graphs/mcp.json``): it runs the
same server. From any folder, use ``python -m langgraph_mcp.demo notes`` instead.

    python examples/servers/notes_server.py              # stdio
    python examples/servers/notes_server.py --http 8765  # streamable HTTP on 127.0.0.1:8765
"""

from __future__ import annotations

import sys

from langgraph_mcp.demo import demo_server, main

server = demo_server("notes")

if __name__ == "__main__":
    main(["notes", *sys.argv[1:]])
