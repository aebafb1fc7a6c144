"""``sampling/createMessage`` answered by a LangChain chat model (or by a person's text).

A request may offer the model tools (``tools``, ``toolChoice``: 2025-11-25 and later). The
client declares ``sampling.tools`` when the server's ``sampling_model`` can be given tools (it
implements ``bind_tools``; see ``ServerConfig.samples_with_tools``). The tool loop is the
server's: the model is bound to the offered tools, and its tool calls go back to the server as
``tool_use`` content with ``stopReason: "toolUse"``; the server runs the tools and asks again
with ``tool_result`` content, which becomes LangChain ``ToolMessage``s (and ``tool_use`` in an
assistant message an ``AIMessage`` with ``tool_calls``).

A request is checked before a person or a model sees it (:func:`check_request`): at most
:data:`MAX_SAMPLING_TOOLS` tools, :data:`MAX_SAMPLING_TOOLS_JSON` characters of JSON for all of
them, each with a plain name (:data:`TOOL_NAME`), unique, and an ``inputSchema`` a model can be
given (:func:`~langgraph_mcp._support.schema.schema_problem`); ``tool_use`` only in assistant
messages, ``tool_result`` only in user messages and only for a ``tool_use`` before it. A request
that fails is refused (:class:`UnfitSampling`), as is a model's answer that breaks the request's
``toolChoice`` (a tool call under ``"none"``, none under ``"required"``) or calls a tool it was not
offered.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import mcp_types as types
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolCall, ToolMessage

from langgraph_mcp._support.sanitise import sanitise_text
from langgraph_mcp._support.schema import model_schema, schema_problem, short_text
from langgraph_mcp.errors import MCPError

__all__ = [
    "MAX_SAMPLING_TOOLS",
    "MAX_SAMPLING_TOOLS_JSON",
    "TOOL_NAME",
    "SamplingResult",
    "UnfitSampling",
    "check_request",
    "offered_tools",
    "run_sampling_model",
    "text_result",
    "wants_tools",
]

MAX_SAMPLING_TOOLS = 64
"""The most tools one sampling request may offer the model."""
MAX_SAMPLING_TOOLS_JSON = 262_144
"""The most characters of JSON the tools of one sampling request may take, all together."""
TOOL_NAME = re.compile(r"[A-Za-z0-9_./-]{1,128}")
"""What the name of a tool offered in a sampling request must match (MCP's tool name rule)."""

SamplingResult = types.CreateMessageResult | types.CreateMessageResultWithTools
"""An answer to a sampling request (with tools offered: one that may hold ``tool_use``)."""


class UnfitSampling(MCPError, ValueError):
    """A sampling request that is refused (its tools or content are malformed, or it offers
    tools this client did not declare), or a model's answer that does not fit the request."""


def wants_tools(params: types.CreateMessageRequestParams) -> bool:
    """Does the request use tools (``tools`` or ``toolChoice`` given)?"""
    return params.tools is not None or params.tool_choice is not None


def offered_tools(params: types.CreateMessageRequestParams) -> list[str]:
    """The names of the tools the request offers, in its order."""
    return [tool.name for tool in params.tools or ()]


def _mode(params: types.CreateMessageRequestParams) -> str:
    choice = params.tool_choice
    return (choice.mode if choice is not None else None) or "auto"


def check_request(params: types.CreateMessageRequestParams, *, tools_declared: bool) -> None:
    """Refuse a request a model should not be given (see the module docstring).

    Raises:
        UnfitSampling: saying why.
    """
    if wants_tools(params) and not tools_declared:
        raise UnfitSampling(
            "it offers tools, but this client did not declare sampling.tools (the sampling_model "
            "cannot be given tools, or none is configured)"
        )
    tools = params.tools or []
    if len(tools) > MAX_SAMPLING_TOOLS:
        raise UnfitSampling(f"it offers {len(tools)} tools, over the limit of {MAX_SAMPLING_TOOLS}")
    size = 0
    for tool in tools:  # stops at the first tool past the limit
        size += len(json.dumps(tool.model_dump(mode="json", by_alias=True), default=str))
        if size > MAX_SAMPLING_TOOLS_JSON:
            raise UnfitSampling(
                f"its tools are over {MAX_SAMPLING_TOOLS_JSON:,} characters of JSON, the limit"
            )
    seen: set[str] = set()
    for tool in tools:
        if not TOOL_NAME.fullmatch(tool.name):
            raise UnfitSampling(
                f"tool name {short_text(repr(tool.name))} is not 1 to 128 letters, digits, "
                "'_', '-', '.' or '/'"
            )
        if tool.name in seen:
            raise UnfitSampling(f"it offers tool {tool.name!r} twice")
        seen.add(tool.name)
        if tool.input_schema.get("type", "object") != "object":
            raise UnfitSampling(f"the inputSchema of tool {tool.name!r} is not of type object")
        problem = schema_problem(tool.input_schema)
        if problem is not None:
            raise UnfitSampling(f"the inputSchema of tool {tool.name!r} {problem}")
    if _mode(params) == "required" and not tools:
        raise UnfitSampling("its toolChoice is 'required', but it offers no tools")
    _check_messages(params.messages)


def _check_messages(messages: list[types.SamplingMessage]) -> None:
    uses: set[str] = set()
    for n, message in enumerate(messages):
        for block in message.content_as_list:
            if isinstance(block, types.ToolUseContent):
                if message.role != "assistant":
                    raise UnfitSampling(f"message {n} has tool_use content, but it is not the assistant's")
                if block.id in uses:
                    raise UnfitSampling(f"message {n} repeats the tool_use id {short_text(repr(block.id))}")
                uses.add(block.id)
            elif isinstance(block, types.ToolResultContent):
                if message.role != "user":
                    raise UnfitSampling(f"message {n} has tool_result content, but it is not the user's")
                if block.tool_use_id not in uses:
                    raise UnfitSampling(
                        f"message {n} has a tool_result for {short_text(repr(block.tool_use_id))}, "
                        "which no earlier tool_use has"
                    )


# -- MCP content -> LangChain messages ---------------------------------------------------------


def _media(block: Any) -> dict[str, Any]:
    if isinstance(block, types.TextContent):
        return {"type": "text", "text": block.text}
    if isinstance(block, types.ImageContent):
        return {"type": "image", "base64": block.data, "mime_type": block.mime_type}
    if isinstance(block, types.AudioContent):
        return {"type": "audio", "base64": block.data, "mime_type": block.mime_type}
    return {
        "type": "text",
        "text": json.dumps(block.model_dump(mode="json", by_alias=True, exclude_none=True)),
    }


def _value(content: list[dict[str, Any]]) -> Any:
    """Plain text when every block is text, else the blocks."""
    if all(block["type"] == "text" for block in content):
        return "\n".join(block["text"] for block in content)
    return content


def _tool_message(block: types.ToolResultContent, names: dict[str, str]) -> ToolMessage:
    content = [_media(item) for item in block.content]
    if not content and block.structured_content is not None:
        content = [{"type": "text", "text": json.dumps(block.structured_content, default=str)}]
    return ToolMessage(
        _value(content),
        tool_call_id=block.tool_use_id,
        name=names.get(block.tool_use_id),
        status="error" if block.is_error else "success",
    )


def _messages(params: types.CreateMessageRequestParams) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    if params.system_prompt:
        messages.append(SystemMessage(params.system_prompt))
    names: dict[str, str] = {}  # tool_use id -> tool name
    for message in params.messages:
        content: list[dict[str, Any]] = []
        calls: list[ToolCall] = []
        for block in message.content_as_list:
            if isinstance(block, types.ToolUseContent):
                names[block.id] = block.name
                calls.append(ToolCall(name=block.name, args=dict(block.input), id=block.id, type="tool_call"))
            elif isinstance(block, types.ToolResultContent):
                messages.append(_tool_message(block, names))
            else:
                content.append(_media(block))
        if message.role == "assistant":
            messages.append(AIMessage(_value(content) if content else "", tool_calls=calls))
        elif content:
            messages.append(HumanMessage(_value(content)))
    return messages


# -- running the model ---------------------------------------------------------------------------


def _tool_spec(tool: types.Tool) -> dict[str, Any]:
    description = sanitise_text(tool.description or tool.title or tool.name)
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": description,
            "parameters": model_schema(tool.input_schema),
        },
    }


async def run_sampling_model(
    model: BaseChatModel, params: types.CreateMessageRequestParams
) -> SamplingResult:
    """Ask ``model`` what the server asked to sample, with the tools it offers (the request is
    checked first by :func:`check_request`).

    Raises:
        UnfitSampling: the model's answer does not fit the request (see the module docstring).
    """
    kwargs: dict[str, Any] = {}
    if params.stop_sequences:
        kwargs["stop"] = params.stop_sequences
    mode = _mode(params)
    runnable: Any = model
    if params.tools and mode != "none":
        specs = [_tool_spec(tool) for tool in params.tools]
        # "any": LangChain's name for "must call a tool" (providers translate it).
        runnable = (
            model.bind_tools(specs, tool_choice="any") if mode == "required" else model.bind_tools(specs)
        )
    reply = await runnable.ainvoke(_messages(params), **kwargs)
    name = str(getattr(model, "model_name", None) or getattr(model, "model", None) or type(model).__name__)
    if not wants_tools(params):
        return text_result(reply.text, model=name)
    return _tools_result(reply, params, mode, name)


def _tools_result(
    reply: Any, params: types.CreateMessageRequestParams, mode: str, name: str
) -> SamplingResult:
    calls: list[ToolCall] = list(getattr(reply, "tool_calls", None) or [])
    if getattr(reply, "invalid_tool_calls", None):
        raise UnfitSampling("the sampling model made a tool call whose arguments cannot be read")
    if calls and mode == "none":
        raise UnfitSampling("the sampling model called a tool, but the request's toolChoice is 'none'")
    if not calls and mode == "required":
        raise UnfitSampling("the sampling model called no tool, but the request's toolChoice is 'required'")
    offered = set(offered_tools(params))
    unknown = sorted({call["name"] for call in calls} - offered)
    if unknown:
        raise UnfitSampling(
            f"the sampling model called {', '.join(map(repr, unknown))}, which the request does not offer"
        )
    text = reply.text
    if not calls:
        return types.CreateMessageResultWithTools(
            role="assistant",
            content=types.TextContent(type="text", text=text),
            model=name,
            stop_reason="endTurn",
        )
    blocks: list[types.SamplingMessageContentBlock] = (
        [types.TextContent(type="text", text=text)] if text else []
    )
    ids: set[str] = set()
    for call in calls:
        call_id = call.get("id") or ""
        if not call_id or call_id in ids:
            call_id = f"toolu_{uuid.uuid4().hex[:16]}"
        ids.add(call_id)
        blocks.append(
            types.ToolUseContent(type="tool_use", name=call["name"], id=call_id, input=dict(call["args"]))
        )
    return types.CreateMessageResultWithTools(
        role="assistant", content=blocks, model=name, stop_reason="toolUse"
    )


def text_result(text: str, *, model: str = "human") -> types.CreateMessageResult:
    """A sampling result carrying ``text``."""
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=text),
        model=model,
        stop_reason="endTurn",
    )
