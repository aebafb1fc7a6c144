"""The command: ``python -m langgraph_mcp.serve <module:graph>... [options]``.

A target is ``package.module:name``, or a Python file's path, a colon and a name; ``name`` is a
compiled graph, a ``StateGraph`` (compiled here) or a function of no arguments returning either. Over HTTP the
server prints one ``LISTENING <port>`` line to stdout once it accepts connections (``--port 0``
picks a free port); logs go to stderr.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.util
import os
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import anyio

from langgraph_mcp.serve._calls import ServeOptions
from langgraph_mcp.serve._remote import deployment_tools
from langgraph_mcp.serve._server import GraphServer

__all__ = ["load_graph", "main", "serve"]


def load_graph(target: str) -> Any:
    """The compiled graph named by ``target``: ``module:name``, or a Python file's path and a name.

    Example:
        ```python
        graph = load_graph("my_pkg.agent:graph")
        ```
    """
    where, sep, name = target.rpartition(":")
    if not sep or not where or not name:
        raise SystemExit(f"A graph is named as module:name or path/file.py:name, not {target!r}.")
    if where.endswith(".py"):
        path = Path(where).resolve()
        spec = importlib.util.spec_from_file_location(f"_served_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise SystemExit(f"Cannot load {where}.")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    else:
        if os.getcwd() not in sys.path:  # a module of the project the command runs in
            sys.path.insert(0, os.getcwd())
        module = importlib.import_module(where)
    value = getattr(module, name, None)
    if value is None:
        raise SystemExit(f"{where} has no {name!r}.")
    if callable(value) and not hasattr(value, "astream") and not hasattr(value, "compile"):
        value = value()
    if hasattr(value, "compile") and not hasattr(value, "astream"):
        value = value.compile()
    if not hasattr(value, "astream"):
        raise SystemExit(f"{target} is not a LangGraph graph.")
    return value


async def serve_http(server: GraphServer, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve ``server`` over streamable HTTP (``/mcp``) until stopped; prints ``LISTENING <port>``."""
    import uvicorn

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound = sock.getsockname()[1]
    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(
        app, lifespan="on", log_level="warning", access_log=False, timeout_graceful_shutdown=1
    )

    class _Announcing(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.started:
                sys.stdout.write(f"LISTENING {bound}\n")
                sys.stdout.flush()

    try:
        await _Announcing(config).serve(sockets=[sock])
    finally:
        sock.close()


def serve(
    server: GraphServer,
    transport: Literal["stdio", "http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
) -> None:
    """Run ``server`` in the foreground over stdio or streamable HTTP.

    Example:
        ```python
        serve(GraphServer([graph]), "http", port=8000)
        ```
    """
    if transport == "stdio":
        server.run("stdio")
    else:
        anyio.run(serve_http, server, host, port)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m langgraph_mcp.serve", description="Serve LangGraph graphs over MCP."
    )
    p.add_argument("graphs", nargs="*", help="module:name or path/file.py:name, one per tool")
    p.add_argument(
        "--deployment", metavar="URL", help="also serve the assistants of this LangGraph deployment"
    )
    p.add_argument(
        "--assistant", action="append", metavar="ID", help="only this assistant (or graph id); repeatable"
    )
    p.add_argument("--api-key-env", metavar="VAR", help="environment variable with the deployment's API key")
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--name", default="langgraph", help="the server's name")
    p.add_argument(
        "--sqlite", metavar="PATH", help="keep runs in this SQLite file (durable questions and tasks)"
    )
    p.add_argument("--tasks", choices=["auto", "always", "never"], default="auto")
    p.add_argument(
        "--legacy-task-support",
        choices=["optional", "required", "none"],
        default="optional",
        help="execution.taskSupport of the tools for 2025-11-25 clients ('none': no tasks)",
    )
    p.add_argument("--task-after", type=float, default=5.0, metavar="SECONDS")
    p.add_argument("--poll-interval-ms", type=int, default=500, help="the poll interval suggested for tasks")
    p.add_argument("--thread-argument", default="thread", help="the conversation argument ('' for none)")
    p.add_argument(
        "--state-key-env",
        metavar="VAR",
        help="environment variable with a secret that seals requestState (questions survive restarts)",
    )
    return p


async def _deployment(url: str, assistants: list[str] | None, api_key: str | None) -> list[Any]:
    return list(await deployment_tools(url, assistants=assistants, api_key=api_key))


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line and serve the graphs."""
    args = _parser().parse_args(argv)
    checkpointer: Any = None
    if args.sqlite:
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        path = args.sqlite

        def checkpointer() -> AsyncSqliteSaver:  # made in the server's event loop
            return AsyncSqliteSaver(aiosqlite.connect(path))

    security = None
    if args.state_key_env:
        from mcp.server.mcpserver import RequestStateSecurity

        secret = os.environ.get(args.state_key_env, "")
        if not secret:
            raise SystemExit(f"{args.state_key_env} is not set.")
        security = RequestStateSecurity(keys=[hashlib.sha256(secret.encode()).hexdigest()], ttl=3600)
    options = ServeOptions(
        thread_argument=args.thread_argument or None,
        tasks=args.tasks,
        task_after=args.task_after,
        poll_interval_ms=args.poll_interval_ms,
        legacy_task_support=None if args.legacy_task_support == "none" else args.legacy_task_support,
    )
    graphs: list[Any] = [load_graph(target) for target in args.graphs]
    if args.deployment:
        api_key = os.environ.get(args.api_key_env) if args.api_key_env else None
        graphs += anyio.run(_deployment, args.deployment, args.assistant, api_key)
    if not graphs:
        raise SystemExit("Nothing to serve: name a graph (module:name) or a --deployment.")
    server = GraphServer(
        graphs,
        name=args.name,
        checkpointer=checkpointer,
        options=options,
        request_state_security=security,
    )
    serve(server, args.transport, args.host, args.port)
