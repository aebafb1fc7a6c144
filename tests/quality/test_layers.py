"""The layering is enforced, not described: ``lint-imports`` checks the contracts in
``pyproject.toml`` (no upward import, the session layer free of LangGraph, no cycle). Modules are
split by job, not by size: there is no line limit."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from collections.abc import Iterator
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
    assert "10 kept, 0 broken" in done.stdout, done.stdout


_FILE_NAME = re.compile(r"\b\w+\.py\b")
_PYTHON_CONVENTIONS = {"__init__.py", "__main__.py"}


def _prose(source: str) -> Iterator[tuple[int, str]]:
    """Every docstring (a module's, a class's, a function's, an attribute's: any bare string
    statement) and every comment of ``source``, with the line it starts on."""
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for statement in body:
            if (
                isinstance(statement, ast.Expr)
                and isinstance(statement.value, ast.Constant)
                and isinstance(statement.value.value, str)
            ):
                yield statement.lineno, statement.value.value
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def test_docstrings_name_symbols_not_files() -> None:
    """Docstrings and comments name a symbol (``_support.pace.SLICE``), never a file: a file
    path goes stale when a module moves, and nothing checks it."""
    package = REPO_ROOT / "langgraph_mcp"
    found = [
        f"{path.relative_to(REPO_ROOT)}:{line + text[: match.start()].count(chr(10))}: {match.group()}"
        for path in sorted(package.rglob("*.py"))
        for line, text in _prose(path.read_text(encoding="utf-8"))
        for match in _FILE_NAME.finditer(text)
        if match.group() not in _PYTHON_CONVENTIONS
    ]
    assert not found, "name the symbol, not the file:\n" + "\n".join(found)
