"""Serve LangGraph graphs as MCP servers: each tool call is a run, an ``interrupt()`` is a
question to the client, a long run is a task.

```python
from langgraph_mcp.serve import create_mcp_server

create_mcp_server(graph, name="agent").run("stdio")
```

or from a shell: ``python -m langgraph_mcp.serve my_pkg.agent:graph [--transport http --port 8000]``.

* **Tools.** One tool per graph, named after the graph; its input schema is the graph's input
  schema (a messages graph takes one ``message`` string); its result is the final state, as
  ``structuredContent`` and as text. Arguments are checked against the schema first.
* **Threads.** Each call runs on a thread of its own, unless it names a conversation with the
  ``thread`` argument (:data:`THREAD_ARGUMENT`) or ``_meta["io.langgraph/thread"]``
  (:data:`THREAD_META_KEY`). Threads belong to the caller: with a token verifier on HTTP, a user
  reaches only their own.
* **Questions.** A pending ``interrupt()`` is asked as elicitation: on 2026-07-28 the call ends
  with an input round (``InputRequiredResult``) and the client's retry with answers resumes the
  run; on 2025-11-25 it is a live ``elicitation/create`` request. This package's own payloads
  (``mcp_elicitation``, ``tool_approval``, ``tool_approvals``) map to their exact forms; any
  other value is asked as a form with one string field, :data:`ANSWER_FIELD`, whose answer
  resumes the run (parsed as JSON when it is JSON). A client without the elicitation capability
  gets an error result, never a call that hangs.
* **Progress and logs.** The run streams node updates and custom events as
  ``notifications/progress`` (when the client sent a progress token), and ``mcp_log`` events as
  log messages.
* **Deployments.** :func:`deployment_tools` serves a LangGraph deployment's assistants (through
  ``langgraph-sdk``): the runs happen there, the questions and tasks work the same.
* **Tasks.** For a client that declared :data:`TASKS_EXTENSION`, a run still going after
  ``ServeOptions.task_after`` seconds becomes a task (``tasks/get``, ``tasks/update``,
  ``tasks/cancel``); its id names its thread, so a server restarted on a durable checkpointer
  goes on with it. A 2025-11-25 client that asks for a task (the experimental task API) gets
  one too (``ServeOptions.legacy_task_support``).
"""

from langgraph_mcp.serve._calls import ServeOptions
from langgraph_mcp.serve._cli import load_graph, serve
from langgraph_mcp.serve._questions import ANSWER_FIELD
from langgraph_mcp.serve._remote import deployment_tools
from langgraph_mcp.serve._server import GraphServer, create_mcp_server
from langgraph_mcp.serve._tasks import TASKS_EXTENSION
from langgraph_mcp.serve._threads import THREAD_ARGUMENT, THREAD_META_KEY
from langgraph_mcp.serve._tools import MESSAGE_ARGUMENT, GraphTool

__all__ = [
    "ANSWER_FIELD",
    "MESSAGE_ARGUMENT",
    "TASKS_EXTENSION",
    "THREAD_ARGUMENT",
    "THREAD_META_KEY",
    "GraphServer",
    "GraphTool",
    "ServeOptions",
    "create_mcp_server",
    "deployment_tools",
    "load_graph",
    "serve",
]
