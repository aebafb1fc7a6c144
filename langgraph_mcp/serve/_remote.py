"""A LangGraph deployment's assistants as served graphs, through ``langgraph-sdk``.

Each assistant becomes a :class:`~langgraph_mcp.serve.GraphTool` over a ``RemoteGraph``: its
input schema is the one the deployment reports (``assistants.get_schemas``), its runs happen on
the deployment, on threads the deployment keeps. Thread ids there must be UUIDs: each served
thread id (owner tag and all) maps to one with ``uuid5``, so users stay apart there too.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph_mcp.serve._tools import GraphTool

__all__ = ["THREAD_NAMESPACE", "deployment_tools", "is_remote", "remote_thread"]

THREAD_NAMESPACE = uuid.UUID("5d1f3c0e-2b7a-4d8e-9a41-6c2f0b9e7a13")
"""The ``uuid5`` namespace of the deployment threads of served threads."""


def is_remote(graph: Any) -> bool:
    """Whether ``graph`` runs on a deployment (a ``RemoteGraph``)."""
    from langgraph.pregel.remote import RemoteGraph

    return isinstance(graph, RemoteGraph)


def remote_thread(thread: str) -> str:
    """The deployment's thread id (a UUID) of a served thread."""
    return str(uuid.uuid5(THREAD_NAMESPACE, thread))


async def deployment_tools(
    url: str,
    *,
    assistants: Sequence[str] | None = None,
    api_key: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> list[GraphTool]:
    """One tool per assistant of the LangGraph deployment at ``url`` (every assistant, or those
    named in ``assistants`` by id or graph id), for :class:`~langgraph_mcp.serve.GraphServer`.

    The deployment's own auth applies: ``api_key`` (``x-api-key``) and ``headers`` are sent with
    every request to it.

    Example:
        ```python
        tools = await deployment_tools("http://127.0.0.1:2024")
        server = GraphServer(tools, name="deployment")
        ```
    """
    from langgraph.pregel.remote import RemoteGraph
    from langgraph_sdk import get_client

    client = get_client(url=url, api_key=api_key, headers=dict(headers or {}))
    found: list[dict[str, Any]] = []
    if assistants:
        for wanted in assistants:
            try:
                found.append(dict(await client.assistants.get(wanted)))
            except Exception:  # a graph id rather than an assistant id
                matches = await client.assistants.search(graph_id=wanted, limit=1)
                if not matches:
                    raise ValueError(f"The deployment has no assistant or graph {wanted!r}.") from None
                found.append(dict(matches[0]))
    else:
        found = [dict(a) for a in await client.assistants.search(limit=100)]
    tools = []
    for assistant in found:
        assistant_id = str(assistant["assistant_id"])
        schemas = await client.assistants.get_schemas(assistant_id)
        name = str(
            assistant.get("graph_id")
            if assistant.get("name") in (None, "", assistant_id)
            else assistant["name"]
        )
        # A client of its own, made on first use in the loop that serves it (not this one's).
        graph = RemoteGraph(assistant_id, url=url, api_key=api_key, headers=dict(headers or {}), name=name)
        description = assistant.get("description") or f"Run the {name} assistant of the LangGraph deployment."
        schema = dict(schemas.get("input_schema") or {"type": "object", "properties": {}})
        tools.append(GraphTool(graph, name=name, description=str(description), input_schema=schema))
    return tools
