"""Sampling with tools: the server runs its tool loop through the client's sampling model, in both
protocol eras, over stdio and HTTP."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.types import Command
from mcp_types import (
    CreateMessageRequestParams,
    ImageContent,
    SamplingMessage,
    TextContent,
    Tool,
    ToolChoice,
    ToolResultContent,
    ToolUseContent,
)
from pydantic import Field

from langgraph_mcp import MCPToolNode
from langgraph_mcp._elicitation.sampling import (
    MAX_SAMPLING_TOOLS,
    MAX_SAMPLING_TOOLS_JSON,
    UnfitSampling,
    check_request,
    run_sampling_model,
)
from langgraph_mcp.testing import ScriptedChatModel
from tests.conftest_servers import serve_in_loop, stdio_params
from tests.helpers import ai, thread, tool_graph
from tests.servers import asker

ERAS = [("stdio", "auto"), ("stdio", "legacy"), ("http", "auto"), ("http", "legacy")]
PROTOCOLS = ["auto", "legacy"]
WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


class ChoiceModel(ScriptedChatModel):
    """A scripted model that records the ``tool_choice`` of each ``bind_tools``."""

    choices: list[str | None] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any) -> Any:
        self.choices.append(tool_choice)
        return super().bind_tools(tools, tool_choice=tool_choice, **kwargs)


@pytest.fixture(params=ERAS, ids=[f"{t}-{p}" for t, p in ERAS])
async def server(request: pytest.FixtureRequest) -> AsyncIterator[dict[str, Any]]:
    transport, protocol = request.param
    if transport == "stdio":
        yield {**stdio_params("asker"), "protocol": protocol}
    else:
        async with serve_in_loop(asker.build_server(counters=asker.Counters())) as url:
            yield {"url": url, "protocol": protocol}


@pytest.fixture(params=PROTOCOLS)
async def http(request: pytest.FixtureRequest) -> AsyncIterator[dict[str, Any]]:
    async with serve_in_loop(asker.build_server(counters=asker.Counters())) as url:
        yield {"url": url, "protocol": request.param}


async def _call(
    config: dict[str, Any] | MCPToolNode, tool: str, args: dict[str, Any], name: str = "t1"
) -> ToolMessage:
    """One call through a graph, on a node of its own (or on ``config`` when it is a node)."""
    if isinstance(config, MCPToolNode):
        out = await tool_graph(config).ainvoke({"messages": [ai((tool, args, "c1"))]}, thread(name))
    else:
        async with MCPToolNode({"asker": config}) as node:
            return await _call(node, tool, args, name)
    (message,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    return message


def _forecast(message: ToolMessage) -> dict[str, Any]:
    assert message.status == "success", message.content
    return dict(json.loads(str(message.content)))


# -- the tool loop ------------------------------------------------------------------------------


async def test_the_server_runs_its_tool_loop_through_the_sampling_model(server: dict[str, Any]) -> None:
    model = ScriptedChatModel([[("weather", {"city": "Paris"}, "call_w1")]])
    message = await _call(
        {**server, "sampling_model": model}, "forecast", {"city": "Paris", "choice": "auto"}
    )
    # What the server received: first the model's tool call, then (after the server ran the
    # tool and sampled again with its result) the model's text.
    received = _forecast(message)
    assert received["first"] == {
        "role": "assistant",
        "content": [{"type": "tool_use", "name": "weather", "id": "call_w1", "input": {"city": "Paris"}}],
        "model": "ScriptedChatModel",
        "stopReason": "toolUse",
    }
    assert received["final"] == {
        "role": "assistant",
        "content": {"type": "text", "text": "weather: sunny, 21 C in Paris"},
        "model": "ScriptedChatModel",
        "stopReason": "endTurn",
    }
    # What the model was given: the server's tool, its question, then the tool loop's messages.
    first, second = model.calls
    assert first.tools == second.tools == {"weather": WEATHER_SCHEMA}
    assert first.messages == [HumanMessage("What is the weather in Paris?")]
    question, called, result = second.messages
    assert question == HumanMessage("What is the weather in Paris?")
    assert isinstance(called, AIMessage)
    assert [(c["name"], c["args"], c["id"]) for c in called.tool_calls] == [
        ("weather", {"city": "Paris"}, "call_w1")
    ]
    assert isinstance(result, ToolMessage)
    assert (result.content, result.tool_call_id, result.name, result.status) == (
        "sunny, 21 C in Paris",
        "call_w1",
        "weather",
        "success",
    )


async def test_the_client_declares_sampling_tools_for_a_model_that_takes_tools(http: dict[str, Any]) -> None:
    with_tools = await _call({**http, "sampling_model": ScriptedChatModel(["x"])}, "sampling_capability", {})
    assert json.loads(str(with_tools.content)) == {"tools": {}}
    # A model without bind_tools: sampling, but not with tools; the server then never asks it.
    plain = {**http, "sampling_model": FakeMessagesListChatModel(responses=[AIMessage("x")])}
    assert json.loads(str((await _call(plain, "sampling_capability", {})).content)) == {}
    refused = await _call(plain, "forecast", {"city": "Oslo", "choice": "auto"})
    assert refused.status == "error" and "sampling.tools" in str(refused.content)


# -- toolChoice ---------------------------------------------------------------------------------


async def test_tool_choice_none_gives_the_model_no_tools(http: dict[str, Any]) -> None:
    model = ScriptedChatModel(["Probably sunny."])
    received = _forecast(
        await _call({**http, "sampling_model": model}, "forecast", {"city": "Rome", "choice": "none"})
    )
    assert received["first"]["content"] == {"type": "text", "text": "Probably sunny."}
    assert received["first"]["stopReason"] == "endTurn" and received["final"] == received["first"]
    assert [call.tools for call in model.calls] == [{}]


async def test_tool_choice_required_makes_the_model_call_a_tool(http: dict[str, Any]) -> None:
    model = ChoiceModel([[("weather", {"city": "Rome"})]])
    received = _forecast(
        await _call({**http, "sampling_model": model}, "forecast", {"city": "Rome", "choice": "required"})
    )
    assert received["first"]["stopReason"] == "toolUse"
    (use,) = received["first"]["content"]
    assert use["type"] == "tool_use" and use["id"]  # the model gave no id: one is made
    assert received["final"]["content"]["text"] == "weather: sunny, 21 C in Rome"
    assert model.choices == ["any", None]  # required, then the server's second request (auto)


@pytest.mark.parametrize(
    ("choice", "model", "why"),
    [
        (
            "required",
            ScriptedChatModel(["No tool needed."]),
            "called no tool, but the request's toolChoice is 'required'",
        ),
        (
            "none",
            ScriptedChatModel([[("weather", {"city": "Rome"})]], unbound="call"),
            "called a tool, but the request's toolChoice is 'none'",
        ),
    ],
    ids=["required", "none"],
)
async def test_an_answer_that_breaks_the_tool_choice_is_refused(
    http: dict[str, Any], choice: str, model: ScriptedChatModel, why: str
) -> None:
    message = await _call({**http, "sampling_model": model}, "forecast", {"city": "Rome", "choice": choice})
    assert message.status == "error" and why in str(message.content)


# -- malformed requests ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "why"),
    [
        ("schema", "the inputSchema of tool 'weather' has a $ref that does not resolve"),
        ("name", "tool name 'no spaces allowed' is not 1 to 128 letters"),
        ("tool_use_from_user", "message 0 has tool_use content, but it is not the assistant's"),
    ],
)
async def test_a_malformed_sampling_request_is_refused_clearly(
    http: dict[str, Any], kind: str, why: str
) -> None:
    model = ScriptedChatModel(["never asked"])
    async with MCPToolNode({"asker": {**http, "sampling_model": model}}) as node:
        message = await _call(node, "sample_badly", {"kind": kind})
        assert message.status == "error" and why in str(message.content)
        assert model.calls == []
        # The connection lives on: its next call samples as before.
        received = _forecast(await _call(node, "forecast", {"city": "Oslo", "choice": "none"}, "t2"))
    assert received["final"]["content"]["text"] == "never asked"


async def test_answered_in_code_on_a_live_connection_too() -> None:
    """2025-11-25 with no person ever needed: each request is answered on the spot."""
    model = ScriptedChatModel([[("weather", {"city": "Kyiv"})]])
    async with serve_in_loop(asker.build_server(counters=asker.Counters())) as url:
        config = {"url": url, "protocol": "legacy", "elicitation": "decline", "sampling_model": model}
        async with MCPToolNode({"asker": config}) as node:
            received = _forecast(await _call(node, "forecast", {"city": "Kyiv", "choice": "required"}))
            refused = await _call(node, "sample_badly", {"kind": "name"}, "t2")
    assert received["first"]["stopReason"] == "toolUse"
    assert received["final"]["content"]["text"] == "weather: sunny, 21 C in Kyiv"
    assert refused.status == "error" and "sampling request refused: tool name 'no spaces allowed'" in str(
        refused.content
    )


# -- a person's approval ------------------------------------------------------------------------


async def test_a_person_approves_each_request_of_the_tool_loop(http: dict[str, Any]) -> None:
    model = ScriptedChatModel([[("weather", {"city": "Lima"}, "call_w1")]])
    config = {**http, "sampling_model": model, "sampling_approval": True}
    async with MCPToolNode({"asker": config}) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke(
            {"messages": [ai(("forecast", {"city": "Lima", "choice": "auto"}, "c1"))]}, thread()
        )
        payload = out["__interrupt__"][0].value
        assert payload["type"] == "mcp_sampling" and payload["tools"] == ["weather"]
        assert payload["request"]["tools"][0]["inputSchema"] == WEATHER_SCHEMA
        assert model.calls == []  # nothing is sampled before the person approves
        out = await graph.ainvoke(Command(resume={"action": "accept"}), thread())
        payload = out["__interrupt__"][0].value  # the server's second request, with the tool's result
        assert payload["tools"] == ["weather"]
        last = payload["request"]["messages"][-1]["content"]
        assert last == [
            {
                "type": "tool_result",
                "toolUseId": "call_w1",
                "content": [{"type": "text", "text": "sunny, 21 C in Lima"}],
            }
        ]
        out = await graph.ainvoke(Command(resume={"action": "accept"}), thread())
    (message,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert _forecast(message)["final"]["content"]["text"] == "weather: sunny, 21 C in Lima"
    assert len(model.calls) == 2


# -- checks and conversions without a server --------------------------------------------------------


def _tool(name: str, schema: dict[str, Any] | None = None, description: str = "") -> Tool:
    return Tool(name=name, description=description, input_schema=schema or WEATHER_SCHEMA)


def _params(messages: list[SamplingMessage], tools: list[Tool] | None = None, mode: Any = None) -> Any:
    choice = ToolChoice(mode=mode) if mode else None
    return CreateMessageRequestParams(messages=messages, max_tokens=10, tools=tools, tool_choice=choice)


ASK = SamplingMessage(role="user", content=TextContent(type="text", text="Weather?"))
USE = ToolUseContent(type="tool_use", name="weather", id="u1", input={"city": "Oslo"})
RESULT = ToolResultContent(tool_use_id="u1", content=[TextContent(type="text", text="sunny")])


@pytest.mark.parametrize(
    ("params", "why"),
    [
        (
            _params([ASK], [_tool(f"t{i}") for i in range(MAX_SAMPLING_TOOLS + 1)]),
            "65 tools, over the limit of 64",
        ),
        (
            _params([ASK], [_tool("big", description="x" * MAX_SAMPLING_TOOLS_JSON)]),
            "characters of JSON, the limit",
        ),
        (_params([ASK], [_tool("weather"), _tool("weather")]), "offers tool 'weather' twice"),
        (
            _params([ASK], [_tool("w", {"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}})]),
            "does not resolve",
        ),
        (_params([ASK], [], "required"), "toolChoice is 'required', but it offers no tools"),
        (
            _params([SamplingMessage(role="assistant", content=[RESULT])], [_tool("weather")]),
            "not the user's",
        ),
        (
            _params([SamplingMessage(role="user", content=[RESULT])], [_tool("weather")]),
            "which no earlier tool_use has",
        ),
        (
            _params([SamplingMessage(role="assistant", content=[USE, USE]), ASK], [_tool("weather")]),
            "repeats the tool_use id 'u1'",
        ),
    ],
    ids=["count", "size", "twice", "schema", "required", "result-role", "result-id", "use-id"],
)
def test_a_request_is_checked_before_anyone_sees_it(params: Any, why: str) -> None:
    with pytest.raises(UnfitSampling, match=re.escape(why)):
        check_request(params, tools_declared=True)


def test_tools_are_refused_when_the_client_did_not_declare_them() -> None:
    with pytest.raises(UnfitSampling, match=r"did not declare sampling\.tools"):
        check_request(_params([ASK], mode="auto"), tools_declared=False)
    check_request(_params([ASK]), tools_declared=False)  # a request without tools is not affected


async def test_tool_results_of_every_kind_reach_the_model() -> None:
    image = ImageContent(type="image", data="aGk=", mime_type="image/png")
    results = [
        ToolResultContent(tool_use_id="u1", content=[TextContent(type="text", text="boom")], is_error=True),
        ToolResultContent(tool_use_id="u2", structured_content={"temp": 21}),
        ToolResultContent(tool_use_id="u3", content=[image]),
    ]
    uses = [USE, USE.model_copy(update={"id": "u2"}), USE.model_copy(update={"id": "u3"})]
    params = _params(
        [ASK, SamplingMessage(role="assistant", content=uses), SamplingMessage(role="user", content=results)],
        [_tool("weather")],
    )
    check_request(params, tools_declared=True)
    model = ScriptedChatModel()  # answers with "<tool name>: <text>" per tool message
    answer = await run_sampling_model(model, params)
    assert answer.model_dump(mode="json", by_alias=True, exclude_none=True) == {
        "role": "assistant",
        "content": {"type": "text", "text": 'weather: boom\nweather: {"temp": 21}\nweather: '},
        "model": "ScriptedChatModel",
        "stopReason": "endTurn",
    }
    _, called, *tool_messages = model.calls[0].messages
    assert [c["id"] for c in called.tool_calls] == ["u1", "u2", "u3"]
    assert [(m.tool_call_id, m.status, m.content) for m in tool_messages] == [
        ("u1", "error", "boom"),
        ("u2", "success", '{"temp": 21}'),
        ("u3", "success", [{"type": "image", "base64": "aGk=", "mime_type": "image/png"}]),
    ]
