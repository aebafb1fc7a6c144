"""What a failed connect says about causes outside the package: an HTTP answer showing the URL
is not an MCP endpoint (:func:`not_mcp`), and a stdio launcher that could not reach the network
because it was not given the CA or proxy variables it needs (:func:`network_hint`)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["PROXY_VARIABLES", "TLS_VARIABLES", "HTTPAnswer", "network_hint", "not_mcp"]

_REFUSALS = frozenset({401, 403})


@dataclass(frozen=True)
class HTTPAnswer:
    """What one HTTP response was: its request's method, status, reason and content type."""

    method: str
    status: int
    reason: str
    content_type: str


_MCP_CONTENT = ("application/json", "text/event-stream")


def not_mcp(answer: HTTPAnswer | None, transport: str) -> str | None:
    """Why a failed handshake's last HTTP answer suggests the URL is not an MCP endpoint (said
    in the user's terms), or ``None`` when it does not (no answer, a refusal, or a proper MCP
    content type)."""
    if answer is None or answer.status in _REFUSALS:
        return None
    path = "'/sse'" if transport == "sse" else "'/mcp'; older ones '/sse', with \"transport\": \"sse\""
    said = f"HTTP {answer.status}" + (f" {answer.reason}" if answer.reason else "")
    kind = answer.content_type.split(";", 1)[0].strip().lower()
    if answer.status in (408, 429):
        return f"the server did not take the MCP handshake now ({said}); it may be busy: try again later"
    if 400 <= answer.status < 500 and kind in _MCP_CONTENT:
        return None  # an MCP server's own refusal: what it said is the better message
    if answer.status in (404, 405, 501):
        return (
            f"the server answered {said} to the MCP handshake ({answer.method}): this URL is "
            f"probably not an MCP endpoint (check its path; MCP servers usually serve {path})"
        )
    if answer.status >= 500:
        return (
            f"the server failed the MCP handshake with {said} (it may be starting or overloaded, or "
            "a proxy in front of it failed)"
        )
    if answer.status >= 400:
        return (
            f"the server refused the MCP handshake with {said} ({answer.method}): it is probably not "
            f"an MCP endpoint, or not one for this transport (MCP servers usually serve {path})"
        )
    if 200 <= answer.status < 300 and kind and answer.status != 202 and kind not in _MCP_CONTENT:
        return (
            f"the server answered the MCP handshake with {kind!r}, not JSON or an event stream: "
            f"this URL is probably not an MCP endpoint (a web page or another API; MCP servers "
            f"usually serve {path})"
        )
    return None


_TLS_TROUBLE = re.compile(
    r"certificate verify failed|CERTIFICATE_VERIFY_FAILED|self[- ]signed certificate|"
    r"SELF_SIGNED_CERT_IN_CHAIN|local issuer certificate|UNABLE_TO_GET_ISSUER_CERT|"
    r"UNABLE_TO_VERIFY_LEAF_SIGNATURE|invalid peer certificate|UnknownIssuer|CERT_UNTRUSTED",
    re.IGNORECASE,
)
_PROXY_TROUBLE = re.compile(
    r"ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|ProxyError|proxy|dns error|"
    r"failed to fetch|Failed to download|Temporary failure in name resolution",
    re.IGNORECASE,
)
TLS_VARIABLES = (
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "UV_NATIVE_TLS",
    "PIP_CERT",
)
"""Variables that point a launcher (``uvx``, ``npx``, pip, Node) at a private CA."""
PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY")
"""Variables that send a launcher through a proxy (also read in lower case)."""


def network_hint(tail: Iterable[str], env: Mapping[str, str]) -> str:
    """A hint for a stdio server whose last stderr lines (``tail``, bounded) show a TLS or
    network failure: such servers start with a minimal environment, so the CA and proxy
    variables set in this process are not passed unless the server's ``env`` names them. ""
    when the lines show neither."""
    text = "\n".join(line[:2000] for line in tail)
    names: tuple[str, ...]
    if _TLS_TROUBLE.search(text):
        trouble, names = "a TLS certificate error", TLS_VARIABLES
    elif _PROXY_TROUBLE.search(text):
        trouble, names = "a network error", PROXY_VARIABLES
    else:
        return ""
    candidates = [v for n in names for v in (n, n.lower()) if v in os.environ and v not in env]
    example = candidates[0] if candidates else names[0]
    found = (
        f"{', '.join(candidates)} {'is' if len(candidates) == 1 else 'are'} set here but not passed"
        if candidates
        else f"if it needs a private CA or a proxy, pass {', '.join(names[:5])} as needed"
    )
    return (
        f"\nthe server's stderr shows {trouble}: stdio servers start with a minimal environment "
        f"(HOME, LOGNAME, PATH, SHELL, TERM, USER and the server's own env); {found}. Add them to "
        f'its "env", e.g. "env": {{"{example}": "${{{example}}}"}}'
    )
