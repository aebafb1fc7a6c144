"""A LangGraph deployment's assistants served over MCP: ``python -m langgraph_mcp.serve
--deployment <url>`` in front of a real ``langgraph dev`` server, called by ``MCPToolNode``. The
runs happen on the deployment; their questions still reach the outer graph as interrupts."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_mcp import MCPToolNode
from langgraph_mcp.elicitation import accept, resume_elicitations
from langgraph_mcp.serve import ANSWER_FIELD
from tests.conftest_servers import REPO_ROOT
from tests.forkserver import command
from tests.helpers import ai, thread, tool_graph, tool_results
from tests.langgraph_server import langgraph_dev

pytestmark = [pytest.mark.deploy, pytest.mark.slow]


def test_a_deployments_assistants_are_served_with_their_questions(tmp_path: Path) -> None:
    config = tmp_path / "langgraph.json"
    graphs = {"writer": "tests.servers.served_graphs:writer", "notes": "tests.servers.served_graphs:notes"}
    config.write_text(json.dumps({"dependencies": [str(REPO_ROOT)], "graphs": graphs}))
    with langgraph_dev(tmp_path / "work", config) as deployment:
        asyncio.run(_round_trip(deployment.url))


async def _round_trip(url: str) -> None:
    executable, *argv = command("-m", "langgraph_mcp.serve", "--deployment", url, "--tasks", "never")
    served = {
        "command": executable,
        "args": argv,
        "cwd": str(REPO_ROOT),
        "env": {"PYTHONPATH": str(REPO_ROOT)},
    }
    async with MCPToolNode({"served": served}) as node:
        graph = tool_graph(node, checkpointer=InMemorySaver())
        out = await graph.ainvoke({"messages": [ai(("writer", {"topic": "deployments"}, "c1"))]}, thread())
        [pending] = out["__interrupt__"]
        assert pending.value["requests"][0]["message"] == "Who writes about deployments?"

        def answer(payload: dict[str, Any]) -> dict[str, Any]:
            return {r["key"]: accept({ANSWER_FIELD: "Lin"}) for r in payload["requests"]}

        out = await graph.ainvoke(resume_elicitations(out["__interrupt__"], answer), thread())
        assert '"answer": "Lin writes about deployments"' in tool_results(out)["c1"]
        calls = [("notes", {"note": n, "thread": "talk"}, f"n{n}") for n in ("a", "b")]
        out = await graph.ainvoke({"messages": [ai(calls[0])]}, thread("t2"))
        out = await graph.ainvoke({"messages": [ai(calls[1])]}, thread("t2"))
        assert '"notes": ["a", "b"]' in tool_results(out)["nb"]  # one thread on the deployment
