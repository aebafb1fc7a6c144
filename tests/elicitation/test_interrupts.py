"""Elicitation becomes LangGraph interrupts, in both protocol eras, over stdio and HTTP."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import is_invalid_resume
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp_types import ElicitRequestURLParams
from pydantic import ValidationError

from langgraph_mcp import MCPPool, MCPToolCallError, MCPToolNode
from langgraph_mcp._elicitation.refusals import AnswerRefused
from langgraph_mcp.elicitation import accept, cancel, decline, resume_elicitations
from tests.conftest_servers import serve_in_loop, stdio_params
from tests.helpers import run_phase, send_per_call, tools_by_name
from tests.servers import asker

ERAS = [("stdio", "auto"), ("stdio", "legacy"), ("http", "auto"), ("http", "legacy")]


class Asker:
    """The asker server's connection config and the tools/call requests it received."""

    def __init__(self, config: dict[str, Any], log: Callable[[], list[str]]) -> None:
        self.config = config
        self.log = log

    @property
    def legacy(self) -> bool:
        return self.config.get("protocol") == "legacy"


@pytest.fixture(params=ERAS, ids=[f"{t}-{p}" for t, p in ERAS])
async def server(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Asker]:
    transport, protocol = request.param
    if transport == "stdio":
        log_file = tmp_path / "calls.log"
        config = {**stdio_params("asker", env={"ASKER_LOG": str(log_file)}), "protocol": protocol}

        def read() -> list[str]:
            return log_file.read_text().splitlines() if log_file.exists() else []

        yield Asker(config, read)
    else:
        calls: list[str] = []
        async with serve_in_loop(asker.build_server(counters=asker.Counters(), calls_log=calls)) as url:
            yield Asker({"url": url, "protocol": protocol}, lambda: list(calls))


def _graph(node: MCPToolNode, *, send: bool = False) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node(node)
    if send:
        builder.add_node("agent", lambda s: {})
        builder.add_edge(START, "agent")
        builder.add_conditional_edges(
            "agent",
            send_per_call,
            ["tools", END],
        )
    else:
        builder.add_edge(START, "tools")
    return builder.compile(checkpointer=InMemorySaver())


def _request(*calls: tuple[str, dict[str, Any], str]) -> dict[str, Any]:
    return {"messages": [AIMessage("", tool_calls=[{"name": n, "args": a, "id": i} for n, a, i in calls])]}


THREAD = {"configurable": {"thread_id": "t1"}}


def _results(out: dict[str, Any]) -> dict[str, str]:
    return {m.tool_call_id: m.content for m in out["messages"] if isinstance(m, ToolMessage)}


def _only_key(payload: dict[str, Any]) -> str:
    assert len(payload["requests"]) == 1
    return str(payload["requests"][0]["key"])


# -- one question ------------------------------------------------------------------------


async def test_accept_with_defaults_filled(server: Asker) -> None:
    async with MCPToolNode({"asker": server.config}) as node:
        graph = _graph(node)
        out = await graph.ainvoke(_request(("delete_item", {"item": "db"}, "c1")), THREAD)
        (pending,) = out["__interrupt__"]
        payload = pending.value
        assert payload["type"] == "mcp_elicitation"
        assert (payload["server"], payload["tool_name"], payload["tool_call_id"]) == (
            "asker",
            "delete_item",
            "c1",
        )
        (question,) = payload["requests"]
        assert question["mode"] == "form" and question["message"] == "Really delete db?"
        schema = question["requested_schema"]
        assert schema["properties"]["ok"]["type"] == "boolean" and schema["required"] == ["ok"]
        assert pending.response_schema["properties"]["responses"]["required"] == [question["key"]]
        json.dumps(payload)  # plain JSON, checkpoint- and wire-safe
        # "note" is omitted: the schema's default ("") fills it (SEP-1034).
        out = await graph.ainvoke(
            Command(resume={"responses": {question["key"]: accept({"ok": True})}}), THREAD
        )
        assert _results(out) == {"c1": "deleted db ()"}


@pytest.mark.parametrize(("response", "expected"), [(decline(), "declined"), (cancel(), "cancelled")])
async def test_decline_and_cancel_reach_the_server(server: Asker, response: Any, expected: str) -> None:
    async with MCPToolNode({"asker": server.config}) as node:
        graph = _graph(node)
        out = await graph.ainvoke(_request(("delete_item", {"item": "db"}, "c1")), THREAD)
        key = _only_key(out["__interrupt__"][0].value)
        out = await graph.ainvoke(Command(resume={"responses": {key: response}}), THREAD)
        assert _results(out) == {"c1": expected}


async def test_invalid_answer_is_rejected_and_stays_pending(server: Asker) -> None:
    async with MCPToolNode({"asker": server.config}) as node:
        graph = _graph(node)
        out = await graph.ainvoke(_request(("delete_item", {"item": "db"}, "c1")), THREAD)
        pending = out["__interrupt__"][0]
        key = _only_key(pending.value)
        bad_answers = [
            {"responses": {key: accept({"ok": "yes please"})}},  # wrong type
            {"responses": {}},  # missing response
            {"responses": {key: {"action": "maybe"}}},  # unknown action
            {"responses": {key: accept({"ok": True}), "other": decline()}},  # unknown key
            {"confirm": True},  # not the resume shape at all
        ]
        for bad in bad_answers:
            # A form answer that does not fit is refused in the person's words; a resume value of
            # the wrong shape (a UI's mistake) with pydantic's.
            with pytest.raises((AnswerRefused, ValidationError)) as info:
                await graph.ainvoke(Command(resume={pending.id: bad}), THREAD)
            assert is_invalid_resume(info.value)
            assert isinstance(info.value, AnswerRefused) == (bad is bad_answers[0])
            state = await graph.aget_state(THREAD)
            assert [i.id for i in state.interrupts] == [pending.id]
        calls_before = len(server.log())
        out = await graph.ainvoke(
            Command(resume={pending.id: {"responses": {key: accept({"ok": False})}}}), THREAD
        )
        assert _results(out) == {"c1": "kept db"}
        # Rejected answers never reached the server (legacy: the same held call was answered).
        assert len(server.log()) - calls_before == (0 if server.legacy else 1)


async def test_url_mode_carries_the_url(server: Asker) -> None:
    async with MCPToolNode({"asker": server.config}) as node:
        graph = _graph(node)
        out = await graph.ainvoke(_request(("login", {}, "c1")), THREAD)
        (question,) = out["__interrupt__"][0].value["requests"]
        assert question["mode"] == "url"
        assert question["url"] == asker.LOGIN_URL and question["message"] == asker.LOGIN_MESSAGE
        with pytest.raises(ValidationError):  # a URL request takes no content
            await graph.ainvoke(Command(resume={"responses": {question["key"]: accept({"x": 1})}}), THREAD)
        out = await graph.ainvoke(Command(resume={"responses": {question["key"]: accept()}}), THREAD)
        assert _results(out) == {"c1": "logged in"}


async def test_enums_multi_select_and_defaults(server: Asker) -> None:
    async with MCPToolNode({"asker": server.config}) as node:
        graph = _graph(node)
        out = await graph.ainvoke(_request(("pick_options", {}, "c1")), THREAD)
        key = _only_key(out["__interrupt__"][0].value)
        with pytest.raises(AnswerRefused):
            await graph.ainvoke(Command(resume={"responses": {key: accept({"color": "purple"})}}), THREAD)
        with pytest.raises(AnswerRefused):
            await graph.ainvoke(
                Command(resume={"responses": {key: accept({"color": "red", "toppings": ["x"]})}}), THREAD
            )
        answer = accept({"color": "green", "toppings": ["ham", "olives"], "plan": "pro"})
        out = await graph.ainvoke(Command(resume={"responses": {key: answer}}), THREAD)
        assert json.loads(_results(out)["c1"]) == {
            "color": "green",
            "plan": "pro",
            "size": 2,
            "toppings": ["ham", "olives"],
            "urgent": False,
        }


# -- rounds, replays and parallel calls ------------------------------------------------------


async def test_two_rounds_and_what_is_sent_again(server: Asker) -> None:
    async with MCPToolNode({"asker": server.config}) as node:
        graph = _graph(node)
        out = await graph.ainvoke(_request(("book", {"city": "Oslo"}, "c1")), THREAD)
        key = _only_key(out["__interrupt__"][0].value)
        out = await graph.ainvoke(
            Command(resume={"responses": {key: accept({"start": "2027-05-01", "nights": 3})}}), THREAD
        )
        (second,) = out["__interrupt__"][0].value["requests"]
        assert second["message"] == "Book 3 nights from 2027-05-01 in Oslo?"
        out = await graph.ainvoke(
            Command(resume={"responses": {second["key"]: accept({"ok": True})}}), THREAD
        )
        assert _results(out) == {"c1": "booked Oslo from 2027-05-01 for 3 nights"}
    if server.legacy:
        # One tools/call, held open through both questions.
        assert server.log() == ["book rs=no ir=-"]
    else:
        # Each round sent once: the resumed runs replayed the stored rounds instead of re-sending.
        assert server.log() == [
            "book rs=no ir=-",
            "book rs=yes ir=tests.servers.asker:ask_dates",
            "book rs=yes ir=tests.servers.asker:ask_booking",
        ]


@pytest.mark.parametrize("send", [False, True], ids=["tools_condition", "send-per-call"])
async def test_three_parallel_questions_get_their_own_answers(server: Asker, send: bool) -> None:
    calls = [
        ("delete_item", {"item": "a"}, "c1"),
        ("slow_confirm", {"item": "b"}, "c2"),
        ("delete_item", {"item": "c"}, "c3"),
    ]
    async with MCPToolNode({"asker": server.config}) as node:
        graph = _graph(node, send=send)
        out = await graph.ainvoke(_request(*calls), THREAD)
        pending = out["__interrupt__"]
        assert sorted(i.value["tool_call_id"] for i in pending) == ["c1", "c2", "c3"]
        assert len({i.id for i in pending}) == 3
        by_call = {i.value["tool_call_id"]: i.value["requests"][0]["message"] for i in pending}
        assert by_call == {"c1": "Really delete a?", "c2": "Confirm b?", "c3": "Really delete c?"}

        def answer(payload: dict[str, Any]) -> dict[str, Any]:
            return {_only_key(payload): accept({"ok": True, "note": f"for {payload['tool_call_id']}"})}

        out = await graph.ainvoke(resume_elicitations(pending, answer), THREAD)
        assert _results(out) == {
            "c1": "deleted a (for c1)",
            "c2": "deleted b (for c2)",
            "c3": "deleted c (for c3)",
        }
        assert "__interrupt__" not in out


async def test_finished_siblings_are_not_run_again(server: Asker) -> None:
    async with MCPToolNode({"asker": server.config}) as node:
        graph = _graph(node)
        out = await graph.ainvoke(_request(("stats", {}, "s1"), ("delete_item", {"item": "a"}, "c1")), THREAD)
        key = _only_key(out["__interrupt__"][0].value)
        out = await graph.ainvoke(Command(resume={"responses": {key: accept({"ok": True})}}), THREAD)
        assert _results(out)["c1"] == "deleted a ()"
        assert json.loads(_results(out)["s1"])["pid"] > 0
    # The finished sibling was replayed from the checkpoint on resume, not called again.
    assert [line for line in server.log() if line.startswith("stats")] == ["stats rs=no ir=-"]


# -- policies ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_decline_policy_never_interrupts(protocol: str) -> None:
    config = {
        "server": asker.build_server(counters=asker.Counters()),
        "protocol": protocol,
        "elicitation": "decline",
    }
    async with MCPToolNode({"asker": config}) as node:
        out = await _graph(node).ainvoke(_request(("delete_item", {"item": "a"}, "c1")), THREAD)
        assert _results(out) == {"c1": "declined"}


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_handler_policy_answers_in_code(protocol: str) -> None:
    seen: list[tuple[Any, Any]] = []

    async def handler(request: Any, call: Any) -> Any:
        seen.append((request["message"], call))
        return accept({"ok": True, "note": "auto"})

    config = {
        "server": asker.build_server(counters=asker.Counters()),
        "protocol": protocol,
        "elicitation": handler,
    }
    async with MCPToolNode({"asker": config}) as node:
        out = await _graph(node).ainvoke(_request(("delete_item", {"item": "a"}, "c1")), THREAD)
        assert _results(out) == {"c1": "deleted a (auto)"}
        assert seen == [
            ("Really delete a?", {"server": "asker", "tool_name": "delete_item", "tool_call_id": "c1"})
        ]


async def test_handler_with_an_invalid_answer_fails_the_call() -> None:
    async def handler(request: Any, call: Any) -> Any:
        return accept({"ok": "not a boolean"})

    config = {"server": asker.build_server(counters=asker.Counters()), "elicitation": handler}
    async with MCPToolNode({"asker": config}) as node:
        with pytest.raises(ValueError, match="does not match the requested schema"):
            await _graph(node).ainvoke(_request(("delete_item", {"item": "a"}, "c1")), THREAD)


async def test_outside_a_graph_the_error_says_what_to_do() -> None:
    async with MCPPool({"asker": {"server": asker.build_server(counters=asker.Counters())}}) as pool:
        tool = (await tools_by_name(pool))["delete_item"]
        with pytest.raises(MCPToolCallError, match="not running inside a LangGraph graph"):
            await tool.ainvoke({"item": "a"})


# -- sampling and roots ---------------------------------------------------------------------------------


def _model(*replies: str) -> FakeMessagesListChatModel:
    return FakeMessagesListChatModel(responses=[AIMessage(r) for r in replies])


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_sampling_by_a_chat_model(protocol: str) -> None:
    model = _model("short version")
    config = {
        "server": asker.build_server(counters=asker.Counters()),
        "protocol": protocol,
        "sampling_model": model,
    }
    async with MCPToolNode({"asker": config}) as node:
        out = await _graph(node).ainvoke(_request(("summarize", {"text": "a long text"}, "c1")), THREAD)
        assert _results(out) == {"c1": "summary: short version"}


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_sampling_is_refused_clearly_without_a_model(protocol: str) -> None:
    config = {"server": asker.build_server(counters=asker.Counters()), "protocol": protocol}
    async with MCPToolNode({"asker": config}) as node:
        out = await _graph(node).ainvoke(_request(("summarize", {"text": "x"}, "c1")), THREAD)
        message = next(m for m in out["messages"] if isinstance(m, ToolMessage))
        assert message.status == "error"
        assert "sampling is not enabled for MCP server 'asker'" in message.content


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_sampling_approval_interrupt(protocol: str) -> None:
    config = {
        "server": asker.build_server(counters=asker.Counters()),
        "protocol": protocol,
        "sampling_model": _model("model text"),
        "sampling_approval": True,
    }
    async with MCPToolNode({"asker": config}) as node:
        graph = _graph(node)
        out = await graph.ainvoke(_request(("summarize", {"text": "x"}, "c1")), THREAD)
        payload = out["__interrupt__"][0].value
        assert payload["type"] == "mcp_sampling" and payload["tool_call_id"] == "c1"
        assert payload["request"]["messages"][0]["content"]["text"] == "Summarize: x"
        out = await graph.ainvoke(Command(resume={"action": "accept"}), THREAD)
        assert _results(out) == {"c1": "summary: model text"}

        thread = {"configurable": {"thread_id": "t2"}}
        await graph.ainvoke(_request(("summarize", {"text": "y"}, "c2")), thread)
        out = await graph.ainvoke(Command(resume={"action": "accept", "content": "written by hand"}), thread)
        assert _results(out) == {"c2": "summary: written by hand"}


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_roots_come_from_configuration(protocol: str, tmp_path: Path) -> None:
    config = {
        "server": asker.build_server(counters=asker.Counters()),
        "protocol": protocol,
        "roots": [str(tmp_path), {"uri": "file:///srv/data", "name": "data"}],
    }
    async with MCPToolNode({"asker": config}) as node:
        out = await _graph(node).ainvoke(_request(("where", {}, "c1")), THREAD)
        assert _results(out) == {"c1": f"{tmp_path.as_uri()},file:///srv/data"}


# -- handshake era: held calls ------------------------------------------------------------------------


async def test_held_call_waits_without_using_its_timeout() -> None:
    calls: list[str] = []
    server = asker.build_server(counters=asker.Counters(), calls_log=calls)
    async with serve_in_loop(server) as url:
        config = {"url": url, "protocol": "legacy", "timeout": 1.0}
        async with MCPToolNode({"asker": config}) as node:
            graph = _graph(node)
            out = await graph.ainvoke(_request(("delete_item", {"item": "a"}, "c1")), THREAD)
            key = _only_key(out["__interrupt__"][0].value)
            await asyncio.sleep(1.5)  # longer than the call's timeout: the person's time is not counted
            out = await graph.ainvoke(Command(resume={"responses": {key: accept({"ok": True})}}), THREAD)
            assert _results(out) == {"c1": "deleted a ()"}
    assert calls == ["delete_item rs=no ir=-"]


async def test_person_too_slow_then_the_call_is_reissued_and_replayed() -> None:
    calls: list[str] = []
    server = asker.build_server(counters=asker.Counters(), calls_log=calls)
    async with serve_in_loop(server) as url:
        config = {"url": url, "protocol": "legacy", "elicitation_timeout": 0.3}
        async with MCPToolNode({"asker": config}) as node:
            graph = _graph(node)
            out = await graph.ainvoke(_request(("delete_item", {"item": "a"}, "c1")), THREAD)
            key = _only_key(out["__interrupt__"][0].value)
            for _ in range(100):  # the held request is cancelled after elicitation_timeout
                if not _held(node):
                    break
                await asyncio.sleep(0.05)
            assert not _held(node)
            out = await graph.ainvoke(
                Command(resume={"responses": {key: accept({"ok": True, "note": "late"})}}), THREAD
            )
            assert _results(out) == {"c1": "deleted a (late)"}
            assert "__interrupt__" not in out  # the repeated question was answered from the stored answer
    assert calls == ["delete_item rs=no ir=-", "delete_item rs=no ir=-"]


# -- durability across processes -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "state_key", "expected"),
    [
        # 2026-07-28, the server keeps a request-state key across restarts: only the answered
        # round is sent after the restart.
        ("auto", "k1", ["book rs=no ir=-", "book rs=yes ir=tests.servers.asker:ask_dates"]),
        # 2026-07-28 with a per-process key: the answered round is sent with the stored state, which
        # the new server process rejects before the tool runs (so it is not in the log); the call is
        # re-issued and the repeated question answered from the stored answer (no new interrupt).
        (
            "auto",
            "",
            ["book rs=no ir=-", "book rs=no ir=-", "book rs=yes ir=tests.servers.asker:ask_dates"],
        ),
        # Handshake era: the held call died with the first process; it is re-issued and the
        # stored answer replayed to the repeated question.
        ("legacy", "", ["book rs=no ir=-", "book rs=no ir=-"]),
    ],
    ids=["2026-durable-key", "2026-new-key", "legacy"],
)
@pytest.mark.slow  # three OS processes, each importing the package
async def test_resume_in_a_new_process(
    tmp_path: Path, protocol: str, state_key: str, expected: list[str]
) -> None:
    db, log = str(tmp_path / "state.db"), str(tmp_path / "calls.log")
    first = run_phase("book", "start", db, log, protocol, state_key)
    assert first["interrupts"] == [["c1", ["Which dates for Oslo?"]]]
    second = run_phase("book", "resume", db, log, protocol, state_key)
    assert second["interrupts"] == [["c1", ["Book 2 nights from 2027-06-01 in Oslo?"]]]
    assert Path(log).read_text().splitlines() == expected
    third = run_phase("book", "confirm", db, log, protocol, state_key)
    assert third["results"] == {"c1": "booked Oslo from 2027-06-01 for 2 nights"}
    assert third["interrupts"] == []


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_url_elicitation_required_error_asks_then_retries(protocol: str) -> None:
    authorized: list[bool] = []
    calls: list[str] = []
    server = MCPServer("drive")

    @server.tool()
    def list_files() -> str:
        calls.append("list_files")
        if not authorized:
            raise UrlElicitationRequiredError(
                [
                    ElicitRequestURLParams(
                        message="Authorize access to your files",
                        url="https://drive.example.com/oauth?state=1",
                        elicitation_id="auth-1",
                    )
                ]
            )
        return "report.pdf"

    async with MCPToolNode({"drive": {"server": server, "protocol": protocol}}) as node:
        graph = _graph(node)
        out = await graph.ainvoke(_request(("list_files", {}, "c1")), THREAD)
        (question,) = out["__interrupt__"][0].value["requests"]
        assert question["mode"] == "url" and question["url"] == "https://drive.example.com/oauth?state=1"
        assert question["message"] == "Authorize access to your files"
        authorized.append(True)  # the person completed the flow in their browser
        out = await graph.ainvoke(Command(resume={"responses": {question["key"]: accept()}}), THREAD)
        assert _results(out) == {"c1": "report.pdf"}
        # Declining is reported to the model, and the call is not retried.
        authorized.clear()
        thread = {"configurable": {"thread_id": "t2"}}
        out = await graph.ainvoke(_request(("list_files", {}, "c2")), thread)
        key = _only_key(out["__interrupt__"][0].value)
        out = await graph.ainvoke(Command(resume={"responses": {key: decline()}}), thread)
        message = next(m for m in out["messages"] if isinstance(m, ToolMessage))
        assert message.status == "error"
        assert "needs the person to visit https://drive.example.com/oauth?state=1" in message.content


def _held(node: MCPToolNode) -> bool:
    """Is a 2025-11-25 call of the asker server still held open, waiting for a person?"""
    from langgraph_mcp._elicitation.held import _registry

    return bool(_registry.get(node.pool.connection("asker").scope()))


def test_an_answer_is_checked_without_fetching_what_the_question_schema_names() -> None:
    """A question whose schema ``$ref``s a URL: checking a person's answer never fetches it; the
    answer is refused with a clear reason instead."""
    from langgraph_mcp._elicitation.answers import check_response
    from tests.hostile import ref_server

    with ref_server() as remote:
        request: Any = {
            "key": "q#1",
            "mode": "form",
            "message": "Pick one",
            "requested_schema": {"type": "object", "properties": {"choice": {"$ref": remote.url}}},
        }
        with pytest.raises(ValueError, match=r"response for 'q#1': the requested schema cannot be used"):
            check_response(request, {"action": "accept", "content": {"choice": "x"}})
        assert remote.hits == []
