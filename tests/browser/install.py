"""Install and build the chat page the browser tests load (``tests/browser``).

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
NODE_MODULES = HERE / "node_modules"
DIST = HERE / "dist"
PAGE = DIST / "index.html"
"""The built page (with ``app.js`` next to it)."""
_NPM_STAMP = NODE_MODULES / ".browser-installed"
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


def _run(args: list[str]) -> None:
    done = subprocess.run(args, cwd=HERE, capture_output=True, text=True, timeout=_TIMEOUT, check=False)
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(args)} failed in {HERE} (exit {done.returncode}):\n"
            f"{done.stdout[-2000:]}{done.stderr[-3000:]}"
        )


def ensure_built() -> Path:
    """Install and build whatever is missing or stale; the built page's path.

    Raises ``RuntimeError`` with the tool's output when ``npm ci`` or the build fails. Safe to
    call from several processes at once (they take turns on a lock file).
    """
    npm_digest = _digest(HERE / "package.json", HERE / "package-lock.json")
    sources = sorted((HERE / "src").rglob("*"))
    build_digest = _digest(HERE / "build.mjs", *(f for f in sources if f.is_file())) + npm_digest
    if not _stale(_NPM_STAMP, npm_digest) and not _stale(_BUILD_STAMP, build_digest):
        return PAGE
    with open(_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _stale(_NPM_STAMP, npm_digest):
            npm = shutil.which("npm")
            if npm is None:
                raise RuntimeError("npm not found: Node.js 20+ with npm is needed for tests/browser")
            _run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"])
            _NPM_STAMP.write_text(npm_digest + "\n")
        if _stale(_BUILD_STAMP, build_digest):
            node = shutil.which("node")
            if node is None:
                raise RuntimeError("node not found: Node.js 20+ is needed for tests/browser")
            _run([node, "build.mjs"])
            _BUILD_STAMP.write_text(build_digest + "\n")
    return PAGE


if __name__ == "__main__":
    print(f"chat page built: {ensure_built()}", file=sys.stderr)
