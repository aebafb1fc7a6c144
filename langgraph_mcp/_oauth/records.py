"""Per-user OAuth records in the graph's store, sealed with the server's key.

Three kinds live under ``("langgraph_mcp", "oauth", <kind>)``:

* ``tokens``: one user's tokens for one server (and the authorization server that issued them),
  keyed by an HMAC of (user, server) under a key derived from the server's key, so that nobody
  without that key can compute another user's record key (to read, overwrite or delete it
  through the store API). Records kept by earlier versions under the plain SHA-256 of (user,
  server), or under an older key's HMAC, are still read, then moved: sealed again under the
  newest key's HMAC, and the old item deleted;
* ``pending``: one authorization in progress (its PKCE verifier, what the code exchange needs,
  and whom it is for), keyed by the nonce in its ``state``; read once, then deleted. Beside the
  sealed record it shows its expiry and an opaque owner (a keyed digest of server and user), so
  that abandoned ones are swept as new ones are kept: the expired ones, and a user's oldest
  beyond :data:`MAX_PENDING_PER_USER`, each sweep reading a bounded number of records;
* ``clients``: a dynamically registered client of one authorization server.

Every value is ``{"sealed": <Fernet token>}`` (plus, for ``pending``, the expiry and owner
digest): nothing readable is stored, and each sealed
record names the user and server it belongs to, checked when it is opened (a record copied to
another key is refused). ``state`` is ``<server>.<nonce>.<mac>``: an HMAC, under a key derived
from the server's key, of the server, the nonce, the user (a digest), the thread and the expiry.

The key may be several (comma-separated, the newest first): records are sealed and ``state``
signed with the first; any of them opens a record or checks a ``state``, and tokens opened with
an older key are sealed again with the first one.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from langgraph.store.base import BaseStore

from langgraph_mcp.errors import MCPError

__all__ = [
    "MAX_PENDING_PER_USER",
    "MAX_STATE",
    "OtherUser",
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
MAX_PENDING_PER_USER = 10
"""Sign-ins in progress kept per user and server: keeping one more drops the oldest."""
_SWEEP = 50
"""The most expired sign-ins one sweep reads (and deletes)."""


def split_keys(value: str) -> list[str]:
    """The keys of an ``encryption_key`` option: comma-separated, the newest first."""
    return [k.strip() for k in value.split(",") if k.strip()]


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class Sealer:
    """Seals and opens records, and signs ``state``, with one server's key (or keys: the first
    seals and signs, any opens and checks)."""

    def __init__(self, key: str) -> None:
        keys = [k.encode("ascii") for k in split_keys(key)]
        self._fernets = [Fernet(k) for k in keys]
        self._multi = MultiFernet(self._fernets)
        self._mac_keys = [hashlib.sha256(b"langgraph-mcp oauth state\0" + k).digest() for k in keys]
        self._record_keys = [hashlib.sha256(b"langgraph-mcp oauth record key\0" + k).digest() for k in keys]

    def __repr__(self) -> str:
        return "Sealer(<key hidden>)"

    def seal(self, record: dict[str, Any]) -> dict[str, str]:
        return {"sealed": self._fernets[0].encrypt(json.dumps(record).encode()).decode("ascii")}

    def open(self, value: Any, *, ttl: float | None = None) -> dict[str, Any] | None:
        """The record in a stored value, or ``None`` when it is not one sealed with these keys
        (or, with ``ttl``, older than ``ttl`` seconds)."""
        return self.unseal(value, ttl=ttl)[0]

    def unseal(self, value: Any, *, ttl: float | None = None) -> tuple[dict[str, Any] | None, bool]:
        """:meth:`open`, and whether the record was sealed with an older key than the first."""
        sealed = value.get("sealed") if isinstance(value, dict) else None
        if not isinstance(sealed, str) or len(sealed) > 64 * 1024:
            return None, False
        limit = None if ttl is None else int(ttl) + 1
        older = False
        try:
            try:
                opened = self._fernets[0].decrypt(sealed.encode("ascii"), ttl=limit)
            except InvalidToken:
                if len(self._fernets) == 1:
                    raise
                opened, older = self._multi.decrypt(sealed.encode("ascii"), ttl=limit), True
            record = json.loads(opened)
        except (InvalidToken, ValueError):
            return None, False
        return (record, older) if isinstance(record, dict) else (None, False)

    def mac(self, server: str, nonce: str, user: str, thread: str | None, expires_at: float) -> str:
        return self._macs(server, nonce, user, thread, expires_at)[0]

    def check(
        self, mac: str, server: str, nonce: str, user: str, thread: str | None, expires_at: float
    ) -> bool:
        """Was ``mac`` made by one of the keys for these values?"""
        found = False
        for expected in self._macs(server, nonce, user, thread, expires_at):
            found |= hmac.compare_digest(expected, mac)
        return found

    def _macs(self, server: str, nonce: str, user: str, thread: str | None, expires_at: float) -> list[str]:
        message = "\0".join([server, nonce, _digest(user), thread or "", repr(float(expires_at))]).encode()
        return [_b64(hmac.new(k, message, hashlib.sha256).digest()) for k in self._mac_keys]

    def token_keys(self, user: str, server: str) -> list[str]:
        """The store keys ``user``'s tokens for ``server`` may be kept under: the newest key's
        HMAC first, then the older keys', then the plain digest earlier versions used."""
        message = "\0".join(["tokens", user, server]).encode("utf-8")
        keyed = [_b64(hmac.new(k, message, hashlib.sha256).digest()) for k in self._record_keys]
        return [*dict.fromkeys(keyed), _legacy_token_key(user, server)]

    def names(self, *parts: str) -> list[str]:
        """Opaque store keys for ``parts`` (a keyed digest under each key, the newest first): a
        record another feature keeps sealed under a name nobody without the key can link to its
        parts."""
        message = "\0".join(["name", *parts]).encode("utf-8")
        return list(
            dict.fromkeys(_b64(hmac.new(k, message, hashlib.sha256).digest()) for k in self._record_keys)
        )

    def owner(self, server: str, user: str) -> str:
        """An opaque name of ``user`` of ``server`` (a keyed digest, under the first key)."""
        message = "\0".join(["owner", server, user]).encode("utf-8")
        return _b64(hmac.new(self._mac_keys[0], message, hashlib.sha256).digest())


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


def _legacy_token_key(user: str, server: str) -> str:
    """The key earlier versions kept tokens under: anyone could compute it (read, not written)."""
    return _digest("tokens", user, server)


async def load_tokens(store: BaseStore, sealer: Sealer, user: str, server: str) -> TokenRecord | None:
    """``user``'s tokens for ``server``, or ``None`` (none stored, or not sealed for them).

    Tokens found under an older key's record key or the plain digest of earlier versions (or
    sealed with an older key) are moved: saved under the newest key's, the old item deleted."""
    keys = sealer.token_keys(user, server)
    for i, key in enumerate(keys):
        item = await store.aget(TOKENS, key)
        record, rotated = sealer.unseal(item.value) if item is not None else (None, False)
        if record is None or record.get("user") != user or record.get("server") != server:
            continue
        try:
            tokens = TokenRecord(**record)
        except TypeError:
            continue
        if rotated or i:  # sealed with an older key, or kept under an old record key: moved
            await save_tokens(store, sealer, tokens)
        return tokens
    return None


async def save_tokens(store: BaseStore, sealer: Sealer, record: TokenRecord) -> None:
    """Keep ``record`` under the newest key's record key (and drop it from any older one)."""
    newest, *older = sealer.token_keys(record.user, record.server)
    await store.aput(TOKENS, newest, sealer.seal(asdict(record)), index=False)
    for key in older:
        await store.adelete(TOKENS, key)


async def delete_tokens(store: BaseStore, sealers: Sealer | list[Sealer], user: str, server: str) -> None:
    """Forget ``user``'s tokens for ``server`` under every record key they may be kept under
    (each of ``sealers``' keys, and the plain digest of earlier versions)."""
    keys: dict[str, None] = {}
    for sealer in sealers if isinstance(sealers, list) else [sealers]:
        keys.update(dict.fromkeys(sealer.token_keys(user, server)))
    keys.setdefault(_legacy_token_key(user, server))
    for key in keys:
        await store.adelete(TOKENS, key)


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
    """Store ``pending``; its ``state``. Sweeps abandoned sign-ins first: expired ones (at most
    a bounded number per sweep), and the user's oldest beyond :data:`MAX_PENDING_PER_USER`."""
    owner = sealer.owner(pending.server, pending.user)
    await _sweep(store, owner)
    nonce = secrets.token_urlsafe(24)
    value = {**sealer.seal(asdict(pending)), "owner": owner, "expires_at": float(pending.expires_at)}
    await store.aput(PENDING, nonce, value, index=False)
    mac = sealer.mac(pending.server, nonce, pending.user, pending.thread, pending.expires_at)
    return f"{_b64(pending.server.encode('utf-8'))}.{nonce}.{mac}"


async def _sweep(store: BaseStore, owner: str) -> None:
    now = time.time()
    expired = await store.asearch(PENDING, filter={"expires_at": {"$lt": now}}, limit=_SWEEP)
    mine = await store.asearch(PENDING, filter={"owner": owner}, limit=_SWEEP)
    kept = sorted(
        (i for i in mine if i.key not in {e.key for e in expired}),
        key=lambda i: (float(i.value.get("expires_at") or 0), i.created_at),
    )
    extra = kept[: max(0, len(kept) - (MAX_PENDING_PER_USER - 1))]
    for item in [*expired, *extra]:
        await store.adelete(PENDING, item.key)


_TAKING: set[str] = set()
_TAKING_LOCK = threading.Lock()


class OtherUser(MCPError):
    """:func:`take_pending` was asked by someone else than the user the sign-in is for (never
    leaves the callback route)."""


async def take_pending(
    store: BaseStore,
    sealer: Sealer,
    server: str,
    nonce: str,
    mac: str,
    *,
    owner: Callable[[str], bool] | None = None,
) -> Pending | None:
    """The authorization a ``state`` names, deleted as it is taken (a ``state`` is good once);
    ``None`` when there is none, it has expired, or the ``state`` does not match it (then it is
    left alone: a forged ``state`` cannot spend another's).

    Raises:
        OtherUser: ``owner`` (given) says the sign-in's user is not the one taking it; it is left
            alone, for its user.

    Good once under concurrency too: the nonce is claimed (in this process) before the record is
    read again and deleted, so of two callbacks with one ``state`` only one gets it."""
    if len(nonce) > 64:
        return None
    pending = await _read_pending(store, sealer, server, nonce, mac)
    if pending is None:
        return None
    if owner is not None and not owner(pending.user):
        raise OtherUser
    with _TAKING_LOCK:
        if nonce in _TAKING:
            return None
        _TAKING.add(nonce)
    try:
        if await _read_pending(store, sealer, server, nonce, mac) is None:  # taken meanwhile
            return None
        await store.adelete(PENDING, nonce)
    finally:
        with _TAKING_LOCK:
            _TAKING.discard(nonce)
    return pending if time.time() <= pending.expires_at else None


async def _read_pending(
    store: BaseStore, sealer: Sealer, server: str, nonce: str, mac: str
) -> Pending | None:
    item = await store.aget(PENDING, nonce)
    record = sealer.open(item.value) if item is not None else None
    try:
        pending = Pending(**record) if record is not None else None
    except TypeError:
        return None
    if pending is None or pending.server != server:
        return None
    if not sealer.check(mac, server, nonce, pending.user, pending.thread, pending.expires_at):
        return None
    return pending


async def load_client(
    store: BaseStore, sealer: Sealer, server: str, issuer: str, redirect: str
) -> dict[str, Any] | None:
    item = await store.aget(CLIENTS, _digest("client", server, issuer, redirect))
    record, rotated = sealer.unseal(item.value) if item is not None else (None, False)
    if record is None or record.get("server") != server or record.get("issuer") != issuer:
        return None
    if rotated and item is not None:  # sealed with an older key: sealed again with the newest
        await store.aput(CLIENTS, item.key, sealer.seal(record), index=False)
    return record


async def save_client(
    store: BaseStore, sealer: Sealer, server: str, issuer: str, redirect: str, client: dict[str, Any]
) -> None:
    record = {**client, "server": server, "issuer": issuer}
    await store.aput(CLIENTS, _digest("client", server, issuer, redirect), sealer.seal(record), index=False)
