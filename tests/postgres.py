"""A throwaway PostgreSQL cluster on 127.0.0.1 for the tests, from the Debian packages.

``.ci/run`` installs the ``postgresql`` package; this module starts a private cluster in a
temporary folder (``initdb`` + ``pg_ctl``, trust auth, a free port), creates a database and
removes everything afterwards. The stock cluster of the package is never touched.
``LANGGRAPH_MCP_TEST_POSTGRES_URI`` points the tests at an existing server instead.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.helpers import free_port

URI_ENV = "LANGGRAPH_MCP_TEST_POSTGRES_URI"


def postgres_bin() -> Path | None:
    """The newest installed PostgreSQL ``bin`` folder with ``initdb``, if any."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


@contextmanager
def postgres_cluster() -> Iterator[str]:
    """Start a private cluster; yield a ``postgresql://`` URI of an empty database ``langgraph``."""
    pg = postgres_bin()
    if pg is None:
        raise FileNotFoundError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    root = os.geteuid() == 0
    run_as = ["runuser", "-u", "postgres", "--"] if root else []
    data = Path(tempfile.mkdtemp(prefix="lgmcp-pg-"))
    if root:
        shutil.chown(data, "postgres", "postgres")
    port = free_port()

    def run(*cmd: str) -> None:
        done = subprocess.run([*run_as, *cmd], capture_output=True, text=True, timeout=120)
        if done.returncode:
            raise RuntimeError(f"{cmd[0]} failed ({done.returncode}): {done.stdout}{done.stderr}")

    try:
        run(str(pg / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        run(
            str(pg / "pg_ctl"), "-D", str(data), "-l", str(data / "server.log"), "-w", "-t", "60",
            "-o", f"-c listen_addresses=127.0.0.1 -p {port} -k {data} -c fsync=off",
            "start",
        )  # fmt: skip
        try:
            run(str(pg / "psql"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-c",
                "CREATE DATABASE langgraph")  # fmt: skip
            yield f"postgresql://postgres@127.0.0.1:{port}/langgraph?sslmode=disable"
        finally:
            run(str(pg / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(data, ignore_errors=True)
