"""Serving graphs with MCP tools on LangGraph server (``langgraph dev``, LangGraph Platform).

The pattern a deployment copies (``graphs/`` in this repository is a working instance):

1. A module the graphs and the server's custom app both import **by module path**
   (``"graphs.tools:graph"`` in ``langgraph.json``, not the path of the module's file, which
   would load a second copy with a second pool) builds one :class:`~langgraph_mcp.MCPPool` at
   import time. Building it reads the config file and does no other I/O: no process is started,
   no connection opened, nothing awaited.
2. Graphs are built at import on that pool (``MCPToolNode(pool)``). Tools are discovered on the
   first run; a model node binds them when it runs (``model.bind_tools(await
   node.get_tools())``; the listing is cached, so this costs one round trip per server per
   process, and again only after a server says its tools changed).
3. ``langgraph.json``'s ``"http": {"app": ...}`` names a Starlette app whose lifespan is
   :func:`lifespan`: it closes the pool when the server stops (``SIGTERM``, ``Ctrl-C``, a hot
   reload), so no stdio child outlives the server process. With ``start=True`` it also connects
   every server at startup instead of on the first run.

LangGraph server runs graphs on its main event loop, so the pool keeps one session per server.
With ``BG_JOB_ISOLATED_LOOPS=true`` each job slot runs graphs on a loop of its own; the pool then
keeps one session per server per slot (``--n-jobs-per-worker`` of them at most), reuses it for
that slot's later runs, and the lifespan stops them all.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Protocol

from langgraph_mcp._compat.langgraph import server_store
from langgraph_mcp.errors import MCPConfigError

__all__ = ["CONFIG_ENV", "DRAIN_TIMEOUT", "Closable", "config_path", "lifespan", "server_store"]

logger = logging.getLogger("langgraph_mcp.deploy")

DRAIN_TIMEOUT = 10.0
"""Seconds :func:`lifespan` lets running tool calls finish at shutdown."""

CONFIG_ENV = "LANGGRAPH_MCP_CONFIG"
"""The environment variable that names the MCP config file a deployment reads."""


class Closable(Protocol):
    """What :func:`lifespan` manages: an :class:`~langgraph_mcp.MCPPool` or an
    :class:`~langgraph_mcp.MCPToolNode` (a node closes only a pool it owns)."""

    async def start(self) -> None: ...

    async def drain(self, timeout: float) -> bool: ...

    async def aclose(self) -> None: ...


def config_path(default: str | os.PathLike[str], *, env_var: str = CONFIG_ENV) -> Path:
    """The MCP config file to serve: the file named by ``env_var`` when it is set and not empty,
    else ``default``.

    Raises:
        MCPConfigError: the chosen file does not exist (naming the variable when it chose it).
    """
    chosen = os.environ.get(env_var) or None
    path = Path(chosen or default).expanduser()
    if not path.is_file():
        origin = f"{env_var}={chosen!r}" if chosen else f"the default (set {env_var} to use another)"
        raise MCPConfigError(
            None, None, f"MCP config file {str(path)!r} does not exist; it comes from {origin}"
        )
    return path


def lifespan(
    *owners: Closable, start: bool = False, drain_timeout: float = DRAIN_TIMEOUT
) -> Callable[[object], AbstractAsyncContextManager[None]]:
    """A Starlette/FastAPI ``lifespan`` that closes ``owners`` when the server shuts down.

    ``start=True`` also connects every server of every owner when the server starts (concurrently;
    a server that cannot be reached fails startup only if the owner's ``on_connection_error``
    says so).

    At shutdown, LangGraph server leaves this lifespan *before* it stops its runs, so closing at
    once would cut tool calls that are about to finish and record their error as the result.
    Calls still working are therefore given up to ``drain_timeout`` seconds to finish (calls
    waiting for a person's answer are not waited for); whatever still runs then ends with an
    error. Closing then waits for stdio servers to exit; it runs even when startup failed
    half-way.

    Use: ``app = Starlette(lifespan=lifespan(pool))`` in the module ``langgraph.json``'s
    ``http.app`` names.
    """
    if drain_timeout < 0:
        raise MCPConfigError(None, None, f"drain_timeout must be >= 0, got {drain_timeout!r}")

    @asynccontextmanager
    async def run(app: object) -> AsyncIterator[None]:
        try:
            if start:
                await asyncio.gather(*(owner.start() for owner in owners))
            yield
            drained = await asyncio.gather(*(owner.drain(drain_timeout) for owner in owners))
            if not all(drained):
                logger.warning(
                    "MCP tool calls were still running %gs after shutdown began; they end with an "
                    "error (raise drain_timeout to wait longer)",
                    drain_timeout,
                )
        finally:
            # Every owner closes even if one fails to; the first failure is raised afterwards.
            results = await asyncio.gather(*(owner.aclose() for owner in owners), return_exceptions=True)
            for result in results:
                if isinstance(result, BaseException):
                    raise result

    return run
