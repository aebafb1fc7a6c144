"""How long a listing may be reused: the server's freshness hints, the ``listing_ttl`` option,
and the listings one server's sessions may share.

2026-07-28 list answers carry ``ttlMs`` (how many milliseconds the answer may be reused) and
``cacheScope`` (``public``: the same for every caller; ``private``: for this caller only). How
they are taken, by the server's ``listing_ttl`` option:

* ``"server"`` (default): a positive ``ttlMs`` makes the listing stale that long after it came,
  and it is listed again on its next use (nothing runs on a timer). No ``ttlMs``, ``ttlMs: 0``,
  or a value that is not a non-negative integer keeps what the package did before hints: the
  listing lasts until the server says it changed or the session is replaced. The protocol
  leaves that case to the client's own heuristics; re-listing at every use instead would make
  every model turn cost a listing for servers that never thought about caching (the SDK's
  server sends ``ttlMs: 0`` unless told otherwise). Hints are taken from 2026-07-28 answers
  only, and capped at :data:`MAX_TTL`.
* ``"ignore"``: hints are not taken; listings last until a change notice or a new session.
* seconds: every listing lasts exactly that long, whatever the server says, in either era
  (``0``: listed again at every use).

A change notice always ends a listing at once, whatever its lifetime.

A listing with a lifetime whose answer said ``cacheScope: "public"`` (every page: the protocol
wants one scope for all pages) is shared through the server's :class:`ListingShare` with the
other sessions of the same server in the same pool (``session_scope: thread`` sessions), until
its lifetime ends or any of those sessions hears that the list changed. A ``private`` listing,
or one without a scope, is kept by the connection that listed it and never given to another.

Resource reads (``resources/read``) are cacheable too. A read is reused only while a positive
``ttlMs`` of its 2026-07-28 answer lasts, with ``listing_ttl: "server"`` (with any other setting,
and without a hint, every read goes to the server, as before); ``public`` ones are shared like
listings. A ``resources/updated`` of the URI (or of one under it, or above it), a change of the
resource list, a lost update stream or a new session ends them. A read that took input rounds is
never reused (its answers are not part of the cache key). Reads are bounded: at most
:data:`READ_ENTRIES` per connection, none over :data:`READ_ENTRY_CHARS` characters of content, at
most :data:`READ_CHARS` in all, least recently used dropped first.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from langgraph_mcp._session.watch import covers

__all__ = ["MAX_TTL", "Hints", "ListingShare", "ReadCache", "Stamp"]

MAX_TTL = 24 * 3600.0
"""The longest lifetime a server's ``ttlMs`` may give a listing, in seconds."""

_MAX_TTL_MS = int(MAX_TTL * 1000)

READ_ENTRIES = 64
READ_ENTRY_CHARS = 1 << 20
READ_CHARS = 8 << 20


@dataclass(frozen=True)
class Stamp:
    """How long one cached listing may be reused."""

    expires: float | None
    """The :attr:`ListingShare.clock` time from which it is stale; ``None``: until the server
    says the list changed, or the session is replaced."""
    generation: int | None = None
    """For a shared (``public``) listing: the :class:`ListingShare` generation it belongs to;
    it is stale once any session of the server heard that the list changed."""


UNTIL_CHANGED = Stamp(None)


class Hints:
    """The freshness hints of one listing's pages, as the server sent them.

    The listing lasts as long as its shortest-lived page, and is ``public`` only if every page
    said so. Values that are not what the protocol allows count as no hint (``ttlMs``) or as
    ``private`` (``cacheScope``): whatever is odd is never reused longer or shared wider.
    """

    def __init__(self) -> None:
        self.ttl_ms: int | None = None
        self.public = True
        self._pages = 0

    @classmethod
    def of_result(cls, result: types.ReadResourceResult) -> Hints:
        """The hints of a parsed answer (only the fields the server sent count)."""
        hints = cls()
        sent = result.model_fields_set
        hints.add(
            {
                **({"ttlMs": result.ttl_ms} if "ttl_ms" in sent else {}),
                **({"cacheScope": result.cache_scope} if "cache_scope" in sent else {}),
            }
        )
        return hints

    def add(self, answer: Any) -> None:
        """Take one page's answer (a JSON object as sent)."""
        self._pages += 1
        page = answer if isinstance(answer, Mapping) else {}
        ttl = page.get("ttlMs")
        if isinstance(ttl, bool) or not isinstance(ttl, int):
            ttl = 0  # absent or not an integer: no promise
        ttl = max(0, min(ttl, _MAX_TTL_MS))  # a negative value counts as 0
        self.ttl_ms = ttl if self.ttl_ms is None else min(self.ttl_ms, ttl)
        if page.get("cacheScope") != "public":
            self.public = False


def _seconds(setting: Any) -> float | None:
    if isinstance(setting, (int, float)) and not isinstance(setting, bool) and math.isfinite(setting):
        return float(setting)
    return None


class ListingShare:
    """The listings one server's sessions in one pool may share, and the clock lifetimes run on.

    One per configured server per pool: its shared connection and every thread connection hold
    the same one. Keys are ``"tools"`` and the other listings' names (``loops.Listing``). Loops
    in other threads may use it at the same moment: state changes under one lock.
    """

    def __init__(self, setting: Any = "server") -> None:
        self.setting = setting
        """The server's ``listing_ttl``."""
        self.clock: Callable[[], float] = time.monotonic
        """Where lifetimes are measured (seconds; only differences count)."""
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[Any, Stamp]] = {}
        self._generations: dict[str, int] = {}
        self.reads = ReadCache()
        """The ``public`` resource reads of the server's sessions (``private`` ones are each
        connection's own)."""

    # -- lifetimes -------------------------------------------------------------------------------

    def stamp(self, key: str, hints: Hints, *, modern: bool, generation: int) -> Stamp:
        """The lifetime of a listing just received with ``hints``; ``generation`` is
        :meth:`generation` of ``key`` from before it was asked for."""
        ttl = _seconds(self.setting)
        if ttl is None:
            if self.setting != "server" or not modern or not hints.ttl_ms:
                return UNTIL_CHANGED
            ttl = hints.ttl_ms / 1000
        shared = modern and hints.public and ttl > 0
        return Stamp(self.clock() + ttl, generation if shared else None)

    def read_stamp(self, hints: Hints, *, modern: bool) -> Stamp | None:
        """The lifetime of a resource read just received (``None``: not to be reused)."""
        if self.setting != "server" or not modern or not hints.ttl_ms:
            return None
        return Stamp(self.clock() + hints.ttl_ms / 1000)

    def fresh(self, key: str, stamp: Stamp) -> bool:
        """The listing stamped ``stamp`` may still be reused."""
        if stamp.expires is not None and self.clock() >= stamp.expires:
            return False
        return stamp.generation is None or stamp.generation == self.generation(key)

    def heard_changed(self, key: str, stamp: Stamp) -> bool:
        """A session of the server heard that ``key``'s list changed since a shared listing
        stamped ``stamp`` came (never for one that is not shared)."""
        return stamp.generation is not None and stamp.generation != self.generation(key)

    def expired(self, key: str, stamp: Stamp | None) -> bool:
        """A listing is cached with ``stamp`` and is no longer fresh."""
        return stamp is not None and not self.fresh(key, stamp)

    # -- what is shared --------------------------------------------------------------------------

    def generation(self, key: str) -> int:
        """Moves each time a session of the server hears that ``key``'s list changed."""
        return self._generations.get(key, 0)

    def offer(self, key: str, value: Any, stamp: Stamp) -> None:
        """Share a listing (only one stamped as shareable, and only if no change was heard since
        its request went out)."""
        if stamp.generation is None:
            return
        with self._lock:
            if stamp.generation == self.generation(key):
                self._entries[key] = (value, stamp)

    def take(self, key: str) -> tuple[Any, Stamp] | None:
        """A shared listing of ``key`` that is still fresh."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and not self.fresh(key, entry[1]):
                del self._entries[key]
                entry = None
        return entry

    def changed(self, *keys: str) -> None:
        """A session heard that these lists changed: nothing shared of them may be reused."""
        with self._lock:
            for key in keys:
                self._generations[key] = self.generation(key) + 1
                self._entries.pop(key, None)


class ReadCache:
    """Resource reads with a lifetime, by URI, least recently used first (bounded: see the
    module docstring). ``version`` moves whenever something is dropped for being stale, so a read
    that was in flight meanwhile is not kept."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, tuple[types.ReadResourceResult, Stamp, int]] = OrderedDict()
        self._chars = 0
        self.version = 0

    def get(self, uri: str, share: ListingShare) -> types.ReadResourceResult | None:
        """The read of ``uri``, if it may still be reused (lifetimes on ``share``'s clock)."""
        with self._lock:
            entry = self._entries.get(uri)
            if entry is None:
                return None
            if not share.fresh("", entry[1]):
                self._drop(uri)
                return None
            self._entries.move_to_end(uri)
            return entry[0]

    def put(self, uri: str, result: types.ReadResourceResult, stamp: Stamp, version: int) -> None:
        """Keep a read made when :attr:`version` was ``version`` (if nothing went stale since)."""
        chars = sum(len(getattr(c, "text", None) or getattr(c, "blob", None) or "") for c in result.contents)
        if chars > READ_ENTRY_CHARS:
            return
        with self._lock:
            if version != self.version:
                return
            self._drop(uri)
            self._entries[uri] = (result, stamp, chars)
            self._chars += chars
            while len(self._entries) > READ_ENTRIES or self._chars > READ_CHARS:
                self._drop(next(iter(self._entries)))

    def updated(self, uri: str) -> None:
        """The server says ``uri`` changed: drop every read it concerns."""
        with self._lock:
            self.version += 1
            for cached in [u for u in self._entries if covers(u, uri) or covers(uri, u)]:
                self._drop(cached)

    def clear(self) -> None:
        with self._lock:
            self.version += 1
            self._entries.clear()
            self._chars = 0

    def _drop(self, uri: str) -> None:
        entry = self._entries.pop(uri, None)
        if entry is not None:
            self._chars -= entry[2]
