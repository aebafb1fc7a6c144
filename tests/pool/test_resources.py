"""Resources: listings, reads, templates, links, subscriptions and the read tool, against the
``library`` fixture server over stdio and streamable HTTP in both protocol eras."""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict

import pytest
from langchain_core.messages import ToolMessage
from langgraph.graph import START, StateGraph

from langgraph_mcp import MCPArgumentError, MCPConnectionError, MCPPool, MCPServerError, MCPToolNode
from tests.conftest_servers import stdio_params
from tests.helpers import ai, thread, tool_graph
from tests.servers import demo, library
from tests.tiers import STDIO_ERAS

ERA = {"auto": "2026-07-28", "legacy": "legacy"}


async def test_listings_are_paged_cached_and_read_into_blobs(library_config: dict[str, Any]) -> None:
    async with MCPPool({"lib": library_config}) as pool:
        resources = await pool.list_resources("lib")
        assert pool.connection("lib").era == ERA[library_config["protocol"]]
        # Four resources, two per page: every page was read.
        assert [str(r.uri) for r in resources] == [
            "notes://index",
            "notes://logo.png",
            "notes://counter",
            "notes://pair",
        ]
        assert await pool.list_resources("lib") is resources  # cached
        templates = await pool.list_resource_templates("lib")
        assert {t.name: t.uri_template for t in templates} == {
            "note": "notes://note/{name}",
            "search": "notes://search{?q,limit}",
        }

        [text] = await pool.read_resource("lib", "notes://index")
        assert text.as_string() == library.INDEX
        assert text.mimetype == "text/markdown"
        assert text.metadata == {"uri": "notes://index", "server": "lib"}

        [image] = await pool.read_resource("lib", "notes://logo.png")
        assert image.as_bytes() == library.PNG
        assert image.mimetype == "image/png"

        first, second = await pool.read_resource("lib", "notes://pair")
        assert (first.as_string(), first.metadata["meta"]) == ("first", {"n": 1})
        assert (second.as_bytes(), second.metadata["uri"]) == (b"\x00\x01\x02", "notes://pair#2")

        with pytest.raises(MCPServerError) as refused:
            await pool.read_resource("lib", "notes://missing")
        assert "notes://missing" in str(refused.value)


async def test_templates_are_expanded_and_their_arguments_checked(library_config: dict[str, Any]) -> None:
    async with MCPPool({"lib": library_config}) as pool:
        [by_name] = await pool.read_resource_template("lib", "note", {"name": "two words"})
        assert by_name.as_string() == "note two words"
        assert by_name.metadata["uri"] == "notes://note/two%20words"

        [by_template] = await pool.read_resource_template("lib", "notes://search{?q,limit}", {"q": "x&y"})
        assert by_template.metadata["uri"] == "notes://search?q=x%26y"
        assert by_template.as_string() == "search q=x&y limit=10"

        with pytest.raises(MCPArgumentError, match="needs 'name'") as missing:
            await pool.read_resource_template("lib", "note", {})
        assert (missing.value.server, missing.value.argument) == ("lib", "name")
        with pytest.raises(MCPArgumentError, match="has no variable 'title'"):
            await pool.read_resource_template("lib", "note", {"name": "a", "title": "b"})
        with pytest.raises(MCPArgumentError, match=r"no resource template 'nope'.*'note', 'search'"):
            await pool.read_resource_template("lib", "nope", {})


async def test_list_changed_refreshes_the_cached_listings(library_config: dict[str, Any]) -> None:
    async with MCPPool({"lib": library_config}) as pool:
        before = await pool.list_resources("lib")
        prompts_before = await pool.list_prompts("lib")
        connection = pool.connection("lib")
        await connection.call_tool("add_note", {"name": "fresh"})
        await connection.call_tool("add_prompt", {"name": "fresh_prompt"})

        async def listed() -> tuple[list[str], list[str]]:
            resources = [str(r.uri) for r in await pool.list_resources("lib")]
            prompts = [p.name for p in await pool.list_prompts("lib")]
            return resources, prompts

        for _ in range(500):
            resources, prompts = await listed()
            if "notes://extra/fresh" in resources and "fresh_prompt" in prompts:
                break
            await asyncio.sleep(0.02)
        assert "notes://extra/fresh" in resources and len(resources) == len(before) + 1
        assert "fresh_prompt" in prompts and len(prompts) == len(prompts_before) + 1


async def test_subscription_reports_updates_and_unsubscribes(library_config: dict[str, Any]) -> None:
    async with MCPPool({"lib": library_config}) as pool:
        connection = pool.connection("lib")
        async with pool.subscribe("lib", "notes://counter") as updates:
            if library_config["protocol"] == "legacy":
                confirmed = await connection.call_tool("subscribers")
                assert "notes://counter" in str(confirmed.structured_content)
            await connection.call_tool("bump")
            update = await asyncio.wait_for(anext(updates), 10)
            assert update == {"type": "mcp_resource_updated", "server": "lib", "uri": "notes://counter"}
            [blob] = await pool.read_resource("lib", update["uri"])
            assert blob.as_string() == "1"
        if library_config["protocol"] == "legacy":
            after = await connection.call_tool("subscribers")
            assert after.structured_content == {"result": []}


async def test_a_refused_subscription_is_a_clear_error() -> None:
    config = {**stdio_params("library"), "protocol": "legacy"}
    async with MCPPool({"lib": config}) as pool:
        with pytest.raises(MCPServerError, match="notes://missing"):
            async with pool.subscribe("lib", "notes://missing"):
                pass
        # The pool's session is fine, and a good subscription still works.
        async with pool.subscribe("lib", "notes://counter") as updates:
            await pool.connection("lib").call_tool("bump")
            assert (await asyncio.wait_for(anext(updates), 10))["uri"] == "notes://counter"


async def test_a_server_without_resources_or_subscriptions_says_so() -> None:
    # Before 2026-07-28 a server offers subscriptions only with a resources/subscribe handler.
    async with MCPPool({"demo": {"server": demo.build_server(), "protocol": "legacy"}}) as pool:
        with pytest.raises(MCPServerError, match="resource subscriptions"):
            async with pool.subscribe("demo", "res://demo/readme"):
                pass
        completion = await pool.complete("demo", prompt="p", argument="a", value="")
        assert completion.values == []


@pytest.mark.parametrize("protocol", STDIO_ERAS)
async def test_subscription_survives_a_server_restart(protocol: str) -> None:
    config = {**stdio_params("library"), "protocol": protocol}
    async with MCPPool({"lib": config}) as pool:
        connection = pool.connection("lib")
        async with pool.subscribe("lib", "notes://counter") as updates:
            await connection.call_tool("bump")
            assert (await asyncio.wait_for(anext(updates), 10))["uri"] == "notes://counter"
            first = await connection.live_session()
            with pytest.raises(Exception, match="lost"):
                await connection.call_tool("crash")
            # The subscription opens a new session by itself, and says the resource may have
            # changed meanwhile (the new server process starts its counter again at 0).
            update = await asyncio.wait_for(anext(updates), 30)
            assert update["uri"] == "notes://counter"
            assert await connection.live_session() is not first
            [blob] = await pool.read_resource("lib", "notes://counter")
            assert blob.as_string() == "0"
            await connection.call_tool("bump")
            assert (await asyncio.wait_for(anext(updates), 10))["uri"] == "notes://counter"


def _messages(out: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}


class _State(TypedDict, total=False):
    seen: list[str]


async def test_a_subscription_opened_in_a_node_streams_its_updates() -> None:
    async with MCPPool({"lib": {**stdio_params("library")}}) as pool:

        async def watch(state: _State) -> _State:
            async with pool.subscribe("lib", "notes://counter") as updates:
                await pool.connection("lib").call_tool("bump")
                update = await asyncio.wait_for(anext(updates), 10)
            return {"seen": [update["uri"]]}

        builder = StateGraph(_State)
        builder.add_node("watch", watch)
        builder.add_edge(START, "watch")
        graph = builder.compile()
        events = [chunk async for chunk in graph.astream({}, stream_mode=["custom", "values"])]
        custom = [data for mode, data in events if mode == "custom"]
        assert custom == [{"type": "mcp_resource_updated", "server": "lib", "uri": "notes://counter"}]
        assert events[-1] == ("values", {"seen": ["notes://counter"]})


async def test_resource_links_resolve_on_the_server_that_returned_them() -> None:
    async with MCPPool({"lib": stdio_params("library"), "demo": demo.build_server()}) as pool:
        node = MCPToolNode(pool)
        out = await tool_graph(node).ainvoke({"messages": [ai(("link", {}, "c1"))]}, thread())
        message = _messages(out)["c1"]
        assert message.artifact["server"] == "lib"
        [blob] = await pool.resolve_link(message)
        assert blob.as_string() == library.INDEX
        link = next(b for b in message.content if isinstance(b, dict) and b.get("type") == "file")
        assert link["extras"]["server"] == "lib"
        assert (await pool.resolve_link(link))[0].metadata == {"uri": "notes://index", "server": "lib"}
        with pytest.raises(ValueError, match="no link 1"):
            await pool.resolve_link(message, index=1)


@pytest.mark.parametrize("protocol", STDIO_ERAS)
async def test_the_read_tool_reads_resources_for_the_model(protocol: str) -> None:
    config = {
        **stdio_params("library"),
        "protocol": protocol,
        "resource_tool": True,
        "tool_output": {"read_resource": {"max_chars": 100}},
    }
    async with MCPToolNode({"lib": config}) as node:
        tools = {t.name: t for t in await node.get_tools()}
        reader = tools["read_resource"]
        assert "notes://index: The index of every note." in reader.description
        assert "notes://note/{name}" in reader.description
        assert reader.args_schema is not None

        out = await tool_graph(node).ainvoke(
            {
                "messages": [
                    ai(
                        ("read_resource", {"uri": "notes://index"}, "c1"),
                        ("read_resource", {"uri": "notes://logo.png"}, "c2"),
                        ("read_resource", {"uri": "notes://missing"}, "c3"),
                        ("read_resource", {}, "c4"),
                    )
                ]
            },
            thread(),
        )
        results = _messages(out)
        assert results["c1"].content.startswith(library.INDEX[:80])
        assert f"output truncated: 100 of {len(library.INDEX)}" in results["c1"].content  # the policy applies
        assert results["c2"].content[0]["type"] == "image"
        assert results["c3"].status == "error" and "notes://missing" in results["c3"].content
        assert results["c4"].status == "error" and "uri" in results["c4"].content


async def test_a_server_that_lists_its_own_read_resource_keeps_it(caplog: pytest.LogCaptureFixture) -> None:
    from mcp.server.mcpserver import MCPServer

    srv: MCPServer = MCPServer("own")

    @srv.tool()
    def read_resource(uri: str) -> str:
        return f"own {uri}"

    @srv.resource("x://a")
    def a() -> str:
        return "a"

    async with MCPToolNode({"own": {"server": srv, "resource_tool": True}}) as node:
        tools = {t.name: t for t in await node.get_tools()}
        assert (await tools["read_resource"].ainvoke({"uri": "x://a"})) == "own x://a"
    assert "lists a tool named 'read_resource' itself" in caplog.text


@pytest.mark.parametrize("protocol", STDIO_ERAS)
async def test_closing_the_pool_ends_an_open_subscription(protocol: str) -> None:
    # Waiting for the next update must not outlive the pool: once it is closed, no session will
    # ever send another update, so the iterator ends with MCPConnectionError.
    pool = MCPPool({"lib": {**stdio_params("library"), "protocol": protocol}})
    try:
        async with pool.subscribe("lib", "notes://counter") as updates:
            waiting = asyncio.ensure_future(anext(updates))
            await pool.aclose()
            with pytest.raises(MCPConnectionError, match="closed"):
                await asyncio.wait_for(waiting, 10)
    finally:
        await pool.aclose()


async def test_two_subscriptions_to_a_refused_uri_both_hear_the_refusal() -> None:
    # Both callers hear the refusal (the second does not wait out connect_timeout and get a
    # vague connection error).
    config = {**stdio_params("library"), "protocol": "legacy", "connect_timeout": 8}
    async with MCPPool({"lib": config}) as pool:
        await pool.list_resources("lib")  # connected

        async def attempt() -> BaseException | None:
            try:
                async with pool.subscribe("lib", "notes://missing"):
                    return None
            except Exception as exc:
                return exc

        first, second = await asyncio.gather(attempt(), attempt())
        assert isinstance(first, MCPServerError), first
        assert isinstance(second, MCPServerError), second


async def test_an_empty_list_for_a_path_variable_is_a_missing_argument() -> None:
    # RFC 6570: an empty list is undefined, like a missing value.
    async with MCPPool({"lib": stdio_params("library")}) as pool:
        with pytest.raises(MCPArgumentError, match="needs 'name'"):
            await pool.read_resource_template("lib", "note", {"name": []})


@pytest.mark.parametrize("protocol", STDIO_ERAS)
async def test_subscriptions_come_and_go_while_others_stay(protocol: str) -> None:
    # On 2026-07-28 each change of the watched set opens a new update stream (before the old one
    # closes); before, it subscribes and unsubscribes. Either way the other watchers keep theirs.
    async with MCPPool({"lib": {**stdio_params("library"), "protocol": protocol}}) as pool:
        connection = pool.connection("lib")
        async with pool.subscribe("lib", "notes://counter") as counter:
            for round_ in range(3):
                async with pool.subscribe("lib", "notes://index", "notes://counter") as both:
                    await connection.call_tool("bump")
                    assert (await asyncio.wait_for(anext(both), 10))["uri"] == "notes://counter"
                    assert (await asyncio.wait_for(anext(counter), 10))["uri"] == "notes://counter"
                await connection.call_tool("bump")
                assert (await asyncio.wait_for(anext(counter), 10))["uri"] == "notes://counter", round_
            [blob] = await pool.read_resource("lib", "notes://counter")
            assert blob.as_string() == "6"


async def test_the_read_tool_lists_resources_added_later() -> None:
    async with MCPToolNode({"lib": {**stdio_params("library"), "resource_tool": True}}) as node:
        before = {t.name: t for t in await node.get_tools()}["read_resource"]
        assert "notes://extra/late" not in before.description
        await node.pool.connection("lib").call_tool("add_note", {"name": "late"})
        for _ in range(500):
            after = {t.name: t for t in await node.get_tools()}["read_resource"]
            if "notes://extra/late" in after.description:
                break
            await asyncio.sleep(0.02)
        assert "notes://extra/late" in after.description


async def _listeners(pool: MCPPool) -> list[list[str]]:
    """The resource URIs of each ``subscriptions/listen`` stream the library server has open."""
    result = await pool.connection("lib").call_tool("listeners")
    assert isinstance(result.structured_content, dict)
    listeners: list[list[str]] = result.structured_content["result"]
    return listeners


async def test_a_stream_refused_once_does_not_leave_the_earlier_stream_open() -> None:
    # The next stream is opened before the current one closes; when it is refused, the current
    # one must still be closed once a later stream opens, not left running for the session's life.
    async with MCPPool({"lib": stdio_params("library")}) as pool:
        connection = pool.connection("lib")
        async with pool.subscribe("lib", "notes://counter"):
            await connection.call_tool("refuse_listens", {"count": 1})
            with pytest.raises(MCPServerError, match="notes://index"):
                async with pool.subscribe("lib", "notes://index"):
                    pass
        for _ in range(250):
            listeners = await _listeners(pool)
            if not any(listeners):
                break
            await asyncio.sleep(0.02)
        assert not any(listeners), f"streams still watching resources nobody watches: {listeners}"


@pytest.mark.slow  # leaving the subscription waits the connect timeout (4 s)
async def test_a_refused_new_stream_does_not_end_the_subscriptions_already_running() -> None:
    # A server at its limit of listen streams refuses the stream for a new set of resources; the
    # stream already running for notes://counter is fine and its subscriber keeps hearing updates.
    # (connect_timeout: long enough for a busy machine to start the server, short to wait out.)
    async with MCPPool({"lib": {**stdio_params("library"), "connect_timeout": 4}}) as pool:
        connection = pool.connection("lib")
        async with pool.subscribe("lib", "notes://counter") as counter:
            await connection.call_tool("refuse_listens", {"count": 3})
            with pytest.raises(MCPServerError, match="Subscription limit reached"):
                async with pool.subscribe("lib", "notes://index"):
                    pass
            # No update is pending: the subscription waits for one instead of ending...
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(anext(counter), 1)
            # ...and still hears the next one.
            await connection.call_tool("bump")
            assert (await asyncio.wait_for(anext(counter), 10))["uri"] == "notes://counter"


async def test_a_list_change_sent_while_the_stream_was_down_is_not_lost() -> None:
    # The stream drops, and the resource list changes before it is open again: nobody is told,
    # so the cached listing must be refetched once the stream is back.
    async with MCPPool({"lib": stdio_params("library")}) as pool:
        assert "notes://extra/unheard" not in [str(r.uri) for r in await pool.list_resources("lib")]
        await pool.connection("lib").call_tool("drop_listens_then_add_note", {"name": "unheard"})
        for _ in range(250):
            if await _listeners(pool):
                break
            await asyncio.sleep(0.02)
        assert await _listeners(pool), "the stream was not opened again"
        assert "notes://extra/unheard" in [str(r.uri) for r in await pool.list_resources("lib")]


@pytest.mark.usefixtures("short_listen_retry")  # it waits for the stream to give up
async def test_leaving_a_subscription_after_its_stream_gave_up_is_prompt() -> None:
    # The stream drops and is refused three times: the subscriber is told. Leaving the
    # subscription then must not wait for a confirmation that cannot come (the connect timeout).
    # (A connect_timeout far longer than the test's own limit: waiting it out fails the test.)
    config = {**stdio_params("library"), "connect_timeout": 60}
    async with MCPPool({"lib": config}) as pool:
        connection = pool.connection("lib")
        subscription = pool.subscribe("lib", "notes://counter")
        counter = await subscription.__aenter__()
        await connection.call_tool("refuse_listens", {"count": 3})
        await connection.call_tool("drop_listens_then_add_note", {"name": "gone"})
        with pytest.raises(MCPConnectionError, match="kept failing"):
            while True:  # each URI is reported once when a stream opens again; then the error
                await asyncio.wait_for(anext(counter), 30)
        await asyncio.wait_for(subscription.__aexit__(None, None, None), 15)


@pytest.mark.usefixtures("short_listen_retry")  # it waits for the stream to give up
async def test_a_new_subscription_after_the_stream_gave_up_works_once_the_server_accepts_it() -> None:
    # The stream drops and the next two attempts to open it are refused: three failures in a
    # row, so the stream gives up (the subscriber is told). The server accepts listen requests
    # again right after, so a new subscription must open a stream, not fail for the next 30 s.
    async with MCPPool({"lib": stdio_params("library")}) as pool:
        connection = pool.connection("lib")
        async with pool.subscribe("lib", "notes://counter") as first:
            await connection.call_tool("refuse_listens", {"count": 2})
            await connection.call_tool("drop_listens_then_add_note", {"name": "gone"})
            with pytest.raises(MCPConnectionError, match="kept failing"):
                while True:
                    await asyncio.wait_for(anext(first), 30)
        async with pool.subscribe("lib", "notes://counter") as counter:
            await connection.call_tool("bump")
            assert (await asyncio.wait_for(anext(counter), 10))["uri"] == "notes://counter"
