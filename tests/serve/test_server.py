"""A served graph in process (``mcp.Client(server)``): questions in both eras, a client that
cannot answer, progress and logs, conversations, arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from langchain_core.messages import AIMessage
from langgraph.config import get_stream_writer
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt
from mcp import Client
from typing_extensions import TypedDict

from langgraph_mcp.serve import THREAD_META_KEY, GraphServer, GraphTool, ServeOptions
from tests.servers import served_graphs

ERAS = ["2026-07-28", "legacy"]


class Call(TypedDict, total=False):
    x: int
    decision: dict[str, Any]


def _approve(state: Call) -> dict[str, Any]:
    get_stream_writer()({"type": "mcp_log", "level": "warning", "logger": "approver", "data": "asking"})
    decision = interrupt(
        {
            "type": "tool_approval",
            "tool_call_id": "call_1",
            "name": "set_x",
            "args": {"x": state["x"]},
            "description": "Sets x",
            "server": "s",
            "mcp_tool": "set_x",
            "annotations": {},
            "key": "set_x#1",
            "allowed_decisions": ["approve", "edit", "reject"],
            "action_requests": [],
            "review_configs": [],
        }
    )
    return {"decision": decision}


_a = StateGraph(Call)
_a.add_node("approve", _approve)
_a.add_edge(START, "approve")
approver = _a.compile(name="approver")


def _server(**options: Any) -> GraphServer:
    graphs = [served_graphs.writer, served_graphs.confirm, served_graphs.gated, served_graphs.notes, approver]
    return GraphServer(graphs, options=ServeOptions(tasks="never", **options))


@pytest.mark.parametrize("era", ERAS)
async def test_questions_map_exactly_and_answers_resume_the_run(era: str) -> None:
    asked: list[types.ElicitRequestFormParams] = []

    async def answer(ctx: Any, params: Any) -> types.ElicitResult:
        asked.append(params)
        if "decision" in params.requested_schema["properties"]:
            return types.ElicitResult(action="accept", content={"decision": "edit", "args": '{"x": 2}'})
        if "ok" in params.requested_schema["properties"]:
            return types.ElicitResult(action="accept", content={"ok": True})
        return types.ElicitResult(action="accept", content={"answer": '{"name": "Ada"}'})

    async with Client(_server(), mode=era, elicitation_callback=answer) as client:
        approved = await client.call_tool("approver", {"x": 1})
        confirmed = await client.call_tool("confirm", {"item": "db"})
        written = await client.call_tool("writer", {"topic": "json"})
    assert approved.structured_content == {
        "x": 1,
        "decision": {"type": "edit", "edited_action": {"args": {"x": 2}}},
    }
    assert confirmed.structured_content == {"item": "db", "outcome": "deleted db"}
    assert written.structured_content == {"topic": "json", "answer": "{'name': 'Ada'} writes about json"}
    schema = asked[0].requested_schema
    assert schema["properties"]["decision"]["enum"] == ["approve", "edit", "reject"]
    assert schema["required"] == ["decision"]
    assert asked[0].message.startswith('Approve the call set_x({"x": 1})?')
    assert asked[1].message == "Really delete db?"


@pytest.mark.parametrize("era", ERAS)
async def test_a_cancelled_question_ends_the_call_with_an_error(era: str) -> None:
    async def cancel(ctx: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="cancel")

    async with Client(_server(), mode=era, elicitation_callback=cancel) as client:
        result = await client.call_tool("writer", {"topic": "x"})
    assert result.is_error
    assert "cancelled" in result.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("era", ERAS)
async def test_a_client_that_cannot_answer_gets_an_error_not_a_hang(era: str) -> None:
    async with Client(_server(), mode=era) as client:
        result = await client.call_tool("writer", {"topic": "y"})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "Who writes about y?" in text and "declared no elicitation capability" in text


async def test_progress_and_logs_reach_the_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVED_GATES", str(tmp_path))
    (tmp_path / "release-p").touch()
    progress: list[tuple[float, str | None]] = []
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async def approve(ctx: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"decision": "approve"})

    server = _server()
    async with Client(
        server, log_level="info", logging_callback=on_log, elicitation_callback=approve
    ) as client:
        result = await client.call_tool("gated", {"label": "p"}, progress_callback=on_progress)
        await client.call_tool("approver", {"x": 3})
    assert result.structured_content == {"label": "p", "result": "done p"}
    assert [m for _, m in progress] == ["preparing p", "prepare done", "wait done", "finish done"]
    assert [v for v, _ in progress] == [1, 2, 3, 4]
    # the node runs again when the answer resumes it, so it logs again
    assert [(log.level, log.logger, log.data) for log in logs] == [("warning", "approver", "asking")] * 2


async def test_a_conversation_key_keeps_the_thread_across_calls() -> None:
    async with Client(_server(thread_argument="conversation")) as client:
        [notes] = [t for t in (await client.list_tools()).tools if t.name == "notes"]
        assert notes.input_schema["properties"]["conversation"]["type"] == "string"
        assert notes.input_schema["required"] == ["note"]
        await client.call_tool("notes", {"note": "a", "conversation": "c"})
        second = await client.call_tool("notes", {"note": "b", "conversation": "c"})
        by_meta = await client.call_tool("notes", {"note": "m"}, meta={THREAD_META_KEY: "c"})  # type: ignore[arg-type]
        alone = await client.call_tool("notes", {"note": "z"})
        wrong = await client.call_tool("notes", {"note": 3})
    assert second.structured_content == {"note": "b", "notes": ["a", "b"]}
    assert by_meta.structured_content == {"note": "m", "notes": ["a", "b", "m"]}
    assert alone.structured_content == {"note": "z", "notes": ["z"]}
    assert wrong.is_error and "Invalid arguments for notes (note)" in wrong.content[0].text  # type: ignore[union-attr]


def _echo(state: MessagesState) -> dict[str, Any]:
    return {"messages": [AIMessage(f"you said: {state['messages'][-1].content}")]}


_m = StateGraph(MessagesState)
_m.add_node("echo", _echo)
_m.add_edge(START, "echo")
echo = _m.compile(name="echo")


async def test_a_messages_graph_takes_a_message_and_answers_with_its_last_message() -> None:
    async with Client(GraphServer([GraphTool(echo, description="Echo a message.")])) as client:
        [tool] = (await client.list_tools()).tools
        result = await client.call_tool("echo", {"message": "hello"})
    assert tool.description == "Echo a message."
    assert tool.input_schema["properties"]["message"]["type"] == "string"
    assert tool.input_schema["required"] == ["message"]
    assert result.content[0].text == "you said: hello"  # type: ignore[union-attr]
    assert result.structured_content is not None
    messages = result.structured_content["messages"]
    assert [(m["type"], m["content"]) for m in messages] == [("human", "hello"), ("ai", "you said: hello")]
