"""``-32042`` URL elicitation required: ask for the URLs, then send the call again.

A server may refuse a call until the person has visited one or more URLs (both eras). The URLs
are asked for like URL-mode questions (never opened automatically); once every one is accepted
the call is sent again. When the re-sent call needs another URL, that is a new question.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import cast

import mcp_types as types
from mcp.shared.exceptions import UrlElicitationRequiredError

from langgraph_mcp._elicitation.answers import UnfitQuestion
from langgraph_mcp._elicitation.policy import Answerer
from langgraph_mcp.errors import MCPProtocolError, MCPServerError, MCPToolCallError
from langgraph_mcp.types import MCPElicitationUrlRequest

__all__ = ["MAX_URL_ATTEMPTS", "retry_after_url_elicitation"]

MAX_URL_ATTEMPTS = 3


def _urls(server: str, exc: MCPServerError) -> list[types.ElicitRequestURLParams]:
    """The URLs a ``-32042`` error asks for.

    Raises:
        MCPProtocolError: the error's data does not name any URL.
    """
    error = types.ErrorData(code=exc.code, message=exc.reason, data=exc.data)
    try:
        wanted = UrlElicitationRequiredError.from_error(error).elicitations
    except (ValueError, TypeError, AttributeError, KeyError):
        wanted = []
    if not wanted:
        raise MCPProtocolError(server, f"URL elicitation required (-32042) without a valid URL: {exc.reason}")
    return list(wanted)


async def retry_after_url_elicitation(
    answers: Answerer, attempt: Callable[[], Awaitable[types.CallToolResult]]
) -> types.CallToolResult:
    """Run ``attempt``; while the server answers ``-32042``, ask for its URLs and run it again.

    Raises:
        MCPToolCallError: a URL was not accepted, or the server kept asking.
        MCPProtocolError: a ``-32042`` error that names no valid URL, or a URL that is not shown
            to a person (see ``answers.check_url``).
    """
    for _ in range(MAX_URL_ATTEMPTS):
        try:
            return await attempt()
        except MCPServerError as exc:
            if exc.code != types.URL_ELICITATION_REQUIRED:
                raise
            wanted = _urls(answers.server, exc)
        try:
            requests = [
                answers.question(getattr(params, "elicitation_id", None) or f"url_{i + 1}", params)
                for i, params in enumerate(wanted)
            ]
        except UnfitQuestion as exc:
            raise answers.unfit(exc) from None
        results = await answers.elicit(requests)
        refused = [r for r in requests if results[r["key"]].action != "accept"]
        if refused:
            urls = ", ".join(cast(MCPElicitationUrlRequest, r)["url"] for r in refused)
            raise MCPToolCallError(
                f"MCP server {answers.server!r} needs the person to visit {urls} before "
                f"{answers.tool_name!r} can run, and they did not ({results[refused[0]['key']].action})",
                kind="elicitation",
            )
    raise MCPToolCallError(
        f"MCP server {answers.server!r} still asked for a URL visit after {MAX_URL_ATTEMPTS} attempts",
        kind="elicitation",
    )
