"""How the interoperability tests start MCP servers written by others (import these; not fixtures).

Every helper makes sure the servers are installed first (``install.ensure_installed``), so a
fresh checkout needs nothing but ``uv run --locked pytest`` (with Node.js 20+ and npm on PATH).
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

from tests.interop.install import PYTHON_PROJECT, ensure_installed, node_bin, python_bin

FASTMCP_SERVER = PYTHON_PROJECT / "fastmcp_server.py"
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


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), _STOP_GRACE)
        except TimeoutError:
            with suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()


async def _wait_for_line(stream: asyncio.StreamReader, prefix: str, seen: list[str]) -> str:
    while line := await stream.readline():
        text = line.decode(errors="replace").strip()
        seen.append(text)
        if text.startswith(prefix):
            return text
    raise EOFError(f"the server closed its output before printing {prefix!r}")


async def _drain(stream: asyncio.StreamReader) -> None:  # an undrained pipe would block the child
    while await stream.read(65536):
        pass


@asynccontextmanager
async def _spawn(
    args: list[str], *, env: dict[str, str], announce: str, on_stderr: bool
) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    proc = await asyncio.create_subprocess_exec(
        *args,
        env={**os.environ, **env},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    watched, other = (proc.stderr, proc.stdout) if on_stderr else (proc.stdout, proc.stderr)
    seen: list[str] = []
    drainers = [asyncio.ensure_future(_drain(other))]
    try:
        try:
            line = await asyncio.wait_for(_wait_for_line(watched, announce, seen), _LISTEN_TIMEOUT)
        except (TimeoutError, EOFError) as exc:
            await _stop(proc)
            raise RuntimeError(
                f"{args[0]} did not start: {exc!r}; exit code {proc.returncode}; output:\n" + "\n".join(seen)
            ) from exc
        drainers.append(asyncio.ensure_future(_drain(watched)))
        yield proc, line
    finally:
        await _stop(proc)
        for drainer in drainers:
            drainer.cancel()
            with suppress(asyncio.CancelledError):
                await drainer


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def everything_http() -> AsyncIterator[str]:
    """``server-everything`` in ``streamableHttp`` mode on a free port of 127.0.0.1; its URL.

    It takes its port from ``PORT`` and names no host; ``loopback.cjs`` (preloaded) makes it
    listen on 127.0.0.1 only. It says ``listening on port`` on stderr once it accepts connections.
    """
    ensure_installed()
    for attempt in range(3):  # the free port may be taken between choosing it and binding it
        port = _free_port()
        started = False
        try:
            async with _spawn(
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


@asynccontextmanager
async def fastmcp_http() -> AsyncIterator[str]:
    """``fastmcp_server.py --http`` (it binds port 0 of 127.0.0.1 itself); its URL."""
    ensure_installed()
    async with _spawn(
        [str(python_bin("python")), str(FASTMCP_SERVER), "--http"],
        env={"PYTHONUNBUFFERED": "1"},
        announce="LISTENING ",
        on_stderr=False,
    ) as (_proc, line):
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"


__all__ = [
    "FASTMCP_SERVER",
    "everything_http",
    "everything_stdio",
    "fastmcp_http",
    "fastmcp_stdio",
    "filesystem_stdio",
    "git_stdio",
    "memory_stdio",
    "time_stdio",
]
