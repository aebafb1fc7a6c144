"""The faces' MCP options are one set: ``MCPToolNode``, ``MCPMiddleware`` and ``create_mcp_agent``
(and ``ToolSet``, for the options it takes) give each the same annotation and default, and
describe it with the one text of ``OPTION_DOCS``, or refer to the face that does.

The signatures stay written out in each face (the reference pages read them statically); this
test is what keeps them, and their ``Args:`` entries, from drifting apart.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable
from typing import Any

import pytest
from langgraph.prebuilt import ToolNode

from langgraph_mcp import MCPMiddleware, MCPToolNode, create_mcp_agent
from langgraph_mcp._catalog.bind import ToolSet
from langgraph_mcp._graph.spec import AS_FOR_MIDDLEWARE, AS_FOR_NODE, OPTION_DOCS, SHARED, MCPOptions

FACES: dict[str, Callable[..., Any]] = {
    "MCPToolNode": MCPToolNode.__init__,
    "MCPMiddleware": MCPMiddleware.__init__,
    "create_mcp_agent": create_mcp_agent,
}
DOCS: dict[str, str | None] = {
    "MCPToolNode": MCPToolNode.__doc__,
    "MCPMiddleware": MCPMiddleware.__doc__,
    "create_mcp_agent": create_mcp_agent.__doc__,
}
MIDDLEWARE_ONLY = ("raise_errors", "view_calls")
"""Options of ``MCPMiddleware`` (and so of ``create_mcp_agent``) that a node has not."""

REFERENCES: dict[str, tuple[str, ...]] = {
    "MCPToolNode": (),
    "MCPMiddleware": (AS_FOR_NODE,),
    "create_mcp_agent": (AS_FOR_NODE, AS_FOR_MIDDLEWARE),
}
"""What a face may write instead of the text: the node is the text's home."""

EXTRAS: set[tuple[str, str]] = {
    ("MCPToolNode", "tool_filter"),  # where the model's side is: get_tools
    ("MCPToolNode", "tool_search"),  # the node serves the search tool; refuses native search
    ("MCPMiddleware", "approval_mode"),  # batched: the after_model hook, the private state key
    ("MCPMiddleware", "tool_search"),  # the state key; provider-native search
}
"""The entries that add face-specific sentences after the shared text (or reference)."""


DEFAULTS: dict[str, dict[str, Any]] = {
    "approval_mode": {"MCPToolNode": "per_call", "MCPMiddleware": "batched", "create_mcp_agent": "batched"},
}
"""Options whose default is the face's own (agents ask a turn's approvals together, as
``HumanInTheLoopMiddleware``; a node keeps ``ToolNode``'s one call, one question); the spec's is
the node's."""


def _signature(face: Callable[..., Any]) -> inspect.Signature:
    return inspect.signature(face)


def _args(doc: str | None) -> dict[str, str]:
    """A Google-style docstring's ``Args:`` entries, by name, whitespace folded."""
    lines = inspect.cleandoc(doc or "").splitlines()
    start = lines.index("Args:")
    entries: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        match = re.match(r"^    (\**\w+): ?(.*)$", line)
        if match:
            current = entries.setdefault(match.group(1).lstrip("*"), [])
            current.append(match.group(2))
        elif current is not None and line.startswith("        "):
            current.append(line.strip())
    return {name: " ".join(" ".join(parts).split()) for name, parts in entries.items()}


def _options_of(face: str) -> tuple[str, ...]:
    return SHARED if face == "MCPToolNode" else (*SHARED, *MIDDLEWARE_ONLY)


def test_the_spec_has_a_text_for_each_option_and_a_field_for_each_but_connections() -> None:
    fields = {f.name for f in dataclasses.fields(MCPOptions) if f.init}
    assert set(OPTION_DOCS) == {*SHARED, *MIDDLEWARE_ONLY}
    assert fields == {*SHARED, *MIDDLEWARE_ONLY} - {"connections"}


@pytest.mark.parametrize("option", [*SHARED, *MIDDLEWARE_ONLY])
def test_every_face_gives_an_option_the_same_annotation_and_default(option: str) -> None:
    params = {
        face: _signature(fn).parameters[option] for face, fn in FACES.items() if option in _options_of(face)
    }
    assert len(params) == (3 if option in SHARED else 2)
    annotations = {face: p.annotation for face, p in params.items()}
    defaults = {face: p.default for face, p in params.items()}
    kinds = {face: p.kind for face, p in params.items()}
    assert len(set(annotations.values())) == 1, annotations
    if option in DEFAULTS:
        assert defaults == DEFAULTS[option]
        defaults = {"MCPToolNode": defaults["MCPToolNode"]}
    assert all(
        d is next(iter(defaults.values())) or d == next(iter(defaults.values())) for d in defaults.values()
    ), defaults
    if option == "connections":
        assert set(kinds.values()) == {inspect.Parameter.POSITIONAL_OR_KEYWORD}
        return
    assert set(kinds.values()) == {inspect.Parameter.KEYWORD_ONLY}
    spec = _signature(MCPOptions).parameters[option]
    assert spec.annotation == next(iter(annotations.values()))
    assert spec.default == next(iter(defaults.values()))
    toolset = _signature(ToolSet.__init__).parameters.get(option)
    if toolset is not None:
        assert (toolset.annotation, toolset.default) == (spec.annotation, spec.default)


def test_the_toolset_takes_the_binding_options() -> None:
    taken = set(_signature(ToolSet.__init__).parameters) & set(SHARED)
    assert taken == set(SHARED) - {"connections", "tool_search", "on_connection_error", "default_timeout"}


@pytest.mark.parametrize("face", list(FACES))
def test_each_face_describes_an_option_with_its_one_text_or_a_reference(face: str) -> None:
    entries = _args(DOCS[face])
    for option in _options_of(face):
        entry = entries.get(option)
        assert entry is not None, f"{face} does not describe {option}"
        text = " ".join(OPTION_DOCS[option].split())
        bases = [text, *REFERENCES[face]]
        if (face, option) in EXTRAS:
            assert any(entry.startswith(base + " ") for base in bases), f"{face}.{option}: {entry!r}"
        else:
            assert entry in bases, f"{face}.{option}: {entry!r}"


@pytest.mark.parametrize("face", list(FACES))
def test_each_face_describes_its_arguments_and_no_other(face: str) -> None:
    """Every argument, but a node's ``ToolNode`` ones (its docstring says they mean the same)."""
    names = {n for n in _signature(FACES[face]).parameters if n != "self"}
    described = set(_args(DOCS[face]))
    assert described <= names
    if face == "MCPToolNode":
        names -= set(inspect.signature(ToolNode.__init__).parameters)
    assert described >= names
