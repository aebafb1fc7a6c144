"""Text from an MCP server made fit to show a model.

Tool descriptions (and the descriptions and titles inside a tool's schema), tool titles (and
the title in a tool's annotations) and the messages and form schemas of elicitation questions are
written by the server, so they may hide text from the person reading them while the model still
reads it:
control characters (terminal escapes, NUL), bidirectional embeddings, overrides and isolates
(U+202A-U+202E, U+2066-U+2069), zero-width characters (U+200B-U+200D, U+2060, U+FEFF), tag
characters. :func:`sanitise_text` removes every control (Unicode category Cc, except tab and line
feed), format (Cf, which holds all of the above) and lone-surrogate (Cs) character, turns the
line and paragraph separators U+2028/U+2029 into line feeds, and caps the length. Terminal
escape sequences (``ESC [ ... m`` and the like) go as a whole, not only their ``ESC``.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["MAX_DESCRIPTION", "MAX_TITLE", "TRUNCATED", "sanitise_text"]

MAX_DESCRIPTION = 4096
"""The most characters of a server-provided description a model is shown."""
MAX_TITLE = 256
"""The most characters of a server-provided title (a tool's, or its annotations') shown."""
TRUNCATED = " … [truncated]"
"""Ends a description that was cut to :data:`MAX_DESCRIPTION` characters."""

_ASCII_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# CSI (ESC [ params intermediates final) and OSC (ESC ] ... BEL or ESC \) sequences.
_ESCAPE_SEQUENCES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_REMOVED_CATEGORIES = frozenset({"Cc", "Cf", "Cs"})
_KEPT_CONTROLS = frozenset("\t\n")
_SEPARATORS = {0x2028: "\n", 0x2029: "\n"}


def _kept(char: str) -> bool:
    return char in _KEPT_CONTROLS or unicodedata.category(char) not in _REMOVED_CATEGORIES


def sanitise_text(text: str, limit: int = MAX_DESCRIPTION) -> str:
    """``text`` without hidden characters, at most ``limit`` characters long (a longer text is cut
    and ends with :data:`TRUNCATED`). Idempotent: sanitised text comes back unchanged.

    Raises:
        ValueError: ``limit`` is shorter than :data:`TRUNCATED`.
    """
    if limit < len(TRUNCATED):
        raise ValueError(f"limit must be at least {len(TRUNCATED)} characters, got {limit}")
    if "\x1b" in text:
        text = _ESCAPE_SEQUENCES.sub("", text)
    if text.isascii():
        text = _ASCII_CONTROLS.sub("", text)
    else:
        text = "".join(char for char in text.translate(_SEPARATORS) if _kept(char))
    if len(text) > limit:
        text = text[: limit - len(TRUNCATED)] + TRUNCATED
    return text
