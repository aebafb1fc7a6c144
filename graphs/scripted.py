"""A chat model that plays the LLM offline, for demos and tests (no API key, no network).

Select it with ``LANGGRAPH_MCP_MODEL=scripted`` (or the assistant's configurable
``{"model": "scripted"}``). It reads the last human message line by line: a line
``tool_name {"json": "args"}`` (arguments optional) becomes a call to that tool if it is bound;
once the tools have answered, it replies with their results, one line per call.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool


class ScriptedChatModel(BaseChatModel):
    """Turns ``name {args}`` lines into tool calls, then reports the results."""

    tool_names: tuple[str, ...] = ()

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, BaseMessage]:
        names = tuple(convert_to_openai_tool(t)["function"]["name"] for t in tools)
        return self.model_copy(update={"tool_names": names})

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages))])

    def _reply(self, messages: list[BaseMessage]) -> AIMessage:
        last_human = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
        results = [m for m in messages[last_human + 1 :] if isinstance(m, ToolMessage)]
        if results:
            return AIMessage("\n".join(f"{m.name}: {m.text}" for m in results))
        text = messages[last_human].text if last_human >= 0 else ""
        calls, unknown = [], []
        for line in text.splitlines():
            name, _, args = line.strip().partition(" ")
            if not name:
                continue
            if name not in self.tool_names:
                unknown.append(name)
                continue
            try:
                parsed = json.loads(args) if args.strip() else {}
            except json.JSONDecodeError as exc:
                return AIMessage(f"I could not read the arguments for {name}: {exc}")
            calls.append({"name": name, "args": parsed, "id": f"call_{uuid.uuid4().hex[:12]}"})
        if calls:
            return AIMessage("", tool_calls=calls)
        said = f"I have no tool named {', '.join(unknown)}. " if unknown else ""
        return AIMessage(
            f"{said}Write one line per call, `tool_name {{json args}}`. Tools: {', '.join(self.tool_names)}"
        )
