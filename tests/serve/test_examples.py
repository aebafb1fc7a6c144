"""The serving examples run as a reader runs them: ``examples/served_roundtrip.py`` starts
``examples/served_graph.py`` with ``python -m langgraph_mcp.serve`` and answers its question."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest_servers import REPO_ROOT

pytestmark = [pytest.mark.deploy, pytest.mark.slow]


def test_the_round_trip_example_runs_offline() -> None:
    done = subprocess.run(
        [sys.executable, "examples/served_roundtrip.py", "--auto"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "releases asks: Publish this note?" in done.stdout
    note = "Version 1.2.0 is out: faster, smaller, kinder."
    assert f'result: {{"version": "1.2.0", "note": "{note}", "published": true}}' in done.stdout
