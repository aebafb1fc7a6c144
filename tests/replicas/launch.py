"""One replica: the stock LangGraph API server (``langgraph_api.server:app``) under uvicorn.

Run with the Python of ``tests/replicas/.venv``; the settings come from the environment
(``LANGGRAPH_RUNTIME_EDITION=pg``, ``DATABASE_URI``, ``REDIS_URI``, ``LANGSERVE_GRAPHS``,
``LANGGRAPH_HTTP``, ...), as the platform's own image passes them.

Lifespan messages go straight to the app's router: with a custom ``http.app``,
langgraph-api 0.11.1 puts its ``EnsureStoreAccessible`` middleware in front of the lifespan
too, where it asks for the store before the runtime has opened its connection pool, and the
server then answers every request with HTTP 500. HTTP requests still pass the whole middleware
stack.

The runtime's database engine serializes JSON with the server's own rules
(``langgraph_api.serde.default``): with custom auth the stock server puts the caller, a user
object, in each run's ``configurable`` (``langgraph_auth_user``), which the runtime's plain
``json.dumps`` cannot write, and every run would fail to be created (HTTP 500). The server's
worker makes the stored form a user object again.

The queue worker's own log lines (``Starting background run`` with its ``run_id``, ...) are
written to stdout: they tell which replica ran a run.

``python launch.py prepare`` instead makes the database ready for replicas, once, before any
starts: the runtime's migrations, then the checkpointer's and the store's tables (each replica
creates those at startup, and two replicas creating them at once on an empty database race:
one fails with a unique violation).

Usage: ``python launch.py PORT`` or ``python launch.py prepare``
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from typing import Any

import uvicorn


async def prepare() -> None:
    from langgraph_runtime_pg.checkpoint import setup_checkpointer, teardown_checkpointer
    from langgraph_runtime_pg.migrate import upgrade_head
    from langgraph_runtime_pg.store import setup_store, teardown_store

    upgrade_head()
    await setup_checkpointer()
    await teardown_checkpointer()
    await setup_store()
    await teardown_store()


def _serialize_as_the_server_does() -> None:
    from langgraph_api.serde import default
    from langgraph_runtime_pg import database

    create = database.create_async_engine

    def engine(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("json_serializer", lambda value: json.dumps(value, default=default))
        return create(*args, **kwargs)

    database.create_async_engine = engine


def main() -> None:
    if sys.argv[1] == "prepare":
        asyncio.run(prepare())
        return
    port = int(sys.argv[1])
    _serialize_as_the_server_does()
    worker = logging.getLogger("langgraph_api.worker")
    worker.addHandler(logging.StreamHandler(sys.stdout))
    worker.setLevel(logging.INFO)
    from langgraph_api.server import app  # reads its settings from the environment on import

    async def replica(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            scope["app"] = app
            await app.router(scope, receive, send)
        else:
            await app(scope, receive, send)

    uvicorn.run(replica, host="127.0.0.1", port=port, lifespan="on", access_log=False, log_level="info")


if __name__ == "__main__":
    main()
