"""Two replicas of the stock LangGraph API server sharing PostgreSQL and Redis, for the tests.

The runtime is ``langgraph-runtime-pg`` (``LANGGRAPH_RUNTIME_EDITION=pg``) in an environment of
its own (``tests/replicas/install.py``); the graphs and the ``http.app`` are the repository's
(``langgraph.json``). PostgreSQL is a private cluster (``tests/postgres.py``), Redis a private
``redis-server`` (Debian's package) on a free 127.0.0.1 port with nothing saved to disk. The
database is prepared once, before any replica starts (two replicas migrating an empty database
at once race on alembic's version table, and on the checkpointer's); the replicas run with
auto-migration off.

Each replica is ``tests/replicas/launch.py`` on a free port, in a process group of its own, with
its own MCP config: the fixture servers it starts write their PID into a folder of that replica
(``DEMO_PID_DIR``) and the demo server's ``gauge`` calls into a file of that replica
(``DEMO_EVENTS_FILE``), so a test can tell which replica ran a call and which processes it owns.
With a sign-in server (``tests/servers/signin.py``), the config also names it, with per-user
OAuth, once per protocol era (``tests/deploy/signin.py``); its requests carry the replica's name
(``X-Replica``). The replicas run LangGraph custom auth (``tests/browser/app_auth.py``: a bearer
token names the user, no token is ``anonymous``; each thread is its creator's) on the custom
routes too, and share one ``MCP_OAUTH_KEY``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from tests.conftest_servers import stdio_params
from tests.deploy.signin import new_key, signin_servers
from tests.helpers import free_port, pid_alive
from tests.langgraph_server import REPO_ROOT, children_of, cmdline

HERE = Path(__file__).resolve().parent
LAUNCHER = HERE / "launch.py"
READY_TIMEOUT = 90.0
HEARTBEAT = 3
"""``LG_BG_JOB_HEARTBEAT``: a run whose replica stopped heart-beating is swept back to the queue
after about twice this (the default, 120 s, is too long for a test)."""


@contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """A private ``redis-server`` on 127.0.0.1; yields its ``redis://`` URI."""
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not Path(binary).is_file():
        raise FileNotFoundError("redis-server is not installed (Debian: apt-get install redis-server)")
    folder.mkdir(parents=True, exist_ok=True)
    for _attempt in range(3):
        port = free_port()
        log = folder / "redis.log"
        proc = subprocess.Popen(
            [binary, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(folder), "--save", "",
             "--appendonly", "no", "--logfile", str(log)],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        try:
            if _redis_ready(proc, port, log):
                break
        except BaseException:
            _stop_group(proc)
            raise
        _stop_group(proc)
    else:
        raise AssertionError("no free port for redis-server after 3 attempts")
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        _stop_group(proc)


def _redis_ready(proc: subprocess.Popen[bytes], port: int, log: Path) -> bool:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            text = log.read_text(errors="replace") if log.exists() else ""
            if "Address already in use" in text:
                return False
            raise AssertionError(f"redis-server exited with {proc.returncode}:\n{text[-2000:]}")
        with suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            if sock.recv(16).startswith(b"+PONG"):
                return True
        time.sleep(0.05)
    raise AssertionError("redis-server did not answer PING within 30 s")


def _stop_group(proc: subprocess.Popen[bytes], timeout: float = 30) -> int:
    """SIGTERM ``proc``, wait, then SIGKILL whatever is left of its process group."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    return code


def prepare(python: Path, env: dict[str, str]) -> None:
    """Migrate the database and create the checkpointer's and store's tables, once, before the
    replicas start (``launch.py prepare``)."""
    done = subprocess.run(
        [str(python), str(LAUNCHER), "prepare"], env=env,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"preparing the database failed:\n{done.stdout}{done.stderr}"


def mcp_config(folder: Path, extra: dict[str, Any] | None = None) -> Path:
    """The MCP servers of one replica: the demo fixture server (progress, ``gauge``) and the
    bundled shop server (a question), each once per protocol era; the 2025-11-25 ones expose
    their tools as ``legacy_<name>``. And the ``extra`` servers."""
    demo = {
        **stdio_params("demo", env={"DEMO_PID_DIR": str(folder / "pids"),
                                    "DEMO_EVENTS_FILE": str(folder / "events.log")}, fork=False),
    }  # fmt: skip
    shop = {"command": sys.executable, "args": [str(REPO_ROOT / "examples/servers/shop_server.py")],
            "cwd": str(REPO_ROOT)}  # fmt: skip
    legacy = {"protocol": "legacy", "prefix": "legacy_"}
    servers = {
        "demo": {**demo, "protocol": "auto"},
        "shop": {**shop, "protocol": "auto"},
        "legacy_demo": {**demo, **legacy, "tools": ["sleep", "gauge"]},
        "legacy_shop": {**shop, **legacy, "tools": ["cancel_order"]},
        **(extra or {}),
    }
    (folder / "pids").mkdir(parents=True, exist_ok=True)
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


class Replica:
    """One API server process (it runs queued runs too)."""

    def __init__(self, name: str, folder: Path, proc: subprocess.Popen[bytes], port: int) -> None:
        self.name, self.folder, self.proc = name, folder, proc
        self.url = f"http://127.0.0.1:{port}"
        self.log = folder / "server.log"
        self.owned: set[int] = set()
        """MCP server processes seen among its children (killed at the end if still running)."""

    @property
    def pid(self) -> int:
        return self.proc.pid

    def running(self) -> bool:
        return self.proc.poll() is None

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def tail(self) -> str:
        """The end of its log, for an assertion message."""
        return f" ({self.name}, {self.url}):\n{self.log_text()[-4000:]}"

    def mcp_children(self) -> set[int]:
        """Its child processes that are MCP servers (fixture or example servers)."""
        found = {pid for pid in children_of(self.pid) if "servers" in cmdline(pid)}
        self.owned |= found
        return found

    def pid_files(self) -> set[int]:
        """PIDs the demo servers it started wrote into its folder."""
        return {int(p.name) for p in (self.folder / "pids").iterdir()}

    def ran(self, run_id: str) -> bool:
        """Whether this replica started the run ``run_id`` (its log says so)."""
        return any(
            "Starting background run" in line and run_id in line for line in self.log_text().splitlines()
        )

    def gauge_events(self, tag: str) -> list[str]:
        """``start`` / ``done`` of the ``gauge`` calls tagged ``tag`` that ran on this replica."""
        events = self.folder / "events.log"
        lines = events.read_text().splitlines() if events.exists() else []
        return [line.rsplit(" ", 1)[1] for line in lines if line.startswith(f"gauge {tag} ")]

    def kill(self) -> None:
        """SIGKILL the server process alone (its MCP servers are left to notice)."""
        self.mcp_children()
        self.proc.kill()
        self.proc.wait()

    def stop(self, timeout: float = 60.0) -> int:
        """SIGTERM the server and wait for it; its exit code."""
        if self.running():
            self.mcp_children()
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"replica {self.name} ignored SIGTERM for {timeout} s") from None

    def clean_up(self) -> None:
        """Stop it if running, then kill whatever it left (only after a failed test)."""
        if self.running():
            with suppress(AssertionError):
                self.stop()
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        for pid in self.owned | self.pid_files():
            if pid_alive(pid) and "servers" in cmdline(pid):  # (not a reused number)
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


class Cluster:
    """Replicas ``A`` and ``B`` of one deployment; :meth:`ensure` (re)starts the missing ones.
    ``signin``: the URL of the sign-in server the replicas' config names, if any."""

    def __init__(
        self,
        python: Path,
        folder: Path,
        env: dict[str, str],
        signin: str | None = None,
        servers: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.python, self.folder, self.env, self.signin = python, folder, env, signin
        self.servers = servers or {}
        """More MCP servers every replica has (HTTP ones: their requests carry ``X-Replica``)."""
        self.events_dir: Path | None = None
        """The events fixture server's folder, when the replicas have one."""
        self.tasks_dir: Path | None = None
        """The task fixture server's folder, when the replicas have one."""
        self.replicas: dict[str, Replica] = {}
        self.retired: list[Replica] = []
        self.starts = 0

    def __getitem__(self, name: str) -> Replica:
        return self.replicas[name]

    def ensure(self, *names: str) -> None:
        """Start each named replica that is not running (at once), and wait until all answer."""
        missing = [n for n in names if n not in self.replicas or not self.replicas[n].running()]
        for name in missing:
            if name in self.replicas:
                self.retired.append(self.replicas.pop(name))
        pending = {name: self._spawn(name) for name in missing}
        attempts = 0
        try:
            while pending:
                name, replica = next(iter(pending.items()))
                if self._wait_ready(replica):
                    self.replicas[name] = pending.pop(name)
                    continue
                attempts += 1
                assert attempts < 5, f"no free port for replica {name}"
                replica.clean_up()
                pending[name] = self._spawn(name)
        finally:
            for replica in pending.values():
                replica.clean_up()

    def _spawn(self, name: str) -> Replica:
        self.starts += 1
        folder = self.folder / f"{name}-{self.starts}"
        folder.mkdir(parents=True)
        port = free_port()
        extra = signin_servers(self.signin, headers={"X-Replica": name}) if self.signin else {}
        for server, entry in self.servers.items():
            extra[server] = {**entry, "headers": {"X-Replica": name}}
        env = {**self.env, "LANGGRAPH_MCP_CONFIG": str(mcp_config(folder, extra))}
        with (folder / "server.log").open("wb") as out:
            proc = subprocess.Popen(
                [str(self.python), str(LAUNCHER), str(port)], cwd=folder, env=env,
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        return Replica(name, folder, proc, port)

    def _wait_ready(self, replica: Replica) -> bool:
        """True once ``/ok`` answers; False if its port was taken meanwhile."""
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if not replica.running():
                if "address already in use" in replica.log_text():
                    return False
                raise AssertionError(f"replica exited with {replica.proc.returncode}{replica.tail()}")
            with suppress(OSError), urllib.request.urlopen(f"{replica.url}/ok", timeout=2) as response:
                if response.status == 200:
                    return True
            time.sleep(0.1)
        replica.clean_up()
        raise AssertionError(f"replica not ready after {READY_TIMEOUT} s{replica.tail()}")

    def close(self) -> None:
        for replica in [*self.replicas.values(), *self.retired]:
            replica.clean_up()


def replica_env(database_uri: str, redis_uri: str) -> dict[str, str]:
    """The settings every replica runs with: the repository's graphs and ``http.app``, offline,
    with custom auth on every route, and the key that seals per-user OAuth tokens."""
    project = json.loads((REPO_ROOT / "langgraph.json").read_text())
    unwanted = ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if k not in unwanted}
    env.update(
        LANGGRAPH_RUNTIME_EDITION="pg",
        DATABASE_URI=database_uri,
        REDIS_URI=redis_uri,
        LG_RUNTIME_PG_AUTO_MIGRATE="false",
        LG_BG_JOB_HEARTBEAT=str(HEARTBEAT),
        N_JOBS_PER_WORKER="4",
        LANGSERVE_GRAPHS=json.dumps(project["graphs"]),
        LANGGRAPH_HTTP=json.dumps({**project["http"], "enable_custom_route_auth": True}),
        LANGGRAPH_AUTH=json.dumps({"path": str(REPO_ROOT / "tests/browser/app_auth.py") + ":auth"}),
        LANGGRAPH_MCP_MODEL="scripted",
        LANGSMITH_TRACING="false",
        LANGGRAPH_NO_VERSION_CHECK="true",
        PYTHONPATH=str(REPO_ROOT),
        PYTHONUNBUFFERED="1",
        **new_key(),
    )
    return env


def versions(python: Path, *names: str) -> dict[str, str]:
    """The versions of the distributions ``names`` installed in ``python``'s environment."""
    script = (
        "import json, sys, importlib.metadata as m\n"
        "print(json.dumps({n: m.version(n) for n in sys.argv[1:]}))"
    )
    done = subprocess.run(
        [str(python), "-c", script, *names], capture_output=True, text=True, timeout=60, check=True
    )
    return dict(json.loads(done.stdout))
