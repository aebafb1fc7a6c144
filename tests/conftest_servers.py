"""Helpers for starting the fixture servers in ``tests/servers`` (import these; not fixtures)."""

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager, suppress
from pathlib import Path
from typing import Any, Literal

from mcp.server.mcpserver import MCPServer

from tests.forkserver import command
from tests.servers._runner import URL_PATHS, bind_socket, make_app, make_uvicorn_server

REPO_ROOT = Path(__file__).resolve().parents[1]
SERVERS_DIR = REPO_ROOT / "tests" / "servers"
LISTEN_TIMEOUT = 30.0
TERMINATE_GRACE = 5.0


def _child_env(env: dict[str, str] | None) -> dict[str, str]:
    """What a fixture child needs to import ``tests.servers`` (``sys.executable`` has the deps)."""
    return {"PYTHONPATH": str(REPO_ROOT), "PYTHONUNBUFFERED": "1", **(env or {})}


def stdio_params(
    module: str, *args: str, env: dict[str, str] | None = None, fork: bool = True
) -> dict[str, Any]:
    """An ``mcpServers``-style stdio entry running ``python -m tests.servers.<module> *args``.

    A stdio child gets only the SDK's safe default environment (HOME, PATH, ...) plus ``env``,
    so ``PYTHONPATH`` is passed explicitly here (``cwd`` alone would also do for ``-m``).
    The server runs forked from a warm interpreter behind a launcher (``tests/forkserver.py``)
    unless ``fork`` is false: tests of what happens to the very process the client started (its
    pid, how long it takes to exit) ask for a plain interpreter.
    """
    launch = command if fork else (lambda *argv: [sys.executable, *argv])
    executable, *argv = launch("-m", f"tests.servers.{module}", *args)
    return {
        "command": executable,
        "args": argv,
        "cwd": str(REPO_ROOT),
        "env": _child_env(env),
    }


def wiretapped(config: dict[str, Any], log: Path) -> dict[str, Any]:
    """A stdio entry ``config`` whose server runs behind ``tests/servers/wiretap.py``: each line
    the client writes to the server is appended to ``log`` (read it with :func:`written`)."""
    tap = [str(SERVERS_DIR / "wiretap.py"), str(log), config["command"], *config.get("args", [])]
    return {**config, "command": sys.executable, "args": tap}


def written(log: Path) -> list[dict[str, Any]]:
    """The JSON-RPC messages a client wrote to a :func:`wiretapped` server, in order."""
    import json

    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def _stop_process(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), TERMINATE_GRACE)
        except TimeoutError:
            with suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()


async def _read_port(proc: asyncio.subprocess.Process) -> int:
    assert proc.stdout is not None
    while line := await proc.stdout.readline():
        text = line.decode(errors="replace").strip()
        if text.startswith("LISTENING "):
            return int(text.split()[1])
    raise EOFError("server closed stdout before announcing its port")


@asynccontextmanager
async def spawn_http_server(
    module: str,
    transport: Literal["http", "sse"] = "http",
    env: dict[str, str] | None = None,
    *,
    extra_args: Sequence[str] = (),
) -> AsyncIterator[str]:
    """Run ``python -m tests.servers.<module> --transport <t> --port 0`` and yield its URL.

    The child inherits this process's environment plus ``env``; its stderr is captured and
    included in the error if it dies (or stays silent for 30 s) before announcing its port.
    """
    proc = await asyncio.create_subprocess_exec(
        *command("-m", f"tests.servers.{module}", "--transport", transport, "--host", "127.0.0.1"),
        *("--port", "0", *extra_args),
        cwd=REPO_ROOT,
        env={**os.environ, **_child_env(env)},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stderr is not None
    stderr_chunks: list[bytes] = []

    async def drain_stderr() -> None:  # an undrained pipe would block the child
        assert proc.stderr is not None
        while chunk := await proc.stderr.read(65536):
            stderr_chunks.append(chunk)
            sys.stderr.buffer.write(chunk)
            sys.stderr.flush()

    drainer = asyncio.ensure_future(drain_stderr())
    try:
        try:
            port = await asyncio.wait_for(_read_port(proc), LISTEN_TIMEOUT)
        except (TimeoutError, EOFError) as exc:
            await _stop_process(proc)
            with suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(drainer), 1.0)
            stderr = b"".join(stderr_chunks).decode(errors="replace")
            raise RuntimeError(
                f"fixture server {module!r} ({transport}) did not start: {exc!r}; "
                f"exit code {proc.returncode}; stderr:\n{stderr}"
            ) from exc
        yield f"http://127.0.0.1:{port}{URL_PATHS[transport]}"
    finally:
        await _stop_process(proc)
        drainer.cancel()
        with suppress(asyncio.CancelledError):
            await drainer


@contextmanager
def _no_sse_pings() -> Iterator[None]:
    from sse_starlette import EventSourceResponse

    before = EventSourceResponse.DEFAULT_PING_INTERVAL
    EventSourceResponse.DEFAULT_PING_INTERVAL = 0  # 0 disables the ping task
    try:
        yield
    finally:
        EventSourceResponse.DEFAULT_PING_INTERVAL = before


class BearerGate:
    """ASGI middleware: HTTP requests reach ``app`` only with ``Authorization: Bearer <token>``;
    others get ``status`` (401 or 403) and a JSON body, as an API gateway answers. Set ``token``
    to another value at any time to revoke the one clients hold."""

    def __init__(self, app: Any, token: str, status: int = 401) -> None:
        self.app = app
        self.token = token
        self.status = status
        self.refused = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
            if given != f"Bearer {self.token}":
                self.refused += 1
                await send(
                    {
                        "type": "http.response.start",
                        "status": self.status,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer error="invalid_token"'),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": b'{"error": "invalid_token"}'})
                return
        await self.app(scope, receive, send)


@asynccontextmanager
async def serve_in_loop(
    server: MCPServer[Any],
    transport: Literal["http", "sse"] = "http",
    *,
    port: int = 0,
    keepalive: bool = True,
    wrap: Callable[[Any], Any] | None = None,
) -> AsyncIterator[str]:
    """Serve ``server`` with uvicorn on this event loop (127.0.0.1; a free port unless ``port``
    is given); yield its URL. ``wrap`` wraps the ASGI app (e.g. in a :class:`BearerGate`).

    ``keepalive=False`` stops the server's SSE streams from sending keep-alive pings (every 15 s
    by default), as many servers and proxies do: a client then sees no bytes at all while a
    request runs, and any read timeout it has would fire.
    """
    if not keepalive:
        with _no_sse_pings():
            async with serve_in_loop(server, transport, port=port, wrap=wrap) as url:
                yield url
        return
    sock = bind_socket("127.0.0.1", port)
    port = sock.getsockname()[1]
    app = make_app(server, transport)
    # On a dilated loop (tests/clock.py) uvicorn's timers run fast too (so do this function's
    # waits for it to start and stop, stretched the same way): its keep-alive timeout
    # is stretched by the same factor, so an idle connection is closed after 5 real seconds as
    # by any server, not after a few milliseconds (a client reusing it just then would see it
    # reset: a machine busy for that long is enough).
    dilation = float(getattr(asyncio.get_running_loop(), "factor", 1.0))
    uv = make_uvicorn_server(wrap(app) if wrap is not None else app, timeout_keep_alive=5.0 * dilation)
    # A plain task (not a task group) so a fixture may enter and exit this in different tasks.
    serving = asyncio.ensure_future(uv.serve([sock]))
    try:
        ready = asyncio.ensure_future(uv.ready.wait())
        await asyncio.wait(
            {ready, serving}, timeout=LISTEN_TIMEOUT * dilation, return_when=asyncio.FIRST_COMPLETED
        )
        ready.cancel()
        if not uv.started:
            raise RuntimeError("uvicorn failed to start")
        yield f"http://127.0.0.1:{port}{URL_PATHS[transport]}"
    finally:
        uv.should_exit = True
        try:
            await asyncio.wait_for(serving, TERMINATE_GRACE * dilation)
        except TimeoutError:
            uv.force_exit = True
            serving.cancel()
            with suppress(asyncio.CancelledError, Exception):
                await serving
        sock.close()


@contextmanager
def http_server_process(module: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``spawn_http_server`` for code without an event loop of its own (tests that run several
    loops): the server process, its streamable HTTP URL yielded once it listens."""
    proc = subprocess.Popen(
        command("-m", f"tests.servers.{module}", "--transport", "http", "--port", "0"),
        cwd=REPO_ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().split()[1])  # "LISTENING <port>"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)
