"""A minimal MCP server over stdio, standard library only (starts in a few milliseconds of CPU).

    python benchmarks/tiny_stdio_server.py

Speaks the 2025-11-25 handshake (it answers ``server/discover`` with "method not found", so a
client in ``auto`` mode falls back to ``initialize``) and offers one tool, ``ping() -> "pong"``.
For ``bench_cold.py``: it separates the client's own cost of connecting many servers at once
from the CPU a Python MCP SDK server spends importing the SDK at startup.
"""

from __future__ import annotations

import json
import sys
from typing import Any

TOOL = {"name": "ping", "description": "Answer pong.", "inputSchema": {"type": "object", "properties": {}}}


def answer(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The result of a request, or ``None`` for a method this server does not have."""
    if method == "initialize":
        return {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "tiny", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": [TOOL]}
    if method == "tools/call" and params.get("name") == "ping":
        return {"content": [{"type": "text", "text": "pong"}], "isError": False}
    if method == "ping":
        return {}
    return None


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # a notification, or a response to nothing we asked
        result = answer(message["method"], message.get("params") or {})
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if result is None:
            reply["error"] = {"code": -32601, "message": f"Method not found: {message['method']}"}
        else:
            reply["result"] = result
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
