"""The official MCP conformance suite, client mode, against tests/conformance/client.py.

``tests/conformance/run.py`` installs the pinned suite and Node 22 itself (``npm ci``) when
needed, runs every client scenario and compares the outcome with
``tests/conformance/expected-failures.yml``: it fails on a scenario that newly fails and on a
listed one that now passes.
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
    summary = re.search(
        r"^conformance: (\d+) passed, (\d+) expected failures, (\d+) unexpected$", done.stdout, re.M
    )
    assert summary is not None, report
    passed, expected, unexpected = map(int, summary.groups())
    baseline = [
        line
        for line in (CONFORMANCE / "expected-failures.yml").read_text().splitlines()
        if line.startswith("  - ")
    ]
    assert (unexpected, expected) == (0, len(baseline)), report
    scenarios = re.search(r"; (\d+) scenarios in ", done.stdout)
    assert scenarios is not None, report
    assert passed + expected == int(scenarios[1]) > 0, report
    assert done.returncode == 0, report
