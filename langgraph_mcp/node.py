"""``MCPToolNode``: LangGraph's ``ToolNode`` with tools that live on MCP servers.

Everything ``ToolNode`` defines is inherited unchanged: the four input shapes,
output shapes and ``Command`` merging, ``handle_tool_errors`` and its error
templates, ``Command`` validation, ``wrap_tool_call`` / ``awrap_tool_call``,
state/store/runtime injection, and execution through ``BaseTool.ainvoke`` (so
callbacks, tracing and ``stream_mode="tools"`` work). What this class adds:

* the tool set: before each run it makes sure the MCP servers are connected and
  their current tools are registered next to the local ``tools``;
* in a checkpointed run with several calls, at least one of them on a server that
  may ask a person, each call runs as its own LangGraph task, so that every
  question surfaces at once and no answer can reach the wrong call.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain_core.messages import AnyMessage, ToolCall
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.errors import GraphInterrupt
from langgraph.func import task
from langgraph.prebuilt import ToolNode, ToolRuntime
from langgraph.prebuilt.tool_node import (
    AsyncToolCallWrapper,
    ToolCallWrapper,
    _default_handle_tool_errors,
    _get_all_injected_args,
)
from langgraph.runtime import Runtime
from langgraph.types import Interrupt
from pydantic import BaseModel

from langgraph_mcp.config import DEFAULT_CALL_TIMEOUT
from langgraph_mcp.elicitation import asks_a_person, durable_run
from langgraph_mcp.errors import MCPConnectionError
from langgraph_mcp.pool import MCPPool, OnConnectionError
from langgraph_mcp.tools import MCPTool, load_mcp_tools

__all__ = ["MCPToolNode"]


class _Batch:
    """The calls of one node run: interrupts are raised together, in call order, once every
    call settled."""

    def __init__(self, call_ids: list[str | None]) -> None:
        self.order = {call_id: i for i, call_id in enumerate(call_ids)}
        self.pending = len(call_ids)
        self.interrupts: list[tuple[int, Interrupt]] = []
        self.done = asyncio.Event()

    def settled(self) -> None:
        self.pending -= 1
        if self.pending == 0:
            self.done.set()

    async def interrupted(self, call_id: str | None, exc: GraphInterrupt) -> GraphInterrupt:
        position = self.order.get(call_id, len(self.order))
        self.interrupts.extend((position, i) for i in (exc.args[0] if exc.args else ()))
        self.settled()
        await self.done.wait()
        return GraphInterrupt(tuple(i for _, i in sorted(self.interrupts, key=lambda p: p[0])))


_BATCH: contextvars.ContextVar[_Batch | None] = contextvars.ContextVar("langgraph_mcp_batch", default=None)


async def _run_tool_call(thunk: Callable[[], Awaitable[Any]]) -> Any:
    return await thunk()


_tool_call_task: Any = task(name="mcp_tool_call")(_run_tool_call)  # type: ignore[arg-type]


class MCPToolNode(ToolNode):
    """A drop-in ``ToolNode`` whose tools live on MCP servers.

    Args:
        connections: An :class:`MCPPool` to share, or anything
            :func:`~langgraph_mcp.load_connections` accepts (a dict of servers,
            a JSON config path, an ``MCPServer``); the node then owns a pool.
        tools: Local LangChain tools (or callables) served by the same node.
            Their names win over MCP tool names.
        on_connection_error, default_timeout: For a pool the node creates; see
            :class:`MCPPool`.

    The remaining arguments are ``ToolNode``'s and mean exactly the same.

    Sessions open lazily on the first run (or with :meth:`start`) and stay open
    until :meth:`aclose` or ``async with`` exit; a node built on a shared pool
    leaves closing to the pool's owner. The node runs only asynchronously
    (``ainvoke`` / ``astream``): MCP sessions are async.
    """

    def __init__(
        self,
        connections: Any,
        *,
        tools: Sequence[BaseTool | Callable[..., Any]] = (),
        name: str = "tools",
        tags: list[str] | None = None,
        handle_tool_errors: Any = _default_handle_tool_errors,
        messages_key: str = "messages",
        wrap_tool_call: ToolCallWrapper | None = None,
        awrap_tool_call: AsyncToolCallWrapper | None = None,
        on_connection_error: OnConnectionError = "raise",
        default_timeout: float | None = DEFAULT_CALL_TIMEOUT,
    ) -> None:
        super().__init__(
            list(tools),
            name=name,
            tags=tags,
            handle_tool_errors=handle_tool_errors,
            messages_key=messages_key,
            wrap_tool_call=wrap_tool_call,
            awrap_tool_call=awrap_tool_call,
        )
        if isinstance(connections, MCPPool):
            self.pool = connections
            self._owns_pool = False
        else:
            self.pool = MCPPool(
                connections, on_connection_error=on_connection_error, default_timeout=default_timeout
            )
            self._owns_pool = True
        self._local_tools = dict(self._tools_by_name)
        self._local_injected = dict(self._injected_args)
        self._mcp_tools: list[MCPTool] = []

    async def get_tools(self) -> list[BaseTool]:
        """Local and MCP tools, ready for ``model.bind_tools(...)``.

        Connects the servers on first use. Raises per ``on_connection_error``.
        """
        await self._sync_tools()
        return list(self._tools_by_name.values())

    async def start(self) -> None:
        """Connect every server now (concurrently) and register their tools."""
        await self._sync_tools()

    async def aclose(self) -> None:
        """Close the node's own pool (a shared pool is left to its owner)."""
        if self._owns_pool:
            await self.pool.aclose()

    async def __aenter__(self) -> MCPToolNode:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _sync_tools(self) -> None:
        tools = await load_mcp_tools(self.pool, reserved=self._local_tools)
        if tools is self._mcp_tools:
            return
        by_name: dict[str, BaseTool] = dict(self._local_tools)
        injected = dict(self._local_injected)
        for tool in tools:
            by_name[tool.name] = tool
            injected[tool.name] = _get_all_injected_args(tool)
        # Swap whole dicts so runs already in flight keep a consistent view.
        self._tools_by_name, self._injected_args, self._mcp_tools = by_name, injected, tools

    async def _afunc(
        self,
        input: list[AnyMessage] | dict[str, Any] | BaseModel,
        config: RunnableConfig,
        runtime: Runtime,
    ) -> Any:
        try:
            await self._sync_tools()
        except MCPConnectionError:
            if not self._mcp_tools:
                raise
            # Serve the last known tools: calls to an unreachable server become error messages.
        batch = None
        if durable_run(config.get("configurable")):
            tool_calls, _ = self._parse_input(input)
            if len(tool_calls) > 1 and any(self._may_ask_a_person(c["name"]) for c in tool_calls):
                batch = _Batch([c.get("id") for c in tool_calls])
        token = _BATCH.set(batch)
        try:
            return await super()._afunc(input, config, runtime)
        finally:
            _BATCH.reset(token)

    def _may_ask_a_person(self, name: str) -> bool:
        tool = self._tools_by_name.get(name)
        return isinstance(tool, MCPTool) and asks_a_person(self.pool.servers[tool.server])

    async def _arun_one(self, call: ToolCall, input_type: Any, tool_runtime: ToolRuntime) -> Any:
        """With several calls in one checkpointed run, at least one of them on a server that may
        ask a person, each call runs as its own LangGraph task (``mcp_tool_call``): its questions
        get their own interrupt (all surface together and are resumed by id), and a call that
        finished is replayed from the checkpoint instead of running again when a sibling's
        interrupt is resumed."""
        batch = _BATCH.get()
        if batch is None:
            return await super()._arun_one(call, input_type, tool_runtime)
        # Invoked before the first await: tasks start in call order, so task ids are stable.
        future = _tool_call_task(functools.partial(self._arun_in_task, call, input_type, tool_runtime))
        try:
            result = await future
        except GraphInterrupt as exc:
            raise await batch.interrupted(call.get("id"), exc) from None
        except BaseException:
            batch.settled()
            raise
        batch.settled()
        return result

    async def _arun_in_task(self, call: ToolCall, input_type: Any, tool_runtime: ToolRuntime) -> Any:
        # The call now runs in its own task: its interrupts and stored rounds must use that
        # task's config (scratchpad, namespace), not the node's.
        runtime = dataclasses.replace(tool_runtime, config={**tool_runtime.config, **get_config()})
        return await super()._arun_one(call, input_type, runtime)

    def _func(
        self,
        input: list[AnyMessage] | dict[str, Any] | BaseModel,
        config: RunnableConfig,
        runtime: Runtime,
    ) -> Any:
        raise NotImplementedError(
            f"MCPToolNode {self.name!r} runs only asynchronously because MCP sessions are async: "
            "use `await graph.ainvoke(...)` or `async for chunk in graph.astream(...)` "
            "instead of `invoke` / `stream`."
        )
