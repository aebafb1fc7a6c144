"""Misbehaving stdio servers.

``--mode exit-at-start``: write ``fatal: demo failure at startup`` to stderr, exit 1.
``--mode garbage``: print non-JSON lines to stdout, then sleep forever without answering.
``--mode slow-start``: sleep ``--delay`` seconds (default 30), then serve the demo server on stdio.
``--mode crash-on-call``: serve one tool, ``crash``, that writes ``CRASH_LINES`` to stderr and
exits (code 3) mid-call; with ``BROKEN_MARKER`` set, it first creates that file, and a server
started while the file exists fails at startup as ``exit-at-start`` does (so reconnects fail).
"""

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

STARTUP_ERROR = "fatal: demo failure at startup"
GARBAGE_LINES = ("this is not JSON-RPC", "<html>oops</html>", "{not json either")
CRASH_LINES = ("worker: lost the database", "worker: giving up")


def serve_crashing() -> None:
    import os

    from mcp.server.mcpserver import MCPServer

    marker = os.environ.get("BROKEN_MARKER")
    if marker and Path(marker).exists():
        print(STARTUP_ERROR, file=sys.stderr, flush=True)
        sys.exit(1)
    srv: MCPServer = MCPServer("broken")

    @srv.tool()
    def crash() -> str:
        """Write ``CRASH_LINES`` to stderr and exit mid-call."""
        if marker:
            Path(marker).touch()
        for line in CRASH_LINES:
            print(line, file=sys.stderr, flush=True)
        os._exit(3)

    srv.run("stdio")


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument(
        "--mode", choices=["exit-at-start", "garbage", "slow-start", "crash-on-call"], required=True
    )
    p.add_argument("--delay", type=float, default=30.0)
    args = p.parse_args(argv)

    if args.mode == "exit-at-start":
        print(STARTUP_ERROR, file=sys.stderr, flush=True)
        sys.exit(1)
    if args.mode == "crash-on-call":
        serve_crashing()
        return
    if args.mode == "garbage":
        for line in GARBAGE_LINES:
            print(line, flush=True)
        while True:
            time.sleep(3600)
    time.sleep(args.delay)
    # Imported late: the delay comes before any MCP setup.
    from tests.servers import demo

    demo.write_pid_file()
    demo.build_server().run("stdio")


if __name__ == "__main__":
    main()
