"""``MCPToolNode``: LangGraph's ``ToolNode`` with tools that live on MCP servers.

Everything ``ToolNode`` defines is inherited unchanged: the four input shapes,
output shapes and ``Command`` merging, ``handle_tool_errors`` and its error
templates, ``Command`` validation, ``wrap_tool_call`` / ``awrap_tool_call``,
state/store/runtime injection, and execution through ``BaseTool.ainvoke`` (so
callbacks, tracing and ``stream_mode="tools"`` work). What this class adds:

* the tool set: before each run it makes sure the MCP servers are connected and
  their current tools are registered next to the local ``tools`` (a server that was
  unreachable is tried again, after its back-off, on a later run);
* in a checkpointed run with several calls, each call runs as its own LangGraph task
  (``mcp_tool_call``), whatever the servers' policies: every question surfaces at
  once, no answer and no stored result can reach the wrong call, and a call that
  finished is replayed from the checkpoint, not sent again, when the node runs again.
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
from langgraph.prebuilt.tool_node import AsyncToolCallWrapper, ToolCallWrapper
from langgraph.runtime import Runtime
from pydantic import BaseModel

from langgraph_mcp._compat import default_handle_tool_errors, injected_args, is_checkpointed
from langgraph_mcp.config import DEFAULT_CALL_TIMEOUT
from langgraph_mcp.errors import MCPConnectionError
from langgraph_mcp.pool import MCPPool, OnConnectionError
from langgraph_mcp.tools import MCPTool, load_mcp_tools

__all__ = ["MCPToolNode"]


class _Batch:
    """The calls of one node run, each in its own task. Every call settles before anything is
    raised; then the first call (in call order) raises for all: the first error, or else every
    interrupt together, in call order."""

    def __init__(self) -> None:
        self.enrolled = 0
        self.outcomes: dict[int, BaseException | None] = {}
        self.done = asyncio.Event()

    def enroll(self) -> int:
        index = self.enrolled
        self.enrolled += 1
        return index

    def settle(self, index: int, outcome: BaseException | None) -> None:
        self.outcomes[index] = outcome
        if len(self.outcomes) == self.enrolled:
            self.done.set()

    def failure(self) -> BaseException | None:
        outcomes = [self.outcomes[i] for i in range(self.enrolled)]
        errors = [o for o in outcomes if o is not None and not isinstance(o, GraphInterrupt)]
        if errors:
            return errors[0]
        interrupts = [
            i for o in outcomes if isinstance(o, GraphInterrupt) for i in (o.args[0] if o.args else ())
        ]
        return GraphInterrupt(tuple(interrupts)) if interrupts else None


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
        handle_tool_errors: Any = default_handle_tool_errors,
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

    async def drain(self, timeout: float) -> bool:
        """See :meth:`MCPPool.drain` (the node's pool, shared or not)."""
        return await self.pool.drain(timeout)

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
            injected[tool.name] = injected_args(tool)
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
        if is_checkpointed(config.get("configurable")) and len(self._parse_input(input)[0]) > 1:
            batch = _Batch()
        token = _BATCH.set(batch)
        try:
            return await super()._afunc(input, config, runtime)
        finally:
            _BATCH.reset(token)

    async def _arun_one(self, call: ToolCall, input_type: Any, tool_runtime: ToolRuntime) -> Any:
        """In a checkpointed run with several calls, each call runs as its own LangGraph task
        (``mcp_tool_call``): its questions get their own interrupt (all surface together and are
        resumed by id), its stored rounds are its own, and a call that finished is replayed from
        the checkpoint instead of running again when the node runs again."""
        batch = _BATCH.get()
        if batch is None:
            return await super()._arun_one(call, input_type, tool_runtime)
        # Enrolled and started before the first await: tasks start in call order, so their ids
        # (and the results stored under them) are stable from one run of the node to the next.
        index = batch.enroll()
        result: Any = None
        try:
            future = _tool_call_task(functools.partial(self._arun_in_task, call, input_type, tool_runtime))
            result = await future
        except asyncio.CancelledError as exc:
            batch.settle(index, exc)
            raise
        except BaseException as exc:
            batch.settle(index, exc)
        else:
            batch.settle(index, None)
        await batch.done.wait()
        failure = batch.failure()
        if failure is not None and index == 0:
            raise failure
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
