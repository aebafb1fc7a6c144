"""Shared fixtures: the demo server reachable over every transport and era."""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator, Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from tests.conftest_servers import serve_in_loop, stdio_params
from tests.postgres import URI_ENV, postgres_bin, postgres_cluster
from tests.servers import demo, fickle, library

FAST_TIER = "not slow and not interop and not deploy and not conformance"
"""The marker expression of the fast tier (``pytest --fast``); the markers are in pyproject.toml."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fast",
        action="store_true",
        help=f"run the fast tier only: -m '{FAST_TIER}' (and any -m given as well)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--fast"):
        given = config.option.markexpr
        config.option.markexpr = f"({given}) and ({FAST_TIER})" if given else FAST_TIER


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (the default, see pyproject.toml): one worker per core and one more, or none
    at all when the tests asked for are in a single file (starting workers would cost more than
    it saves). The extra worker runs while others wait: a quarter of the suite's time is spent
    waiting on real clocks (grace periods, back-offs, held calls), and on two cores three
    workers finish the fast tier about a quarter sooner than two.
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` or ``-n N`` choose another number."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    workers = len(os.sched_getaffinity(0)) + 1
    files = set()
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::")[0])
        if not path.is_file():
            return workers
        files.add(path.resolve())
    return workers if len(files) > 1 else 0


ONE_WORKER = {
    "tests/deploy/test_langgraph_dev.py": "one langgraph dev server, and one PostgreSQL cluster, at a time",
    "tests/replicas/test_replicas.py": "its PostgreSQL, Redis and two replicas start once",
    "tests/interop/test_servers.py": "its shared HTTP servers start once",
    "tests/interop/test_resources.py": "its shared HTTP servers start once",
    "tests/interop/test_mcp1.py": "its shared HTTP servers start once",
    "tests/browser/": "its langgraph dev server, UI bundled, starts once (tests/browser/conftest.py)",
    "tests/interop/test_fastmcp_tasks.py": "its shared HTTP server starts once",
    "tests/deploy/test_graphs.py": "its shared pool starts the three bundled servers once",
}
"""Test files (and folders, ending in ``/``) that one xdist worker runs whole (see
``pytest_xdist_make_scheduler``), and why."""


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With ``--dist load`` (the default under ``-n``), tests go to the workers one by one, except
    that each file or folder in ``ONE_WORKER`` goes to one worker whole.

    (That is what ``--dist loadgroup`` with ``xdist_group`` marks is for, but pytest-xdist 3.8
    groups tests by setting ``item._nodeid``, which pytest 9.2 no longer reads: its groups are
    silently ignored.)"""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Scheduler(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            folder = next((f for f in ONE_WORKER if f.endswith("/") and path.startswith(f)), None)
            return folder or (path if path in ONE_WORKER else nodeid)

    return Scheduler(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The stdio case of a test parametrized over transports is ``slow``: each starts a server
    process (about 1.5 s of CPU), and what the test checks is the same over the in-process and
    HTTP cases next to it. The fast tier covers stdio with the tests written for it (one process
    each: tests/session/test_stdio.py, the process tests of tests/pool/test_pool.py, ...).

    So is the 2025-11-25 case (``legacy``) of a test parametrized over protocol eras: what the
    test checks of this package's side is the same in the current era's case next to it, which
    the fast tier runs. Every case still runs in the full suite, both eras of every such test."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None:
            continue
        parts = callspec.id.replace("[", "-").split("-")
        if "stdio" in parts or "legacy" in parts:
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def short_graces(monkeypatch: pytest.MonkeyPatch) -> None:
    """The session layer's process grace periods (``langgraph_mcp/_session/grace.py``: 2 s for a
    stdio server to exit once its stdin closes, 2 s more after SIGTERM) shortened to 0.2 s, for
    tests whose servers sit them out (they ignore the end of their input, or SIGTERM). What the
    tests check is the same; they stop waiting real seconds for it."""
    from langgraph_mcp._session import grace

    monkeypatch.setattr(grace, "EXIT", 0.2)
    monkeypatch.setattr(grace, "KILL", 0.2)


@pytest.fixture
def short_listen_retry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pause before a dropped ``subscriptions/listen`` stream is opened again
    (``grace.LISTEN_RETRY``: 0.5 s times the failures in a row) shortened to 0.05 s, for tests
    that make the stream fail until it gives up: they count failures, not seconds."""
    from langgraph_mcp._session import grace

    monkeypatch.setattr(grace, "LISTEN_RETRY", 0.05)


# (transport, protocol) pairs the demo server is exercised over.
TRANSPORTS = [
    ("in_process", "auto"),
    ("in_process", "legacy"),
    ("stdio", "auto"),
    ("stdio", "legacy"),
    ("http", "auto"),
    ("http", "legacy"),
    ("sse", "auto"),
]
TRANSPORT_IDS = [f"{t}-{p}" for t, p in TRANSPORTS]


@pytest.fixture
def pid_dir(tmp_path: Path) -> Iterator[Path]:
    """A folder where fixture servers write their PID (``DEMO_PID_DIR``). Servers still running
    when the test ends (it failed, or leaked them) are killed, so none outlives the suite."""
    path = tmp_path / "pids"
    path.mkdir()
    yield path
    for entry in path.iterdir():
        with suppress(OSError, ValueError):  # gone already (or its number now someone else's)
            if b"servers" in Path(f"/proc/{int(entry.name)}/cmdline").read_bytes():
                os.kill(int(entry.name), signal.SIGKILL)


@pytest.fixture(params=TRANSPORTS, ids=TRANSPORT_IDS)
async def demo_config(request: pytest.FixtureRequest, pid_dir: Path) -> AsyncIterator[dict[str, Any]]:
    """A connection config for the demo server over one transport and protocol era."""
    transport, protocol = request.param
    if transport == "in_process":
        yield {"server": demo.build_server(counters=demo.Counters()), "protocol": protocol}
    elif transport == "stdio":
        yield {**stdio_params("demo", env={"DEMO_PID_DIR": str(pid_dir)}), "protocol": protocol}
    else:
        kind = "sse" if transport == "sse" else "http"
        async with serve_in_loop(demo.build_server(counters=demo.Counters()), kind) as url:
            yield {"url": url, "transport": kind, "protocol": protocol}


FICKLE_CASES = [("stdio", "auto"), ("stdio", "legacy"), ("http", "auto"), ("http", "legacy")]


@pytest.fixture(params=FICKLE_CASES, ids=[f"{t}-{p}" for t, p in FICKLE_CASES])
async def fickle_config(request: pytest.FixtureRequest) -> AsyncIterator[dict[str, Any]]:
    """A connection config for the fickle server over stdio or HTTP, in both protocol eras."""
    transport, protocol = request.param
    if transport == "stdio":
        yield {**stdio_params("fickle"), "protocol": protocol}
    else:
        async with serve_in_loop(fickle.build_server(state=fickle.FickleState())) as url:
            yield {"url": url, "protocol": protocol}


LIBRARY_CASES = [("stdio", "auto"), ("stdio", "legacy"), ("http", "auto"), ("http", "legacy")]


@pytest.fixture(params=LIBRARY_CASES, ids=[f"{t}-{p}" for t, p in LIBRARY_CASES])
async def library_config(request: pytest.FixtureRequest) -> AsyncIterator[dict[str, Any]]:
    """A connection config for the library server over stdio or HTTP, in both protocol eras."""
    transport, protocol = request.param
    if transport == "stdio":
        yield {**stdio_params("library"), "protocol": protocol}
    else:
        async with serve_in_loop(library.build_server()) as url:
            yield {"url": url, "protocol": protocol}


@pytest.fixture(scope="session")
def postgres_uri() -> Iterator[str]:
    """A PostgreSQL database for checkpoint tests (a private cluster, see ``tests/postgres.py``).

    Skips only when PostgreSQL is not installed at all; ``.ci/run`` installs it."""
    if os.environ.get(URI_ENV):
        yield os.environ[URI_ENV]
        return
    if postgres_bin() is None:
        pytest.skip("PostgreSQL is not installed (Debian: apt-get install postgresql); .ci/run installs it")
    with postgres_cluster() as uri:
        yield uri
