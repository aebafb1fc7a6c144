"""Tool search over lazy servers: a search reveals tools from the kept catalog and starts no
server; the first call to a revealed tool starts its server, and is refused when the server now
lists that tool otherwise than the catalog showed it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from langgraph_mcp import MCPPool, create_mcp_agent
from langgraph_mcp._pool.toolstore import tools_fingerprint
from langgraph_mcp.options import REVEALED_KEY
from tests.chat import ScriptModel
from tests.helpers import thread
from tests.servers import travel

SEARCH = "search_tools"
SERVERS = ("weather", "trips")


def servers(**weather: Any) -> dict[str, Any]:
    return {
        "weather": {"server": travel.build_weather(**weather), "lazy": True},
        "trips": {"server": travel.build_trips(), "lazy": True},
    }


class Watching(ScriptModel):
    """Records, at each model call, which servers of ``pool`` have started."""

    pool: Any = None
    started: list[list[str]] = Field(default_factory=list)

    def _play(self, messages: list[BaseMessage]) -> AIMessage:
        self.started.append([s for s in SERVERS if not self.pool.waiting(s)])
        return super()._play(messages)


async def kept(catalog: Path, **weather: Any) -> None:
    """Start both servers once, so that the catalog holds their tools."""
    async with MCPPool(servers(**weather), tool_catalog=catalog) as pool:
        await pool.start()


def results(messages: list[Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}


async def test_a_search_across_two_lazy_servers_starts_none_and_a_call_starts_its_own(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.json"
    await kept(catalog)
    async with MCPPool(servers(), tool_catalog=catalog) as pool:
        model = Watching(
            pool=pool,
            turns=[
                [(SEARCH, {"query": "weather forecast for Paris"}, "s1")],
                [("get_forecast", {"city": "Paris"}, "c1")],
                "done",
            ],
        )
        agent = create_mcp_agent(model, pool, tool_search=True, checkpointer=InMemorySaver())
        out = await agent.ainvoke({"messages": [("user", "will it rain in Paris?")]}, thread())
    got = results(out["messages"])
    found = got["s1"].artifact["tools"]
    assert {t["server"] for t in found} == {"weather", "trips"}  # both servers' tools revealed
    assert found[0] == {
        "name": "get_forecast",
        "server": "weather",
        "description": travel.FORECAST,
        "arguments": ["city", "days"],
    }
    assert got["c1"].text == 'get_forecast:{"city": "Paris", "days": 3}'
    # Nothing started by the search; the call started the weather server and no other.
    assert model.started == [[], [], ["weather"]]
    assert "get_forecast" in model.seen[1] and "find_hotels" in model.seen[1]  # offered from the catalog
    assert {"weather/get_forecast", "trips/find_hotels"} <= set(out[REVEALED_KEY])


async def test_a_revealed_tool_that_changed_since_the_catalog_is_refused_at_its_first_call(
    tmp_path: Path,
) -> None:
    catalog = tmp_path / "catalog.json"
    await kept(catalog, forecast_text="Forecast (an older wording).")
    async with MCPPool(servers(), tool_catalog=catalog) as pool:
        model = Watching(
            pool=pool,
            turns=[
                [(SEARCH, {"query": "forecast", "limit": 1}, "s1")],
                [("get_forecast", {"city": "Paris"}, "c1")],
                [("get_forecast", {"city": "Lyon"}, "c2")],
                "done",
            ],
        )
        agent = create_mcp_agent(model, pool, tool_search=True, checkpointer=InMemorySaver())
        out = await agent.ainvoke({"messages": [("user", "forecast?")]}, thread())
    got = results(out["messages"])
    assert got["s1"].artifact["tools"][0]["description"] == "Forecast (an older wording)."  # as kept
    assert got["c1"].status == "error"
    assert got["c1"].text.startswith("MCP tool 'get_forecast' of server 'weather' changed since it was kept")
    assert got["c2"].text == 'get_forecast:{"city": "Lyon", "days": 3}'
    assert model.started == [[], [], ["weather"], ["weather"]]
    entry = json.loads(catalog.read_text())["servers"]["weather"]
    assert entry["fingerprint"] == tools_fingerprint(entry["tools"])
    assert next(t for t in entry["tools"] if t["name"] == "get_forecast")["description"] == travel.FORECAST
