"""What reaches a person from a server is fit to show: URL-mode questions only with a URL that is
safe to visit (else refused to the server), question texts and tool titles without hidden
characters, and no unbounded schema or title."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from langgraph_mcp import MCPToolNode
from langgraph_mcp._elicitation.answers import MAX_REQUESTED_SCHEMA, UnfitQuestion, check_url
from langgraph_mcp._support.sanitise import MAX_TITLE, TRUNCATED
from tests.conftest_servers import stdio_params
from tests.helpers import ai, thread, tool_graph
from tests.tiers import STDIO_ERAS

HIDDEN = ("\x1b", "\u202e", "\u202c", "\u2066", "\u2069", "\u200b", "\x07")


def lure_config(protocol: str, **options: Any) -> dict[str, Any]:
    return {"lure": {**stdio_params("lure"), "protocol": protocol, **options}}


def message_of(out: dict[str, Any], call_id: str) -> ToolMessage:
    [message] = [m for m in out["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == call_id]
    return message


def shows_nothing_hidden(value: Any) -> bool:
    text = json.dumps(value, ensure_ascii=False)
    return not any(char in text for char in HIDDEN)


# -- which URLs a person is sent to -----------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://auth.example.com/login?session=abc",
        "HTTPS://Auth.Example.com:8443/x#y",
        "https://[2001:db8::1]/login",
    ],
)
def test_https_urls_are_shown(url: str) -> None:
    check_url(url)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("javascript:alert(document.cookie)", "scheme javascript: is not allowed"),
        ("JaVaScRiPt:alert(1)", "scheme javascript: is not allowed"),
        ("file:///etc/passwd", "scheme file: is not allowed"),
        ("data:text/html,<script>alert(1)</script>", "scheme data: is not allowed"),
        ("vbscript:msgbox", "scheme vbscript: is not allowed"),
        ("//evil.example/login", "scheme (none) is not allowed"),
        ("http://example.com/login", "plain http URLs are not allowed"),
        ("http://127.0.0.1:8080/login", "elicitation_loopback_http"),
        ("https://bank.example.com@evil.example/login", "user name or password"),
        ("https://bank.example.com:pw@evil.example/", "user name or password"),
        ("https://bank.example.com\\@evil.example/", "backslash"),
        ("https:///path-only", "names no host"),
        ("https://evil.example/\u202egnp.exe", "control characters"),
        ("https://evil.example/a b", "whitespace"),
        ("\x01javascript:alert(1)", "control characters"),
        ("https://evil.example:99999/", "cannot be read"),
        ("https://evil.example/" + "a" * 9000, "longer than 8,192 characters"),
    ],
)
def test_other_urls_are_refused(url: str, why: str) -> None:
    with pytest.raises(UnfitQuestion, match=why.replace("(", r"\(").replace(")", r"\)")):
        check_url(url)


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8080/cb", "http://127.3.4.5/", "http://localhost:3000/", "http://[::1]:9/"]
)
def test_plain_http_to_a_loopback_host_only_when_allowed(url: str) -> None:
    check_url(url, loopback_http=True)
    with pytest.raises(UnfitQuestion):
        check_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/",
        "http://localhost.evil.example/",
        "http://127.0.0.1.evil.example/",
        "http://2130706433/",  # 127.0.0.1 as one number: not what a person reads as loopback
        "http://[::ffff:7f00:1]/",
        "http://localhost@evil.example/",
    ],
)
def test_plain_http_elsewhere_is_refused_even_when_loopback_is_allowed(url: str) -> None:
    with pytest.raises(UnfitQuestion):
        check_url(url, loopback_http=True)


@pytest.mark.parametrize("protocol", STDIO_ERAS)
async def test_a_url_question_with_an_unsafe_url_is_refused_to_the_server(protocol: str) -> None:
    """2025-11-25: the server gets a -32602 error for its ``elicitation/create`` and its tool
    decides the outcome. 2026-07-28 (a round cannot carry an error): the call ends with an error
    message, as the SDK's own driver ends it. Neither asks the person anything."""
    urls = ["javascript:alert(1)", "file:///etc/passwd", "data:text/html,hi", "http://127.0.0.1:9/cb"]
    async with MCPToolNode(lure_config(protocol)) as node:
        graph = tool_graph(node)
        calls = [("visit", {"url": url}, f"c{i}") for i, url in enumerate(urls)]
        out = await graph.ainvoke({"messages": [ai(*calls)]}, thread())
    assert "__interrupt__" not in out
    for i, url in enumerate(urls):
        message = message_of(out, f"c{i}")
        if protocol == "legacy":
            assert message.status == "success"
            assert message.content.startswith("refused by the client: -32602 elicitation request refused")
        else:
            assert message.status == "error"
            assert "'visit' asked a question that is not shown to a person" in message.content
        assert "not allowed" in message.content, url


@pytest.mark.parametrize("protocol", STDIO_ERAS)
async def test_a_handler_never_sees_an_unsafe_url(protocol: str) -> None:
    """Refused under any policy: a handler (or ``"decline"``) is not asked about it either."""
    seen: list[Any] = []

    async def handler(request: Any, info: Any) -> Any:
        seen.append(request)
        return {"action": "accept"}

    async with MCPToolNode(lure_config(protocol, elicitation=handler)) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("visit", {"url": "javascript:x"}, "c1"))]}, thread())
        assert "scheme javascript: is not allowed" in message_of(out, "c1").content
        safe = ai(("visit", {"url": "https://ok.example"}, "c2"))
        out = await graph.ainvoke({"messages": [safe]}, thread())
    assert json.loads(message_of(out, "c2").content)["action"] == "accept"
    assert [r["url"] for r in seen] == ["https://ok.example"]


@pytest.mark.parametrize("protocol", STDIO_ERAS)
async def test_https_and_allowed_loopback_urls_are_asked(protocol: str) -> None:
    urls = ["https://auth.example.com/login", "http://localhost:8080/cb"]
    config = lure_config(protocol, elicitation_loopback_http=True)
    async with MCPToolNode(config) as node:
        graph = tool_graph(node)
        for n, url in enumerate(urls):
            out = await graph.ainvoke({"messages": [ai(("visit", {"url": url}, "c1"))]}, thread(str(n)))
            [request] = out["__interrupt__"][0].value["requests"]
            assert request["mode"] == "url" and request["url"] == url
            resume = {"responses": {request["key"]: {"action": "accept"}}}
            out = await graph.ainvoke(Command(resume=resume), thread(str(n)))
            assert json.loads(message_of(out, "c1").content)["action"] == "accept"


async def test_a_required_url_that_is_unsafe_ends_the_call() -> None:
    """``-32042`` naming a URL that may not be shown: an error message, no question."""
    async with MCPToolNode(lure_config("auto")) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke(
            {"messages": [ai(("require", {"url": "javascript:alert(1)"}, "c1"))]}, thread()
        )
        assert "__interrupt__" not in out
        message = message_of(out, "c1")
        assert message.status == "error" and "scheme javascript: is not allowed" in message.content
        out = await graph.ainvoke(
            {"messages": [ai(("require", {"url": "https://bank.example/link"}, "c2"))]}, thread("2")
        )
    assert out["__interrupt__"][0].value["requests"][0]["url"] == "https://bank.example/link"


# -- the text of a question, and its size ------------------------------------------------------


@pytest.mark.parametrize("protocol", STDIO_ERAS)
async def test_a_question_shows_no_hidden_text_and_its_answer_still_fits(protocol: str) -> None:
    async with MCPToolNode(lure_config(protocol)) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("form", {"padding": 0}, "c1"))]}, thread())
        [request] = out["__interrupt__"][0].value["requests"]
        assert shows_nothing_hidden(request)
        assert request["message"] == "Approve the refund of $10 (actually $10,000)"
        properties = request["requested_schema"]["properties"]
        assert properties["amount"]["title"] == "Amount0001$"
        assert properties["amount"]["description"] == "How much to refund"
        assert properties["confirm"]["enumNames"] == ["Yes, and delete everything", "No"]
        # The answer is still checked against the schema, and reaches the server.
        answer = {"action": "accept", "content": {"amount": 10, "confirm": "yes"}}
        out = await graph.ainvoke(Command(resume={"responses": {request["key"]: answer}}), thread())
    assert json.loads(message_of(out, "c1").content) == {
        "action": "accept",
        "content": {"amount": 10, "confirm": "yes"},
    }


@pytest.mark.parametrize("protocol", STDIO_ERAS)
async def test_an_oversized_schema_is_refused(protocol: str) -> None:
    async with MCPToolNode(lure_config(protocol)) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke(
            {"messages": [ai(("form", {"padding": MAX_REQUESTED_SCHEMA}, "c1"))]}, thread()
        )
    assert "__interrupt__" not in out
    message = message_of(out, "c1")
    assert f"over the limit of {MAX_REQUESTED_SCHEMA:,}" in message.content
    if protocol == "legacy":
        assert message.content.startswith("refused by the client: -32602")
    else:
        assert message.status == "error"


# -- tool titles -------------------------------------------------------------------------------


async def test_tool_titles_and_annotations_are_sanitised_and_bounded() -> None:
    async with MCPToolNode(lure_config("auto"), approval="destructive") as node:
        [titled] = [t for t in await node.get_tools() if t.name == "titled"]
        info = (titled.metadata or {})["mcp"]
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("titled", {}, "c1"))]}, thread())
    for title in (info["title"], info["annotations"]["title"]):
        assert title.startswith("Safe cleanupCleanup Cleanup")
        assert len(title) == MAX_TITLE and title.endswith(TRUNCATED)
        assert shows_nothing_hidden(title)
    question = out["__interrupt__"][0].value
    assert question["annotations"]["title"] == info["annotations"]["title"]
    assert question["annotations"]["destructiveHint"] is True
