"""MCP skills in a deep agent: ``create_deep_agent(middleware=[MCPSkillsMiddleware(...)])`` next to
deepagents' own skills from a local folder, one of which has the same name as an MCP skill."""

from __future__ import annotations

from pathlib import Path

from deepagents import create_deep_agent
from deepagents.backends import FilesystemBackend
from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_mcp import MCPPool
from langgraph_mcp.skills import MCPSkillsMiddleware
from tests.chat import ScriptModel
from tests.conftest_servers import serve_in_loop
from tests.helpers import thread
from tests.servers import skills as fixture

LOCAL_SKILL = "---\nname: pdf-processing\ndescription: The local PDF skill\n---\n\nUse the local tools.\n"


async def test_a_deep_agent_loads_an_mcp_skill_beside_a_local_one_of_the_same_name(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    fixture.write_bundled(root)
    local = tmp_path / "local" / "skills" / "pdf-processing"
    local.mkdir(parents=True)
    (local / "SKILL.md").write_text(LOCAL_SKILL)
    async with (
        serve_in_loop(fixture.build_server("docs", root)) as url,
        MCPPool({"docs": {"url": url}}) as pool,
    ):
        model = ScriptModel([[("load_skill", {"skill": "docs:pdf-processing"}, "c1")], "done"])
        agent = create_deep_agent(
            model,
            middleware=[MCPSkillsMiddleware(pool)],
            skills=["/skills/"],
            backend=FilesystemBackend(root_dir=tmp_path / "local", virtual_mode=True),
            checkpointer=InMemorySaver(),
        )
        out = await agent.ainvoke({"messages": [HumanMessage("fill the form")]}, thread("t1"))
        system = model.calls[0].messages[0]
        assert isinstance(system, SystemMessage)
        text = str(system.content)
        # deepagents lists its local skill; ours lists the MCP one by id, marked as not the local one.
        assert "The local PDF skill" in text
        assert '`docs:pdf-processing` (server "docs") (not the local skill of the same name)' in text
        (loaded,) = [m for m in out["messages"] if isinstance(m, ToolMessage) and m.name == "load_skill"]
        assert 'from MCP server "docs"' in str(loaded.content) and "To fill a form" in str(loaded.content)
        assert "Use the local tools" not in str(loaded.content)
        assert fixture.reads(root) == ["skill://pdf-processing/SKILL.md"]
        assert "docs:pdf-processing" in out["mcp_skills"]
