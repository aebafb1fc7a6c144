"""A stdio server that does not exit when its stdin closes (a background worker keeps it alive).

Well-behaved servers exit on stdin EOF, so a client that merely dies leaves them no orphan; this
one stays until it is terminated. It shows whether a client really closes its sessions.
With ``STUBBORN_IGNORE_SIGTERM=1`` it ignores SIGTERM too: only SIGKILL ends it.
"""

import os
import signal
import sys
import threading
import time
from pathlib import Path

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp.server.mcpserver import MCPServer


def build_server() -> MCPServer:
    srv: MCPServer = MCPServer("stubborn")

    @srv.tool()
    def ping() -> str:
        """Answer ``pong``."""
        return "pong"

    return srv


if __name__ == "__main__":
    from tests.servers.demo import write_pid_file

    write_pid_file()  # $DEMO_PID_DIR/<pid>, when set
    if os.environ.get("STUBBORN_IGNORE_SIGTERM") == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    threading.Thread(target=time.sleep, args=(3600,), name="background-worker", daemon=False).start()
    build_server().run("stdio")
