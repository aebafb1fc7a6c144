"""``approving``: the agent ``scripts/agent_chat_ui.py`` serves next to the deployed graphs.

The deployed ``agent`` graph (``graphs/agent.py``) asks no approvals: its ``MCPToolNode`` has no
approval policy, and no assistant setting gives it one. This is the agent the docs describe for
Agent Chat UI instead (docs/how-to/agent-chat-ui.md): ``create_mcp_agent`` on the same servers
(``graphs/mcp.json``) and the same offline scripted model, approval asked for every ``add`` call,
a turn's approvals asked together (``approval_mode="batched"``, its default), and a made-up tool
result of the UI replaced by what really happened.
"""

from __future__ import annotations

from graphs.scripted import scripted_model
from graphs.shared import pool
from langgraph_mcp import create_mcp_agent

graph = create_mcp_agent(scripted_model(), pool, approval=["add"], name="approving")
