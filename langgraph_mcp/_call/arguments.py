"""A tool call's arguments checked against the tool's ``inputSchema`` before the server is
contacted.

LangChain does not validate a dict (JSON-schema) ``args_schema``, so violations become LangGraph's
``ToolInvocationError`` with pydantic-style details, using pydantic's wording where the two
overlap (missing field, wrong type, extra field, pattern), so ``ToolNode`` reports them exactly as
it reports bad arguments to a local tool. Schemas are compiled with
:func:`~langgraph_mcp._support.schema.schema_validator`, which never fetches a reference and runs
patterns on RE2, in time linear in the argument
(:func:`~langgraph_mcp._support.patterns.safe_validator_class`). A check runs on the event loop
while its patterns' work stays within ``INLINE_WORK`` (25-60 ms at worst); one that needs more (a
long string against a pattern) runs again in a worker thread, where up to ``THREAD_WORK`` is
allowed, so that no other user's call waits for it. A pattern RE2 cannot run makes the tool
uncallable (:class:`UnusableSchema`); listed tools never have one (they are left out of the
listing).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from langgraph.prebuilt import ToolRuntime
from langgraph.prebuilt.tool_node import ToolInvocationError as LangGraphToolInvocationError
from pydantic_core import InitErrorDetails, PydanticCustomError, ValidationError
from referencing.exceptions import Unresolvable

from langgraph_mcp._call.call import Call, Next
from langgraph_mcp._call.results import call_site, failure
from langgraph_mcp._session.plain import plain_check
from langgraph_mcp._support.patterns import (
    INLINE_WORK,
    THREAD_WORK,
    Deferred,
    PatternNotChecked,
    UnsafePattern,
    regex_budget,
    search,
)
from langgraph_mcp._support.schema import schema_validator, short_text, unresolvable_refs
from langgraph_mcp.errors import MCPError, MissingValue
from langgraph_mcp.options import ArgumentSource, FromConfig, FromContext, FromState, FromStore

__all__ = [
    "ArgumentChecker",
    "ToolInvocationError",
    "UnusableSchema",
    "check_arguments",
    "describe_source",
    "hidden_values",
    "resolve_source",
]

logger = logging.getLogger("langgraph_mcp.tools")


# -- checking arguments --------------------------------------------------------------------------

_PYDANTIC_TYPE_ERRORS = {
    "integer": "int_type",
    "number": "float_type",
    "string": "string_type",
    "boolean": "bool_type",
    "array": "list_type",
    "object": "dict_type",
    "null": "none_required",
}


def _pydantic_type_error(expected: str, value: Any) -> str:
    """The pydantic error type a pydantic model would report for this value."""
    if isinstance(value, str) and expected in ("integer", "number", "boolean"):
        try:
            float(value)
        except ValueError:
            return {"integer": "int_parsing", "number": "float_parsing", "boolean": "bool_parsing"}[expected]
    if expected == "integer" and isinstance(value, float) and not isinstance(value, bool):
        return "int_from_float"
    return _PYDANTIC_TYPE_ERRORS[expected]


def _custom(message: str) -> PydanticCustomError:
    # Given as context, not as the template: the message is shown exactly as written.
    return PydanticCustomError("json_schema", "{message}", {"message": message})


def _schema_errors(
    validator: Validator, arguments: dict[str, Any], schema: Mapping[str, Any]
) -> list[InitErrorDetails]:
    """JSON-schema violations as pydantic error details, using pydantic's wording where
    the two overlap (missing field, wrong type, extra field, pattern) so messages match
    ``ToolNode``'s."""
    properties = schema.get("properties")
    order = {name: i for i, name in enumerate(properties if isinstance(properties, dict) else {})}
    found: list[InitErrorDetails] = []
    try:
        errors = list(validator.iter_errors(arguments))
    except PatternNotChecked as exc:  # the check fails as a whole: nothing passes unchecked
        return [InitErrorDetails(type=_custom(exc.message), loc=(), input=arguments)]
    for error in errors:
        path = tuple(error.absolute_path)
        instance = error.instance
        if error.validator == "required" and isinstance(instance, dict):
            required = error.validator_value if isinstance(error.validator_value, list) else []
            for name in required:
                missing = InitErrorDetails(type="missing", loc=(*path, name), input=instance)
                # jsonschema reports each missing property as its own error, naming them all.
                if name not in instance and missing not in found:
                    found.append(missing)
        elif error.validator == "additionalProperties" and isinstance(instance, dict):
            local = error.schema if isinstance(error.schema, dict) else {}
            known = set(local.get("properties") or {})
            extras = [k for k in instance if k not in known]
            patterns = local.get("patternProperties")
            if extras and not patterns:
                for k in extras:
                    found.append(InitErrorDetails(type="extra_forbidden", loc=(*path, k), input=instance[k]))
            elif extras and isinstance(patterns, dict):
                # Checked already by the validator (as extras): a name that matches none.
                unmatched = sorted(k for k in extras if not any(search(p, k) for p in patterns))
                verb = "does" if len(unmatched) == 1 else "do"
                regexes = ", ".join(f"'{p}'" for p in sorted(patterns))
                text = f"{', '.join(map(repr, unmatched))} {verb} not match any of the regexes: {regexes}"
                found.append(InitErrorDetails(type=_custom(text), loc=path, input=instance))
            else:
                found.append(InitErrorDetails(type=_custom(error.message), loc=path, input=instance))
        elif (
            error.validator == "type"
            and isinstance(error.validator_value, str)
            and error.validator_value in _PYDANTIC_TYPE_ERRORS
        ):
            kind = _pydantic_type_error(error.validator_value, instance)
            found.append(InitErrorDetails(type=kind, loc=path, input=instance))
        elif error.validator == "pattern" and isinstance(error.validator_value, str):
            found.append(
                InitErrorDetails(
                    type="string_pattern_mismatch",
                    loc=path,
                    input=instance,
                    ctx={"pattern": error.validator_value},
                )
            )
        else:
            found.append(InitErrorDetails(type=_custom(error.message), loc=path, input=instance))

    def key(item: InitErrorDetails) -> tuple[int, str]:
        loc = item.get("loc", ())
        first = order.get(loc[0], len(order)) if loc and isinstance(loc[0], str) else -1
        return first, ".".join(map(str, loc))

    return sorted(found, key=key)


class ToolInvocationError(LangGraphToolInvocationError, MCPError):
    """Arguments that break a tool's ``inputSchema``: LangGraph's ``ToolInvocationError`` (so
    ``ToolNode``'s ``handle_tool_errors`` treats them as it treats bad arguments to a local tool),
    and an :class:`~langgraph_mcp.MCPError`. It keeps LangGraph's class name: ``ToolNode`` puts
    ``repr(error)`` in the model's message, which must read as it does for a local tool."""


class UnusableSchema(ToolInvocationError):
    """A tool's ``inputSchema`` cannot be used to check its arguments (a ``$ref`` that does not
    resolve within the schema, ...): the tool cannot be called. ``reason`` says why."""

    def __init__(self, tool_name: str, reason: str, arguments: dict[str, Any]) -> None:
        self.reason = reason
        detail = InitErrorDetails(
            type=PydanticCustomError("unusable_schema", "{reason}", {"reason": reason}),
            loc=(),
            input=arguments,
        )
        source = ValidationError.from_exception_data(tool_name, [detail])
        super().__init__(tool_name, source, arguments, source.errors())


_checks: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    """Where argument checks too costly for the event loop run (two at a time: one per core)."""
    global _checks
    if _checks is None:
        _checks = ThreadPoolExecutor(max_workers=2, thread_name_prefix="langgraph-mcp-check")
    return _checks


def _optional_header_arguments(schema: Any) -> frozenset[str]:
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return frozenset()
    required = schema.get("required")
    required = set(required) if isinstance(required, list) else set()
    return frozenset(
        name
        for name, spec in properties.items()
        if isinstance(spec, Mapping)
        and "x-mcp-header" in spec
        and name not in required
        and isinstance(spec.get("type"), str)
        and spec["type"] != "null"
    )


class ArgumentChecker:
    """Checks one tool's arguments against its ``inputSchema`` (compiled on first use)."""

    def __init__(self, server: str, tool_name: str, mcp_name: str, schema: dict[str, Any]) -> None:
        self.server = server
        self.tool_name = tool_name
        self.mcp_name = mcp_name
        self.schema = schema
        self._validator: Validator | None = None
        self._refusal: UnsafePattern | None = None
        self._compiled = False
        self._plain = plain_check(schema)
        """Passes arguments that surely fit a plain schema without the validator."""
        self.null_is_absent = _optional_header_arguments(schema)
        """Optional arguments mirrored into an ``Mcp-Param-*`` request header (``x-mcp-header``)
        whose type has no ``null``: sent as ``null`` they mean *not given* (the header is then
        omitted), so they are left out before the check instead of failing it."""

    def drop_null_headers(self, arguments: dict[str, Any]) -> None:
        """Leave out the :attr:`null_is_absent` arguments given as ``null``."""
        for name in self.null_is_absent:
            if name in arguments and arguments[name] is None:
                del arguments[name]

    def check(self, arguments: dict[str, Any]) -> None:
        """Raise :class:`ToolInvocationError` (LangGraph's) when ``arguments`` break
        the schema, or its subclass :class:`UnusableSchema` when the schema cannot be used to
        check them (a ``$ref`` that does not resolve within it: references are never fetched).
        Raises nothing else.

        A schema that is not valid JSON schema is reported once, as a warning, and the arguments
        pass unchecked (listed tools never have one: :func:`vet_tool` leaves them out); one with
        a pattern RE2 cannot run fails closed: every check raises :class:`UnusableSchema`.

        Its patterns may do ``INLINE_WORK`` in all: a string too long to check against one within
        that fails the check, saying so (:meth:`acheck` allows more, off the event loop).
        """
        with regex_budget(INLINE_WORK):
            self._check(arguments)

    def _check(self, arguments: dict[str, Any]) -> None:
        if self._plain is not None and self._plain(arguments):
            return
        if not self._compiled:
            # (Marked compiled only once the outcome is set: a check in a worker thread may be
            # compiling it while another runs on the event loop.)
            try:
                self._validator = schema_validator(self.schema)
            except Deferred:  # a pattern to compile first: in the worker thread (acheck)
                raise
            except SchemaError as exc:
                if isinstance(exc.cause, UnsafePattern):  # fails closed: never checked otherwise
                    self._refusal = exc.cause
                else:
                    self._invalid(exc)
            except Exception as exc:
                self._invalid(exc)
            self._compiled = True
        if self._refusal is not None:
            raise UnusableSchema(self.tool_name, self._unusable(self._refusal), arguments)
        if self._validator is None:
            return
        try:
            errors = _schema_errors(self._validator, arguments, self.schema)
        except Deferred:
            raise
        except Exception as exc:
            raise UnusableSchema(self.tool_name, self._unusable(exc), arguments) from None
        if errors:
            source = ValidationError.from_exception_data(self.tool_name, errors)
            raise ToolInvocationError(self.tool_name, source, arguments, source.errors())

    def _invalid(self, exc: Exception) -> None:
        logger.warning(
            "MCP tool %r of server %r has an invalid inputSchema (%s); arguments are not checked",
            self.mcp_name,
            self.server,
            exc.message if isinstance(exc, SchemaError) else f"{type(exc).__name__}: {exc}",
        )

    async def acheck(self, arguments: dict[str, Any]) -> None:
        """:meth:`check`, never holding the event loop for long: a check whose patterns need
        more work than ``INLINE_WORK`` runs again in a worker thread (``THREAD_WORK`` allowed)."""
        if self._plain is not None and self._plain(arguments):
            return  # no pattern to run
        try:
            with regex_budget(INLINE_WORK, defer=True):
                self._check(arguments)
            return
        except Deferred:
            pass
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(_executor(), self._check_in_thread, arguments)

    def _check_in_thread(self, arguments: dict[str, Any]) -> None:
        with regex_budget(THREAD_WORK):
            self._check(arguments)

    def _unusable(self, exc: Exception) -> str:
        where = f"MCP tool {self.mcp_name!r} of server {self.server!r}"
        if isinstance(exc, UnsafePattern):
            what = "is not a valid regular expression" if exc.invalid else "cannot be checked in linear time"
            return short_text(f"{where} cannot be called: its inputSchema has a pattern that {what}: {exc}")
        if isinstance(exc, Unresolvable) or isinstance(exc.__cause__, Unresolvable):
            try:
                refs = unresolvable_refs(self.schema)
            except Exception:
                refs = []
            named = f" ({', '.join(map(repr, refs))})" if refs else ""
            return short_text(
                f"{where} cannot be called: its inputSchema has a $ref that does not resolve within "
                f"the schema{named}; references are never fetched"
            )
        return short_text(
            f"{where} cannot be called: its arguments could not be checked against its inputSchema "
            f"({type(exc).__name__}: {exc})"
        )


async def resolve_source(source: ArgumentSource, runtime: ToolRuntime) -> Any:
    """The value of ``source`` for this call.

    Raises:
        MissingValue: the source has no value.
    """
    if isinstance(source, FromState | FromContext | FromConfig | FromStore):
        return await source.resolve(runtime)
    value = source(runtime)
    if inspect.isawaitable(value):
        value = await value
    return value


def describe_source(source: ArgumentSource) -> str:
    """How ``source`` is named in messages."""
    if isinstance(source, FromState | FromContext | FromConfig | FromStore):
        return source.describe()
    return f"{getattr(source, '__qualname__', type(source).__name__)}(runtime)"


# -- the call's steps (:func:`~langgraph_mcp._call.pipeline.run_pipeline`) -------------------------


async def check_arguments(call: Call, next_step: Next) -> Any:
    """The model may not choose a hidden argument; the rest must fit the schema (LangGraph's
    ``ToolInvocationError`` otherwise). A schema no arguments could fit fails the call."""
    arguments, checker = call.arguments, call.checker
    for hidden in call.options.hidden:
        arguments.pop(hidden, None)
    if checker.null_is_absent:
        checker.drop_null_headers(arguments)
    try:
        await checker.acheck(arguments)  # off the event loop when it is costly
    except UnusableSchema as exc:  # no arguments could fit: not the model's to fix
        return failure(call_site(call), exc.reason, kind="protocol")
    return await next_step(call)


async def hidden_values(call: Call, next_step: Next) -> Any:
    """The hidden arguments' values, each from its source in the run; the call fails when one
    has none."""
    hidden = call.options.hidden
    if hidden:
        values: dict[str, Any] = {}
        for argument, source in hidden.items():
            where = f"hidden argument {argument!r} of MCP tool {call.name!r} (server {call.server!r})"
            if call.runtime is None:
                text = f"{where} comes from {describe_source(source)}, but the tool runs outside a graph"
                return failure(call_site(call), text, kind="hidden_argument")
            try:
                values[argument] = await resolve_source(source, call.runtime)
            except MissingValue as exc:
                text = f"{where} comes from {describe_source(source)}: {exc}"
                return failure(call_site(call), text, kind="hidden_argument")
        call.hidden = values
    return await next_step(call)
