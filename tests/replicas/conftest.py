"""The deployment the multi-replica tests share: one per test module, replicas restarted as needed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest_servers import http_server_process
from tests.postgres import postgres_cluster
from tests.replicas.cluster import Cluster, prepare, redis_server, replica_env
from tests.replicas.install import ensure_installed


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """PostgreSQL and Redis of their own, prepared once, and a sign-in server (per-user OAuth);
    replicas start on demand (``cluster``)."""
    python = ensure_installed()
    folder = tmp_path_factory.mktemp("replicas")
    with (
        postgres_cluster() as database,
        redis_server(folder / "redis") as redis,
        http_server_process("signin") as signin,
    ):
        env = replica_env(database, redis)
        prepare(python, env)
        cluster = Cluster(python, folder, env, signin)
        try:
            yield cluster
        finally:
            cluster.close()


@pytest.fixture
def cluster(deployment: Cluster) -> Cluster:
    """Replicas ``A`` and ``B``, both running (one a test killed or stopped is started anew)."""
    deployment.ensure("A", "B")
    return deployment
