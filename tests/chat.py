"""A chat model that plays a fixed script, for agent tests (no network).

``ScriptModel(turns=[...])``: the n-th model call in a conversation returns ``turns[n]``: a list of
``(tool name, args, call id)`` tool calls, or a text reply. n is the number of AI messages so far
(or, with ``by_call=True``, of calls made). Past the script it answers with the contents of the
tool messages since the last AI message. Every call records the names and JSON schemas of the
tools it was given in ``seen``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

Turn = list[tuple[str, dict[str, Any], str]] | str


class ScriptModel(BaseChatModel):
    turns: list[Any] = Field(default_factory=list)
    seen: list[dict[str, Any]] = Field(default_factory=list)
    """One entry per model call: ``{tool name: parameters schema}``."""
    tools_given: dict[str, Any] = Field(default_factory=dict)
    by_call: bool = False
    """Pick the turn by the number of calls made so far, not by the AI messages in the input
    (for histories that middleware rewrites)."""

    @property
    def _llm_type(self) -> str:
        return "script"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, BaseMessage]:
        given = {}
        for t in tools:
            spec = convert_to_openai_tool(t)["function"]
            given[spec["name"]] = spec.get("parameters", {})
        # The copy shares ``seen`` (a list), so the test's model object sees every call.
        return self.model_copy(update={"tools_given": given})

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.seen.append(dict(self.tools_given))
        n = len(self.seen) - 1 if self.by_call else sum(isinstance(m, AIMessage) for m in messages)
        if n < len(self.turns):
            turn = self.turns[n]
            if isinstance(turn, str):
                message = AIMessage(turn)
            else:
                message = AIMessage("", tool_calls=[{"name": a, "args": b, "id": c} for a, b, c in turn])
        else:
            last_ai = max(i for i, m in enumerate(messages) if isinstance(m, AIMessage))
            results = [m for m in messages[last_ai + 1 :] if isinstance(m, ToolMessage)]
            message = AIMessage("\n".join(f"{m.name}: {m.text}" for m in results) or "done")
        return ChatResult(generations=[ChatGeneration(message=message)])
