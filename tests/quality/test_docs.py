"""The documentation site builds without a warning, and its Python examples run.

Every ```python block of a page under ``docs/``, and of README.md, runs unless the line before
it is an HTML comment ``<!-- not run: why -->``. A page's runnable blocks are joined in order
into one script, run as ``__main__`` from the repository's root (where the examples' servers
are), the way a reader pastes them. All pages' scripts run in one process, one after the other.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.quality.test_public_api import PUBLIC

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

BLOCK = re.compile(r"(?P<before>[^\n]*)\n```python\n(?P<code>.*?)\n```", re.DOTALL)
NOT_RUN = re.compile(r"^<!-- not run: .+ -->$")


def blocks(page: Path) -> list[tuple[bool, str]]:
    """Each Python block of ``page``: whether it runs, and its code."""
    found = []
    for match in BLOCK.finditer("\n" + page.read_text(encoding="utf-8")):
        found.append((not NOT_RUN.match(match["before"].strip()), match["code"]))
    return found


def pages() -> list[Path]:
    """The pages of the site, and the README (the front page on the repository)."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def pages_with_code() -> list[Path]:
    return [p for p in pages() if any(run for run, _ in blocks(p))]


def test_every_skipped_block_says_why() -> None:
    for page in pages():
        for line in page.read_text(encoding="utf-8").splitlines():
            if line.startswith("<!-- not run"):
                assert NOT_RUN.match(line), f"{page}: {line!r} must read '<!-- not run: reason -->'"


def test_readme_links_reach_files() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if not target.startswith(("http://", "https://")):
            assert (ROOT / target).exists(), f"README.md links to {target}, which does not exist"


def test_tutorials_and_migration_guides_have_runnable_examples() -> None:
    runnable = {p.relative_to(ROOT).as_posix() for p in pages_with_code()}
    for page in [
        "README.md",
        "docs/tutorial/first-graph.md",
        "docs/tutorial/first-agent.md",
        "docs/tutorial/first-deployment.md",
        "docs/migration/langchain-mcp-adapters.md",
        "docs/migration/langchain-mcp.md",
    ]:
        assert page in runnable


DRIVER = """
import runpy, sys, traceback
failed = []
for script in sys.argv[1:]:
    print(f"=== {script}", flush=True)
    try:
        runpy.run_path(script, run_name="__main__")
    except BaseException:
        traceback.print_exc()
        failed.append(script)
sys.exit(f"failed: {failed}" if failed else 0)
"""


@pytest.mark.slow  # starts an MCP server or two per page
@pytest.mark.timeout(300)  # minutes, not seconds, on a loaded machine
def test_examples_run(tmp_path: Path) -> None:
    """One process runs every page's script in turn (importing the package once, not per page)."""
    scripts = []
    for page in pages_with_code():
        script = tmp_path / (page.relative_to(ROOT).as_posix().replace("/", "__") + ".py")
        script.write_text("\n\n".join(code for run, code in blocks(page) if run) + "\n", encoding="utf-8")
        scripts.append(str(script))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, *scripts],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"


def test_server_config_tables_list_every_field() -> None:
    sys.path.insert(0, str(DOCS))
    try:
        from hooks import server_config_markdown  # docs/hooks.py, the MkDocs hook
    finally:
        sys.path.remove(str(DOCS))
    from langgraph_mcp.config import (
        HTTPServerConfig,
        InProcessServerConfig,
        OutputHandling,
        RestartPolicy,
        SSEServerConfig,
        StdioServerConfig,
    )

    tables = server_config_markdown()
    for model in [
        StdioServerConfig,
        HTTPServerConfig,
        SSEServerConfig,
        InProcessServerConfig,
        OutputHandling,
        RestartPolicy,
    ]:
        for name in model.model_fields:
            assert f"| `{name}` |" in tables, f"{model.__name__}.{name} is missing"
    rows = [line for line in tables.splitlines() if line.startswith("| `")]
    assert all(not line.endswith("|  |") for line in rows), "a field has no meaning: give it a docstring"


@pytest.mark.timeout(300)  # about 15 s; minutes on a loaded machine
def test_site_builds_strict(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    assert (tmp_path / "site" / "reference" / "server-config.html").is_file()

    # Every public name has its entry in the reference: the root's on the root page (or on
    # the page of the module it comes from), each public module's on the module's page.
    anchors = set()
    for page in (tmp_path / "site" / "reference").glob("*.html"):
        anchors |= set(re.findall(r'id="(langgraph_mcp[\w.]*)"', page.read_text(encoding="utf-8")))
    for module, names in PUBLIC.items():
        for name in names:
            homes = {f"{module}.{name}"}
            if module == "langgraph_mcp":
                homes |= {f"{other}.{name}" for other, theirs in PUBLIC.items() if name in theirs}
            assert homes & anchors, f"{module}.{name} is not in the reference"
