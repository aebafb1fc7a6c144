"""MCP Apps views calling back into agents built with ``create_mcp_agent`` or ``MCPMiddleware``
(``view_calls=True``): a run started for a view's call is answered under the agent's MCP
policies and never reaches the model; any other run reaches the model."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langgraph_mcp import MCPMiddleware, MCPPool, create_mcp_agent
from langgraph_mcp.apps import VIEW_CALLS_KEY, app_routes, view_call_config, view_call_input
from langgraph_mcp.options import ToolOptions
from langgraph_mcp.testing import ScriptedChatModel
from tests.apps.test_apps import apps_config  # noqa: F401  (the fixture: both transports, both eras)
from tests.conftest_servers import stdio_params


def _agent(pool: MCPPool, **options: Any) -> Any:
    return create_mcp_agent(
        ScriptedChatModel(unbound="reply"), pool, checkpointer=InMemorySaver(), view_calls=True, **options
    )


async def _view_call(
    graph: Any, thread: str, server: str, tool: str, args: dict[str, Any]
) -> ToolMessage | None:
    """The view call's answer, ``None`` while it waits for a person."""
    config = {"configurable": {"thread_id": thread}}
    payload = view_call_input(server, tool, args)
    call_id = payload[VIEW_CALLS_KEY][-1].tool_calls[0]["id"]
    await graph.ainvoke(payload, view_call_config(payload, config))
    values = (await graph.aget_state(config)).values
    answers = [
        m for m in values.get(VIEW_CALLS_KEY, []) if isinstance(m, ToolMessage) and m.tool_call_id == call_id
    ]
    return answers[0] if answers else None


async def test_an_agents_view_calls_its_servers_tools_under_the_agents_policies(
    apps_config: dict[str, Any],  # noqa: F811
) -> None:
    servers = {"apps": {**apps_config, "apps": True}, "other": stdio_params("other")}
    async with MCPPool(servers) as pool:
        graph = _agent(
            pool,
            tool_options={"apps/show_chart": ToolOptions(hidden={"account": lambda runtime: "acct-42"})},
            tool_filter=lambda tool, context: tool.mcp_name != "fail_chart",
        )
        config = {"configurable": {"thread_id": "t1"}}

        answer = await _view_call(graph, "t1", "apps", "refresh_chart", {"city": "Oslo"})
        assert answer is not None and answer.status == "success"
        assert answer.artifact["structured_content"] == {"city": "Oslo", "temps": [11, 14, 9]}
        state = (await graph.aget_state(config)).values
        assert state.get("messages", []) == []  # the model never ran, nor saw the call

        # Hidden arguments are the agent's: a view's value is dropped, the graph's is sent.
        answer = await _view_call(graph, "t1", "apps", "show_chart", {"city": "Rome", "account": "mallory"})
        assert answer is not None and answer.artifact["structured_content"]["account"] == "acct-42"
        assert len((await graph.aget_state(config)).values[VIEW_CALLS_KEY]) == 2  # bounded

        # The run's tool_filter, the model-only tools and other servers' tools are refused.
        answer = await _view_call(graph, "t2", "apps", "fail_chart", {"city": "Oslo"})
        assert (
            answer is not None
            and answer.status == "error"
            and "fail_chart is not a valid tool" in answer.text
        )
        answer = await _view_call(graph, "t2", "apps", "plain_echo", {"text": "hi"})
        assert (
            answer is not None
            and answer.status == "error"
            and "plain_echo is not a valid tool" in answer.text
        )
        answer = await _view_call(graph, "t3", "apps", "echo", {"text": "hi"})
        assert answer is not None and answer.status == "error"
        assert "not a tool of the view's MCP server" in answer.text

        # A user's message still reaches the model, which is never offered the views' tools.
        out = await graph.ainvoke({"messages": [HumanMessage('refresh_chart {"city": "X"}')]}, config)
        said = out["messages"][-1].text
        assert "no tool named refresh_chart" in said and "refresh_chart" not in said.split("Tools:")[1]


async def test_an_agents_view_call_asks_for_approval_and_a_users_run_drops_it(
    apps_config: dict[str, Any],  # noqa: F811
) -> None:
    async with MCPPool({"apps": {**apps_config, "apps": True}}) as pool:
        graph = _agent(pool, approval=["apps/refresh_chart"])
        config = {"configurable": {"thread_id": "t1"}}

        assert await _view_call(graph, "t1", "apps", "refresh_chart", {"city": "Oslo"}) is None
        state = await graph.aget_state(config)
        [interrupt] = state.interrupts
        assert interrupt.value["type"] == "tool_approval" and interrupt.value["args"] == {"city": "Oslo"}
        assert interrupt.value["tool_call_id"].startswith("mcp-app-call:")

        # Answered like any approval: edited, then run.
        edit = {"type": "edit", "edited_action": {"name": "refresh_chart", "args": {"city": "Bergen"}}}
        await graph.ainvoke(Command(resume=edit), config)
        values = (await graph.aget_state(config)).values
        [answer] = [m for m in values[VIEW_CALLS_KEY] if isinstance(m, ToolMessage)]
        assert answer.status == "success" and answer.artifact["structured_content"]["city"] == "Bergen"
        assert values.get("messages", []) == []

        # Waiting again, then the user writes: the model answers, the waiting call is dropped.
        assert await _view_call(graph, "t1", "apps", "refresh_chart", {"city": "Oslo"}) is None
        out = await graph.ainvoke({"messages": [HumanMessage('plain_echo {"text": "hi"}')]}, config)
        assert out["messages"][-1].text == "plain_echo: hi"
        state = await graph.aget_state(config)
        assert state.interrupts == () and state.next == ()
        assert not [m for m in state.values[VIEW_CALLS_KEY] if isinstance(m, ToolMessage)]

        # A resume reaching the idle thread later (a stale "continue", an approval sent twice)
        # revives nothing: the user's next message is the model's, the dropped call stays dropped.
        for stale in ({"type": "approve"}, {"decisions": [{"type": "approve"}]}):
            await graph.ainvoke(Command(resume=stale), config)
            out = await graph.ainvoke({"messages": [HumanMessage('plain_echo {"text": "again"}')]}, config)
            assert out["messages"][-1].text == "plain_echo: again"
            state = await graph.aget_state(config)
            assert state.interrupts == () and state.next == ()
            assert not [m for m in state.values[VIEW_CALLS_KEY] if isinstance(m, ToolMessage)]


async def test_a_create_agent_with_the_middleware_takes_views_calls_and_its_routes() -> None:
    async with MCPPool({"apps": {**stdio_params("apps"), "apps": True}}) as pool:
        mcp = MCPMiddleware(pool, view_calls=True)
        model = ScriptedChatModel(unbound="reply")
        graph = create_agent(model, middleware=[mcp], checkpointer=InMemorySaver())
        answer = await _view_call(graph, "t1", "apps", "refresh_chart", {"city": "Oslo"})
        assert answer is not None and answer.status == "success"

        # A synchronous run refuses a view's call (views' calls come through the route).
        payload = view_call_input("apps", "refresh_chart", {"city": "Oslo"})
        config = view_call_config(payload, {"configurable": {"thread_id": "sync"}})
        out = await asyncio.to_thread(graph.invoke, payload, config)
        (answer,) = [m for m in out[VIEW_CALLS_KEY] if isinstance(m, ToolMessage)]
        assert answer.status == "error" and "only in an asynchronous run" in answer.text
        assert out.get("messages", []) == []

        # A view's model context reaches the model as data, before the conversation.
        context = {"server": "apps", "tool_call_id": "c1", "structuredContent": {"city": "Oslo"}}
        said = {"messages": [HumanMessage("hello")], "mcp_app_context": context}
        await graph.ainvoke(said, {"configurable": {"thread_id": "t2"}})
        first, second = model.calls[-1].messages
        assert first.type == "human" and '"view_server": "apps"' in first.text and '"Oslo"' in first.text
        assert second.text == "hello"

        assert {r.path for r in app_routes(mcp)} == {
            "/mcp-apps/threads/{thread_id}/call",
            "/mcp-apps/threads/{thread_id}/calls/{call_id}",
        }
        with pytest.raises(ValueError, match="view_calls=True"):
            app_routes(MCPMiddleware(pool))
        # With batched approvals too, the middleware has both hooks.
        both = MCPMiddleware(pool, view_calls=True, approval_mode="batched")
        nodes = create_agent(ScriptedChatModel(), middleware=[both]).get_graph().nodes
        assert {"MCPMiddleware.before_agent", "MCPMiddleware.after_model"} <= set(nodes)
        # Without view_calls an agent keeps its shape: no hook node, no views' keys.
        plain = create_agent(ScriptedChatModel(), middleware=[MCPMiddleware(pool)])
        assert not any(n.endswith(".before_agent") for n in plain.get_graph().nodes)
        assert VIEW_CALLS_KEY not in plain.get_input_jsonschema()["properties"]
