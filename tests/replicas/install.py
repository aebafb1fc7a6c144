"""Install the environment the multi-replica tests run LangGraph server in.

A virtual environment of its own, ``tests/replicas/.venv``, holding ``requirements.txt`` (the
``langgraph-runtime-pg`` runtime and the ``langgraph-api`` it pins) and the package itself
(``-e .``). The libraries it shares with the project's environment (langgraph, langchain,
``mcp``, ...) are held to the versions in the project's ``uv.lock``, so the replicas run the
graphs on the same versions as the rest of the suite.

Idempotent: the environment is rebuilt only when ``requirements.txt``, those versions or the
Python version changed since it was built (a stamp with their digest is kept in it). Safe to call
from several processes at once (they take turns on a lock file).

Run it directly (``uv run python tests/replicas/install.py``) or call :func:`ensure_installed`;
the test fixture does. Only the standard library is used.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
REQUIREMENTS = HERE / "requirements.txt"
VENV = HERE / ".venv"
_STAMP = VENV / ".replicas-installed"
_LOCK = HERE / ".install.lock"
_INSTALL_TIMEOUT = 900
_INSTALL_OPTIONS = ("--quiet", "--compile-bytecode")
"""Byte-compiled at install: each replica imports a few thousand modules at startup, and with
``PYTHONDONTWRITEBYTECODE`` set (as CI images often have it) nothing would be cached."""

SHARED = (
    "langgraph", "langgraph-checkpoint", "langgraph-prebuilt", "langgraph-sdk", "langchain",
    "langchain-core", "mcp", "mcp-types", "pydantic", "pydantic-core",
)  # fmt: skip
"""Distributions whose version must be the one the project's lock holds."""


def python_bin(name: str = "python") -> Path:
    """An executable of the environment (``.venv/bin/<name>``)."""
    return VENV / "bin" / name


def constraints() -> list[str]:
    """``name==version`` of each :data:`SHARED` distribution, as the project's ``uv.lock`` has it."""
    lock = tomllib.loads((REPO_ROOT / "uv.lock").read_text())
    versions = {p["name"]: p.get("version") for p in lock["package"]}
    missing = [name for name in SHARED if not versions.get(name)]
    if missing:
        raise RuntimeError(f"uv.lock holds no version of {', '.join(missing)}")
    return [f"{name}=={versions[name]}" for name in SHARED]


def digest() -> str:
    h = hashlib.sha256(REQUIREMENTS.read_bytes())
    h.update("\n".join([*constraints(), *_INSTALL_OPTIONS, sys.version.split()[0], str(REPO_ROOT)]).encode())
    return h.hexdigest()


def _uv() -> str:
    for candidate in (os.environ.get("UV"), shutil.which("uv"), str(Path.home() / ".local/bin/uv")):
        if candidate and Path(candidate).is_file():
            return candidate
    raise RuntimeError("uv not found (set UV or put uv on PATH) to install tests/replicas/.venv")


def _run(*args: str, env: dict[str, str]) -> None:
    done = subprocess.run(
        args, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=_INSTALL_TIMEOUT, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(args)} failed (exit {done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
        )


def _stale(wanted: str) -> bool:
    return not _STAMP.is_file() or _STAMP.read_text().strip() != wanted


def ensure_installed() -> Path:
    """Build the environment if it is missing or stale; its Python. A few file reads otherwise.

    Raises ``RuntimeError`` with uv's output when an install step fails."""
    wanted = digest()
    if not _stale(wanted):
        return python_bin()
    with open(_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _stale(wanted):
            env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")}
            shutil.rmtree(VENV, ignore_errors=True)
            _run(_uv(), "venv", "--quiet", "--python", sys.executable, str(VENV), env=env)
            pinned = HERE / ".constraints.txt"
            pinned.write_text("\n".join(constraints()) + "\n")
            env["VIRTUAL_ENV"] = str(VENV)
            _run(_uv(), "pip", "install", *_INSTALL_OPTIONS, "-r", str(REQUIREMENTS), "-c", str(pinned),
                 "-e", str(REPO_ROOT), env=env)  # fmt: skip
            _STAMP.write_text(wanted + "\n")
    return python_bin()


if __name__ == "__main__":
    import time

    started = time.monotonic()
    ensure_installed()
    print(f"tests/replicas/.venv ready in {time.monotonic() - started:.1f} s", file=sys.stderr)
