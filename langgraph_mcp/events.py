"""MCP events (the ``io.modelcontextprotocol/events`` extension, SEP-3415 draft of 2026-10-05):
what a server says happened (a ticket filed, a build failed), delivered to the client by poll,
push or webhook.

In process (a script, a notebook), :meth:`MCPPool.events <langgraph_mcp.MCPPool.events>` gives a
subscription as an async iterator of :class:`MCPEvent`; :meth:`MCPPool.event_types
<langgraph_mcp.MCPPool.event_types>` lists what a server offers. A subscription by webhook needs a
:class:`WebhookReceiver` (an ASGI app the server can reach over https) to receive the server's
signed deliveries.
"""

from langgraph_mcp._events.subscription import EventSubscription, MCPEvent
from langgraph_mcp._events.webhooks import WebhookReceiver, check_delivery, new_secret, sign
from langgraph_mcp._session.eventwire import EVENTS_EXTENSION, EVENTS_REVISION, DeliveryMode, EventType

__all__ = [
    "EVENTS_EXTENSION",
    "EVENTS_REVISION",
    "DeliveryMode",
    "EventSubscription",
    "EventType",
    "MCPEvent",
    "WebhookReceiver",
    "check_delivery",
    "new_secret",
    "sign",
]
