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
    assert re.search(r"^2026-07-28 requirement set: \d+ of 32$", done.stdout, re.M), report
    assert done.returncode == 0, report
