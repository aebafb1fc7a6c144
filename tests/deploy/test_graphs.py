"""The deployable graphs in ``graphs/``, run in process on the bundled ``graphs/mcp.json``.

(The same graphs on a real ``langgraph dev`` server: ``tests/deploy/test_langgraph_dev.py``.)
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from graphs import agent, tools
from graphs.scripted import scripted_model
from graphs.shared import CONFIG, pool
from langgraph_mcp.deploy import CONFIG_ENV
from langgraph_mcp.elicitation import accept, resume_elicitations
from tests.langgraph_server import REPO_ROOT

# One event loop for the module: the shared pool serves the loop it first connects on, as it
# does in a server process, and is closed once, at the end, as the server's lifespan does.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(autouse=True, scope="module", loop_scope="module")
async def close_shared_pool() -> AsyncIterator[None]:
    yield
    await pool.aclose()


@pytest.mark.skipif(bool(os.environ.get(CONFIG_ENV)), reason=f"{CONFIG_ENV} chooses another config here")
async def test_the_bundled_config_is_served_by_default() -> None:
    assert CONFIG == REPO_ROOT / "graphs" / "mcp.json"
    assert list(pool.servers) == ["math", "notes", "shop", "weather"]
    assert {c.cwd for c in pool.servers.values()} == {str(REPO_ROOT)}  # "..", relative to the file
    assert not any(c.connected for c in pool.connections.values())  # importing started nothing


async def test_tools_graph_takes_a_list_of_tool_calls_or_an_ai_message() -> None:
    out = await tools.graph.ainvoke(
        {
            "tool_calls": [
                {"name": "add", "args": {"a": 1, "b": 2}},
                {"name": "search_notes", "args": {"query": "milk"}, "id": "s"},
            ]
        }
    )
    results = {m.name: (m.content, m.tool_call_id) for m in out["messages"] if isinstance(m, ToolMessage)}
    assert results["add"][0] == "3.0" and results["add"][1].startswith("call_")
    assert results["search_notes"] == ("groceries", "s")

    message = AIMessage("", tool_calls=[{"name": "multiply", "args": {"a": 6, "b": 7}, "id": "m"}])
    out = await tools.graph.ainvoke({"messages": [message]})
    assert out["messages"][-1].content == "42.0"


@pytest.mark.parametrize(
    ("inputs", "error"),
    [
        ({"messages": [HumanMessage("hi")]}, "the tools graph takes"),
        ({"tool_calls": [{"args": {}}]}, r"tool_calls\[0\] must be an object with a 'name'"),
        ({"tool_calls": [{"name": "add", "args": [1, 2]}]}, r"tool_calls\[0\].args must be an object"),
    ],
)
async def test_tools_graph_says_what_input_it_takes(inputs: dict[str, Any], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        await tools.graph.ainvoke(inputs)


async def test_tools_graph_interrupts_for_a_question_and_resumes() -> None:
    graph = tools.builder.compile(checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "t"}}
    out = await graph.ainvoke(
        {"tool_calls": [{"name": "cancel_order", "args": {"order_id": "A-1001"}}]}, thread
    )
    [question] = out["__interrupt__"]
    assert question.value["tool_name"] == "cancel_order"
    answer = resume_elicitations(
        [question], lambda p: {r["key"]: accept({"ok": True}) for r in p["requests"]}
    )
    out = await graph.ainvoke(answer, thread)
    assert out["messages"][-1].content == "order A-1001 cancelled"


async def test_agent_graph_uses_the_model_from_the_configurable_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    question = {"messages": [HumanMessage('add {"a": 1, "b": 2}\nsearch_notes {"query": "milk"}')]}
    monkeypatch.delenv(agent.MODEL_ENV, raising=False)
    out = await agent.graph.ainvoke(question, {"configurable": {"model": "scripted"}})
    assert out["messages"][-1].content == "add: 3.0\nsearch_notes: groceries"

    monkeypatch.setenv(agent.MODEL_ENV, "scripted")
    out = await agent.graph.ainvoke({"messages": [HumanMessage("nope {}")]})
    assert out["messages"][-1].content.startswith("I have no tool named nope.")
    assert "count_primes" in out["messages"][-1].content


async def test_agent_graph_refuses_a_configurable_model_that_is_not_allowed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(agent.ALLOWED_ENV, "scripted, openai:gpt-4.1")
    question = {"messages": [HumanMessage('add {"a": 1, "b": 2}')]}
    with pytest.raises(
        ValueError, match=f"'anthropic:x' is not allowed: {agent.ALLOWED_ENV} lists openai:gpt-4.1, scripted"
    ):
        await agent.graph.ainvoke(question, {"configurable": {"model": "anthropic:x"}})
    out = await agent.graph.ainvoke(question, {"configurable": {"model": "scripted"}})
    assert out["messages"][-1].content == "add: 3.0"


async def test_agent_graph_without_a_model_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(agent.MODEL_ENV, raising=False)
    with pytest.raises(ValueError, match=f"set the environment variable {agent.MODEL_ENV}"):
        await agent.graph.ainvoke({"messages": [HumanMessage("hi")]})


async def test_scripted_model_calls_only_bound_tools_and_reports_bad_arguments() -> None:
    model = scripted_model().bind_tools([])
    assert "no tool named add" in str(model.invoke([HumanMessage('add {"a": 1}')]).content)

    from langchain_core.tools import tool

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    model = scripted_model().bind_tools([add])
    reply = model.invoke([HumanMessage('add {"a": 1, "b": 2}')])
    assert isinstance(reply, AIMessage)
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [("add", {"a": 1, "b": 2})]
    assert "could not read the arguments" in str(model.invoke([HumanMessage("add {a: 1}")]).content)
    done = model.invoke(
        [HumanMessage("add"), reply, ToolMessage("3", name="add", tool_call_id=reply.tool_calls[0]["id"])]
    )
    assert done.content == "add: 3"
    assert json.loads(json.dumps(reply.tool_calls[0]["args"])) == {"a": 1, "b": 2}
