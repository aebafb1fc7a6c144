"""Per-user catalogs on two replicas of the stock LangGraph API server sharing PostgreSQL and Redis
(``tests/replicas/cluster.py``).

The replicas serve the repository's graphs and a ``create_mcp_agent`` graph
(``tests/deploy/test_peruser_deploy.py``'s :data:`AGENT`, whose scripted model notes on each reply
the tools that model call was offered). The cluster's per-user servers (``mail``, and
``legacy_mail`` pinned to 2025-11-25: ``tests/deploy/signin.py``) are the per-user catalog
fixture server behind a gate that refuses every request without a user's token
(``peruser_site``), each request carrying its replica's name (``X-Replica``); the demo and shop
servers are ordinary ones. A user's tokens live in the shared PostgreSQL store, sealed with the
key all replicas share.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from tests.deploy.test_peruser_deploy import (
    OWN,
    Site,
    connect,
    last_tool,
    offered,
    peruser_site,
    say,
    with_agent,
)
from tests.postgres import postgres_cluster
from tests.replicas.cluster import Cluster, prepare, redis_server, replica_env
from tests.replicas.install import ensure_installed
from tests.replicas.test_replicas import client

pytestmark = [pytest.mark.slow, pytest.mark.deploy, pytest.mark.timeout(300)]

HELLO = "hello []"  # a line whose arguments are no JSON object: the model answers in text


@pytest.fixture(scope="module")
def peruser_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cluster, Site]]:
    """PostgreSQL and Redis of their own, prepared once, the per-user site the replicas' per-user
    servers name, and the ``peruser`` graph next to the repository's; no replica started yet."""
    python = ensure_installed()
    folder = tmp_path_factory.mktemp("peruser-replicas")
    with postgres_cluster() as database, redis_server(folder / "redis") as redis, peruser_site() as site:
        env = replica_env(database, redis)
        graphs = with_agent(folder / "graph", {"graphs": json.loads(env["LANGSERVE_GRAPHS"])})["graphs"]
        env["LANGSERVE_GRAPHS"] = json.dumps(graphs)
        prepare(python, env)
        cluster = Cluster(python, folder, env, site.url)
        try:
            yield cluster, site
        finally:
            cluster.close()


async def test_a_user_who_signed_in_on_one_replica_gets_her_catalog_on_another(
    peruser_cluster: tuple[Cluster, Site],
) -> None:
    """Alice signs in through replica A while it runs alone (so the interrupt and the resume run
    on A; the callback route is A's). A stops; replica B starts afterwards, so it never saw her
    sign-in: her new run through B is offered her own tools at once, from her tokens in the
    shared store, and her ``alice_reports`` call works there, with her token, without a new
    sign-in at the authorization server."""
    started = time.monotonic()
    cluster, site = peruser_cluster
    cluster.ensure("A")
    a = cluster["A"]
    assert "B" not in cluster.replicas
    on_a = client(a, "alice")
    t1 = (await on_a.threads.create())["thread_id"]
    await say(on_a, t1, HELLO)
    first = await offered(on_a, t1)
    assert {"connect_mail", "connect_legacy_mail", "gauge"} <= first and not first & OWN, first

    answer = await connect(on_a, a.url, t1, "alice", "mail")
    assert answer.startswith("Connected to MCP server 'mail'") and "alice_reports" in answer, (
        answer + a.tail()
    )
    after = await offered(on_a, t1)
    assert {"whoami", "alice_reports"} <= after and not after & {"connect_mail", "bob_admin"}, after
    assert site.provider.grants == ["authorization_code"]
    signin = site.seen()
    assert {replica for replica, _, _ in signin} <= {"A", None}, signin  # what A sent, and discovery
    assert {user for _, user, _ in signin} == {"alice", None}, signin

    # Replica A stops; replica B starts now: nothing of her sign-in ever was in its process.
    a.stop()
    cluster.ensure("B")
    b = cluster["B"]
    on_b = client(b, "alice")
    t2 = (await on_b.threads.create())["thread_id"]
    await say(on_b, t2, HELLO)
    own = await offered(on_b, t2)
    assert {"whoami", "alice_reports", "gauge", "connect_legacy_mail"} <= own, f"{own}{b.tail()}"
    assert not own & {"connect_mail", "bob_admin"}, own
    await say(on_b, t2, "alice_reports")
    assert await last_tool(on_b, t2) == "alice_reports for alice"

    # At the server: B listed and called with Alice's token; nobody signed in again.
    from_b = site.seen()[len(signin) :]
    assert from_b and {replica for replica, _, _ in from_b} <= {"B", None}, from_b
    assert {user for _, user, _ in from_b} <= {"alice", None}, from_b
    assert {("B", "alice", "tools/list"), ("B", "alice", "tools/call")} <= set(from_b), from_b
    assert site.catalog.called == [("alice", "alice_reports")]
    assert set(site.catalog.listed) == set(site.gate.users_seen) == {"alice"}
    assert site.provider.grants == ["authorization_code"]  # no second code, no refresh
    for replica in (a, b):  # (the server's own startup warnings carry tracebacks: not errors)
        assert "'level': 'error'" not in replica.log_text(), replica.tail()
    print(f"\nsigned in on replica A, her catalog on replica B: {time.monotonic() - started:.1f} s")
