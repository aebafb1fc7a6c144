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

This module is the LangChain adapter only: the call itself runs in
:func:`~langgraph_mcp._call.runner.run_call`, and what its outcome becomes (messages, cut outputs,
``Command``s) is decided in :func:`~langgraph_mcp._call.results.call_result`.
"""

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any

import mcp_types as types
from langchain_core.callbacks import AsyncCallbackManagerForToolRun
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from langgraph.prebuilt import ToolRuntime
from langgraph.prebuilt.tool_node import ToolInvocationError
from pydantic import PrivateAttr

from langgraph_mcp._call.approval import (
    DECISIONS,
    ApprovalRequest,
    Approved,
    approval_request,
    ask_approval,
    recorded_outcome,
)
from langgraph_mcp._call.arguments import ArgumentChecker, UnusableSchema, describe_source, resolve_source
from langgraph_mcp._call.entry import CatalogEntry
from langgraph_mcp._call.results import (
    CallSite,
    call_failed,
    call_result,
    failure,
    not_listed,
    with_edit_notice,
)
from langgraph_mcp._call.runner import run_call
from langgraph_mcp._call.view import show_view
from langgraph_mcp._oauth.calls import user_session
from langgraph_mcp._oauth.options import per_user_oauth
from langgraph_mcp._pool.pool import MCPPool
from langgraph_mcp._pool.resources import is_read_tool, read_as_tool_result
from langgraph_mcp._session import ServerConnection
from langgraph_mcp._support.redact import value_secrets
from langgraph_mcp._support.sanitise import MAX_TITLE, sanitise_text
from langgraph_mcp._support.schema import model_schema
from langgraph_mcp._support.sync import run_sync
from langgraph_mcp.errors import (
    MCPArgumentError,
    MCPConfigError,
    MCPConnectionError,
    MCPProtocolError,
    MCPServerError,
    MCPTimeoutError,
    MCPToolCallError,
    MissingValue,
)
from langgraph_mcp.options import ToolOptions

__all__ = ["RUNTIME_ARG", "MCPTool", "build_tool"]

_CALL_FAILURES = (MCPConnectionError, MCPTimeoutError, MCPServerError, MCPProtocolError, MCPToolCallError)
"""What the session layer raises for a call that could not complete
(:func:`~langgraph_mcp._call.results.call_failed`)."""

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
        options: ToolOptions = private["_options"]
        approval: Sequence[str] = private["_approval"]
        pool: MCPPool | None = private["_pool"]
        if pool is not None and pool.catalog is not None and private["_connection"].config.lazy:
            refused = await self._still_listed(pool, tool_call_id)
            if refused is not None:
                return refused
        for hidden in options.hidden:
            arguments.pop(hidden, None)  # the model may not choose a hidden argument
        if private["_checker"].null_is_absent:
            private["_checker"].drop_null_headers(arguments)
        try:
            await private["_checker"].acheck(arguments)  # off the event loop when it is costly
        except UnusableSchema as exc:  # no arguments could fit: not the model's to fix
            return failure(self._site(tool_call_id), exc.reason, kind="protocol")
        hidden_values: dict[str, Any] = {}
        if options.hidden:
            try:
                hidden_values = await self._hidden_values(runtime)
            except MissingValue as exc:
                return failure(self._site(tool_call_id), str(exc), kind="hidden_argument")
        edited = False
        if approval:
            try:
                outcome = ask_approval(self._question(arguments, tool_call_id, approval))
            except MCPToolCallError as exc:
                return failure(self._site(tool_call_id), str(exc), kind=exc.kind)
            if not isinstance(outcome, Approved):
                return outcome, None
            if outcome.edited:
                edited = True
                arguments = {k: v for k, v in outcome.arguments.items() if k not in options.hidden}
        else:
            # Asked before this process's policy stopped asking: the person's answer still holds.
            recorded = recorded_outcome(lambda allowed: self._question(arguments, tool_call_id, allowed))
            if recorded is not None and not isinstance(recorded, Approved):
                return recorded, None
            if recorded is not None and recorded.edited:
                edited = True
                arguments = {k: v for k, v in recorded.arguments.items() if k not in options.hidden}
        # Hidden values are secrets of the call while it runs: kept out of the HTTP and MCP
        # client libraries' own log records (they log each message at DEBUG) and of its errors.
        holding = (
            private["_connection"].redact.holding(value_secrets(hidden_values))
            if hidden_values
            else nullcontext()
        )
        with holding:
            result = await self._send(
                {**arguments, **hidden_values} if hidden_values else arguments,
                runtime,
                tool_call_id,
                shown=arguments,
            )
        return with_edit_notice(result, arguments, private["_messages_key"]) if edited else result

    async def _send(
        self,
        arguments: dict[str, Any],
        runtime: ToolRuntime | None,
        tool_call_id: str | None,
        *,
        shown: dict[str, Any],
    ) -> Any:
        """Run the call; ``(content, artifact)`` (or a message or ``Command`` as content).
        ``shown``: the arguments without hidden ones (what an MCP Apps view is given)."""
        private = self.__pydantic_private__
        assert private is not None
        options: ToolOptions = private["_options"]
        shared: ServerConnection = private["_connection"]
        timeout, limit = self._timeout()
        try:
            async with self._session_for(runtime) as connection:
                if is_read_tool(private["_mcp_tool"]):
                    result = await read_as_tool_result(connection, arguments.get("uri"), timeout=timeout)
                else:
                    result = await run_call(
                        connection,
                        mcp_name=self.mcp_name,
                        tool_name=self.name,
                        arguments=arguments,
                        timeout=timeout,
                        runtime=runtime,
                        tool_call_id=tool_call_id,
                        meta=options.meta(runtime)
                        if options.meta is not None and runtime is not None
                        else None,
                        headers=(
                            options.headers(runtime)
                            if options.headers is not None and runtime is not None
                            else None
                        ),
                    )
                    tool = private["_mcp_tool"]
                    await show_view(connection, tool, self.name, shown, result, runtime, tool_call_id)
        except _CALL_FAILURES as exc:
            return call_failed(self._site(tool_call_id), exc, limit=limit)
        return await call_result(
            self._site(tool_call_id),
            result,
            handling=shared.config.output_for(self.mcp_name),
            runtime=runtime,
            mapping=options.result,
            messages_key=private["_messages_key"],
        )

    async def _still_listed(self, pool: MCPPool, tool_call_id: str | None) -> Any:
        """For a tool of a ``lazy`` server (maybe offered from the tool catalog): start the server
        if it has not started (bounded by its ``connect_timeout``) and make sure it still lists
        this tool as it was offered. ``None`` if so; else the call's error, and it is not sent."""
        site = self._site(tool_call_id)
        try:
            listed = await pool.live_tools(self.server)
        except _CALL_FAILURES as exc:
            return call_failed(site, exc, limit="connect_timeout")
        return not_listed(site, self._mcp_tool, listed)

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

    async def _hidden_values(self, runtime: ToolRuntime | None) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for argument, source in self._options.hidden.items():
            where = f"hidden argument {argument!r} of MCP tool {self.name!r} (server {self.server!r})"
            if runtime is None:
                raise MissingValue(
                    f"{where} comes from {describe_source(source)}, but the tool runs outside a graph"
                )
            try:
                values[argument] = await resolve_source(source, runtime)
            except MissingValue as exc:
                raise MissingValue(f"{where} comes from {describe_source(source)}: {exc}") from None
        return values

    def _session_for(self, runtime: ToolRuntime | None) -> AbstractAsyncContextManager[ServerConnection]:
        """The shared connection, or, for a ``session_scope="thread"`` server, this
        conversation's own, held in use for the whole call."""
        private = self.__pydantic_private__
        assert private is not None
        pool: MCPPool | None = private["_pool"]
        connection: ServerConnection = private["_connection"]
        if pool is not None and per_user_oauth(connection.config) is not None:
            return user_session(pool, connection, runtime, self.name, None)
        if pool is None or connection.config.session_scope != "thread":
            return nullcontext(connection)
        configurable = ((runtime.config if runtime is not None else None) or {}).get("configurable") or {}
        thread_id = configurable.get("thread_id")
        return pool.using(self.server, None if thread_id is None else str(thread_id))

    def _timeout(self) -> tuple[float | None, str]:
        """The limit for one call and how to name it: the tool's own ``timeout``, else what the
        server's configuration says (``tool_timeouts``, ``timeout``, the pool default)."""
        if self.timeout is not None:
            return self.timeout, "the tool's timeout"
        private = self.__pydantic_private__
        assert private is not None
        connection: ServerConnection = private["_connection"]
        return connection.timeout_for(self.mcp_name)

    def _site(self, tool_call_id: str | None) -> CallSite:
        private = self.__pydantic_private__
        assert private is not None
        connection: ServerConnection = private["_connection"]
        return CallSite(self.name, self.server, self.mcp_name, tool_call_id, era=connection.era)


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
