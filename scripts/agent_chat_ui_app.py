"""Agent Chat UI, built from a checkout of its repository or from the npm package's template.

**From a checkout** (``ensure_built_source``; ``git clone https://github.com/langchain-ai/agent-
chat-ui``): the checkout is copied into a cache folder outside the repository
(``~/.cache/langgraph-mcp/agent-chat-ui/source-<hash of its files>``, without ``.git``,
``node_modules`` and ``.next``), its packages installed with the pnpm its ``packageManager``
names, from its lockfile (``npx pnpm@<version> install --frozen-lockfile``; ``npm install`` when
it has no ``pnpm-lock.yaml``), and built with ``next build``. Its own ``/api`` passthrough route
(``src/app/api/[..._path]/route.ts``) is kept as it is, configured as its README's "Going to
Production" says: ``LANGGRAPH_API_URL``, ``NEXT_PUBLIC_API_URL`` (the UI's own ``/api``),
``NEXT_PUBLIC_ASSISTANT_ID`` and ``LANGSMITH_API_KEY`` (a dummy: the local server checks none).
Two changes, as for the template: the offline font in ``src/app/layout.tsx``, and the ``/ui/``
rewrite added to its ``next.config.mjs`` (below).

**From the template** (``ensure_built``): unpacks ``package/templates/nextjs/`` of
``npm pack create-agent-chat-app@<version>`` into a cache folder outside the repository
(``~/.cache/langgraph-mcp/agent-chat-ui/<version>``), installs its packages and builds it with
``next build``.

Either build is kept: it is redone only when the checkout's files (or the version), the ports or
the changes made here change.

What is added to the template, as a deployment of Agent Chat UI has it (the template of 0.1.6
predates both):

* ``src/app/api/[..._path]/route.ts``: the ``/api`` passthrough (``langgraph-nextjs-api-
  passthrough``), the route Agent Chat UI's own source ships for production: the browser talks
  to ``/api``, the route forwards to ``LANGGRAPH_API_URL`` with ``LANGSMITH_API_KEY``;
* ``src/app/layout.tsx``: the Inter font of ``next/font/google`` (fetched from Google at build
  time, offline here) replaced by the browser's sans-serif font;
* ``next.config.mjs``: ``/ui/`` passed on to the LangGraph server (docs/how-to/agent-chat-ui.md,
  "Progress bars need /ui/ passed on to the server"), where generative-UI components load from.

``NEXT_PUBLIC_*`` values and rewrites are fixed at build time, so both ports are part of the
build: the UI on ``UI_PORT``, the LangGraph server on ``API_PORT`` (127.0.0.1 only).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import time
from pathlib import Path

VERSION = "0.1.6"
PASSTHROUGH = "langgraph-nextjs-api-passthrough@0.1.4"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "langgraph-mcp" / "agent-chat-ui"

ROUTE = """import { initApiPassthrough } from "langgraph-nextjs-api-passthrough";

// Agent Chat UI's /api passthrough: requests go to LANGGRAPH_API_URL with LANGSMITH_API_KEY.
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS, runtime } = initApiPassthrough({
  apiUrl: process.env.LANGGRAPH_API_URL,
  apiKey: process.env.LANGSMITH_API_KEY,
  runtime: "edge",
});
"""

NEXT_CONFIG = """/** @type {import('next').NextConfig} */
const nextConfig = {
  // Generative-UI components load from the LangGraph server's /ui/ (docs/how-to/agent-chat-ui.md).
  async rewrites() {
    const api = process.env.LANGGRAPH_API_URL;
    return api ? [{ source: "/ui/:path*", destination: `${api}/ui/:path*` }] : [];
  },
};

export default nextConfig;
"""


FONT = (
    'import { Inter } from "next/font/google";',
    'const inter = Inter({\n  subsets: ["latin"],\n  preload: true,\n  display: "swap",\n});',
)
"""What ``layout.tsx`` fetches from Google Fonts at build time (no network here): removed."""
NO_FONT = 'const inter = { className: "font-sans" }; // offline build: no Google Fonts'


def _offline_font(app: Path) -> None:
    layout = app / "src" / "app" / "layout.tsx"
    text = layout.read_text()
    if FONT[0] in text:
        layout.write_text(text.replace(FONT[0] + "\n", "").replace(FONT[1], NO_FONT))
    if "next/font/google" in layout.read_text():
        raise RuntimeError(f"{layout} still loads a Google font: the UI changed, update FONT")


def folder(version: str = VERSION) -> Path:
    return CACHE / version


def build_env(ui_port: int, api_port: int) -> dict[str, str]:
    """The environment the UI is built and served with (as deployed, with the ``/api`` route)."""
    return {
        "NEXT_PUBLIC_API_URL": f"http://127.0.0.1:{ui_port}/api",
        "NEXT_PUBLIC_ASSISTANT_ID": "agent",
        "LANGGRAPH_API_URL": f"http://127.0.0.1:{api_port}",
        "LANGSMITH_API_KEY": "lsv2-dummy-key-for-a-local-server",
        "NEXT_TELEMETRY_DISABLED": "1",
    }


def _next_build(
    app: Path, env: dict[str, str], stamp: Path, digest: str, started: float, log: bool
) -> tuple[Path, float]:
    """``next build`` in ``app``, then the stamp that says what it was built from; the app and
    the seconds since ``started``."""
    if log:
        print(f"next build in {app} ...", flush=True)
    _run([str(app / "node_modules" / ".bin" / "next"), "build"], cwd=app, env=env)
    stamp.write_text(digest)
    return app, time.monotonic() - started


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 1200) -> str:
    done = subprocess.run(
        args,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(args)} failed in {cwd} (exit {done.returncode}):\n"
            f"{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    return done.stdout


def _unpack(base: Path, version: str) -> Path:
    """The template, unpacked from the npm package into ``base/app`` (once)."""
    app = base / "app"
    if (app / "package.json").is_file():
        return app
    pack = base / "pack"
    pack.mkdir(parents=True, exist_ok=True)
    tarballs = list(pack.glob("create-agent-chat-app-*.tgz"))
    if not tarballs:
        _run(["npm", "pack", f"create-agent-chat-app@{version}", "--pack-destination", str(pack)], cwd=pack)
        tarballs = list(pack.glob("create-agent-chat-app-*.tgz"))
    staging = base / "unpacked"
    shutil.rmtree(staging, ignore_errors=True)
    with tarfile.open(tarballs[0]) as tar:
        tar.extractall(staging, filter="data")
    shutil.rmtree(app, ignore_errors=True)
    shutil.copytree(staging / "package" / "templates" / "nextjs", app)
    shutil.rmtree(staging)
    return app


def ensure_built(ui_port: int, api_port: int, version: str = VERSION, log: bool = True) -> tuple[Path, float]:
    """The built app's folder, and the seconds this call spent building (0 when cached)."""
    base = folder(version)
    base.mkdir(parents=True, exist_ok=True)
    env = build_env(ui_port, api_port)
    with (base / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        app = _unpack(base, version)
        digest = hashlib.sha256(
            json.dumps([version, PASSTHROUGH, ROUTE, NEXT_CONFIG, NO_FONT, env]).encode()
        ).hexdigest()
        stamp = app / ".next" / ".built-for"
        if stamp.is_file() and stamp.read_text() == digest:
            return app, 0.0
        started = time.monotonic()
        if not (app / "node_modules" / ".bin" / "next").exists():
            if log:
                print(f"npm install in {app} ...", flush=True)
            _run(["npm", "install", "--no-audit", "--no-fund"], cwd=app)
        if not (app / "node_modules" / "langgraph-nextjs-api-passthrough").is_dir():
            _run(["npm", "install", "--no-audit", "--no-fund", PASSTHROUGH], cwd=app)
        route = app / "src" / "app" / "api" / "[..._path]" / "route.ts"
        route.parent.mkdir(parents=True, exist_ok=True)
        route.write_text(ROUTE)
        (app / "next.config.mjs").write_text(NEXT_CONFIG)
        _offline_font(app)
        return _next_build(app, env, stamp, digest, started, log)


REWRITES = """  // Generative-UI components load from the LangGraph server's /ui/ (see langgraph-mcp's docs)
  async rewrites() {
    const api = process.env.LANGGRAPH_API_URL;
    return api ? [{ source: "/ui/:path*", destination: `${api}/ui/:path*` }] : [];
  },
"""
SKIPPED = (".git", "node_modules", ".next")


def _skipped(name: str) -> bool:
    return name in SKIPPED or (name.startswith(".env") and name != ".env.example")


def source_commit(source: Path) -> str | None:
    """The checkout's commit (``git rev-parse --short HEAD``), with ``+changes`` when it has
    uncommitted changes; None when it is no git checkout (an exported tree)."""
    git = ["git", "-C", str(source)]
    done = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    if done.returncode != 0 or not (source / ".git").exists():
        return None
    dirty = subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True, check=False)
    dirty = dirty.stdout.strip()
    return done.stdout.strip() + ("+changes" if dirty else "")


def source_digest(source: Path) -> str:
    """A hash of the checkout's files (what is copied: no ``.git``, ``node_modules``, ``.next``)."""
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(source):
        dirs[:] = sorted(d for d in dirs if not _skipped(d))
        for name in sorted(f for f in files if not _skipped(f)):
            path = Path(root) / name
            digest.update(str(path.relative_to(source)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _add_rewrites(app: Path) -> None:
    config = app / "next.config.mjs"
    text = config.read_text()
    if "/ui/:path*" in text:
        return
    anchor = "const nextConfig = {\n"
    if anchor not in text:
        raise RuntimeError(f"{config} has no {anchor.strip()!r}: the source changed, update _add_rewrites")
    config.write_text(text.replace(anchor, anchor + REWRITES, 1))


def _install(app: Path, log: bool) -> None:
    if (app / "pnpm-lock.yaml").is_file():
        manager = json.loads((app / "package.json").read_text()).get("packageManager", "pnpm")
        pnpm = manager.split("+")[0] if manager.startswith("pnpm@") else "pnpm"
        if log:
            print(f"{pnpm} install --frozen-lockfile in {app} ...", flush=True)
        _run(["npx", "--yes", pnpm, "install", "--frozen-lockfile"], cwd=app, env={"CI": "1"})
    else:
        if log:
            print(f"npm install in {app} ...", flush=True)
        _run(["npm", "install", "--no-audit", "--no-fund"], cwd=app)


def ensure_built_source(source: Path, ui_port: int, api_port: int, log: bool = True) -> tuple[Path, float]:
    """Agent Chat UI built from the checkout ``source``: the built app's folder, and the seconds
    this call spent building (0 when cached). Keyed by the checkout's content; rebuilt when the
    ports (part of the build) or the changes made here change."""
    source = source.resolve()
    if not (source / "package.json").is_file() or not (source / "src" / "app").is_dir():
        raise RuntimeError(f"{source} is no checkout of Agent Chat UI (no package.json and src/app/)")
    base = CACHE / f"source-{source_digest(source)[:16]}"
    base.mkdir(parents=True, exist_ok=True)
    env = build_env(ui_port, api_port)
    with (base / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        app = base / "app"
        if not (app / "package.json").is_file():
            shutil.rmtree(app, ignore_errors=True)
            shutil.copytree(source, app, ignore=lambda _, names: [n for n in names if _skipped(n)])
        digest = hashlib.sha256(json.dumps([REWRITES, NO_FONT, env]).encode()).hexdigest()
        stamp = app / ".next" / ".built-for"
        if stamp.is_file() and stamp.read_text() == digest:
            return app, 0.0
        started = time.monotonic()
        if not (app / "node_modules" / ".bin" / "next").exists():
            _install(app, log)
        if not (app / "src" / "app" / "api" / "[..._path]" / "route.ts").is_file():
            raise RuntimeError(f"{app} has no /api passthrough route (src/app/api/[..._path]/route.ts)")
        _add_rewrites(app)
        _offline_font(app)
        return _next_build(app, env, stamp, digest, started, log)


def start(app: Path, ui_port: int, api_port: int, log: Path) -> subprocess.Popen[bytes]:
    """``next start`` on 127.0.0.1:``ui_port`` (its own process group)."""
    with log.open("wb") as out:
        return subprocess.Popen(
            [str(app / "node_modules" / ".bin" / "next"), "start", "-H", "127.0.0.1", "-p", str(ui_port)],
            cwd=app,
            env={**os.environ, **build_env(ui_port, api_port)},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
