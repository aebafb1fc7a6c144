"""Regular expressions from servers run on RE2, in time linear in their input: a catastrophic
pattern is checked at once, a pattern RE2 cannot run fails closed, and a check too costly for the
event loop runs off it (``_support.patterns``)."""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from langgraph.prebuilt.tool_node import ToolInvocationError

from langgraph_mcp._call import arguments as _arguments
from langgraph_mcp._call.arguments import ArgumentChecker, UnusableSchema
from langgraph_mcp._elicitation.answers import check_response
from langgraph_mcp._support import patterns as _patterns
from langgraph_mcp._support.pace import loads_in_slices
from langgraph_mcp._support.patterns import UnsafePattern, compile_pattern, regex_budget, search
from langgraph_mcp._support.schema import schema_validator, vet_tool
from tests.servers.costly import CATASTROPHIC

EVIL = "a" * 5000 + "!"  # a backtracking engine would not finish this in the age of the universe


@pytest.fixture
def no_python_re(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Fail if the catastrophic pattern reaches Python's ``re`` (every ``re`` function compiles
    through ``re._compile``); yields what was refused."""
    refused: list[str] = []
    real = re._compile  # type: ignore[attr-defined]

    def guarded(pattern: Any, flags: Any) -> Any:
        if isinstance(pattern, str) and "(a+)+" in pattern:
            refused.append(pattern)
            raise AssertionError(f"{pattern!r} reached Python's re")
        return real(pattern, flags)

    monkeypatch.setattr(re, "_compile", guarded)
    yield refused
    assert refused == []


def checker(schema: dict[str, Any]) -> ArgumentChecker:
    return ArgumentChecker("srv", "tool", "tool", schema)


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


BAG_OF_KEYS = {"type": "object", "patternProperties": {CATASTROPHIC: {"type": "string"}}}
# Every place a schema runs a pattern, in the dialects a schema (or a subschema) may choose.
CATASTROPHIC_SCHEMAS = {
    "pattern": (obj(x={"type": "string", "pattern": CATASTROPHIC}), {"x": EVIL}),
    "patternProperties": (obj(x={**BAG_OF_KEYS, "additionalProperties": False}), {"x": {EVIL: "v"}}),
    "unevaluatedProperties": (obj(x={**BAG_OF_KEYS, "unevaluatedProperties": False}), {"x": {EVIL: "v"}}),
    "propertyNames": (
        obj(x={"type": "object", "propertyNames": {"pattern": CATASTROPHIC}}),
        {"x": {EVIL: 1}},
    ),
    "behind a $ref": (
        {**obj(x={"$ref": "#/x-elsewhere"}), "x-elsewhere": {"pattern": CATASTROPHIC}},
        {"x": EVIL},
    ),
    "draft-04": (
        {
            "$schema": "http://json-schema.org/draft-04/schema#",
            **obj(x={**BAG_OF_KEYS, "additionalProperties": False}),
        },
        {"x": {EVIL: "v"}},
    ),
    "draft 2019-09": (
        {
            "$schema": "https://json-schema.org/draft/2019-09/schema",
            **obj(x={**BAG_OF_KEYS, "unevaluatedProperties": False}),
        },
        {"x": {EVIL: "v"}},
    ),
    # jsonschema switches to the dialect a subschema names: that one must be safe too.
    "a subschema in draft-07": (
        obj(x={"$schema": "http://json-schema.org/draft-07/schema#", "pattern": CATASTROPHIC}),
        {"x": EVIL},
    ),
}


@pytest.mark.parametrize("case", list(CATASTROPHIC_SCHEMAS))
def test_a_catastrophic_pattern_is_checked_at_once_wherever_it_is(case: str, no_python_re: list[str]) -> None:
    schema, arguments = CATASTROPHIC_SCHEMAS[case]
    assert vet_tool("srv", {"name": "tool", "inputSchema": schema}, position=0) is not None
    with pytest.raises(ToolInvocationError) as info:
        checker(schema).check(arguments)
    assert not isinstance(info.value, UnusableSchema)
    assert "x" in info.value.message  # the argument that broke the schema is named


def test_a_matching_argument_passes() -> None:
    checker(obj(x={"type": "string", "pattern": CATASTROPHIC})).check({"x": "a" * 5000})
    checker(obj(x={**BAG_OF_KEYS, "additionalProperties": False})).check({"x": {"aaa": "v"}})


def test_the_message_for_a_mismatch_is_unchanged() -> None:
    with pytest.raises(ToolInvocationError) as info:
        checker(obj(code={"type": "string", "pattern": r"^\d{5}$"})).check({"code": "1234"})
    assert " code: String should match pattern '^\\d{5}$'\n" in info.value.message


@pytest.mark.parametrize(
    ("pattern", "kind"),
    [
        ("^(?=.*[0-9])[a-z0-9]+$", "cannot be checked in linear time"),  # lookahead
        ("(?<!x)y", "cannot be checked in linear time"),  # lookbehind
        (r"(a)\1", "cannot be checked in linear time"),  # backreference
        ("a{5000}", "cannot be checked in linear time"),  # past RE2's repetition limit
        ("(", "is not a valid regular expression"),
    ],
)
@pytest.mark.parametrize("where", ["inputSchema", "outputSchema", "draft-04 patternProperties"])
def test_a_pattern_re2_cannot_run_leaves_the_tool_out_saying_which(
    pattern: str, kind: str, where: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Failing closed: the tool is not offered (never checked by a backtracking engine instead),
    and the warning names the server, the tool and the pattern."""
    raw: dict[str, Any] = {"name": "picky", "inputSchema": obj(x={"type": "string"})}
    if where == "inputSchema":
        raw["inputSchema"] = obj(x={"type": "string", "pattern": pattern})
    elif where == "outputSchema":
        raw["outputSchema"] = obj(x={"type": "string", "pattern": pattern})
    else:
        raw["inputSchema"] = {
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": "object",
            "patternProperties": {pattern: {}},
        }
    with caplog.at_level(logging.WARNING):
        assert vet_tool("srv", raw, position=0) is None
    (warning,) = [r.getMessage() for r in caplog.records]
    schema = "outputSchema" if where == "outputSchema" else "inputSchema"
    assert warning.startswith(f"MCP server 'srv': tool 'picky' is left out: its {schema} has a pattern")
    assert kind in warning and repr(pattern) in warning


def test_a_tool_built_by_hand_with_such_a_pattern_cannot_be_called() -> None:
    with pytest.raises(UnusableSchema) as info:
        checker(obj(x={"type": "string", "pattern": "(?=a)a"})).check({"x": "a"})
    assert info.value.reason.startswith(
        "MCP tool 'tool' of server 'srv' cannot be called: its inputSchema has a pattern that cannot "
        "be checked in linear time: '(?=a)a' (lookaround and backreferences need backtracking"
    )


def test_ecma_escapes_and_anchors_mean_what_ecma_says() -> None:
    assert search(r"^[\u0061-\u007a]+$", "abc") and not search(r"^[\u0061-\u007a]+$", "ABC")
    assert search(r"^\uD83D\uDE00$", "\U0001f600")  # a surrogate pair is one character
    assert search(r"^\u{1F600}$", "\U0001f600")
    assert search(r"^a\cJb$", "a\nb")
    assert search(r"^\\u0061$", "\\u0061")  # an escaped backslash stays one
    assert not search("^abc$", "abc\n")  # "$" is the very end, as in ECMA-262 (not Python's re)
    assert not search(r"^\d+$", "\u0663")  # "\d" is ASCII digits only
    assert search(r"^\p{L}+$", "héllo")


def test_a_lone_surrogate_in_a_pattern_or_a_string_is_no_crash() -> None:
    with pytest.raises(UnsafePattern):
        compile_pattern("\ud800")  # the character itself: RE2 takes UTF-8 only
    assert search(r"\uD800", "x") is False
    assert search("^a", "a\ud800") is True


def test_a_string_too_long_for_the_loop_fails_the_check_saying_so() -> None:
    long = "a" * 1_000_000
    with pytest.raises(ToolInvocationError) as info:
        checker(obj(x={"type": "string", "pattern": "^[a-z]*$"})).check({"x": long})
    assert "is too long to be checked against the pattern '^[a-z]*$'" in info.value.message
    assert "1000000 characters" in info.value.message


def test_the_work_of_one_check_is_shared_by_all_its_matches() -> None:
    strings = ["a" * 2000] * 200  # each match is cheap; all of them together are not
    schema = obj(x={"type": "array", "items": {"type": "string", "pattern": "^[a-z]*$"}})
    with pytest.raises(ToolInvocationError) as info:
        checker(schema).check({"x": strings})
    assert "too long to be checked" in info.value.message


async def test_a_check_too_costly_for_the_loop_runs_off_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """While a long argument is checked in a worker thread, the event loop serves others: the
    check waits (in its thread) until a task on the loop has run, which it could not if the check
    held the loop."""
    loop = asyncio.get_running_loop()
    entered = asyncio.Event()
    others_ran = threading.Event()
    in_thread = ArgumentChecker._check_in_thread

    def gated(self: ArgumentChecker, arguments: dict[str, Any]) -> None:
        loop.call_soon_threadsafe(entered.set)
        assert others_ran.wait(30), "no other task ran while the check was in its thread"
        in_thread(self, arguments)

    monkeypatch.setattr(ArgumentChecker, "_check_in_thread", gated)
    pattern_checker = checker(obj(x={"type": "string", "pattern": "^[a-z]*$"}))
    check = asyncio.create_task(pattern_checker.acheck({"x": "a" * 1_000_000}))
    await entered.wait()  # the check is in its thread; this task runs meanwhile
    others_ran.set()
    await check  # and it passed: a million letters match
    with pytest.raises(ToolInvocationError) as info:
        await pattern_checker.acheck({"x": "a" * 999_999 + "!"})
    assert "should match pattern" in info.value.message


async def test_a_check_too_costly_even_for_a_thread_fails_saying_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_arguments, "THREAD_WORK", 2_000_000)
    with pytest.raises(ToolInvocationError) as info:
        await checker(obj(x={"type": "string", "pattern": "^[a-z]*$"})).acheck({"x": "a" * 1_000_000})
    assert "is too long to be checked against the pattern" in info.value.message


def test_output_and_elicitation_schemas_run_patterns_on_re2(no_python_re: list[str]) -> None:
    validator = schema_validator(obj(x={"type": "string", "pattern": CATASTROPHIC}))
    with regex_budget():
        (error,) = validator.iter_errors({"x": EVIL})
    assert "does not match" in error.message
    request: Any = {
        "key": "k",
        "mode": "form",
        "message": "?",
        "requested_schema": obj(name={"type": "string", "pattern": CATASTROPHIC}),
    }
    with pytest.raises(ValueError, match="is not in the form this field takes"):
        check_response(request, {"action": "accept", "content": {"name": EVIL}})
    request["requested_schema"] = obj(name={"type": "string", "pattern": "(?=x)"})
    with pytest.raises(ValueError, match="the requested schema cannot be used"):
        check_response(request, {"action": "accept", "content": {"name": "x"}})


def test_jsonschema_itself_is_left_as_it_was() -> None:
    """Only this package's validator classes change: ``jsonschema``'s own are untouched."""
    assert jsonschema.Draft202012Validator.VALIDATORS["pattern"].__module__ == "jsonschema._keywords"
    assert jsonschema.validators.validator_for({"$schema": "http://json-schema.org/draft-07/schema#"}) is (
        jsonschema.Draft7Validator
    )


@pytest.mark.parametrize(
    "text",
    [
        "{}",
        "[]",
        ' { "a" : [1, 2, {"b": [ ]}], "c": "\\u00e9\\n", "d": null } ',
        '{"a":{"b":{"c":{"d":{"e":[1,{"f":2}]}}}}}',
        '{"a":1,"a":2}',
        "[NaN, -Infinity, 1e400]",
        '"just a string"',
        "  3.5 ",
    ],
)
async def test_json_parsed_in_slices_is_what_json_loads_gives(text: str) -> None:
    import json

    assert repr(await loads_in_slices(text)) == repr(json.loads(text))


@pytest.mark.parametrize(
    "text", ["", "  ", "[1,2", '{"a" 1}', '{"a":1,}', "[1] x", "[1,]", "{,}", '{"a":1 "b":2}']
)
async def test_json_that_json_loads_refuses_is_refused_in_slices(text: str) -> None:
    with pytest.raises(ValueError):
        await loads_in_slices(text)


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("\\pL" * 17, "it has more than 16 Unicode classes"),
        ("(?i)" + "\\P{Greek}" * 17, "it has more than 16 Unicode classes"),
        ("a" * 5001, "it is longer than 5000 characters"),
    ],
)
def test_a_pattern_costly_to_compile_is_refused_before_compiling(
    pattern: str, reason: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Compiling holds the GIL whatever thread it runs in (``"\\pL" * 6666`` took 0.7-1 s), so
    what bounds it is checked first: RE2 never sees such a pattern."""
    compiled: list[str] = []
    real = _patterns.re2.compile
    monkeypatch.setattr(_patterns.re2, "compile", lambda p, o: compiled.append(p) or real(p, o))
    raw = {"name": "picky", "inputSchema": obj(x={"type": "string", "pattern": pattern})}
    with caplog.at_level(logging.WARNING):
        assert vet_tool("srv", raw, position=0) is None
    assert "is left out: its inputSchema has a pattern that cannot be checked in linear time" in (
        caplog.records[0].getMessage()
    )
    with pytest.raises(UnsafePattern) as info:
        compile_pattern(pattern)
    assert reason in info.value.reason
    assert pattern not in compiled


def test_escaped_backslashes_and_sixteen_classes_are_fine() -> None:
    assert compile_pattern("\\pL" * 16).search("a" * 16)
    assert search(r"^(\\p)+$", "\\p" * 20)  # a backslash then "p": no Unicode class
    assert compile_pattern("a" * 5000)


async def test_a_pattern_not_compiled_yet_is_compiled_off_the_event_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A tool's patterns may have left the cache (128 patterns) since it was listed: the check
    then compiles them in its worker thread, not on the event loop."""
    loop_thread = threading.current_thread()
    where: list[tuple[str, bool]] = []
    real = _patterns._compile

    def recording(pattern: str) -> Any:
        where.append((pattern, threading.current_thread() is loop_thread))
        return real(pattern)

    monkeypatch.setattr(_patterns, "_compile", recording)
    pattern = "^[a-z]{1,20}-unique-to-this-test$"
    _patterns._cache.pop(pattern, None)
    tool = checker(obj(x={"type": "string", "pattern": pattern}))
    await tool.acheck({"x": "abc-unique-to-this-test"})
    assert where == [(pattern, False)]  # compiled once, in a worker thread
    with pytest.raises(ToolInvocationError):
        await tool.acheck({"x": "ABC"})  # compiled already: checked on the loop, as ever
    assert len(where) == 1


@pytest.mark.parametrize("keyword", ["not", "if"])
def test_a_string_too_long_to_check_never_passes_for_it(keyword: str) -> None:
    """Under ``not`` (or ``if``) an error reads as "does not match": a string too long to be
    checked must fail the check, not pass for being unchecked."""
    inner = {"pattern": "^[a-z]*$"}
    prop = {"type": "string", "not": inner} if keyword == "not" else {"if": inner, "then": {"maxLength": 3}}
    schema = obj(x=prop)
    assert_refused = pytest.raises(ToolInvocationError, match="too long to be checked against the pattern")
    with assert_refused:
        checker(schema).check({"x": "a" * 1_000_000})
    with pytest.raises(ToolInvocationError):
        checker(schema).check({"x": "abcd"})  # short: checked, and refused by the schema
    request: Any = {"key": "q#00000000", "mode": "form", "message": "?", "requested_schema": schema}
    with pytest.raises(ValueError, match="cannot be checked against the requested schema"):
        check_response(request, {"action": "accept", "content": {"x": "a" * 1_000_000}})


async def test_a_question_s_patterns_are_compiled_before_it_is_asked_and_bounded() -> None:
    import mcp_types as types

    from langgraph_mcp._elicitation.answers import MAX_PATTERNS, UnfitQuestion, elicitation_request, prepare

    pattern = "^[0-9]{4}-question-only$"
    _patterns._cache.pop(pattern, None)
    params = types.ElicitRequestFormParams(
        message="Which year?",
        requested_schema={"type": "object", "properties": {"y": {"type": "string", "pattern": pattern}}},
    )
    await prepare(params)
    assert _patterns.is_compiled(pattern)
    many = {f"p{i}": {"type": "string", "pattern": f"^{i}$"} for i in range(MAX_PATTERNS + 1)}
    crowded = types.ElicitRequestFormParams(
        message="?", requested_schema={"type": "object", "properties": many}
    )
    with pytest.raises(UnfitQuestion, match=f"more than {MAX_PATTERNS} patterns"):
        elicitation_request("elicitation", crowded, scope="s")


async def test_calls_at_once_while_a_pattern_compiles_in_a_thread_are_all_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first call compiles the tool's pattern in a worker thread; calls arriving meanwhile
    on the event loop must wait for it or compile it themselves, never pass unchecked."""
    pattern = "^[a-z]+-compiled-slowly$"
    _patterns._cache.pop(pattern, None)
    real = _patterns._compile

    def slow(p: str) -> Any:
        if p == pattern:
            threading.Event().wait(0.3)  # (in the worker thread: the loop runs meanwhile)
        return real(p)

    monkeypatch.setattr(_patterns, "_compile", slow)
    tool = checker(obj(x={"type": "string", "pattern": pattern}))
    results = await asyncio.gather(
        *(tool.acheck({"x": "NOT-MATCHING"}) for _ in range(20)), return_exceptions=True
    )
    assert all(isinstance(r, ToolInvocationError) for r in results), results
    await tool.acheck({"x": "abc-compiled-slowly"})
