"""Arguments to a tool with the plainest schema are passed without the JSON-schema validator
only when the validator would pass them too; everything else gets the validator's verdict and
wording."""

from __future__ import annotations

from typing import Any

import pytest

from langgraph_mcp._call.arguments import ArgumentChecker, ToolInvocationError

PLAIN = {
    "type": "object",
    "title": "echoArguments",
    "properties": {
        "text": {"type": "string", "title": "Text"},
        "n": {"type": "integer"},
        "x": {"type": "number", "description": "a number"},
        "flag": {"type": "boolean"},
    },
    "required": ["text"],
}
CLOSED = {**PLAIN, "additionalProperties": False}
NOT_PLAIN = [
    {**PLAIN, "properties": {**PLAIN["properties"], "text": {"type": "string", "pattern": "^a"}}},
    {**PLAIN, "properties": {**PLAIN["properties"], "text": {"type": "string", "maxLength": 2}}},
    {**PLAIN, "properties": {**PLAIN["properties"], "n": {"type": ["integer", "null"]}}},
    {**PLAIN, "$schema": "http://json-schema.org/draft-04/schema#"},
    {**PLAIN, "required": "text"},
    {**PLAIN, "title": 3},
]
ARGUMENTS: list[Any] = [
    {"text": "hi"},
    {"text": "hi", "n": 3, "x": 2.5, "flag": True},
    {"text": "hi", "x": 2},
    {},
    {"text": 3},
    {"text": None},
    {"text": "hi", "n": True},
    {"text": "hi", "n": 1.0},
    {"text": "hi", "n": 1.5},
    {"text": "hi", "x": False},
    {"text": "hi", "flag": 1},
    {"text": "hi", "flag": "true"},
    {"text": "hi", "other": [1]},
    {"text": "ab"},
]


def _verdict(checker: ArgumentChecker, arguments: dict[str, Any]) -> Any:
    try:
        checker.check(dict(arguments))
    except ToolInvocationError as exc:
        return exc.source.errors()
    return None


def _validator_only(schema: dict[str, Any]) -> ArgumentChecker:
    checker = ArgumentChecker("s", "t", "t", schema)
    checker._plain = None
    return checker


@pytest.mark.parametrize("schema", [PLAIN, CLOSED, *NOT_PLAIN], ids=lambda s: str(sorted(s))[:40])
@pytest.mark.parametrize("arguments", ARGUMENTS, ids=repr)
async def test_the_plain_path_agrees_with_the_validator(
    schema: dict[str, Any], arguments: dict[str, Any]
) -> None:
    expected = _verdict(_validator_only(schema), arguments)
    checker = ArgumentChecker("s", "t", "t", schema)
    assert _verdict(checker, arguments) == expected
    try:
        await checker.acheck(dict(arguments))
    except ToolInvocationError as exc:
        assert exc.source.errors() == expected
    else:
        assert expected is None


def test_only_the_plainest_schemas_skip_the_validator() -> None:
    assert ArgumentChecker("s", "t", "t", PLAIN)._plain is not None
    assert ArgumentChecker("s", "t", "t", CLOSED)._plain is not None
    assert all(ArgumentChecker("s", "t", "t", s)._plain is None for s in NOT_PLAIN)
    # The validator is never built for arguments that surely fit.
    checker = ArgumentChecker("s", "t", "t", PLAIN)
    checker.check({"text": "hi", "n": 2})
    assert checker._validator is None and not checker._compiled


def test_a_value_that_is_not_a_plain_dict_is_left_to_the_validator() -> None:
    from langgraph_mcp._session.plain import plain_check

    check = plain_check(PLAIN)
    assert check is not None
    assert check({"text": "hi"})
    assert not any(check(v) for v in (None, [], "text", {"text": "hi"}.items()))
    assert plain_check(None) is None and plain_check(True) is None
