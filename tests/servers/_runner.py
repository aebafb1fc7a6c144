"""Command-line runner shared by the fixture servers.

``--transport stdio`` speaks MCP on stdin/stdout. ``http`` (streamable HTTP, path ``/mcp``) and
``sse`` (path ``/sse``) bind the socket themselves, so ``--port 0`` picks a free port, and print
exactly one ``LISTENING <port>`` line to stdout once uvicorn accepts connections. Logs go to
stderr only.
"""

import argparse
import asyncio
import socket
import sys
from collections.abc import Callable, Sequence
from typing import Any, Literal

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette

Transport = Literal["stdio", "http", "sse"]
NetTransport = Literal["http", "sse"]

URL_PATHS: dict[NetTransport, str] = {"http": "/mcp", "sse": "/sse"}


def make_app(srv: MCPServer[Any], transport: NetTransport, host: str = "127.0.0.1") -> Starlette:
    """The ASGI app serving ``srv`` over streamable HTTP (``/mcp``) or legacy SSE (``/sse``)."""
    return srv.streamable_http_app(host=host) if transport == "http" else srv.sse_app(host=host)


def bind_socket(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A TCP socket bound to ``(host, port)``; port 0 lets the kernel choose a free port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY on accepted connections only when the
    # listening socket says so; without it every response waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    return sock


class ReadyServer(uvicorn.Server):
    """``uvicorn.Server`` whose ``ready`` event is set once startup ends (check ``started``)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = asyncio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets=sockets)
        finally:
            self.ready.set()


def make_uvicorn_server(app: Starlette, *, timeout_keep_alive: float = 5.0) -> ReadyServer:
    """A quiet uvicorn server (no access log: uvicorn writes it to stdout).

    ``timeout_keep_alive`` is uvicorn's own default (5 s): an idle kept-alive connection is closed
    after that long, on the event loop's clock."""
    config = uvicorn.Config(
        app,
        lifespan="on",
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=1,
        timeout_keep_alive=timeout_keep_alive,
    )
    return ReadyServer(config)


async def serve_net(
    srv: MCPServer[Any],
    transport: NetTransport,
    host: str = "127.0.0.1",
    port: int = 0,
    on_listening: Callable[[int], None] | None = None,
) -> None:
    """Serve ``srv`` over HTTP/SSE until uvicorn exits; call ``on_listening(port)`` once started."""
    await serve_asgi(lambda bound: make_app(srv, transport, host), host, port, on_listening)


async def serve_asgi(
    make: Callable[[int], Any],
    host: str = "127.0.0.1",
    port: int = 0,
    on_listening: Callable[[int], None] | None = None,
) -> None:
    """Serve the ASGI app ``make(bound_port)`` until uvicorn exits; call ``on_listening(port)``
    once started."""
    sock = bind_socket(host, port)
    bound_port: int = sock.getsockname()[1]
    server = make_uvicorn_server(make(bound_port))

    async def announce() -> None:
        await server.ready.wait()
        if server.started and on_listening is not None:
            on_listening(bound_port)

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        try:
            await server.serve(sockets=[sock])
        finally:
            tg.cancel_scope.cancel()
            sock.close()


def _print_listening(port: int) -> None:
    sys.stdout.write(f"LISTENING {port}\n")
    sys.stdout.flush()


def run_server(
    srv: MCPServer[Any], transport: Transport = "stdio", host: str = "127.0.0.1", port: int = 0
) -> None:
    """Run ``srv`` in the foreground on the given transport."""
    if transport == "stdio":
        srv.run("stdio")
    else:
        anyio.run(serve_net, srv, transport, host, port, _print_listening)


def parser(description: str | None = None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--transport", choices=["stdio", "http", "sse"], default="stdio")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    return p


def run_cli(
    build: Callable[[], MCPServer[Any]],
    argv: Sequence[str] | None = None,
    *,
    description: str | None = None,
    on_start: Callable[[], None] | None = None,
) -> None:
    """Parse ``--transport/--host/--port``, build the server and run it."""
    args = parser(description).parse_args(argv)
    if on_start is not None:
        on_start()
    run_server(build(), args.transport, args.host, args.port)
