"""``_support.sanitise``: server-provided text without hidden characters, of bounded length."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_mcp._support.sanitise import MAX_DESCRIPTION, TRUNCATED, sanitise_text

BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]
ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]
TAGS = [chr(0xE0000 + c) for c in (0x01, 0x41, 0x7F)]  # invisible "tag" letters
CONTROLS = [chr(c) for c in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))]
HIDDEN = [*BIDI, *ZERO_WIDTH, *TAGS, *CONTROLS, "\ud800", "\udfff", "\u00ad", "\u061c", "\u200e"]


def hidden(char: str) -> bool:
    if char in "\t\n":
        return False
    return unicodedata.category(char) in ("Cc", "Cf", "Cs") or char in "\u2028\u2029"


@pytest.mark.parametrize("char", HIDDEN)
def test_each_hidden_character_is_removed(char: str) -> None:
    assert sanitise_text(f"a{char}b") == "ab"


def test_lines_and_tabs_stay_and_separators_become_line_feeds() -> None:
    assert sanitise_text("one\r\ntwo\tthree\u2028four\u2029five") == "one\ntwo\tthree\nfour\nfive"


def test_terminal_escape_sequences_go_as_a_whole() -> None:
    text = "\x1b[31mred\x1b[0m \x1b[8mhidden\x1b[28m \x1b]8;;https://example.com\x1b\\link\x1b]8;;\x07"
    assert sanitise_text(text) == "red hidden link"


def test_visible_text_is_untouched() -> None:
    text = "Grüße, 世界! Emoji 🙂, Arabic مرحبا, maths ∑ x² — quotes «»"
    assert sanitise_text(text) == text


def test_long_text_is_cut_with_a_marker() -> None:
    assert sanitise_text("x" * MAX_DESCRIPTION) == "x" * MAX_DESCRIPTION
    cut = sanitise_text("x" * (MAX_DESCRIPTION + 1))
    assert len(cut) == MAX_DESCRIPTION
    assert cut == "x" * (MAX_DESCRIPTION - len(TRUNCATED)) + TRUNCATED
    assert sanitise_text("abcdefghijklmnopqrstuvwxyz", limit=20) == "abcdef" + TRUNCATED


def test_hidden_characters_do_not_count_towards_the_limit() -> None:
    assert sanitise_text("\u200b" * 10 + "x" * 20, limit=20) == "x" * 20


def test_a_limit_shorter_than_the_marker_is_refused() -> None:
    with pytest.raises(ValueError, match="limit must be at least"):
        sanitise_text("text", limit=3)


texts = st.text(
    st.one_of(
        st.characters(exclude_categories=()), st.sampled_from(HIDDEN), st.sampled_from("\x1b[]m;\\\x07")
    ),
    max_size=300,
)


@settings(max_examples=300, deadline=None)
@given(text=texts, limit=st.integers(min_value=len(TRUNCATED), max_value=200))
def test_no_hidden_characters_idempotent_and_bounded(text: str, limit: int) -> None:
    out = sanitise_text(text, limit)
    assert not any(hidden(c) for c in out)
    assert len(out) <= limit
    assert sanitise_text(out, limit) == out
    if len(text) <= limit and not any(hidden(c) for c in text):
        assert out == text  # nothing to remove, nothing to cut
