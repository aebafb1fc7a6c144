"""Interoperability with servers built on the ``mcp`` 1.x SDK (its ``FastMCP``), as most Python
MCP servers in use are: ``tests/interop/mcp1_server.py`` on the newest 1.x (``latest``) and on
1.10.0 (``old``, the oldest 1.x with elicitation), pinned by ``tests/interop/mcp1_latest`` and
``tests/interop/mcp1_old``, over stdio and loopback streamable HTTP.

The tools ask the 2025-11-25 way (``ctx.elicit``: a live ``elicitation/create`` during the call).
Over stdio such a question carries nothing that ties it to its call, so parallel calls that ask
at the same moment are sent again one at a time; the client must then never send a
``notifications/cancelled`` that these servers cannot take (before 1.12.3 any cancellation of a
running call ends the server; later ones end when it crosses the call's result).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from langgraph_mcp import MCPToolNode
from langgraph_mcp.elicitation import accept, decline, resume_elicitations
from tests.conftest_servers import wiretapped, written
from tests.helpers import (
    ai,
    answer_rounds,
    call,
    run_phase,
    text_of,
    thread,
    tool_graph,
    tool_results,
    tools_by_name,
)
from tests.interop.servers import Servers

# One worker runs the module (tests/conftest.py, ONE_WORKER): its HTTP servers start once.
pytestmark = [pytest.mark.interop]

SDK = {"latest": "1.30.0", "old": "1.10.0"}
"""The ``mcp`` version each environment pins (``tests/interop/mcp1_*/pyproject.toml``)."""
NEGOTIATED = {"latest": "2025-11-25", "old": "2025-06-18"}
"""The protocol version each negotiates (1.10 knows nothing newer than 2025-06-18)."""
CASES = [(version, transport) for version in SDK for transport in ("stdio", "http")]
CASE_IDS = [f"{version}-{transport}" for version, transport in CASES]
CITIES = {"c1": "Oslo", "c2": "Rome", "c3": "Paris"}
DATES = {
    "Oslo": {"start": "2027-06-01", "nights": 2},
    "Rome": {"start": "2027-07-01", "nights": 3},
    "Paris": {"start": "2027-08-01", "nights": 4},
}
BOOKED = {
    "c1": "booked Oslo from 2027-06-01 for 2 nights",
    "c2": "booked Rome from 2027-07-01 for 3 nights",
    "c3": "booked Paris from 2027-08-01 for 4 nights",
}


def _answer(payload: dict[str, Any]) -> dict[str, Any]:
    """Dates for the city asked about, and yes to a booking."""
    responses = {}
    for request in payload["requests"]:
        city = request["message"].removeprefix("Which dates for ").removesuffix("?")
        responses[request["key"]] = accept(DATES.get(city, {"ok": True}))
    return responses


@pytest.mark.parametrize(("version", "transport"), CASES, ids=CASE_IDS)
async def test_calls_and_progress(servers: Servers, version: str, transport: str) -> None:
    async with MCPToolNode({"m": servers.mcp1(version, transport)}) as node:
        tools = await tools_by_name(node.pool)
        assert node.pool.connection("m").protocol_version == NEGOTIATED[version]
        assert {"add", "count", "book", "version"} <= set(tools)
        assert text_of(await call(tools["version"])) == SDK[version]
        assert text_of(await call(tools["add"], {"a": 2, "b": 40})) == "42"

        graph = tool_graph(node)
        events: list[Any] = []
        out: dict[str, Any] = {}
        request = {"messages": [ai(("count", {"steps": 3}, "c1"))]}
        async for mode, chunk in graph.astream(request, thread(), stream_mode=["custom", "values"]):
            if mode == "custom" and chunk.get("type") == "mcp_progress":
                events.append(chunk)
            elif mode == "values":
                out = chunk
    assert [(e["progress"], e["total"], e["message"]) for e in events] == [
        (1, 3, "step 1 of 3"),
        (2, 3, "step 2 of 3"),
        (3, 3, "step 3 of 3"),
    ]
    assert {(e["server"], e["tool_name"], e["tool_call_id"]) for e in events} == {("m", "count", "c1")}
    assert tool_results(out) == {"c1": "counted to 3"}


@pytest.mark.parametrize(("version", "transport"), CASES, ids=CASE_IDS)
async def test_two_questions_are_two_interrupts(servers: Servers, version: str, transport: str) -> None:
    async with MCPToolNode({"m": servers.mcp1(version, transport)}) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("book", {"city": "Oslo"}, "c1"))]}, thread())
        (pending,) = out["__interrupt__"]
        (request,) = pending.value["requests"]
        assert (pending.value["server"], pending.value["tool_call_id"]) == ("m", "c1")
        assert request["message"] == "Which dates for Oslo?"
        assert request["requested_schema"]["required"] == ["start"]
        # ``nights`` is left out: the schema's default (1) fills it before the server sees it.
        dates = {request["key"]: accept({"start": "2027-06-01"})}
        out = await graph.ainvoke(resume_elicitations([pending], lambda _: dates), thread())
        (pending,) = out["__interrupt__"]
        (request,) = pending.value["requests"]
        assert request["message"] == "Book 1 nights from 2027-06-01 in Oslo?"
        out = await graph.ainvoke(
            resume_elicitations([pending], lambda p: {request["key"]: accept({"ok": True})}), thread()
        )
        assert tool_results(out) == {"c1": "booked Oslo from 2027-06-01 for 1 nights"}

        out = await graph.ainvoke({"messages": [ai(("book", {"city": "Rome"}, "c2"))]}, thread("no"))
        (pending,) = out["__interrupt__"]
        out = await graph.ainvoke(
            resume_elicitations([pending], lambda p: {r["key"]: decline() for r in p["requests"]}),
            thread("no"),
        )
    assert tool_results(out) == {"c2": "no dates for Rome (decline)"}


@pytest.mark.parametrize(("version", "transport"), CASES, ids=CASE_IDS)
async def test_parallel_calls_each_asking_two_questions(
    servers: Servers, tmp_path: Path, version: str, transport: str
) -> None:
    """The reported failure: three calls at once, two questions each, interrupt policy. Over
    stdio their first questions come at the same moment and cannot be tied to their calls: the
    calls are sent again one at a time, and the server lives through it."""
    wire = tmp_path / "wire.log"
    config = servers.mcp1(version, transport)
    if transport == "stdio":
        config = wiretapped(config, wire)
    async with MCPToolNode({"m": config}) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke(
            {"messages": [ai(*(("book", {"city": c}, i) for i, c in CITIES.items()))]}, thread()
        )
        out, asked = await answer_rounds(graph, out, _answer, thread())
        assert asked == [
            [
                ("c1", "Which dates for Oslo?"),
                ("c2", "Which dates for Rome?"),
                ("c3", "Which dates for Paris?"),
            ],
            [
                ("c1", "Book 2 nights from 2027-06-01 in Oslo?"),
                ("c2", "Book 3 nights from 2027-07-01 in Rome?"),
                ("c3", "Book 4 nights from 2027-08-01 in Paris?"),
            ],
        ]
        assert tool_results(out) == BOOKED
        # Still the session the calls started on: the server never went away.
        assert node.pool.connection("m").connects == 1
        assert text_of(await call((await tools_by_name(node.pool))["add"], {"a": 1, "b": 2})) == "3"
    assert [m for m in written(wire) if m.get("method") == "notifications/cancelled"] == []


@pytest.mark.slow  # two OS processes each (the parallel test above covers the rest)
@pytest.mark.parametrize(
    ("version", "transport"), [("old", "stdio"), ("latest", "http")], ids=["old-stdio", "latest-http"]
)
async def test_parallel_questions_resumed_in_new_processes(
    servers: Servers, tmp_path: Path, version: str, transport: str
) -> None:
    """The calls start here, and each answer is given in a new OS process (``tests/graph_runner.py``,
    over stdio with a new server process too): the held calls are gone, so the calls are sent
    again, the questions answered before are answered from the checkpoint, the next ones asked."""
    db, log = str(tmp_path / "state.db"), str(tmp_path / "calls.log")
    entry = servers.mcp1(version, transport)
    calls = [("book", {"city": city}, call_id) for call_id, city in CITIES.items()]
    async with (
        AsyncSqliteSaver.from_conn_string(db) as saver,
        MCPToolNode({"foreign": entry}) as node,
    ):
        graph = tool_graph(node, checkpointer=saver)
        started = await graph.ainvoke({"messages": [ai(*calls)]}, {"configurable": {"thread_id": "durable"}})
    asked = [
        sorted((i.value["tool_call_id"], i.value["requests"][0]["message"]) for i in started["__interrupt__"])
    ]
    out = run_phase("foreign_parallel", "answer", db, log, json.dumps(entry))
    for _ in range(3):
        if not out["interrupts"]:
            break
        asked.append(sorted((c, m[0]) for c, m in out["interrupts"]))
        out = run_phase("foreign_parallel", "answer", db, log, json.dumps(entry))
    assert asked == [
        [("c1", "Which dates for Oslo?"), ("c2", "Which dates for Rome?"), ("c3", "Which dates for Paris?")],
        [
            ("c1", "Book 2 nights from 2027-06-01 in Oslo?"),
            ("c2", "Book 3 nights from 2027-07-01 in Rome?"),
            ("c3", "Book 4 nights from 2027-08-01 in Paris?"),
        ],
    ]
    assert out["results"] == BOOKED


@pytest.mark.parametrize(
    "version",
    [
        "latest",
        pytest.param(
            "old",
            marks=pytest.mark.xfail(
                strict=True,
                reason="mcp < 1.12.3 ends on any cancellation of a running call, and a timed-out "
                "call is still cancelled (notifications/cancelled): the next call is lost",
            ),
        ),
    ],
)
async def test_a_timed_out_call_is_cancelled_and_the_server_goes_on(servers: Servers, version: str) -> None:
    config = servers.mcp1(version, "stdio", tool_timeouts={"sleep": 0.3})
    async with MCPToolNode({"m": config}) as node:
        tools = await tools_by_name(node.pool)
        late = await call(tools["sleep"], {"seconds": 5})
        assert late.status == "error" and "timed out after 0.3s" in text_of(late)
        after = await call(tools["add"], {"a": 1, "b": 2})
        assert (after.status, text_of(after)) == ("success", "3")
        assert node.pool.connection("m").connects == 1
