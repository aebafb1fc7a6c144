"""The custom app ``langgraph.json`` mounts (``"http": {"app": "graphs.app:app"}``).

Its routes (``/mcp-apps/...``, :func:`langgraph_mcp.apps.app_routes`) take the calls MCP Apps
views make and run them on their thread, as the caller (the server's authentication applies).
When a server of the config has per-user ``oauth``, it also serves their OAuth redirect route,
``GET /oauth/callback`` (:func:`langgraph_mcp.oauth.oauth_callback_app`; the servers'
``redirect_uri`` is then ``https://<deployment>/oauth/callback``): it stores a user's tokens
in the server's store only for the user the deployment's custom auth signed the browser in as
(``"http": {"enable_custom_route_auth": true}``; without custom auth nobody is signed in and
every callback is refused).
Its lifespan closes the shared MCP pool when the server stops, so no stdio server outlives it
(``SIGTERM``, ``Ctrl-C`` and hot reloads alike). When the environment variable
``LANGGRAPH_MCP_TRIGGERS`` names an event triggers file (:func:`langgraph_mcp.events.load_triggers`),
the lifespan also runs the triggers: MCP events that start runs of the graphs. With
``LANGGRAPH_MCP_EVENTS_URL`` (the public URL of ``/mcp-events`` on this deployment), webhook
deliveries of MCP events are received at ``/mcp-events/<subscription>``, each checked for its
signature and freshness before anything is started. When ``LANGGRAPH_MCP_TASKS_KEY`` holds a key,
runs parked on an MCP task (``task_detach_after``) record where they wait, and the lifespan runs
the wake-ups that resume them when their tasks change (:class:`langgraph_mcp.events.TaskWakeups`).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import BaseRoute, Mount

from graphs.agent import views
from graphs.shared import pool
from langgraph_mcp._oauth.options import per_user_oauth
from langgraph_mcp.apps import app_routes
from langgraph_mcp.deploy import lifespan, server_store
from langgraph_mcp.events import (
    EVENTS_URL_ENV,
    LEASE_WINDOW,
    LEASE_WINDOW_ENV,
    TASKS_KEY_ENV,
    TRIGGERS_ENV,
    EventTriggers,
    TaskWakeups,
    WebhookReceiver,
    load_triggers,
)
from langgraph_mcp.oauth import oauth_callback_app


def signed_in_user(request: Request) -> str | None:
    """The identity LangGraph's custom auth gave the request; ``None`` when nobody signed in."""
    user: Any = request.scope.get("user")
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    identity = getattr(user, "identity", None)
    return identity if isinstance(identity, str) and identity else None


routes: list[BaseRoute] = list(app_routes(views))
if any(per_user_oauth(config) is not None for config in pool.servers.values()):
    callback = oauth_callback_app(pool.servers, store=server_store, user_of=signed_in_user)
    routes.append(Mount("/oauth", callback))

events_url = os.environ.get(EVENTS_URL_ENV)
receiver = WebhookReceiver(events_url) if events_url else None
"""Where MCP events' webhook deliveries arrive (``/mcp-events``), when ``LANGGRAPH_MCP_EVENTS_URL``
gives its public URL."""
if receiver is not None:
    routes.append(Mount("/mcp-events", receiver))

triggers_file = os.environ.get(TRIGGERS_ENV)
lease_window = float(os.environ.get(LEASE_WINDOW_ENV) or LEASE_WINDOW)
"""Seconds of the leases that let one process at a time run each trigger, and the wake-ups."""

triggers = (
    EventTriggers(pool, load_triggers(triggers_file), receiver=receiver, lease_window=lease_window)
    if triggers_file
    else None
)
"""The deployment's event triggers (none unless ``LANGGRAPH_MCP_TRIGGERS`` names a file)."""

wakeups = TaskWakeups(pool, lease_window=lease_window) if os.environ.get(TASKS_KEY_ENV) else None
"""Resumes runs parked on MCP tasks when their tasks change (when ``LANGGRAPH_MCP_TASKS_KEY`` is
set: the graphs seal their parked-task records with it)."""


@asynccontextmanager
async def app_lifespan(app: Starlette) -> AsyncIterator[None]:
    """The pool's lifespan, and the triggers and wake-ups inside it (stopped first, before the
    pool)."""
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(lifespan(pool)(app))
        if triggers is not None:
            await stack.enter_async_context(triggers)
        if wakeups is not None:
            await stack.enter_async_context(wakeups)
        yield


app = Starlette(routes=routes, lifespan=app_lifespan)
