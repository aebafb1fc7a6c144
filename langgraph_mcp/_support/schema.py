"""Tool definitions from MCP servers, which are not trusted: vetted when listed, and tool
arguments checked against their ``inputSchema``.

:func:`vet_tool` checks one entry of a ``tools/list`` result, as the server sent it, and leaves it
out (with a warning naming the server, the tool and why) when a model could not be given it or
this package could not call it: not a JSON object, no name, no ``inputSchema`` or one whose root
is not ``"type": "object"``, a schema that is not valid JSON schema, a ``$ref`` that does not
resolve within the schema itself, a schema too large or too deep once LangChain inlines its
``$ref``s (as ``bind_tools`` does on every model call), ``execution.taskSupport: "required"``
where calls cannot run as tasks (the ``tasks`` option off, or a 2025-11-25 server that does not
declare task-augmented calls),
or a ``pattern`` or ``patternProperties`` regular expression (in its ``inputSchema`` or
``outputSchema``) that cannot run in time linear in its input (see
:func:`~langgraph_mcp._support.patterns.compile_pattern`: patterns run on RE2, never on a
backtracking engine).

Arguments are checked against the vetted schemas by
:class:`~langgraph_mcp._call.arguments.ArgumentChecker` (which knows LangGraph's
error types; this module imports nothing from LangGraph, as the session layer uses it).

No reference in a server's schema is ever fetched or read: :data:`REGISTRY` refuses every URI
that is not part of the schema itself (JSON schema's own metaschemas, bundled with
``jsonschema``, excepted).

:func:`model_schema` is the schema a model is given: descriptions and titles in it sanitised
(see :func:`~langgraph_mcp._support.sanitise.sanitise_text`).
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping
from typing import Any

import jsonschema
import mcp_types as types
import referencing.jsonschema
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from jsonschema_specifications import REGISTRY as SPECIFICATIONS  # type: ignore[import-untyped]
from langchain_core.utils.json_schema import dereference_refs
from mcp.shared.inbound import find_invalid_x_mcp_header
from pydantic import ValidationError as ModelValidationError
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource

from langgraph_mcp._support.patterns import UnsafePattern, compile_pattern, safe_validator_class
from langgraph_mcp._support.plainschema import surely_valid
from langgraph_mcp._support.sanitise import sanitise_text
from langgraph_mcp.errors import MCPError

__all__ = [
    "MAX_SCHEMA_DEPTH",
    "MAX_SCHEMA_VALUES",
    "REGISTRY",
    "short_text",
    "unresolvable_refs",
    "model_schema",
    "schema_problem",
    "schema_validator",
    "unsafe_pattern",
    "vet_tool",
]

logger = logging.getLogger("langgraph_mcp.tools")

MAX_SCHEMA_VALUES = 50_000
"""The most JSON values an ``inputSchema`` may hold once its ``$ref``s are inlined."""
MAX_SCHEMA_DEPTH = 100
"""The deepest an ``inputSchema`` may nest once its ``$ref``s are inlined."""
_SHOWN = 300  # characters of a reason or a name put in a warning


def _refuse(uri: str) -> Resource[Any]:
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


REGISTRY: Registry[Any] = Registry(retrieve=_refuse)  # type: ignore[call-arg]
"""Resolves nothing beyond the schema itself: every other URI is refused, never fetched or read."""
_RESOLVING: Registry[Any] = SPECIFICATIONS.combine(REGISTRY)  # what a validator resolves against


def schema_validator(schema: dict[str, Any]) -> Validator:
    """A validator for ``schema`` (its ``$schema`` dialect, else draft 2020-12) that resolves
    ``$ref`` within the schema only and runs its patterns on RE2
    (:func:`~langgraph_mcp._support.patterns.safe_validator_class`).

    Raises:
        SchemaError: ``schema`` is not a valid JSON schema (a pattern RE2 cannot run is not a
            valid ``regex`` here; its ``cause`` is an :class:`UnsafePattern`).
    """
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    if not (cls is jsonschema.Draft202012Validator and surely_valid(schema)):
        for error in _metaschema_validator(cls).iter_errors(schema):  # cls.check_schema, kept warm
            raise SchemaError.create_from(error)
    return safe_validator_class(cls)(schema, registry=REGISTRY)


def _is_regex(instance: object) -> bool:
    if isinstance(instance, str):
        compile_pattern(instance)  # never Python's re: compiling may be costly too
    return True


@functools.cache
def _metaschema_validator(cls: type[Validator]) -> Validator:
    """What ``cls.check_schema`` checks a schema with, made once per dialect: made anew for each
    schema, it takes most of the time a listing takes to check. A ``regex`` is one RE2 runs."""
    meta = jsonschema.validators.validator_for(cls.META_SCHEMA, default=cls)
    formats = jsonschema.FormatChecker(())
    formats.checkers = {**meta.FORMAT_CHECKER.checkers, "regex": (_is_regex, UnsafePattern)}
    return meta(cls.META_SCHEMA, format_checker=formats)


def unsafe_pattern(schema: dict[str, Any]) -> UnsafePattern | None:
    """The first ``pattern`` or ``patternProperties`` name in ``schema`` that RE2 cannot run
    (``None``: there is none), wherever a validator may reach it: in any subschema, and at any
    place a ``$ref`` points to."""
    specification = _specification(schema)
    root = specification.create_resource(schema)
    pending = [(root, _RESOLVING.resolver_with_root(root))]
    seen: set[int] = set()
    while pending:
        resource, resolver = pending.pop()
        contents = resource.contents
        if not isinstance(contents, dict) or id(contents) in seen:
            continue
        seen.add(id(contents))
        patterns = [contents["pattern"]] if "pattern" in contents else []
        if isinstance(contents.get("patternProperties"), dict):
            patterns.extend(contents["patternProperties"])
        for pattern in patterns:
            try:
                compile_pattern(pattern)
            except UnsafePattern as exc:
                return exc
        for key in _REF_KEYWORDS:
            if isinstance(ref := contents.get(key), str):
                try:
                    resolved = resolver.lookup(ref)
                except Exception:  # reported as an unresolvable $ref, where that matters
                    continue
                target = specification.create_resource(resolved.contents)
                pending.append((target, resolved.resolver.in_subresource(target)))
        pending.extend((sub, resolver.in_subresource(sub)) for sub in resource.subresources())
    return None


def _unsafe(exc: UnsafePattern) -> str:
    if exc.invalid:
        return f"has a pattern that is not a valid regular expression: {exc}"
    return f"has a pattern that cannot be checked in linear time: {exc}"


# -- what a model is given -----------------------------------------------------------------------

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_SCHEMA_ONE = (
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
)


def _sanitised(schema: Any, depth: int = 0) -> Any:
    if not isinstance(schema, dict) or depth > MAX_SCHEMA_DEPTH:
        return schema
    out = dict(schema)
    for key in ("description", "title"):
        if isinstance(out.get(key), str):
            out[key] = sanitise_text(out[key])
    for key in _SCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {name: _sanitised(sub, depth + 1) for name, sub in out[key].items()}
    for key in _SCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [_sanitised(sub, depth + 1) for sub in out[key]]
    for key in _SCHEMA_ONE:
        if isinstance(out.get(key), dict):
            out[key] = _sanitised(out[key], depth + 1)
    if isinstance(out.get("dependencies"), dict):  # draft 7: a schema, or a list of names
        out["dependencies"] = {name: _sanitised(sub, depth + 1) for name, sub in out["dependencies"].items()}
    return out


def model_schema(input_schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema a model is given for a tool: its ``inputSchema`` with every description and
    title in it sanitised, and ``"type": "object"`` and empty ``"properties"`` added when
    missing. A new dict; ``input_schema`` is not changed."""
    schema: dict[str, Any] = _sanitised(dict(input_schema))
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


# -- vetting a listed tool -----------------------------------------------------------------------


class _LeftOut(MCPError):
    """Why a tool is left out of a listing."""


class _TooLarge(MCPError):
    pass


def short_text(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _short(value: Any) -> str:
    return short_text(repr(value))


_NOWHERE = object()
_REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")


def _inline_target(ref: str, schema: dict[str, Any]) -> Any:
    """What LangChain's ``dereference_refs`` puts in place of ``{"$ref": ref}`` (a JSON
    pointer into the schema), or ``_NOWHERE``."""
    parts = ref.split("/")
    if parts[0] != "#":
        return _NOWHERE
    node: Any = schema
    for part in parts[1:]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _NOWHERE
    return node


def _check_inlined_size(schema: dict[str, Any]) -> None:
    """Walk ``schema`` the way LangChain inlines its local ``$ref``s (cycles cut, ``$defs`` copied
    as they are), and stop as soon as it grows past :data:`MAX_SCHEMA_VALUES` values or
    :data:`MAX_SCHEMA_DEPTH` levels: a few hundred bytes of ``$ref``s can otherwise inline to
    gigabytes on every model call.

    Raises:
        _TooLarge: saying which limit it passed.
    """
    count = 0

    def visit(node: Any, depth: int, active: frozenset[str], follow: bool) -> None:
        nonlocal count
        count += 1
        if count > MAX_SCHEMA_VALUES:
            raise _TooLarge(f"holds more than {MAX_SCHEMA_VALUES} values once its $refs are inlined")
        if depth > MAX_SCHEMA_DEPTH:
            raise _TooLarge(f"nests more than {MAX_SCHEMA_DEPTH} levels deep once its $refs are inlined")
        if isinstance(node, dict):
            ref = node.get("$ref")
            if follow and isinstance(ref, str) and ref not in active:
                target = _inline_target(ref, schema)
                if target is not _NOWHERE:
                    visit(target, depth + 1, active | {ref}, follow)
            for key, value in node.items():
                if key != "$ref" or not follow:
                    visit(value, depth + 1, active, follow and key != "$defs")
        elif isinstance(node, list):
            for item in node:
                visit(item, depth + 1, active, follow)

    visit(schema, 0, frozenset(), True)


def unresolvable_refs(schema: dict[str, Any]) -> list[str]:
    """The ``$ref``s (and ``$dynamicRef``/``$recursiveRef``s) in ``schema`` that do not resolve
    within it, as JSON schema resolves them (base URIs from ``$id``, anchors), sorted; nothing
    is fetched."""
    root = _specification(schema).create_resource(schema)
    pending = [(root, _RESOLVING.resolver_with_root(root))]
    found: set[str] = set()
    while pending:
        resource, resolver = pending.pop()
        contents = resource.contents
        if isinstance(contents, dict):
            for key in _REF_KEYWORDS:
                ref = contents.get(key)
                if ref is None:
                    continue
                try:
                    resolver.lookup(ref)
                except Exception:  # Unresolvable, or a URI that cannot even be parsed
                    found.add(str(ref))
        pending.extend((sub, resolver.in_subresource(sub)) for sub in resource.subresources())
    return sorted(found)


_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_IN_PLACE_ONE = ("not", "if", "then", "else")


def _ref_loop(schema: dict[str, Any]) -> list[str]:
    """The ``$ref``s of a loop that leads back to where it started through keywords that apply
    to the same value (``$ref``, ``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if``/``then``/
    ``else``, ``dependentSchemas``), sorted (empty when there is none): checking any value
    against it would never end. Call only on a schema whose references all resolve."""
    specification = _specification(schema)
    root = specification.create_resource(schema)
    path: list[tuple[int, str | None]] = []  # (id of a schema, the $ref that led to it)
    done: set[int] = set()

    def visit(contents: Any, resolver: Any, via: str | None) -> list[str]:
        if not isinstance(contents, dict) or id(contents) in done or len(path) > MAX_SCHEMA_DEPTH:
            return []
        path.append((id(contents), via))
        for key in _REF_KEYWORDS:
            ref = contents.get(key)
            if isinstance(ref, str):
                resolved = resolver.lookup(ref)
                on_path = [i for i, (seen, _) in enumerate(path) if seen == id(resolved.contents)]
                if on_path:
                    return sorted({r for _, r in path[on_path[0] + 1 :] if r is not None} | {ref})
                if loop := visit(resolved.contents, resolved.resolver, ref):
                    return loop
        subschemas = [sub for key in _IN_PLACE_ONE if isinstance(sub := contents.get(key), dict)]
        for key in _IN_PLACE_LISTS:
            if isinstance(contents.get(key), list):
                subschemas.extend(contents[key])
        if isinstance(contents.get("dependentSchemas"), dict):
            subschemas.extend(contents["dependentSchemas"].values())
        for sub in subschemas:
            if isinstance(sub, dict):
                inner = resolver.in_subresource(specification.create_resource(sub))
                if loop := visit(sub, inner, None):
                    return loop
        path.pop()
        done.add(id(contents))
        return []

    # From every schema in the document (under "properties", "items", ... too).
    pending = [(root, _RESOLVING.resolver_with_root(root))]
    while pending:
        resource, resolver = pending.pop()
        if loop := visit(resource.contents, resolver, None):
            return loop
        pending.extend((sub, resolver.in_subresource(sub)) for sub in resource.subresources())
    return []


def _specification(schema: dict[str, Any]) -> Any:
    dialect = schema.get("$schema")
    return referencing.jsonschema.specification_with(
        dialect if isinstance(dialect, str) else "", default=referencing.jsonschema.DRAFT202012
    )


def schema_problem(input_schema: Mapping[str, Any]) -> str | None:
    """Why ``input_schema`` cannot be given to a model or used to check arguments, completing
    "its inputSchema ..."; ``None`` when it can."""
    schema = dict(input_schema)
    if "$schema" in schema and not isinstance(schema["$schema"], str):
        return 'has a "$schema" that is not a string'
    try:
        _check_inlined_size(model_schema(schema))
    except _TooLarge as exc:
        return str(exc)
    try:
        schema_validator(schema)
    except SchemaError as exc:
        where = ".".join(map(str, exc.absolute_path))
        at = f" (at {where})" if where else ""
        if isinstance(exc.cause, UnsafePattern):
            return short_text(_unsafe(exc.cause) + at)
        return short_text(f"is not a valid JSON schema: {exc.message}" + at)
    except Exception as exc:
        return short_text(f"is not a usable JSON schema: {type(exc).__name__}: {exc}")
    try:
        refs = unresolvable_refs(schema)
        loop = _ref_loop(schema) if not refs else []
        unsafe = unsafe_pattern(schema)
    except Exception as exc:
        return short_text(f"has $refs that cannot be followed: {type(exc).__name__}: {exc}")
    if unsafe is not None:
        return short_text(_unsafe(unsafe))
    if refs:
        return short_text(
            f"has {'a $ref that does' if len(refs) == 1 else '$refs that do'} not resolve within the schema: "
            f"{', '.join(map(repr, refs))} (references are never fetched)"
        )
    if loop:
        return short_text(
            "has $refs that lead back to where they start without going into the arguments: "
            f"{', '.join(map(repr, loop))} (checking them would never end)"
        )
    try:
        json.dumps(dereference_refs(model_schema(schema)), allow_nan=False)
    except Exception as exc:
        return short_text(f"cannot be turned into a tool definition for a model: {type(exc).__name__}: {exc}")
    return None


def _vetted(raw: object, modern: bool, tasks: bool) -> types.Tool:
    if not isinstance(raw, dict):
        raise _LeftOut("it is not a JSON object")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise _LeftOut("it has no name")
    if "inputSchema" not in raw:
        raise _LeftOut("it has no inputSchema")
    schema = raw["inputSchema"]
    if not isinstance(schema, dict):
        raise _LeftOut(f"its inputSchema is not a JSON object: {_short(schema)}")
    if schema.get("type") != "object":
        if "type" not in schema:
            raise _LeftOut('its inputSchema has no "type": "object" at its root')
        raise _LeftOut(f'its inputSchema has "type": {_short(schema["type"])} at its root, not "object"')
    try:
        tool = types.Tool.model_validate(raw, by_name=False)
    except ModelValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"]))
        raise _LeftOut(short_text(f"its {where} is not valid: {first['msg']}")) from None
    if tool.execution is not None and tool.execution.task_support == "required" and not tasks:
        raise _LeftOut(
            'it requires task-augmented execution (execution.taskSupport: "required"), '
            "which this client does not offer"
        )
    if modern and (header := find_invalid_x_mcp_header(schema)) is not None:
        raise _LeftOut(short_text(f"its inputSchema has an invalid x-mcp-header annotation: {header}"))
    problem = schema_problem(schema)
    if problem is not None:
        raise _LeftOut(f"its inputSchema {problem}")
    if isinstance(output := raw.get("outputSchema"), dict):
        try:
            unsafe = unsafe_pattern(output)
        except Exception:  # not a schema one can walk: never checked (_session.calls.Calls._check_output)
            unsafe = None
        if unsafe is not None:
            raise _LeftOut(short_text(f"its outputSchema {_unsafe(unsafe)}"))
    return tool


def vet_tool(
    server: str,
    raw: object,
    *,
    position: int,
    modern: bool = False,
    tasks: bool = False,
    private: bool = False,
) -> types.Tool | None:
    """The tool ``raw`` defines (one entry of a ``tools/list`` result, as the server sent it), or
    ``None`` with a warning naming ``server``, the tool (by name, else by its 0-based
    ``position`` in the listing) and why, when it cannot be offered to a model or called (see
    the module docstring). ``modern``: the session speaks 2026-07-28, where a tool with an
    invalid ``x-mcp-header`` annotation must be left out too. ``tasks``: calls may come back as
    tasks, which the client follows, so a tool that requires them is kept. ``private``: the listing
    is one user's: the warning names neither the tool nor what is wrong with it (both are theirs)."""
    try:
        return _vetted(raw, modern, tasks)
    except _LeftOut as exc:
        if private:
            logger.warning("MCP server %r: a tool it listed for a user is left out: it is not valid", server)
            return None
        name = raw.get("name") if isinstance(raw, dict) else None
        which = (
            f"tool {_short(name)}"
            if isinstance(name, str) and name
            else f"tool #{position + 1} of its listing"
        )
        logger.warning("MCP server %r: %s is left out: %s", server, which, exc)
        return None
