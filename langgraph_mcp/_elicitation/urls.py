"""The URL of a URL-mode question: refused unless a person may safely be sent to it."""

from __future__ import annotations

import ipaddress
import unicodedata
from urllib.parse import urlsplit

from langgraph_mcp.errors import MCPError

__all__ = ["MAX_URL", "UnfitQuestion", "check_url"]

MAX_URL = 8192
"""The most characters a URL-mode question's URL may have."""
_LOOPBACK_NAMES = frozenset({"localhost", "localhost."})


class UnfitQuestion(MCPError, ValueError):
    """A server's question that is not shown to a person: its URL may not be visited, or it is
    too large. The server is told (``-32602``, invalid params) where it can be."""


def check_url(url: str, *, loopback_http: bool = False) -> None:
    """Refuse a URL a person should not be sent to: anything but ``https://<host>``, or
    ``http://`` to ``localhost``, ``127.0.0.0/8`` or ``::1`` when ``loopback_http``. Whitespace,
    control and bidi characters, backslashes and a user name or password (``https://bank@evil``)
    are refused in any URL: each can make it read as another address than the one it opens.

    Raises:
        UnfitQuestion: saying why.
    """
    if len(url) > MAX_URL:
        raise UnfitQuestion(f"the URL is longer than {MAX_URL:,} characters")
    if "\\" in url or any(c.isspace() or unicodedata.category(c) in ("Cc", "Cf", "Cs") for c in url):
        raise UnfitQuestion("the URL contains whitespace, control characters or a backslash")
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - an invalid port raises
    except ValueError as exc:
        raise UnfitQuestion(f"the URL cannot be read ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http"):
        raise UnfitQuestion(f"URL scheme {scheme + ':' if scheme else '(none)'} is not allowed; only https")
    if parts.username is not None or parts.password is not None:
        raise UnfitQuestion("the URL carries a user name or password (user@host), which hides its host")
    if not host:
        raise UnfitQuestion("the URL names no host")
    if scheme == "http":
        if not loopback_http:
            raise UnfitQuestion(
                "plain http URLs are not allowed; only https (http to a loopback host when the "
                "server's elicitation_loopback_http is set)"
            )
        if not _is_loopback(host):
            raise UnfitQuestion(
                f"plain http is allowed only to a loopback host (localhost, 127.0.0.0/8, ::1), not {host!r}"
            )


def _is_loopback(host: str) -> bool:
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
