"""The layering is enforced, not described: ``lint-imports`` checks the contracts in
``pyproject.toml`` (no upward import, the session layer free of LangGraph, no cycle). Modules are
split by job, not by size: there is no line limit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest_servers import REPO_ROOT


def test_the_import_contracts_hold() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(
        [str(lint_imports), "--no-cache", "pyproject.toml"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "8 kept, 0 broken" in done.stdout, done.stdout
