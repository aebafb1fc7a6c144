"""What real runs produce fits the published JSON Schemas (``docs/schemas``), and the resume values
the wire-format page documents, written as plain JSON, resume real graphs.

Every resume value here is parsed from JSON text (``fill``), never built with
``langgraph_mcp.elicitation``: it is what a client in another language sends.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import jsonschema
import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Command
from pydantic import ValidationError

from langgraph_mcp import MCPPool, MCPToolNode
from langgraph_mcp.schemas import json_schema
from tests.helpers import ai, check, fill, thread, tool_graph, tool_results
from tests.servers import asker, demo, fickle, library, shopfront

ERAS = ["auto", "legacy"]  # 2026-07-28 rounds, and live elicitation/create of 2025-11-25


def fails(name: str, value: Any) -> bool:
    return not jsonschema.Draft202012Validator(json_schema(name)).is_valid(value)


def resume(value: Any) -> Command[Any]:
    """``Command(resume=...)`` with a value parsed from JSON text (or already parsed)."""
    return Command(resume=json.loads(value) if isinstance(value, str) else value)


def asker_config(protocol: str, **extra: Any) -> dict[str, Any]:
    return {"asker": {"server": asker.build_server(counters=asker.Counters()), "protocol": protocol, **extra}}


# -- elicitation ------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ERAS)
async def test_form_and_url_questions_fit_the_schema_and_plain_json_answers_them(protocol: str) -> None:
    async with MCPToolNode(asker_config(protocol)) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("delete_item", {"item": "db"}, "c1"))]}, thread())
        [pending] = out["__interrupt__"]
        check("elicitation-interrupt", pending.value)
        check("interrupt", pending.value)
        [form] = pending.value["requests"]
        assert form["mode"] == "form" and not fails("interrupt", pending.value)
        # The schema LangGraph is given for the resume value takes the documented shape too.
        answer = fill(
            '{"responses": {"$key": {"action": "accept", "content": {"ok": true}}}}', key=form["key"]
        )
        check("elicitation-resume", answer)
        jsonschema.validate(answer, pending.response_schema)
        out = await graph.ainvoke(resume(answer), thread())
        assert tool_results(out) == {"c1": "deleted db ()"}

        out = await graph.ainvoke({"messages": [ai(("login", {}, "c2"))]}, thread("t2"))
        [pending] = out["__interrupt__"]
        check("elicitation-interrupt", pending.value)
        [url] = pending.value["requests"]
        assert (url["mode"], url["url"]) == ("url", asker.LOGIN_URL)
        assert url.get("elicitation_id", asker.LOGIN_ELICITATION_ID) == asker.LOGIN_ELICITATION_ID
        # Addressed by interrupt id, as a client answering several interrupts at once does.
        answer = fill('{"$id": {"responses": {"$key": {"action": "accept"}}}}', id=pending.id, key=url["key"])
        check("elicitation-resume", answer[pending.id])
        out = await graph.ainvoke(resume(answer), thread("t2"))
        assert tool_results(out) == {"c2": "logged in"}


@pytest.mark.parametrize("protocol", ERAS)
async def test_urls_a_server_requires_with_32042_fit_the_schema_and_plain_json_answers_them(
    protocol: str,
) -> None:
    config = {"server": fickle.build_server(state=fickle.FickleState()), "protocol": protocol}
    async with MCPToolNode({"fickle": config}) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("url_twice", {}, "c1"))]}, thread())
        seen = []
        while pending := out.get("__interrupt__"):
            [item] = pending
            check("elicitation-interrupt", item.value)
            [request] = item.value["requests"]
            seen.append((request["mode"], request["url"]))
            answer = fill(
                '{"$id": {"responses": {"$key": {"action": "accept"}}}}', id=item.id, key=request["key"]
            )
            out = await graph.ainvoke(resume(answer), thread())
        assert seen == [("url", fickle.URLS["a"]), ("url", fickle.URLS["b"])]
        assert tool_results(out) == {"c1": "authorized twice"}


async def test_decline_and_cancel_as_plain_json() -> None:
    async with MCPToolNode(asker_config("auto")) as node:
        graph = tool_graph(node)
        for name, action, expected in [("t1", "decline", "declined"), ("t2", "cancel", "cancelled")]:
            out = await graph.ainvoke({"messages": [ai(("delete_item", {"item": "db"}, "c1"))]}, thread(name))
            key = out["__interrupt__"][0].value["requests"][0]["key"]
            answer = fill('{"responses": {"$key": {"action": "$action"}}}', key=key, action=action)
            check("elicitation-resume", answer)
            out = await graph.ainvoke(resume(answer), thread(name))
            assert tool_results(out) == {"c1": expected}


# -- approval ---------------------------------------------------------------------------------------

APPROVE_FORMS = {
    "bare": '{"type": "approve"}',
    "decisions": '{"decisions": [{"type": "approve"}]}',
    "responses": '{"responses": {"$key": {"type": "approve"}}}',
    "keyed decision": '{"type": "approve", "key": "$key"}',
}


@pytest.mark.parametrize("form", list(APPROVE_FORMS))
async def test_an_approval_fits_the_schema_and_each_documented_resume_runs_the_call(form: str) -> None:
    async with MCPToolNode({"shop": {"server": shopfront.build_server()}}, approval="destructive") as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("delete_item", {"item": "x"}, "c1"))]}, thread())
        [pending] = out["__interrupt__"]
        check("approval-interrupt", pending.value)
        check("interrupt", pending.value)
        assert fails("elicitation-interrupt", pending.value)  # the kinds cannot be mistaken
        answer = fill(APPROVE_FORMS[form], key=pending.value["key"])
        check("approval-resume", answer)
        jsonschema.validate(answer, pending.response_schema)
        out = await graph.ainvoke(Command(resume=answer), thread())
        assert tool_results(out) == {"c1": "deleted x"}


async def test_edit_reject_and_a_wrong_key_as_plain_json() -> None:
    async with MCPToolNode({"shop": {"server": shopfront.build_server()}}, approval="destructive") as node:
        graph = tool_graph(node)
        request = {"messages": [ai(("delete_item", {"item": "x"}, "c1"))]}
        out = await graph.ainvoke(request, thread())
        key = out["__interrupt__"][0].value["key"]
        edit = fill(
            '{"responses": {"$key": {"type": "edit", "edited_action": {"args": {"item": "y"}}}}}', key=key
        )
        check("approval-resume", edit)
        out = await graph.ainvoke(resume(edit), thread())
        assert "deleted y" in tool_results(out)["c1"]

        out = await graph.ainvoke(request, thread("t2"))
        pending = out["__interrupt__"][0]
        with pytest.raises(ValidationError, match="no question has the key"):
            await graph.ainvoke(resume('{"responses": {"delete": {"type": "approve"}}}'), thread("t2"))
        # An answer for another question is not applied: the question is asked again.
        out = await graph.ainvoke(
            resume('{"responses": {"approval#00000000": {"type": "approve"}}}'), thread("t2")
        )
        assert [i.value for i in out["__interrupt__"]] == [pending.value]
        reject = fill(
            '{"responses": {"$key": {"type": "reject", "message": "not now"}}}', key=pending.value["key"]
        )
        check("approval-resume", reject)
        out = await graph.ainvoke(resume(reject), thread("t2"))
        [message] = [m for m in out["messages"] if isinstance(m, ToolMessage)]
        assert message.status == "error" and "not now" in message.content


@pytest.mark.parametrize("protocol", ERAS)
async def test_one_convention_answers_an_approval_and_then_the_calls_question(protocol: str) -> None:
    """A destructive tool that also asks: both interrupts are answered with
    ``{"responses": {<key>: <answer>}}``, the key read from each payload."""
    async with MCPToolNode(asker_config(protocol), approval="destructive") as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("delete_item", {"item": "db"}, "c1"))]}, thread())
        value = out["__interrupt__"][0].value
        assert value["type"] == "tool_approval"
        out = await graph.ainvoke(
            resume(fill('{"responses": {"$key": {"type": "approve"}}}', key=value["key"])), thread()
        )
        value = out["__interrupt__"][0].value
        assert value["type"] == "mcp_elicitation"
        key = value["requests"][0]["key"]
        answer = fill(
            '{"responses": {"$key": {"action": "accept", "content": {"ok": true, "note": "n"}}}}', key=key
        )
        out = await graph.ainvoke(resume(answer), thread())
        assert tool_results(out) == {"c1": "deleted db (n)"}


# -- sampling ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ERAS)
async def test_a_sampling_approval_fits_the_schema_and_keyed_json_answers_it(protocol: str) -> None:
    model = FakeMessagesListChatModel(responses=[AIMessage("model text")])
    config = asker_config(protocol, sampling_model=model, sampling_approval=True)
    async with MCPToolNode(config) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("summarize", {"text": "x"}, "c1"))]}, thread())
        [pending] = out["__interrupt__"]
        check("sampling-interrupt", pending.value)
        check("interrupt", pending.value)
        answer = fill(
            '{"responses": {"$key": {"action": "accept", "content": "by hand"}}}', key=pending.value["key"]
        )
        check("sampling-resume", answer)
        jsonschema.validate(answer, pending.response_schema)
        out = await graph.ainvoke(resume(answer), thread())
        assert tool_results(out) == {"c1": "summary: by hand"}

        await graph.ainvoke({"messages": [ai(("summarize", {"text": "y"}, "c2"))]}, thread("t2"))
        check("sampling-resume", {"action": "accept"})
        out = await graph.ainvoke(resume('{"action": "accept"}'), thread("t2"))
        assert tool_results(out) == {"c2": "summary: model text"}


# -- stream events and artifacts -----------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ERAS)
async def test_progress_and_log_events_fit_their_schemas(protocol: str) -> None:
    config = {
        "server": demo.build_server(counters=demo.Counters()),
        "protocol": protocol,
        "log_level": "debug",
        "log_events": True,
    }
    async with MCPToolNode({"demo": config}) as node:
        graph = tool_graph(node)
        request = {"messages": [ai(("sleep", {"seconds": 0.1}, "s1"), ("chatty", {"n": 1}, "c1"))]}
        events = [e async for e in graph.astream(request, thread(), stream_mode="custom")]
        state = await graph.aget_state(thread())
    kinds = {e["type"] for e in events}
    assert kinds == {"mcp_progress", "mcp_log", "ui"}, events
    ui = [e for e in events if e["type"] == "ui"]  # the progress bar's generative-UI message
    assert ui and {e["props"]["tool_call_id"] for e in ui} == {"s1"}
    for event in ui:
        check("progress-ui-props", event["props"])
    events = [e for e in events if e["type"] != "ui"]
    for event in events:
        check("stream-event", event)
        check("progress-event" if event["type"] == "mcp_progress" else "log-event", event)
    assert {
        "tool_call_id": "c1",
        "level": "warning",
        "logger": "chatter",
        "data": {"done": 1},
    }.items() <= next(e for e in events if e["type"] == "mcp_log" and e["level"] == "warning").items()
    for message in state.values["messages"]:
        if isinstance(message, ToolMessage):
            check("tool-artifact", message.artifact)


async def test_a_resource_update_in_a_graph_node_fits_its_schema() -> None:
    async with MCPPool({"lib": {"server": library.build_server()}}) as pool:

        async def watch(state: MessagesState) -> dict[str, Any]:
            async with pool.subscribe("lib", "notes://counter") as updates:
                await pool.connection("lib").call_tool("bump")
                await asyncio.wait_for(anext(updates), 10)
            return {}

        builder = StateGraph(MessagesState)
        builder.add_node("watch", watch)
        builder.add_edge(START, "watch")
        events = [e async for e in builder.compile().astream({"messages": []}, stream_mode="custom")]
    assert events == [{"type": "mcp_resource_updated", "server": "lib", "uri": "notes://counter"}]
    check("resource-updated-event", events[0])
    check("stream-event", events[0])


@pytest.mark.parametrize(
    "value",
    ['{"responses": null}', '{"responses": []}', '{"type": "approve", "key": null}', '{"decisions": {}}'],
)
async def test_a_malformed_approval_resume_is_refused_not_taken_for_another_answer(value: str) -> None:
    """What the published schema refuses, the graph refuses too (the client is told), instead of
    asking the question again as if the value answered another one."""
    assert not jsonschema.Draft202012Validator(json_schema("approval-resume")).is_valid(json.loads(value))
    async with MCPToolNode({"shop": {"server": shopfront.build_server()}}, approval="destructive") as node:
        graph = tool_graph(node)
        await graph.ainvoke({"messages": [ai(("delete_item", {"item": "x"}, "c1"))]}, thread())
        with pytest.raises(ValidationError):
            await graph.ainvoke(resume(value), thread())


@pytest.mark.parametrize(
    "value",
    [
        {"decisions": []},
        {"decisions": [{"type": "approve"}, {"type": "reject"}]},
        {"responses": {}},
        {"responses": {"a#00000000": {"type": "approve"}, "b#00000000": {"type": "approve"}}},
    ],
)
def test_the_published_approval_resume_takes_one_decision_only(value: dict[str, Any]) -> None:
    assert not jsonschema.Draft202012Validator(json_schema("approval-resume")).is_valid(value)
