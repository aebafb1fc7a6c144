"""Graphs named after the tools the conformance suite's server scenarios call, served by
``python -m langgraph_mcp.serve`` (see ``serve_run.py``). Only what a graph can express is here:
text results, errors, progress from node updates and custom events, and a question
(``interrupt()``) asked as elicitation. Everything else the scenarios expect of their reference
server (images, audio, resources, prompts, sampling, completion) is in the baselines."""

from __future__ import annotations

from typing import Any

from langgraph.config import get_stream_writer
from langgraph.graph import START, StateGraph
from langgraph.types import interrupt
from typing_extensions import TypedDict


class Text(TypedDict, total=False):
    text: str


def _simple(state: Text) -> dict[str, Any]:
    return {"text": "This is a simple text response for testing."}


class Empty(TypedDict, total=False):
    pass


_s = StateGraph(Text, input_schema=Empty)
_s.add_node("answer", _simple)
_s.add_edge(START, "answer")
test_simple_text = _s.compile(name="test_simple_text")


def _fail(state: Text) -> dict[str, Any]:
    raise RuntimeError("This tool intentionally returns an error for testing")


_e = StateGraph(Text, input_schema=Empty)
_e.add_node("fail", _fail)
_e.add_edge(START, "fail")
test_error_handling = _e.compile(name="test_error_handling")


def _step(n: int) -> Any:
    def step(state: Text) -> dict[str, Any]:
        get_stream_writer()({"message": f"step {n} of 3"})
        return {"text": f"step {n}"}

    return step


_p = StateGraph(Text, input_schema=Empty)
_p.add_node("one", _step(1))
_p.add_node("two", _step(2))
_p.add_node("three", _step(3))
_p.add_edge(START, "one")
_p.add_edge("one", "two")
_p.add_edge("two", "three")
test_tool_with_progress = _p.compile(name="test_tool_with_progress")


def _log(state: Text) -> dict[str, Any]:
    write = get_stream_writer()
    for n, text in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
        write({"type": "mcp_log", "level": "info", "logger": "test_tool_with_logging", "data": text, "n": n})
    return {"text": "logged"}


_l = StateGraph(Text, input_schema=Empty)
_l.add_node("log", _log)
_l.add_edge(START, "log")
test_tool_with_logging = _l.compile(name="test_tool_with_logging")


class Ask(TypedDict, total=False):
    message: str
    answer: Any


def _ask(state: Ask) -> dict[str, Any]:
    return {"answer": interrupt(state["message"])}


class AskInput(TypedDict):
    message: str


_a = StateGraph(Ask, input_schema=AskInput)
_a.add_node("ask", _ask)
_a.add_edge(START, "ask")
test_elicitation = _a.compile(name="test_elicitation")


def _form_question(name: str, schema: dict[str, Any]) -> Any:
    """A graph whose one node asks this package's own ``mcp_elicitation`` question (``schema``)."""

    def ask(state: Text) -> dict[str, Any]:
        request = {
            "key": "form",
            "mode": "form",
            "message": "Please fill in the form",
            "requested_schema": schema,
        }
        payload = {
            "type": "mcp_elicitation",
            "server": "conformance",
            "tool_name": name,
            "requests": [request],
        }
        answer = interrupt(payload)["responses"]["form"]
        return {"text": f"Elicitation completed: action={answer['action']}, content={answer.get('content')}"}

    graph = StateGraph(Text, input_schema=Empty)
    graph.add_node("ask", ask)
    graph.add_edge(START, "ask")
    return graph.compile(name=name)


test_elicitation_sep1034_defaults = _form_question(
    "test_elicitation_sep1034_defaults",
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "default": True},
        },
    },
)
test_elicitation_sep1330_enums = _form_question(
    "test_elicitation_sep1330_enums",
    {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]
                },
            },
        },
    },
)

TARGETS = [
    f"tests.conformance.serve_graphs:{name}"
    for name in (
        "test_simple_text",
        "test_error_handling",
        "test_tool_with_progress",
        "test_tool_with_logging",
        "test_elicitation",
        "test_elicitation_sep1034_defaults",
        "test_elicitation_sep1330_enums",
    )
]
