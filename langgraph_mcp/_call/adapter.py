"""Each MCP tool as a LangChain ``BaseTool``.

The model-facing schema is the MCP ``inputSchema`` (only ``"type": "object"``
and an empty ``"properties"`` are added when the server omitted them), with its
descriptions and titles sanitised like the tool's description: no control,
bidi or zero-width characters, at most 4096 characters each. The
tool also takes a hidden ``ToolRuntime`` that ``ToolNode`` (or
``MCPToolNode``) injects under a private name, so an MCP argument that happens
to be called ``runtime``, ``config`` or ``callbacks`` still reaches the server
and a forged runtime value from the model is dropped.

Call contract (``await tool.ainvoke(tool_call)``):

* arguments that do not match the JSON schema raise LangGraph's
  ``ToolInvocationError`` before the server is contacted, with pydantic-style
  details, so ``ToolNode``'s ``handle_tool_errors`` treats them exactly like
  invalid arguments to a local tool;
* a result with ``isError``, a timeout, a failed connection, a server error,
  an invalid result or an ``inputSchema`` that cannot check arguments (a ``$ref``
  that does not resolve within it: only in a tool built by hand, listed tools
  with one are left out) becomes ``ToolMessage(status="error")`` with a message that
  says what happened (or raises :class:`~langgraph_mcp.MCPToolCallError` when
  invoked without a tool call id);
* a successful result becomes ``ToolMessage(content, artifact=MCPToolArtifact)``.

This module is the LangChain adapter only: it turns one tool call into a
:class:`~langgraph_mcp._call.call.Call` and runs it down the steps of
:func:`~langgraph_mcp._call.pipeline.run_pipeline` (lazy start, the argument check, hidden
values, approval, the session, the call itself, its result), whose outcome is the tool's.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import mcp_types as types
from langchain_core.callbacks import AsyncCallbackManagerForToolRun
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from langgraph.prebuilt import ToolRuntime
from langgraph.prebuilt.tool_node import ToolInvocationError
from pydantic import PrivateAttr

from langgraph_mcp._call.approval import DECISIONS, ApprovalRequest, approval_request
from langgraph_mcp._call.arguments import ArgumentChecker
from langgraph_mcp._call.call import Call
from langgraph_mcp._call.entry import CatalogEntry
from langgraph_mcp._call.pipeline import run_pipeline
from langgraph_mcp._pool.pool import MCPPool
from langgraph_mcp._session import ServerConnection
from langgraph_mcp._support.sanitise import MAX_TITLE, sanitise_text
from langgraph_mcp._support.schema import model_schema
from langgraph_mcp._support.sync import run_sync
from langgraph_mcp.errors import MCPArgumentError, MCPConfigError
from langgraph_mcp.options import ToolOptions

__all__ = ["RUNTIME_ARG", "MCPTool", "build_tool"]

RUNTIME_ARG = "_langgraph_mcp_runtime"
"""Name under which the ``ToolRuntime`` is injected; never part of the model's schema."""


# These carry the injected-runtime parameter that LangChain and ToolNode read off the tool's
# func/coroutine. The annotation must be plain ``ToolRuntime``: ``ToolRuntime | None`` is
# injected by ToolNode but not recognised as injected by LangChain, which would then put the
# runtime (state, config, every tool) into callback and tracing inputs.
def _sync_signature(_langgraph_mcp_runtime: ToolRuntime = None) -> None:  # type: ignore[assignment]
    raise NotImplementedError  # pragma: no cover - never called


async def _async_signature(_langgraph_mcp_runtime: ToolRuntime = None) -> None:  # type: ignore[assignment]
    raise NotImplementedError  # pragma: no cover - never called


class MCPTool(StructuredTool):
    """A tool that lives on an MCP server, called over the pool's shared session.

    ``metadata["mcp"]`` holds the server name, the original MCP tool name,
    title, annotations, ``_meta`` and output schema (the title and the annotations' title
    sanitised like the description, at most 256 characters).
    """

    server: str
    """Name of the server (as configured) the tool lives on."""
    mcp_name: str
    """The tool's name on the server (the exposed ``name`` may differ)."""
    timeout: float | None = None
    """Seconds one call may take; ``None`` uses the server's ``timeout``."""

    _connection: ServerConnection = PrivateAttr()
    _pool: MCPPool | None = PrivateAttr(default=None)
    _mcp_tool: types.Tool = PrivateAttr()
    _checker: ArgumentChecker = PrivateAttr()
    _options: ToolOptions = PrivateAttr(default_factory=ToolOptions)
    _approval: Sequence[str] = PrivateAttr(default=())
    _messages_key: str = PrivateAttr(default="messages")
    _model_schema: dict[str, Any] | None = PrivateAttr(default=None)  # sanitised once per listing

    @property
    def options(self) -> ToolOptions:
        """How this tool is called from the graph (see :mod:`langgraph_mcp.options`)."""
        return self._options

    @property
    def mcp_meta(self) -> dict[str, Any] | None:
        """The tool's ``_meta`` as the server listed it."""
        private = self.__pydantic_private__
        assert private is not None
        meta: dict[str, Any] | None = private["_mcp_tool"].meta
        return meta

    @property
    def needs_approval(self) -> bool:
        """Does each call wait for a person's approval?"""
        return bool(self._approval)

    def with_options(
        self,
        options: ToolOptions | None = None,
        *,
        approval: Sequence[str] = (),
        messages_key: str = "messages",
    ) -> "MCPTool":
        """A copy of this tool called with ``options``: hidden arguments leave the model's schema
        and are filled at call time, ``headers`` / ``meta`` go with each call, ``result`` maps a
        successful result to a ``Command`` (its ``ToolMessage`` under ``messages_key``).
        ``approval`` lists the decisions a person may take before each call (empty: no
        approval is asked)."""
        options = options or ToolOptions()
        unknown = [d for d in approval if d not in DECISIONS]
        if unknown:
            raise MCPConfigError(
                None, None, f"unknown approval decision(s) {unknown}; choose from {list(DECISIONS)}"
            )
        schema = base = self._model_schema or model_schema(self._mcp_tool.input_schema)
        if options.hidden:
            properties = {k: v for k, v in schema["properties"].items() if k not in options.hidden}
            schema = {**schema, "properties": properties}
            if isinstance(schema.get("required"), list):
                schema["required"] = [r for r in schema["required"] if r not in options.hidden]
        bound = self.model_copy(update={"args_schema": schema})
        bound._options = options
        bound._approval = tuple(approval)
        bound._messages_key, bound._model_schema = messages_key, base
        bound._checker = ArgumentChecker(self.server, self.name, self.mcp_name, schema)
        return bound

    # -- LangChain plumbing ---------------------------------------------

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if isinstance(tool_input, str):
            raise MCPArgumentError(
                None,
                None,
                "String tool inputs are not allowed when using tools with JSON schema args_schema.",
            )
        arguments = dict(tool_input)
        runtime = arguments.pop(RUNTIME_ARG, None)
        return (), {"arguments": arguments, "runtime": runtime, "tool_call_id": tool_call_id}

    def _run(self, *args: Any, config: RunnableConfig, **kwargs: Any) -> Any:
        """Synchronous use: the call runs on the package's own event loop (see
        :func:`~langgraph_mcp._support.sync.run_sync`)."""
        kwargs.pop("run_manager", None)
        return run_sync(lambda: self._arun(*args, config=config, **kwargs), pool=self._pool)

    async def _arun(
        self,
        *args: Any,
        config: RunnableConfig,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
        **kwargs: Any,
    ) -> Any:
        # Keyword names come from ``_to_args_and_kwargs``, never from the model.
        arguments: dict[str, Any] = kwargs["arguments"]
        tool_call_id: str | None = kwargs["tool_call_id"]
        runtime: ToolRuntime | None = kwargs["runtime"]
        # Private attributes read once per call: each ``self._x`` goes through pydantic's
        # ``__getattr__``, which costs more than the rest of this frame's bookkeeping.
        private = self.__pydantic_private__
        assert private is not None
        call = Call(
            name=self.name,
            server=self.server,
            mcp_name=self.mcp_name,
            connection=private["_connection"],
            pool=private["_pool"],
            mcp_tool=private["_mcp_tool"],
            checker=private["_checker"],
            options=private["_options"],
            approval=private["_approval"],
            messages_key=private["_messages_key"],
            tool_timeout=self.timeout,
            question=lambda arguments, allowed: self._question(arguments, tool_call_id, allowed),
            arguments=arguments,
            runtime=runtime,
            tool_call_id=tool_call_id,
        )
        return await run_pipeline(call)

    # -- helpers -------------------------------------------------------------

    def _question(
        self, arguments: dict[str, Any], tool_call_id: str | None, approval: Sequence[str]
    ) -> ApprovalRequest:
        return approval_request(
            server=self.server,
            mcp_tool=self.mcp_name,
            name=self.name,
            description=self.description,
            annotations=(self.metadata or {}).get("mcp", {}).get("annotations", {}),
            arguments=arguments,
            tool_call_id=tool_call_id,
            allowed=approval,
            check=self._check_edit,
            schema=self._checker.schema,
        )

    async def approval_request(
        self, args: Mapping[str, Any], tool_call_id: str | None, *, allowed: Sequence[str] | None = None
    ) -> ApprovalRequest | None:
        """The approval question a call with the model's ``args`` asks before it is sent, or
        ``None`` if it asks none (no approval needed, or arguments that break the schema: such
        a call fails before asking). Its ``key`` is the one the call itself computes. With
        ``allowed``, the question as it would be asked with those decisions, approval needed
        or not (a question asked before this process's policy changed)."""
        if not self._approval and allowed is None:
            return None
        arguments = {k: v for k, v in args.items() if k not in self._options.hidden}
        if self._checker.null_is_absent:
            self._checker.drop_null_headers(arguments)
        try:
            await self._checker.acheck(arguments)
        except ToolInvocationError:  # UnusableSchema included
            return None
        return self._question(arguments, tool_call_id, self._approval if allowed is None else allowed)

    def _check_edit(self, arguments: dict[str, Any]) -> None:
        """Edited arguments must fit the model-facing schema (``ValueError`` otherwise)."""
        try:
            self._checker.check({k: v for k, v in arguments.items() if k not in self._options.hidden})
        except ToolInvocationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or '<args>'}: {e['msg']}" for e in exc.source.errors()
            )
            raise ValueError(f"the edited arguments do not fit tool {self.name!r}: {problems}") from None


def _metadata(entry: CatalogEntry) -> dict[str, Any]:
    tool = entry.tool
    info: dict[str, Any] = {"server": entry.server, "tool": tool.name}
    if tool.title:
        info["title"] = sanitise_text(tool.title, MAX_TITLE)
    if tool.annotations is not None:
        info["annotations"] = tool.annotations.model_dump(mode="json", by_alias=True, exclude_none=True)
        if isinstance(info["annotations"].get("title"), str):
            info["annotations"]["title"] = sanitise_text(info["annotations"]["title"], MAX_TITLE)
    if tool.meta:
        info["meta"] = dict(tool.meta)
    if tool.output_schema is not None:
        info["output_schema"] = tool.output_schema
    return {"mcp": info}


def build_tool(entry: CatalogEntry, connection: ServerConnection, pool: MCPPool | None = None) -> MCPTool:
    """The LangChain tool for one catalog entry, bound to its server's connection."""
    tool = entry.tool
    description = sanitise_text(
        tool.description or tool.title or f"{tool.name} (MCP tool on server {entry.server!r})"
    )
    schema = model_schema(tool.input_schema)
    built = MCPTool(
        name=entry.name,
        description=description,
        args_schema=schema,
        func=_sync_signature,
        coroutine=_async_signature,
        response_format="content_and_artifact",
        metadata=_metadata(entry),
        server=entry.server,
        mcp_name=tool.name,
    )
    built._connection, built._pool, built._model_schema = connection, pool, schema
    built._mcp_tool = tool
    built._checker = ArgumentChecker(entry.server, entry.name, tool.name, tool.input_schema)
    return built
