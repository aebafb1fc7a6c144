"""``sampling/createMessage`` answered by a LangChain chat model (or by a person's text)."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

__all__ = ["run_sampling_model", "text_result"]


def _messages(params: types.CreateMessageRequestParams) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    if params.system_prompt:
        messages.append(SystemMessage(params.system_prompt))
    for message in params.messages:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        content: list[str | dict[str, Any]] = []
        for block in blocks:
            if isinstance(block, types.TextContent):
                content.append({"type": "text", "text": block.text})
            elif isinstance(block, types.ImageContent):
                content.append({"type": "image", "base64": block.data, "mime_type": block.mime_type})
            elif isinstance(block, types.AudioContent):
                content.append({"type": "audio", "base64": block.data, "mime_type": block.mime_type})
            else:
                content.append({"type": "text", "text": json.dumps(block.model_dump(mode="json"))})
        only = content[0] if len(content) == 1 else None
        value: Any = only["text"] if isinstance(only, dict) and only["type"] == "text" else content
        messages.append(HumanMessage(value) if message.role == "user" else AIMessage(value))
    return messages


async def run_sampling_model(
    model: BaseChatModel, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    """Ask ``model`` what the server asked to sample."""
    kwargs: dict[str, Any] = {}
    if params.stop_sequences:
        kwargs["stop"] = params.stop_sequences
    reply = await model.ainvoke(_messages(params), **kwargs)
    name = str(getattr(model, "model_name", None) or getattr(model, "model", None) or type(model).__name__)
    return text_result(reply.text, model=name)


def text_result(text: str, *, model: str = "human") -> types.CreateMessageResult:
    """A sampling result carrying ``text``."""
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=text),
        model=model,
        stop_reason="endTurn",
    )
