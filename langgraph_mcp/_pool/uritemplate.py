"""RFC 6570 URI templates (every level): expansion, and the variables a template names."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph_mcp.errors import MCPArgumentError

__all__ = ["TemplateVariable", "expand_uri_template", "is_undefined", "template_variables"]

_EXPRESSION = re.compile(r"\{([^{}]*)\}")
_VARNAME = re.compile(r"^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*$")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_RESERVED = frozenset(":/?#[]@!$&'()*+,;=")
_PCT = re.compile(r"%[0-9A-Fa-f]{2}")


@dataclass(frozen=True)
class _Operator:
    first: str
    sep: str
    named: bool
    if_empty: str
    reserved: bool


_OPERATORS = {
    "": _Operator("", ",", False, "", False),
    "+": _Operator("", ",", False, "", True),
    "#": _Operator("#", ",", False, "", True),
    ".": _Operator(".", ".", False, "", False),
    "/": _Operator("/", "/", False, "", False),
    ";": _Operator(";", ";", True, "", False),
    "?": _Operator("?", "&", True, "=", False),
    "&": _Operator("&", "&", True, "=", False),
}
_OPTIONAL_OPERATORS = frozenset("#;?&")
"""Operators whose variables may be left out without breaking the URI's path."""


@dataclass(frozen=True)
class TemplateVariable:
    """One variable of a template: its name, and whether the URI needs it (a variable in the
    path does; one in a query, fragment or path parameter does not)."""

    name: str
    required: bool
    explode: bool
    prefix: int | None


def _parse(template: str) -> list[tuple[str, list[TemplateVariable]]]:
    expressions = []
    for match in _EXPRESSION.finditer(template):
        body = match.group(1)
        op = body[:1] if body[:1] in _OPERATORS and body[:1] != "" else ""
        if body[:1] in "=,!@|":
            raise MCPArgumentError(
                None, None, f"URI template {template!r}: operator {body[:1]!r} is reserved"
            )
        specs = []
        for spec in (body[len(op) :]).split(","):
            explode = spec.endswith("*")
            name = spec[:-1] if explode else spec
            prefix = None
            if ":" in name:
                name, _, digits = name.partition(":")
                if not digits.isdigit() or not 0 < int(digits) < 10000:
                    raise MCPArgumentError(
                        None, None, f"URI template {template!r}: bad prefix length in {{{body}}}"
                    )
                prefix = int(digits)
            if not _VARNAME.match(name):
                raise MCPArgumentError(
                    None, None, f"URI template {template!r}: bad variable name {name!r} in {{{body}}}"
                )
            specs.append(TemplateVariable(name, op not in _OPTIONAL_OPERATORS, explode, prefix))
        expressions.append((op, specs))
    rest = _EXPRESSION.sub("", template)
    if "{" in rest or "}" in rest:
        raise MCPArgumentError(None, None, f"URI template {template!r}: unbalanced braces")
    return expressions


def template_variables(template: str) -> list[TemplateVariable]:
    """The variables ``template`` names, in order, each once.

    Raises:
        ValueError: ``template`` is not a valid URI template.
    """
    seen: dict[str, TemplateVariable] = {}
    for _op, specs in _parse(template):
        for spec in specs:
            if spec.name not in seen or (spec.required and not seen[spec.name].required):
                seen[spec.name] = spec
    return list(seen.values())


def _encode(value: str, reserved: bool) -> str:
    out = []
    i = 0
    while i < len(value):
        ch = value[i]
        if reserved and ch == "%" and _PCT.match(value, i):
            out.append(value[i : i + 3])
            i += 3
            continue
        if ch in _UNRESERVED or (reserved and ch in _RESERVED):
            out.append(ch)
        else:
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8")))
        i += 1
    return "".join(out)


def _expand(op: _Operator, spec: TemplateVariable, value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, Mapping):
        pairs = [(str(k), str(v)) for k, v in value.items()]
        if not pairs:
            return None
        if spec.explode:
            return op.sep.join(
                f"{_encode(k, op.reserved)}={_encode(v, op.reserved)}"
                if not (op.named and v == "") or op.if_empty
                else _encode(k, op.reserved)
                for k, v in pairs
            )
        joined = ",".join(f"{_encode(k, op.reserved)},{_encode(v, op.reserved)}" for k, v in pairs)
        return f"{spec.name}={joined}" if op.named else joined
    if isinstance(value, Sequence) and not isinstance(value, str):
        items = [str(v) for v in value]
        if not items:
            return None
        if spec.explode:
            if op.named:
                return op.sep.join(
                    f"{spec.name}={_encode(v, op.reserved)}" if v or op.if_empty else spec.name for v in items
                )
            return op.sep.join(_encode(v, op.reserved) for v in items)
        joined = ",".join(_encode(v, op.reserved) for v in items)
        return f"{spec.name}={joined}" if op.named else joined
    text = str(value)
    if spec.prefix is not None:
        text = text[: spec.prefix]
    encoded = _encode(text, op.reserved)
    if op.named:
        return f"{spec.name}={encoded}" if text else f"{spec.name}{op.if_empty}"
    return encoded


def is_undefined(value: Any) -> bool:
    """RFC 6570's undefined: ``None``, an empty list or an empty mapping (``""`` is defined)."""
    if value is None:
        return True
    if isinstance(value, Mapping) or (isinstance(value, Sequence) and not isinstance(value, str)):
        return len(value) == 0
    return False


def expand_uri_template(template: str, values: Mapping[str, Any]) -> str:
    """Expand an RFC 6570 URI template (all four levels: ``{var}``, ``{+var}``, ``{#var}``,
    ``{.var}``, ``{/var}``, ``{;var}``, ``{?var}``, ``{&var}``, ``:N`` prefixes and ``*``
    explosion). A value is a string (or anything ``str()`` turns into one), a list, or a mapping;
    an undefined variable (missing or ``None``) expands to nothing, as the RFC says.

    Raises:
        ValueError: ``template`` is not a valid URI template.
    """
    expressions = iter(_parse(template))

    def expand(_match: re.Match[str]) -> str:
        op_char, specs = next(expressions)
        op = _OPERATORS[op_char]
        parts = [part for spec in specs if (part := _expand(op, spec, values.get(spec.name))) is not None]
        if not parts:
            return ""
        return op.first + op.sep.join(parts)

    out = []
    end = 0
    for match in _EXPRESSION.finditer(template):
        out.append(_encode(template[end : match.start()], reserved=True))  # literals (RFC 3.1)
        out.append(expand(match))
        end = match.end()
    out.append(_encode(template[end:], reserved=True))
    return "".join(out)
