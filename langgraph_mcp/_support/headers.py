"""Which HTTP headers can be sent, checked before anything is sent.

The HTTP client under the transports refuses a header only as it writes the request: a name that
is not an RFC 9110 token, a value that is not ASCII, or a value with a line break, a NUL or
whitespace at either end. That failure ends the connection, and with it every call in flight on
it. Other control characters it lets through, and servers reject the request. So every header
is checked here first, by RFC 9110's rule: a name is a token; a value is visible ASCII
(``!``-``~``) with spaces and tabs only between visible characters, or empty.

:func:`header_problem` says what is wrong in words that name the header but never show its
value (a header value is a secret as far as this package knows).
"""

from __future__ import annotations

import re

__all__ = ["header_problem"]

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TOKEN_CHAR = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]")
_VALUE = re.compile(r"(?:[!-~]+(?:[ \t]+[!-~]+)*)?")
_BAD_VALUE_CHAR = re.compile(r"[^\t !-~]")


def header_problem(name: object, value: object) -> str | None:
    """What keeps header ``name: value`` from being sent (``None``: nothing), naming the header
    (or, for a name that is not valid, its part before the first invalid character) and never
    showing the value."""
    if not isinstance(name, str):
        return f"a header name is not a string ({type(name).__name__})"
    if not _TOKEN.fullmatch(name):
        if not name:
            return "a header name is empty"
        at = next(i for i, char in enumerate(name) if not _TOKEN_CHAR.fullmatch(char))
        before = f" after {name[:at]!r}" if at else ""
        return f"a header name is not a valid HTTP header name: it has {_describe(name[at])}{before}"
    if not isinstance(value, str):
        return f"header {name!r}: its value is not a string ({type(value).__name__})"
    if _VALUE.fullmatch(value):
        return None
    if value.rstrip("\r\n") != value and _VALUE.fullmatch(value.rstrip("\r\n")):
        return (
            f"header {name!r}: its value ends with a line break (a value read from a file keeps its newline)"
        )
    bad = _BAD_VALUE_CHAR.search(value)
    if bad is None:
        return f"header {name!r}: its value starts or ends with whitespace"
    return f"header {name!r}: its value has {_describe(bad.group())}"


def _describe(char: str) -> str:
    code = ord(char)
    if char == "\n":
        return "a line break (LF)"
    if char == "\r":
        return "a carriage return (CR)"
    if char == " ":
        return "a space"
    if code < 0x20 or code == 0x7F:
        return f"a control character (U+{code:04X})"
    if code > 0x7F:
        return f"a non-ASCII character (U+{code:04X})"
    return f"the character {char!r}"
