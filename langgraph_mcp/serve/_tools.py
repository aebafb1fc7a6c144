"""One graph as one MCP tool: its name, input schema, arguments -> graph input, output -> result.

The tool's input schema is the graph's input schema (``graph.get_input_jsonschema()``) unless one
is declared. A graph whose only input is ``messages`` (``MessagesState``) takes a plain
``message`` string instead, sent as one user message, so a chat client can call it directly.
The result is the run's final state: its JSON form as ``structuredContent`` and, as text, the
last message's text for a messages graph, the JSON otherwise.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import mcp_types as types
from pydantic import BaseModel

__all__ = ["GraphTool", "MESSAGE_ARGUMENT", "jsonable"]

MESSAGE_ARGUMENT = "message"
"""The argument a messages graph's tool takes: the text of one user message."""
_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass
class GraphTool:
    """A compiled graph offered as one MCP tool; each call of the tool is a run of the graph.

    Args:
        graph: A compiled LangGraph graph (``StateGraph(...).compile()``). Served with the
            server's checkpointer when it has none of its own.
        name: The tool's name (default: the graph's ``name``).
        description: What the tool does, for the client's model (default: the graph's docstring
            or a generic sentence).
        input_schema: A JSON Schema for the arguments, instead of the one derived from the graph.
        to_input: Turns validated arguments into the graph's input (default: as they are, or one
            user message for a messages graph).
        to_result: Turns the run's final state into a ``CallToolResult`` (default: the state's
            JSON as ``structuredContent``; as text, a messages graph's last message, else the JSON).

    Example:
        ```python
        from langgraph_mcp.serve import GraphTool, GraphServer

        server = GraphServer([GraphTool(graph, name="research", description="Research a topic")])
        ```
    """

    graph: Any
    name: str | None = None
    description: str | None = None
    input_schema: dict[str, Any] | None = None
    to_input: Callable[[dict[str, Any]], Any] | None = None
    to_result: Callable[[Any], types.CallToolResult] | None = None
    _messages: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        name = self.name or str(getattr(self.graph, "name", "") or "graph")
        self.name = _NAME.sub("_", name).strip("_")[:128] or "graph"
        if self.input_schema is None:
            if not hasattr(self.graph, "get_input_jsonschema"):
                raise ValueError(
                    f"{self.name}: give input_schema for a graph that reports none (a deployment's "
                    "graph: use deployment_tools(), which reads it from the deployment)."
                )
            schema = dict(self.graph.get_input_jsonschema())
            if set(schema.get("properties", {})) == {"messages"}:
                self._messages = True
                schema = {
                    "type": "object",
                    "properties": {MESSAGE_ARGUMENT: {"type": "string", "description": "Your message."}},
                    "required": [MESSAGE_ARGUMENT],
                }
            self.input_schema = schema
        self.input_schema.setdefault("type", "object")
        if not self.description:
            doc = getattr(self.graph, "__doc__", None) or ""
            self.description = f"Run the {self.name} graph." if not doc or "Pregel" in doc else doc

    @property
    def tool_name(self) -> str:
        assert self.name is not None
        return self.name

    def listing(self, extra: Mapping[str, Any] | None = None) -> types.Tool:
        """The ``tools/list`` entry; ``extra`` adds optional properties (e.g. the thread key)."""
        schema = json.loads(json.dumps(self.input_schema))
        for key, prop in (extra or {}).items():
            schema.setdefault("properties", {}).setdefault(key, prop)  # the graph's own field wins
        return types.Tool(name=self.tool_name, description=self.description, input_schema=schema)

    def check(self, arguments: dict[str, Any]) -> str | None:
        """Why ``arguments`` do not fit the input schema, or ``None`` when they do."""
        try:
            jsonschema.validate(arguments, self.input_schema or {})
        except jsonschema.ValidationError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "arguments"
            return f"Invalid arguments for {self.name} ({where}): {exc.message}"
        return None

    def graph_input(self, arguments: dict[str, Any]) -> Any:
        """The run's input for these (validated) arguments."""
        if self.to_input is not None:
            return self.to_input(arguments)
        if self._messages:
            return {"messages": [{"role": "user", "content": str(arguments.get(MESSAGE_ARGUMENT, ""))}]}
        return arguments

    def result(self, values: Any) -> types.CallToolResult:
        """The tool result for the run's final state."""
        if self.to_result is not None:
            return self.to_result(values)
        data = jsonable(values)
        structured = data if isinstance(data, dict) else {"result": data}
        text = _last_message_text(values) if self._messages else None
        if text is None:
            text = json.dumps(data, ensure_ascii=False, default=str)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=structured
        )


def _last_message_text(values: Any) -> str | None:
    messages = values.get("messages") if isinstance(values, Mapping) else None
    if not messages:
        return None
    content = getattr(messages[-1], "content", None)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p if isinstance(p, str) else str(p.get("text", "")) for p in content if isinstance(p, str | dict)
        ]
        return "".join(parts)
    return None


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data: messages as ``{"type", "content", ...}``, models dumped,
    anything else unknown as its ``str``."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    if isinstance(value, BaseModel):
        dumped = value.model_dump(mode="json", exclude_none=True)
        if "content" not in dumped:
            return dumped
        # a message: its type and content always, its other fields when they say something
        return {k: v for k, v in dumped.items() if k in ("type", "content") or v not in ({}, [], "")}
    return str(value)
