"""The one MCP pool of this server process, shared by every graph and closed by ``graphs.app``.

The servers come from the file named by ``LANGGRAPH_MCP_CONFIG`` (standard ``mcpServers``
JSON, ``${VAR}`` expanded), by default ``graphs/mcp.json``: the bundled demo servers.
Importing this module reads that file and does nothing else: servers start on first use.
"""

from __future__ import annotations

from pathlib import Path

from langgraph_mcp import MCPPool
from langgraph_mcp.deploy import config_path

CONFIG = config_path(Path(__file__).with_name("mcp.json"))

pool = MCPPool(CONFIG)
