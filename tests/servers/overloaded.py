"""Fixture server that answers some requests with the generic JSON-RPC server error ``-32000``
(``MCPError(-32000, ...)``: what a server says when it is busy or a backend refused), a code
the MCP SDK also uses on the client side for a connection that closed.

- ``refuse``: answers with ``-32000`` and ``message``.
- ``refuse_when_held``: waits until ``n`` ``hold`` calls of ``key`` run, then answers with
  ``-32000`` and ``message`` (``only <k> of <n> hold calls came`` after ``HOLD_LIMIT`` seconds).
- ``hold``: runs until ``release`` is called with its ``key``: ``released <key>``, or
  ``gave up`` after ``HOLD_LIMIT`` seconds.
- ``wait_held``: answers ``n`` once ``n`` ``hold`` calls of ``key`` run (less after
  ``HOLD_LIMIT`` seconds: how many ran).
- ``release``: lets the ``hold`` calls of ``key`` end (those running and those to come); how
  many were running.
- ``visit``: how many times this session called it with ``key``, this time included (a session
  is an ``mcp-session-id`` over streamable HTTP in the 2025-11-25 era, else the process).
- ``tally`` / ``tallied``: count a run under ``key`` and say how many there were / just say.
- ``refuse_listings``: while ``on``, ``tools/list`` is answered with ``-32000``.
- ``pid``: the server's process id.
- resource ``overloaded://busy`` and prompt ``busy``: answer with ``-32000`` and
  ``BUSY_MESSAGE``; resource ``overloaded://calm`` reads ``calm``.

Environment variables read by the running process: ``DEMO_PID_DIR`` (at startup, write a file
named after the PID into that directory).
"""

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError

from tests.servers._runner import run_cli
from tests.servers.demo import write_pid_file
from tests.servers.stateful import session_key

SERVER_ERROR = -32000
BUSY_MESSAGE = "backend busy, try again later"
HOLD_LIMIT = 20.0


@dataclass
class Gate:
    """The ``hold`` calls of one key: how many run, and whether they may end."""

    running: int = 0
    changed: anyio.Event = field(default_factory=anyio.Event)
    released: anyio.Event = field(default_factory=anyio.Event)

    def bump(self, delta: int) -> None:
        self.running += delta
        self.changed.set()
        self.changed = anyio.Event()

    async def until_running(self, n: int) -> bool:
        """Wait until ``n`` calls run (at most ``HOLD_LIMIT`` seconds); whether they did."""
        with anyio.move_on_after(HOLD_LIMIT):
            while self.running < n:
                await self.changed.wait()
        return self.running >= n


@dataclass
class ListingGate:
    """Server middleware: answers ``tools/list`` with ``-32000`` while ``refusing``."""

    refusing: bool = False

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if self.refusing and ctx.method == "tools/list":
            raise MCPError(SERVER_ERROR, BUSY_MESSAGE)
        return await call_next(ctx)


def build_server(name: str = "overloaded") -> MCPServer:
    gates: dict[str, Gate] = {}
    visits: dict[tuple[str, str], int] = {}
    tallies: dict[str, int] = {}
    listings = ListingGate()
    srv: MCPServer = MCPServer(name, middleware=[listings])

    def gate(key: str) -> Gate:
        return gates.setdefault(key, Gate())

    @srv.tool()
    def refuse(message: str = BUSY_MESSAGE) -> str:
        """Answer with the JSON-RPC error -32000 and ``message``."""
        raise MCPError(SERVER_ERROR, message)

    @srv.tool()
    async def refuse_when_held(key: str, n: int, message: str = BUSY_MESSAGE) -> str:
        """Once ``n`` ``hold`` calls of ``key`` run, answer with the JSON-RPC error -32000."""
        held = gate(key)
        if await held.until_running(n):
            raise MCPError(SERVER_ERROR, message)
        return f"only {held.running} of {n} hold calls came"

    @srv.tool()
    async def hold(key: str) -> str:
        """Run until ``release(key)``: ``released <key>`` (``gave up`` after a while)."""
        held = gate(key)
        held.bump(1)
        try:
            with anyio.move_on_after(HOLD_LIMIT):
                await held.released.wait()
                return f"released {key}"
            return "gave up"
        finally:
            held.bump(-1)

    @srv.tool()
    async def wait_held(key: str, n: int) -> int:
        """``n`` once ``n`` ``hold`` calls of ``key`` run (after a while: how many do)."""
        held = gate(key)
        await held.until_running(n)
        return held.running

    @srv.tool()
    def release(key: str) -> int:
        """Let the ``hold`` calls of ``key`` end; how many were running."""
        held = gate(key)
        held.released.set()
        return held.running

    @srv.tool()
    def visit(key: str, ctx: Context) -> int:
        """How many times this session called this tool with ``key``, this time included."""
        seen = (session_key(ctx), key)
        visits[seen] = visits.get(seen, 0) + 1
        return visits[seen]

    @srv.tool()
    def tally(key: str) -> int:
        """Count one run under ``key``; how many there were."""
        tallies[key] = tallies.get(key, 0) + 1
        return tallies[key]

    @srv.tool()
    def tallied(key: str) -> int:
        """How many runs ``tally`` counted under ``key``."""
        return tallies.get(key, 0)

    @srv.tool()
    def refuse_listings(on: bool) -> bool:
        """Answer ``tools/list`` with the JSON-RPC error -32000 while ``on``."""
        listings.refusing = on
        return on

    @srv.tool()
    def pid() -> int:
        """The server's process id."""
        return os.getpid()

    @srv.resource("overloaded://busy")
    def busy_resource() -> str:
        """Always answers with the JSON-RPC error -32000."""
        raise MCPError(SERVER_ERROR, BUSY_MESSAGE)

    @srv.resource("overloaded://calm")
    def calm_resource() -> str:
        """Reads ``calm``."""
        return "calm"

    @srv.prompt()
    def busy() -> str:
        """Always answers with the JSON-RPC error -32000."""
        raise MCPError(SERVER_ERROR, BUSY_MESSAGE)

    return srv


def main() -> None:
    from tests.servers import overloaded

    run_cli(overloaded.build_server, description=__doc__, on_start=write_pid_file)


if __name__ == "__main__":
    main()
