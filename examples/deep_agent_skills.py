"""MCP skills in a deep agent: loaded on demand from an MCP server, approved by a person.

A deepagents agent (``create_deep_agent``) gets two kinds of skills side by side:

* its own, local ones (deepagents' ``skills=["/"]`` over ``examples/local_skills/``): here one
  called ``release-notes``;
* those of an MCP server, through ``MCPSkillsMiddleware``: ``examples/servers/skills_server.py``
  over stdio, serving ``examples/skills/``, which has a ``release-notes`` skill too.

They stay apart: the MCP one is ``skills:release-notes`` (``<server>:<skill path>``) and the model
is told it is not the local skill of the same name. The model (a scripted one: offline, no API
key) loads the MCP skill, which asks a person first (``approval=True``; the question shows every
file of the skill with its digest, and the approval holds for exactly those files), then reads
the template the skill refers to. Each file is read from the server only then, and checked
against the server's listing (size, SHA-256 digest, frontmatter) before the model sees it.

    uv run examples/deep_agent_skills.py           # answer on the terminal (n: each load is refused)
    uv run examples/deep_agent_skills.py --auto    # approve automatically (also without a terminal)
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import textwrap
from pathlib import Path
from typing import Any

from deepagents import create_deep_agent
from deepagents.backends import FilesystemBackend
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langgraph_mcp import MCPPool
from langgraph_mcp.skills import MCPSkillsMiddleware
from langgraph_mcp.testing import ScriptedChatModel

HERE = Path(__file__).resolve().parent
SKILLS_SERVER = HERE / "servers" / "skills_server.py"
LOCAL_SKILLS = HERE / "local_skills"

SCRIPT = [
    [("load_skill", {"skill": "skills:release-notes"}, "call_skill")],
    [("load_skill", {"skill": "skills:release-notes", "file": "templates/notes.md"}, "call_template")],
    "Send me the merged changes and I will write the notes.",  # (scripted: said whatever happened)
]


def text_of(message: BaseMessage) -> str:
    """A message's text (deepagents' system message is a list of text blocks)."""
    if isinstance(message.content, str):
        return message.content
    return "".join(b if isinstance(b, str) else b.get("text", "") for b in message.content)


def section(system: str, heading: str = "## Skills from MCP servers") -> str:
    """The part of the system prompt under ``heading`` (up to the next heading of its level)."""
    start = system.find(heading)
    if start < 0:
        return "(no such section)"
    end = system.find("\n## ", start + len(heading))
    return system[start : end if end >= 0 else None].strip()


def shorten(text: str, lines: int = 14, width: int = 110) -> str:
    """The first ``lines`` lines of ``text``, each cut to ``width`` characters."""
    rows = text.splitlines()
    shown = [textwrap.shorten(r, width, placeholder=" ...") if len(r) > width else r for r in rows[:lines]]
    if len(rows) > lines:
        shown.append(f"... ({len(rows) - lines} more lines)")
    return "\n".join(shown)


def decide(question: dict[str, Any], auto: bool) -> dict[str, Any]:
    """Show a ``skill_approval`` question and return the decision (approve or reject)."""
    print(f"\n[{question['server']}] {question['action_requests'][0]['description']}")
    print(f"  skill {question['skill']} ({question['uri']}), files:")
    for file in question["files"]:
        print(f"    {file['path']:<22} {file['size']:>5} bytes  {file['digest'][:23]}...")
    if auto:
        print("  approve? [y/n] y (--auto)")
        return {"type": "approve"}
    while True:
        try:
            answer = input("  approve? [y/n] ").strip().lower()
        except EOFError:  # no one to answer: not approved
            answer = "n"
        if answer in ("y", "yes"):
            return {"type": "approve"}
        if answer in ("n", "no"):
            return {"type": "reject", "message": "The person did not want this skill loaded."}
        print("    answer y or n")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--auto", action="store_true", help="approve automatically")
    ns = parser.parse_args()
    auto = ns.auto or not sys.stdin.isatty()

    server = {"command": sys.executable, "args": [str(SKILLS_SERVER)]}
    async with MCPPool({"skills": server}) as pool:
        model = ScriptedChatModel(SCRIPT)
        agent = create_deep_agent(
            model,
            middleware=[MCPSkillsMiddleware(pool, approval=True)],
            skills=["/"],  # deepagents' own skills: the folders of LOCAL_SKILLS
            backend=FilesystemBackend(root_dir=LOCAL_SKILLS, virtual_mode=True),
            checkpointer=InMemorySaver(),  # use a SQLite/Postgres saver to survive restarts
        )
        thread = {"configurable": {"thread_id": "release"}}

        out = await agent.ainvoke({"messages": [HumanMessage("Write the notes for 2.4.0.")]}, thread)
        system = text_of(model.calls[0].messages[0])
        print("What the model was shown about MCP skills (its system prompt):\n")
        print(textwrap.indent(section(system), "  "))
        local = [line for line in system.splitlines() if line.startswith("- **release-notes**")]
        print("\nand, from deepagents' own skills section, the local one:")
        print(f"  {local[0] if local else '(none)'}")

        while pending := out.get("__interrupt__"):
            question = pending[0].value
            print(f"\n--- the agent is paused: {question['type']} ---")
            decision = decide(question, auto)
            out = await agent.ainvoke(Command(resume={"decisions": [decision]}), thread)

        print("\ntool results:")
        for message in out["messages"]:
            if isinstance(message, ToolMessage) and message.name == "load_skill":
                print(f"\n[{message.tool_call_id}] ({message.status})")
                print(textwrap.indent(shorten(str(message.content)), "  "))
        final = out["messages"][-1]
        if isinstance(final, AIMessage):
            print(f"\nagent: {final.content}")
        print(f"\nloaded in the thread's state: {sorted(out.get('mcp_skills', {}))}")


if __name__ == "__main__":
    asyncio.run(main())
