"""``max_chars`` / ``overflow``: how much of an output the model sees, and where the rest goes;
binary data routed to the artifact never reaches the model's text."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.memory import InMemoryStore

from langgraph_mcp import MCPConfigError, MCPPool, MCPToolNode, create_mcp_agent
from langgraph_mcp._call.output import cut_text
from tests.chat import ScriptModel
from tests.conftest_servers import stdio_params
from tests.helpers import ai, call, thread, tools_by_name
from tests.servers import demo
from tests.servers.demo import PNG_1X1_B64

TEXT = "".join(f"{i:05d}," for i in range(2000))  # 12,000 characters, every position distinct


def in_process(**config: Any) -> dict[str, Any]:
    return {"demo": {"server": demo.build_server(counters=demo.Counters()), **config}}


def graph_with_store(node: MCPToolNode) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("tools", node)
    builder.add_edge(START, "tools")
    return builder.compile(checkpointer=InMemorySaver(), store=InMemoryStore())


def test_cut_text_keeps_other_blocks_and_says_where_the_cut_falls() -> None:
    image = {"type": "image", "base64": "AAAA", "mime_type": "image/png"}
    content = [{"type": "text", "text": "a" * 60}, image, {"type": "text", "text": "b" * 60}]
    cut, full, shown = cut_text(content, 100)
    assert cut == [{"type": "text", "text": "a" * 60}, image, {"type": "text", "text": "b" * 40}]
    assert full == "a" * 60 + "\n" + "b" * 60
    assert full[:shown] == "a" * 60 + "\n" + "b" * 40
    assert cut_text("short", 100) == ("short", None, 5)


async def test_truncate_cuts_the_text_with_a_marker() -> None:
    async with MCPPool(in_process(output_handling={"max_chars": 1000})) as pool:
        tools = await tools_by_name(pool)
        message = await call(tools["echo"], {"text": TEXT})
        assert message.status == "success"
        assert message.content == TEXT[:1000] + "\n[output truncated: 1,000 of 12,000 characters shown]"
        assert "full_text" not in message.artifact
        short = await call(tools["echo"], {"text": "hello"})
        assert short.content == "hello"


async def test_an_error_text_is_cut_too() -> None:
    async with MCPPool(in_process(output_handling={"max_chars": 500})) as pool:
        tools = await tools_by_name(pool)
        message = await call(tools["fail"], {"message": TEXT})
        assert message.status == "error"
        assert re.fullmatch(
            r"Error executing tool fail: 00000,.*\n\[output truncated: 500 of 12,027 characters shown\]",
            message.content,
            re.DOTALL,
        )
        assert len(message.content) < 600


async def test_artifact_overflow_keeps_the_full_text_for_the_application() -> None:
    config = in_process(output_handling={"max_chars": 1000, "overflow": "artifact"})
    async with MCPPool(config) as pool:
        tools = await tools_by_name(pool)
        message = await call(tools["echo"], {"text": TEXT})
        note = (
            "[output truncated: 1,000 of 12,000 characters shown; "
            "the full output is kept for the application]"
        )
        assert message.content == f"{TEXT[:1000]}\n{note}"
        assert message.artifact["full_text"] == TEXT


async def test_per_tool_settings_override_the_server() -> None:
    config = in_process(output_handling={"max_chars": 5000}, tool_output={"echo": {"max_chars": 100}})
    async with MCPPool(config) as pool:
        tools = await tools_by_name(pool)
        echoed = await call(tools["echo"], {"text": TEXT})
        assert echoed.content.startswith(TEXT[:100] + "\n[output truncated: 100 of")
        runtime = await call(tools["echo_runtime"], {"runtime": TEXT[:4000]})
        assert "truncated" not in runtime.content


async def test_store_overflow_lets_the_model_read_on_in_the_same_thread() -> None:
    config = {
        "demo": {
            **stdio_params("demo"),
            "output_handling": {"max_chars": 5000, "overflow": "store"},
        }
    }
    async with MCPToolNode(config) as node:
        assert "read_tool_output" in {t.name for t in await node.get_tools()}
        graph = graph_with_store(node)
        out = await graph.ainvoke({"messages": [ai(("echo", {"text": TEXT}, "c1"))]}, thread())
        first = out["messages"][-1]
        assert first.content == (
            TEXT[:5000] + "\n[output truncated: 5,000 of 12,000 characters shown; read more with "
            "read_tool_output(handle='c1', offset=5000)]"
        )
        assert "full_text" not in first.artifact  # the checkpoint does not hold it twice
        pieces = [TEXT[:5000]]
        offset = 5000
        for n in range(2, 5):
            out = await graph.ainvoke(
                {"messages": [ai(("read_tool_output", {"handle": "c1", "offset": offset}, f"r{n}"))]},
                thread(),
            )
            text = out["messages"][-1].content
            piece, _, note = text.rpartition("\n")
            pieces.append(piece)
            if note.startswith("[end of output"):
                assert note == f"[end of output: characters {offset:,} to 12,000 of 12,000]"
                break
            offset += len(piece)
            assert note.endswith(f"read_tool_output(handle='c1', offset={offset})]")
        assert "".join(pieces) == TEXT
        # Another conversation cannot read this one's output.
        other = await graph.ainvoke(
            {"messages": [ai(("read_tool_output", {"handle": "c1", "offset": 0}, "x"))]}, thread("other")
        )
        assert other["messages"][-1].content == "Error: no stored tool output 'c1' in this conversation."


async def test_store_overflow_without_a_store_keeps_the_text_in_the_artifact(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = in_process(output_handling={"max_chars": 1000, "overflow": "store"})
    async with MCPPool(config) as pool:
        tools = await tools_by_name(pool)
        message = await call(tools["echo"], {"text": TEXT})
        assert message.artifact["full_text"] == TEXT
        assert "kept for the application" in message.content
    assert "overflow 'store' needs a graph with a store" in caplog.text


async def test_binary_routed_to_the_artifact_never_reaches_the_model_text() -> None:
    """The image goes to the artifact; the structured content, which repeats its data raw and as a
    data URI, becomes the model's text with the data replaced."""
    config = in_process(output_handling={"image": "artifact"})
    async with MCPPool(config) as pool:
        tools = await tools_by_name(pool)
        message = await call(tools["photo_report"])
        assert isinstance(message, ToolMessage) and message.status == "success"
        text = json.dumps(message.content)
        assert PNG_1X1_B64 not in text
        assert PNG_1X1_B64[:16] not in text
        assert message.artifact["content"][0]["base64"] == PNG_1X1_B64
        assert message.artifact["structured_content"]["photo"] == PNG_1X1_B64  # the application keeps it
        assert json.loads(message.content[0]["text"]) == {
            "photo": "[binary data: in the artifact]",
            "preview": {"uri": "[binary data: in the artifact]", "pixels": 1},
        }


def test_output_limits_are_validated() -> None:
    with pytest.raises(MCPConfigError, match=r"'demo'.*output_handling\.max_chars"):
        MCPPool({"demo": {"command": "x", "output_handling": {"max_chars": 10}}})
    with pytest.raises(MCPConfigError, match=r"'demo'.*tool_output\.echo\.overflow"):
        MCPPool({"demo": {"command": "x", "tool_output": {"echo": {"overflow": "nowhere"}}}})


async def test_an_agent_reads_a_stored_output_with_the_reader_tool() -> None:
    """``create_mcp_agent`` with a store: the middleware offers ``read_tool_output``, and the model
    reads the rest of a cut output with it."""
    config = {"demo": {**stdio_params("demo"), "output_handling": {"max_chars": 8000, "overflow": "store"}}}
    model = ScriptModel(
        turns=[
            [("echo", {"text": TEXT}, "c1")],
            [("read_tool_output", {"handle": "c1", "offset": 8000}, "r1")],
        ]
    )
    async with MCPPool(config) as pool:
        agent = create_mcp_agent(model, pool, checkpointer=InMemorySaver(), store=InMemoryStore())
        out = await agent.ainvoke({"messages": [HumanMessage("go")]}, thread())
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [m.name for m in results] == ["echo", "read_tool_output"]
    assert results[0].content.startswith(TEXT[:8000] + "\n[output truncated: 8,000 of 12,000")
    assert results[1].content == TEXT[8000:] + "\n[end of output: characters 8,000 to 12,000 of 12,000]"
    assert "read_tool_output" in model.seen[0]


async def test_two_cut_outputs_of_one_turn_are_kept_and_read_apart() -> None:
    """Two calls in one model turn, both cut and stored: each handle reads its own output."""
    other = TEXT[::-1]
    config = {"demo": {**stdio_params("demo"), "output_handling": {"max_chars": 5000, "overflow": "store"}}}
    async with MCPToolNode(config) as node:
        graph = graph_with_store(node)
        out = await graph.ainvoke(
            {"messages": [ai(("echo", {"text": TEXT}, "c1"), ("echo", {"text": other}, "c2"))]}, thread()
        )
        cut = {m.tool_call_id: m.content for m in out["messages"] if isinstance(m, ToolMessage)}
        assert cut["c1"].startswith(TEXT[:5000]) and cut["c2"].startswith(other[:5000])
        out = await graph.ainvoke(
            {
                "messages": [
                    ai(
                        ("read_tool_output", {"handle": "c1", "offset": 5000}, "r1"),
                        ("read_tool_output", {"handle": "c2", "offset": 5000}, "r2"),
                    )
                ]
            },
            thread(),
        )
        read = {m.tool_call_id: m.content for m in out["messages"] if isinstance(m, ToolMessage)}
        assert read["r1"].startswith(TEXT[5000:10000]) and read["r2"].startswith(other[5000:10000])


# -- the thread a stored output belongs to -----------------------------------------------------


def _reads(graph: Any, config: Any, handle: str, offset: int, call_id: str = "r1") -> Any:
    return graph.ainvoke(
        {"messages": [ai(("read_tool_output", {"handle": handle, "offset": offset}, call_id))]}, config
    )


@pytest.mark.parametrize("store_kind", ["memory", "sqlite"])
async def test_any_thread_id_keeps_and_reads_its_own_outputs(store_kind: str, tmp_path: Any) -> None:
    """A thread id with dots (an e-mail address), slashes or nothing store-friendly works, and two
    thread ids that a lossy encoding would merge keep their outputs apart."""
    from langgraph.store.sqlite.aio import AsyncSqliteStore

    config = in_process(output_handling={"max_chars": 5000, "overflow": "store"})
    other = TEXT[::-1]
    async with MCPToolNode(config) as node:
        builder = StateGraph(MessagesState)
        builder.add_node("tools", node)
        builder.add_edge(START, "tools")
        async with AsyncSqliteStore.from_conn_string(str(tmp_path / "store.db")) as sqlite_store:
            if store_kind == "sqlite":
                await sqlite_store.setup()
            store = sqlite_store if store_kind == "sqlite" else InMemoryStore()
            graph = builder.compile(checkpointer=InMemorySaver(), store=store)
            threads = {"alice@example.com": TEXT, "alice@example_com": other, "a/b.c d": TEXT[:7000]}
            for name, text in threads.items():
                out = await graph.ainvoke({"messages": [ai(("echo", {"text": text}, "c1"))]}, thread(name))
                assert out["messages"][-1].content.endswith("read_tool_output(handle='c1', offset=5000)]")
            for name, text in threads.items():
                read = (await _reads(graph, thread(name), "c1", 5000))["messages"][-1]
                assert read.status == "success"
                assert read.content.startswith(text[5000:10000]), name
            stranger = (await _reads(graph, thread("alice"), "c1", 0))["messages"][-1]
            assert stranger.status == "error"
            assert stranger.content == "Error: no stored tool output 'c1' in this conversation."


async def test_without_a_thread_id_nothing_fails_the_run(caplog: pytest.LogCaptureFixture) -> None:
    """No ``thread_id`` (a graph with a store but no checkpointer): the cut output is kept in the
    artifact, and reading is an error message for the model, not an exception out of the node."""
    config = in_process(output_handling={"max_chars": 5000, "overflow": "store"})
    async with MCPToolNode(config) as node:
        builder = StateGraph(MessagesState)
        builder.add_node("tools", node)
        builder.add_edge(START, "tools")
        graph = builder.compile(store=InMemoryStore())
        out = await graph.ainvoke({"messages": [ai(("echo", {"text": TEXT}, "c1"))]})
        cut = out["messages"][-1]
        assert cut.status == "success" and cut.artifact["full_text"] == TEXT
        assert "kept for the application" in cut.content
        assert "no thread_id" in caplog.text
        read = (await _reads(graph, None, "c1", 5000))["messages"][-1]
    assert read.status == "error"
    assert read.content == (
        "Error: this run has no thread_id, so it has no stored tool outputs to read "
        "(they are kept per conversation)."
    )


async def test_outputs_stored_by_an_earlier_version_are_still_read() -> None:
    """Before thread ids were encoded, outputs were kept under the raw thread id; a conversation
    that was cut short across the upgrade still reads them."""
    config = in_process(output_handling={"max_chars": 5000, "overflow": "store"})
    store = InMemoryStore()
    stored = {"text": TEXT, "server": "demo", "tool": "echo", "chunk": 5000}
    await store.aput(("langgraph_mcp", "outputs", "t1"), "c1", stored)
    async with MCPToolNode(config) as node:
        graph = graph_with_store(node).builder.compile(checkpointer=InMemorySaver(), store=store)
        read = (await _reads(graph, thread("t1"), "c1", 5000))["messages"][-1]
    assert read.content.startswith(TEXT[5000:10000])


async def test_a_failing_store_is_an_error_message_for_the_model(caplog: pytest.LogCaptureFixture) -> None:
    """The store raising on a read (an outage) is told to the model, its details only to the log;
    the run goes on."""

    class BrokenStore(InMemoryStore):
        async def aget(self, *args: Any, **kwargs: Any) -> Any:
            raise ConnectionError("database is down")

    config = in_process(output_handling={"max_chars": 5000, "overflow": "store"})
    async with MCPToolNode(config) as node:
        builder = StateGraph(MessagesState)
        builder.add_node("tools", node)
        builder.add_edge(START, "tools")
        graph = builder.compile(checkpointer=InMemorySaver(), store=BrokenStore())
        read = (await _reads(graph, thread(), "c1", 0))["messages"][-1]
    assert read.status == "error"
    assert read.content == (
        "Error: the stored tool output could not be read (the store failed: ConnectionError)."
    )
    assert "database is down" in caplog.text
