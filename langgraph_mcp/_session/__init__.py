"""The session layer: transports, the owner task, the connection, request routing.

It knows MCP and nothing above it (no tools, no graphs, no interrupts, no LangGraph import; an
import contract in the tests enforces it). The layers above reach it through
:class:`ServerConnection` and the :class:`CallSink` protocol.
"""

from langgraph_mcp._session.calls import Round
from langgraph_mcp._session.clock import CallClock, CallStats
from langgraph_mcp._session.connection import ServerConnection
from langgraph_mcp._session.era import Era
from langgraph_mcp._session.loops import LoopScope
from langgraph_mcp._session.routing import ABANDON_GRACE, SAMPLING_REQUESTS_MAX, CallSink

__all__ = [
    "ABANDON_GRACE",
    "SAMPLING_REQUESTS_MAX",
    "CallClock",
    "CallSink",
    "CallStats",
    "Era",
    "LoopScope",
    "Round",
    "ServerConnection",
]
