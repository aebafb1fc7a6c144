"""The official MCP conformance suite, server mode, against graphs served by
``python -m langgraph_mcp.serve`` (``tests/conformance/serve_run.py``): each version's outcome
matches its baseline (``expected-server-failures-0.1.yml``, ``-0.2.yml``), and
docs/compatibility.md states this run's numbers."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conformance.serve_run import read_baseline
from tests.conftest_servers import REPO_ROOT

# The official suite in Node.js against one served process, about 10 s.
pytestmark = pytest.mark.conformance

CONFORMANCE = REPO_ROOT / "tests" / "conformance"


@pytest.mark.timeout(600)  # a first run installs the suite (npm ci)
def test_served_graphs_server_conformance_matches_the_baseline() -> None:
    done = subprocess.run(
        [sys.executable, str(CONFORMANCE / "serve_run.py")],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=570,
    )
    report = done.stdout + done.stderr
    compatibility = " ".join((REPO_ROOT / "docs" / "compatibility.md").read_text(encoding="utf-8").split())
    for version, baseline_file in (
        ("0.1.16", "expected-server-failures-0.1.yml"),
        ("0.2.0-alpha.12", "expected-server-failures-0.2.yml"),
    ):
        summary = re.search(
            rf"^conformance server {re.escape(version)}: "
            r"(\d+) passed, (\d+) expected failures, (\d+) unexpected$",
            done.stdout,
            re.M,
        )
        checks = re.search(
            rf"^checks server {re.escape(version)}: (\d+) of (\d+) passed; (\d+) scenarios$",
            done.stdout,
            re.M,
        )
        assert summary is not None and checks is not None, report
        passed, expected, unexpected = map(int, summary.groups())
        good, total, scenarios = map(int, checks.groups())
        assert unexpected == 0 and expected == len(read_baseline(CONFORMANCE / baseline_file)), report
        assert passed + expected == scenarios > 0 and 0 < good <= total, report
        stated = f"{version}: {passed} of {scenarios} server scenarios pass ({good} of {total} checks)"
        assert stated in compatibility, (stated, report)
    assert done.returncode == 0, report
