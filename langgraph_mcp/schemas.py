"""JSON Schemas (draft 2020-12) of the wire formats: the interrupt payloads, the resume values that
answer them, and the custom stream events, for clients that are not written in Python (a
JavaScript or TypeScript UI, ``curl``)::

    from langgraph_mcp.schemas import json_schema, json_schemas

    json_schema("approval-interrupt")  # {"$schema": ..., "$id": "urn:langgraph-mcp:schema:...", ...}
    json_schemas()                     # {name: schema} for every name in SCHEMA_NAMES

They are generated from the ``TypedDict``s of :mod:`langgraph_mcp.types`. To write them as files
(``<name>.json``), or check files written before::

    python -m langgraph_mcp.schemas <directory>
    python -m langgraph_mcp.schemas --check <directory>
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from langgraph_mcp.types import (
    MCPAppCallRequest,
    MCPAppCallResponse,
    MCPAppContext,
    MCPApprovalActionRequest,
    MCPApprovalDecision,
    MCPApprovalDecisions,
    MCPApprovalEditedAction,
    MCPApprovalInterrupt,
    MCPApprovalResponses,
    MCPApprovalResume,
    MCPApprovalReviewConfig,
    MCPApprovalsDecisions,
    MCPApprovalsInterrupt,
    MCPApprovalsResponses,
    MCPApprovalsResume,
    MCPAppToolResult,
    MCPAppUIProps,
    MCPAuthorizationInterrupt,
    MCPCallSnapshot,
    MCPElicitationAccept,
    MCPElicitationActionRequest,
    MCPElicitationCancel,
    MCPElicitationDecision,
    MCPElicitationDecisions,
    MCPElicitationDecline,
    MCPElicitationEditedAction,
    MCPElicitationFormRequest,
    MCPElicitationInterrupt,
    MCPElicitationResume,
    MCPElicitationResumeValue,
    MCPElicitationReviewConfig,
    MCPElicitationUrlRequest,
    MCPEventInput,
    MCPInterrupt,
    MCPLoadedSkill,
    MCPLogEvent,
    MCPProgressEvent,
    MCPProgressUIProps,
    MCPResourceUpdatedEvent,
    MCPSamplingInterrupt,
    MCPSamplingResponses,
    MCPSamplingResume,
    MCPSamplingResumeValue,
    MCPSkillApprovalInterrupt,
    MCPSkillApprovalResume,
    MCPSkillLoadResult,
    MCPStreamEvent,
    MCPTaskInterrupt,
    MCPToolArtifact,
    MCPToolCatalog,
)

__all__ = ["SCHEMA_NAMES", "json_schema", "json_schemas"]

_SCHEMAS: dict[str, tuple[Any, str, str]] = {
    "elicitation-interrupt": (
        MCPElicitationInterrupt,
        "MCP elicitation interrupt",
        'The interrupt value ("type": "mcp_elicitation") raised when an MCP server asks a person for '
        "input during a tool call: form questions and URLs to visit.",
    ),
    "elicitation-resume": (
        MCPElicitationResumeValue,
        "MCP elicitation resume value",
        "The resume value that answers an mcp_elicitation interrupt: one response per request key, "
        'or {"decisions": [...]}, one decision per action request, in order.',
    ),
    "approval-interrupt": (
        MCPApprovalInterrupt,
        "MCP tool approval interrupt",
        'The interrupt value ("type": "tool_approval") that asks a person to approve one MCP tool '
        "call before it runs.",
    ),
    "approval-resume": (
        MCPApprovalResume,
        "MCP tool approval resume value",
        "The resume value that answers a tool_approval interrupt: a decision, "
        '{"decisions": [<decision>]} or {"responses": {<key>: <decision>}}.',
    ),
    "approvals-interrupt": (
        MCPApprovalsInterrupt,
        "MCP tool approvals interrupt",
        'The interrupt value ("type": "tool_approvals") that asks a person to approve several MCP tool '
        'calls of one model turn at once (approval_mode="batched").',
    ),
    "approvals-resume": (
        MCPApprovalsResume,
        "MCP tool approvals resume value",
        'The resume value that answers a tool_approvals interrupt: {"decisions": [...]}, one decision '
        "per action request in order, or the same keyed by the interrupt's key or by each call's key.",
    ),
    "sampling-interrupt": (
        MCPSamplingInterrupt,
        "MCP sampling interrupt",
        'The interrupt value ("type": "mcp_sampling") that asks a person to approve an MCP '
        "server's sampling request (with sampling_approval).",
    ),
    "sampling-resume": (
        MCPSamplingResumeValue,
        "MCP sampling resume value",
        'The resume value that answers an mcp_sampling interrupt: {"action": ...} or '
        '{"responses": {<key>: {"action": ...}}}.',
    ),
    "task-interrupt": (
        MCPTaskInterrupt,
        "MCP task interrupt",
        'The interrupt value ("type": "mcp_task") raised when a tool call parks the run on a task '
        "still running on its MCP server (task_detach_after); any resume value looks at the task again.",
    ),
    "authorization-interrupt": (
        MCPAuthorizationInterrupt,
        "MCP authorization interrupt",
        'The interrupt value ("type": "mcp_authorization") raised when a call to a per-user OAuth '
        "server needs the user to connect (open url); any resume value retries the call.",
    ),
    "skill-approval-interrupt": (
        MCPSkillApprovalInterrupt,
        "MCP skill approval interrupt",
        'The interrupt value ("type": "skill_approval") that asks a person to approve loading an MCP '
        "skill into the model's context, bound to the files and digests it shows.",
    ),
    "skill-approval-resume": (
        MCPSkillApprovalResume,
        "MCP skill approval resume value",
        "The resume value that answers a skill_approval interrupt: an approve or reject decision, "
        '{"decisions": [<decision>]} or {"responses": {<key>: <decision>}}.',
    ),
    "skill-load-result": (
        MCPSkillLoadResult,
        "MCP skill load result",
        "The artifact of the load_skill tool's ToolMessage: which skill file was given to the model, "
        "checked against which digest.",
    ),
    "event-run-input": (
        MCPEventInput,
        "MCP event run input",
        "The input of a run an MCP event started (an event trigger): the event under mcp_event "
        "and, unless the trigger takes the event only, one user message saying what happened.",
    ),
    "loaded-skills-state": (
        dict[str, MCPLoadedSkill],
        "MCP loaded skills state",
        "The mcp_skills graph state key: the skills loaded in a thread, by skill id.",
    ),
    "interrupt": (
        MCPInterrupt,
        "Any langgraph-mcp interrupt",
        "Any interrupt value langgraph-mcp raises; its type field tells which.",
    ),
    "progress-event": (
        MCPProgressEvent,
        "MCP progress event",
        'A stream_mode="custom" event ("type": "mcp_progress") for one MCP progress notification '
        "of a running tool call.",
    ),
    "progress-ui-props": (
        MCPProgressUIProps,
        "MCP progress UI message props",
        'The props of the generative-UI message ("name": "mcp-progress") that shows a running tool '
        "call's progress; updated in place until the call ends.",
    ),
    "app-ui-props": (
        MCPAppUIProps,
        "MCP Apps view UI message props",
        'The props of the generative-UI message ("name": "mcp-app") that carries the ui:// view of '
        "a successful MCP Apps tool call, with the call's arguments and result.",
    ),
    "app-call-request": (
        MCPAppCallRequest,
        "MCP Apps view call request",
        "What the mcp-app component sends the deployment's route (POST "
        "/mcp-apps/threads/<thread_id>/call) for one tools/call or resources/read of its view.",
    ),
    "app-call-response": (
        MCPAppCallResponse,
        "MCP Apps view call response",
        "The route's answer to a view's call: the MCP result, or that the call waits for a "
        "person's answer (an approval) on the thread.",
    ),
    "app-context": (
        MCPAppContext,
        "MCP Apps view model context",
        "A view's model context (ui/update-model-context), kept in the mcp_app_context state key.",
    ),
    "log-event": (
        MCPLogEvent,
        "MCP log event",
        'A stream_mode="custom" event ("type": "mcp_log") for one MCP log message of a running '
        "tool call (with the server's log_events on).",
    ),
    "resource-updated-event": (
        MCPResourceUpdatedEvent,
        "MCP resource updated event",
        'A stream_mode="custom" event ("type": "mcp_resource_updated"): a subscribed resource changed.',
    ),
    "stream-event": (
        MCPStreamEvent,
        "Any langgraph-mcp custom stream event",
        'Any stream_mode="custom" event langgraph-mcp emits; its type field tells which.',
    ),
    "mcp-call": (
        MCPCallSnapshot,
        "MCP call snapshot",
        'One MCP tool call as the v3 stream projection last saw it ("type": "mcp_call"): a '
        "deployment's event streaming API sends one on the custom:mcp channel at each change.",
    ),
    "tool-artifact": (
        MCPToolArtifact,
        "MCP tool message artifact",
        "The artifact of a ToolMessage that holds an MCP tool result.",
    ),
    "tool-catalog": (
        MCPToolCatalog,
        "MCP tool catalog file",
        "The tool catalog file (MCPPool(tool_catalog=path)): each server's tools as it listed them, "
        "so that lazy servers' tools are offered without starting them.",
    ),
}

SCHEMA_NAMES: tuple[str, ...] = tuple(_SCHEMAS)
"""The names :func:`json_schema` knows, in the order :func:`json_schemas` gives them."""

_SCHEMA_ID = "urn:langgraph-mcp:schema:{name}"
_ROLE = re.compile(r":(?:class|func|meth|data|attr):`~?([^`]+)`")


def _plain(text: str) -> str:
    """A docstring as Markdown: reStructuredText roles and literals as code spans, wrapped lines
    joined (paragraphs and ``* `` list items kept apart)."""
    lines: list[str] = []
    for line in _ROLE.sub(r"`\1`", text).replace("``", "`").split("\n"):
        line = line.strip()
        if lines and lines[-1] and line and not line.startswith("* "):
            lines[-1] += " " + line
        else:
            lines.append(line)
    return "\n".join(lines)


def _clean(node: Any, *, in_properties: bool = False) -> Any:
    """Property titles dropped (pydantic's ``"Tool Call Id"`` names nothing), descriptions as
    plain text."""
    if isinstance(node, list):
        return [_clean(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for name, value in node.items():
        if in_properties:
            out[name] = _clean(value)
            if isinstance(out[name], dict):
                out[name].pop("title", None)
        elif name == "description" and isinstance(value, str):
            out[name] = _plain(value)
        else:
            out[name] = _clean(value, in_properties=name == "properties")
    return out


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one payload, resume value or event, by name (one of
    :data:`SCHEMA_NAMES`: ``"elicitation-interrupt"``, ``"approval-resume"``,
    ``"progress-event"``, ...), generated from the types in :mod:`langgraph_mcp.types`; the
    same, key for key, on every call.

    Raises:
        KeyError: no schema has that name.
    """
    try:
        target, title, description = _SCHEMAS[name]
    except KeyError:
        raise KeyError(f"no schema named {name!r}; the names are {', '.join(SCHEMA_NAMES)}") from None
    generated = _clean(TypeAdapter(target).json_schema())
    generated.pop("title", None)
    generated.pop("description", None)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": _SCHEMA_ID.format(name=name),
        "title": title,
        "description": description,
        **generated,
    }


def json_schemas() -> dict[str, dict[str, Any]]:
    """Every JSON Schema :func:`json_schema` gives, by name."""
    return {name: json_schema(name) for name in SCHEMA_NAMES}


_DOCUMENTED: tuple[type, ...] = (
    MCPElicitationFormRequest,
    MCPElicitationUrlRequest,
    MCPElicitationInterrupt,
    MCPElicitationAccept,
    MCPElicitationDecline,
    MCPElicitationCancel,
    MCPElicitationResume,
    MCPElicitationActionRequest,
    MCPElicitationReviewConfig,
    MCPElicitationEditedAction,
    MCPElicitationDecision,
    MCPElicitationDecisions,
    MCPSamplingInterrupt,
    MCPSamplingResume,
    MCPSamplingResponses,
    MCPApprovalActionRequest,
    MCPApprovalReviewConfig,
    MCPApprovalInterrupt,
    MCPApprovalEditedAction,
    MCPApprovalDecision,
    MCPApprovalDecisions,
    MCPApprovalResponses,
    MCPApprovalsInterrupt,
    MCPApprovalsDecisions,
    MCPApprovalsResponses,
    MCPProgressEvent,
    MCPProgressUIProps,
    MCPAppUIProps,
    MCPAppToolResult,
    MCPLogEvent,
    MCPResourceUpdatedEvent,
    MCPToolArtifact,
    MCPTaskInterrupt,
    MCPAuthorizationInterrupt,
)
for _documented in _DOCUMENTED:  # their field docstrings become the schemas' property descriptions
    _documented.__pydantic_config__ = {"use_attribute_docstrings": True}  # type: ignore[attr-defined]
del _documented


# -- files ------------------------------------------------------------------------------------


def _rendered() -> dict[str, str]:
    return {
        f"{name}.json": json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
        for name, schema in json_schemas().items()
    }


def _stale(directory: Path) -> list[str]:
    """The schema files missing from ``directory`` or different there."""
    return [
        name
        for name, text in _rendered().items()
        if not (directory / name).is_file() or (directory / name).read_text() != text
    ]


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m langgraph_mcp.schemas",
        description="Write the JSON Schemas of langgraph-mcp's wire formats as <name>.json files.",
    )
    parser.add_argument("directory", type=Path)
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a file is missing or differs"
    )
    args = parser.parse_args(argv)
    directory: Path = args.directory
    if args.check:
        stale = _stale(directory)
        for name in stale:
            print(f"stale: {directory / name}", file=sys.stderr)
        if stale:
            print(f"regenerate with: python -m langgraph_mcp.schemas {directory}", file=sys.stderr)
        return 1 if stale else 0
    directory.mkdir(parents=True, exist_ok=True)
    files = _rendered()
    for name, text in files.items():
        (directory / name).write_text(text)
    print(f"wrote {len(files)} schemas to {directory}")
    return 0


if __name__ == "__main__":
    sys.exit(_main())
