"""How the interoperability tests start MCP servers written by others (import these; not fixtures).

Every helper makes sure the servers are installed first (``install.ensure_installed``), so a
fresh checkout needs nothing but ``uv run --locked pytest`` (with Node.js 20+ and npm on PATH).
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import IO, Any

from tests.interop.install import (
    FASTMCP_TASKS_PROJECT,
    PYTHON_PROJECT,
    ensure_installed,
    fastmcp_tasks_python,
    mcp1_python,
    node_bin,
    python_bin,
)

FASTMCP_SERVER = PYTHON_PROJECT / "fastmcp_server.py"
MCP1_SERVER = Path(__file__).with_name("mcp1_server.py")
FASTMCP_TASKS_SERVER = FASTMCP_TASKS_PROJECT / "server.py"
LOOPBACK_PRELOAD = Path(__file__).with_name("loopback.cjs")
_LISTEN_TIMEOUT = 30.0
_STOP_GRACE = 5.0


def everything_stdio(**extra: Any) -> dict[str, Any]:
    """``@modelcontextprotocol/server-everything`` over stdio."""
    ensure_installed()
    return {"command": str(node_bin("mcp-server-everything")), "args": ["stdio"], **extra}


def filesystem_stdio(*allowed: Path, **extra: Any) -> dict[str, Any]:
    """``@modelcontextprotocol/server-filesystem`` allowed to use the folders ``allowed``."""
    ensure_installed()
    return {"command": str(node_bin("mcp-server-filesystem")), "args": [str(p) for p in allowed], **extra}


def memory_stdio(memory_file: Path, **extra: Any) -> dict[str, Any]:
    """``@modelcontextprotocol/server-memory`` keeping its knowledge graph in ``memory_file``."""
    ensure_installed()
    return {
        "command": str(node_bin("mcp-server-memory")),
        "env": {"MEMORY_FILE_PATH": str(memory_file)},
        **extra,
    }


def time_stdio(**extra: Any) -> dict[str, Any]:
    """``mcp-server-time`` (PyPI) with UTC as its local time zone."""
    ensure_installed()
    return {"command": str(python_bin("mcp-server-time")), "args": ["--local-timezone", "UTC"], **extra}


def git_stdio(repository: Path, **extra: Any) -> dict[str, Any]:
    """``mcp-server-git`` (PyPI) on ``repository``."""
    ensure_installed()
    return {"command": str(python_bin("mcp-server-git")), "args": ["--repository", str(repository)], **extra}


def fastmcp_stdio(**extra: Any) -> dict[str, Any]:
    """``tests/interop/python/fastmcp_server.py`` (built with FastMCP) over stdio."""
    ensure_installed()
    return {"command": str(python_bin("python")), "args": [str(FASTMCP_SERVER)], **extra}


def mcp1_stdio(version: str, **extra: Any) -> dict[str, Any]:
    """``tests/interop/mcp1_server.py`` on the ``mcp`` 1.x SDK ``version`` (``latest`` or ``old``,
    see ``install.MCP1_PROJECTS``) over stdio."""
    ensure_installed()
    return {"command": str(mcp1_python(version)), "args": [str(MCP1_SERVER)], **extra}


def fastmcp_tasks_stdio(log: Path, **extra: Any) -> dict[str, Any]:
    """``tests/interop/fastmcp_tasks/server.py`` (on ``fastmcp-tasks``) over stdio, logging what
    its tools do to ``log``."""
    ensure_installed()
    return {
        "command": str(fastmcp_tasks_python()),
        "args": [str(FASTMCP_TASKS_SERVER)],
        "env": {"TASKS_LOG": str(log)},
        **extra,
    }


def _pump(stream: IO[bytes], announce: str | None, seen: list[str], found: threading.Event) -> None:
    """Read ``stream`` to its end (an undrained pipe would block the child); set ``found`` on
    the first line starting with ``announce`` (that line is kept last in ``seen``)."""
    for raw in iter(stream.readline, b""):
        if announce is not None and not found.is_set():
            seen.append(raw.decode(errors="replace").rstrip())
            if seen[-1].startswith(announce):
                found.set()
    found.set()  # end of output: the waiter looks at ``seen`` to tell which


@contextmanager
def _running(args: list[str], *, env: dict[str, str], announce: str, on_stderr: bool) -> Iterator[str]:
    """Run ``args`` until the block ends; yields the line starting with ``announce`` it printed
    (on stderr or stdout) once it was ready. Its other output is read and dropped."""
    proc = subprocess.Popen(
        args,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    watched, other = (proc.stderr, proc.stdout) if on_stderr else (proc.stdout, proc.stderr)
    seen: list[str] = []
    found = threading.Event()
    pumps = [
        threading.Thread(target=_pump, args=(watched, announce, seen, found), daemon=True),
        threading.Thread(target=_pump, args=(other, None, [], threading.Event()), daemon=True),
    ]
    for pump in pumps:
        pump.start()
    try:
        if not found.wait(_LISTEN_TIMEOUT) or not seen or not seen[-1].startswith(announce):
            raise RuntimeError(
                f"{args[0]} did not start (exit code {proc.poll()}); it printed:\n" + "\n".join(seen)
            )
        yield seen[-1]
    finally:
        proc.terminate()
        try:
            proc.wait(_STOP_GRACE)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for pump in pumps:
            pump.join(_STOP_GRACE)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def everything_http() -> Iterator[str]:
    """``server-everything`` in ``streamableHttp`` mode on a free port of 127.0.0.1; its URL.

    It takes its port from ``PORT`` and names no host; ``loopback.cjs`` (preloaded) makes it
    listen on 127.0.0.1 only. It says ``listening on port`` on stderr once it accepts connections.
    """
    ensure_installed()
    for attempt in range(3):  # the free port may be taken between choosing it and binding it
        port = _free_port()
        started = False
        try:
            with _running(
                [str(node_bin("mcp-server-everything")), "streamableHttp"],
                env={"PORT": str(port), "NODE_OPTIONS": f"--require {LOOPBACK_PRELOAD}"},
                announce="MCP Streamable HTTP Server listening on port",
                on_stderr=True,
            ):
                started = True
                yield f"http://127.0.0.1:{port}/mcp"
                return
        except RuntimeError:
            if started or attempt == 2:
                raise


@contextmanager
def fastmcp_http() -> Iterator[str]:
    """``fastmcp_server.py --http`` (it binds port 0 of 127.0.0.1 itself); its URL."""
    ensure_installed()
    with _running(
        [str(python_bin("python")), str(FASTMCP_SERVER), "--http"],
        env={"PYTHONUNBUFFERED": "1"},
        announce="LISTENING ",
        on_stderr=False,
    ) as line:
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"


@contextmanager
def mcp1_http(version: str) -> Iterator[str]:
    """``mcp1_server.py --http`` on the ``mcp`` 1.x SDK ``version`` (it binds port 0 of 127.0.0.1
    itself); its URL."""
    ensure_installed()
    with _running(
        [str(mcp1_python(version)), str(MCP1_SERVER), "--http"],
        env={"PYTHONUNBUFFERED": "1"},
        announce="LISTENING ",
        on_stderr=False,
    ) as line:
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"


@contextmanager
def fastmcp_tasks_http(log: Path) -> Iterator[str]:
    """``tests/interop/fastmcp_tasks/server.py --http`` (it binds port 0 of 127.0.0.1 itself),
    logging what its tools do to ``log``; its URL."""
    ensure_installed()
    with _running(
        [str(fastmcp_tasks_python()), str(FASTMCP_TASKS_SERVER), "--http"],
        env={"PYTHONUNBUFFERED": "1", "TASKS_LOG": str(log)},
        announce="LISTENING ",
        on_stderr=False,
    ) as line:
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"


class Servers:
    """Configuration entries for the foreign servers that speak both stdio and HTTP. The HTTP
    servers are started on first use and shared (each pool still opens its own MCP session)
    until :meth:`close`."""

    def __init__(self) -> None:
        self._stack = ExitStack()
        self._urls: dict[str, str] = {}

    def _url(self, name: str, start: Callable[[], AbstractContextManager[str]]) -> str:
        if name not in self._urls:
            self._urls[name] = self._stack.enter_context(start())
        return self._urls[name]

    def everything(self, transport: str, **extra: Any) -> dict[str, Any]:
        if transport == "stdio":
            return everything_stdio(**extra)
        return {"url": self._url("everything", everything_http), **extra}

    def fastmcp(self, transport: str, **extra: Any) -> dict[str, Any]:
        if transport == "stdio":
            return fastmcp_stdio(**extra)
        return {"url": self._url("fastmcp", fastmcp_http), **extra}

    def mcp1(self, version: str, transport: str, **extra: Any) -> dict[str, Any]:
        if transport == "stdio":
            return mcp1_stdio(version, **extra)
        return {"url": self._url(f"mcp1-{version}", lambda: mcp1_http(version)), **extra}

    def close(self) -> None:
        self._stack.close()


__all__ = [
    "FASTMCP_SERVER",
    "FASTMCP_TASKS_SERVER",
    "MCP1_SERVER",
    "Servers",
    "everything_http",
    "everything_stdio",
    "fastmcp_http",
    "fastmcp_stdio",
    "fastmcp_tasks_http",
    "fastmcp_tasks_stdio",
    "filesystem_stdio",
    "git_stdio",
    "mcp1_http",
    "mcp1_stdio",
    "memory_stdio",
    "time_stdio",
]
