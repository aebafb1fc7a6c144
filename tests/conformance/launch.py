"""The command the conformance suite runs when a warm client is serving (see ``run.py``).

Starting the client's interpreter costs seconds (importing LangGraph and the MCP SDK) and the
suite starts all its scenarios at once, so ``run.py`` keeps one interpreter that has imported
``client.py`` and forks it per scenario (``client.py --serve``). This launcher, standard
library only and started with ``python -S``, hands that server its arguments, the scenario's
environment and its own stdin/stdout/stderr, and exits with the forked client's status.
"""

import json
import os
import socket
import sys

PASSED = ("MCP_CONFORMANCE_SCENARIO", "MCP_CONFORMANCE_CONTEXT", "MCP_CONFORMANCE_PROTOCOL_VERSION")


def main() -> int:
    path = os.environ["LANGGRAPH_MCP_CONFORMANCE_SOCKET"]
    request = {"argv": sys.argv, "env": {name: os.environ[name] for name in PASSED if name in os.environ}}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(path)
        socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
        conn.shutdown(socket.SHUT_WR)
        status = conn.recv(1)
    return status[0] if status else 1


if __name__ == "__main__":
    sys.exit(main())
