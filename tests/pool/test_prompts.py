"""Prompts as LangChain messages, their arguments, and completion, against the ``library``
fixture server over stdio and streamable HTTP in both protocol eras."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langgraph_mcp import MCPArgumentError, MCPPool
from langgraph_mcp._pool.prompts import check_arguments
from tests.servers import library


async def test_prompts_become_messages(library_config: dict[str, Any]) -> None:
    async with MCPPool({"lib": library_config}) as pool:
        prompts = {p.name: p for p in await pool.list_prompts("lib")}
        assert {"summarise", "show_logo", "quote_index"} <= set(prompts)
        assert [(a.name, a.required) for a in prompts["summarise"].arguments or []] == [
            ("topic", True),
            ("style", False),
        ]

        [text] = await pool.get_prompt("lib", "summarise", {"topic": "tides", "style": "long"})
        assert isinstance(text, HumanMessage)
        assert text.content == "Summarise tides in a long style."
        assert text.response_metadata["mcp_prompt_description"] == "Summarise a topic."
        [default] = await pool.get_prompt("lib", "summarise", {"topic": "tides"})
        assert default.content == "Summarise tides in a short style."

        image, reply = await pool.get_prompt("lib", "show_logo")
        assert isinstance(image, HumanMessage) and isinstance(reply, AIMessage)
        assert image.content == [
            {"type": "image", "base64": library._b64(library.PNG), "mime_type": "image/png"}
        ]
        assert reply.content == "A tiny logo."

        embedded, link = await pool.get_prompt("lib", "quote_index")
        assert embedded.content == library.INDEX
        [block] = link.content
        assert isinstance(block, dict)
        assert (block["type"], block["url"], block["extras"]["server"]) == ("file", "notes://logo.png", "lib")
        [logo] = await pool.resolve_link(block)
        assert logo.as_bytes() == library.PNG


async def test_prompt_arguments_are_checked_before_sending(library_config: dict[str, Any]) -> None:
    async with MCPPool({"lib": library_config}) as pool:
        with pytest.raises(MCPArgumentError, match="needs 'topic'") as missing:
            await pool.get_prompt("lib", "summarise", {"style": "long"})
        assert (missing.value.server, missing.value.argument) == ("lib", "topic")
        with pytest.raises(MCPArgumentError, match=r"has no argument 'tone'.*'topic', 'style'"):
            await pool.get_prompt("lib", "summarise", {"topic": "x", "tone": "dry"})
        with pytest.raises(MCPArgumentError, match="strings only; got int"):
            await pool.get_prompt("lib", "summarise", {"topic": 3})
        with pytest.raises(MCPArgumentError, match=r"no prompt 'summary'.*'summarise'"):
            await pool.get_prompt("lib", "summary")


async def test_completion_of_prompt_and_template_arguments(library_config: dict[str, Any]) -> None:
    async with MCPPool({"lib": library_config}) as pool:
        styles = await pool.complete("lib", prompt="summarise", argument="style", value="b")
        assert (styles.values, styles.total, styles.has_more) == (["bullets"], 1, False)
        names = await pool.complete(
            "lib", template="notes://note/{name}", argument="name", value="", context={"prefix": "p"}
        )
        assert names.values == ["alpha-p", "beta-p", "gamma-p"]
        by_name = await pool.complete("lib", template="note", argument="name", value="g")
        assert by_name.values == ["gamma"]
        with pytest.raises(MCPArgumentError, match="exactly one of"):
            await pool.complete("lib", argument="name", value="")


def test_check_arguments_unit() -> None:
    import mcp_types as types

    prompt = types.Prompt(
        name="p",
        arguments=[types.PromptArgument(name="a", required=True, description="the a")],
    )
    assert check_arguments("s", prompt, {"a": "x"}) == {"a": "x"}
    with pytest.raises(MCPArgumentError, match=r"needs 'a' \(the a\)"):
        check_arguments("s", prompt, {"a": ""})
    no_args = types.Prompt(name="q")
    with pytest.raises(MCPArgumentError, match="it takes: none"):
        check_arguments("s", no_args, {"a": "x"})
