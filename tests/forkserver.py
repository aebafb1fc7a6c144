"""Run the suite's Python child processes from a warm interpreter: ``command(...)``.

Fixture servers (``python -m tests.servers.<module>``) and the scenario runners of the
new-process tests (``tests/graph_runner.py``, ``tests/agent_runner.py``) spend about a second (a
server) to three (a runner) importing the MCP SDK, LangGraph and this package before doing
anything; the suite starts hundreds of them. ``command()`` gives the argv of a launcher
(``tests/forklaunch.py``, milliseconds to start) that has a fork server run the program in a
child forked from an interpreter that has already imported all of that.

The child is as new as a new interpreter: the fork server has only imported modules (no
threads, no event loop, no state of any program run), the program runs afresh as ``__main__``
with the launcher's arguments, environment, working directory and stdin/stdout/stderr. The
launcher stands in for it (signals passed on, the same exit status), so the code under test
sees one process that behaves like the program. What a forked child cannot imitate (a pid
that is the launcher's, a process group) no test relies on.

One fork server per test process (a pytest-xdist worker), started on first use and stopped at
exit; the processes it and its tests start use the same one (``SOCKET_ENV``).
``LANGGRAPH_MCP_TEST_NO_FORK=1`` runs every program in a plain new interpreter instead.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import os
import pkgutil
import runpy
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LAUNCHER = HERE / "forklaunch.py"
WARM = (
    "mcp",
    "mcp.server.mcpserver",
    "uvicorn",
    "starlette.applications",
    "langgraph_mcp",
    "langgraph.checkpoint.sqlite.aio",
    "langchain.agents",
    "tests.conftest_servers",
    "tests.helpers",
)
"""What the fork server imports before it serves (with every module of ``tests.servers``)."""

_server: subprocess.Popen[str] | None = None
_socket: str | None = None
_lock = threading.Lock()


def command(*argv: str) -> list[str]:
    """The argv that runs ``python *argv`` (``-m module ...`` or ``script.py ...``) forked from
    the warm interpreter."""
    if os.environ.get("LANGGRAPH_MCP_TEST_NO_FORK") == "1":
        return [sys.executable, *argv]
    return [sys.executable, "-S", str(LAUNCHER), _ensure_server(), *argv]


SOCKET_ENV = "LANGGRAPH_MCP_TEST_FORK_SOCKET"
"""Set to the fork server's socket for the processes the suite starts, so that they (scenario
runners starting fixture servers) use the same fork server instead of starting their own."""


def server_pid() -> int | None:
    """The pid of this process's fork server, if it started one."""
    return _server.pid if _server is not None else None


def _ensure_server() -> str:
    global _server, _socket
    with _lock:
        if _server is not None and _server.poll() is None and _socket is not None:
            return _socket
        inherited = os.environ.get(SOCKET_ENV)
        if _server is None and inherited and os.path.exists(inherited):
            return inherited
        folder = tempfile.mkdtemp(prefix="lgmcp-fork-")
        path = os.path.join(folder, "fork.sock")
        server = subprocess.Popen(
            [sys.executable, "-m", "tests.forkserver", path],
            cwd=HERE.parent,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its children share its process group: stopped together
        )
        assert server.stdout is not None
        if server.stdout.readline().strip() != "ready":
            server.kill()
            raise RuntimeError("the test fork server did not start")
        _server, _socket = server, path
        os.environ[SOCKET_ENV] = path
        atexit.register(_stop, server)
        return path


def _stop(server: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        server.wait(timeout=10)


# The fork server itself (``python -m tests.forkserver <socket>``).


def _receive(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise EOFError("the launcher went away")
        data += chunk
    return data


def serve(path: str) -> None:
    """Accept launchers on ``path``; fork a child per launcher; send each launcher its child's
    pid, then its exit status once the child is reaped. Single-threaded, so forking is safe."""
    for module in WARM:
        importlib.import_module(module)
    import tests.servers

    for info in pkgutil.iter_modules(tests.servers.__path__):
        importlib.import_module(f"tests.servers.{info.name}")
    waker_r, waker_w = os.pipe()
    os.set_blocking(waker_w, False)
    signal.set_wakeup_fd(waker_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, socket.socket] = {}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(path)
        listener.listen(128)
        selector = selectors.DefaultSelector()
        selector.register(listener, selectors.EVENT_READ)
        selector.register(waker_r, selectors.EVENT_READ)
        print("ready", flush=True)
        while True:
            for key, _ in selector.select():
                if key.fileobj is listener:
                    conn, _ = listener.accept()
                    try:
                        pid = _start(conn, [listener, selector, *children.values()], (waker_r, waker_w))
                    except (EOFError, OSError, ValueError):
                        conn.close()
                        continue
                    children[pid] = conn
                    with contextlib.suppress(OSError):
                        conn.sendall(struct.pack("!i", pid))
                else:
                    with contextlib.suppress(BlockingIOError):
                        os.read(waker_r, 4096)
                    _reap(children)


def _reap(children: dict[int, socket.socket]) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is None:
            continue
        if os.WIFSIGNALED(status):
            reply = bytes([1, os.WTERMSIG(status)])
        else:
            reply = bytes([0, os.WEXITSTATUS(status) & 0xFF])
        with contextlib.suppress(OSError):
            conn.sendall(reply)
        conn.close()


def _start(conn: socket.socket, server_objects: list[Any], server_fds: tuple[int, ...]) -> int:
    header, fds, _, _ = socket.recv_fds(conn, 4, 3)
    if len(fds) != 3:
        for fd in fds:
            os.close(fd)
        raise ValueError("a launcher must pass stdin, stdout and stderr")
    try:
        header += _receive(conn, 4 - len(header))
        (size,) = struct.unpack("!I", header)
        request = json.loads(_receive(conn, size))
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    pid = os.fork()
    if pid:
        for fd in fds:
            os.close(fd)
        return pid
    # The child: nothing of the server's survives into the program.
    status = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for obj in server_objects:
            obj.close()
        for fd in server_fds:
            os.close(fd)
        status = _run(conn, fds, request)
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(status)


def _run(conn: socket.socket, fds: list[int], request: dict[str, object]) -> int:
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)

    def watch() -> None:  # the launcher never writes again: end of file means it was killed
        with contextlib.suppress(OSError):
            conn.recv(1)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, daemon=True).start()
    env = request["env"]
    argv = request["argv"]
    cwd = request["cwd"]
    assert isinstance(env, dict) and isinstance(argv, list) and isinstance(cwd, str)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    try:
        if argv[0] == "-m":
            sys.argv = [argv[1], *argv[2:]]
            sys.modules.pop(argv[1], None)  # imported to warm up; it runs afresh as __main__
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(argv)
            sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code & 0xFF
        print(code, file=sys.stderr)
        return 1
    except BaseException:
        import traceback

        traceback.print_exc()
        return 1
    finally:
        _exit_like_an_interpreter()
    return 0


def _exit_like_an_interpreter() -> None:
    """What an interpreter does when its program ends: wait for non-daemon threads, run the
    ``atexit`` functions."""
    with contextlib.suppress(Exception):
        threading._shutdown()  # type: ignore[attr-defined]
    with contextlib.suppress(Exception):
        atexit._run_exitfuncs()


if __name__ == "__main__":
    serve(sys.argv[1])
