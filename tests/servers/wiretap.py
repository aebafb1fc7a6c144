"""Runs a stdio MCP server and records what the client writes to it, line by line.

    python -m tests.servers.wiretap <log file> <server command...>

Each line the client writes to the server's stdin is appended to the log file as it passes
(``flush`` per line), then handed to the server unchanged; the server's stdout is relayed back
unchanged. Its stderr is the wiretap's. Exits with the server's exit code once the server has
closed its stdout. Standard library only, so it can wrap any server.
"""

import contextlib
import subprocess
import sys
import threading


def _relay_input(server: subprocess.Popen[bytes], log_path: str) -> None:
    assert server.stdin is not None
    with open(log_path, "ab", buffering=0) as log:
        for line in sys.stdin.buffer:
            log.write(line)
            try:
                server.stdin.write(line)
                server.stdin.flush()
            except (BrokenPipeError, ValueError):
                break
    with contextlib.suppress(BrokenPipeError, ValueError):
        server.stdin.close()


def main() -> None:
    log_path, command = sys.argv[1], sys.argv[2:]
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdout is not None
    threading.Thread(target=_relay_input, args=(server, log_path), daemon=True).start()
    for line in iter(server.stdout.readline, b""):
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    sys.exit(server.wait())


if __name__ == "__main__":
    main()
