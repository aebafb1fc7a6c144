"""Per-user OAuth on a deployment, as its users meet it: the MCP config naming the sign-in
fixture server (``tests/servers/signin.py``), and a browser that signs in there and comes back
to the deployment's callback route.

The deployment's public address is :data:`PUBLIC` (the servers' ``redirect_uri`` names it); the
test, standing in for the reverse proxy or load balancer in front of the deployment, sends the
browser's request for it to the server process (or replica) it chooses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
from cryptography.fernet import Fernet

PUBLIC = "http://localhost"
KEY_ENV = "MCP_OAUTH_KEY"
ERAS = {"auto": "", "legacy": "legacy_"}
"""The server is configured once per protocol era; the 2025-11-25 one's tool is ``legacy_whoami``."""


def new_key() -> dict[str, str]:
    """The environment the deployment's processes share: the key that seals the tokens."""
    return {KEY_ENV: Fernet.generate_key().decode()}


def signin_servers(url: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """``mcpServers`` entries for the sign-in server at ``url``, once per protocol era, with
    per-user OAuth; the key comes from the environment (``${MCP_OAUTH_KEY}``)."""
    oauth = {"redirect_uri": f"{PUBLIC}/oauth/callback", "encryption_key": f"${{{KEY_ENV}}}"}
    entry = {"url": url, "oauth": oauth, "timeout": 30, **({"headers": headers} if headers else {})}
    return {
        "mail": {**entry, "protocol": "auto"},
        "legacy_mail": {**entry, "protocol": "legacy", "prefix": "legacy_"},
    }


def write_config(folder: Path, servers: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def authenticated(folder: Path, base: dict[str, Any], auth: str = "tests/browser/app_auth.py") -> Path:
    """``base`` (a ``langgraph.json``) with LangGraph custom auth (``auth``, by default
    ``tests/browser/app_auth.py``: ``Authorization: Bearer <user>`` names the user, each thread is
    its creator's; ``tests/deploy/guarded_auth.py`` adds the package's store rule) applied to the
    custom routes too."""
    from tests.langgraph_server import REPO_ROOT

    config = {**base, "dependencies": [str(REPO_ROOT)]}
    config["auth"] = {"path": str(REPO_ROOT / auth) + ":auth"}
    config["http"] = {**config.get("http", {}), "enable_custom_route_auth": True}
    path = folder / "langgraph.json"
    path.write_text(json.dumps(config))
    return path


def callback_of(location: str, deployment: str) -> str:
    """The authorization server's redirect to :data:`PUBLIC`, sent to ``deployment`` instead."""
    parts = urlsplit(location)
    assert f"{parts.scheme}://{parts.netloc}" == PUBLIC, location
    return f"{deployment}{parts.path}?{parts.query}"


async def authorize(url: str, login: str) -> str:
    """A browser logged in at the authorization server as ``login`` opens the authorization
    ``url``; where the authorization server sends it (the deployment's callback, with a code)."""
    async with httpx.AsyncClient(timeout=30, cookies={"login": login}) as browser:
        answer = await browser.get(url)
    assert answer.status_code == 302, answer.text
    query = parse_qs(urlsplit(answer.headers["location"]).query)
    assert "code" in query and "state" in query, answer.headers["location"]
    return str(answer.headers["location"])


async def come_back(callback: str, user: str | None) -> httpx.Response:
    """The browser, signed in at the deployment as ``user`` (its bearer token), opens ``callback``."""
    headers = {"Authorization": f"Bearer {user}"} if user is not None else {}
    async with httpx.AsyncClient(timeout=30) as browser:
        return await browser.get(callback, headers=headers)


def tampered(callback: str) -> str:
    """``callback`` with the signature of its ``state`` changed."""
    parts = urlsplit(callback)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    server, nonce, mac = query["state"].split(".")
    query["state"] = f"{server}.{nonce}.{mac[:-2]}{'AA' if not mac.endswith('AA') else 'BB'}"
    return f"{parts.scheme}://{parts.netloc}{parts.path}?{urlencode(query)}"


async def calls(server_url: str) -> list[dict[str, Any]]:
    """The ``tools/call`` requests the sign-in server received (``/calls``)."""
    origin = server_url.removesuffix("/mcp")
    async with httpx.AsyncClient(timeout=30) as http:
        answer = await http.get(f"{origin}/calls")
    answer.raise_for_status()
    found: list[dict[str, Any]] = answer.json()
    return found
