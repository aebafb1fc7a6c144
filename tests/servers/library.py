"""Fixture server with resources, resource templates, prompts and completions (both eras).

Resources (listed two per page): ``notes://index`` (markdown), ``notes://logo.png`` (PNG bytes),
``notes://counter`` (the counter's value), ``notes://pair`` (two entries: text and binary), and
one ``notes://extra/<name>`` per ``add_note`` call. Templates: ``notes://note/{name}`` (named
``note``) and ``notes://search{?q,limit}`` (named ``search``).

Prompts: ``summarise(topic, style?)``, ``show_logo`` (an image, then an assistant reply),
``quote_index`` (the index as an embedded resource, then a resource link), and one per
``add_prompt`` call. Completions: prompt ``summarise`` argument ``style``; template ``note``
argument ``name``.

Tools: ``bump`` (the counter + 1; tells subscribers of ``notes://counter``), ``add_note`` and
``add_prompt`` (tell clients the list changed), ``link`` (a resource link to ``notes://index``),
``crash`` (ends the process), ``subscribers`` (the URIs the calling session subscribed to, handshake era).
Subscribing (handshake era) to a URI this server does not have is refused.

2026-07-28 ``subscriptions/listen``: ``listeners`` (the resource URIs of each open listen stream),
``refuse_listens(count)`` (the next ``count`` listen requests are refused) and
``drop_listens_then_add_note(name)`` (ends every listen stream, then adds a note: nobody hears of it).
"""

import os
import sys
from pathlib import Path
from typing import Any

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import AssistantMessage, Message, UserMessage
from mcp.server.mcpserver.resources import FunctionResource
from mcp.shared.exceptions import MCPError

from tests.servers._runner import run_cli

# A 1x1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cf00000301010018dd8db40000000049454e44ae426082"
)
INDEX = "# Notes\n\n" + "".join(f"- note {i}: the index of every note.\n" for i in range(10))
PAGE_SIZE = 2
CURSOR = "page:"
STYLES = ("short", "long", "bullets")
NOTE_NAMES = ("alpha", "beta", "gamma")


def build_server(name: str = "library") -> MCPServer:
    srv: MCPServer = MCPServer(name)
    counter = {"value": 0}
    subscribed: dict[str, set[str]] = {}
    sessions: dict[str, Any] = {}

    @srv.resource(
        "notes://index", name="index", description="The index of every note.", mime_type="text/markdown"
    )
    def index() -> str:
        return INDEX

    @srv.resource("notes://logo.png", name="logo", mime_type="image/png")
    def logo() -> bytes:
        return PNG

    @srv.resource("notes://counter", name="counter", mime_type="text/plain")
    def count() -> str:
        return str(counter["value"])

    @srv.resource("notes://note/{name}", name="note", description="One note, by name.")
    def note(name: str) -> str:
        return f"note {name}"

    @srv.resource("notes://search{?q,limit}", name="search", description="Search the notes.")
    def search(q: str = "", limit: str = "10") -> str:
        return f"search q={q} limit={limit}"

    async def read_pair(ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams) -> Any:
        if str(params.uri) != "notes://pair":
            return await original_read(ctx, params)
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri="notes://pair", text="first", mime_type="text/plain", _meta={"n": 1}
                ),
                types.BlobResourceContents(
                    uri="notes://pair#2", blob="AAEC", mime_type="application/octet-stream"
                ),
            ]
        )

    original_read = srv._lowlevel_server._request_handlers["resources/read"].handler

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams
    ) -> Any:
        listed = await srv.list_resources()
        listed.append(types.Resource(uri="notes://pair", name="pair"))
        start = 0
        if params.cursor is not None:
            if not params.cursor.startswith(CURSOR):
                raise MCPError(code=types.INVALID_PARAMS, message=f"Invalid cursor: {params.cursor!r}")
            start = int(params.cursor.removeprefix(CURSOR))
        end = start + PAGE_SIZE
        return types.ListResourcesResult(
            resources=listed[start:end], next_cursor=f"{CURSOR}{end}" if end < len(listed) else None
        )

    async def subscribe(ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams) -> Any:
        known = {str(r.uri) for r in await srv.list_resources()} | {"notes://pair"}
        if str(params.uri) not in known:
            raise MCPError(code=types.INVALID_PARAMS, message=f"No resource {params.uri}")
        subscribed.setdefault(_session_key(ctx), set()).add(str(params.uri))
        sessions[_session_key(ctx)] = ctx.session
        return types.EmptyResult()

    async def unsubscribe(ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams) -> Any:
        subscribed.get(_session_key(ctx), set()).discard(str(params.uri))
        return types.EmptyResult()

    low = srv._lowlevel_server
    listen_handler: Any = low._request_handlers["subscriptions/listen"].handler
    listens: dict[int, list[str]] = {}
    refusals = {"left": 0}

    async def listen(
        ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> Any:
        if refusals["left"] > 0:
            refusals["left"] -= 1
            raise MCPError(code=types.INTERNAL_ERROR, message="Subscription limit reached")
        key = id(ctx)
        listens[key] = sorted(params.notifications.resource_subscriptions or ())
        try:
            return await listen_handler(ctx, params)
        finally:
            del listens[key]

    low.add_request_handler("subscriptions/listen", types.SubscriptionsListenRequestParams, listen)
    low.add_request_handler("resources/read", types.ReadResourceRequestParams, read_pair)
    low.add_request_handler("resources/list", types.PaginatedRequestParams, list_resources)
    low.add_request_handler("resources/subscribe", types.SubscribeRequestParams, subscribe)
    low.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, unsubscribe)

    async def updated(ctx: Context, uri: str) -> None:
        await ctx.notify_resource_updated(uri)  # 2026-07-28: subscriptions/listen streams
        for key, uris in subscribed.items():  # earlier: sessions that subscribed
            if uri in uris:
                await sessions[key].send_resource_updated(uri)

    async def lists_changed(ctx: Context, kind: str) -> None:
        if kind == "resources":
            await ctx.notify_resources_changed()
            await ctx.session.send_resource_list_changed()
        else:
            await ctx.notify_prompts_changed()
            await ctx.session.send_prompt_list_changed()

    @srv.tool()
    async def bump(ctx: Context) -> int:
        """Add one to the counter (notes://counter)."""
        counter["value"] += 1
        await updated(ctx, "notes://counter")
        return counter["value"]

    @srv.tool()
    async def add_note(name: str, ctx: Context) -> str:
        """Add the resource notes://extra/<name>."""
        uri = f"notes://extra/{name}"
        srv.add_resource(FunctionResource(uri=uri, name=name, fn=lambda: f"extra {name}"))
        await lists_changed(ctx, "resources")
        return uri

    @srv.tool()
    async def add_prompt(name: str, ctx: Context) -> str:
        """Add a prompt called ``name``."""
        srv.add_prompt(_extra_prompt(name))
        await lists_changed(ctx, "prompts")
        return name

    @srv.tool()
    def listeners() -> list[list[str]]:
        """The resource URIs of each open subscriptions/listen stream."""
        return sorted(listens.values())

    @srv.tool()
    def refuse_listens(count: int) -> int:
        """Refuse the next ``count`` subscriptions/listen requests."""
        refusals["left"] = count
        return count

    @srv.tool()
    async def drop_listens_then_add_note(name: str, ctx: Context) -> str:
        """End every listen stream, then add notes://extra/<name> (its list change reaches nobody)."""
        listen_handler.close()
        uri = f"notes://extra/{name}"
        srv.add_resource(FunctionResource(uri=uri, name=name, fn=lambda: f"extra {name}"))
        await ctx.notify_resources_changed()
        return uri

    @srv.tool()
    def link() -> list[types.ContentBlock]:
        """A link to the index."""
        return [
            types.TextContent(text="see the index"),
            types.ResourceLink(uri="notes://index", name="index", mime_type="text/markdown"),
        ]

    @srv.tool()
    def crash() -> str:
        """End the server process at once."""
        os._exit(3)

    @srv.tool()
    def subscribers(ctx: Context) -> list[str]:
        """The URIs this session subscribed to (handshake era)."""
        return sorted(subscribed.get(_session_key(ctx), set()))

    @srv.prompt(description="Summarise a topic.")
    def summarise(topic: str, style: str = "short") -> str:
        return f"Summarise {topic} in a {style} style."

    @srv.prompt()
    def show_logo() -> list[Message]:
        return [
            UserMessage(types.ImageContent(data=_b64(PNG), mime_type="image/png")),
            AssistantMessage("A tiny logo."),
        ]

    @srv.prompt()
    def quote_index() -> list[Message]:
        return [
            UserMessage(
                types.EmbeddedResource(
                    resource=types.TextResourceContents(
                        uri="notes://index", text=INDEX, mime_type="text/markdown"
                    )
                )
            ),
            UserMessage(types.ResourceLink(uri="notes://logo.png", name="logo", mime_type="image/png")),
        ]

    @srv.completion()
    async def complete(ref: Any, argument: types.CompletionArgument, context: Any) -> types.Completion | None:
        if isinstance(ref, types.PromptReference) and ref.name == "summarise" and argument.name == "style":
            values = [s for s in STYLES if s.startswith(argument.value)]
        elif isinstance(ref, types.ResourceTemplateReference) and argument.name == "name":
            values = [n for n in NOTE_NAMES if n.startswith(argument.value)]
            if context is not None and context.arguments:
                values = [f"{v}-{context.arguments.get('prefix', '')}" for v in values]
        else:
            return None
        return types.Completion(values=values, total=len(values), has_more=False)

    return srv


def _session_key(ctx: Any) -> str:
    """The MCP session a request belongs to: its ``mcp-session-id`` over HTTP, else the process."""
    if isinstance(ctx, Context):
        headers = ctx.headers or {}
    else:
        headers = getattr(getattr(ctx, "request", None), "headers", None) or {}
    return {k.lower(): v for k, v in headers.items()}.get("mcp-session-id", "<process>")


def _b64(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode("ascii")


def _extra_prompt(name: str) -> Any:
    from mcp.server.mcpserver.prompts.base import Prompt

    def render() -> str:
        return f"prompt {name}"

    return Prompt.from_function(render, name=name)


if __name__ == "__main__":
    run_cli(build_server, description=__doc__)
