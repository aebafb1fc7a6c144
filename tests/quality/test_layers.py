"""The layering is enforced, not described: ``lint-imports`` checks the contracts in
``pyproject.toml`` (no upward import, the session layer free of LangGraph, no cycle), and no
module of the package grows past the size where one module starts doing several jobs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest_servers import REPO_ROOT

MAX_LINES = 500


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
    assert "4 kept, 0 broken" in done.stdout, done.stdout


def test_no_module_is_a_hub() -> None:
    sizes = {
        str(path.relative_to(REPO_ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for path in (REPO_ROOT / "langgraph_mcp").rglob("*.py")
    }
    assert {path: n for path, n in sizes.items() if n > MAX_LINES} == {}
