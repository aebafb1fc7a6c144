"""Each MCP tool as a LangChain ``BaseTool``.

The model-facing schema is the MCP ``inputSchema`` (only ``"type": "object"``
and an empty ``"properties"`` are added when the server omitted them). The
tool also takes a hidden ``ToolRuntime`` that ``ToolNode`` (or
``MCPToolNode``) injects under a private name, so an MCP argument that happens
to be called ``runtime``, ``config`` or ``callbacks`` still reaches the server
and a forged runtime value from the model is dropped.

Call contract (``await tool.ainvoke(tool_call)``):

* arguments that do not match the JSON schema raise LangGraph's
  ``ToolInvocationError`` before the server is contacted, with pydantic-style
  details, so ``ToolNode``'s ``handle_tool_errors`` treats them exactly like
  invalid arguments to a local tool;
* a result with ``isError``, a timeout, or a failed connection becomes
  ``ToolMessage(status="error")`` with a message that says what happened
  (or raises :class:`~langgraph_mcp.MCPToolCallError` when invoked without a
  tool call id);
* a successful result becomes ``ToolMessage(content, artifact=MCPToolArtifact)``.
"""

import asyncio
import logging
import weakref
from collections.abc import Awaitable, Collection
from typing import Any, TypeVar

import jsonschema
import mcp_types as types
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from langchain_core.callbacks import AsyncCallbackManagerForToolRun
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from langgraph.errors import GraphDrained
from langgraph.prebuilt import ToolRuntime
from langgraph.prebuilt.tool_node import ToolInvocationError
from langgraph.runtime import Runtime
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import PrivateAttr
from pydantic_core import InitErrorDetails, PydanticCustomError, ValidationError

from langgraph_mcp.catalog import CatalogEntry, build_catalog
from langgraph_mcp.content import convert_result, error_text
from langgraph_mcp.elicitation import (
    CallContext,
    asks_a_person,
    call_legacy,
    call_modern,
    in_graph,
    is_legacy,
    retry_after_url_elicitation,
)
from langgraph_mcp.errors import MCPConnectionError, MCPToolCallError
from langgraph_mcp.pool import InFlight, MCPPool, ServerConnection
from langgraph_mcp.progress import CallObserver

__all__ = ["MCPTool", "RUNTIME_ARG", "build_tool", "load_mcp_tools"]

logger = logging.getLogger("langgraph_mcp.tools")

_T = TypeVar("_T")

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


_PYDANTIC_TYPE_ERRORS = {
    "integer": "int_type",
    "number": "float_type",
    "string": "string_type",
    "boolean": "bool_type",
    "array": "list_type",
    "object": "dict_type",
    "null": "none_required",
}


def _pydantic_type_error(expected: str, value: Any) -> str:
    """The pydantic error type a pydantic model would report for this value."""
    if isinstance(value, str) and expected in ("integer", "number", "boolean"):
        try:
            float(value)
        except ValueError:
            return {"integer": "int_parsing", "number": "float_parsing", "boolean": "bool_parsing"}[expected]
    if expected == "integer" and isinstance(value, float) and not isinstance(value, bool):
        return "int_from_float"
    return _PYDANTIC_TYPE_ERRORS[expected]


def _custom(message: str) -> PydanticCustomError:
    # Braces in a message would be read as format fields.
    return PydanticCustomError("json_schema", message.replace("{", "{{").replace("}", "}}"))


def _schema_errors(
    validator: Validator, arguments: dict[str, Any], schema: dict[str, Any]
) -> list[InitErrorDetails]:
    """JSON-schema violations as pydantic error details, using pydantic's wording where
    the two overlap (missing field, wrong type, extra field) so messages match ``ToolNode``'s."""
    order = {name: i for i, name in enumerate(schema.get("properties") or {})}
    found: list[InitErrorDetails] = []
    for error in validator.iter_errors(arguments):
        path = tuple(error.absolute_path)
        instance = error.instance
        if error.validator == "required" and isinstance(instance, dict):
            required = error.validator_value if isinstance(error.validator_value, list) else []
            for name in required:
                missing = InitErrorDetails(type="missing", loc=(*path, name), input=instance)
                # jsonschema reports each missing property as its own error, naming them all.
                if name not in instance and missing not in found:
                    found.append(missing)
        elif error.validator == "additionalProperties" and isinstance(instance, dict):
            local = error.schema if isinstance(error.schema, dict) else {}
            known = set(local.get("properties") or {})
            extras = [k for k in instance if k not in known]
            if extras and not local.get("patternProperties"):
                for k in extras:
                    found.append(InitErrorDetails(type="extra_forbidden", loc=(*path, k), input=instance[k]))
            else:
                found.append(InitErrorDetails(type=_custom(error.message), loc=path, input=instance))
        elif error.validator == "type" and error.validator_value in _PYDANTIC_TYPE_ERRORS:
            kind = _pydantic_type_error(error.validator_value, instance)
            found.append(InitErrorDetails(type=kind, loc=path, input=instance))
        else:
            found.append(InitErrorDetails(type=_custom(error.message), loc=path, input=instance))

    def key(item: InitErrorDetails) -> tuple[int, str]:
        loc = item.get("loc", ())
        first = order.get(loc[0], len(order)) if loc and isinstance(loc[0], str) else -1
        return first, ".".join(map(str, loc))

    return sorted(found, key=key)


def _model_schema(input_schema: dict[str, Any]) -> dict[str, Any]:
    schema = dict(input_schema)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


class MCPTool(StructuredTool):
    """A tool that lives on an MCP server, called over the pool's shared session.

    ``metadata["mcp"]`` holds the server name, the original MCP tool name,
    title, annotations, ``_meta`` and output schema.
    """

    server: str
    """Name of the server (as configured) the tool lives on."""
    mcp_name: str
    """The tool's name on the server (the exposed ``name`` may differ)."""
    timeout: float | None = None
    """Seconds one call may take; ``None`` uses the server's ``timeout``."""

    _connection: ServerConnection = PrivateAttr()
    _mcp_tool: types.Tool = PrivateAttr()
    _validator: Validator | None = PrivateAttr(default=None)
    _schema_checked: bool = PrivateAttr(default=False)

    # -- LangChain plumbing ---------------------------------------------

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if isinstance(tool_input, str):
            raise ValueError(
                "String tool inputs are not allowed when using tools with JSON schema args_schema."
            )
        arguments = dict(tool_input)
        runtime = arguments.pop(RUNTIME_ARG, None)
        return (), {"arguments": arguments, "runtime": runtime, "tool_call_id": tool_call_id}

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"MCP tool {self.name!r} (server {self.server!r}) can only be called asynchronously: "
            "MCP sessions are async. Use `await tool.ainvoke(...)`, or run the graph with "
            "`await graph.ainvoke(...)` / `graph.astream(...)`."
        )

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
        self._validate(arguments)
        timeout, limit = self._timeout()
        observer = CallObserver(
            server=self.server,
            tool_name=self.name,
            tool_call_id=runtime.tool_call_id if runtime is not None else tool_call_id,
            runtime=runtime,
            log_events=self._connection.config.log_events,
        )
        connection = self._connection
        context = CallContext(
            connection=connection,
            tool_name=self.name,
            tool_call_id=observer.tool_call_id,
            in_graph=in_graph(),
        )

        async def attempt(client: Client, send_kwargs: dict[str, Any]) -> types.CallToolResult:
            if is_legacy(client) and asks_a_person(connection.config):
                # Held open while a person answers; registers itself with the connection.
                return await call_legacy(
                    context, client, self.mcp_name, arguments, send_kwargs, runtime=runtime, log_sink=observer
                )
            with connection.track(InFlight(observer, context)):
                if is_legacy(client):
                    return await client.call_tool(self.mcp_name, dict(arguments), **send_kwargs)
                return await call_modern(context, client, self.mcp_name, arguments, send_kwargs)

        async def drive(client: Client, send_kwargs: dict[str, Any]) -> types.CallToolResult:
            return await retry_after_url_elicitation(context, lambda: attempt(client, send_kwargs))

        call = connection.call_tool(
            self.mcp_name, arguments, timeout=timeout, progress_callback=observer.on_progress, driver=drive
        )
        try:
            result = await _cancel_on_drain(call, observer.node_runtime)
        except MCPConnectionError as exc:
            return self._failure(f"{exc} The call's outcome is unknown.", tool_call_id, kind="connection")
        except MCPToolCallError as exc:  # e.g. a sampling request nobody may answer
            return self._failure(str(exc), tool_call_id, kind=exc.kind)
        except MCPError as exc:
            if exc.code == types.REQUEST_TIMEOUT:
                assert timeout is not None
                return self._failure(
                    f"MCP tool {self.mcp_name!r} on server {self.server!r} timed out after {timeout:g}s "
                    f"({limit}); the server was asked to cancel it.",
                    tool_call_id,
                    kind="timeout",
                )
            return self._failure(
                f"MCP server {self.server!r} rejected the call to {self.mcp_name!r}: "
                f"{exc.error.message} (MCP error {exc.code})",
                tool_call_id,
                kind="protocol",
            )
        except RuntimeError as exc:
            if not _is_output_schema_error(exc):
                raise
            return self._failure(
                f"MCP server {self.server!r} returned an invalid result for {self.mcp_name!r}: {exc}",
                tool_call_id,
                kind="protocol",
            )
        if result.is_error:
            artifact = (
                {"structured_content": result.structured_content, "content": []}
                if result.structured_content is not None
                else None
            )
            return self._failure(error_text(result), tool_call_id, artifact=artifact)
        return convert_result(result, self._connection.config.output_handling)

    # -- helpers -------------------------------------------------------------

    def _timeout(self) -> tuple[float | None, str]:
        """The limit for one call and how to name it: the tool's own ``timeout``, then the
        server's ``tool_timeouts``, then the server's ``timeout``, then the pool default."""
        config = self._connection.config
        if self.timeout is not None:
            return self.timeout, "the tool's timeout"
        if self.mcp_name in config.tool_timeouts:
            return config.tool_timeouts[
                self.mcp_name
            ], f"server {self.server!r} tool_timeouts[{self.mcp_name!r}]"
        if "timeout" in config.model_fields_set:
            return config.timeout, f"server {self.server!r} timeout"
        return self._connection.default_timeout, "the default timeout"

    def _failure(
        self, text: str, tool_call_id: str | None, *, kind: str = "tool_error", artifact: Any = None
    ) -> tuple[ToolMessage, None]:
        if tool_call_id is None:
            raise MCPToolCallError(text, kind=kind)
        message = ToolMessage(
            content=text, name=self.name, tool_call_id=tool_call_id, status="error", artifact=artifact
        )
        return message, None

    def _validate(self, arguments: dict[str, Any]) -> None:
        if not self._schema_checked:
            self._schema_checked = True
            schema = self._mcp_tool.input_schema
            try:
                cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
                cls.check_schema(schema)
                self._validator = cls(schema)
            except SchemaError as exc:
                logger.warning(
                    "MCP tool %r of server %r has an invalid inputSchema (%s); arguments are not checked",
                    self.mcp_name,
                    self.server,
                    exc.message,
                )
        if self._validator is None:
            return
        errors = _schema_errors(self._validator, arguments, self._mcp_tool.input_schema)
        if errors:
            source = ValidationError.from_exception_data(self.name, errors)
            raise ToolInvocationError(self.name, source, arguments, source.errors())


def _is_output_schema_error(exc: RuntimeError) -> bool:
    """The SDK's RuntimeError for structured content that breaks the tool's ``outputSchema``."""
    text = str(exc)
    return text.startswith("Invalid structured content") or "did not return structured content" in text


_DRAIN_POLL = 0.1


async def _cancel_on_drain(call: Awaitable[_T], runtime: Runtime[Any] | None) -> _T:
    """Await ``call``; if the run is asked to drain meanwhile, cancel it and raise
    ``GraphDrained`` so the checkpoint keeps the tool call for the resumed run."""
    control = runtime.control if runtime is not None else None
    if control is None:
        return await call
    task = asyncio.ensure_future(call)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=_DRAIN_POLL)
            if done:
                return task.result()
            if control.drain_requested:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                raise GraphDrained(control.drain_reason or "shutdown")
    finally:
        if not task.done():
            task.cancel()


def _metadata(entry: CatalogEntry) -> dict[str, Any]:
    tool = entry.tool
    info: dict[str, Any] = {"server": entry.server, "tool": tool.name}
    if tool.title:
        info["title"] = tool.title
    if tool.annotations is not None:
        info["annotations"] = tool.annotations.model_dump(mode="json", by_alias=True, exclude_none=True)
    if tool.meta:
        info["meta"] = dict(tool.meta)
    if tool.output_schema is not None:
        info["output_schema"] = tool.output_schema
    return {"mcp": info}


def build_tool(entry: CatalogEntry, connection: ServerConnection) -> MCPTool:
    """The LangChain tool for one catalog entry, bound to its server's connection."""
    tool = entry.tool
    description = tool.description or tool.title or f"{tool.name} (MCP tool on server {entry.server!r})"
    built = MCPTool(
        name=entry.name,
        description=description,
        args_schema=_model_schema(tool.input_schema),
        func=_sync_signature,
        coroutine=_async_signature,
        response_format="content_and_artifact",
        metadata=_metadata(entry),
        server=entry.server,
        mcp_name=tool.name,
    )
    built._connection = connection
    built._mcp_tool = tool
    return built


_cache: weakref.WeakKeyDictionary[MCPPool, dict[frozenset[str], tuple[Any, list[MCPTool]]]] = (
    weakref.WeakKeyDictionary()
)


async def load_mcp_tools(pool: MCPPool, *, reserved: Collection[str] = ()) -> list[MCPTool]:
    """The pool's tools as LangChain tools, in configuration and listing order.

    Connects servers that are not connected yet (concurrently), lists their
    tools once per connection and builds the tools once per listing: repeated
    calls return the same objects until a server's tool list changes or it
    reconnects. ``reserved`` names (e.g. local tools) are never reused.

    Raises:
        MCPConnectionError: per the pool's ``on_connection_error``.
    """
    key = frozenset(reserved)
    per_pool = _cache.setdefault(pool, {})
    cached = per_pool.get(key)
    if cached is not None and cached[0] == pool.tools_version():
        return cached[1]
    version = pool.tools_version()
    listings = await pool.list_all_tools()
    entries = build_catalog(listings, pool.servers, reserved=reserved)
    previous = {(t.server, t.mcp_name, t.name): t for t in cached[1]} if cached else {}
    tools = []
    for entry in entries:
        old = previous.get((entry.server, entry.tool.name, entry.name))
        if (
            old is not None
            and old._mcp_tool == entry.tool
            and old._connection is pool.connection(entry.server)
        ):
            tools.append(old)
        else:
            tools.append(build_tool(entry, pool.connection(entry.server)))
    per_pool[key] = (version, tools)
    return tools
