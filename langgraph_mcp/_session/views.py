"""MCP Apps (``io.modelcontextprotocol/ui``): the ``ui://`` views a server's tools name, as read
with ``resources/read``, and the cache of them each connection keeps.

A view is cached per session: a new session (reconnect, another event loop) reads it again, and so
does the next use after the server says its resource list changed (the connection's resources
listing version moves) or that the view itself was updated (``notifications/resources/updated``
for its URI, heard on whatever stream brings it; views are not subscribed to).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types

__all__ = ["APPS_EXTENSION", "APP_MIME_TYPE", "MAX_VIEW_HTML", "View", "ViewCache", "parse_view"]

APPS_EXTENSION = "io.modelcontextprotocol/ui"
"""The MCP Apps extension identifier (advertised in the client's capabilities)."""
APP_MIME_TYPE = "text/html;profile=mcp-app"
"""The MIME type of an MCP Apps view."""
MAX_VIEW_HTML = 256_000
"""A view's HTML longer than this many characters is not kept (nor shown): ``View.html`` is
``None``. It bounds what each UI message, and the ``ui`` state key that keeps it, carries."""
_MAX_CACHED = 64
"""Views kept per connection (the ones read longest ago go first)."""


@dataclass(frozen=True)
class View:
    """One ``ui://`` view as the server served it: its HTML (``None`` when longer than
    :data:`MAX_VIEW_HTML`) and its content's ``_meta.ui`` object (CSP, permissions, ...; empty
    when it has none)."""

    uri: str
    mime_type: str
    html: str | None
    ui: Mapping[str, Any] = field(default_factory=dict)


def parse_view(uri: str, result: types.ReadResourceResult) -> View:
    """The view in a ``resources/read`` result for ``uri``.

    Raises:
        ValueError: it holds no entry for ``uri`` with the MCP Apps MIME type and HTML as text
            or base64 UTF-8 (the message says which).
    """
    for entry in result.contents:
        if str(entry.uri) != uri:
            continue
        if entry.mime_type != APP_MIME_TYPE:
            raise ValueError(f"its MIME type is {str(entry.mime_type)[:100]!r}, not {APP_MIME_TYPE!r}")
        if isinstance(entry, types.TextResourceContents):
            html: str | None = entry.text if len(entry.text) <= MAX_VIEW_HTML else None
        else:
            html = _decoded(entry.blob)
        meta = entry.meta or {}
        ui = meta.get("ui") if isinstance(meta, Mapping) else None
        return View(uri, APP_MIME_TYPE, html, dict(ui) if isinstance(ui, Mapping) else {})
    raise ValueError("its resources/read answer has no entry for that URI")


def _decoded(blob: str) -> str | None:
    if len(blob) > MAX_VIEW_HTML * 4 // 3 + 4:
        return None
    try:
        html = base64.b64decode(blob, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise ValueError("its blob is not base64-encoded UTF-8") from None
    return html if len(html) <= MAX_VIEW_HTML else None


class ViewCache:
    """The views read on one connection, each with the session and resources-listing version it
    was read under."""

    def __init__(self) -> None:
        self._views: dict[str, tuple[Any, int, View]] = {}
        self.epoch = 0
        """Moves at each update notification: a read that started before one is not kept."""

    def get(self, uri: str, session: Any, version: int) -> View | None:
        cached = self._views.get(uri)
        if cached is None or cached[0] is not session or cached[1] != version:
            return None
        return cached[2]

    def put(self, view: View, session: Any, version: int) -> None:
        self._views.pop(view.uri, None)
        self._views[view.uri] = (session, version, view)
        while len(self._views) > _MAX_CACHED:
            del self._views[next(iter(self._views))]

    def updated(self, uri: str) -> None:
        """The server says ``uri`` changed."""
        self.epoch += 1
        self._views.pop(uri, None)
