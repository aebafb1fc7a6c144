"""Regular expressions from servers, run in time linear in their input: never by a backtracking
engine.

A JSON schema's ``pattern`` and ``patternProperties`` come from the server (a tool's
``inputSchema`` or ``outputSchema``, an elicitation's requested schema). ``jsonschema`` runs them
with Python's ``re``, a backtracking engine: ``^(a+)+$`` takes it exponential time to reject
thirty ``a`` and a ``!``, and the whole event loop (every other user's call) waits. Here they run on
RE2 (``google-re2``), and the validator classes of :func:`safe_validator_class` replace every
keyword that runs one (``pattern``, ``patternProperties``, ``additionalProperties``,
``unevaluatedProperties``), in every dialect a subschema may switch to.

* Syntax: RE2's, which covers the ECMA-262 syntax schemas use (ECMA's ``\\uXXXX``,
  ``\\u{X…}`` and ``\\cX`` escapes are translated). ``$`` matches only at the very end, and
  ``\\d``/``\\w`` only ASCII, as in ECMA-262. Lookaround and backreferences cannot run in linear
  time: such a pattern, or one whose automaton would pass :data:`MAX_PATTERN_MEMORY`, raises
  :class:`UnsafePattern`, and is never handed to a backtracking engine instead. It fails closed:
  a listed tool whose schema has one is left out of the listing with a warning naming the server,
  the tool and the pattern (:func:`~langgraph_mcp._support.schema.vet_tool`); elsewhere the check
  raises, and the caller refuses what it was checking with a message saying so.
* Work: RE2's time is linear in the text, times up to ~100-230 ns per instruction of the
  pattern's program when its automaton cache thrashes. Each match is charged ``program size x
  (bytes + 1)`` against a budget (:func:`regex_budget`): :data:`INLINE_WORK` for one check on the
  event loop (25-60 ms at worst); an argument check that needs more runs in a worker thread (RE2
  releases the GIL) with up to :data:`THREAD_WORK`. A string that would pass the budget fails
  the check with a :class:`PatternNotChecked` error saying it is too long to check against that
  pattern.
* Memory: each compiled pattern holds at most :data:`MAX_PATTERN_MEMORY`; the last 128 are kept.
"""

from __future__ import annotations

import collections
import functools
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import attrs
import jsonschema
import re2  # type: ignore[import-untyped]
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator
from referencing.jsonschema import lookup_recursive_ref

from langgraph_mcp.errors import MCPError

__all__ = [
    "INLINE_WORK",
    "MAX_PATTERN_LENGTH",
    "MAX_PATTERN_MEMORY",
    "THREAD_WORK",
    "Deferred",
    "PatternNotChecked",
    "UnsafePattern",
    "compile_pattern",
    "is_compiled",
    "regex_budget",
    "safe_validator_class",
    "search",
]

MAX_PATTERN_LENGTH = 5_000
"""The longest pattern (in characters) that is compiled at all."""
MAX_UNICODE_CLASSES = 16
"""The most Unicode classes (``\\p{...}``, ``\\P{...}``) a pattern may have: each costs RE2 about
0.1 ms to build, with the GIL held."""
MAX_PATTERN_MEMORY = 1 << 20
"""Bytes one compiled pattern may use (its program and its automaton cache)."""
INLINE_WORK = 250_000
"""Work (program size x bytes) one check may do on the event loop: at ~100-230 ns per unit when
the automaton thrashes (measured on a 2-core machine, idle and loaded), 25-60 ms at worst."""
THREAD_WORK = 100_000_000
"""Work one argument check may do in a worker thread: seconds at worst, the loop unaffected."""

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would write every refused pattern to stderr
_OPTIONS.never_capture = True  # only "does it match" is asked: no submatch tracking
_OPTIONS.max_mem = MAX_PATTERN_MEMORY


class UnsafePattern(MCPError, ValueError):
    """A pattern that RE2 cannot run: ``reason`` says why; ``invalid`` when it is not a valid
    regular expression at all (else it needs what linear time cannot do, or is too large)."""

    def __init__(self, pattern: object, reason: str) -> None:
        self.pattern = pattern
        self.reason = reason
        self.invalid = not reason.startswith(_NOT_LINEAR)
        shown = pattern if not isinstance(pattern, str) or len(pattern) <= 200 else pattern[:200] + "…"
        super().__init__(f"{shown!r} ({reason})")


class Deferred(MCPError):
    """The check needs more work than the event loop may give it: run it again in a thread."""


class PatternNotChecked(ValidationError, MCPError):
    """A string too long to be checked against a pattern within the work allowed."""


class _TooCostly(MCPError):
    def __init__(self, pattern: str, most: int) -> None:
        self.pattern = pattern
        self.most = most

    def error(self, what: str, text: str) -> PatternNotChecked:
        shown = text if len(text) <= 40 else text[:40] + "…"
        return PatternNotChecked(
            f"{what} {shown!r} ({len(text)} characters) is too long to be checked against the pattern "
            f"{self.pattern!r} (at most about {max(self.most, 0)} bytes)"
        )


# -- compiling -----------------------------------------------------------------------------------

_NOT_LINEAR = ("too large for linear-time matching: ", "lookaround and backreferences need backtracking: ")
_BACKTRACKING = re.compile(r"invalid perl operator: \(\?<?[=!]|invalid escape sequence: \\[1-9k]")

_ESCAPES = re.compile(
    r"\\(?:u\{([0-9A-Fa-f]{1,6})\}|u([0-9A-Fa-f]{4})(?:\\u([0-9A-Fa-f]{4}))?|c([A-Za-z])|.)", re.S
)


def _ecma_escape(match: re.Match[str]) -> str:
    braced, unit, low, control = match.groups()
    if braced is not None:
        return f"\\x{{{braced}}}"
    if control is not None:
        return f"\\x{{{ord(control) % 32:X}}}"
    if unit is None:
        return match.group()
    code = int(unit, 16)
    if low is not None:
        second = int(low, 16)
        if 0xD800 <= code < 0xDC00 and 0xDC00 <= second < 0xE000:  # one character, as UTF-16 writes it
            return f"\\x{{{0x10000 + ((code - 0xD800) << 10) + (second - 0xDC00):X}}}"
        return f"\\x{{{code:X}}}\\x{{{second:X}}}"
    return f"\\x{{{code:X}}}"


def _to_re2(pattern: str) -> str:
    """``pattern`` with ECMA-262's ``\\u`` and ``\\c`` escapes written as RE2 writes them."""
    if "\\u" not in pattern and "\\c" not in pattern:
        return pattern
    return _ESCAPES.sub(_ecma_escape, pattern)


_CACHE_SIZE = 128
_cache: collections.OrderedDict[str, Any] = collections.OrderedDict()
_cache_lock = threading.Lock()


def _compiled(pattern: str) -> Any:
    """The compiled pattern, or the reason it cannot be (a string); the last ``_CACHE_SIZE``
    are kept."""
    with _cache_lock:
        if (hit := _cache.get(pattern)) is not None:
            _cache.move_to_end(pattern)
            return hit
    result = _compile(pattern)
    with _cache_lock:
        _cache[pattern] = result
        _cache.move_to_end(pattern)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return result


def is_compiled(pattern: object) -> bool:
    """Is ``pattern`` compiled already (or known not to compile), so using it costs no compile?"""
    with _cache_lock:
        return isinstance(pattern, str) and pattern in _cache


def _unicode_classes(pattern: str) -> int:
    """How many ``\\p``/``\\P`` escapes (Unicode classes) ``pattern`` has."""
    count = i = 0
    while (i := pattern.find("\\", i)) != -1:
        if pattern[i + 1 : i + 2] in ("p", "P"):
            count += 1
        i += 2
    return count


def _compile(pattern: str) -> Any:
    # Compiling holds the GIL throughout (no thread helps) and costs up to ~0.1 ms per Unicode
    # class written and ~100 ms for a program at MAX_PATTERN_MEMORY: both are bounded first.
    if len(pattern) > MAX_PATTERN_LENGTH:
        return f"{_NOT_LINEAR[0]}it is longer than {MAX_PATTERN_LENGTH} characters"
    if _unicode_classes(pattern) > MAX_UNICODE_CLASSES:
        return f"{_NOT_LINEAR[0]}it has more than {MAX_UNICODE_CLASSES} Unicode classes (\\p, \\P)"
    try:
        return re2.compile(_to_re2(pattern), _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "it is not a valid pattern"
        reason = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
        if _BACKTRACKING.search(reason):
            return f"{_NOT_LINEAR[1]}{reason}"
        if "too large" in reason or "invalid repetition size" in reason:
            return f"{_NOT_LINEAR[0]}{reason}"
        return reason
    except (UnicodeError, ValueError, TypeError) as exc:  # a lone surrogate, a NUL, ...
        return f"{type(exc).__name__}: {exc}"


def compile_pattern(pattern: object) -> Any:
    """``pattern`` compiled by RE2 (cached).

    Raises:
        UnsafePattern: it is not a string, or RE2 cannot run it (see the module docstring).
    """
    if not isinstance(pattern, str):
        raise UnsafePattern(pattern, "it is not a string")
    budget = _BUDGET.get()
    if budget is not None and budget.defer and not is_compiled(pattern):
        raise Deferred  # compiling may hold the event loop: done where the check goes on
    compiled = _compiled(pattern)
    if isinstance(compiled, str):
        raise UnsafePattern(pattern, compiled)
    return compiled


# -- the work allowed ----------------------------------------------------------------------------


class _Budget:
    __slots__ = ("defer", "left")

    def __init__(self, work: int, defer: bool) -> None:
        self.left = work
        self.defer = defer


_BUDGET: ContextVar[_Budget | None] = ContextVar("langgraph_mcp_regex_budget", default=None)


@contextmanager
def regex_budget(work: int = INLINE_WORK, *, defer: bool = False) -> Iterator[None]:
    """Every match in the block shares ``work``; outside any block each match has
    :data:`INLINE_WORK` of its own. ``defer``: a match that would pass it raises
    :class:`Deferred` (run the whole check again where more is allowed) instead of failing."""
    token = _BUDGET.set(_Budget(work, defer))
    try:
        yield
    finally:
        _BUDGET.reset(token)


def _search(pattern: object, text: str) -> bool:
    compiled = compile_pattern(pattern)
    data = text.encode("utf-8", "surrogatepass")
    cost = compiled.programsize * (len(data) + 1)
    budget = _BUDGET.get()
    left = INLINE_WORK if budget is None else budget.left
    if cost > left:
        if budget is not None and budget.defer:
            raise Deferred
        raise _TooCostly(str(pattern), left // max(compiled.programsize, 1) - 1)
    if budget is not None:
        budget.left -= cost
    return compiled.search(data) is not None


def search(pattern: object, text: str) -> bool | None:
    """Does ``pattern`` match somewhere in ``text``? ``None`` when ``text`` is too long to check
    within the work allowed (see :func:`regex_budget`).

    Raises:
        UnsafePattern: RE2 cannot run ``pattern``.
        Deferred: see :func:`regex_budget`.
    """
    try:
        return _search(pattern, text)
    except _TooCostly:
        return None


# -- jsonschema's keywords that run patterns -----------------------------------------------------
# Their behaviour and messages are jsonschema's (4.x, MIT licence); only the matching differs.


def _extras_msg(extras: list[Any]) -> tuple[str, str]:
    return ", ".join(repr(extra) for extra in extras), "was" if len(extras) == 1 else "were"


def _pattern(validator: Any, patrn: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "string"):
        return
    try:
        matched = _search(patrn, instance)
    except _TooCostly as exc:
        # Raised, not yielded: under "not", "if", "oneOf" or "contains" an error reads as "does
        # not match", and a value would pass for being too long to check.
        raise exc.error("the string", instance) from None
    if not matched:
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


def _pattern_properties(validator: Any, pp: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in pp.items():
        for k, v in instance.items():
            try:
                matched = _search(pattern, k)
            except _TooCostly as exc:
                raise exc.error("the property name", k) from None
            if matched:
                yield from validator.descend(v, subschema, path=k, schema_path=pattern)


def _additional(instance: Any, schema: Any) -> list[Any]:
    """The properties of ``instance`` that neither ``properties`` nor ``patternProperties`` name
    (a name too long to check raises :class:`PatternNotChecked`)."""
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extras = []
    for name in instance:
        if name in properties:
            continue
        try:
            if any(_search(pattern, name) for pattern in patterns):
                continue
        except _TooCostly as exc:
            raise exc.error("the property name", name) from None
        extras.append(name)
    return extras


def _additional_properties(validator: Any, ap: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    extras = _additional(instance, schema)
    if validator.is_type(ap, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], ap, path=extra)
    elif not ap and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {patterns}")
        else:
            error = "Additional properties are not allowed (%s %s unexpected)"
            yield ValidationError(error % _extras_msg(sorted(extras, key=str)))


def _is_valid(errors: Iterator[ValidationError]) -> bool:
    return next(errors, None) is None


def _evaluated_keys(validator: Any, instance: Any, schema: Any, draft2019: bool) -> list[Any]:
    """The keys of ``instance`` that ``schema`` evaluates (for ``unevaluatedProperties``)."""
    if validator.is_type(schema, "boolean"):
        return []
    keys: list[Any] = []

    def follow(resolved: Any) -> None:
        inner = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
        keys.extend(_evaluated_keys(inner, instance, resolved.contents, draft2019))

    if (ref := schema.get("$ref")) is not None:
        follow(validator._resolver.lookup(ref))
    if draft2019:
        if "$recursiveRef" in schema:
            follow(lookup_recursive_ref(validator._resolver))
    elif (dynamic := schema.get("$dynamicRef")) is not None:
        follow(validator._resolver.lookup(dynamic))

    if draft2019:
        for keyword in ("properties", "additionalProperties", "unevaluatedProperties"):
            if keyword in schema:
                value = schema[keyword]
                if validator.is_type(value, "boolean") and value:
                    keys += instance.keys()
                elif validator.is_type(value, "object"):
                    keys += [name for name in value if name in instance]
    else:
        properties = schema.get("properties")
        if validator.is_type(properties, "object"):
            keys += properties.keys() & instance.keys()
        for keyword in ("additionalProperties", "unevaluatedProperties"):
            if (subschema := schema.get(keyword)) is not None:
                keys += [k for k, v in instance.items() if _is_valid(validator.descend(v, subschema))]

    if "patternProperties" in schema:
        for name in instance:
            for pattern in schema["patternProperties"]:
                try:
                    if _search(pattern, name):
                        keys.append(name)
                except _TooCostly as exc:
                    raise exc.error("the property name", name) from None

    if "dependentSchemas" in schema:
        for name, subschema in schema["dependentSchemas"].items():
            if name in instance:
                keys += _evaluated_keys(validator, instance, subschema, draft2019)

    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if _is_valid(validator.descend(instance, subschema)):
                keys += _evaluated_keys(validator, instance, subschema, draft2019)

    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys += _evaluated_keys(validator, instance, schema["if"], draft2019)
            if "then" in schema:
                keys += _evaluated_keys(validator, instance, schema["then"], draft2019)
        elif "else" in schema:
            keys += _evaluated_keys(validator, instance, schema["else"], draft2019)
    return keys


def _unevaluated_properties(draft2019: bool) -> Callable[..., Iterator[ValidationError]]:
    def unevaluated_properties(
        validator: Any, up: Any, instance: Any, schema: Any
    ) -> Iterator[ValidationError]:
        if not validator.is_type(instance, "object"):
            return
        evaluated = _evaluated_keys(validator, instance, schema, draft2019)
        unevaluated = []
        for name in instance:
            if name not in evaluated:
                for _ in validator.descend(instance[name], up, path=name, schema_path=name):
                    unevaluated.append(name)
        if unevaluated:
            if up is False:
                error = "Unevaluated properties are not allowed (%s %s unexpected)"
                yield ValidationError(error % _extras_msg(sorted(unevaluated, key=str)))
            else:
                error = (
                    "Unevaluated properties are not valid under the given schema "
                    "(%s %s unevaluated and invalid)"
                )
                yield ValidationError(error % _extras_msg(unevaluated))

    return unevaluated_properties


# -- the validator classes -----------------------------------------------------------------------


@functools.cache
def safe_validator_class(cls: type[Validator]) -> type[Validator]:
    """``cls`` (a ``jsonschema`` validator class) with every keyword that runs a pattern
    replaced by one that runs it on RE2. A subschema whose ``$schema`` names another dialect is
    checked by that dialect's safe class too (``jsonschema`` itself would switch to its own)."""
    draft2019 = cls is jsonschema.Draft201909Validator
    replacements = {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
        "unevaluatedProperties": _unevaluated_properties(draft2019),
    }
    safe: Any = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
        cls, {k: f for k, f in replacements.items() if k in cls.VALIDATORS}
    )
    fields = [(field.name, field.alias) for field in attrs.fields(safe) if field.init]

    def evolve(self: Any, **changes: Any) -> Any:
        schema = changes.setdefault("schema", self.schema)
        new = type(self)
        if isinstance(schema, dict) and isinstance(schema.get("$schema"), str):
            named = jsonschema.validators.validator_for(schema, default=cls)
            if named is not cls:
                new = safe_validator_class(named)
        for name, alias in fields:
            if alias not in changes:
                changes[alias] = getattr(self, name)
        return new(**changes)

    safe.evolve = evolve
    safe.__name__ = safe.__qualname__ = f"Safe{cls.__name__}"
    return safe  # type: ignore[no-any-return]
