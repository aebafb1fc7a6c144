"""The published JSON Schemas: valid draft 2020-12, named and described, and the committed copies
in ``docs/schemas`` current (regenerate them with ``uv run python -m langgraph_mcp.schemas docs/schemas``)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from langgraph_mcp.schemas import SCHEMA_NAMES, json_schema, json_schemas
from langgraph_mcp.schemas import _main as schemas_main

REPO_ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DIR = REPO_ROOT / "docs" / "schemas"
WIRE_PAGE = REPO_ROOT / "docs" / "reference" / "wire-formats.md"


def schemas_command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "langgraph_mcp.schemas", *args],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_the_committed_schema_files_are_current() -> None:
    done = schemas_command("--check", "docs/schemas")
    assert done.returncode == 0, done.stderr  # it names the command that regenerates them
    assert sorted(p.stem for p in SCHEMA_DIR.glob("*.json")) == sorted(SCHEMA_NAMES)


def test_the_check_names_stale_and_missing_files_and_how_to_regenerate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert schemas_main([str(tmp_path)]) == 0
    assert f"wrote {len(SCHEMA_NAMES)} schemas" in capsys.readouterr().out
    assert schemas_main(["--check", str(tmp_path)]) == 0
    (tmp_path / "log-event.json").write_text("{}\n")
    (tmp_path / "progress-event.json").unlink()
    assert schemas_main(["--check", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"stale: {tmp_path / 'log-event.json'}" in err
    assert f"stale: {tmp_path / 'progress-event.json'}" in err
    assert f"regenerate with: python -m langgraph_mcp.schemas {tmp_path}" in err


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_each_schema_is_valid_draft_2020_12_with_an_id_title_and_description(name: str) -> None:
    schema = json_schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"urn:langgraph-mcp:schema:{name}"
    assert schema["title"] and schema["description"]
    assert json.loads((SCHEMA_DIR / f"{name}.json").read_text()) == schema


def test_the_schemas_are_the_same_on_every_call_and_unknown_names_are_named() -> None:
    assert json_schemas() == json_schemas()
    assert list(json_schemas()) == list(SCHEMA_NAMES)
    with pytest.raises(KeyError, match="elicitation-interrupt"):
        json_schema("elicitation")


def test_the_kinds_cannot_be_mistaken() -> None:
    """Each interrupt and event has its own ``type``: it tells them apart."""
    kinds = {
        "elicitation-interrupt": "mcp_elicitation",
        "approval-interrupt": "tool_approval",
        "sampling-interrupt": "mcp_sampling",
        "progress-event": "mcp_progress",
        "log-event": "mcp_log",
        "resource-updated-event": "mcp_resource_updated",
    }
    for name, kind in kinds.items():
        assert json_schema(name)["properties"]["type"]["const"] == kind


def test_every_json_example_on_the_wire_format_page_fits_its_schema() -> None:
    """Examples marked ``<!-- schema: <name> -->`` just above their code block."""
    text = WIRE_PAGE.read_text()
    examples = re.findall(r"<!-- schema: ([a-z-]+) -->\n```json\n(.*?)\n```", text, re.S)
    assert len(examples) == text.count("<!-- schema:")  # each marker is just above its block
    assert {name for name, _ in examples} >= set(SCHEMA_NAMES) - {"interrupt", "stream-event"}
    for name, example in examples:
        jsonschema.Draft202012Validator(json_schema(name)).validate(json.loads(example))
    for name in SCHEMA_NAMES:
        assert f"../schemas/{name}.json" in text, f"the page does not link {name}.json"
