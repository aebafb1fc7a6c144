"""Keeping a server's secrets out of messages, reprs and log records.

A server's secrets are the values of its ``headers`` and ``env``, its ``auth``, the userinfo,
query values and fragment of its ``url``, and whatever ``${VAR}`` expansion put into a stdio
server's ``command``, ``args`` and ``cwd`` (each config's ``redactor()`` collects them); while a
call runs, its per-call header values too (:meth:`Redactor.holding`). A :class:`Redactor`
replaces them in a text: URLs with :func:`redact_url`'s form, expanded stdio values with the text
as written (``--token=${TOKEN}``), anything else with ``***``; :func:`mask_all` in every string of
a JSON-like value.

Messages this package builds pass through their server's redactor, and so does what the server
says that becomes a message, a record or an event (errors, ``isError`` results, stderr, log
notifications, progress messages). The HTTP and MCP client libraries log request URLs and
messages themselves (``httpx2`` at INFO: ``HTTP Request: POST <url>``); a filter on those loggers
(:data:`LIBRARY_LOGGERS`) cleans their records of the secrets of every live redactor, and leaves
every other record as it is.
"""

from __future__ import annotations

import base64
import collections
import json
import logging
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

import httpx2

__all__ = [
    "LIBRARY_LOGGERS",
    "MASK",
    "Redactor",
    "auth_secrets",
    "header_secrets",
    "mask_all",
    "redact_url",
    "value_secrets",
]

MASK = "***"
MIN_SECRET = 4
"""Shorter values (a port, ``true``) are not looked for in free text (a URL still is, whole)."""

LIBRARY_LOGGERS = (
    "httpx2",
    "httpcore2.connection",
    "httpcore2.http11",
    "httpcore2.http2",
    "httpcore2.proxy",
    "httpcore2.socks",
    "mcp.client.streamable_http",
    "mcp.client.sse",
    "mcp.client.auth.oauth2",
)
"""Loggers of the libraries under the HTTP transports that log request URLs, messages, or errors
holding them (a logger's filters apply to its own records only, so each is named)."""


def redact_url(url: str) -> str:
    """``url`` with its userinfo, query values and fragment masked: ``https://***@host/p?key=***``.
    Keys and the path stay (they say which endpoint it is)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    query = "&".join(_mask_pair(pair) for pair in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, MASK if parts.fragment else ""))


def _mask_pair(pair: str) -> str:
    key, equals, _ = pair.partition("=")
    return f"{key}={MASK}" if equals else (MASK if pair else pair)


def _url_secrets(url: str) -> Iterable[str]:
    try:
        parts = urlsplit(url)
    except ValueError:
        return
    userinfo = parts.netloc.rpartition("@")[0]
    if userinfo:
        yield userinfo
        yield from userinfo.split(":", 1)
    for pair in parts.query.split("&") if parts.query else ():
        yield pair.partition("=")[2] if "=" in pair else pair
    if parts.fragment:
        yield parts.fragment


def _variants(value: str) -> Iterable[str]:
    """``value`` and how it may appear once a URL or a header was normalised."""
    yield value
    yield unquote(value)
    yield quote(unquote(value), safe="")
    yield quote(unquote(value), safe="/:@!$&'()*+,;=")


class Redactor:
    """Replaces secrets in any text: each of ``secrets`` (at least :data:`MIN_SECRET` long) with
    ``***``, each key of ``shown`` with its value, each of ``urls`` with :func:`redact_url`'s form
    (the URL's own secrets are taken too, as written and as an HTTP client normalises them).

    :meth:`holding` adds secrets for a while (the header values of one call, while it runs)."""

    def __init__(
        self, secrets: Iterable[str] = (), *, shown: Mapping[str, str] | None = None, urls: Iterable[str] = ()
    ) -> None:
        secrets = set(secrets)
        replace = dict(shown or {})
        for url in urls:
            for form in {url, _normalised(url)}:
                replace[form] = redact_url(form)
                for secret in _url_secrets(form):
                    secrets.update(_variants(secret))
        self._own = {s: MASK for s in secrets if _maskable(s)}
        self._own.update(replace)
        self._held: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()
        self._pairs: list[tuple[str, str]] = []
        self._arrange()

    def _arrange(self) -> None:
        pairs = {**dict.fromkeys(self._held, MASK), **self._own}
        # Longest first: a URL before the query value inside it. (A new list: a text being
        # redacted in another thread goes on with the one it has.)
        self._pairs = sorted(pairs.items(), key=lambda item: -len(item[0]))

    def __bool__(self) -> bool:
        return bool(self._pairs)

    def __call__(self, text: str) -> str:
        """``text`` without the secrets."""
        for secret, shown in self._pairs:
            if secret in text:
                text = text.replace(secret, shown)
        return text

    @contextmanager
    def holding(self, secrets: Iterable[str]) -> Iterator[None]:
        """Replace ``secrets`` too while the block runs, here and in library log records (see
        :meth:`watch_library_logs`). Blocks may overlap, in any threads."""
        held = {s for s in secrets if _maskable(s)}
        if not held:
            yield
            return
        with self._lock:
            self._held.update(held)
            self._arrange()
        _filter.live.add(self)
        _filter.install()
        try:
            yield
        finally:
            with self._lock:
                self._held.subtract(held)
                self._held = +self._held  # (drops what no block holds any more)
                self._arrange()

    @property
    def reach(self) -> int:
        """The length of the longest text replaced (0: none)."""
        pairs = self._pairs
        return len(pairs[0][0]) if pairs else 0

    def head(self, text: str, size: int) -> str:
        """The first ``size`` characters of ``text`` without the secrets, a secret that the cut
        would split included."""
        return self(text[: size + self.reach])[:size]

    def watch_library_logs(self) -> None:
        """Clean the records of :data:`LIBRARY_LOGGERS` of these secrets while this redactor lives
        (the first call installs the filter)."""
        if self:
            _filter.live.add(self)
            _filter.install()


def _maskable(secret: str) -> bool:
    return len(secret) >= MIN_SECRET and secret != MASK


def mask_all(value: Any, redact: Callable[[str], str]) -> Any:
    """``value`` (JSON-like: strings, numbers, lists, dicts) with ``redact`` applied to every
    string in it, keys included (a key masked into one already there is numbered: ``*** (2)``)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        masked: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, str):
                shown = new = redact(key)
                n = 1
                while new in masked:
                    n += 1
                    new = f"{shown} ({n})"
                key = new
            masked[key] = mask_all(item, redact)
        return masked
    if isinstance(value, (list, tuple)):
        return [mask_all(item, redact) for item in value]
    return value


def header_secrets(headers: Mapping[str, str]) -> Iterable[str]:
    """Header values, and the credentials after a scheme (``Bearer <token>``)."""
    for value in headers.values():
        yield value
        scheme, _, credentials = value.partition(" ")
        if credentials.strip() and scheme.isalpha():
            yield credentials.strip()


def value_secrets(value: Any, *, limit: int = 256) -> list[str]:
    """The texts of a JSON-like value's leaves (strings, and numbers as written), each also as a
    Python ``repr`` and as JSON show it inside quotes (a library logs a message as either), at
    most ``limit`` leaves: what to hold (:meth:`Redactor.holding`) while the value is sent."""
    found: list[str] = []
    pending, leaves = [value], 0
    while pending and leaves < limit:
        item = pending.pop()
        if isinstance(item, Mapping):
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
        elif isinstance(item, str | int | float) and not isinstance(item, bool):
            leaves += 1
            text = item if isinstance(item, str) else repr(item)
            found.extend({text, repr(text)[1:-1], json.dumps(text)[1:-1]})
    return found


def auth_secrets(auth: Any) -> Iterable[str]:
    """What an ``auth`` value would put on the wire: a ``(user, password)`` pair's parts and
    its Basic credentials, an ``httpx2.BasicAuth``'s header (other ``httpx2.Auth`` objects keep
    theirs to themselves)."""
    if isinstance(auth, (tuple, list)):
        yield from (str(item) for item in auth)
        if len(auth) == 2:
            yield base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
    elif isinstance(auth, httpx2.BasicAuth):
        header = str(getattr(auth, "_auth_header", ""))
        yield header
        yield header.partition(" ")[2]


def _normalised(url: str) -> str:
    try:
        return str(httpx2.URL(url))
    except (httpx2.InvalidURL, ValueError, TypeError):
        return url


class _LibraryLogFilter(logging.Filter):
    """Removes the secrets of live redactors from a record's message and traceback text."""

    def __init__(self) -> None:
        super().__init__("langgraph_mcp.redact")
        self.live: weakref.WeakSet[Redactor] = weakref.WeakSet()
        self._installed = False
        self._lock = threading.Lock()

    def install(self) -> None:
        with self._lock:
            if not self._installed:
                for name in LIBRARY_LOGGERS:
                    logging.getLogger(name).addFilter(self)
                self._installed = True

    def filter(self, record: logging.LogRecord) -> bool:
        redactors = list(self.live)
        if not redactors:
            return True
        try:
            text = record.getMessage()
        except Exception:  # a record that cannot be formatted: leave it to the handler
            return True
        clean = text
        for redactor in redactors:
            clean = redactor(clean)
        if clean != text:
            record.msg, record.args = clean, None
        if record.exc_info and record.exc_info[1] is not None:
            trace = record.exc_text or logging.Formatter().formatException(record.exc_info)
            cleaned = trace
            for redactor in redactors:
                cleaned = redactor(cleaned)
            if cleaned != trace:  # the exception itself would show them again
                record.exc_text, record.exc_info = cleaned, None
        return True


_filter = _LibraryLogFilter()
