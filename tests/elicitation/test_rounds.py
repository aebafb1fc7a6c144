"""2026-07-28 ``InputRequiredResult`` rounds: polling, back-off, and replays from the checkpoint."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langgraph.types import Command

from langgraph_mcp import MCPPool, MCPToolNode
from langgraph_mcp.elicitation import accept
from tests.clock import run_dilated
from tests.conftest_servers import serve_in_loop, stdio_params
from tests.helpers import ai, call, thread, tool_graph, tool_results, tools_by_name
from tests.servers import fickle


def test_state_only_rounds_back_off_and_are_not_capped() -> None:
    """A server that answers "not yet, ask again with this state" many times is polled with the
    SDK driver's back-off (50 ms doubling to 250 ms) for as long as the call's timeout allows."""

    async def main() -> list[float]:
        state = fickle.FickleState()
        async with (
            serve_in_loop(fickle.build_server(state=state)) as url,
            MCPPool({"fickle": {"url": url, "connect_timeout": 600}}) as pool,
        ):
            tools = await tools_by_name(pool)
            message = await call(tools["poll"], {"n": 40})
            assert (message.status, message.content) == ("success", "polled 40")
        return state.poll_times

    times = run_dilated(main, factor=20)
    assert len(times) == 41
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert gaps[0] >= 0.045 and gaps[1] >= 0.09, gaps[:3]
    assert min(gaps[3:]) >= 0.2, gaps  # capped at 250 ms, never resent at once


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_replayed_round_does_not_call_the_sampling_model_again(transport: str) -> None:
    model = FakeMessagesListChatModel(
        responses=[AIMessage("draft one"), AIMessage("draft two"), AIMessage("draft three")]
    )

    async def run(config: dict[str, Any]) -> None:
        async with MCPToolNode({"fickle": {**config, "sampling_model": model}}) as node:
            graph = tool_graph(node)
            out = await graph.ainvoke(
                {"messages": [ai(("sample_then_confirm", {"topic": "x"}, "c1"))]}, thread()
            )
            (pending,) = out["__interrupt__"]
            assert [r["message"] for r in pending.value["requests"]] == ["Publish 'draft one'?"]
            yes = {r["key"]: accept({"ok": True}) for r in pending.value["requests"]}
            out = await graph.ainvoke(Command(resume={pending.id: {"responses": yes}}), thread())
            assert tool_results(out) == {"c1": "published draft one"}
            assert model.i == 1  # sampled once: the replayed round reused its stored answer

    if transport == "stdio":
        await run(stdio_params("fickle"))
    else:
        async with serve_in_loop(fickle.build_server(state=fickle.FickleState())) as url:
            await run({"url": url})
