"""The one MCP pool of this server process, shared by every graph and closed by ``graphs.app``,
and the state every graph's own state extends.

The servers come from the file named by ``LANGGRAPH_MCP_CONFIG`` (standard ``mcpServers``
JSON, ``${VAR}`` expanded), by default ``graphs/mcp.json``: the bundled demo servers.
Importing this module reads that file and does nothing else: servers start on first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

from langgraph.graph import MessagesState
from langgraph.graph.ui import AnyUIMessage, ui_message_reducer

from langgraph_mcp import MCPPool
from langgraph_mcp.apps import MCPAppCallsState
from langgraph_mcp.deploy import config_path

CONFIG = config_path(Path(__file__).with_name("mcp.json"))

pool = MCPPool(CONFIG)


class ChatState(MessagesState, MCPAppCallsState):
    """Messages, and the generative-UI messages shown next to them (``ui``): with this key a
    tool call's progress bar (``mcp-progress``, ``ui/``) stays in the thread once the call ended;
    without it the bar is only streamed while the call runs. ``mcp_app_calls`` holds the last call
    an MCP Apps view made (``langgraph_mcp.apps``), apart from the model's messages."""

    ui: Annotated[Sequence[AnyUIMessage], ui_message_reducer]
