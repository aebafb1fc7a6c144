"""The official MCP conformance suite, client mode, against tests/conformance/client.py.

``tests/conformance/run.py`` installs the pinned suite and Node 22 itself (``npm ci``) when
needed, runs every client scenario and compares the outcome with
the version's baseline (``tests/conformance/expected-failures-0.1.yml``, ``-0.2.yml``): it
fails on a scenario that newly fails and on a listed one that now passes.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest_servers import REPO_ROOT

# The official suite in Node.js, about 15 s.
pytestmark = pytest.mark.conformance

CONFORMANCE = REPO_ROOT / "tests" / "conformance"


@pytest.mark.timeout(600)  # a first run installs the suite (npm ci)
def test_client_conformance_matches_the_baseline() -> None:
    done = subprocess.run(
        [sys.executable, str(CONFORMANCE / "run.py")],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=570,
    )
    report = done.stdout + done.stderr
    counts: dict[str, tuple[int, int, int, int, int]] = {}  # passed, expected, scenarios, checks
    for version, baseline_file in (
        ("0.1.16", "expected-failures-0.1.yml"),
        ("0.2.0-alpha.12", "expected-failures-0.2.yml"),
    ):
        summary = re.search(
            rf"^conformance {re.escape(version)}: (\d+) passed, (\d+) expected failures, (\d+) unexpected$",
            done.stdout,
            re.M,
        )
        assert summary is not None, report
        passed, expected, unexpected = map(int, summary.groups())
        baseline = [
            line for line in (CONFORMANCE / baseline_file).read_text().splitlines() if line.startswith("  - ")
        ]
        assert (unexpected, expected) == (0, len(baseline)), report
        scenarios = re.search(rf"^checks {re.escape(version)}: .*; (\d+) scenarios$", done.stdout, re.M)
        assert scenarios is not None, report
        assert passed + expected == int(scenarios[1]) > 0, report
        checks = re.search(rf"^checks {re.escape(version)}: (\d+) of (\d+) passed;", done.stdout, re.M)
        assert checks is not None, report
        counts[version] = (passed, expected, int(scenarios[1]), int(checks[1]), int(checks[2]))
    required = re.search(r"^2026-07-28 requirement set: (\d+) of (32)$", done.stdout, re.M)
    extension = re.search(r"^extension: (\d+) of (\d+)$", done.stdout, re.M)
    assert required is not None and extension is not None, report
    assert done.returncode == 0, report

    # The numbers README.md and docs/compatibility.md state are this run's.
    readme = " ".join((REPO_ROOT / "README.md").read_text(encoding="utf-8").split())
    compatibility = " ".join((REPO_ROOT / "docs" / "compatibility.md").read_text(encoding="utf-8").split())
    p1, _, s1, c1, t1 = counts["0.1.16"]
    p2, e2, s2, c2, t2 = counts["0.2.0-alpha.12"]
    assert c2 == t2, report  # "all ... of their checks"
    assert required[1] == required[2] and extension[1] == extension[2], report  # "in full", "all 6"
    assert f"Result: {p1} of {s1} client scenarios pass ({c1} of {t1} checks)" in compatibility
    assert e2 == 0 and p2 == s2, report  # the pages say every scenario passes
    assert f"all {p2} of its client scenarios pass (all {c2} of their checks)" in compatibility
    assert f"passes in full, {required[1]} of {required[2]} client scenarios" in compatibility
    assert f"Of its extension scenarios, all {extension[2]} pass" in compatibility
    assert (
        f"its 2026-07-28 requirement set {required[1]} of {required[2]}, its extension scenarios "
        f"{extension[1]} of {extension[2]}, all {p2} of its client scenarios (the 4 skills scenarios "
        "with their checks run)"
    ) in readme
