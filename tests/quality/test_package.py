"""The wheel is what a user installs: built with ``uv build``, installed into a fresh virtualenv
with none of the dev group, it carries ``py.typed``, brings exactly the runtime dependencies, and
runs the quickstart.

The install takes the versions of ``uv.lock`` (exported as constraints), so that it is
reproducible and comes from the uv cache once that is warm; the resolution itself is the one a
plain ``uv pip install <wheel>`` does.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.markers import Marker

from tests.conftest_servers import REPO_ROOT

pytestmark = pytest.mark.slow  # builds and installs the package: seconds of real time


def uv(*args: str, cwd: Path = REPO_ROOT) -> str:
    exe = os.environ.get("UV") or shutil.which("uv")
    assert exe, "uv is needed to build and install the wheel (pip install uv)"
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")}
    done = subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode == 0, f"uv {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@pytest.mark.timeout(300)
def test_the_wheel_installs_alone_and_runs_the_quickstart(tmp_path: Path) -> None:
    uv("build", "--wheel", "--quiet", "--out-dir", str(tmp_path / "dist"))
    (wheel,) = (tmp_path / "dist").glob("langgraph_mcp-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "langgraph_mcp/py.typed" in names
    assert "langgraph_mcp/testing.py" in names
    assert "langgraph_mcp/demo/__main__.py" in names  # python -m langgraph_mcp.demo, from any project
    # Only the package: no tests, examples or deployment graphs.
    assert {n.split("/")[0] for n in names} == {"langgraph_mcp", wheel.name.rsplit("-", 3)[0] + ".dist-info"}
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    assert sorted(re.findall(r"^Provides-Extra: (\S+)$", metadata, flags=re.M)) == sorted(
        project["optional-dependencies"]
    )

    # The locked runtime set, as constraints: what `uv sync --no-dev` would install.
    constraints = tmp_path / "constraints.txt"
    uv(
        "export",
        "--frozen",
        "--no-dev",
        "--no-hashes",
        "--no-emit-project",
        "--quiet",
        "-o",
        str(constraints),
    )
    venv = tmp_path / "venv"
    uv("venv", "--quiet", "--python", sys.executable, str(venv))
    python = venv / "bin" / "python"
    uv("pip", "install", "--quiet", "--python", str(python), "-c", str(constraints), str(wheel))

    listed = uv("pip", "list", "--python", str(python), "--format", "freeze")
    installed = {normalise(line.split("==")[0]) for line in listed.splitlines() if "==" in line}
    locked = set()
    for line in constraints.read_text().splitlines():
        requirement, _, marker = line.partition(";")
        if "==" in requirement and (not marker.strip() or Marker(marker.strip()).evaluate()):
            locked.add(normalise(requirement.split("==")[0].strip()))
    assert installed == locked | {"langgraph-mcp"}
    assert not installed & {
        "pytest",
        "ruff",
        "mypy",
        "langgraph-cli",
        "psycopg",
        "langgraph-checkpoint-sqlite",
    }

    # The quickstart, run from a copy so that the package comes from the venv, not this checkout.
    shutil.copytree(REPO_ROOT / "examples", tmp_path / "work" / "examples")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import langgraph_mcp, pathlib; print(pathlib.Path(langgraph_mcp.__file__).parent)",
        ],
        cwd=tmp_path / "work",
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert where.returncode == 0, where.stderr
    package = Path(where.stdout.strip())
    assert package.is_relative_to(venv) and (package / "py.typed").exists()
    done = subprocess.run(
        [str(python), "examples/quickstart.py"],
        cwd=tmp_path / "work",
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "[tools] add -> 42.0 (success)" in done.stdout
    assert "The mean is 3.833 (median 3.5)" in done.stdout


def would_install(*args: str, tmp_path: Path) -> int:
    """How many packages ``uv sync --locked`` installs from ``uv.lock`` into a new environment."""
    exe = os.environ.get("UV") or shutil.which("uv")
    assert exe, "uv is needed (pip install uv)"
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["UV_PROJECT_ENVIRONMENT"] = str(tmp_path / f"venv{len(args)}")  # never created: a dry run
    done = subprocess.run(
        [exe, "sync", "--locked", "--dry-run", "--offline", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    found = re.search(r"^Would install (\d+) packages$", done.stderr + done.stdout, re.M)
    assert found, done.stderr
    return int(found[1])


def flat(path: Path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())


def test_the_package_counts_in_the_docs_are_the_locked_ones(tmp_path: Path) -> None:
    """README.md and docs/install.md say how many packages a fresh ``uv run`` installs, with and
    without the dev group: the numbers uv gives for this machine from ``uv.lock``."""
    runtime, dev = would_install("--no-dev", tmp_path=tmp_path), would_install(tmp_path=tmp_path)
    assert 0 < runtime < dev
    readme, install = flat(REPO_ROOT / "README.md"), flat(REPO_ROOT / "docs" / "install.md")
    assert f"{runtime} packages on a fresh machine, against {dev} with the development tools" in readme
    assert f"With their own dependencies that is {runtime - 1} packages besides `langgraph-mcp`" in install
    assert f"**{runtime} packages** in `.venv` (the package and the {runtime - 1} above)" in install
    assert f"the extras, ...): {dev} packages." in install
