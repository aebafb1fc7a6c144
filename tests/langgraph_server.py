"""A real ``langgraph dev`` server in its own OS process, for the deployment tests.

Offline and quiet (no analytics, no version check, no tracing), ``--no-reload``, on a free
127.0.0.1 port, in a working folder of the test's own (the in-memory runtime keeps its files in
``.langgraph_api/`` there). ``stop()`` sends SIGTERM to the server's PID and waits.

A config with ``ui`` entries makes the server run the UI bundler (``npx
@langchain/langgraph-ui``), which resolves their paths from the working folder: the folders they
live in are copied there, and :func:`ui_bundle` waits for the bundle.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from tests.helpers import free_port, pid_alive

REPO_ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
READY_TIMEOUT = 90.0


def children_of(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (read from ``/proc``)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


class DevServer:
    def __init__(self, proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
        self.proc, self.url, self.log = proc, url, log
        self.seen: set[int] = set()
        """MCP servers seen among its children (killed after the test if still running)."""

    def kill_leftovers(self) -> None:
        for pid in self.seen:
            if pid_alive(pid) and "servers/" in cmdline(pid):  # (not a reused number)
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_text(self) -> str:
        return re.sub(r"\x1b\[[0-9;]*m", "", self.log.read_text(errors="replace"))

    def mcp_children(self, marker: str = "servers/") -> set[int]:
        """Descendant processes that are MCP servers (their command line names ``marker``)."""
        return {pid for pid in children_of(self.pid) if marker in cmdline(pid)}

    def stop(self, timeout: float = 60.0) -> int:
        """SIGTERM the server and wait for it; its exit code."""
        self.seen |= self.mcp_children()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(
                f"langgraph dev ignored SIGTERM for {timeout} s:\n{self.log_text()[-3000:]}"
            ) from None


@contextmanager
def langgraph_dev(
    workdir: Path,
    config: Path,
    env: dict[str, str] | None = None,
    *,
    reload: bool = False,
    ui: bool = False,
) -> Iterator[DevServer]:
    """Start ``langgraph dev`` with ``config``; yield it once ``/ok`` answers; stop it afterwards.

    With ``reload`` the server watches ``*.py`` files in ``workdir`` and restarts its worker
    process when one changes (the yielded PID is then the reloader's). Without ``ui`` the
    config's ``ui`` entries are left out (a copy of it is used): the UI bundler costs seconds of
    CPU at each start, and only the browser tests look at what it builds.

    The server runs in a process group of its own, stopped whole at the end: the UI bundler's
    watcher outlives a SIGTERM of the server (a terminal's Ctrl-C reaches the whole group).
    ``{port}`` in a value of ``env`` is replaced by the port the server listens on."""
    workdir.mkdir(parents=True, exist_ok=True)
    if ui:
        _copy_ui_sources(config, workdir)
    else:
        config = _without_ui(config, workdir)
    environ = {k: v for k, v in os.environ.items() if k not in ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")}
    environ.update(
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGGRAPH_NO_VERSION_CHECK="true",
        LANGSMITH_TRACING="false",
        PATH=f"{BIN}{os.pathsep}{environ.get('PATH', '')}",
        **(env or {}),
    )
    for _attempt in range(3):
        port = free_port()
        log = workdir / f"server-{port}.log"
        # A value naming the server's own address ("{port}") gets the port it listens on.
        environ.update({k: v.replace("{port}", str(port)) for k, v in (env or {}).items() if "{port}" in v})
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [str(BIN / "langgraph"), "dev", "--config", str(config), "--no-browser",
                 "--host", "127.0.0.1", "--port", str(port), "--n-jobs-per-worker", "4",
                 *(() if reload else ("--no-reload",))],
                cwd=workdir, env=environ, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        server = DevServer(proc, f"http://127.0.0.1:{port}", log)
        try:
            if _wait_ready(server, port):
                break
        except BaseException:
            server.stop()
            raise
        server.stop()  # the port was taken meanwhile: the server chose another one
    else:
        raise AssertionError("no free port for langgraph dev after 3 attempts")
    try:
        yield server
    finally:
        server.stop()
        server.kill_leftovers()  # only after a failed test: the tests assert there are none
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(server.pid, signal.SIGKILL)  # what is left of its group: the UI bundler


def _without_ui(config: Path, workdir: Path) -> Path:
    """``config`` itself if it has no ``ui`` entries; else a copy without them, in ``workdir``,
    its dependencies made absolute."""
    data = json.loads(config.read_text())
    if not data.pop("ui", None):
        return config
    data["dependencies"] = [
        dep if not dep.startswith(".") else str((config.parent / dep).resolve())
        for dep in data.get("dependencies", [])
    ]
    copy = workdir / "langgraph.no-ui.json"
    copy.write_text(json.dumps(data))
    return copy


def _copy_ui_sources(config: Path, workdir: Path) -> None:
    """Copy the top folder of each of ``config``'s ``ui`` entries (``./ui/index.tsx``: ``ui/``)
    into ``workdir``, where the UI bundler looks for them; its ``node_modules`` (installed by
    ``tests/browser/install.py``) is linked, not copied."""
    from tests.browser.install import ensure_ui_packages

    ensure_ui_packages()
    entries = json.loads(config.read_text()).get("ui") or {}
    for entry in set(entries.values()):
        top = Path(entry).parts[0] if Path(entry).parts[0] != "." else Path(entry).parts[1]
        source = REPO_ROOT / top if (REPO_ROOT / top).is_dir() else config.parent / top
        shutil.copytree(
            source, workdir / top, dirs_exist_ok=True, ignore=shutil.ignore_patterns("node_modules")
        )
        if (source / "node_modules").is_dir() and not (workdir / top / "node_modules").exists():
            (workdir / top / "node_modules").symlink_to(source / "node_modules")  # the packages it imports


def ui_bundle(workdir: Path, graph: str, timeout: float = READY_TIMEOUT) -> None:
    """Wait until the UI bundler has written ``graph``'s bundle. (The server reads the bundle
    list once, at the first ``/ui/...`` request: a request before this returns 404 for good.)"""
    schemas = workdir / ".langgraph_api" / "ui" / "schemas.json"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with suppress(OSError, ValueError):
            if graph in json.loads(schemas.read_text()):
                return
        time.sleep(0.1)
    raise AssertionError(f"no UI bundle for {graph!r} after {timeout} s in {schemas}")


def wait_ready(server: DevServer) -> None:
    """Wait until the server answers ``/ok`` again (after a reload)."""
    assert _wait_ready(server, int(server.url.rsplit(":", 1)[1]))


def _wait_ready(server: DevServer, port: int) -> bool:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise AssertionError(
                f"langgraph dev exited with {server.proc.returncode}:\n{server.log_text()[-4000:]}"
            )
        if f"Port {port} is already in use" in server.log_text():
            return False
        try:
            with urllib.request.urlopen(f"{server.url}/ok", timeout=2) as response:
                if response.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"langgraph dev was not ready after {READY_TIMEOUT} s:\n{server.log_text()[-4000:]}")
