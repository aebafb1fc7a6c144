"""A prebuilt MCP agent (``create_agent`` + ``MCPMiddleware``), run synchronously and offline.

Shows hidden arguments (the notebook's owner comes from the run context, not the model),
a result written into the agent's state, approval before a destructive tool (answered here
by code: an edit), and plain ``agent.invoke``. A scripted stand-in plays the chat model.

    uv run examples/agent.py
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from langchain.agents import AgentState
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langgraph_mcp import FromContext, ResultToState, ToolOptions, create_mcp_agent
from langgraph_mcp.testing import ScriptedChatModel

SERVERS: dict[str, Any] = {
    "notes": {"command": sys.executable, "args": ["-m", "langgraph_mcp.demo", "notes"]},
}


@dataclass
class Context:
    owner: str


class NotesState(AgentState[Any]):
    found: list[str]


def main() -> None:
    agent = create_mcp_agent(
        ScriptedChatModel(),
        SERVERS,
        tool_options={
            # The model never sees or chooses `title`: each owner writes to their own note.
            "write_note": ToolOptions(hidden={"title": FromContext("owner")}),
            # The titles found go into the agent's state, next to the ToolMessage.
            "search_notes": ToolOptions(result=ResultToState(update={"found": "result"})),
        },
        # Ask before writing. (approval="destructive" would ask before every tool whose MCP
        # annotations do not say readOnlyHint or destructiveHint=false: all of this server's.)
        approval=["write_note"],
        state_schema=NotesState,
        context_schema=Context,
        checkpointer=InMemorySaver(),
    )
    thread = {"configurable": {"thread_id": "demo"}}
    ask = 'search_notes {"query": "a"}\nwrite_note {"text": "buy flour", "title": "forged"}'
    try:
        out = agent.invoke({"messages": [("user", ask)]}, thread, context=Context(owner="ada"))
        (pending,) = out["__interrupt__"]
        value = pending.value
        print(f"approval asked: {value['name']} {value['args']} ({value['description']})")
        decision = {"type": "edit", "edited_action": {"name": "write_note", "args": {"text": "buy oat milk"}}}
        out = agent.invoke(Command(resume=decision), thread, context=Context(owner="ada"))
    finally:
        agent.mcp.close()
    for message in out["messages"]:
        if isinstance(message, ToolMessage):
            # A tool that returns a list (search_notes) gives one text block per item.
            texts = [b if isinstance(b, str) else b.get("text", "") for b in message.content_blocks]
            print(f"[{message.name}] {', '.join(texts)} ({message.status})")
    print(f"found in state: {out['found']}")
    final = out["messages"][-1]
    assert isinstance(final, AIMessage)
    print(f"agent: {final.text}")


if __name__ == "__main__":
    main()
