"""Private names of the LangGraph API server (``langgraph_api``): who the caller of a custom route
is, as the server this package runs in authenticates them."""

from __future__ import annotations

import importlib
from typing import Any

from starlette.requests import Request

__all__ = ["caller_identity"]


async def caller_identity(request: Request) -> str | None:
    """The identity the LangGraph API's authentication (custom auth, LangSmith, or none: ``""``,
    everyone is one caller) gives the caller of ``request``; ``None`` when no LangGraph API server
    runs in this process. The server authenticates custom routes only when
    ``http.enable_custom_route_auth`` is set; otherwise the caller is authenticated here, with the
    server's own backend (the deployment's ``authenticate`` handler runs once more).

    Raises:
        Exception: what the authentication raised (it refused the caller, or failed).
    """
    user = request.scope.get("user")
    if user is not None and getattr(user, "is_authenticated", False):
        return str(getattr(user, "identity", "") or "")
    try:
        middleware: Any = importlib.import_module("langgraph_api.auth.middleware").auth_middleware
    except ImportError:
        return None
    backend = getattr(middleware, "kwargs", {}).get("backend")
    if backend is None:
        return None
    result = await backend.authenticate(request)
    if result is None:
        return ""
    _, user = result
    return str(getattr(user, "identity", "") or "")
