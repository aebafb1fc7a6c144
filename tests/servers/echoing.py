"""A server that repeats the secrets it was given on every channel it has: what a client must
keep out of its messages, logs, stream events and checkpoints.

Its *secrets* are the values of the request's ``authorization`` and ``x-*`` HTTP headers (over
HTTP) and ``$ECHO_SECRET`` (from its environment, over stdio).

- ``fail_echo()``: an ``isError`` result whose text and structured content show them.
- ``reject_echo()``: a JSON-RPC error whose message and data show them.
- ``log_echo()``: a log notification and a progress message showing them, then ``ok``.
- ``slow(seconds)``: ``slept`` after ``seconds``.
- ``crash()``: writes them to stderr, then exits (code 3) mid-call.

Run as a process (``python -m tests.servers.echoing``, stdio) it first writes ``$ECHO_SECRET``
to stderr, and a line that is not JSON-RPC to stdout with the secret from column
:data:`SPLIT_AT` on (across the 80 characters of it a client shows); with ``--crash-at-start``
it then exits (code 1) instead of serving.
"""

import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, CallToolResult, TextContent

from tests.servers._runner import run_cli

SPLIT_AT = 74


def secrets(ctx: Context | None) -> list[str]:
    """What this server was given: header values of the request, ``$ECHO_SECRET``."""
    headers = (ctx.headers if ctx is not None else None) or {}
    found = [v for k, v in headers.items() if k.lower() == "authorization" or k.lower().startswith("x-")]
    if os.environ.get("ECHO_SECRET"):
        found.append(os.environ["ECHO_SECRET"])
    return found


def build_server(
    name: str = "echoing",
    *,
    entered: Callable[[], None] | None = None,
    released: Callable[[], Awaitable[object]] | None = None,
) -> MCPServer:
    """``entered`` (in process) is called as each ``slow`` call starts; with ``released`` (in
    process) a ``slow`` call answers once ``released()`` is done, not after ``seconds``."""
    srv: MCPServer = MCPServer(name)

    @srv.tool()
    def fail_echo(ctx: Context) -> CallToolResult:
        """Fail, showing the secrets in the text and the structured content."""
        shown = secrets(ctx)
        return CallToolResult(
            content=[TextContent(type="text", text=f"refused: credentials {shown} are not valid")],
            structured_content={"rejected": shown},
            is_error=True,
        )

    @srv.tool()
    def reject_echo(ctx: Context) -> str:
        """Answer with a JSON-RPC error showing the secrets in its message and data."""
        shown = secrets(ctx)
        raise MCPError(INTERNAL_ERROR, f"backend refused {shown}", {"tried": shown})

    @srv.tool()
    async def log_echo(ctx: Context) -> str:
        """Log the secrets and report them as progress, then answer ``ok``."""
        shown = secrets(ctx)
        await ctx.warning(f"using {shown}", logger_name=f"auth {shown[-1]}" if shown else "auth")
        await ctx.report_progress(1, 2, f"signed in with {shown}")
        return "ok"

    @srv.tool()
    async def slow(seconds: float) -> str:
        """Answer ``slept`` after ``seconds``."""
        if entered is not None:
            entered()
        if released is not None:
            await released()
        else:
            await anyio.sleep(seconds)
        return "slept"

    @srv.tool()
    def crash() -> str:
        """Write the secrets to stderr and exit mid-call."""
        print(f"fatal: the backend refused {secrets(None)}", file=sys.stderr, flush=True)
        os._exit(3)

    return srv


def _start(crash: bool) -> None:
    secret = os.environ.get("ECHO_SECRET", "")
    print(f"starting with ECHO_SECRET={secret}", file=sys.stderr, flush=True)
    print("x" * SPLIT_AT + secret, flush=True)  # not JSON-RPC: the client skips it
    if crash:
        print(f"fatal: cannot sign in with {secret}", file=sys.stderr, flush=True)
        sys.exit(1)


def main() -> None:
    argv = sys.argv[1:]
    crash = "--crash-at-start" in argv
    run_cli(
        build_server,
        [a for a in argv if a != "--crash-at-start"],
        description=__doc__,
        on_start=lambda: _start(crash),
    )


if __name__ == "__main__":
    main()
