"""MCP resources: listings, reads into LangChain ``Blob``s, templates, links, subscriptions.

The functions here take a :class:`~langgraph_mcp._session.connection.ServerConnection`;
:class:`~langgraph_mcp.MCPPool` offers each of them by server name (``pool.read_resource(...)``).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

import anyio
import mcp_types as types
from langchain_core.documents.base import Blob
from langchain_core.messages import ToolMessage

from langgraph_mcp._compat.langgraph import stream_writer_here
from langgraph_mcp._pool.uritemplate import expand_uri_template, is_undefined, template_variables
from langgraph_mcp._session.transports import describe
from langgraph_mcp._support.sanitise import sanitise_text
from langgraph_mcp.errors import MCPArgumentError, MCPConnectionError, MCPProtocolError, MCPServerError
from langgraph_mcp.types import MCPResourceUpdatedEvent

if TYPE_CHECKING:
    from langgraph_mcp._session.connection import ServerConnection
    from langgraph_mcp._session.watch import Subscriber

__all__ = [
    "READ_TOOL",
    "expand_uri_template",
    "link_target",
    "list_resource_templates",
    "list_resources",
    "read_as_tool_result",
    "read_resource",
    "read_resource_template",
    "is_read_tool",
    "read_tool",
    "with_read_tool",
    "subscribe",
    "template_uri",
    "to_blobs",
]

logger = logging.getLogger("langgraph_mcp.resources")

READ_TOOL = "read_resource"
"""The name of the model-facing tool a server with ``resource_tool: true`` offers."""
_READ_TOOL_META = "dev.langgraph-mcp/read-resource"
_READ_TOOL_LISTED = 20


async def list_resources(connection: ServerConnection) -> list[types.Resource]:
    """The server's resources (every page), cached until it says they changed, a reconnect, or
    the end of the listing's lifetime (:class:`~langgraph_mcp._session.freshness.ListingShare`)."""
    return cast(list[types.Resource], await connection.listing("resources"))


async def list_resource_templates(connection: ServerConnection) -> list[types.ResourceTemplate]:
    """The server's resource templates (every page), cached like :func:`list_resources`."""
    return cast(list[types.ResourceTemplate], await connection.listing("resource_templates"))


async def _read(
    connection: ServerConnection,
    uri: Any,
    timeout: float | Literal["default"] | None = "default",
    limited: bool = False,
) -> types.ReadResourceResult:
    if not isinstance(uri, str) or not uri:
        raise MCPArgumentError(
            connection.name, "uri", f"a resource URI must be a non-empty string, not {uri!r}"
        )
    return await connection.read(uri, timeout=timeout, limited=limited)


async def read_resource(connection: ServerConnection, uri: str) -> list[Blob]:
    """Read ``uri`` from the server: one ``Blob`` per entry of its contents (see :func:`to_blobs`).

    Raises:
        MCPServerError: the server refused (e.g. code -32002: no such resource).
        MCPConnectionError, MCPTimeoutError, MCPProtocolError: as for any request.
    """
    return to_blobs(connection.name, await _read(connection, uri))


def to_blobs(server: str, result: types.ReadResourceResult) -> list[Blob]:
    """A ``resources/read`` result as LangChain ``Blob``s: text entries hold their ``str``, binary
    ones their decoded bytes; ``mimetype`` is the entry's MIME type; ``metadata`` holds ``uri``,
    ``server`` and, when the server sent them, ``meta`` (the entry's ``_meta``).

    Raises:
        MCPProtocolError: a binary entry is not valid base64.
    """
    blobs = []
    for entry in result.contents:
        metadata: dict[str, Any] = {"uri": str(entry.uri), "server": server}
        if entry.meta:
            metadata["meta"] = dict(entry.meta)
        if isinstance(entry, types.TextResourceContents):
            data: str | bytes = entry.text
        else:
            try:
                data = base64.b64decode(entry.blob, validate=True)
            except (binascii.Error, ValueError):
                raise MCPProtocolError(
                    server, f"resource {entry.uri} has a blob that is not base64"
                ) from None
        blobs.append(Blob.from_data(data, mime_type=entry.mime_type, metadata=metadata))
    return blobs


async def template_uri(connection: ServerConnection, template: str) -> str:
    """The ``uriTemplate`` of the server's template named or written ``template`` (a template the
    server does not list is used as written if it has a ``{variable}``).

    Raises:
        MCPArgumentError: no such template.
    """
    templates = await list_resource_templates(connection)
    for listed in templates:
        if template in (listed.uri_template, listed.name):
            return listed.uri_template
    if "{" in template:
        return template  # a template the server did not list: expand it as given
    known = ", ".join(repr(t.name) for t in templates) or "none"
    raise MCPArgumentError(
        connection.name, "template", f"no resource template {template!r} (templates: {known})"
    )


async def read_resource_template(
    connection: ServerConnection, template: str, arguments: Mapping[str, Any]
) -> list[Blob]:
    """Expand a resource template (its ``uriTemplate`` or its ``name``) with ``arguments`` and read
    the resource it names.

    Every variable in the URI's path must be given; those in a query, a fragment or path
    parameters (``{?x}``, ``{&x}``, ``{#x}``, ``{;x}``) may be left out; an argument the template
    does not name is an error.

    Raises:
        MCPArgumentError: an unknown template, a missing or unknown argument.
        and what :func:`read_resource` raises.
    """
    uri_template = await template_uri(connection, template)
    try:
        variables = template_variables(uri_template)
    except ValueError as exc:
        raise MCPArgumentError(connection.name, "template", str(exc)) from None
    names = {v.name for v in variables}
    unknown = sorted(set(arguments) - names)
    if unknown:
        raise MCPArgumentError(
            connection.name,
            unknown[0],
            f"resource template {uri_template!r} has no variable {unknown[0]!r} "
            f"(it has: {', '.join(sorted(names)) or 'none'})",
        )
    missing = [
        v.name
        for v in variables
        if v.required and (is_undefined(arguments.get(v.name)) or arguments[v.name] == "")
    ]
    if missing:
        raise MCPArgumentError(
            connection.name, missing[0], f"resource template {uri_template!r} needs {missing[0]!r}"
        )
    return await read_resource(connection, expand_uri_template(uri_template, arguments))


# -- resource links in tool results -----------------------------------------------------------


def link_target(link: Any, index: int = 0) -> tuple[str | None, str]:
    """The server and URI a resource link from a tool result points at.

    ``link`` is a ``resource_link`` / embedded-resource block from a ``ToolMessage``'s content or
    artifact (a ``file`` block whose ``extras`` name the server), an ``mcp_types.ResourceLink``,
    or a ``ToolMessage``: then its ``index``-th link (counting content, then artifact).

    Raises:
        ValueError: ``link`` holds no resource link (or not that many).
    """
    if isinstance(link, types.ResourceLink):
        return None, str(link.uri)
    if isinstance(link, ToolMessage):
        artifact = link.artifact if isinstance(link.artifact, dict) else {}
        blocks = [b for b in (link.content if isinstance(link.content, list) else []) if isinstance(b, dict)]
        blocks += [b for b in artifact.get("content", []) if isinstance(b, dict)]
        links = [b for b in blocks if _block_uri(b) is not None]
        if index >= len(links):
            raise MCPArgumentError(
                None, None, f"the tool message has {len(links)} resource link(s); there is no link {index}"
            )
        server, uri = link_target(links[index])
        return server or artifact.get("server"), uri
    if isinstance(link, Mapping):
        found = _block_uri(link)
        if found is None:
            raise MCPArgumentError(None, None, "the block is not a resource link (no url or extras.uri)")
        extras = link.get("extras") or {}
        return extras.get("server"), found
    raise MCPArgumentError(None, None, f"not a resource link: {type(link).__name__}")


def _block_uri(block: Mapping[str, Any]) -> str | None:
    if block.get("type") != "file":
        return None
    extras = block.get("extras") or {}
    if "url" in block and isinstance(block["url"], str):
        return block["url"]
    uri = extras.get("uri")
    return uri if isinstance(uri, str) else None


# -- the model-facing read tool ---------------------------------------------------------------


async def read_tool(connection: ServerConnection) -> types.Tool:
    """The tool a server with ``resource_tool: true`` offers the model: read one of its resources
    by URI. Its description lists the first resources and templates the server lists (a server
    that cannot list them still gets the tool)."""
    lines = [f"Read a resource of the MCP server {connection.name!r} by its URI."]
    try:
        resources = await list_resources(connection)
        templates = await list_resource_templates(connection)
    except (MCPConnectionError, MCPServerError, MCPProtocolError, TimeoutError) as exc:
        logger.debug("MCP server %r: resources for the read tool not listed: %s", connection.name, exc)
        resources, templates = [], []
    shown = 0
    if resources:
        lines.append("Resources:")
        for res in resources[:_READ_TOOL_LISTED]:
            about = _about(res.description or res.title or res.name or "", limit=120)
            lines.append(f"- {res.uri}" + (f": {about}" if about else ""))
            shown += 1
        if len(resources) > shown:
            lines.append(f"- ... and {len(resources) - shown} more")
    if templates:
        lines.append("URI templates (fill in the {placeholders}):")
        for tpl in templates[:_READ_TOOL_LISTED]:
            about = _about(tpl.description or tpl.title or tpl.name or "", limit=120)
            lines.append(f"- {tpl.uri_template}" + (f": {about}" if about else ""))
    return types.Tool(
        name=READ_TOOL,
        description="\n".join(lines),
        input_schema={
            "type": "object",
            "properties": {"uri": {"type": "string", "description": "The URI of the resource to read."}},
            "required": ["uri"],
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True),
        _meta={_READ_TOOL_META: True},
    )


def is_read_tool(tool: types.Tool) -> bool:
    """``tool`` is the read tool this package made (not one the server listed)."""
    return bool(tool.meta and tool.meta.get(_READ_TOOL_META) is True)


async def with_read_tool(connection: ServerConnection, tools: list[types.Tool]) -> list[types.Tool]:
    """``tools`` plus the read tool, for a server configured with ``resource_tool: true`` that
    offers resources. A server that lists a tool of that name keeps its own (with a warning)."""
    if not connection.config.resource_tool:
        return tools
    if (await connection.server_capabilities()).resources is None:
        logger.warning(
            "MCP server %r: resource_tool is set but the server offers no resources; no %s tool",
            connection.name,
            READ_TOOL,
        )
        return tools
    if any(t.name == READ_TOOL for t in tools):
        logger.warning(
            "MCP server %r lists a tool named %r itself: resource_tool adds none", connection.name, READ_TOOL
        )
        return tools
    return [*tools, await read_tool(connection)]


def _about(text: str, limit: int) -> str:
    """One line of a server's text, cleaned of hidden characters, at most ``limit`` long."""
    return sanitise_text(" ".join(text.split()), limit=limit)


async def read_as_tool_result(
    connection: ServerConnection, uri: Any, *, timeout: float | Literal["default"] | None = "default"
) -> types.CallToolResult:
    """What the read tool returns: text entries as text (each after a line naming its URI),
    images and audio as such, other binary entries as embedded resources (routed by the server's
    ``output_handling`` like any tool output). A read the server refuses is an error result the
    model sees, as for a failed tool."""
    try:
        result = await _read(connection, uri, timeout, limited=True)
    except MCPServerError as exc:
        return types.CallToolResult(
            content=[types.TextContent(text=f"Cannot read {uri}: {exc.reason}")], is_error=True
        )
    except MCPArgumentError as exc:
        return types.CallToolResult(content=[types.TextContent(text=exc.message)], is_error=True)
    blocks: list[types.ContentBlock] = []
    many = len(result.contents) > 1
    for entry in result.contents:
        mime = entry.mime_type or ""
        if isinstance(entry, types.TextResourceContents):
            head = f"{entry.uri}" + (f" ({mime})" if mime else "")
            blocks.append(types.TextContent(text=f"{head}\n{entry.text}" if many else entry.text))
        elif mime.startswith("image/"):
            blocks.append(types.ImageContent(data=entry.blob, mime_type=mime))
        elif mime.startswith("audio/"):
            blocks.append(types.AudioContent(data=entry.blob, mime_type=mime))
        else:
            blocks.append(types.EmbeddedResource(resource=entry))
    if not blocks:
        blocks.append(types.TextContent(text=f"{uri} is empty"))
    return types.CallToolResult(content=blocks)


# -- subscriptions ----------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def subscribe(
    connection: ServerConnection, uris: Sequence[str]
) -> AsyncIterator[AsyncIterator[MCPResourceUpdatedEvent]]:
    """Watch ``uris`` for ``notifications/resources/updated`` (see :meth:`MCPPool.subscribe`)."""
    from langgraph_mcp._session.watch import Subscriber

    if isinstance(uris, str) or not uris or not all(isinstance(u, str) and u for u in uris):
        raise MCPArgumentError(connection.name, "uris", "give one or more resource URIs (non-empty strings)")
    caps = await connection.server_capabilities()
    if caps.resources is None or not caps.resources.subscribe:
        raise MCPServerError(
            connection.name,
            types.METHOD_NOT_FOUND,
            "the server does not offer resource subscriptions (no resources.subscribe capability)",
        )
    scope = connection.scope()
    subscriber = Subscriber(frozenset(uris))
    scope.watch.add(subscriber)
    writer = stream_writer_here()
    try:
        session = await connection.live_session()
        try:
            with anyio.fail_after(connection.config.connect_timeout):
                await scope.watch.confirmed(subscriber, session)
        except TimeoutError:
            raise MCPConnectionError(
                connection.name,
                f"the server did not confirm the subscription within {connection.config.connect_timeout:g}s",
            ) from None
        except LookupError as exc:
            raise MCPServerError(connection.name, types.INVALID_PARAMS, str(exc)) from None
        except ConnectionError as exc:
            raise MCPConnectionError(connection.name, str(exc)) from None
        keeper = asyncio.get_running_loop().create_task(_keep_connected(connection, subscriber, session))
        try:
            yield _Updates(connection.name, subscriber, writer)
        finally:
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keeper
    finally:
        scope.watch.remove(subscriber)
        # Let the server stop sending what nobody watches (on a live session; within the
        # connect timeout).
        live = scope.owner.session
        if live is not None and live.alive and not scope.owner.closing:
            with anyio.move_on_after(connection.config.connect_timeout):
                await scope.watch.settled()


class _Updates:
    """The updates of one subscription, as an async iterator. Not a generator: a caller may
    stop waiting for the next update (``asyncio.wait_for``) and wait again later."""

    def __init__(self, server: str, subscriber: Subscriber, writer: Any) -> None:
        self._server = server
        self._subscriber = subscriber
        self._writer = writer

    def __aiter__(self) -> _Updates:
        return self

    async def __anext__(self) -> MCPResourceUpdatedEvent:
        try:
            uri = await self._subscriber.next()
        except ConnectionError as exc:
            raise MCPConnectionError(self._server, f"resource subscription lost: {exc}") from None
        event: MCPResourceUpdatedEvent = {"type": "mcp_resource_updated", "server": self._server, "uri": uri}
        if self._writer is not None:
            self._writer(dict(event))
        return event


async def _keep_connected(connection: ServerConnection, subscriber: Subscriber, session: Any) -> None:
    try:
        await _reconnecting(connection, subscriber, session)
    except Exception as exc:  # whatever ends the keeper ends the subscription, never silently
        subscriber.fail(ConnectionError(connection.redact(describe(exc))))


async def _reconnecting(connection: ServerConnection, subscriber: Subscriber, session: Any) -> None:
    """Keep a session live while the subscription is open: when one ends, open the next (its
    background work subscribes again). A server given up on, or a pool closing, ends the
    subscription (its iterator raises)."""
    while True:
        await session.stop.wait()
        while True:
            try:
                session = await connection.live_session()
                break
            except MCPConnectionError as exc:
                owner = connection.scope().owner
                if owner.given_up or owner.closing:
                    subscriber.fail(ConnectionError(str(exc)))
                    return
                await anyio.sleep(max(0.2, connection.config.restart.backoff))
