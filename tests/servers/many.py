"""A server with many tools (1,000 by default), each with a small input schema of its own.

Tool ``tool_<i>`` (``i`` from 0) takes a required integer ``n_<i>`` and one more argument whose
name, type and default depend on ``i``; it answers ``tool_<i>:`` followed by its arguments as
JSON (sorted keys). ``--tools N`` sets how many there are.
"""

import inspect
import json
import sys
from pathlib import Path
from typing import Any

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp.server.mcpserver import MCPServer

from tests.servers._runner import parser, run_server

DEFAULT_TOOLS = 1000
# (name prefix, annotation, default) of each tool's second argument, chosen by ``i % 5``.
EXTRA: list[tuple[str, Any, Any]] = [
    ("label", str, inspect.Parameter.empty),
    ("ratio", float, 0.5),
    ("flag", bool, False),
    ("items", list[int], inspect.Parameter.empty),
    ("note", str | None, None),
]


def _tool(i: int) -> Any:
    """The function behind ``tool_<i>``: its signature (and so its input schema) is its own."""
    prefix, annotation, default = EXTRA[i % len(EXTRA)]
    params = [
        inspect.Parameter(f"n_{i}", inspect.Parameter.KEYWORD_ONLY, annotation=int),
        inspect.Parameter(
            f"{prefix}_{i % 97}", inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default
        ),
    ]

    def fn(**kwargs: Any) -> str:
        return f"tool_{i}:" + json.dumps(kwargs, sort_keys=True)

    fn.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    fn.__name__ = f"tool_{i}"
    return fn


def build_server(tools: int = DEFAULT_TOOLS, name: str = "many") -> MCPServer:
    """Build the server with ``tools`` tools."""
    srv: MCPServer = MCPServer(name)
    for i in range(tools):
        srv.add_tool(_tool(i), name=f"tool_{i}", description=f"Tool number {i}: echoes its arguments.")
    return srv


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--tools", type=int, default=DEFAULT_TOOLS)
    args = p.parse_args()
    run_server(build_server(args.tools), args.transport, args.host, args.port)


if __name__ == "__main__":
    main()
