"""MCP skills at their edges: the protocol era, the ``skills`` option, a graph of one's own, bounds,
and hostile listings and files (``tests/servers/skills.py`` over loopback HTTP)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from langgraph_mcp import MCPConfigError, MCPPool
from langgraph_mcp._session.skillwire import SkillEntry
from langgraph_mcp._skills.entries import check_entry
from langgraph_mcp._skills.verify import Mismatch, frontmatter_of
from langgraph_mcp.skills import MCPSkillError, MCPSkills, MCPSkillsState
from tests.conftest_servers import serve_in_loop
from tests.helpers import thread
from tests.servers import skills as fixture


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[str, Path]]:
    root = tmp_path / "docs"
    fixture.write_bundled(root)
    async with serve_in_loop(fixture.build_server("docs", root)) as url:
        yield url, root


def _lists(root: Path) -> int:
    return sum(1 for e in fixture.log(root) if e["method"] == "skills/list")


async def test_a_2025_11_25_session_and_skills_false_list_nothing(served: tuple[str, Path]) -> None:
    url, root = served
    # The SDK's servers declare extensions on 2026-07-28 only: over 2025-11-25 nothing is asked.
    async with MCPPool({"docs": {"url": url, "protocol": "legacy"}}) as pool:
        assert await MCPSkills(pool).list() == []
        assert pool.connection("docs").protocol_version == "2025-11-25"
    async with MCPPool({"docs": {"url": url, "skills": False}}) as pool:
        assert await MCPSkills(pool).list() == []
    assert _lists(root) == 0
    async with MCPPool({"docs": {"url": url}}) as pool:
        assert len(await MCPSkills(pool).list()) == 3
    assert _lists(root) == 2  # two pages


async def test_a_graph_of_ones_own_runs_the_loader_in_a_tool_node(served: tuple[str, Path]) -> None:
    url, _ = served

    class State(MessagesState, MCPSkillsState):
        pass

    async with MCPPool({"docs": {"url": url}}) as pool:
        skills = MCPSkills(pool, servers=["docs"])
        builder = StateGraph(State)
        builder.add_node("tools", ToolNode([skills.tool]))
        builder.add_edge(START, "tools")
        graph = builder.compile(checkpointer=InMemorySaver())
        call = {"name": "load_skill", "args": {"skill": "docs:refunds"}, "id": "c1", "type": "tool_call"}
        out = await graph.ainvoke({"messages": [AIMessage("", tool_calls=[call])]}, thread("own"))
        message = out["messages"][-1]
        assert isinstance(message, ToolMessage) and "Refund within 30 days." in str(message.content)
        assert out["mcp_skills"]["docs:acme/billing/refunds"]["files"]["SKILL.md"]["digest"].startswith(
            "sha256:"
        )
        section = await skills.prompt()
        assert section is not None and "`docs:acme/billing/refunds`" in section


async def test_a_file_over_the_bound_is_refused_unread(served: tuple[str, Path]) -> None:
    url, root = served
    async with MCPPool({"docs": {"url": url}}) as pool:
        with pytest.raises(MCPSkillError) as raised:
            await MCPSkills(pool, max_file_bytes=100).read("docs:pdf-processing")
        assert raised.value.kind == "too_large" and fixture.reads(root) == []
        with pytest.raises(MCPConfigError, match="positive number of bytes"):
            MCPSkills(pool, max_file_bytes=0)


async def test_lying_listings_leave_only_their_own_entries_out(
    served: tuple[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    url, root = served
    # A file of another skill, another scheme: the whole entry is left out, the others stay.
    (root / ".stray.json").write_text(
        '{"code-review": ["skill://pdf-processing/SKILL.md", "file:///etc/passwd"]}'
    )
    (root / ".lie.json").write_text('{"acme/billing/refunds": {"name": "refund"}}')  # not its folder's name
    with caplog.at_level(logging.WARNING, logger="langgraph_mcp.skills"):
        async with MCPPool({"docs": {"url": url}}) as pool:
            assert [s.id for s in await MCPSkills(pool).list()] == ["docs:pdf-processing"]
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert "is not within the skill" in warned and "is not its name" in warned
    assert fixture.reads(root) == []


def _entry(**changes: Any) -> SkillEntry:
    data = b"---\nname: demo\ndescription: d\n---\n"
    raw: dict[str, Any] = {
        "uri": "skill://demo/SKILL.md",
        "frontmatter": {"name": "demo", "description": "d"},
        "resources": [
            {
                "uri": "skill://demo/SKILL.md",
                "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
                "size": len(data),
            }
        ],
    }
    raw.update(changes)
    return SkillEntry.model_validate(raw)


def test_entries_that_could_never_be_loaded_are_refused() -> None:
    assert not isinstance(check_entry("s", _entry()), str)
    many = [{"uri": f"skill://demo/f{i}", "digest": "sha256:" + "0" * 64, "size": 1} for i in range(513)]
    assert "more than 512" in str(check_entry("s", _entry(resources=many)))
    huge = [
        *_entry().model_dump()["resources"],
        {"uri": "skill://demo/big", "digest": "sha256:" + "0" * 64, "size": 17 << 20},
    ]
    assert "more than 16777216" in str(check_entry("s", _entry(resources=huge)))
    assert "not a valid skill name" in str(
        check_entry("s", _entry(frontmatter={"name": "Demo--x", "description": "d"}))
    )
    assert "do not include its SKILL.md" in str(
        check_entry(
            "s", _entry(resources=[{"uri": "skill://demo/x.md", "digest": "sha256:" + "0" * 64, "size": 1}])
        )
    )
    escape = [
        *_entry().model_dump()["resources"],
        {"uri": "skill://demo/../other/SKILL.md", "digest": "sha256:" + "0" * 64, "size": 1},
    ]
    assert "not within the skill" in str(check_entry("s", _entry(resources=escape)))


async def test_hostile_frontmatter_is_refused_not_expanded() -> None:
    bomb = "---\na: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nname: demo\n---\n"
    with pytest.raises(Mismatch, match="not valid YAML"):
        await frontmatter_of(bomb)
    with pytest.raises(Mismatch, match="no frontmatter block"):
        await frontmatter_of("# no frontmatter\n")
    with pytest.raises(Mismatch, match="longer than"):
        await frontmatter_of("---\nname: " + "x" * 70_000 + "\n---\n")
    with pytest.raises(Mismatch, match="not a mapping"):
        await frontmatter_of("---\n- a\n- b\n---\n")
    parsed = await frontmatter_of("\ufeff---\r\nname: demo\r\ndate: 2026-01-01\r\n---\r\nbody")
    assert parsed == {"name": "demo", "date": "2026-01-01"}


async def test_a_skill_the_listing_leaves_out_loads_by_its_uri_through_skills_get(
    served: tuple[str, Path],
) -> None:
    url, root = served
    (root / ".omit").write_text("code-review\n")
    async with MCPPool({"docs": {"url": url}}) as pool:
        skills = MCPSkills(pool)
        assert "docs:code-review" not in [s.id for s in await skills.list()]
        assert "Read the diff twice" in await skills.read("skill://code-review/SKILL.md")
        assert "Read the diff twice" in await skills.read("docs:skill://code-review/SKILL.md")
        with pytest.raises(MCPSkillError, match=r"serves no skill at 'skill://nothing/SKILL\.md'"):
            await skills.read("skill://nothing/SKILL.md")
    gets = [e["uri"] for e in fixture.log(root) if e["method"] == "skills/get"]
    assert gets == [
        "skill://code-review/SKILL.md",
        "skill://code-review/SKILL.md",
        "skill://nothing/SKILL.md",
    ]
    assert fixture.reads(root) == ["skill://code-review/SKILL.md", "skill://code-review/SKILL.md"]
