"""Fixture server that keeps state per MCP session, for per-thread sessions.

State lives per session: per process over stdio (each session is its own process), per
``mcp-session-id`` over streamable HTTP (2025-11-25, stateful mode).

- ``remember``: appends an item to the session's list and returns the whole list.
- ``pid``: the server's process id.
- ``slow``: answers after ``seconds``.
- ``block``: answers once the file ``path`` exists (at most ``BLOCK_LIMIT`` seconds).
- ``confirm``: asks ``Confirm <item>?`` (Confirm), then says what the answer was.

Environment variables read by the running process: ``DEMO_PID_DIR`` (at startup, write a file
named after the PID into that directory).
"""

import os
import sys
from pathlib import Path
from typing import Annotated

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio
from mcp.server.mcpserver import AcceptedElicitation, Context, Elicit, ElicitationResult, MCPServer, Resolve

from tests.servers._runner import run_cli
from tests.servers.asker import Confirm
from tests.servers.demo import write_pid_file

PROCESS = "<process>"
BLOCK_LIMIT = 60.0


async def ask_confirm(item: str) -> Elicit[Confirm]:
    return Elicit(f"Confirm {item}?", Confirm)


def session_key(ctx: Context) -> str:
    """Which session a request belongs to: its ``mcp-session-id``, else the process's."""
    headers = {k.lower(): v for k, v in (ctx.headers or {}).items()}
    return headers.get("mcp-session-id", PROCESS)


def build_server(name: str = "stateful") -> MCPServer:
    items: dict[str, list[str]] = {}
    srv: MCPServer = MCPServer(name)

    @srv.tool()
    def remember(item: str, ctx: Context) -> list[str]:
        """Add ``item`` to this session's list; the whole list."""
        remembered = items.setdefault(session_key(ctx), [])
        remembered.append(item)
        return list(remembered)

    @srv.tool()
    def pid() -> int:
        """The server's process id."""
        return os.getpid()

    @srv.tool()
    async def slow(seconds: float) -> str:
        """Answer after ``seconds``."""
        await anyio.sleep(seconds)
        return f"slept {seconds}"

    @srv.tool()
    async def block(path: str) -> str:
        """Answer once the file ``path`` exists: ``released``, or ``gave up`` after a while."""
        with anyio.move_on_after(BLOCK_LIMIT):
            while not Path(path).exists():  # noqa: ASYNC110 - written by another process
                await anyio.sleep(0.02)
            return "released"
        return "gave up"

    @srv.tool()
    async def confirm(item: str, answer: Annotated[ElicitationResult[Confirm], Resolve(ask_confirm)]) -> str:
        """Ask ``Confirm <item>?``; ``confirmed <item>`` or ``not confirmed``."""
        if isinstance(answer, AcceptedElicitation) and answer.data.ok:
            return f"confirmed {item}"
        return "not confirmed"

    return srv


def main() -> None:
    from tests.servers import stateful

    run_cli(stateful.build_server, description=__doc__, on_start=write_pid_file)


if __name__ == "__main__":
    main()
