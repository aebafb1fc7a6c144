"""Tool arguments checked against the MCP ``inputSchema``, reported the way ``ToolNode`` does.

LangChain does not validate a dict (JSON-schema) ``args_schema``, so an MCP tool checks its
arguments itself, before the server is contacted. Violations become LangGraph's
``ToolInvocationError`` with pydantic-style details, using pydantic's wording where the two
overlap (missing field, wrong type, extra field), so ``ToolNode`` reports them exactly as it
reports bad arguments to a local tool.
"""

from __future__ import annotations

import logging
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from langgraph.prebuilt.tool_node import ToolInvocationError
from pydantic_core import InitErrorDetails, PydanticCustomError, ValidationError

__all__ = ["ArgumentChecker"]

logger = logging.getLogger("langgraph_mcp.tools")


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
    # Braces in a message would be read as format fields.
    return PydanticCustomError("json_schema", message.replace("{", "{{").replace("}", "}}"))


def _schema_errors(
    validator: Validator, arguments: dict[str, Any], schema: dict[str, Any]
) -> list[InitErrorDetails]:
    """JSON-schema violations as pydantic error details, using pydantic's wording where
    the two overlap (missing field, wrong type, extra field) so messages match ``ToolNode``'s."""
    order = {name: i for i, name in enumerate(schema.get("properties") or {})}
    found: list[InitErrorDetails] = []
    for error in validator.iter_errors(arguments):
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
            if extras and not local.get("patternProperties"):
                for k in extras:
                    found.append(InitErrorDetails(type="extra_forbidden", loc=(*path, k), input=instance[k]))
            else:
                found.append(InitErrorDetails(type=_custom(error.message), loc=path, input=instance))
        elif error.validator == "type" and error.validator_value in _PYDANTIC_TYPE_ERRORS:
            kind = _pydantic_type_error(error.validator_value, instance)
            found.append(InitErrorDetails(type=kind, loc=path, input=instance))
        else:
            found.append(InitErrorDetails(type=_custom(error.message), loc=path, input=instance))

    def key(item: InitErrorDetails) -> tuple[int, str]:
        loc = item.get("loc", ())
        first = order.get(loc[0], len(order)) if loc and isinstance(loc[0], str) else -1
        return first, ".".join(map(str, loc))

    return sorted(found, key=key)


class ArgumentChecker:
    """Checks one tool's arguments against its ``inputSchema`` (compiled on first use)."""

    def __init__(self, server: str, tool_name: str, mcp_name: str, schema: dict[str, Any]) -> None:
        self.server = server
        self.tool_name = tool_name
        self.mcp_name = mcp_name
        self.schema = schema
        self._validator: Validator | None = None
        self._compiled = False

    def check(self, arguments: dict[str, Any]) -> None:
        """Raise ``ToolInvocationError`` when ``arguments`` break the schema.

        An invalid schema is reported once, as a warning, and the arguments pass unchecked.
        """
        if not self._compiled:
            self._compiled = True
            try:
                cls = jsonschema.validators.validator_for(
                    self.schema, default=jsonschema.Draft202012Validator
                )
                cls.check_schema(self.schema)
                self._validator = cls(self.schema)
            except SchemaError as exc:
                logger.warning(
                    "MCP tool %r of server %r has an invalid inputSchema (%s); arguments are not checked",
                    self.mcp_name,
                    self.server,
                    exc.message,
                )
        if self._validator is None:
            return
        errors = _schema_errors(self._validator, arguments, self.schema)
        if errors:
            source = ValidationError.from_exception_data(self.tool_name, errors)
            raise ToolInvocationError(self.tool_name, source, arguments, source.errors())
