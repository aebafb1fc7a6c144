"""Start a Python program in a process forked from a warm interpreter (see ``tests/forkserver.py``).

    python -S tests/forklaunch.py <socket> -m <module> [args...]
    python -S tests/forklaunch.py <socket> <script.py> [args...]

Standard library only and started with ``-S``, so it is up in milliseconds. It hands the fork
server its arguments, environment, working directory and its own stdin/stdout/stderr, then
stands in for the program: signals it receives are passed on to it, and it exits the way the
program exited (the same status, or killed by the same signal). Once the program is running this
process holds none of the three pipes, so whoever reads them sees end of file exactly when the
program ends. If this process is killed outright (SIGKILL), the program kills itself.
"""

import contextlib
import json
import os
import signal
import socket
import struct
import sys

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def receive(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def main() -> int:
    path, argv = sys.argv[1], sys.argv[2:]
    request = json.dumps({"argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}).encode()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    socket.send_fds(conn, [struct.pack("!I", len(request)) + request], [0, 1, 2])
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    pid_bytes = receive(conn, 4)
    if len(pid_bytes) != 4:
        return 1
    (pid,) = struct.unpack("!i", pid_bytes)

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)

    for signum in FORWARDED:
        signal.signal(signum, forward)
    status = receive(conn, 2)
    if len(status) != 2:
        return 1
    killed, value = status
    if killed:
        signal.signal(value, signal.SIG_DFL)
        os.kill(os.getpid(), value)
        return 128 + value
    return value


if __name__ == "__main__":
    sys.exit(main())
