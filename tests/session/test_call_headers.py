"""Per-call HTTP headers (``ToolOptions.headers``) on a session other users share.

A header the HTTP client cannot send (a token read from a file with its newline, a control or
non-ASCII character, a name that is no header name) fails its own call, before anything is sent,
saying so; the session and every other call on it go on. Its value is named nowhere: not in the
message, not in any log record. A valid per-call value the server echoes back is masked like a
configured one.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph

from langgraph_mcp import MCPPool, MCPToolNode, ToolOptions
from langgraph_mcp._support.headers import header_problem
from tests.conftest_servers import serve_in_loop
from tests.helpers import SERVER_SIDE_LOGGERS, ai, record_texts, thread
from tests.servers import echoing

ERAS = ["auto", "legacy"]
SECRET = "SNTL-percall-21"


@dataclass
class Ctx:
    token: str
    headers: Any = None


def user_graph(node: MCPToolNode) -> Any:
    builder = StateGraph(MessagesState, context_schema=Ctx)
    builder.add_node(node)
    builder.add_edge(START, "tools")
    return builder.compile(checkpointer=InMemorySaver())


def bearer(runtime: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {runtime.context.token}"}


async def run(
    graph: Any, user: str, token: str, tool: str, args: dict[str, Any] | None = None, headers: Any = None
) -> ToolMessage:
    out = await graph.ainvoke(
        {"messages": [ai((tool, args or {}, f"c-{user}"))]},
        thread(user),
        context=Ctx(token=token, headers=headers),
    )
    message = out["messages"][-1]
    assert isinstance(message, ToolMessage)
    return message


def client_logs(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The text of every record but the fixture server's own (it runs in this process)."""
    return record_texts(caplog.records, skip=SERVER_SIDE_LOGGERS)


@pytest.mark.parametrize("protocol", ERAS)
async def test_a_bad_header_value_fails_its_own_call_and_the_shared_session_goes_on(
    protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    entered, released = asyncio.Event(), asyncio.Event()
    server = echoing.build_server(entered=entered.set, released=released.wait)
    async with serve_in_loop(server, "http") as url:
        config = {"echo": {"url": url, "protocol": protocol}}
        async with MCPPool(config) as pool:
            graph = user_graph(MCPToolNode(pool, server_options={"echo": ToolOptions(headers=bearer)}))
            # Ann's call runs on the shared session when Ben's token, read from a file with its
            # newline, goes out with his.
            ann = asyncio.ensure_future(run(graph, "ann", "tok-ann", "slow", {"seconds": 60.0}))
            await asyncio.wait_for(entered.wait(), 30)
            ben = await run(graph, "ben", f"{SECRET}\n", "fail_echo")
            assert not ann.done()  # still running on the session while Ben's call failed
            released.set()
            ann_message = await asyncio.wait_for(ann, 30)
            connects = pool.connection("echo").connects
    assert (ann_message.status, ann_message.content) == ("success", "slept")
    assert ben.status == "error"
    assert ben.content == (
        "MCP server 'echo': the call to 'fail_echo' was not sent: header 'Authorization': its value "
        "ends with a line break (a value read from a file keeps its newline) "
        "(check the tool's ToolOptions.headers)"
    )
    assert connects == 1  # never torn down
    texts = client_logs(caplog)
    assert not [t for t in texts if "SNTL-" in t]
    assert not [t for t in texts if "connection ended" in t]


@pytest.mark.parametrize("protocol", ERAS)
async def test_every_header_the_client_cannot_send_is_refused_before_sending(
    protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    bad: list[tuple[Any, str]] = [
        ({"Authorization": f"Bearer {SECRET}\r\nX-Injected: 1"}, "a carriage return (CR)"),
        ({"X-Token": f"{SECRET}\x00"}, "a control character (U+0000)"),
        ({"X-Token": f"{SECRET}\x01"}, "a control character (U+0001)"),
        ({"X-Token": f"{SECRET}\x7f"}, "a control character (U+007F)"),
        ({"X-Token": f"{SECRET}\u00e9"}, "a non-ASCII character (U+00E9)"),
        ({"X-Token": f"{SECRET}\u20ac"}, "a non-ASCII character (U+20AC)"),
        ({"X-Token": f" {SECRET}"}, "starts or ends with whitespace"),
        ({"X-Token": f"{SECRET} "}, "starts or ends with whitespace"),
        ({"X-Token": 21}, "is not a string (int)"),
        ({"X Token": SECRET}, "a header name is not a valid HTTP header name: it has a space after 'X'"),
        ({"X-Token\n": SECRET}, "it has a line break (LF) after 'X-Token'"),
        ({f"Authorization: Bearer {SECRET}": "v"}, "it has the character ':' after 'Authorization'"),
        ({"": SECRET}, "a header name is empty"),
        ({7: SECRET}, "a header name is not a string (int)"),
        ([("X-Token", SECRET)], "its per-call headers are a list, not a mapping"),
    ]
    options = ToolOptions(headers=lambda rt: rt.context.headers)
    async with (
        serve_in_loop(echoing.build_server(), "http") as url,
        MCPPool({"echo": {"url": url, "protocol": protocol}}) as pool,
    ):
        graph = user_graph(MCPToolNode(pool, server_options={"echo": options}))
        for n, (headers, said) in enumerate(bad):
            if isinstance(headers, dict):
                headers = {"X-Fine": "yes", **headers}
            message = await run(graph, f"u{n}", "", "fail_echo", headers=headers)
            assert message.status == "error" and "'fail_echo' was not sent: " in message.content
            assert said in message.content, message.content
        # A tab inside a value and an empty value are valid, and go.
        sent = await run(graph, "ok", "", "fail_echo", headers={"X-Tab": "a\tb", "X-Empty": ""})
        connects = pool.connection("echo").connects
    assert sent.content == "refused: credentials ['a\\tb', ''] are not valid"
    assert connects == 1
    assert not [t for t in client_logs(caplog) if "SNTL-" in t]


def test_header_problems_name_the_header_never_its_value() -> None:
    assert header_problem("Authorization", "Bearer abc") is None
    assert header_problem("X-A", "") is None
    assert header_problem("X-A", "a \t b") is None
    for value in (f"{SECRET}\n", f"a\n{SECRET}", f"{SECRET}\x1b", f"{SECRET}\u2019"):
        problem = header_problem("X-A", value)
        assert problem is not None and problem.startswith("header 'X-A': ") and SECRET not in problem


@pytest.mark.parametrize("protocol", ERAS)
async def test_what_the_server_echoes_of_per_call_and_configured_headers_is_masked(
    protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    configured = "SNTL-configured-22"
    async with serve_in_loop(echoing.build_server(), "http") as url:
        config = {
            "echo": {
                "url": url,
                "protocol": protocol,
                "headers": {"X-Api-Key": configured},
                "log_level": "debug",
                "log_events": True,
            }
        }
        async with MCPPool(config) as pool:
            node = MCPToolNode(pool, server_options={"echo": ToolOptions(headers=bearer)})
            graph = user_graph(node)
            failed = await run(graph, "ann", SECRET, "fail_echo")
            rejected = await run(graph, "ben", SECRET, "reject_echo")
            events: list[Any] = []
            async for event in graph.astream(
                {"messages": [ai(("log_echo", {}, "c-log"))]},
                thread("cid"),
                context=Ctx(token=SECRET),
                stream_mode=["custom", "updates"],
            ):
                events.append(event)
            state = await graph.aget_state(thread("ann"))
    assert failed.status == "error" and failed.content == "refused: credentials ['***', '***'] are not valid"
    assert failed.artifact["structured_content"] == {"rejected": ["***", "***"]}
    assert rejected.status == "error" and "backend refused ['***', '***']" in rejected.content
    custom = [e[1] for e in events if e[0] == "custom"]
    assert {e["type"] for e in custom} >= {"mcp_log", "mcp_progress"}
    assert "ok" in repr(events[-1])
    shown = [
        failed.content,
        repr(failed),
        rejected.content,
        repr(events),
        repr(state.values),
        *client_logs(caplog),
    ]
    assert not [text for text in shown if "SNTL-" in text]
