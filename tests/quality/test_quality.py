"""The package stays ruff-clean and type-checks under mypy --strict."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest_servers import REPO_ROOT


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300
    )


def test_ruff_check() -> None:
    done = _run("ruff", "check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format() -> None:
    done = _run("ruff", "format", "--check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow  # about 20 s of CPU
@pytest.mark.timeout(300)  # minutes, not seconds, on a loaded machine: as long as _run allows
def test_mypy_strict() -> None:
    done = _run("mypy")
    assert done.returncode == 0, done.stdout + done.stderr
