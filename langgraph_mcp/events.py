"""MCP events (the ``io.modelcontextprotocol/events`` extension, SEP-3415 draft of 2026-10-05):
what a server says happened (a ticket filed, a build failed), delivered to the client by poll,
push or webhook.

In process (a script, a notebook), :meth:`MCPPool.events <langgraph_mcp.MCPPool.events>` gives a
subscription as an async iterator of :class:`MCPEvent`; :meth:`MCPPool.event_types
<langgraph_mcp.MCPPool.event_types>` lists what a server offers. A subscription by webhook needs a
:class:`WebhookReceiver` (an ASGI app the server can reach over https) to receive the server's
signed deliveries.

On a LangGraph deployment, :class:`EventTriggers` (configured with :func:`load_triggers`) turns
events into runs: each trigger maps one server's event type to a graph and a thread policy, and
starts at most one run per event id.

:class:`TaskWakeups` resumes runs parked on MCP tasks (``task_detach_after``) when their tasks
change: the server pushes the tasks' status where it offers to (2026-07-28 task notifications
through ``subscriptions/listen``), and they are polled where it does not.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from langgraph_mcp._compat.langgraph import server_store
from langgraph_mcp._elicitation.parked import TASKS_KEY_ENV, sealer_from_env
from langgraph_mcp._events.subscription import EventSubscription, MCPEvent
from langgraph_mcp._events.triggers import LEASE_WINDOW, EventTrigger, ThreadByField, TriggerRunner, _Lease
from langgraph_mcp._events.wakeups import SCAN_INTERVAL, GraphResume, WakeupLoop, api_resume
from langgraph_mcp._events.webhooks import WebhookReceiver, check_delivery, new_secret, sign
from langgraph_mcp._pool.pool import MCPPool
from langgraph_mcp._session.eventwire import EVENTS_EXTENSION, EVENTS_REVISION, DeliveryMode, EventType
from langgraph_mcp.errors import MCPConfigError

__all__ = [
    "EVENTS_EXTENSION",
    "EVENTS_REVISION",
    "DeliveryMode",
    "EVENTS_URL_ENV",
    "LEASE_WINDOW",
    "LEASE_WINDOW_ENV",
    "TRIGGERS_ENV",
    "EventSubscription",
    "EventTrigger",
    "EventTriggers",
    "EventType",
    "MCPEvent",
    "TASKS_KEY_ENV",
    "TaskWakeups",
    "ThreadByField",
    "WebhookReceiver",
    "check_delivery",
    "load_triggers",
    "new_secret",
    "sign",
]


TRIGGERS_ENV = "LANGGRAPH_MCP_TRIGGERS"
"""The environment variable naming a deployment's event triggers file (JSON)."""

LEASE_WINDOW_ENV = "LANGGRAPH_MCP_LEASE_WINDOW"
"""The environment variable the bundled app reads the lease window from (seconds; default
:data:`LEASE_WINDOW`): how soon another process takes a trigger, or the task wake-ups, over when
the one running them dies."""

EVENTS_URL_ENV = "LANGGRAPH_MCP_EVENTS_URL"
"""The environment variable giving the public URL at which a deployment receives webhook
deliveries of MCP events (its :class:`WebhookReceiver`'s mount, e.g.
``https://my-deployment.example.com/mcp-events``)."""


def load_triggers(source: str | os.PathLike[str] | Mapping[str, Any]) -> dict[str, EventTrigger]:
    """Event triggers from a JSON file (or its parsed content): ``{"triggers": {name: {...}}}``,
    each an :class:`EventTrigger`.

    Raises:
        MCPConfigError: the file cannot be read, or a trigger is not valid (naming it and why).
    """
    where = None
    if isinstance(source, Mapping):
        content: Any = source
    else:
        where = str(source)
        try:
            content = json.loads(Path(source).read_text())
        except (OSError, ValueError) as exc:
            raise MCPConfigError(None, None, f"cannot read the event triggers: {exc}", file=where) from None
    triggers = content.get("triggers") if isinstance(content, Mapping) else None
    if not isinstance(triggers, Mapping):
        raise MCPConfigError(None, "triggers", "must be an object of triggers by name", file=where)
    loaded: dict[str, EventTrigger] = {}
    for name, body in triggers.items():
        try:
            loaded[str(name)] = EventTrigger.model_validate(body)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'trigger'}: {e['msg']}" for e in exc.errors()
            )
            raise MCPConfigError(None, f"triggers.{name}", problems, file=where) from None
    return loaded


class EventTriggers:
    """A deployment's event triggers, run in its process: each trigger's subscription, and a run
    per event started through the LangGraph server's API (see :class:`EventTrigger` and
    :class:`~langgraph_mcp._events.triggers.TriggerRunner`).

    Enter it in the custom app's lifespan (``langgraph.json``'s ``"http": {"app": ...}``), which
    LangGraph server runs in each of its processes: of them, one runs each trigger at a time (a
    lease held through the server's API), and another takes it over when that one dies::

        triggers = EventTriggers(pool, load_triggers("graphs/triggers.json"))

        @asynccontextmanager
        async def app_lifespan(app):
            async with lifespan(pool)(app), triggers:
                yield

    Args:
        pool: The deployment's pool (the triggers' servers are among its servers).
        triggers: The triggers by name (the name keys its cursor and its threads).
        client: A ``langgraph_sdk`` async client; by default the server's own, in process
            (``get_client()``), which LangGraph server routes to itself without authentication.
        receiver: Where webhook deliveries arrive (mounted in the deployment's app, at a public
            URL): needed by triggers with ``mode: "webhook"``.
        lease_window: Seconds of a trigger's lease: of the processes that run the triggers
            against one LangGraph server, one runs each trigger at a time, and another takes it
            over within about this long when that one dies (at once when it stops cleanly).

    Raises:
        MCPConfigError: a trigger names a server the pool does not have, or one that acts for
            each user (per-user OAuth or credentials), or asks for webhooks without a receiver.
    """

    def __init__(
        self,
        pool: MCPPool,
        triggers: Mapping[str, EventTrigger],
        *,
        client: Any = None,
        receiver: WebhookReceiver | None = None,
        lease_window: float = LEASE_WINDOW,
    ) -> None:
        for name, trigger in triggers.items():
            if trigger.server not in pool.servers:
                missing = f"no MCP server {trigger.server!r} is configured"
                raise MCPConfigError(trigger.server, f"triggers.{name}.server", missing)
            if pool.per_user(trigger.server):
                why = "the server acts for each user, and a trigger subscribes as nobody"
                raise MCPConfigError(trigger.server, f"triggers.{name}.server", why)
            if trigger.mode == "webhook" and receiver is None:
                needs = "webhook delivery needs a receiver at a public URL (EventTriggers(receiver=...))"
                raise MCPConfigError(trigger.server, f"triggers.{name}.mode", needs)
        self.receiver = receiver
        self.lease_window = lease_window
        self.pool = pool
        self.triggers = dict(triggers)
        self._client = client
        self.runners: dict[str, TriggerRunner] = {}
        self._tasks: list[asyncio.Task[None]] = []

    def _subscribe(self, trigger: EventTrigger, cursor: str | None) -> EventSubscription:
        return self.pool.events(
            trigger.server,
            trigger.event,
            arguments=trigger.arguments,
            mode=trigger.mode,
            cursor=cursor,
            poll_floor=trigger.poll_floor,
            receiver=self.receiver,
            max_age_ms=None if trigger.max_event_age is None else round(trigger.max_event_age * 1000),
        )

    async def start(self) -> None:
        """Start every trigger's runner (each in a task of its own)."""
        if self._tasks:
            return
        client = self._client
        if client is None:
            from langgraph_sdk import get_client

            client = get_client()
        for name, trigger in self.triggers.items():
            runner = TriggerRunner(name, trigger, self._subscribe, client, lease_window=self.lease_window)
            self.runners[name] = runner
            self._tasks.append(asyncio.ensure_future(runner.run()))

    async def aclose(self) -> None:
        """Stop every runner (open subscriptions are closed; runs already started go on)."""
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with suppress(asyncio.CancelledError):
                await task
        for runner in self.runners.values():
            await runner.aclose()

    async def __aenter__(self) -> EventTriggers:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class TaskWakeups:
    """Resumes runs parked on MCP tasks when their tasks change: no cron, and no polling where
    the server pushes.

    A call that parks its run on a task (the server's ``task_detach_after`` passed) records where
    the run waits, sealed with the key in ``LANGGRAPH_MCP_TASKS_KEY``, in the graph's store. This
    reads those records every ``scan_interval`` seconds and, per server, asks for the tasks' status
    notifications (``subscriptions/listen`` with their ids, 2026-07-28), polls ``tasks/get`` for
    the tasks the server does not acknowledge (and on servers that send none), and resumes a run
    once its task is no longer in the status it parked with: the resumed run reads the result,
    asks the task's question, or parks again.

    On a LangGraph deployment, enter it in the custom app's lifespan (the bundled app does when
    the key is set): runs are resumed through the server's API, on the assistant that parked them,
    and of the server's processes or replicas one watches at a time (a lease, as for
    :class:`EventTriggers`). In a script, give the compiled ``graph`` (with a checkpointer and a
    store): its runs are resumed in this process.

    Args:
        pool: The pool whose servers run the tasks (a per-user server's tasks are not watched:
            their session is a user's).
        graph: Resume runs of this compiled graph in process (its store holds the records).
        client: A ``langgraph_sdk`` async client (default: the server's own, ``get_client()``).
        store: Where the runs record their parked tasks: a store, or a coroutine function giving
            it (default: the graph's store, or on a deployment the LangGraph server's).
        key: The sealing key (Fernet keys, comma-separated, the newest first); default
            ``LANGGRAPH_MCP_TASKS_KEY``, which the graphs' process must see too.
        lease_window: Seconds of the lease held across processes (deployment only).
        scan_interval: Seconds between two reads of the records.

    Raises:
        MCPConfigError: no key, or no store to read.
    """

    def __init__(
        self,
        pool: MCPPool,
        *,
        graph: Any = None,
        client: Any = None,
        store: Any = None,
        key: str | None = None,
        lease_window: float = LEASE_WINDOW,
        scan_interval: float = SCAN_INTERVAL,
    ) -> None:
        sealer = _sealer(key)
        if store is None and graph is not None:
            store = getattr(graph, "store", None)
            if store is None:
                raise MCPConfigError(None, "store", "the graph has no store to record its parked tasks in")
        self.pool = pool
        self.graph = graph
        self._client = client
        self._store = store
        self._sealer = sealer
        self.lease_window = lease_window
        self.scan_interval = scan_interval
        self.loop: WakeupLoop | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start watching (in a task of its own)."""
        if self._task is not None:
            return
        lease = None
        resume: Any
        if self.graph is not None:
            resume = GraphResume(self.graph)
        else:
            client = self._client
            if client is None:
                from langgraph_sdk import get_client

                client = get_client()
            resume = api_resume(client)
            lease = _Lease(client, "mcp-task-wakeups", self.lease_window)
        store = self._store if self._store is not None else server_store
        self.loop = WakeupLoop(
            self.pool._for_anyone,
            store,
            self._sealer,
            resume,
            unwatchable=self._unwatchable,
            lease=lease,
            scan_interval=self.scan_interval,
        )
        self._task = asyncio.ensure_future(self.loop.run())

    def _unwatchable(self, server: str) -> str | None:
        if server not in self.pool.servers:
            return "the pool has no server by that name"
        if self.pool.per_user(server):
            return "its sessions are each user's"
        return None

    @property
    def resumed(self) -> int:
        """Runs resumed so far by this process."""
        return self.loop.resumed if self.loop is not None else 0

    async def aclose(self) -> None:
        """Stop watching; parked runs stay recorded. Runs resumed on a deployment go on; runs
        resumed in this process are waited for up to 10 s, then cancelled (their task is looked
        at again when they are resumed next)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
        if self.loop is not None:
            await self.loop.aclose()

    async def __aenter__(self) -> TaskWakeups:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _sealer(key: str | None) -> Any:
    from langgraph_mcp._oauth.records import Sealer

    if key is not None:
        try:
            return Sealer(key)
        except (ValueError, TypeError):
            raise MCPConfigError(None, "key", "is not a Fernet key (or comma-separated keys)") from None
    sealer = sealer_from_env()
    if sealer is None:
        needs = f"set {TASKS_KEY_ENV} (a Fernet key) where the graphs run and here, or pass key="
        raise MCPConfigError(None, TASKS_KEY_ENV, needs)
    return sealer
