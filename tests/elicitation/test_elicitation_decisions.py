"""A server's question is also a human-in-the-loop request (Agent Chat UI's form), and the UI's
``{"decisions": [...]}`` answers it: approve accepts as shown, edit accepts the edited fields
(typed from their text), reject declines. In both protocol eras."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import is_invalid_resume
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Command

from langgraph_mcp import MCPToolNode
from langgraph_mcp._elicitation.refusals import AnswerRefused
from tests.conftest_servers import serve_in_loop, stdio_params
from tests.helpers import ai, check, thread
from tests.servers import asker

# Both eras (2025-11-25 live callbacks, 2026-07-28 input-required rounds), both transports.
ERAS = [("stdio", "legacy"), ("http", "auto")]


@pytest.fixture(params=ERAS, ids=[f"{t}-{p}" for t, p in ERAS])
async def server(request: pytest.FixtureRequest) -> AsyncIterator[dict[str, Any]]:
    transport, protocol = request.param
    if transport == "stdio":
        yield {**stdio_params("asker"), "protocol": protocol}
    else:
        async with serve_in_loop(asker.build_server(counters=asker.Counters())) as url:
            yield {"url": url, "protocol": protocol}


def graph_of(node: MCPToolNode) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node(node)
    builder.add_edge(START, "tools")
    return builder.compile(checkpointer=InMemorySaver())


def as_sent(decisions: list[dict[str, Any]]) -> Command[Any]:
    """The resume value as the UI sends it (through JSON, as langgraph-sdk does)."""
    return Command(resume=json.loads(json.dumps({"decisions": decisions})))


def results(out: dict[str, Any]) -> dict[str, str]:
    return {m.tool_call_id: str(m.content) for m in out["messages"] if isinstance(m, ToolMessage)}


async def pending(graph: Any) -> list[dict[str, Any]]:
    return [i.value for i in (await graph.aget_state(thread())).interrupts]


async def test_a_form_question_is_a_hitl_request_answered_by_an_edit(server: dict[str, Any]) -> None:
    async with MCPToolNode({"asker": server}) as node:
        graph = graph_of(node)
        out = await graph.ainvoke({"messages": [ai(("delete_item", {"item": "db"}, "c1"))]}, thread())
        payload = out["__interrupt__"][0].value
        check("elicitation-interrupt", payload)
        check("interrupt", payload)
        (question,) = payload["requests"]  # the existing fields are all there
        # The form's title is the tool and the question; its description lists what to enter.
        name = "delete_item: Really delete db?"
        assert payload["step"] == 1
        assert payload["action_requests"] == [
            {
                "name": name,
                "args": {"ok": "", "note": ""},
                "description": "Really delete db?\n\n- Ok (required): answer yes (true) or no (false)\n"
                "- Note (optional): enter some text",
            }
        ]
        assert payload["review_configs"] == [
            {
                "action_name": name,
                "allowed_decisions": ["approve", "edit", "reject"],
                "args_schema": question["requested_schema"],
            }
        ]
        # As the UI sends an edit: every value it shows as text.
        edit = {
            "type": "edit",
            "edited_action": {"name": name, "args": {"ok": "true", "note": "old"}},
        }
        check("elicitation-resume", {"decisions": [edit]})
        out = await graph.ainvoke(as_sent([edit]), thread())
    assert results(out) == {"c1": "deleted db (old)"}


async def test_approve_accepts_as_shown_and_a_missing_field_keeps_the_question(
    server: dict[str, Any],
) -> None:
    async with MCPToolNode({"asker": server}) as node:
        graph = graph_of(node)
        out = await graph.ainvoke({"messages": [ai(("pick_options", {}, "c1"))]}, thread())
        (action,) = out["__interrupt__"][0].value["action_requests"]
        assert action["args"] == {"color": "", "plan": "basic", "toppings": [], "size": 2, "urgent": False}
        # "color" has no default: approving the form as shown answers nothing for it.
        with pytest.raises(Exception, match="Color: this field is required"):
            await graph.ainvoke(as_sent([{"type": "approve"}]), thread())
        with pytest.raises(Exception, match=r'Size: "big" is not a whole number'):
            args = {**action["args"], "color": "red", "size": "big"}
            await graph.ainvoke(
                as_sent([{"type": "edit", "edited_action": {"name": "pick_options", "args": args}}]), thread()
            )
        assert len(await pending(graph)) == 1
        args = {**action["args"], "color": "red", "size": "3", "urgent": "true", "toppings": '["ham"]'}
        out = await graph.ainvoke(
            as_sent([{"type": "edit", "edited_action": {"name": "pick_options", "args": args}}]), thread()
        )
    assert json.loads(results(out)["c1"]) == {
        "color": "red",
        "plan": "basic",
        "size": 3,
        "toppings": ["ham"],
        "urgent": True,
    }


async def test_reject_declines_and_wrong_decisions_are_refused(server: dict[str, Any]) -> None:
    async with MCPToolNode({"asker": server}) as node:
        graph = graph_of(node)
        out = await graph.ainvoke({"messages": [ai(("delete_item", {"item": "db"}, "c1"))]}, thread())
        key = out["__interrupt__"][0].value["requests"][0]["key"]
        with pytest.raises(Exception, match=r"2 decision\(s\) for 1 question\(s\)"):
            await graph.ainvoke(as_sent([{"type": "approve"}, {"type": "approve"}]), thread())
        with pytest.raises(Exception, match="'respond' is not allowed"):
            await graph.ainvoke(as_sent([{"type": "respond", "message": "yes"}]), thread())
        with pytest.raises(Exception, match="names 'other', not this question"):
            await graph.ainvoke(
                as_sent([{"type": "edit", "edited_action": {"name": "other", "args": {"ok": "true"}}}]),
                thread(),
            )
        assert [p["requests"][0]["key"] for p in await pending(graph)] == [key]
        out = await graph.ainvoke(as_sent([{"type": "reject", "message": "no"}]), thread())
    assert results(out) == {"c1": "declined"}


async def test_a_url_question_shows_its_link_and_approve_accepts_it(server: dict[str, Any]) -> None:
    async with MCPToolNode({"asker": server}) as node:
        graph = graph_of(node)
        out = await graph.ainvoke({"messages": [ai(("login", {}, "c1"))]}, thread())
        payload = out["__interrupt__"][0].value
        check("elicitation-interrupt", payload)
        (action,) = payload["action_requests"]
        assert action == {
            "name": f"login (link): {asker.LOGIN_MESSAGE}",
            "args": {},
            "description": f"{asker.LOGIN_MESSAGE}\n\nLink: {asker.LOGIN_URL}",
        }
        assert payload["review_configs"] == [
            {
                "action_name": f"login (link): {asker.LOGIN_MESSAGE}",
                "allowed_decisions": ["approve", "reject"],
            }
        ]
        with pytest.raises(Exception, match="'edit' is not allowed"):
            await graph.ainvoke(as_sent([{"type": "edit", "edited_action": {"args": {}}}]), thread())
        out = await graph.ainvoke(as_sent([{"type": "approve"}]), thread())
    assert results(out) == {"c1": "logged in"}


async def test_the_existing_responses_answer_still_works(server: dict[str, Any]) -> None:
    async with MCPToolNode({"asker": server}) as node:
        graph = graph_of(node)
        out = await graph.ainvoke({"messages": [ai(("delete_item", {"item": "db"}, "c1"))]}, thread())
        key = out["__interrupt__"][0].value["requests"][0]["key"]
        resume = {"responses": {key: {"action": "accept", "content": {"ok": True}}}}
        check("elicitation-resume", resume)
        out = await graph.ainvoke(Command(resume=resume), thread())
    assert results(out) == {"c1": "deleted db ()"}


async def test_an_approval_then_the_calls_question_both_answered_as_the_ui_answers(
    server: dict[str, Any],
) -> None:
    """Agent Chat UI's answers, in turn, to the approval and then to the server's question of the
    same call: each decisions list is taken by its own question, also when replayed."""
    async with MCPToolNode({"asker": server}, approval=["delete_item"]) as node:
        graph = graph_of(node)
        out = await graph.ainvoke({"messages": [ai(("delete_item", {"item": "db"}, "c1"))]}, thread())
        assert out["__interrupt__"][0].value["type"] == "tool_approval"
        out = await graph.ainvoke(as_sent([{"type": "approve"}]), thread())
        payload = out["__interrupt__"][0].value
        assert payload["type"] == "mcp_elicitation"
        assert payload["action_requests"][0]["name"] == "delete_item: Really delete db?"
        with pytest.raises(Exception, match="Ok: this field is required"):
            await graph.ainvoke(as_sent([{"type": "approve"}]), thread())
        edit = {"type": "edit", "edited_action": {"name": "delete_item", "args": {"ok": "false", "note": ""}}}
        out = await graph.ainvoke(as_sent([edit]), thread())
    assert results(out) == {"c1": "kept db"}


async def test_a_refused_answer_says_which_field_why_and_what_to_enter(server: dict[str, Any]) -> None:
    async with MCPToolNode({"asker": server}) as node:
        graph = graph_of(node)
        out = await graph.ainvoke({"messages": [ai(("pick_options", {}, "c1"))]}, thread())
        payload = out["__interrupt__"][0].value
        key = payload["requests"][0]["key"]
        (action,) = payload["action_requests"]

        def edit(**typed: str) -> Command[Any]:
            args = {**action["args"], "color": "red", **typed}
            return as_sent([{"type": "edit", "edited_action": {"name": action["name"], "args": args}}])

        def accept(**content: Any) -> Command[Any]:
            return Command(resume={"responses": {key: {"action": "accept", "content": content}}})

        refused = "Your answer was not accepted and the question is still open. "
        cases = [
            # As Agent Chat UI sends them (each value as text), then as {"responses": ...}.
            (edit(size="lots"), 'Size: "lots" is not a whole number; enter a whole number.', "size"),
            (edit(color=""), "Color: this field is required; choose one of: red, green, blue.", "color"),
            (
                edit(color="purple"),
                'Color: "purple" is not one of the choices; choose one of: red, green, blue.',
                "color",
            ),
            (accept(color="red", size="x"), 'Size: "x" is not a whole number; enter a whole number.', "size"),
            (accept(size=3), "Color: this field is required; choose one of: red, green, blue.", "color"),
            (
                accept(color="pink"),
                'Color: "pink" is not one of the choices; choose one of: red, green, blue.',
                "color",
            ),
        ]
        for resume, said, field in cases:
            with pytest.raises(AnswerRefused) as info:
                await graph.ainvoke(resume, thread())
            text = str(info.value)
            assert text == refused + said
            for internal in (key, "#", "validation error", "function-after", "[type=", "required property"):
                assert internal not in text, (internal, text)
            # For code: the field, its label, why and what to enter; the pydantic errors as before.
            assert [(p["field"], p["label"]) for p in info.value.problems] == [(field, field.title())]
            assert info.value.errors()[0]["type"] == "value_error"
            assert is_invalid_resume(info.value)
            assert len(await pending(graph)) == 1  # the question is still open
        out = await graph.ainvoke(edit(size="3"), thread())
    assert json.loads(results(out)["c1"])["size"] == 3


async def test_each_round_of_a_question_has_its_own_title(server: dict[str, Any]) -> None:
    async with MCPToolNode({"asker": server}) as node:
        graph = graph_of(node)
        out = await graph.ainvoke({"messages": [ai(("book", {"city": "Oslo"}, "c1"))]}, thread())
        first = out["__interrupt__"][0].value
        (action,) = first["action_requests"]
        assert (first["step"], action["name"]) == (1, "book: Which dates for Oslo?")
        assert action["description"] == (
            "Which dates for Oslo?\n\n- Start (required): enter some text\n"
            "- Nights (optional): enter a whole number"
        )
        args = {"start": "2026-12-24", "nights": "2"}
        out = await graph.ainvoke(
            as_sent([{"type": "edit", "edited_action": {"name": action["name"], "args": args}}]), thread()
        )
        second = out["__interrupt__"][0].value
        (action,) = second["action_requests"]
        assert (second["step"], action["name"]) == (
            2,
            "book (step 2): Book 2 nights from 2026-12-24 in Oslo?",
        )
        assert second["review_configs"][0]["action_name"] == action["name"]
        edit = {"type": "edit", "edited_action": {"name": action["name"], "args": {"ok": "true", "note": ""}}}
        out = await graph.ainvoke(as_sent([edit]), thread())
    assert results(out) == {"c1": "booked Oslo from 2026-12-24 for 2 nights"}
