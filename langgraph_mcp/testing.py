"""A chat model that plays a script, to test MCP agents offline (no API key, no network).

:class:`ScriptedChatModel` stands in for a real chat model anywhere one is bound to tools:
``create_agent(model, middleware=[MCPMiddleware(...)])``, ``create_mcp_agent(model, ...)``, or
``model.bind_tools(await node.get_tools())`` in a graph of your own. Unlike langchain's
``GenericFakeChatModel`` it supports ``bind_tools``, and it records which tools (and their JSON
schemas) every model call was given, so a test can check what the model saw as well as what the
tools did::

    from langchain.agents import create_agent
    from langgraph_mcp import MCPMiddleware
    from langgraph_mcp.testing import ScriptedChatModel

    model = ScriptedChatModel([[("add", {"a": 2, "b": 40})]])
    async with MCPMiddleware({"math": {"command": "math-server"}}) as mcp:
        agent = create_agent(model, middleware=[mcp])
        out = await agent.ainvoke({"messages": [("user", "add 2 and 40")]})
    print(out["messages"][-1].text)  # the final answer: "add: " and the tool's result
    assert "add" in model.calls[0].tools  # the model was offered the server's add tool

The script is either a list of turns given up front (``ScriptedChatModel(turns)``) or, with no
turns, read from the conversation: each line ``tool_name {"json": "args"}`` of the last human
message becomes a call (``ScriptedChatModel()``).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field

__all__ = ["ModelCall", "ScriptedCall", "ScriptedChatModel", "Turn", "TurnBy", "UnboundPolicy"]

ScriptedCall: TypeAlias = tuple[str, Mapping[str, Any]] | tuple[str, Mapping[str, Any], str] | ToolCall
"""One tool call of a scripted turn: ``(name, args)``, ``(name, args, call_id)`` or a langchain
``ToolCall`` dict. Without an id, each reply gets a fresh unique one (``call_<hex>``)."""

Turn: TypeAlias = str | AIMessage | Sequence[ScriptedCall]
"""One scripted model reply: a list of tool calls (made in parallel, in one AI message), a text
answer, or an ``AIMessage`` returned as written (a copy, with ids filled in for its tool calls)."""

UnboundPolicy: TypeAlias = Literal["raise", "reply", "call"]
"""What a scripted call of a tool the model was not given does (see
:attr:`ScriptedChatModel.unbound`)."""

TurnBy: TypeAlias = Literal["ai_messages", "calls"]
"""How the next turn is picked (see :attr:`ScriptedChatModel.turn_by`)."""


@dataclass(frozen=True)
class ModelCall:
    """What one call of a :class:`ScriptedChatModel` was given, and what it answered."""

    tools: dict[str, dict[str, Any]]
    """The tools bound for this call, by name: each tool's parameters as a JSON schema (what a
    provider would be sent). Empty when no tools were bound."""
    messages: list[BaseMessage]
    """The input messages of the call, in order."""
    reply: AIMessage
    """The message the model returned."""


class ScriptedChatModel(BaseChatModel):
    """A chat model that replays a script of tool calls, then answers with the tools' results.

    Args:
        turns: The model's replies in order, one per turn (see :data:`Turn`)::

                ScriptedChatModel([
                    [("search", {"q": "mcp"}), ("add", {"a": 1, "b": 2}, "call_add")],  # parallel calls
                    [("read", {"id": 7})],  # a second round, after the results of the first
                    "All done.",  # a text answer ends the agent loop
                ])

            Once the script is played out, every further call gives the final answer: one line
            ``tool_name: result text`` per tool message since the last AI message, or ``done``
            when there is none. With ``turns=None`` (the default) the script is read from the
            conversation instead: each non-empty line ``tool_name {"json": "args"}`` (arguments
            optional) of the last human message becomes one call of a single turn, and the next
            call gives the final answer. A line whose arguments are not a JSON object is answered
            in text, as a model would; with no lines at all the model says how to write them.
        turn_by: How the next turn is picked. ``"ai_messages"`` (the default): turn *n* where *n*
            is the number of AI messages in the input, so each conversation (thread) plays the
            script from its start and a model object can serve several threads. ``"calls"``: turn
            *n* at the model's *n*-th call, counted over every call of this object and the models
            ``bind_tools`` made from it; for histories that middleware rewrites (summarisation,
            trimming), where counting AI messages would replay turns.
        unbound: What a scripted call of a tool the model was not given (by ``bind_tools`` for
            this call) does. ``"raise"`` (the default): the call of the model raises
            ``ValueError`` naming the tool and the tools that were bound, so a misspelt or
            filtered-out tool fails the test where it happens. ``"reply"``: the call is left out,
            and the reply says in its text that there is no such tool (what a careful model
            does; right for a demo that people type to). ``"call"``: the call is made anyway, to
            test that the tool side refuses a call of a tool the model was not offered.

    Every call of the model (sync or async) is recorded in :attr:`calls`. ``bind_tools`` returns
    a copy that knows its tools and shares the record, so the object a test built sees the calls
    of every model an agent bound from it. A model object records the calls of all its runs:
    clear ``calls`` between runs, or build one per test.

    Raises:
        ValueError: At construction, for a turn that is not one of the forms of :data:`Turn`; at a
            call, for a scripted call of an unbound tool when ``unbound="raise"``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    turns: list[AIMessage] | None = None
    """The script as AI messages (``None``: read from the conversation); calls without an id have
    ``id=None`` here and get a fresh one in each reply."""
    turn_by: TurnBy = "ai_messages"
    """How the next turn is picked (see the class)."""
    unbound: UnboundPolicy = "raise"
    """What a scripted call of a tool the model was not given does (see the class)."""
    calls: list[ModelCall] = Field(default_factory=list)
    """One entry per call of the model, in order: the tools it was given, its input, its reply."""
    bound_tools: dict[str, dict[str, Any]] | None = None
    """The tools of the last ``bind_tools`` (name: parameters schema); ``None`` if never bound."""

    def __init__(
        self,
        turns: Sequence[Turn] | None = None,
        *,
        turn_by: TurnBy = "ai_messages",
        unbound: UnboundPolicy = "raise",
        **kwargs: Any,
    ) -> None:
        if isinstance(turns, str | AIMessage):
            raise ValueError(
                "ScriptedChatModel: turns is a list of turns; for one text answer write [text], "
                "for one turn of calls [[(name, args)]]"
            )
        script = None if turns is None else [_turn_message(turn, n) for n, turn in enumerate(turns)]
        if turn_by not in ("ai_messages", "calls"):
            raise ValueError(f"turn_by must be 'ai_messages' or 'calls', not {turn_by!r}")
        if unbound not in ("raise", "reply", "call"):
            raise ValueError(f"unbound must be 'raise', 'reply' or 'call', not {unbound!r}")
        fields: dict[str, Any] = {"turns": script, "turn_by": turn_by, "unbound": unbound}
        super().__init__(**fields, **kwargs)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """A copy of this model that offers ``tools`` (any form langchain converts: ``BaseTool``,
        functions, pydantic models, JSON schema dicts) and shares :attr:`calls` with this one.

        ``tool_choice`` and other provider options are accepted and ignored.
        """
        given: dict[str, dict[str, Any]] = {}
        for tool in tools:
            spec = convert_to_openai_tool(tool)
            function = spec.get("function")
            if isinstance(function, dict):
                given[str(function["name"])] = dict(function.get("parameters") or {})
            else:  # a provider's built-in tool, passed through as written
                given[str(spec.get("name") or spec.get("type"))] = {}
        return self.model_copy(update={"bound_tools": given})

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._play(messages))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._play(messages))])

    def _play(self, messages: list[BaseMessage]) -> AIMessage:
        # One call at a time: with turn_by="calls", counting the calls and recording this one
        # must not interleave with a call in another thread (a turn played twice, one skipped).
        with _playing:
            return self._play_one(messages)

    def _play_one(self, messages: list[BaseMessage]) -> AIMessage:
        tools = dict(self.bound_tools or {})
        if self.turns is None:
            reply = self._from_conversation(messages, tools)
        else:
            n = (
                len(self.calls)
                if self.turn_by == "calls"
                else sum(isinstance(m, AIMessage) for m in messages)
            )
            reply = self._turn(n, tools) if n < len(self.turns) else _final_answer(messages)
        self.calls.append(ModelCall(tools=tools, messages=list(messages), reply=reply))
        return reply

    def _turn(self, n: int, tools: dict[str, dict[str, Any]]) -> AIMessage:
        assert self.turns is not None
        template = self.turns[n]
        calls = [
            ToolCall(name=call["name"], args=call["args"], id=call["id"] or _new_id(), type="tool_call")
            for call in template.tool_calls
        ]
        kept, unknown = self._check_bound(calls, tools, f"turn {n}")
        reply = template.model_copy(deep=True, update={"tool_calls": kept})
        if unknown:
            reply.content = _no_such_tool(unknown)
        return reply

    def _from_conversation(self, messages: list[BaseMessage], tools: dict[str, dict[str, Any]]) -> AIMessage:
        last_human = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
        if any(isinstance(m, AIMessage) for m in messages[last_human + 1 :]):
            return _final_answer(messages)
        text = messages[last_human].text if last_human >= 0 else ""
        calls: list[ToolCall] = []
        for line in text.splitlines():
            name, _, raw = line.strip().partition(" ")
            if not name:
                continue
            try:
                args = json.loads(raw) if raw.strip() else {}
            except json.JSONDecodeError as exc:
                return AIMessage(f"I could not read the arguments for {name}: {exc}")
            if not isinstance(args, dict):
                return AIMessage(f"I could not read the arguments for {name}: they must be a JSON object")
            calls.append(ToolCall(name=name, args=args, id=_new_id(), type="tool_call"))
        kept, unknown = self._check_bound(calls, tools, "the last human message")
        if kept:
            return AIMessage(_no_such_tool(unknown) if unknown else "", tool_calls=kept)
        said = f"{_no_such_tool(unknown)} " if unknown else ""
        return AIMessage(
            f"{said}Write one line per call, `tool_name {{json args}}`. Tools: {', '.join(tools) or 'none'}"
        )

    def _check_bound(
        self, calls: list[ToolCall], tools: dict[str, dict[str, Any]], where: str
    ) -> tuple[list[ToolCall], list[str]]:
        """The calls to make and the names left out, by the ``unbound`` policy."""
        unknown = [call["name"] for call in calls if call["name"] not in tools]
        if not unknown or self.unbound == "call":
            return calls, []
        if self.unbound == "raise":
            if self.bound_tools is None:
                given = "no tools: bind_tools was never called (give the agent tools, or MCPMiddleware)"
            else:
                given = f"only {', '.join(sorted(tools))}" if tools else "no tools"
            raise ValueError(
                f"ScriptedChatModel: {where} calls {', '.join(map(repr, unknown))}, but this model call "
                f"was given {given}. Pass unbound='call' to script a call of a tool the model was "
                "not offered on purpose."
            )
        return [call for call in calls if call["name"] in tools], unknown


_playing = threading.RLock()


def _new_id() -> str:
    return f"call_{uuid.uuid4().hex[:12]}"


def _no_such_tool(names: list[str]) -> str:
    return f"I have no tool named {', '.join(names)}."


def _final_answer(messages: list[BaseMessage]) -> AIMessage:
    """One line ``name: text`` per tool result since the last AI message, or ``done``.

    A result of several text blocks (a tool that returned a list) reads ``a, b, c``, not ``abc``.
    """
    last_ai = max((i for i, m in enumerate(messages) if isinstance(m, AIMessage)), default=-1)
    results = [m for m in messages[last_ai + 1 :] if isinstance(m, ToolMessage)]
    return AIMessage("\n".join(f"{m.name}: {_result_text(m)}" for m in results) or "done")


def _result_text(message: ToolMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    texts = [
        block if isinstance(block, str) else str(block.get("text", ""))
        for block in message.content
        if isinstance(block, str) or block.get("type") == "text"
    ]
    return ", ".join(texts)


def _turn_message(turn: Turn, n: int) -> AIMessage:
    """A turn of the script as an AI message (tool calls without an id keep ``id=None``)."""
    if isinstance(turn, str):
        return AIMessage(turn)
    if isinstance(turn, AIMessage):
        return turn
    if isinstance(turn, Sequence) and not isinstance(turn, bytes | bytearray):
        return AIMessage("", tool_calls=[_tool_call(call, n, i) for i, call in enumerate(turn)])
    raise ValueError(
        f"ScriptedChatModel: turn {n} is a {type(turn).__name__}; a turn is a text answer, an AIMessage "
        "or a list of tool calls"
    )


def _tool_call(call: Any, n: int, i: int) -> ToolCall:
    name: Any
    args: Any
    call_id: Any = None
    if isinstance(call, Mapping):
        name, args, call_id = call.get("name"), call.get("args", {}), call.get("id")
    elif isinstance(call, tuple) and len(call) in (2, 3):
        name, args = call[0], call[1]
        call_id = call[2] if len(call) == 3 else None
    else:
        name = args = None
    if not (isinstance(name, str) and name and isinstance(args, Mapping)) or not (
        call_id is None or isinstance(call_id, str)
    ):
        raise ValueError(
            f"ScriptedChatModel: call {i} of turn {n} is {call!r}; a call is (name, args), "
            "(name, args, call_id) or a ToolCall dict, with a str name, a dict of args and a str id"
        )
    return ToolCall(name=name, args=dict(args), id=call_id, type="tool_call")
