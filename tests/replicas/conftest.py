"""The deployment the multi-replica tests share: one per test module, replicas restarted as needed."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from cryptography.fernet import Fernet

from tests.conftest_servers import http_server_process
from tests.postgres import postgres_cluster
from tests.replicas.cluster import Cluster, prepare, redis_server, replica_env
from tests.replicas.install import ensure_installed

TRIGGER = {"server": "tickets", "event": "ticket.created", "assistant": "agent", "arguments": {"queue": "r"}}
"""The replicas' one event trigger (push, a new thread per event, on the scripted ``agent`` graph)."""
LEASE = 2.0
"""The replicas' lease window (seconds): a dead holder's trigger is taken over within it."""


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """PostgreSQL and Redis of their own, prepared once, a sign-in server (per-user OAuth), an
    events server whose events start runs (one trigger, ``TRIGGER``) and a task server whose
    parked tasks the replicas wake; replicas start on demand (``cluster``)."""
    python = ensure_installed()
    folder = tmp_path_factory.mktemp("replicas")
    events, tasks = folder / "events", folder / "tasks"
    events.mkdir()
    tasks.mkdir()
    (events / ".heartbeat_ms").write_text("200")
    triggers = folder / "triggers.json"
    triggers.write_text(json.dumps({"triggers": {"tickets": TRIGGER}}))
    with (
        postgres_cluster() as database,
        redis_server(folder / "redis") as redis,
        http_server_process("signin") as signin,
        http_server_process("events", env={"EVENTS_DIR": str(events)}) as events_url,
        http_server_process("tasks", env={"TASKS_DIR": str(tasks)}) as tasks_url,
    ):
        env = replica_env(database, redis)
        env.update(
            LANGGRAPH_MCP_TRIGGERS=str(triggers),
            LANGGRAPH_MCP_TASKS_KEY=Fernet.generate_key().decode(),
            LANGGRAPH_MCP_LEASE_WINDOW=str(LEASE),
        )
        prepare(python, env)
        servers = {"tickets": {"url": events_url}, "jobs": {"url": tasks_url, "task_detach_after": 0}}
        cluster = Cluster(python, folder, env, signin, servers)
        cluster.events_dir, cluster.tasks_dir = events, tasks
        try:
            yield cluster
        finally:
            cluster.close()


@pytest.fixture
def cluster(deployment: Cluster) -> Cluster:
    """Replicas ``A`` and ``B``, both running (one a test killed or stopped is started anew)."""
    deployment.ensure("A", "B")
    return deployment
