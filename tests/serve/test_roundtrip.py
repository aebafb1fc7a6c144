"""A graph served by ``python -m langgraph_mcp.serve`` over stdio, consumed by ``MCPToolNode`` in
another graph: the served run's question becomes the outer graph's interrupt, and
``Command(resume=...)`` answers it, in both protocol eras."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_mcp import MCPToolNode
from langgraph_mcp.elicitation import accept, decline, resume_elicitations
from langgraph_mcp.serve import ANSWER_FIELD
from tests.conftest_servers import stdio_params
from tests.helpers import ai, thread, tool_graph, tool_results

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("era", ["auto", "legacy"])
async def test_a_served_question_is_the_outer_graphs_interrupt(era: str) -> None:
    served = {**stdio_params("served_graphs", "--tasks", "never"), "protocol": era}
    async with MCPToolNode({"served": served}) as node:
        graph = tool_graph(node, checkpointer=InMemorySaver())
        out = await graph.ainvoke({"messages": [ai(("writer", {"topic": "math"}, "c1"))]}, thread())
        [pending] = out["__interrupt__"]
        [request] = pending.value["requests"]
        assert request["message"] == "Who writes about math?"
        assert list(request["requested_schema"]["properties"]) == [ANSWER_FIELD]

        def answer(payload: dict[str, Any]) -> dict[str, Any]:
            return {r["key"]: accept({ANSWER_FIELD: "Ada"}) for r in payload["requests"]}

        out = await graph.ainvoke(resume_elicitations(out["__interrupt__"], answer), thread())
        assert "__interrupt__" not in out
        assert '"answer": "Ada writes about math"' in tool_results(out)["c1"]

        # this package's own payload maps to its exact form; a decline reaches the served run
        out = await graph.ainvoke({"messages": [ai(("confirm", {"item": "db"}, "c2"))]}, thread())
        [pending] = out["__interrupt__"]
        [request] = pending.value["requests"]
        assert request["requested_schema"]["properties"] == {"ok": {"type": "boolean"}}
        out = await graph.ainvoke(
            resume_elicitations(out["__interrupt__"], lambda p: {r["key"]: decline() for r in p["requests"]}),
            thread(),
        )
        assert '"outcome": "declined"' in tool_results(out)["c2"]


def _threads(database: Path) -> set[str]:
    with SqliteSaver.from_conn_string(str(database)) as saver:
        return {item.config["configurable"]["thread_id"] for item in saver.list(None)}


async def test_a_question_is_answered_after_the_served_process_restarted(tmp_path: Path) -> None:
    """2026-07-28: the question's round (its sealed ``requestState``) is kept in the outer
    graph's checkpoint; a new server process with the same key and the same SQLite file resumes
    the very run that asked, on its thread, instead of starting another."""
    database = tmp_path / "runs.sqlite"
    args = ("--tasks", "never", "--sqlite", str(database), "--state-key-env", "SERVED_STATE_KEY")
    served = stdio_params("served_graphs", *args, env={"SERVED_STATE_KEY": "a test secret"})
    saver = InMemorySaver()
    async with MCPToolNode({"served": served}) as node:
        graph = tool_graph(node, checkpointer=saver)
        out = await graph.ainvoke({"messages": [ai(("writer", {"topic": "restarts"}, "c1"))]}, thread())
        pending = out["__interrupt__"]
    asked = _threads(database)
    assert len(asked) == 1
    async with MCPToolNode({"served": served}) as node:  # a new server process
        graph = tool_graph(node, checkpointer=saver)
        out = await graph.ainvoke(
            resume_elicitations(
                pending, lambda p: {r["key"]: accept({ANSWER_FIELD: "Kay"}) for r in p["requests"]}
            ),
            thread(),
        )
    assert '"answer": "Kay writes about restarts"' in tool_results(out)["c1"]
    assert _threads(database) == asked  # the run that asked went on; none started over
