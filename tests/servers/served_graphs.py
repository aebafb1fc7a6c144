"""Graphs served over MCP by ``langgraph_mcp.serve`` (its command), one tool each.

``python -m tests.servers.served_graphs [serve options]`` runs ``python -m langgraph_mcp.serve``
with every graph below (the options, e.g. ``--transport http --port 0 --sqlite f --tasks
always``, are passed on).

- ``writer(topic)``: asks "Who writes about <topic>?" (a plain ``interrupt()`` value, asked as
  a one-field form), then answers ``"<name> writes about <topic>"``.
- ``confirm(item)``: asks with this package's own ``mcp_elicitation`` payload (a form with
  ``ok: boolean``), then answers ``deleted <item>`` / ``kept <item>`` / ``declined``.
- ``gated(label)``: ``prepare`` (a custom progress event ``preparing <label>``), then ``wait``
  until the file ``$SERVED_GATES/release-<label>`` exists (on cancellation it writes
  ``cancelled-<label>`` there and every start writes ``started-<label>-<pid>``), then ``finish``
  gives ``done <label>``.
- ``notes(note)``: appends ``note`` to the thread's ``notes`` (a conversation shows them all).
"""

from __future__ import annotations

import asyncio
import operator
import os
import sys
from pathlib import Path
from typing import Annotated, Any

from langgraph.config import get_stream_writer
from langgraph.graph import START, StateGraph
from langgraph.types import interrupt
from typing_extensions import TypedDict

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

CONFIRM_KEY = "confirm"


class Topic(TypedDict, total=False):
    topic: str
    answer: str


def _ask_writer(state: Topic) -> dict[str, Any]:
    name = interrupt({"question": f"Who writes about {state['topic']}?"})
    return {"answer": f"{name} writes about {state['topic']}"}


_w = StateGraph(Topic, input_schema=Topic)
_w.add_node("ask", _ask_writer)
_w.add_edge(START, "ask")
writer = _w.compile(name="writer")


class Item(TypedDict, total=False):
    item: str
    outcome: str


def _ask_confirm(state: Item) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    request = {"key": CONFIRM_KEY, "mode": "form", "message": f"Really delete {state['item']}?"}
    resume = interrupt(
        {
            "type": "mcp_elicitation",
            "server": "served",
            "tool_name": "confirm",
            "tool_call_id": None,
            "requests": [{**request, "requested_schema": schema}],
        }
    )
    answer = resume["responses"][CONFIRM_KEY]
    if answer["action"] != "accept":
        return {"outcome": answer["action"] + "d" if answer["action"] == "decline" else "cancelled"}
    ok = (answer.get("content") or {}).get("ok")
    return {"outcome": f"deleted {state['item']}" if ok else f"kept {state['item']}"}


_c = StateGraph(Item)
_c.add_node("ask", _ask_confirm)
_c.add_edge(START, "ask")
confirm = _c.compile(name="confirm")


class Gate(TypedDict, total=False):
    label: str
    result: str


def _gates() -> Path:
    folder = Path(os.environ.get("SERVED_GATES", "."))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _prepare(state: Gate) -> dict[str, Any]:
    get_stream_writer()({"message": f"preparing {state['label']}"})
    return {}


async def _wait(state: Gate) -> dict[str, Any]:
    label = state["label"]
    (_gates() / f"started-{label}-{os.getpid()}").touch()
    try:
        while not (_gates() / f"release-{label}").exists():  # noqa: ASYNC110 - written by a test
            await asyncio.sleep(0.02)
    except asyncio.CancelledError:
        (_gates() / f"cancelled-{label}").touch()
        raise
    return {}


def _finish(state: Gate) -> dict[str, Any]:
    return {"result": f"done {state['label']}"}


_g = StateGraph(Gate)
_g.add_node("prepare", _prepare)
_g.add_node("wait", _wait)
_g.add_node("finish", _finish)
_g.add_edge(START, "prepare")
_g.add_edge("prepare", "wait")
_g.add_edge("wait", "finish")
gated = _g.compile(name="gated")


class Notes(TypedDict, total=False):
    note: str
    notes: Annotated[list[str], operator.add]


class NoteInput(TypedDict):
    note: str


def _keep(state: Notes) -> dict[str, Any]:
    return {"notes": [state["note"]]}


_n = StateGraph(Notes, input_schema=NoteInput)
_n.add_node("keep", _keep)
_n.add_edge(START, "keep")
notes = _n.compile(name="notes")

GRAPHS = ("writer", "confirm", "gated", "notes")
TARGETS = [f"tests.servers.served_graphs:{name}" for name in GRAPHS]


def main(argv: list[str] | None = None) -> None:
    from langgraph_mcp.serve._cli import main as serve_main

    serve_main([*TARGETS, *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    main()
