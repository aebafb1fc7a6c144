"""The offline chat model of the demo graphs (no API key, no network).

Select it with ``LANGGRAPH_MCP_MODEL=scripted`` (or the assistant's configurable
``{"model": "scripted"}``). It is :class:`langgraph_mcp.testing.ScriptedChatModel` reading the
last human message line by line: a line ``tool_name {"json": "args"}`` (arguments optional)
becomes a call to that tool; once the tools have answered, it replies with their results, one
line per call. A name the model was not given is answered in text, not called, since people
type to this model.
"""

from __future__ import annotations

from langgraph_mcp.testing import ScriptedChatModel


def scripted_model() -> ScriptedChatModel:
    """The model for ``"scripted"``: tool calls read from the conversation, unknown names answered."""
    return ScriptedChatModel(unbound="reply")
