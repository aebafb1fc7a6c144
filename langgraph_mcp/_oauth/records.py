"""Per-user OAuth records in the graph's store, sealed with the server's key.

Three kinds live under ``("langgraph_mcp", "oauth", <kind>)``:

* ``tokens``: one user's tokens for one server (and the authorization server that issued them),
  keyed by a digest of (user, server);
* ``pending``: one authorization in progress (its PKCE verifier, what the code exchange needs,
  and whom it is for), keyed by the nonce in its ``state``; read once, then deleted;
* ``clients``: a dynamically registered client of one authorization server.

Every value is ``{"sealed": <Fernet token>}``: nothing readable is stored, and each sealed
record names the user and server it belongs to, checked when it is opened (a record copied to
another key is refused). ``state`` is ``<server>.<nonce>.<mac>``: an HMAC, under a key derived
from the server's key, of the server, the nonce, the user (a digest), the thread and the expiry.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from langgraph.store.base import BaseStore

__all__ = [
    "MAX_STATE",
    "Pending",
    "Sealer",
    "TokenRecord",
    "delete_tokens",
    "load_tokens",
    "save_tokens",
    "split_state",
    "take_pending",
]

_ROOT = ("langgraph_mcp", "oauth")
TOKENS = (*_ROOT, "tokens")
PENDING = (*_ROOT, "pending")
CLIENTS = (*_ROOT, "clients")
MAX_STATE = 512
"""The longest ``state`` read, in characters."""


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class Sealer:
    """Seals and opens records, and signs ``state``, with one server's key."""

    def __init__(self, key: str) -> None:
        self._fernet = Fernet(key.encode("ascii"))
        self._mac_key = hashlib.sha256(b"langgraph-mcp oauth state\0" + key.encode("ascii")).digest()

    def __repr__(self) -> str:
        return "Sealer(<key hidden>)"

    def seal(self, record: dict[str, Any]) -> dict[str, str]:
        return {"sealed": self._fernet.encrypt(json.dumps(record).encode()).decode("ascii")}

    def open(self, value: Any, *, ttl: float | None = None) -> dict[str, Any] | None:
        """The record in a stored value, or ``None`` when it is not one sealed with this key
        (or, with ``ttl``, older than ``ttl`` seconds)."""
        sealed = value.get("sealed") if isinstance(value, dict) else None
        if not isinstance(sealed, str) or len(sealed) > 64 * 1024:
            return None
        try:
            opened = self._fernet.decrypt(sealed.encode("ascii"), ttl=None if ttl is None else int(ttl) + 1)
            record = json.loads(opened)
        except (InvalidToken, ValueError):
            return None
        return record if isinstance(record, dict) else None

    def mac(self, server: str, nonce: str, user: str, thread: str | None, expires_at: float) -> str:
        message = "\0".join([server, nonce, _digest(user), thread or "", repr(float(expires_at))])
        return _b64(hmac.new(self._mac_key, message.encode("utf-8"), hashlib.sha256).digest())


def split_state(state: str) -> tuple[str, str, str] | None:
    """``(server, nonce, mac)`` of a ``state``, or ``None`` when it is not one of ours."""
    if not isinstance(state, str) or len(state) > MAX_STATE:
        return None
    parts = state.split(".")
    if len(parts) != 3 or not all(parts):
        return None
    try:
        server = base64.urlsafe_b64decode(parts[0] + "=" * (-len(parts[0]) % 4)).decode("utf-8")
    except ValueError:
        return None
    return server, parts[1], parts[2]


@dataclass
class TokenRecord:
    """One user's tokens for one server, and what refreshing them needs."""

    user: str
    server: str
    issuer: str
    access_token: str
    token_endpoint: str
    client_id: str
    resource: str
    refresh_token: str | None = None
    expires_at: float | None = None
    scopes: list[str] = field(default_factory=list)
    client_secret: str | None = None
    auth_method: str = "none"
    revocation_endpoint: str | None = None

    def __repr__(self) -> str:
        return f"TokenRecord(server={self.server!r}, issuer={self.issuer!r}, <tokens hidden>)"

    def expiring(self, margin: float) -> bool:
        return self.expires_at is not None and time.time() >= self.expires_at - margin


def _token_key(user: str, server: str) -> str:
    return _digest("tokens", user, server)


async def load_tokens(store: BaseStore, sealer: Sealer, user: str, server: str) -> TokenRecord | None:
    """``user``'s tokens for ``server``, or ``None`` (none stored, or not sealed for them)."""
    item = await store.aget(TOKENS, _token_key(user, server))
    record = sealer.open(item.value) if item is not None else None
    if record is None or record.get("user") != user or record.get("server") != server:
        return None
    try:
        return TokenRecord(**record)
    except TypeError:
        return None


async def save_tokens(store: BaseStore, sealer: Sealer, record: TokenRecord) -> None:
    await store.aput(TOKENS, _token_key(record.user, record.server), sealer.seal(asdict(record)), index=False)


async def delete_tokens(store: BaseStore, user: str, server: str) -> None:
    await store.adelete(TOKENS, _token_key(user, server))


@dataclass
class Pending:
    """One authorization in progress: whom it is for and what the code exchange needs."""

    server: str
    user: str
    thread: str | None
    expires_at: float
    verifier: str
    issuer: str
    iss_supported: bool
    token_endpoint: str
    client_id: str
    redirect_uri: str
    resource: str
    scopes: list[str]
    client_secret: str | None = None
    auth_method: str = "none"
    revocation_endpoint: str | None = None

    def __repr__(self) -> str:
        return f"Pending(server={self.server!r}, issuer={self.issuer!r}, <secrets hidden>)"


async def put_pending(store: BaseStore, sealer: Sealer, pending: Pending) -> str:
    """Store ``pending``; its ``state``."""
    nonce = secrets.token_urlsafe(24)
    await store.aput(PENDING, nonce, sealer.seal(asdict(pending)), index=False)
    mac = sealer.mac(pending.server, nonce, pending.user, pending.thread, pending.expires_at)
    return f"{_b64(pending.server.encode('utf-8'))}.{nonce}.{mac}"


async def take_pending(store: BaseStore, sealer: Sealer, server: str, nonce: str, mac: str) -> Pending | None:
    """The authorization a ``state`` names, deleted as it is taken (a ``state`` is good once);
    ``None`` when there is none, it has expired, or the ``state`` does not match it (then it is
    left alone: a forged ``state`` cannot spend another's)."""
    if len(nonce) > 64:
        return None
    item = await store.aget(PENDING, nonce)
    record = sealer.open(item.value) if item is not None else None
    try:
        pending = Pending(**record) if record is not None else None
    except TypeError:
        return None
    if pending is None or pending.server != server:
        return None
    expected = sealer.mac(server, nonce, pending.user, pending.thread, pending.expires_at)
    if not hmac.compare_digest(expected, mac):
        return None
    await store.adelete(PENDING, nonce)
    return pending if time.time() <= pending.expires_at else None


async def load_client(
    store: BaseStore, sealer: Sealer, server: str, issuer: str, redirect: str
) -> dict[str, Any] | None:
    item = await store.aget(CLIENTS, _digest("client", server, issuer, redirect))
    record = sealer.open(item.value) if item is not None else None
    if record is None or record.get("server") != server or record.get("issuer") != issuer:
        return None
    return record


async def save_client(
    store: BaseStore, sealer: Sealer, server: str, issuer: str, redirect: str, client: dict[str, Any]
) -> None:
    record = {**client, "server": server, "issuer": issuer}
    await store.aput(CLIENTS, _digest("client", server, issuer, redirect), sealer.seal(record), index=False)
