"""Install the MCP servers of other implementations that the interoperability tests run against.

Idempotent: each part is installed only when it is missing or its lock file changed since it was
installed (a stamp with the lock file's digest is kept next to the install).

- ``tests/interop/node_modules``: ``npm ci`` from ``tests/interop/package-lock.json`` (the
  reference servers ``@modelcontextprotocol/server-{everything,filesystem,memory}``).
- ``tests/interop/python/.venv``: ``uv sync --locked`` of the uv project in
  ``tests/interop/python`` (``mcp-server-time``, ``mcp-server-git``, ``fastmcp``), an environment
  of its own so their ``mcp`` SDK never meets the package's.
- ``tests/interop/mcp1_latest/.venv`` and ``tests/interop/mcp1_old/.venv``: the same for the
  ``mcp`` 1.x SDK that ``tests/interop/mcp1_server.py`` runs on (the newest 1.x, and 1.10.0, the
  oldest with elicitation).
- ``tests/interop/fastmcp_tasks/.venv``: the same for ``fastmcp-tasks`` (FastMCP's implementation
  of the 2026-07-28 tasks extension), which ``tests/interop/fastmcp_tasks/server.py`` runs on; it
  pins its own ``fastmcp`` and ``mcp``, so it shares an environment with nothing.

Run it directly (``python tests/interop/install.py``) or call :func:`ensure_installed`; the test
fixtures do. Only the standard library is used, so it runs before any environment exists.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PYTHON_PROJECT = HERE / "python"
NODE_MODULES = HERE / "node_modules"
PYTHON_VENV = PYTHON_PROJECT / ".venv"
MCP1_PROJECTS = {"latest": HERE / "mcp1_latest", "old": HERE / "mcp1_old"}
"""The uv projects pinning an ``mcp`` 1.x SDK for ``mcp1_server.py``, by name."""
FASTMCP_TASKS_PROJECT = HERE / "fastmcp_tasks"
UV_PROJECTS = (PYTHON_PROJECT, *MCP1_PROJECTS.values(), FASTMCP_TASKS_PROJECT)
_NPM_STAMP = NODE_MODULES / ".interop-installed"
_STAMP_NAME = ".interop-installed"
_LOCK = HERE / ".install.lock"
_INSTALL_TIMEOUT = 600


def node_bin(name: str) -> Path:
    """The path of an installed npm server's executable script (``node_modules/.bin/<name>``)."""
    return NODE_MODULES / ".bin" / name


def python_bin(name: str) -> Path:
    """The path of an executable in the Python servers' environment (``.venv/bin/<name>``)."""
    return PYTHON_VENV / "bin" / name


def mcp1_python(version: str) -> Path:
    """The Python of the ``mcp`` 1.x environment ``version`` (a key of :data:`MCP1_PROJECTS`)."""
    return MCP1_PROJECTS[version] / ".venv" / "bin" / "python"


def fastmcp_tasks_python() -> Path:
    """The Python of the ``fastmcp-tasks`` environment."""
    return FASTMCP_TASKS_PROJECT / ".venv" / "bin" / "python"


def _digest(*files: Path) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(f.read_bytes())
    return h.hexdigest()


def _uv() -> str:
    for candidate in (os.environ.get("UV"), shutil.which("uv"), str(Path.home() / ".local/bin/uv")):
        if candidate and Path(candidate).is_file():
            return candidate
    raise RuntimeError("uv not found (set UV or put uv on PATH) to install tests/interop/python")


def _run(args: list[str], cwd: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")}
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=_INSTALL_TIMEOUT, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(args)} failed in {cwd} (exit {done.returncode}):\n"
            f"{done.stdout[-2000:]}{done.stderr[-3000:]}"
        )


def _uv_stamp(project: Path) -> Path:
    return project / ".venv" / _STAMP_NAME


def _stale(stamp: Path, digest: str) -> bool:
    return not stamp.is_file() or stamp.read_text().strip() != digest


def ensure_installed() -> None:
    """Install whatever part is missing or stale; a no-op (a few file reads) otherwise.

    Raises ``RuntimeError`` with the installer's output when ``npm ci`` or ``uv sync`` fails.
    Safe to call from several processes at once (they take turns on a lock file).
    """
    npm_digest = _digest(HERE / "package.json", HERE / "package-lock.json")
    uv_digests = {p: _digest(p / "pyproject.toml", p / "uv.lock") for p in UV_PROJECTS}
    if not _stale(_NPM_STAMP, npm_digest) and not any(
        _stale(_uv_stamp(p), digest) for p, digest in uv_digests.items()
    ):
        return
    with open(_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _stale(_NPM_STAMP, npm_digest):
            npm = shutil.which("npm")
            if npm is None:
                raise RuntimeError("npm not found: Node.js 20+ with npm is needed for tests/interop")
            _run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], HERE)
            _NPM_STAMP.write_text(npm_digest + "\n")
        for project, digest in uv_digests.items():
            if _stale(_uv_stamp(project), digest):
                _run([_uv(), "sync", "--locked", "--quiet", "--project", str(project)], HERE)
                _uv_stamp(project).write_text(digest + "\n")


if __name__ == "__main__":
    ensure_installed()
    print("interop servers installed", file=sys.stderr)
