"""The chat model of the agent tests: :class:`langgraph_mcp.testing.ScriptedChatModel`.

``ScriptModel(turns=[...])``: the n-th model call in a conversation returns ``turns[n]``: a list of
``(tool name, args, call id)`` tool calls, or a text reply (``turn_by="calls"`` counts calls made
instead of AI messages). Past the script it answers with the contents of the tool messages since
the last AI message. A scripted call of a tool the model was not given fails the run, unless the
test passes ``unbound="call"``. ``seen`` lists, per call, the tools it was given: ``{tool name:
parameters schema}``.
"""

from __future__ import annotations

from typing import Any

from langgraph_mcp.testing import ScriptedChatModel


class ScriptModel(ScriptedChatModel):
    @property
    def seen(self) -> list[dict[str, Any]]:
        """One entry per model call: ``{tool name: parameters schema}``."""
        return [call.tools for call in self.calls]
