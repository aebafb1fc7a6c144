"""Install and build the chat page the browser tests load (``tests/browser``), and install the
packages of the repository's ``ui/`` components.

Idempotent: ``npm ci`` runs only when ``package-lock.json`` changed since the last install, and
the page is bundled again (``node build.mjs``: esbuild, ``src/`` -> ``dist/``) only when a source
file or the install changed (stamps with their digests are kept next to each result).

Run it directly (``python tests/browser/install.py``) or call :func:`ensure_built`; the test
fixture does. Only the standard library is used, so it runs before any environment exists.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
UI = HERE.parents[1] / "ui"
"""The repository's generative-UI components (``langgraph.json``'s ``ui``): their packages are
installed too (``npm ci`` there), since ``langgraph dev`` bundles them from that folder."""
NODE_MODULES = HERE / "node_modules"
DIST = HERE / "dist"
PAGE = DIST / "index.html"
"""The built page (with ``app.js`` next to it)."""
_NPM_STAMP = NODE_MODULES / ".browser-installed"
_UI_STAMP = UI / "node_modules" / ".ui-installed"
_BUILD_STAMP = DIST / ".browser-built"
_LOCK = HERE / ".install.lock"
_TIMEOUT = 600


def _digest(*files: Path) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def _stale(stamp: Path, digest: str) -> bool:
    return not stamp.is_file() or stamp.read_text().strip() != digest


def _run(args: list[str], cwd: Path = HERE) -> None:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=_TIMEOUT, check=False)
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(args)} failed in {cwd} (exit {done.returncode}):\n"
            f"{done.stdout[-2000:]}{done.stderr[-3000:]}"
        )


def _npm_ci(stamp: Path, digest: str, folder: Path) -> None:
    if _stale(stamp, digest):
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError(f"npm not found: Node.js 20+ with npm is needed in {folder}")
        _run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=folder)
        stamp.write_text(digest + "\n")


def ensure_ui_packages() -> None:
    """Install the packages ``ui/`` imports (``npm ci`` there) when missing or stale: the UI
    bundler of ``langgraph dev`` resolves them from ``ui/node_modules``."""
    digest = _digest(UI / "package.json", UI / "package-lock.json")
    if not _stale(_UI_STAMP, digest):
        return
    with open(_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _npm_ci(_UI_STAMP, digest, UI)


def ensure_built() -> Path:
    """Install and build whatever is missing or stale; the built page's path.

    Raises ``RuntimeError`` with the tool's output when ``npm ci`` or the build fails. Safe to
    call from several processes at once (they take turns on a lock file).
    """
    ensure_ui_packages()
    npm_digest = _digest(HERE / "package.json", HERE / "package-lock.json")
    sources = sorted((HERE / "src").rglob("*"))
    build_digest = _digest(HERE / "build.mjs", *(f for f in sources if f.is_file())) + npm_digest
    if not _stale(_NPM_STAMP, npm_digest) and not _stale(_BUILD_STAMP, build_digest):
        return PAGE
    with open(_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _npm_ci(_NPM_STAMP, npm_digest, HERE)
        if _stale(_BUILD_STAMP, build_digest):
            node = shutil.which("node")
            if node is None:
                raise RuntimeError("node not found: Node.js 20+ is needed for tests/browser")
            _run([node, "build.mjs"])
            _BUILD_STAMP.write_text(build_digest + "\n")
    return PAGE


if __name__ == "__main__":
    print(f"chat page built: {ensure_built()}", file=sys.stderr)
