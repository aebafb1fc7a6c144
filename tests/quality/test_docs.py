"""The documentation site builds without a warning, and its Python examples run as a reader runs them.

Every ```python block of a page under ``docs/``, and of README.md, runs unless the line before it is
an HTML comment ``<!-- not run: why -->``. A page's runnable blocks are joined in order into one
script, the way a reader pastes them into a file, and run as ``__main__`` in a project of their own
outside the repository: a virtual environment with the package installed from a wheel built from
the repository, as ``uv add /path/to/langgraph-mcp`` installs it. Nothing of the clone but the
package is importable there (no ``examples``, no ``graphs``): the servers the examples use are the
package's demo servers. The other dependencies are the test run's own, seen through a path entry.

A block whose line before is ``<!-- run in the clone: why -->`` is about the repository's own
files (the deployment's ``graphs/``) and runs from the repository's root folder instead.

Every block, run or not, compiles as a script, or is async code that says so on its first line
(``ASYNC_NOTE``): top-level ``await`` fails in a file with ``SyntaxError``.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.quality.test_public_api import PUBLIC

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

BLOCK = re.compile(r"(?P<before>[^\n]*)\n```python\n(?P<code>.*?)\n```", re.DOTALL)
NOT_RUN = re.compile(r"^<!-- not run: .+ -->$")
IN_CLONE = re.compile(r"^<!-- run in the clone: .+ -->$")
ASYNC_NOTE = "# Async code: inside an async function, a notebook, or `python -m asyncio`."


def blocks(page: Path) -> list[tuple[bool, str]]:
    """Each Python block of ``page``: whether it runs, and its code."""
    return [(where != "no", code) for where, code in placed_blocks(page)]


def placed_blocks(page: Path) -> list[tuple[str, str]]:
    """Each Python block of ``page``: where it runs (``outside``, ``clone`` or ``no``), and its code."""
    found = []
    for match in BLOCK.finditer("\n" + page.read_text(encoding="utf-8")):
        before = match["before"].strip()
        where = "no" if NOT_RUN.match(before) else "clone" if IN_CLONE.match(before) else "outside"
        found.append((where, match["code"]))
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
            if line.startswith("<!-- run in"):
                assert IN_CLONE.match(line), f"{page}: {line!r} must read '<!-- run in the clone: reason -->'"


def test_every_block_is_a_script_or_says_it_is_async_code() -> None:
    """Pasted into a file, a block either compiles, or its first line says it is not a script."""
    wrong = []
    for page in pages():
        for _, code in placed_blocks(page):
            first = code.splitlines()[0] if code else ""
            try:
                compile(code, str(page), "exec")
            except SyntaxError as error:
                # What the reader would see: "'await' outside function", "'async for' outside ...".
                assert "outside" in str(error.msg), f"{page}: a block does not compile: {error}\n{code}"
                compile(code, str(page), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)  # valid async code
                if first != ASYNC_NOTE:
                    wrong.append(f"{page.relative_to(ROOT)}: {first!r}")
            else:
                assert first != ASYNC_NOTE, f"{page}: a block that runs as a script says it does not"
    assert wrong == [], f"top-level await without {ASYNC_NOTE!r} as the first line: {wrong}"


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
import importlib.util, runpy, sys, traceback
# A project outside the clone: the package is the installed wheel, and nothing else of the
# repository is importable.
import langgraph_mcp
assert "site-packages" in langgraph_mcp.__file__, langgraph_mcp.__file__
assert importlib.util.find_spec("examples") is None and importlib.util.find_spec("graphs") is None
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


def installed_project(tmp_path: Path) -> Path:
    """A virtual environment in ``tmp_path`` with the package installed from a freshly built wheel.

    Its other dependencies are the test run's, through a path entry (whose ``.pth`` files, the
    editable install's path to the clone among them, are not read). Returns its Python.
    """
    uv = shutil.which("uv")
    assert uv, "uv builds and installs the wheel (https://docs.astral.sh/uv/)"
    dist, venv = tmp_path / "dist", tmp_path / "venv"
    quiet = {"check": True, "capture_output": True, "text": True, "timeout": 120}
    subprocess.run([uv, "build", "--wheel", "--out-dir", str(dist), str(ROOT)], **quiet)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], **quiet)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], **quiet
    ).stdout.strip()
    deps = sysconfig.get_paths()["purelib"]
    (Path(purelib) / "test_run_dependencies.pth").write_text(deps + "\n", encoding="utf-8")
    (wheel,) = dist.glob("langgraph_mcp-*.whl")
    subprocess.run(
        [uv, "pip", "install", "--offline", "--no-deps", "--python", str(python), str(wheel)], **quiet
    )
    return python


def page_scripts(tmp_path: Path, where: str) -> list[str]:
    scripts = []
    for page in pages_with_code():
        code = [block for there, block in placed_blocks(page) if there == where]
        if code:
            script = tmp_path / (page.relative_to(ROOT).as_posix().replace("/", "__") + ".py")
            script.write_text("\n\n".join(code) + "\n", encoding="utf-8")
            scripts.append(str(script))
    return scripts


@pytest.mark.slow  # starts an MCP server or two per page
@pytest.mark.timeout(300)  # minutes, not seconds, on a loaded machine
def test_examples_run_in_a_project_outside_the_clone(tmp_path: Path) -> None:
    """One process runs every page's script in turn (importing the package once, not per page)."""
    python = installed_project(tmp_path)
    project = tmp_path / "app"  # the reader's project: its folder is where the scripts run
    project.mkdir()
    scripts = page_scripts(project, "outside")
    assert not project.resolve().is_relative_to(ROOT)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join([str(python.parent), env.get("PATH", "")])
    done = subprocess.run(
        [str(python), "-c", DRIVER, *scripts],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    print(done.stdout)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert done.stdout.count("=== ") == len(scripts)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_examples_about_the_clone_run_from_its_root(tmp_path: Path) -> None:
    scripts = page_scripts(tmp_path, "clone")
    assert scripts, "no block is marked <!-- run in the clone: ... -->: drop this test"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }
    driver = DRIVER.split("failed = []", 1)[1]  # the clone: no check that the repository is hidden
    done = subprocess.run(
        [sys.executable, "-c", "import runpy, sys, traceback\nfailed = []" + driver, *scripts],
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


@pytest.mark.slow  # the full suite builds the site; after a docs edit, run this file
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
