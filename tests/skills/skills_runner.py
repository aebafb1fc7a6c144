"""One phase of a durable skills scenario, in its own OS process (used by the tests).

    python tests/skills/skills_runner.py <start|approve|again> <sqlite db> <skills dir>

Builds the same agent each time (scripted model, ``MCPSkillsMiddleware(approval=True)``, the
``skills`` fixture server over stdio serving ``<skills dir>``) on a SQLite checkpoint, and starts,
resumes (approving) or continues the thread ``durable``. Prints one JSON line: ``{"interrupts":
[...], "tools": [[status, content, artifact], ...]}`` (the thread's tool messages).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.types import Command

from langgraph_mcp import MCPPool
from langgraph_mcp.skills import MCPSkillsMiddleware
from tests.chat import ScriptModel
from tests.conftest_servers import stdio_params

THREAD = {"configurable": {"thread_id": "durable"}}
LOAD = [("load_skill", {"skill": "docs:pdf-processing"}, "c1")]
TURNS = [
    LOAD,
    [("load_skill", {"skill": "docs:pdf-processing", "file": "references/FORMS.md"}, "c2")],
    "ok",
    LOAD,
    "ok",
]


async def main(phase: str, db: str, skills: str) -> None:
    server = stdio_params("skills", env={"SKILLS_DIR": skills})
    async with AsyncSqliteSaver.from_conn_string(db) as saver, MCPPool({"docs": server}) as pool:
        agent = create_agent(
            ScriptModel(TURNS), middleware=[MCPSkillsMiddleware(pool, approval=True)], checkpointer=saver
        )
        if phase == "start":
            out = await agent.ainvoke({"messages": [HumanMessage("fill the form")]}, THREAD)
        elif phase == "approve":
            out = await agent.ainvoke(Command(resume={"decisions": [{"type": "approve"}]}), THREAD)
        else:
            out = await agent.ainvoke({"messages": [HumanMessage("again")]}, THREAD)
    tools = [[m.status, str(m.content), m.artifact] for m in out["messages"] if isinstance(m, ToolMessage)]
    print(json.dumps({"interrupts": [i.value for i in out.get("__interrupt__", [])], "tools": tools}))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
