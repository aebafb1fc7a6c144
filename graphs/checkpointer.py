"""A PostgreSQL checkpointer for ``langgraph dev`` (``langgraph.postgres.json``).

Graph state, including stored elicitation answers, then survives a server restart and can be
resumed by another server process against the same database.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

POSTGRES_ENV = "LANGGRAPH_MCP_POSTGRES_URI"


@asynccontextmanager
async def make_checkpointer() -> AsyncIterator[AsyncPostgresSaver]:
    """An ``AsyncPostgresSaver`` on ``$LANGGRAPH_MCP_POSTGRES_URI``, its tables created if needed."""
    uri = os.environ.get(POSTGRES_ENV)
    if not uri:
        raise RuntimeError(
            f"{POSTGRES_ENV} is not set: set it to a PostgreSQL URI such as "
            "postgresql://user:password@127.0.0.1:5432/langgraph?sslmode=disable"
        )
    async with AsyncPostgresSaver.from_conn_string(uri) as saver:
        await saver.setup()
        yield saver
