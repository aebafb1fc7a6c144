"""MCP tools as LangChain tools: schema, runtime injection, validation, errors, timeouts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.prebuilt import ToolNode, ToolRuntime
from langgraph.prebuilt.tool_node import ToolInvocationError
from mcp.server.mcpserver import MCPServer
from mcp_types import ListToolsResult, PaginatedRequestParams

from langgraph_mcp import MCPPool, MCPTool, MCPToolCallError, load_mcp_tools
from langgraph_mcp._call.adapter import RUNTIME_ARG
from tests.conftest_servers import stdio_params
from tests.helpers import call, runtime_config, server_stats, tool_call, tools_by_name
from tests.servers import demo


@pytest.fixture
async def pool() -> Any:
    async with MCPPool({"demo": {"server": demo.build_server(counters=demo.Counters())}}) as pool:
        yield pool


async def test_model_schema_is_the_mcp_input_schema(pool: MCPPool) -> None:
    tools = await tools_by_name(pool)
    listed = {t.name: t for t in await pool.connection("demo").list_tools()}
    for name in ("add", "nested", "echo_runtime"):
        schema = dict(tools[name].tool_call_schema)  # type: ignore[arg-type]
        assert schema.pop("description") == tools[name].description
        assert schema == listed[name].input_schema
        # What a provider receives (LangChain drops "title" keys when converting any tool).
        params = convert_to_openai_tool(tools[name])["function"]["parameters"]
        assert list(params["properties"]) == list(listed[name].input_schema["properties"])
        assert params.get("required") == listed[name].input_schema.get("required")
    assert tools["add"].description == "Add two integers."


async def test_metadata_keeps_mcp_details(pool: MCPPool) -> None:
    tools = await tools_by_name(pool)
    meta = tools["delete_item"].metadata["mcp"]  # type: ignore[index]
    assert meta["server"] == "demo" and meta["tool"] == "delete_item"
    assert meta["title"] == "Delete an item"
    assert meta["annotations"]["destructiveHint"] is True
    assert meta["annotations"]["idempotentHint"] is False
    assert meta["meta"] == {"example.com/owner": "tests"}
    assert tools["weather"].metadata["mcp"]["output_schema"]["properties"]["city"] == {  # type: ignore[index]
        "title": "City",
        "type": "string",
    }
    weird = tools["weird_tool_v1_x"]
    assert (weird.server, weird.mcp_name) == ("demo", "weird.tool/v1:x")
    assert (await call(weird, {"q": "ok"})).content == "ok"


async def test_argument_named_runtime_reaches_the_server(pool: MCPPool) -> None:
    tool = (await tools_by_name(pool))["echo_runtime"]
    assert (await call(tool, {"runtime": "mine", "x": 2})).content == "runtime=mine x=2"
    node = ToolNode([tool])
    msg = AIMessage("", tool_calls=[tool_call("echo_runtime", {"runtime": "via-node"})])
    out = await node.ainvoke({"messages": [msg]}, runtime_config())
    assert out["messages"][0].content == "runtime=via-node x=0"


async def test_tool_node_injects_the_runtime_and_drops_forgeries(
    pool: MCPPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Any] = []
    original = MCPTool._arun

    async def spy(self: MCPTool, *args: Any, config: RunnableConfig, **kwargs: Any) -> Any:
        seen.append((kwargs["runtime"], dict(kwargs["arguments"])))
        return await original(self, *args, config=config, **kwargs)

    monkeypatch.setattr(MCPTool, "_arun", spy)
    tool = (await tools_by_name(pool))["add"]
    node = ToolNode([tool])
    forged = {"a": 1, "b": 2, RUNTIME_ARG: "FORGED"}
    msg = AIMessage("", tool_calls=[tool_call("add", forged, "call_x")])
    out = await node.ainvoke({"messages": [msg], "extra": "state"}, runtime_config())
    assert out["messages"][0].content == "3"
    runtime, arguments = seen[0]
    assert isinstance(runtime, ToolRuntime)
    assert runtime.tool_call_id == "call_x"
    assert runtime.state["extra"] == "state"
    assert arguments == {"a": 1, "b": 2}


async def test_runtime_stays_out_of_callbacks_and_tracing(pool: MCPPool) -> None:
    class Recorder(AsyncCallbackHandler):
        def __init__(self) -> None:
            self.inputs: list[Any] = []

        async def on_tool_start(self, serialized: dict[str, Any], input_str: str, **kw: Any) -> None:
            self.inputs.append((input_str, kw.get("inputs")))

    tool = (await tools_by_name(pool))["add"]
    recorder = Recorder()
    msg = AIMessage("", tool_calls=[tool_call("add", {"a": 1, "b": 2})])
    await ToolNode([tool]).ainvoke(
        {"messages": [msg], "secret": "s3cret"}, {**runtime_config(), "callbacks": [recorder]}
    )
    input_str, inputs = recorder.inputs[0]
    assert inputs == {"a": 1, "b": 2}
    assert "s3cret" not in input_str and "ToolRuntime" not in input_str


async def test_arguments_named_like_langchain_internals_pass_through() -> None:
    server = MCPServer("odd")

    @server.tool()
    def odd(config: str, callbacks: int, run_manager: bool) -> str:
        return f"{config}|{callbacks}|{run_manager}"

    async with MCPPool({"odd": server}) as pool:
        tool = (await tools_by_name(pool))["odd"]
        args = {"config": "c", "callbacks": 2, "run_manager": True}
        assert (await call(tool, args)).content == "c|2|True"


@pytest.mark.parametrize(
    ("args", "detail"),
    [
        ({"a": 1}, "b: Field required"),
        ({"a": "x", "b": 2}, "a: Input should be a valid integer, unable to parse string as an integer"),
        ({"b": 2, "a": 1.5}, "a: Input should be a valid integer, got a number with a fractional part"),
        ({"a": "3", "b": 2}, "a: Input should be a valid integer"),  # JSON schema is strict: no coercion
        ({"a": [1], "b": 2}, "a: Input should be a valid integer"),
        ({}, "a: Field required\nb: Field required"),
    ],
)
async def test_invalid_arguments_never_reach_the_server(
    pool: MCPPool, args: dict[str, Any], detail: str
) -> None:
    tool = (await tools_by_name(pool))["add"]
    before = await server_stats(pool)
    with pytest.raises(ToolInvocationError) as info:
        await tool.ainvoke(tool_call("add", args))
    assert info.value.message == (
        f"Error invoking tool 'add' with kwargs {args} with error:\n {detail}\n"
        " Please fix the error and try again."
    )
    assert (await server_stats(pool))["calls"] == before["calls"] + 1  # only the stats call


async def test_nested_schema_errors_name_the_path(pool: MCPPool) -> None:
    tool = (await tools_by_name(pool))["nested"]
    bad = {"payload": {"name": "n", "address": {"street": "s"}, "tags": ["ok", 3]}}
    with pytest.raises(ToolInvocationError) as info:
        await tool.ainvoke(tool_call("nested", bad))
    assert "payload.address.city: Field required" in info.value.message
    assert "payload.tags.1: Input should be a valid string" in info.value.message
    good = {"payload": {"name": "n", "address": {"street": "s", "city": "c"}}}
    assert '"city": "c"' in (await call(tool, good)).content


async def test_tool_errors_become_error_messages(pool: MCPPool) -> None:
    tools = await tools_by_name(pool)
    failed = await call(tools["fail"], {"message": "disk full"})
    assert failed.status == "error"
    assert failed.content == "Error executing tool fail: disk full"
    crashed = await call(tools["crash"])
    assert crashed.status == "error"
    assert "Error executing tool crash" in crashed.content
    assert "secret internal detail" not in crashed.content


async def test_direct_invocation_without_a_tool_call(pool: MCPPool) -> None:
    tools = await tools_by_name(pool)
    assert await tools["add"].ainvoke({"a": 2, "b": 2}) == "4"
    with pytest.raises(MCPToolCallError, match="disk full") as info:
        await tools["fail"].ainvoke({"message": "disk full"})
    assert info.value.kind == "tool_error"


async def test_sync_invocation_inside_async_code_runs_on_the_background_loop(pool: MCPPool) -> None:
    # As for a sync wrap_tool_call in an async graph: this thread waits, the call runs elsewhere.
    tool = (await tools_by_name(pool))["add"]
    assert tool.invoke({"a": 1, "b": 2}) == "3"
    assert (await tool.ainvoke({"a": 2, "b": 2})) == "4"


async def test_server_timeout_cancels_and_keeps_the_session(tmp_path: Path) -> None:
    events = tmp_path / "events.txt"
    config = {**stdio_params("demo", env={"DEMO_EVENTS_FILE": str(events)}), "timeout": 0.5}
    async with MCPPool({"demo": config}) as pool:
        tools = await tools_by_name(pool)
        message = await call(tools["sleep"], {"seconds": 5})
        assert message.status == "error"
        assert message.content == (
            "MCP tool 'sleep' on server 'demo' timed out after 0.5s (server 'demo' timeout); "
            "the server was asked to cancel it."
        )
        assert (await call(tools["add"], {"a": 1, "b": 1})).content == "2"
        assert pool.connection("demo").connects == 1
        assert "cancelled sleep 5.0" in events.read_text()


async def test_tool_timeout_overrides_the_server_timeout(pool: MCPPool) -> None:
    tool = (await tools_by_name(pool))["hang"]
    tool.timeout = 0.3
    message = await call(tool)
    assert message.status == "error"
    assert "timed out after 0.3s (the tool's timeout)" in message.content
    with pytest.raises(MCPToolCallError) as info:
        await tool.ainvoke({})
    assert info.value.kind == "timeout"


async def test_unreachable_server_becomes_an_error_message() -> None:
    async with MCPPool({"demo": stdio_params("demo")}) as pool:
        tool = (await tools_by_name(pool))["add"]
        await pool.aclose()
        message = await call(tool, {"a": 1, "b": 2})
        assert message.status == "error"
        assert message.content.startswith("MCP server 'demo': the connection pool is closed")


async def test_tools_are_reused_across_loads(pool: MCPPool) -> None:
    first = await tools_by_name(pool)
    second = await tools_by_name(pool)
    assert all(first[name] is second[name] for name in first)


async def test_bad_tool_message_shape_is_rejected_by_langchain(pool: MCPPool) -> None:
    tool = (await tools_by_name(pool))["add"]
    with pytest.raises(ValueError, match="String tool inputs are not allowed"):
        await tool.ainvoke("1 2")
    assert isinstance(await tool.ainvoke(tool_call("add", {"a": 1, "b": 1})), ToolMessage)


class _ScriptedModel(BaseChatModel):
    """Returns the scripted messages in turn; accepts any tools."""

    script: list[AIMessage]

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.script.pop(0))])

    @property
    def _llm_type(self) -> str:
        return "scripted"


async def test_tools_work_in_create_agent(pool: MCPPool) -> None:
    calls = [tool_call("add", {"a": 2, "b": 5}, "c1"), tool_call("echo_runtime", {"runtime": "r"}, "c2")]
    model = _ScriptedModel(script=[AIMessage("", tool_calls=calls), AIMessage("done")])
    agent = create_agent(model, tools=await load_mcp_tools(pool))
    result = await agent.ainvoke({"messages": [HumanMessage("go")]})
    tool_messages = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.content) for m in tool_messages] == [("c1", "7"), ("c2", "runtime=r x=0")]
    assert result["messages"][-1].content == "done"


async def test_result_breaking_the_output_schema_is_an_error() -> None:
    server = MCPServer("liar")

    @server.tool()
    def shape() -> dict[str, str]:
        return {"result": "not a number"}

    async def list_with_a_stricter_schema(ctx: Any, params: PaginatedRequestParams) -> ListToolsResult:
        (tool,) = await server.list_tools()
        strict = {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}
        return ListToolsResult(tools=[tool.model_copy(update={"output_schema": strict})])

    server._lowlevel_server.add_request_handler(
        "tools/list", PaginatedRequestParams, list_with_a_stricter_schema
    )
    async with MCPPool({"liar": server}) as pool:
        message = await call((await tools_by_name(pool))["shape"])
        assert message.status == "error"
        assert message.content.startswith("MCP server 'liar' returned an invalid result for 'shape'")
        assert "'not a number' is not of type 'integer'" in message.content


@pytest.mark.parametrize(
    "given",
    [{"demo": {"command": "npx"}}, [{"command": "npx"}], "mcp.json"],
    ids=["dict", "list", "path"],
)
async def test_load_mcp_tools_wants_a_pool(given: Any) -> None:
    with pytest.raises(TypeError) as info:
        await load_mcp_tools(given)
    message = str(info.value)
    assert "MCPPool(...)" in message
    assert type(given).__name__ in message


async def test_a_pool_whose_tools_were_loaded_can_be_collected() -> None:
    import gc
    import weakref

    pool = MCPPool({"demo": {"server": demo.build_server(counters=demo.Counters())}})
    tools = await load_mcp_tools(pool)
    assert tools
    await pool.aclose()
    gone = weakref.ref(pool)
    del pool, tools
    gc.collect()
    assert gone() is None  # nothing (no cache of its tools) keeps it, its configs and secrets alive
