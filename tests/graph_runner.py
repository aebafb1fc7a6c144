"""One phase of a durable graph scenario, in its own OS process (used by the tests).

    python tests/graph_runner.py <scenario> <phase> <sqlite db> <calls log> [extra...]

Each phase opens the SQLite checkpoint, builds the same graph over a stdio fixture server (a new
server process each time), runs or resumes the thread ``durable`` and prints one JSON line:
``{"interrupts": [...], "results": {tool_call_id: content}, "asked": [...]}``.

Scenarios:

- ``siblings``: two 2026-07-28 MCP calls answered by a code policy next to a local tool that
  interrupts (``start``, then ``resume``).
- ``changed_question``: a 2025-11-25 call asks ``Really delete <target>?``; the target file is
  rewritten between phases (``start <target>``, ``resume <target> <answer ok|no> [responses|
  decisions]``: answered with keyed responses, or as a HITL form answers).
- ``parallel``: two 2025-11-25 ``book`` calls asking two questions each (``start``, then
  ``answer`` until no interrupt is left).
- ``book``: one ``book`` call asking for dates, then a confirmation (``start``, ``resume``,
  ``confirm`` with ``<protocol> <state key>``: ``ASKER_STATE_KEY`` for the server, or ``""``).
- ``foreign_parallel``: three 2025-11-25 ``book`` calls (Oslo, Rome, Paris) asking two questions
  each, on a server given as a JSON configuration entry named ``foreign`` (``start <entry>``,
  then ``answer <entry>`` until no interrupt is left): servers of other implementations
  (tests/interop).
- ``sigkill``: three calls, one of which runs for minutes (``start <protocol>``, killed by the
  test while it runs), then ``resume <protocol>`` continues the thread from its checkpoint (the
  slow call is capped at 50 ms there).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.types import Command, interrupt

from langgraph_mcp import MCPToolNode
from langgraph_mcp.elicitation import accept
from tests.conftest_servers import stdio_params
from tests.helpers import ai, tool_graph

THREAD = {"configurable": {"thread_id": "durable"}}


def approver(asked: list[Any], *, wait: bool) -> Any:
    """A local tool that interrupts (with ``wait``: once both MCP calls got their answer)."""

    @tool
    async def approve(item: str) -> str:
        """Ask a person to approve ``item``."""
        for _ in range(600 if wait else 0):
            if len(asked) >= 2:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)
        return f"approved {item}: {interrupt(f'approve {item}?')}"

    return approve


async def siblings(
    phase: str, log: str, asked: list[Any], extra: list[str]
) -> tuple[dict[str, Any], Any, Any]:
    async def handler(request: Any, call: Any) -> Any:
        asked.append((request["message"], call["tool_call_id"]))
        return accept({"ok": True, "note": "by code"})

    server = {**stdio_params("asker", env={"ASKER_LOG": log}), "elicitation": handler}
    calls = (
        ("slow_confirm", {"item": "a"}, "c1"),
        ("delete_item", {"item": "b"}, "c2"),
        ("approve", {"item": "x"}, "c3"),
    )
    start = {"messages": [ai(*calls)]}
    return (
        {"asker": server},
        [approver(asked, wait=phase == "start")],
        start if phase == "start" else Command(resume="yes"),
    )


async def changed_question(
    phase: str, log: str, asked: list[Any], extra: list[str]
) -> tuple[dict[str, Any], Any, Any]:
    target_file = Path(log).with_name("target.txt")
    target_file.write_text(extra[0], encoding="utf-8")
    env = {"FICKLE_LOG": log, "FICKLE_TARGET_FILE": str(target_file)}
    server = {**stdio_params("fickle", env=env), "protocol": "legacy"}
    if phase == "start":
        return {"fickle": server}, [], {"messages": [ai(("delete_target", {}, "c1"))]}
    style = extra[2] if len(extra) > 2 else "responses"
    return {"fickle": server}, [], ("answer" if style == "responses" else "decide", extra[1] == "ok")


async def parallel(
    phase: str, log: str, asked: list[Any], extra: list[str]
) -> tuple[dict[str, Any], Any, Any]:
    server = {**stdio_params("asker", env={"ASKER_LOG": log}), "protocol": "legacy"}
    calls = (("book", {"city": "Oslo"}, "c1"), ("book", {"city": "Rome"}, "c2"))
    if phase == "start":
        return {"asker": server}, [], {"messages": [ai(*calls)]}
    return {"asker": server}, [], ("answer_book", None)


async def foreign_parallel(
    phase: str, log: str, asked: list[Any], extra: list[str]
) -> tuple[dict[str, Any], Any, Any]:
    server = json.loads(extra[0])
    calls = (
        ("book", {"city": "Oslo"}, "c1"),
        ("book", {"city": "Rome"}, "c2"),
        ("book", {"city": "Paris"}, "c3"),
    )
    if phase == "start":
        return {"foreign": server}, [], {"messages": [ai(*calls)]}
    return {"foreign": server}, [], ("answer_book", None)


async def book(phase: str, log: str, asked: list[Any], extra: list[str]) -> tuple[dict[str, Any], Any, Any]:
    protocol, state_key = extra
    env = {"ASKER_LOG": log, **({"ASKER_STATE_KEY": state_key} if state_key else {})}
    server = {**stdio_params("asker", env=env), "protocol": protocol}
    if phase == "start":
        return {"asker": server}, [], {"messages": [ai(("book", {"city": "Oslo"}, "c1"))]}
    return {"asker": server}, [], ("answer_book", None)


async def sigkill(
    phase: str, log: str, asked: list[Any], extra: list[str]
) -> tuple[dict[str, Any], Any, Any]:
    env = {
        "DEMO_EVENTS_FILE": log,
        "DEMO_PID_DIR": str(Path(log).with_name(f"pids-{phase}")),
        **({"DEMO_GAUGE_CAP": "0.05"} if phase == "resume" else {}),
    }
    Path(env["DEMO_PID_DIR"]).mkdir(exist_ok=True)
    server = {**stdio_params("demo", env=env), "protocol": extra[0]}
    calls = (
        ("gauge", {"tag": "quick", "seconds": 0.0}, "c1"),
        ("gauge", {"tag": "slow", "seconds": 120.0}, "c2"),
        ("add", {"a": 2, "b": 3}, "c3"),
    )
    return {"demo": server}, [], {"messages": [ai(*calls)]} if phase == "start" else None


SCENARIOS = {
    "siblings": siblings,
    "changed_question": changed_question,
    "parallel": parallel,
    "foreign_parallel": foreign_parallel,
    "book": book,
    "sigkill": sigkill,
}

BOOK_ANSWERS = {
    "Which dates for Oslo?": {"start": "2027-06-01", "nights": 2},
    "Which dates for Rome?": {"start": "2027-07-01", "nights": 3},
    "Which dates for Paris?": {"start": "2027-08-01", "nights": 4},
}


def _book_answer(message: str) -> dict[str, Any]:
    if message in BOOK_ANSWERS:
        return BOOK_ANSWERS[message]
    return {"ok": True}


async def main(scenario: str, phase: str, db: str, log: str, *extra: str) -> None:
    asked: list[Any] = []
    connections, local_tools, graph_input = await SCENARIOS[scenario](phase, log, asked, list(extra))
    async with (
        AsyncSqliteSaver.from_conn_string(db) as saver,
        MCPToolNode(connections, tools=local_tools) as node,
    ):
        graph = tool_graph(node, checkpointer=saver)
        if isinstance(graph_input, tuple):
            kind, ok = graph_input
            pending = (await graph.aget_state(THREAD)).interrupts
            resume: dict[str, Any] = {}
            for item in pending:
                if kind == "decide":  # as a HITL form answers: the edited value as text
                    edit = {"ok": "true" if ok else "false"}
                    resume[item.id] = {
                        "decisions": [
                            {"type": "edit", "edited_action": {"name": action["name"], "args": edit}}
                            for action in item.value["action_requests"]
                        ]
                    }
                    continue
                responses = {}
                for request in item.value["requests"]:
                    content = _book_answer(request["message"]) if kind == "answer_book" else {"ok": ok}
                    responses[request["key"]] = accept(content)
                resume[item.id] = {"responses": responses}
            graph_input = Command(resume=resume)
        out: dict[str, Any] = await graph.ainvoke(graph_input, THREAD)
    interrupts = []
    for item in out.get("__interrupt__", []):
        value = item.value
        if isinstance(value, dict) and "requests" in value:
            interrupts.append([value["tool_call_id"], [r["message"] for r in value["requests"]]])
        else:
            interrupts.append(value)
    results = {m.tool_call_id: m.content for m in out["messages"] if isinstance(m, ToolMessage)}
    print(json.dumps({"interrupts": interrupts, "results": results, "asked": asked}))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
