"""Fixture server for per-user OAuth on a deployment: an OAuth authorization server and an MCP
server that takes its tokens, on one port, in a process of their own.

- The authorization server is the MCP SDK's (``create_auth_routes``, dynamic registration and
  revocation on) over :class:`tests.servers.authorization.Provider`. A browser is "logged in"
  there as the user its ``login`` cookie names (as an authorization server's own session cookie
  would say); the authorization is approved at once.
- ``/mcp`` is an MCP server (streamable HTTP) guarded by :class:`tests.servers.authorization.Gate`:
  its tools are listed without a token, a ``tools/call`` needs a valid one. Its one tool,
  ``whoami``, answers ``signed in as <user>``: the user the authorization server issued the call's
  token to.
- ``GET /calls`` lists the ``tools/call`` requests it received, in order: ``{"status", "user"
  (whose token, or null), "replica" (the request's ``X-Replica`` header, or null)}``.

Usage: ``python -m tests.servers.signin --transport http --port 0`` (prints ``LISTENING <port>``).
"""

from __future__ import annotations

import json
import logging
import sys
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

import anyio

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import Context, MCPServer
from pydantic import AnyHttpUrl
from starlette.applications import Starlette

from tests.servers._runner import _print_listening, parser, serve_asgi
from tests.servers.authorization import Gate, Provider, read_body


def _header(scope: Any, name: bytes) -> str:
    return dict(scope["headers"]).get(name, b"").decode("latin-1")


def build_app(base: str) -> Any:
    """The ASGI app of the server reachable at ``base`` (``http://host:port``)."""
    provider = Provider(token_ttl=3600)
    srv = MCPServer("signin")

    @srv.tool()
    def whoami(ctx: Context) -> str:
        """Who the authorization server issued this call's token to."""
        given = (ctx.headers or {}).get("authorization", "")
        return f"signed in as {provider.user_of(given.removeprefix('Bearer '))}"

    mcp = srv.streamable_http_app(host="127.0.0.1")
    gate = Gate(mcp, provider, base)
    authorization = Starlette(
        routes=create_auth_routes(
            provider,  # type: ignore[arg-type]
            AnyHttpUrl(base),
            client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=["read"]),
            revocation_options=RevocationOptions(enabled=True),
        )
    )
    calls: list[dict[str, Any]] = []

    async def respond(send: Any, status: int, body: bytes, kind: bytes = b"application/json") -> None:
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", kind)]})
        await send({"type": "http.response.body", "body": body})

    async def recorded(scope: Any, receive: Any, send: Any) -> None:
        """Through the gate, noting each ``tools/call``: its answer's status and whose token."""
        raw, replay = await read_body(scope, receive)
        try:
            method = json.loads(raw).get("method") if raw else None
        except (ValueError, AttributeError):
            method = None
        entry: dict[str, Any] | None = None
        if method == "tools/call":
            token = _header(scope, b"authorization").removeprefix("Bearer ")
            entry = {"status": None, "user": provider.user_of(token) if token else None,
                     "replica": _header(scope, b"x-replica") or None}  # fmt: skip
            calls.append(entry)

        async def noting(message: Any) -> None:
            if entry is not None and message["type"] == "http.response.start":
                entry["status"] = message["status"]
            await send(message)

        await gate(scope, replay, noting)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":  # the lifespan: the MCP server's session manager
            await mcp(scope, receive, send)
            return
        path = scope["path"]
        if path == "/calls":
            await respond(send, 200, json.dumps(calls).encode())
        elif path == "/mcp" or path.startswith("/.well-known/oauth-protected-resource"):
            await recorded(scope, receive, send)
        else:
            if path == "/authorize":
                cookies = SimpleCookie(_header(scope, b"cookie"))
                provider.next_user = cookies["login"].value if "login" in cookies else "nobody"
            await authorization(scope, receive, send)

    return app


async def serve(host: str, port: int) -> None:
    logging.getLogger("mcp").setLevel(logging.WARNING)  # not a line per session
    await serve_asgi(lambda bound: build_app(f"http://{host}:{bound}"), host, port, _print_listening)


if __name__ == "__main__":
    args = parser(__doc__).parse_args()
    anyio.run(serve, args.host, args.port)
