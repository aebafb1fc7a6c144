"""Serve LangGraph graphs as MCP servers: each tool call is a run, ``interrupt()`` is a question
to the client, long runs are tasks.

```python
from langgraph_mcp.serve import create_mcp_server

create_mcp_server(graph, name="agent").run("stdio")
```

or from a shell: ``python -m langgraph_mcp.serve my_pkg.agent:graph [--transport http --port 8000]``.
"""

from langgraph_mcp.serve.cli import load_graph, serve
from langgraph_mcp.serve.questions import ANSWER_FIELD
from langgraph_mcp.serve.server import GraphServer, ServeOptions, create_mcp_server
from langgraph_mcp.serve.tasks import TASKS_EXTENSION
from langgraph_mcp.serve.threads import THREAD_ARGUMENT, THREAD_META_KEY
from langgraph_mcp.serve.tools import MESSAGE_ARGUMENT, GraphTool

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
    "load_graph",
    "serve",
]
