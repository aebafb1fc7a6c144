"""Lazy servers: with a tool catalog, a server configured ``lazy: true`` is not started until one
of its tools is called (a search reveals its tools from the catalog); its tools are offered from
the catalog meanwhile. The
catalog follows the servers' tools (fingerprint), and a catalog that cannot be trusted is not
used (the server is started)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from langgraph_mcp import MCPConfigError, MCPPool, create_mcp_agent, load_connections
from langgraph_mcp._pool.toolstore import (
    CATALOG_NAMESPACE,
    MAX_CATALOG_BYTES,
    MAX_CATALOG_SERVERS,
    MAX_VALUE_CHARS,
    dump_tools,
    source_of,
    tools_fingerprint,
)
from langgraph_mcp.options import REVEALED_KEY, ToolSearch
from langgraph_mcp.schemas import json_schema
from tests.chat import ScriptModel
from tests.conftest_servers import stdio_params
from tests.helpers import run_script, thread
from tests.tiers import STDIO_ERAS

RUNNER = Path(__file__).parent.parent / "search_runner.py"
SEARCH = "search_tools"


class Counting(ScriptModel):
    """Records, at each model call, how many shop servers have started so far (their pid files)."""

    pid_dir: str = ""
    started: list[int] = Field(default_factory=list)

    def _play(self, messages: list[BaseMessage]) -> AIMessage:
        self.started.append(started(Path(self.pid_dir)))
        return super()._play(messages)


def started(pids: Path) -> int:
    """Shop servers started so far: each writes a file named after its pid when it starts."""
    return len(list(pids.iterdir()))


def lazy_servers(pids: Path, *, protocol: str = "auto", tools: int = 60) -> dict[str, Any]:
    return {
        "shop": {
            **stdio_params("shopfront", env={"DEMO_PID_DIR": str(pids)}),
            "protocol": protocol,
            "lazy": True,
        },
        "many": {**stdio_params("many", "--tools", str(tools)), "lazy": True},
    }


async def keep(servers: dict[str, Any], catalog: Path) -> None:
    """Start every server once, so that the catalog holds their tools."""
    async with MCPPool(servers, tool_catalog=catalog) as pool:
        await pool.start()


def results(messages: list[Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}


@pytest.fixture
def pids(tmp_path: Path) -> Path:
    path = tmp_path / "pids"
    path.mkdir()
    return path


def clear(pids: Path) -> None:
    for pid in pids.iterdir():
        pid.unlink()


# -- not started until called --------------------------------------------------------------------


@pytest.mark.parametrize("protocol", STDIO_ERAS)
async def test_a_lazy_server_starts_only_when_a_tool_a_search_revealed_is_called(
    tmp_path: Path, pids: Path, protocol: str
) -> None:
    catalog = tmp_path / "catalog.json"
    servers = lazy_servers(pids, protocol=protocol)
    await keep(servers, catalog)  # no entry yet: started once, and written to the catalog
    assert started(pids) == 1
    clear(pids)
    model = Counting(
        pid_dir=str(pids),
        turns=[
            [(SEARCH, {"query": "tool number 7", "limit": 1}, "s1")],
            [(SEARCH, {"query": "delete an item from the shop", "limit": 1}, "s2")],
            [("delete_item", {"item": "pear"}, "c1")],
            "done",
        ],
    )
    agent = create_mcp_agent(
        model, servers, tool_search=ToolSearch(catalog=catalog), checkpointer=InMemorySaver()
    )
    try:
        out = await agent.ainvoke({"messages": [("user", "remove the pear")]}, thread())
    finally:
        await agent.mcp.aclose()
    got = results(out["messages"])
    assert got["s1"].artifact["tools"][0]["name"] == "tool_7"
    assert got["s2"].artifact["tools"][0]["name"] == "delete_item"
    assert got["c1"].text == "deleted pear"
    assert out[REVEALED_KEY] == ["many/tool_7", "shop/delete_item"]
    # No shop process before its tool was called (the search revealed it from the catalog).
    assert model.started == [0, 0, 0, 1]
    assert [sorted(s) for s in model.seen] == [
        [SEARCH],
        [SEARCH, "tool_7"],
        ["delete_item", SEARCH, "tool_7"],
        ["delete_item", SEARCH, "tool_7"],
    ]


def test_a_sync_agent_reveals_and_calls_a_lazy_tool(tmp_path: Path, pids: Path) -> None:
    catalog = tmp_path / "catalog.json"
    servers = lazy_servers(pids)
    asyncio.run(keep(servers, catalog))
    clear(pids)
    model = Counting(
        pid_dir=str(pids),
        turns=[[(SEARCH, {"query": "items of the shop", "limit": 1}, "s1")], [("list_items", {}, "c1")]],
    )
    agent = create_mcp_agent(model, servers, tool_search=ToolSearch(catalog=catalog))
    try:
        out = agent.invoke({"messages": [("user", "what is for sale?")]}, thread())
    finally:
        agent.mcp.close()
    got = results(out["messages"])
    assert got["s1"].artifact["tools"][0]["name"] == "list_items"
    assert got["c1"].text == "applepearplum"
    assert model.started == [0, 0, 1]


async def test_a_call_starts_a_lazy_server_without_a_search(tmp_path: Path, pids: Path) -> None:
    catalog = tmp_path / "catalog.json"
    servers = lazy_servers(pids)
    await keep(servers, catalog)
    clear(pids)
    model = Counting(pid_dir=str(pids), turns=[[("list_items", {}, "c1")]])
    async with MCPPool(servers, tool_catalog=catalog) as pool:
        agent = create_mcp_agent(model, pool, checkpointer=InMemorySaver())
        out = await agent.ainvoke({"messages": [("user", "what is for sale?")]}, thread())
        assert not pool.waiting("shop") and pool.waiting("many")  # many's tools were never called
    assert results(out["messages"])["c1"].text == "applepearplum"
    assert model.started == [0, 1]
    assert len(model.seen[0]) == 60 + 10  # every tool of both servers offered, from the catalog


# -- the catalog follows the servers' tools ----------------------------------------------------


def rewrite(catalog: Path, server: str, change: Any) -> None:
    """Rewrite ``server``'s entry as an older listing would have left it (a valid fingerprint)."""
    document = json.loads(catalog.read_text())
    entry = document["servers"][server]
    entry["tools"] = change(entry["tools"])
    entry["fingerprint"] = tools_fingerprint(entry["tools"])
    catalog.write_text(json.dumps(document))


def gone_and_missing(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The listing before tool_59 was added, with a tool the server has dropped since."""
    old = {**tools[3], "name": "tool_retired", "description": "Retired gadget: frobnicates widgets."}
    return [*tools[:59], old]


async def test_a_server_whose_tools_changed_is_indexed_again(tmp_path: Path, pids: Path) -> None:
    catalog = tmp_path / "catalog.json"
    servers = lazy_servers(pids)
    await keep(servers, catalog)
    rewrite(catalog, "many", gone_and_missing)
    model = ScriptModel(
        turns=[
            [(SEARCH, {"query": "frobnicate widgets", "limit": 1}, "s1")],
            [("tool_retired", {"n_3": 1}, "c0")],
            [(SEARCH, {"query": "tool number 59", "limit": 1}, "s2")],
            [("tool_59", {"n_59": 1}, "c1")],
        ]
    )
    agent = create_mcp_agent(
        model, servers, tool_search=ToolSearch(catalog=catalog), checkpointer=InMemorySaver()
    )
    try:
        out = await agent.ainvoke({"messages": [("user", "go")]}, thread())
    finally:
        await agent.mcp.aclose()
    got = results(out["messages"])
    # Found in the catalog (the search starts nothing); gone once its call started the server.
    assert got["s1"].artifact["tools"][0]["name"] == "tool_retired"
    assert got["c0"].status == "error" and "is no longer offered by server 'many'" in got["c0"].text
    assert got["s2"].artifact["tools"][0]["name"] == "tool_59"  # listed since: indexed again
    assert got["c1"].text.startswith("tool_59:")
    assert out[REVEALED_KEY] == ["many/tool_retired", "many/tool_59"]
    assert SEARCH in model.seen[3] and "tool_retired" not in model.seen[3]  # never offered again
    entry = json.loads(catalog.read_text())["servers"]["many"]
    assert [t["name"] for t in entry["tools"]] == [f"tool_{i}" for i in range(60)]
    assert entry["fingerprint"] == tools_fingerprint(entry["tools"])


async def test_a_revealed_tool_that_vanished_is_dropped_and_never_called(tmp_path: Path, pids: Path) -> None:
    catalog = tmp_path / "catalog.json"
    servers = lazy_servers(pids)
    await keep(servers, catalog)
    rewrite(catalog, "many", gone_and_missing)
    # Revealed in an earlier run (the state carries it); the server has dropped the tool since.
    model = ScriptModel(turns=[[("tool_retired", {"n_3": 1}, "c1")], "ok"])
    agent = create_mcp_agent(
        model, servers, tool_search=ToolSearch(catalog=catalog), checkpointer=InMemorySaver()
    )
    try:
        out = await agent.ainvoke(
            {"messages": [("user", "go")], REVEALED_KEY: ["many/tool_retired"]}, thread()
        )
    finally:
        await agent.mcp.aclose()
    message = results(out["messages"])["c1"]
    assert message.status == "error"
    assert message.text == (
        "MCP tool 'tool_retired' is no longer offered by server 'many' (its tools changed since they "
        "were kept in the tool catalog): it was not called and is no longer offered. Try another tool."
    )
    assert sorted(model.seen[0]) == [SEARCH, "tool_retired"]  # offered from the catalog
    assert sorted(model.seen[1]) == [SEARCH]  # never again


async def test_a_revealed_tool_whose_definition_changed_is_not_called(tmp_path: Path, pids: Path) -> None:
    catalog = tmp_path / "catalog.json"
    servers = lazy_servers(pids)
    await keep(servers, catalog)

    def older(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**t, "description": "An older description."} if t["name"] == "tool_6" else t for t in tools]

    rewrite(catalog, "many", older)
    model = ScriptModel(turns=[[("tool_6", {"n_6": 1}, "c1")], [("tool_6", {"n_6": 2}, "c2")]])
    agent = create_mcp_agent(
        model, servers, tool_search=ToolSearch(catalog=catalog), checkpointer=InMemorySaver()
    )
    try:
        out = await agent.ainvoke({"messages": [("user", "go")], REVEALED_KEY: ["many/tool_6"]}, thread())
    finally:
        await agent.mcp.aclose()
    got = results(out["messages"])
    assert got["c1"].status == "error"
    assert got["c1"].text.startswith("MCP tool 'tool_6' of server 'many' changed since it was kept")
    assert got["c2"].text == 'tool_6:{"n_6": 2, "ratio_6": 0.5}'  # the tool as the server lists it now


# -- a lazy server that cannot start -----------------------------------------------------------


def handmade(catalog: Path, servers: dict[str, Any], tools: dict[str, list[dict[str, Any]]]) -> None:
    """A catalog written for ``servers`` holding ``tools`` per server."""
    configs = load_connections(servers)
    document = {
        "version": 1,
        "servers": {
            name: {
                "fingerprint": tools_fingerprint(listed),
                "source": source_of(configs[name]),
                "era": "legacy",
                "listed_at": time.time(),
                "tools": listed,
            }
            for name, listed in tools.items()
        },
    }
    catalog.write_text(json.dumps(document))


PING = [{"name": "ping", "description": "Ping the silent server.", "inputSchema": {"type": "object"}}]


@pytest.mark.usefixtures("short_graces")  # its server ignores the end of its input
async def test_a_lazy_server_that_cannot_start_fails_that_call_within_connect_timeout(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.json"
    servers = {"silent": {**stdio_params("broken", "--mode", "garbage"), "lazy": True, "connect_timeout": 1}}
    handmade(catalog, servers, {"silent": PING})
    model = ScriptModel(turns=[[(SEARCH, {"query": "ping", "limit": 1}, "s1")], [("ping", {}, "c1")]])
    agent = create_mcp_agent(
        model, servers, tool_search=ToolSearch(catalog=catalog), checkpointer=InMemorySaver()
    )
    begun = time.monotonic()
    try:
        out = await agent.ainvoke({"messages": [("user", "ping it")]}, thread())
    finally:
        await agent.mcp.aclose()
    took = time.monotonic() - begun
    got = results(out["messages"])
    assert got["s1"].artifact["tools"][0]["name"] == "ping"  # from the catalog: nothing started yet
    assert got["c1"].status == "error"
    assert "silent" in got["c1"].text and "connect_timeout" in got["c1"].text
    assert took < 5  # one start of at most connect_timeout (1 s), by the call


@pytest.mark.usefixtures("short_graces")  # its server ignores the end of its input
def test_a_call_to_a_lazy_tool_whose_server_cannot_start_fails_within_connect_timeout(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.json"
    servers = {"silent": {**stdio_params("broken", "--mode", "garbage"), "lazy": True, "connect_timeout": 1}}
    handmade(catalog, servers, {"silent": PING})
    model = ScriptModel(turns=[[("ping", {}, "c1")], "ok"])
    agent = create_mcp_agent(
        model, servers, tool_search=ToolSearch(catalog=catalog), checkpointer=InMemorySaver()
    )
    begun = time.monotonic()
    try:  # revealed in an earlier run: the call is the first use of the server
        out = agent.invoke({"messages": [("user", "ping it")], REVEALED_KEY: ["silent/ping"]}, thread())
    finally:
        agent.mcp.close()
    took = time.monotonic() - begun
    message = results(out["messages"])["c1"]
    assert message.status == "error"
    assert message.text.startswith("MCP server 'silent': did not connect within 1s (connect_timeout)")
    assert 1 <= took < 5


# -- a catalog that cannot be trusted is not used ------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"{not json", id="not-json"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, id="deeply-nested"),
        pytest.param(b'{"version": 2, "servers": {}}', id="other-version"),
        pytest.param(b"\xff\xfe garbage", id="not-utf8"),
        pytest.param("fifo", id="fifo"),
        pytest.param("bad-fingerprint", id="bad-fingerprint"),
        pytest.param("other-source", id="other-source"),
        pytest.param("too-many-tools", id="too-many-tools"),
        pytest.param("not-an-entry", id="not-an-entry"),
        pytest.param("tool-too-large", id="tool-too-large"),
        pytest.param("too-many-servers", id="too-many-servers"),
        pytest.param("too-large", id="too-large"),
    ],
)
async def test_a_catalog_that_cannot_be_trusted_starts_the_server(
    tmp_path: Path, pids: Path, content: bytes | str
) -> None:
    catalog = tmp_path / "catalog.json"
    servers = {"shop": lazy_servers(pids)["shop"]}
    listed = [{"name": "fake", "description": "Not the shop's.", "inputSchema": {"type": "object"}}]
    if content == "fifo":
        os.mkfifo(catalog)  # opening it to read would wait for a writer forever
    elif isinstance(content, bytes):
        catalog.write_bytes(content)
    else:
        handmade(catalog, servers, {"shop": listed})
        document = json.loads(catalog.read_text())
        entry = document["servers"]["shop"]
        if content == "bad-fingerprint":
            entry["fingerprint"] = "0" * 64
        elif content == "other-source":
            entry["source"] = "1" * 64
        elif content == "too-many-tools":
            entry["tools"] = [{**listed[0], "name": f"t{i}"} for i in range(1001)]
            entry["fingerprint"] = tools_fingerprint(entry["tools"])
        elif content == "tool-too-large":  # valid, but one tool is over MAX_VALUE_CHARS of JSON
            entry["tools"] = [{**listed[0], "inputSchema": {"type": "object", "x": ["y"] * MAX_VALUE_CHARS}}]
            entry["fingerprint"] = tools_fingerprint(entry["tools"])
        elif content == "too-many-servers":
            document["servers"].update({f"s{i}": entry for i in range(MAX_CATALOG_SERVERS)})
        elif content == "too-large":
            document["padding"] = "x" * MAX_CATALOG_BYTES
        else:
            entry["tools"] = "everything"
        catalog.write_text(json.dumps(document))
    async with MCPPool(servers, tool_catalog=catalog) as pool:
        tools = await pool.list_all_tools()
        assert "delete_item" in [t.name for t in tools["shop"]]  # listed by the server itself
        assert not pool.waiting("shop")
    assert started(pids) == 1


async def test_a_catalog_in_the_store_and_its_published_schema(tmp_path: Path, pids: Path) -> None:
    from langgraph.store.memory import InMemoryStore

    store = InMemoryStore()
    servers = lazy_servers(pids)
    await keep(servers, store)  # type: ignore[arg-type]
    item = store.get(CATALOG_NAMESPACE, "shop")
    assert item is not None and item.value["fingerprint"] == tools_fingerprint(item.value["tools"])
    clear(pids)
    async with MCPPool(servers, tool_catalog=store) as pool:
        names = {t.name for tools in (await pool.list_all_tools()).values() for t in tools}
        assert {"delete_item", "tool_0"} <= names
        assert pool.waiting("shop") and started(pids) == 0
        assert "delete_item" in {t.name for t in await pool.live_tools("shop")}
    assert started(pids) == 1
    # The file format validates against its published JSON Schema.
    catalog = tmp_path / "catalog.json"
    await keep(servers, catalog)
    jsonschema.validate(json.loads(catalog.read_text()), json_schema("tool-catalog"))
    assert catalog.stat().st_mode & 0o777 == 0o600
    assert dump_tools([]) == []


def test_a_catalog_is_a_path_or_a_store() -> None:
    with pytest.raises(MCPConfigError):
        MCPPool({"shop": {"command": "never-started"}}, tool_catalog=42)
    pool = MCPPool({"shop": {"command": "never-started"}})
    with pytest.raises(MCPConfigError):
        create_mcp_agent(ScriptModel(turns=[]), pool, tool_search=ToolSearch(catalog="x.json"))


# -- across processes --------------------------------------------------------------------------


@pytest.mark.slow  # two OS processes, each importing the package
def test_reveals_of_lazy_servers_survive_an_approval_answered_in_a_new_process(
    tmp_path: Path, pids: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = tmp_path / "catalog.json"
    asyncio.run(keep(lazy_servers(pids), catalog))
    clear(pids)
    monkeypatch.setenv("SEARCH_LAZY", json.dumps({"catalog": str(catalog), "pids": str(pids)}))
    db = str(tmp_path / "agent.sqlite")
    first = run_script(RUNNER, "async", "start", db)
    [asked] = first["interrupts"]
    assert asked["tool_call_id"] == "c1" and first["revealed"] == ["shop/delete_item"]
    assert first["started"] == [0, 0]  # the search started nothing; the call (then asking) did
    second = run_script(RUNNER, "sync", "resume", db, json.dumps({first["ids"]["c1"]: {"type": "approve"}}))
    assert second["interrupts"] == [] and second["results"]["c1"] == ["success", "deleted x"]
    assert second["revealed"] == ["shop/delete_item"]
    assert second["seen"] == [["delete_item", SEARCH]]
    assert started(pids) == 2  # the resumed call started it again in the new process


# -- a large catalog never holds the event loop --------------------------------------------------


class Ticker:
    """A task that wakes every 5 ms and keeps the longest time the event loop made it wait, in CPU
    time of this process: what the process itself did meanwhile (a parse holding the GIL, on the
    loop or in a worker thread), not the time a loaded machine left it unscheduled."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        while True:
            before = time.process_time()
            await asyncio.sleep(0.005)
            self.longest = max(self.longest, time.process_time() - before)

    async def __aenter__(self) -> Ticker:
        self._task = asyncio.create_task(self._tick())
        await asyncio.sleep(0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


def small_tools(server: int, count: int) -> list[dict[str, Any]]:
    """Many small objects: what makes one ``json.loads`` of a catalog slow."""
    return [
        {
            "name": f"s{server}_t{i}",
            "description": "d",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
            },
            "annotations": {"readOnlyHint": True},
        }
        for i in range(count)
    ]


@pytest.mark.slow  # seconds of CPU: a catalog of thousands of tools
async def test_a_large_valid_catalog_is_read_and_rewritten_without_holding_the_event_loop(
    tmp_path: Path, pids: Path
) -> None:
    catalog = tmp_path / "catalog.json"
    servers = lazy_servers(pids)
    await keep(servers, catalog)
    clear(pids)
    # Another 60,000 small tools, kept for servers no longer configured (valid entries all), and
    # an older listing of "many", so that starting it rewrites the file.
    document = json.loads(catalog.read_text())
    for s in range(60):
        listed = small_tools(s, 1000)
        document["servers"][f"gone_{s}"] = {
            **document["servers"]["shop"],
            "fingerprint": tools_fingerprint(listed),
            "tools": listed,
        }
    entry = document["servers"]["many"]
    entry["tools"] = entry["tools"][:59]
    entry["fingerprint"] = tools_fingerprint(entry["tools"])
    catalog.write_text(json.dumps(document))
    size = catalog.stat().st_size
    assert 8_000_000 < size < MAX_CATALOG_BYTES
    async with Ticker() as ticker, MCPPool(servers, tool_catalog=catalog) as pool:
        listings = await pool.list_all_tools()
        assert (len(listings["shop"]), len(listings["many"])) == (10, 59)  # from the catalog
        assert pool.waiting("shop") and pool.waiting("many") and started(pids) == 0
        read = ticker.longest
        assert len(await pool.live_tools("many")) == 60  # started: its new listing is written
    # The other servers' entries are kept as they were; "many"'s is the new listing.
    written = json.loads(catalog.read_text())
    assert written["servers"]["gone_7"] == document["servers"]["gone_7"]
    assert len(written["servers"]) == 62 and len(written["servers"]["many"]["tools"]) == 60
    assert read < 0.25, f"the event loop was held {read:.3f}s while a {size:,}-byte catalog was read"
    assert ticker.longest < 0.25, f"the event loop was held {ticker.longest:.3f}s (rewrite included)"


async def test_a_rewrite_keeps_an_entry_another_process_wrote_since_the_read(
    tmp_path: Path, pids: Path
) -> None:
    catalog = tmp_path / "catalog.json"
    servers = lazy_servers(pids)
    await keep(servers, catalog)
    rewrite(catalog, "many", gone_and_missing)
    async with MCPPool(servers, tool_catalog=catalog) as pool:
        await pool.list_all_tools()  # read, from the file as it is now
        assert pool.waiting("many")
        document = json.loads(catalog.read_text())  # another pool's process adds an entry
        document["servers"]["other"] = document["servers"]["shop"]
        catalog.write_text(json.dumps(document, indent=1))
        assert len(await pool.live_tools("many")) == 60  # started: its new listing is written
    written = json.loads(catalog.read_text())
    assert sorted(written["servers"]) == ["many", "other", "shop"]
    assert written["servers"]["other"] == document["servers"]["shop"]
    assert [t["name"] for t in written["servers"]["many"]["tools"]] == [f"tool_{i}" for i in range(60)]
