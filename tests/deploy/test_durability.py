"""A graph process killed (SIGKILL) in the middle of a run, resumed by a new OS process from its
SQLite checkpoint: nothing is lost, and a call that was running is sent again (at-least-once)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import GRAPH_RUNNER, pid_alive, run_phase, spawned_pids

# Graphs killed and resumed in processes of their own.
pytestmark = pytest.mark.deploy


def _wait_for(path: Path, line: str, proc: subprocess.Popen[str], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not (path.exists() and line in path.read_text(encoding="utf-8").splitlines()):
        assert proc.poll() is None, f"the graph process ended early: {proc.communicate()[1][-2000:]}"
        assert time.monotonic() < deadline, f"{line!r} never appeared"
        time.sleep(0.02)


def _wait_until_saved(
    db: Path, needles: list[bytes], proc: subprocess.Popen[str], timeout: float = 60.0
) -> None:
    """Wait until one of the checkpoint's stored writes holds every one of ``needles``."""
    deadline = time.monotonic() + timeout
    while True:
        if db.exists():
            with sqlite3.connect(db) as conn:
                try:
                    blobs = [row[0] for row in conn.execute("SELECT value FROM writes")]
                except sqlite3.OperationalError:  # the table is not there yet
                    blobs = []
            if any(all(n in bytes(blob) for n in needles) for blob in blobs if blob is not None):
                return
        assert proc.poll() is None, f"the graph process ended early: {proc.communicate()[1][-2000:]}"
        assert time.monotonic() < deadline, "the result was never saved"
        time.sleep(0.02)


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
def test_a_graph_killed_mid_run_finishes_in_a_new_process(tmp_path: Path, protocol: str) -> None:
    db, events = tmp_path / "graph.db", tmp_path / "events.log"
    proc = subprocess.Popen(
        [sys.executable, str(GRAPH_RUNNER), "sigkill", "start", str(db), str(events), protocol],
        cwd=GRAPH_RUNNER.parents[1],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(events, "gauge slow start", proc)
        _wait_until_saved(db, [b"ToolMessage", b"quick"], proc)  # the quick call's result is saved
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    out = run_phase("sigkill", "resume", str(db), str(events), protocol)

    assert out["interrupts"] == []
    assert out["results"] == {"c1": "quick", "c2": "slow", "c3": "5"}
    seen = events.read_text(encoding="utf-8").splitlines()
    # At-least-once: the call that was running when the process died is sent again; the ones whose
    # results were saved are not.
    assert seen.count("gauge quick start") == 1
    assert seen.count("gauge slow start") == 2
    # The killed process's stdio server saw its stdin close and exited (it was mid-call).
    (orphan,) = spawned_pids(tmp_path / "pids-start")
    deadline = time.monotonic() + 30
    while pid_alive(orphan):
        assert time.monotonic() < deadline, "the killed graph's server process is still running"
        time.sleep(0.05)
