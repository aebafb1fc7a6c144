"""The command's targets: ``module:name`` or a Python file's path and a name, naming a compiled
graph, a ``StateGraph`` or a function returning one."""

from __future__ import annotations

from pathlib import Path

import pytest

from langgraph_mcp.serve import load_graph
from tests.servers import served_graphs

GRAPH_FILE = """
from typing_extensions import TypedDict
from langgraph.graph import START, StateGraph

class S(TypedDict):
    x: int

builder = StateGraph(S)
builder.add_node("inc", lambda s: {"x": s["x"] + 1})
builder.add_edge(START, "inc")
graph = builder.compile(name="inc")

def make():
    return builder
"""


def test_a_module_target_is_imported() -> None:
    assert load_graph("tests.servers.served_graphs:writer") is served_graphs.writer


@pytest.mark.parametrize("name", ["graph", "builder", "make"])
async def test_a_file_target_names_a_graph_a_builder_or_a_factory(tmp_path: Path, name: str) -> None:
    path = tmp_path / "agent.py"
    path.write_text(GRAPH_FILE)
    graph = load_graph(f"{path}:{name}")
    assert await graph.ainvoke({"x": 1}) == {"x": 2}


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("no_colon", "module:name"),
        ("tests.servers.served_graphs:missing", "has no 'missing'"),
        ("tests.servers.served_graphs:CONFIRM_KEY", "is not a LangGraph graph"),
    ],
)
def test_a_wrong_target_says_what_is_wrong(target: str, words: str) -> None:
    with pytest.raises(SystemExit, match=words):
        load_graph(target)
