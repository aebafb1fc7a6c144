"""The HTTP routes of MCP Apps views' calls (``langgraph_mcp.apps.app_routes``).

Contract (``{prefix}`` is ``/mcp-apps`` by default; bodies and answers are JSON):

``POST {prefix}/threads/{thread_id}/call`` with :class:`~langgraph_mcp.types.MCPAppCallRequest`
    ``{"server", "method": "tools/call" | "resources/read", "params", "assistant_id"?}``
    (``assistant_id``: the assistant or graph to run the call with; by default the one the
    thread last ran). ``tools/call``
    (``params``: ``{"name": <the tool's MCP name>, "arguments"}``) runs as a run on the thread
    (see ``langgraph_mcp.apps``); ``resources/read`` (``params``: ``{"uri"}``) reads through the
    thread's session of that server. Answer: :class:`~langgraph_mcp.types.MCPAppCallResponse`,
    ``{"status": "done", "result": <MCP result>}`` (200) or, when the call stopped at an
    interrupt (an approval), ``{"status": "pending", "call_id"}`` (202).
``GET {prefix}/threads/{thread_id}/calls/{call_id}``
    The same answer for a pending call once the thread went on; 404 when the thread no longer
    holds it (a later view call replaced it); 410 when it was dropped unanswered (the thread went
    on with another run while the call waited for its approval: it never ran).

Bodies: ``application/json``; or JSON text sent as ``text/plain`` with the header
``X-MCP-App-Call: 1``, as Agent Chat UI's ``/api`` passthrough
sends what the ``mcp-app`` component posts: neither the header nor ``application/json`` can come
from a form or a script of another site without a CORS preflight, so the user's cookies are never
used by a request another site made (415 otherwise).

Refusals, ``{"error": "..."}``: 400 a malformed request; 408 a body slower than
:data:`BODY_TIMEOUT`; 401 / 403 as the LangGraph API answered the caller; 404 an unknown server or
a thread the caller may not read; 403 a tool the view may not call (not its server's, or its
visibility leaves out ``"app"``), a read of a server with no view, or a resource its server does
not list (or a read that would need the user's per-call identity); 409 the thread waits for a
person's answer, stayed busy for a minute, or has never run; 429 (with ``Retry-After``) too many
calls at once, of the thread (the same thread however its id is spelt), of the user, or in all
(counted only once the body arrived and the caller may use the thread); 502 the run or the server
failed, or the LangGraph API failed or timed out.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import json
import re
import uuid
from collections.abc import Callable, Mapping
from typing import Any

import httpx
from langchain_core.messages import AIMessage
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from langgraph_mcp._call.view import VIEW_CALL_PREFIX, view_uri
from langgraph_mcp._catalog.naming import safe_tool_name
from langgraph_mcp._catalog.view import ToolView
from langgraph_mcp._compat.langgraph_api import caller_identity
from langgraph_mcp._graph.node import MCPToolNode
from langgraph_mcp._graph.viewcalls import VIEW_CALL_CONFIG
from langgraph_mcp._oauth.options import per_user_oauth
from langgraph_mcp._pool.resources import _read, list_resources
from langgraph_mcp._support.redact import mask_all
from langgraph_mcp.errors import MCPError

__all__ = [
    "CALL_HEADER",
    "MAX_CALLS",
    "MAX_CALLS_PER_THREAD",
    "MAX_CALLS_PER_USER",
    "ROUTE_PREFIX",
    "AppRoutes",
    "user_share",
]


ROUTE_PREFIX = "/mcp-apps"
"""Where :func:`langgraph_mcp.apps.app_routes` serves by default."""
MAX_BODY = 256_000
"""Bytes of a request body; a longer one is refused."""
BODY_TIMEOUT = 10.0
"""Seconds a request body has to arrive in; a slower one is refused (408)."""
MAX_RESULT = 1_000_000
"""Characters of JSON of a ``resources/read`` result sent back; a longer one is refused."""
_MAX_NAME = 256
_BUSY_WAIT = 0.5
_BUSY_CHECKS = 120
"""How often, every :data:`_BUSY_WAIT` seconds, a busy thread is checked before a view's call on
it is refused."""
_ID = re.compile(r"[A-Fa-f0-9-]{32,36}")
"""A thread id as it may be spelt in a path (LangGraph's are UUIDs, taken in upper case and
without dashes too): nothing that could change the API path it goes into."""
_CALL_ID = re.compile(re.escape(VIEW_CALL_PREFIX) + r"[0-9a-f]{32}")
_RUN_TIMEOUT = httpx.Timeout(connect=10, read=600, write=30, pool=10)
MAX_CALLS_PER_THREAD = 4
"""Requests of one thread (``POST .../call``) the route serves at once, by default."""
MAX_CALLS = 64
"""Requests (``POST .../call``) the route serves at once in all, by default."""
MAX_CALLS_PER_USER = 16
"""Requests of one user the route serves at once with the default caps: a user's share is a
quarter of the route's cap (``max_calls // 4``), never less than a thread's cap; so one user
leaves at least 48 of the 64 places to everyone else."""
RETRY_AFTER = 2
"""Seconds a request refused for the cap is told to wait (``Retry-After``)."""
CALL_HEADER = "x-mcp-app-call"
"""The header (value ``1``) the ``mcp-app`` component sends with each call: with it a body sent
as ``text/plain`` is read as JSON, as a proxy that passes
the body on as text sends it (see :func:`_json_sent`)."""


def user_share(per_thread: int, total: int) -> int:
    """The requests one user may hold at once, by default (see :data:`MAX_CALLS_PER_USER`)."""
    return min(total, max(per_thread, total // 4))


class _Slots:
    """The requests being served: at most ``per_thread`` of one thread, ``per_user`` of one user
    and ``total`` in all. (One event loop: no lock is needed between the check and the count.)"""

    def __init__(self, per_thread: int, total: int, per_user: int | None = None) -> None:
        self.per_thread, self.total = per_thread, total
        self.per_user = per_user if per_user is not None else user_share(per_thread, total)
        self.taken = 0
        self.threads: dict[str, int] = {}
        self.users: dict[str, int] = {}

    def take(self, thread_id: str, user: str) -> None:
        """Count one request of ``thread_id`` made by ``user``; refuse one too many (nothing is
        counted then)."""
        if self.threads.get(thread_id, 0) >= self.per_thread:
            raise _Refused(429, "too many calls of this thread's views at once; try again shortly")
        if self.users.get(user, 0) >= self.per_user:
            raise _Refused(429, "too many MCP Apps calls of this user at once; try again shortly")
        if self.taken >= self.total:
            raise _Refused(429, "too many MCP Apps calls at once in all; try again shortly")
        self.taken += 1
        self.threads[thread_id] = self.threads.get(thread_id, 0) + 1
        self.users[user] = self.users.get(user, 0) + 1

    def give_back(self, thread_id: str, user: str) -> None:
        self.taken -= 1
        for counts, key in ((self.threads, thread_id), (self.users, user)):
            left = counts.get(key, 0) - 1
            if left > 0:
                counts[key] = left
            else:
                counts.pop(key, None)


class _Refused(MCPError):
    """A request the route answers with an error status (never leaves the route)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class AppRoutes:
    """The routes of one deployment's views (see the module docstring)."""

    def __init__(
        self,
        views: MCPToolNode,
        key: str,
        make_input: Callable[..., dict[str, Any]],
        *,
        api: Any,
        forward_headers: tuple[str, ...],
        limits: tuple[int, int, int | None] = (MAX_CALLS_PER_THREAD, MAX_CALLS, None),
    ) -> None:
        self.views, self.key, self.make_input = views, key, make_input
        self.api, self.forward = api, tuple(h.lower() for h in forward_headers)
        self.slots = _Slots(*limits)

    def routes(self, prefix: str) -> list[Route]:
        prefix = prefix.rstrip("/")
        return [
            Route(f"{prefix}/threads/{{thread_id}}/call", self.call, methods=["POST"]),
            Route(f"{prefix}/threads/{{thread_id}}/calls/{{call_id}}", self.result, methods=["GET"]),
        ]

    # -- the LangGraph API, as the caller -------------------------------------------------

    def _client(self, request: Request) -> httpx.AsyncClient:
        headers = {k: v for k, v in request.headers.items() if k.lower() in self.forward}
        api = self.api
        if api is None:
            # The LangGraph server this route runs in, called in process (not its /noauth
            # loopback: the caller's credentials must be checked).
            api = httpx.ASGITransport(app=importlib.import_module("langgraph_api.server").app)
        if isinstance(api, str):
            return httpx.AsyncClient(base_url=api, headers=headers, timeout=_RUN_TIMEOUT)
        return httpx.AsyncClient(base_url="http://api", transport=api, headers=headers, timeout=_RUN_TIMEOUT)

    @staticmethod
    async def _thread(client: httpx.AsyncClient, thread_id: str) -> dict[str, Any]:
        answer = await client.get(f"/threads/{thread_id}")
        if answer.status_code in (401, 403):
            raise _Refused(answer.status_code, "the caller may not use this thread")
        if answer.status_code == 404 or answer.status_code == 422:
            raise _Refused(404, "no such thread")
        if answer.status_code != 200:
            raise _Refused(502, f"the LangGraph API answered {answer.status_code}")
        return _object(answer.json())

    # -- handlers ---------------------------------------------------------------------

    async def call(self, request: Request) -> JSONResponse:
        held: tuple[str, str] | None = None
        try:
            # One spelling per thread: the cap of a thread counts the thread, not how it is spelt.
            thread_id = _thread_id(request.path_params["thread_id"])
            # The body under a deadline and the caller checked before any slot is taken: a caller
            # who may not use the thread, or never finishes sending, holds none.
            body = await _body(request)
            server, method, params = _fields(body)
            if server not in self.views.pool.servers:
                raise _Refused(404, f"no MCP server {server[:_MAX_NAME]!r}")
            async with self._client(request) as client:
                thread = await self._thread(client, thread_id)
                user = await self._user(request)
                self.slots.take(thread_id, user)
                held = (thread_id, user)
                if method == "resources/read":
                    return await self._read(thread_id, server, params)
                return await self._call(client, thread, server, params, body.get("assistant_id"))
        except _Refused as refusal:
            headers = {"Retry-After": str(RETRY_AFTER)} if refusal.status == 429 else None
            return JSONResponse({"error": str(refusal)}, status_code=refusal.status, headers=headers)
        except MCPError as exc:  # a server that cannot be reached, ...: no secrets in these
            return JSONResponse({"error": str(exc)[:1000]}, status_code=502)
        except _API_FAILURES as exc:
            return _api_failed(exc)
        finally:
            if held is not None:
                self.slots.give_back(*held)

    async def _user(self, request: Request) -> str:
        """Who makes ``request``, for the user's share of the cap: the identity the LangGraph
        API's authentication gives the caller when the route runs in its server; else (an API
        elsewhere) the credentials the caller sends it (``authorization``, ``x-api-key``: a
        caller with several credentials has a share for each), and one share for all callers
        without any."""
        if self.api is None:
            try:
                identity = await caller_identity(request)
            except Exception:  # the API let the caller use the thread; its own check says no
                raise _Refused(403, "the caller could not be authenticated") from None
            if identity is not None:
                return "user:" + identity
        sent = [request.headers.get(h, "") for h in ("authorization", "x-api-key") if h in self.forward]
        digest = hashlib.sha256("\0".join(sent).encode()).hexdigest()
        return "credentials:" + digest

    async def result(self, request: Request) -> JSONResponse:
        call_id = request.path_params["call_id"]
        try:
            thread_id = _thread_id(request.path_params["thread_id"])
            if not _CALL_ID.fullmatch(call_id):
                raise _Refused(404, "no such thread or call")
            async with self._client(request) as client:
                thread = await self._thread(client, thread_id)
                state = await client.get(f"/threads/{thread_id}/state")
                if state.status_code != 200:
                    raise _Refused(404, "no such thread")
                values = _object(state.json()).get("values") or {}
                answer = self._answer(values, call_id, thread_id)
                if answer.status_code == 202 and not _still_asked(thread, call_id):
                    raise _Refused(
                        410,
                        "the view's call was dropped unanswered: the thread went on with another run "
                        "while it waited for its approval (it never ran); call again",
                    )
                return answer
        except _Refused as refusal:
            return JSONResponse({"error": str(refusal)}, status_code=refusal.status)
        except _API_FAILURES as exc:
            return _api_failed(exc)

    async def _call(
        self,
        client: httpx.AsyncClient,
        thread: Mapping[str, Any],
        server: str,
        params: Mapping[str, Any],
        assistant: Any,
    ) -> JSONResponse:
        name, arguments = params.get("name"), params.get("arguments", {})
        if not isinstance(name, str) or not name or len(name) > _MAX_NAME:
            raise _Refused(400, "tools/call needs params.name, a tool name")
        if not isinstance(arguments, dict):
            raise _Refused(400, "tools/call params.arguments must be an object")
        pool = self.views.pool
        if pool.per_user(server):
            # Its tools are each user's own, known only in the user's run: there the view-calls
            # node refuses a call to a tool that is not the view's server's, or not for views.
            exposed = safe_tool_name((pool.servers[server].prefix or "") + name)
        else:
            await self.views.toolset.tools()
            view = ToolView(self.views.toolset, audience="app")  # no run yet: its tool_filter is the run's
            tool = view.find(server, name)
            if tool is None or not view.visible(tool):
                raise _Refused(
                    403,
                    f"a view of {server!r} may not call {name!r}: not one of its server's tools for views",
                )
            exposed = tool.name
        if assistant is None:
            metadata = thread.get("metadata") or {}
            assistant = metadata.get("assistant_id") or metadata.get("graph_id")
            if assistant is None:
                raise _Refused(409, "the thread has not run a graph yet: name its assistant_id")
        if not isinstance(assistant, str) or not assistant or len(assistant) > _MAX_NAME:
            raise _Refused(400, "'assistant_id' must be an assistant id or graph id")
        payload = self.make_input(server, exposed, arguments)
        call_id = payload[self.key][-1].tool_calls[0]["id"]
        request = {
            "assistant_id": assistant,
            "input": _jsonable(payload),
            # Names the run's own call: only this run runs it (see ``_graph.viewcalls.own_call``).
            "config": {"configurable": {VIEW_CALL_CONFIG: call_id}},
            "multitask_strategy": "reject",
        }
        # A run with input on a thread paused at an interrupt would drop the question a person
        # has not answered yet, so a busy thread is waited for (not queued behind: its run may
        # end at an interrupt) and an interrupted one refused.
        for _ in range(_BUSY_CHECKS):
            if thread.get("status") == "interrupted":
                raise _Refused(409, "the thread is waiting for a person's answer; answer it first")
            if thread.get("status") != "busy":
                run = await client.post(f"/threads/{thread['thread_id']}/runs/wait", json=request)
                if run.status_code != 409:  # 409: a run started meanwhile
                    break
            await asyncio.sleep(_BUSY_WAIT)
            thread = await self._thread(client, str(thread["thread_id"]))
        else:
            raise _Refused(409, "the thread stayed busy; try again later")
        if run.status_code != 200:
            raise _Refused(
                502, f"the view's call could not run: the LangGraph API answered {run.status_code}"
            )
        values = run.json()  # (any JSON: a list of values is not a done call)
        if isinstance(values, dict) and values.get("__error__"):
            raise _Refused(502, "the view's call failed in the graph")
        return self._answer(values if isinstance(values, dict) else {}, call_id, str(thread["thread_id"]))

    def _answer(self, values: Mapping[str, Any], call_id: str, thread_id: str) -> JSONResponse:
        messages = values.get(self.key) or []
        for message in messages:
            if (
                isinstance(message, dict)
                and message.get("type") == "tool"
                and message.get("tool_call_id") == call_id
            ):
                result = self._masked(_mcp_result(message), _server_of(messages, call_id), thread_id)
                return JSONResponse({"status": "done", "result": result})
        for message in messages:
            if isinstance(message, dict) and any(
                c.get("id") == call_id for c in message.get("tool_calls") or []
            ):
                return JSONResponse({"status": "pending", "call_id": call_id}, status_code=202)
        raise _Refused(404, "no such call: the thread holds another view call now")

    def _masked(self, result: dict[str, Any], server: str | None, thread_id: str) -> dict[str, Any]:
        """``result`` without the secrets of the call's server (what a server echoes of its
        configuration), masked as reads and a view's own props are; with every server's when the
        call names none the pool knows (fail closed)."""
        pool = self.views.pool
        if server is not None and server in pool.servers:
            return mask_all(result, pool.connection_for(server, thread_id).redact)  # type: ignore[no-any-return]
        for name in pool.servers:
            result = mask_all(result, pool.connection(name).redact)
        return result

    async def _read(self, thread_id: str, server: str, params: Mapping[str, Any]) -> JSONResponse:
        uri = params.get("uri")
        if not isinstance(uri, str) or not uri or len(uri) > 2048:
            raise _Refused(400, "resources/read needs params.uri")
        pool = self.views.pool
        if per_user_oauth(pool.servers[server]) is not None:
            raise _Refused(403, "a view cannot read resources of a server that acts for each user")
        tools = await self.views.toolset.tools()
        if not any(t.server == server and view_uri(t.mcp_meta) is not None for t in tools):
            raise _Refused(403, f"{server!r} has no MCP Apps view: no view reads its resources")
        if self.views.toolset.per_call_identity(server):
            # Per-call headers and _meta are computed from a run's runtime; a read outside a run
            # would go without them, as the deployment rather than the user.
            raise _Refused(403, "a view cannot read resources of a server whose calls carry per-call headers")
        async with pool.using(server, thread_id) as connection:
            try:
                declared: set[str | None] = {str(r.uri) for r in await list_resources(connection)}
            except MCPError as exc:  # the package's errors carry no secrets; masked once more
                raise _Refused(502, connection.redact(str(exc))[:1000]) from None
            declared |= {view_uri(t.mcp_meta) for t in tools if t.server == server}
            if uri not in declared:
                raise _Refused(
                    403, f"a view of {server!r} may read only resources its server lists or its tools show"
                )
            try:
                result = await _read(connection, uri)
            except MCPError as exc:  # the package's errors carry no secrets; masked once more
                raise _Refused(502, connection.redact(str(exc))[:1000]) from None
            dumped = mask_all(
                result.model_dump(mode="json", by_alias=True, exclude_none=True), connection.redact
            )
        if len(json.dumps(dumped, default=str)) > MAX_RESULT:
            raise _Refused(502, f"the resource is longer than {MAX_RESULT} characters")
        return JSONResponse({"status": "done", "result": dumped})


_API_FAILURES = (httpx.HTTPError, json.JSONDecodeError, UnicodeDecodeError)
"""The LangGraph API could not be reached, timed out, or answered something that is not JSON."""


def _api_failed(exc: Exception) -> JSONResponse:
    if isinstance(exc, httpx.HTTPError):
        failure = f"the LangGraph API could not be reached or timed out ({type(exc).__name__})"
    else:
        failure = "the LangGraph API answered something that is not JSON"
    return JSONResponse({"error": failure}, status_code=502)


def _thread_id(spelt: str) -> str:
    """The thread id in its one canonical form (a lower-case UUID with dashes), as the API names
    the thread; anything that is not a UUID is no thread."""
    if not _ID.fullmatch(spelt):
        raise _Refused(404, "no such thread")
    try:
        return str(uuid.UUID(spelt))
    except ValueError:
        raise _Refused(404, "no such thread") from None


def _object(answer: Any) -> dict[str, Any]:
    """A JSON answer of the LangGraph API that must be an object."""
    if not isinstance(answer, dict):
        raise _Refused(502, "the LangGraph API answered something that is not a JSON object")
    return answer


def _json_sent(request: Request) -> bool:
    """May the body be read as JSON? ``application/json``, or JSON text sent as ``text/plain``
    (or with no type) by a caller that also sent :data:`CALL_HEADER`.

    A page of another origin can send a form or plain text with the user's cookies without
    asking, but neither ``application/json`` nor a header of its own choosing: both need a CORS
    preflight first. (An ``Authorization`` header vouches for nothing: a browser adds the HTTP
    Basic credentials it keeps for a site to a form another site posts there.) Agent Chat UI's
    ``/api`` passthrough (``langgraph-nextjs-api-passthrough``) sends the body as text and passes
    on only ``x-*`` headers and ``Authorization``: the ``mcp-app`` component's
    :data:`CALL_HEADER` comes through it, and vouches for the text."""
    kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if kind == "application/json":
        return True
    return kind in ("text/plain", "") and request.headers.get(CALL_HEADER) == "1"


async def _body(request: Request) -> dict[str, Any]:
    if not _json_sent(request):
        raise _Refused(
            415,
            f"the request body must be application/json (or JSON text with the {CALL_HEADER} header "
            "the mcp-app component sends)",
        )
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
        raise _Refused(400, f"the request body is longer than {MAX_BODY} bytes")
    raw = b""
    try:
        async with asyncio.timeout(BODY_TIMEOUT):
            async for chunk in request.stream():
                raw += chunk
                if len(raw) > MAX_BODY:
                    raise _Refused(400, f"the request body is longer than {MAX_BODY} bytes")
    except TimeoutError:
        raise _Refused(408, f"the request body did not arrive within {BODY_TIMEOUT} s") from None
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        raise _Refused(400, "the request body is not JSON (or is nested too deeply)") from None
    if not isinstance(body, dict):
        raise _Refused(400, "the request body must be a JSON object")
    return body


def _fields(body: Mapping[str, Any]) -> tuple[str, str, Mapping[str, Any]]:
    server, method, params = body.get("server"), body.get("method"), body.get("params", {})
    if not isinstance(server, str) or not server:
        raise _Refused(400, "the request needs 'server', the view's MCP server")
    if method not in ("tools/call", "resources/read"):
        raise _Refused(400, "'method' must be 'tools/call' or 'resources/read'")
    if not isinstance(params, dict):
        raise _Refused(400, "'params' must be an object")
    return server, method, params


def _server_of(messages: Any, call_id: str) -> str | None:
    """The view's server the call message of ``call_id`` names (``additional_kwargs.mcp_app``)."""
    for message in messages:
        if isinstance(message, dict) and any(
            isinstance(c, dict) and c.get("id") == call_id for c in message.get("tool_calls") or []
        ):
            extra = message.get("additional_kwargs")
            recorded = extra.get("mcp_app") if isinstance(extra, dict) else None
            server = recorded.get("server") if isinstance(recorded, dict) else None
            return server if isinstance(server, str) else None
    return None


def _still_asked(thread: Mapping[str, Any], call_id: str) -> bool:
    """May the pending ``call_id`` still run: the thread is busy, or its open interrupts ask about it?"""
    if thread.get("status") == "busy":
        return True
    return call_id in json.dumps(thread.get("interrupts") or {}, default=str)


def _jsonable(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The run input with its messages as the API's JSON message dicts."""
    out: dict[str, Any] = {}
    for key, messages in payload.items():
        out[key] = [
            {
                "type": m.type,
                "id": m.id,
                "content": m.content,
                **(
                    {"tool_calls": m.tool_calls, "additional_kwargs": m.additional_kwargs}
                    if isinstance(m, AIMessage)
                    else {}
                ),
            }
            for m in messages
        ]
    return out


def _mcp_result(message: Mapping[str, Any]) -> dict[str, Any]:
    """A view call's ``ToolMessage`` (as JSON) in MCP's ``CallToolResult`` shape."""
    content = message.get("content")
    if isinstance(content, str):
        blocks: list[Any] = [{"type": "text", "text": content}] if content else []
    else:
        blocks = [b if isinstance(b, dict) else {"type": "text", "text": str(b)} for b in content or []]
    artifact = message.get("artifact")
    result: dict[str, Any] = {"content": blocks, "isError": message.get("status") == "error"}
    if isinstance(artifact, dict):
        blocks.extend(b for b in artifact.get("content") or [] if isinstance(b, dict))
        if isinstance(artifact.get("structured_content"), dict):
            result["structuredContent"] = artifact["structured_content"]
        if isinstance(artifact.get("meta"), dict):
            result["_meta"] = artifact["meta"]
    return result
