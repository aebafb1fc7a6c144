"""2025-11-25 servers ask mid-call: held calls, re-issued calls, parallel questions.

Over stdio and the old SSE transport a server's question carries nothing that ties it to the call
that asked it; these tests hold several such calls open at once, resume them in the same process
and in a new one, and check that every answer reaches the question it was given for.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langgraph.types import Command
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

from langgraph_mcp import MCPToolNode
from langgraph_mcp.elicitation import accept, resume_elicitations
from tests.conftest_servers import http_server_process, serve_in_loop, stdio_params, wiretapped, written
from tests.helpers import ai, answer_rounds, pid_alive, run_phase, thread, tool_graph, tool_results, until
from tests.langgraph_server import children_of, cmdline
from tests.servers import asker, fickle

BOOK_ANSWERS = {
    "Which dates for Oslo?": {"start": "2027-06-01", "nights": 2},
    "Which dates for Rome?": {"start": "2027-07-01", "nights": 3},
}


def _answer_book(payload: dict[str, Any]) -> dict[str, Any]:
    return {r["key"]: accept(BOOK_ANSWERS.get(r["message"], {"ok": True})) for r in payload["requests"]}


@pytest.fixture(params=["stdio", "sse"])
async def legacy_asker(request: pytest.FixtureRequest) -> AsyncIterator[dict[str, Any]]:
    """The asker server over a transport whose requests carry no caller context (2025-11-25)."""
    if request.param == "stdio":
        yield {**stdio_params("asker"), "protocol": "legacy"}
    else:
        async with serve_in_loop(asker.build_server(counters=asker.Counters()), "sse") as url:
            yield {"url": url, "transport": "sse", "protocol": "legacy"}


@pytest.mark.parametrize("send", [False, True], ids=["tools_condition", "send-per-call"])
async def test_parallel_calls_asking_several_questions_all_complete(
    legacy_asker: dict[str, Any], send: bool
) -> None:
    calls = (("book", {"city": "Oslo"}, "c1"), ("book", {"city": "Rome"}, "c2"))
    async with MCPToolNode({"asker": legacy_asker}) as node:
        graph = tool_graph(node, send=send)
        out = await graph.ainvoke({"messages": [ai(*calls)]}, thread())
        out, asked = await answer_rounds(graph, out, _answer_book, thread())
        assert asked == [
            [("c1", "Which dates for Oslo?"), ("c2", "Which dates for Rome?")],
            [
                ("c1", "Book 2 nights from 2027-06-01 in Oslo?"),
                ("c2", "Book 3 nights from 2027-07-01 in Rome?"),
            ],
        ]
        assert tool_results(out) == {
            "c1": "booked Oslo from 2027-06-01 for 2 nights",
            "c2": "booked Rome from 2027-07-01 for 3 nights",
        }


async def test_calls_that_asked_at_once_are_sent_again_without_cancelling_them(tmp_path: Path) -> None:
    """Three calls ask at the same moment over stdio: none of the questions can be tied to its
    call, so each is answered ``cancel``, each call is left to end, and they are sent again one
    at a time. No ``notifications/cancelled`` reaches the server: one that crosses the result the
    ``cancel`` answer led to ends servers built on the mcp 1.x SDK (before 1.12.3 any does; see
    tests/interop/test_mcp1.py)."""
    wire, calls_log = tmp_path / "wire.log", tmp_path / "calls.log"
    server = stdio_params("asker", env={"ASKER_LOG": str(calls_log)})
    config = {**wiretapped(server, wire), "protocol": "legacy"}
    cities = {"c1": "Oslo", "c2": "Rome", "c3": "Paris"}
    answers = {**BOOK_ANSWERS, "Which dates for Paris?": {"start": "2027-08-01", "nights": 4}}

    def answer(payload: dict[str, Any]) -> dict[str, Any]:
        return {r["key"]: accept(answers.get(r["message"], {"ok": True})) for r in payload["requests"]}

    async with MCPToolNode({"asker": config}) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke(
            {"messages": [ai(*(("book", {"city": c}, i) for i, c in cities.items()))]}, thread()
        )
        for _ in range(4):
            if not out.get("__interrupt__"):
                break
            out = await graph.ainvoke(resume_elicitations(out["__interrupt__"], answer), thread())
    assert tool_results(out) == {
        "c1": "booked Oslo from 2027-06-01 for 2 nights",
        "c2": "booked Rome from 2027-07-01 for 3 nights",
        "c3": "booked Paris from 2027-08-01 for 4 nights",
    }
    sent = written(wire)
    resent = len(calls_log.read_text().splitlines()) - len(cities)
    assert resent > 0  # some calls asked at the same moment, and were sent again
    assert [m for m in sent if m.get("method") == "notifications/cancelled"] == []
    dropped = [m for m in sent if m.get("result") == {"action": "cancel"}]
    assert len(dropped) == resent  # each abandoned call's question was answered ``cancel``


async def test_an_abandoned_call_that_goes_on_is_cancelled_after_a_grace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A tool that goes on after its question was answered ``cancel`` is cancelled once
    ``ABANDON_GRACE`` has passed, and the calls are sent again as usual."""
    from langgraph_mcp._session import routing

    monkeypatch.setattr(routing, "ABANDON_GRACE", 0.3)
    monkeypatch.setattr(routing, "GHOST_GRACE", 0.3)  # a cancelled call may still be asking for so long
    server = MCPServer("stubborn")
    cancelled: list[str] = []

    class Ok(BaseModel):
        ok: bool

    @server.tool()
    async def hold(item: str, ctx: Context) -> str:
        answer = await ctx.elicit(f"Hold {item}?", Ok)
        if answer.action != "accept":
            try:
                await anyio.sleep(60)  # ignores the answer
            except anyio.get_cancelled_exc_class():
                cancelled.append(item)
                raise
        return f"held {item}"

    async with (
        serve_in_loop(server, "sse") as url,
        MCPToolNode({"s": {"url": url, "transport": "sse", "protocol": "legacy"}}) as node,
    ):
        graph = tool_graph(node)
        out = await graph.ainvoke(
            {"messages": [ai(("hold", {"item": "a"}, "c1"), ("hold", {"item": "b"}, "c2"))]}, thread()
        )
        out = await graph.ainvoke(
            resume_elicitations(
                out["__interrupt__"], lambda p: {r["key"]: accept({"ok": True}) for r in p["requests"]}
            ),
            thread(),
        )
    assert tool_results(out) == {"c1": "held a", "c2": "held b"}
    assert sorted(cancelled) == ["a", "b"]


async def test_a_question_nobody_answers_in_time_is_answered_cancel_and_the_call_left_to_end(
    tmp_path: Path,
) -> None:
    """After ``elicitation_timeout`` the question is answered ``cancel`` and the server ends the
    call itself (no ``notifications/cancelled``, see above); the resumed run sends it again."""
    from langgraph_mcp._elicitation.held import _registry

    wire, calls_log = tmp_path / "wire.log", tmp_path / "calls.log"
    server = stdio_params("asker", env={"ASKER_LOG": str(calls_log)})
    config = {**wiretapped(server, wire), "protocol": "legacy", "elicitation_timeout": 0.3}
    async with MCPToolNode({"asker": config}) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("delete_item", {"item": "a"}, "c1"))]}, thread())
        [question] = out["__interrupt__"]
        await until(lambda: not _registry.get(node.pool.connection("asker").scope()))  # the call ended
        assert [m["result"] for m in written(wire) if "result" in m] == [{"action": "cancel"}]
        late = resume_elicitations(
            [question], lambda p: {r["key"]: accept({"ok": True}) for r in p["requests"]}
        )
        out = await graph.ainvoke(late, thread())
    assert tool_results(out) == {"c1": "deleted a ()"}
    assert [m for m in written(wire) if m.get("method") == "notifications/cancelled"] == []
    assert len(calls_log.read_text().splitlines()) == 2


async def test_code_policies_answer_requests_that_cannot_be_tied_to_a_call() -> None:
    asked: list[tuple[str, str | None]] = []

    async def handler(request: Any, call: Any) -> Any:
        asked.append((request["message"], call["tool_call_id"]))
        return accept({"ok": True, "note": "by code"})

    model = FakeMessagesListChatModel(responses=[AIMessage("short")] * 4)
    server = {
        **stdio_params("asker"),
        "protocol": "legacy",
        "elicitation": handler,
        "sampling_model": model,
    }
    calls = (
        ("slow_confirm", {"item": "a"}, "c1"),
        ("delete_item", {"item": "b"}, "c2"),
        ("summarize", {"text": "one"}, "c3"),
        ("summarize", {"text": "two"}, "c4"),
    )
    async with MCPToolNode({"asker": server}) as node:
        out = await tool_graph(node).ainvoke({"messages": [ai(*calls)]}, thread())
    assert tool_results(out) == {
        "c1": "deleted a (by code)",
        "c2": "deleted b (by code)",
        "c3": "summary: short",
        "c4": "summary: short",
    }
    expected = {"Confirm a?": "c1", "Really delete b?": "c2"}
    assert {m for m, _ in asked} == set(expected)
    assert all(call_id in (expected[m], None) for m, call_id in asked), asked


def _answer(payload: dict[str, Any], ok: bool, style: str) -> dict[str, Any]:
    """The resume value for ``payload``: keyed responses, or a HITL form's decisions (an edit
    with the value typed as text), which name no question."""
    if style == "responses":
        return {"responses": {r["key"]: accept({"ok": ok}) for r in payload["requests"]}}
    edit = {"ok": "true" if ok else "false"}
    return {
        "decisions": [
            {"type": "edit", "edited_action": {"name": action["name"], "args": edit}}
            for action in payload["action_requests"]
        ]
    }


@pytest.mark.parametrize("style", ["responses", "decisions"])
async def test_reissued_call_asks_again_when_the_question_changed(style: str) -> None:
    """The person's time ran out, the call is re-issued, and the server now asks something else:
    the answer given to the first question must not be applied to the second (keyed, or as a
    HITL form answers, naming no question)."""
    state = fickle.FickleState(default_target="invoice-2024.pdf")
    calls: list[str] = []
    async with serve_in_loop(fickle.build_server(state=state, calls_log=calls)) as url:
        config = {"url": url, "protocol": "legacy", "elicitation_timeout": 0.3}
        async with MCPToolNode({"fickle": config}) as node:
            graph = tool_graph(node)
            out = await graph.ainvoke({"messages": [ai(("delete_target", {}, "c1"))]}, thread())
            (pending,) = out["__interrupt__"]
            assert pending.value["requests"][0]["message"] == "Really delete invoice-2024.pdf?"
            await asyncio.sleep(1.0)  # longer than elicitation_timeout: the held call is cancelled
            state.default_target = "ALL-BACKUPS"
            yes = _answer(pending.value, True, style)
            out = await graph.ainvoke(Command(resume={pending.id: yes}), thread())
            (again,) = out["__interrupt__"]
            assert again.value["requests"][0]["message"] == "Really delete ALL-BACKUPS?"
            assert not any(c.startswith("deleted") for c in calls), calls
            no = _answer(again.value, False, style)
            out = await graph.ainvoke(Command(resume={again.id: no}), thread())
            assert tool_results(out) == {"c1": "kept ALL-BACKUPS"}


@pytest.mark.slow  # three OS processes, each importing the package
@pytest.mark.parametrize("style", ["responses", "decisions"])
def test_reissued_call_in_a_new_process_asks_again_when_the_question_changed(
    tmp_path: Path, style: str
) -> None:
    db, log = str(tmp_path / "state.db"), str(tmp_path / "calls.log")
    first = run_phase("changed_question", "start", db, log, "invoice-2024.pdf")
    assert first["interrupts"] == [["c1", ["Really delete invoice-2024.pdf?"]]]
    second = run_phase("changed_question", "resume", db, log, "ALL-BACKUPS", "ok", style)
    assert second["interrupts"] == [["c1", ["Really delete ALL-BACKUPS?"]]]
    assert second["results"] == {}
    third = run_phase("changed_question", "resume", db, log, "ALL-BACKUPS", "no", style)
    assert third["results"] == {"c1": "kept ALL-BACKUPS"}


@pytest.mark.slow  # three OS processes, each importing the package
def test_parallel_questions_resumed_in_new_processes(tmp_path: Path) -> None:
    db, log = str(tmp_path / "state.db"), str(tmp_path / "calls.log")
    out = run_phase("parallel", "start", db, log)
    asked = []
    for _ in range(4):
        if not out["interrupts"]:
            break
        asked.append(sorted((c, m[0]) for c, m in out["interrupts"]))
        out = run_phase("parallel", "answer", db, log)
    assert asked == [
        [("c1", "Which dates for Oslo?"), ("c2", "Which dates for Rome?")],
        [("c1", "Book 2 nights from 2027-06-01 in Oslo?"), ("c2", "Book 3 nights from 2027-07-01 in Rome?")],
    ]
    assert out["results"] == {
        "c1": "booked Oslo from 2027-06-01 for 2 nights",
        "c2": "booked Rome from 2027-07-01 for 3 nights",
    }


@contextmanager
def asker_process(transport: str, log: Path) -> Iterator[dict[str, Any]]:
    """The asker server in its own process, logging each ``tools/call`` it receives to ``log``."""
    env = {"ASKER_LOG": str(log)}
    if transport == "stdio":
        yield {**stdio_params("asker", env=env), "protocol": "legacy"}
        return
    with http_server_process("asker", env) as url:
        yield {"url": url, "protocol": "legacy"}


@pytest.mark.slow  # seconds of closing sessions of idle loops
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_question_held_on_one_event_loop_is_answered_on_another(tmp_path: Path, transport: str) -> None:
    """Runs on different event loops (LangGraph server's isolated run loops): the held call lives
    on the first loop's session, which is idle when the resume runs on the second loop. The call
    is sent again there and the stored answer replayed; closing stops what the first loop left."""
    log = tmp_path / "calls.log"
    loops = [asyncio.new_event_loop() for _ in range(2)]
    try:
        with asker_process(transport, log) as config:
            node = MCPToolNode({"asker": config})
            graph = tool_graph(node)
            request = {"messages": [ai(("delete_item", {"item": "a"}, "c1"))]}
            out = loops[0].run_until_complete(graph.ainvoke(request, thread()))
            [question] = out["__interrupt__"]
            answer = resume_elicitations(
                [question],
                lambda p: {r["key"]: accept({"ok": True, "note": "elsewhere"}) for r in p["requests"]},
            )
            out = loops[1].run_until_complete(graph.ainvoke(answer, thread()))
            assert tool_results(out) == {"c1": "deleted a (elsewhere)"}
            assert "__interrupt__" not in out
            assert node.pool.connection("asker").connects == 2  # one session per loop
            assert len(log.read_text().splitlines()) == 2  # sent on each loop: at-least-once
            asyncio.run(node.aclose())
            servers = [pid for pid in children_of(os.getpid()) if "tests.servers.asker" in cmdline(pid)]
            assert not [pid for pid in servers if pid_alive(pid)] or transport == "http"
    finally:
        for loop in loops:
            loop.close()
