"""A small BM25 ranking over short documents (tool names, titles, descriptions, argument names).

Okapi BM25 (``k1=1.2``, ``b=0.75``, the non-negative idf ``log(1 + (N - df + 0.5) / (df + 0.5))``)
over words: lower-cased, split at anything not a letter or digit and at ``camelCase`` humps,
with a light suffix folding (``files`` and ``file``, ``directories`` and ``directory``, ``staging``
and ``stage``) applied alike to documents and queries, a short list of English function words left
out, and a few common synonyms added to a query (``folder`` also finds ``directory``). Every
document is a list of weighted fields, so a word in a tool's name counts more than one in its
description.

The work of one query is bounded: at most :data:`MAX_QUERY_CHARS` characters are read and at most
:data:`MAX_QUERY_TERMS` distinct words scored, each against its own posting list; nothing here
is a regular expression that could backtrack (two linear character-class patterns).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable

__all__ = ["MAX_QUERY_CHARS", "MAX_QUERY_TERMS", "BM25Index", "words"]

MAX_QUERY_CHARS = 1000
"""Characters of a query read (the rest is ignored)."""
MAX_QUERY_TERMS = 32
"""Distinct words of a query scored (the first ones)."""
MAX_DOCUMENT_CHARS = 4000
"""Characters of one field of a document read."""

K1 = 1.2
B = 0.75

STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "get",
        "give",
        "how",
        "i",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "please",
        "show",
        "so",
        "some",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "this",
        "to",
        "use",
        "using",
        "want",
        "was",
        "what",
        "when",
        "which",
        "with",
        "would",
        "you",
        "your",
    }
)


# Query words that also stand for another word of tool descriptions (added, never replaced).
SYNONYMS: dict[str, tuple[str, ...]] = {
    "folder": ("directory",),
    "directory": ("folder",),
    "find": ("search",),
    "look": ("search",),
    "lookup": ("search",),
    "make": ("create",),
    "new": ("create",),
    "add": ("create",),
    "remove": ("delete",),
    "erase": ("delete",),
    "forget": ("delete",),
    "rename": ("move",),
    "remember": ("memory", "create"),
    "many": ("count",),
    "number": ("count",),
    "change": ("update", "edit"),
    "modify": ("update", "edit"),
    "open": ("read", "get"),
    "fetch": ("get", "read"),
    "show": ("get", "list"),
    "send": ("create",),
    "post": ("create",),
    "schedule": ("create",),
}

_WORD = re.compile(r"[^\W_]+")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+")


def _fold(word: str) -> str:
    """A light, consistent suffix folding (not a stemmer: only the same form matters)."""
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and (
        (word.endswith("ed") and not word.endswith("eed")) or word.endswith(("sses", "xes", "ches", "shes"))
    ):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]  # "stage", "staged", "staging" alike
    return word


def words(text: str, limit: int = MAX_DOCUMENT_CHARS) -> list[str]:
    """The folded words of ``text[:limit]``, in order (function words left out)."""
    out: list[str] = []
    for token in _WORD.findall(text[:limit]):
        parts = [token] if token.islower() and token.isalpha() else _PART.findall(token)
        for part in parts:
            word = part.lower()
            if word not in STOPWORDS:
                out.append(_fold(word))
    return out


def query_words(text: str) -> list[str]:
    """The words of a query with their synonyms (bounded like a query)."""
    out: list[str] = []
    for token in _WORD.findall(text[:MAX_QUERY_CHARS]):
        word = token.lower()
        out.extend(words(token, MAX_QUERY_CHARS))
        out.extend(_fold(s) for s in SYNONYMS.get(word, ()))
    return out


class BM25Index:
    """BM25 over a fixed list of documents, each a list of ``(text, weight)`` fields; a word's
    frequency in a document is the sum of the weights of the fields it occurs in."""

    def __init__(self) -> None:
        self._postings: dict[str, list[tuple[int, float]]] = {}
        self._lengths: list[float] = []
        self._total = 0.0
        self._average = 0.0

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, fields: Iterable[tuple[str, float]]) -> int:
        """Index one more document; its number (from 0)."""
        frequencies: dict[str, float] = {}
        for text, weight in fields:
            for word in words(text):
                frequencies[word] = frequencies.get(word, 0.0) + weight
        doc = len(self._lengths)
        length = float(sum(frequencies.values()))
        self._lengths.append(length)
        for word, frequency in frequencies.items():
            self._postings.setdefault(word, []).append((doc, frequency))
        self._total += length
        self._average = self._total / len(self._lengths)
        return doc

    def query_terms(self, query: str) -> list[str]:
        """The distinct words of ``query`` that are scored, in order (bounded)."""
        return list(dict.fromkeys(query_words(query)))[:MAX_QUERY_TERMS]

    def scores(self, query: str) -> dict[int, float]:
        """Document number -> BM25 score, for the documents sharing a word with ``query``."""
        total = len(self._lengths)
        average = self._average or 1.0
        scores: dict[int, float] = {}
        for term in self.query_terms(query):
            postings = self._postings.get(term)
            if not postings:
                continue
            idf = math.log(1.0 + (total - len(postings) + 0.5) / (len(postings) + 0.5))
            for doc, frequency in postings:
                norm = K1 * (1.0 - B + B * self._lengths[doc] / average)
                scores[doc] = scores.get(doc, 0.0) + idf * frequency * (K1 + 1.0) / (frequency + norm)
        return scores

    def top(self, query: str, k: int, keep: Callable[[int], bool] = lambda doc: True) -> list[int]:
        """The ``k`` best documents for ``query`` that ``keep`` accepts (by score, then by document
        number); ``keep`` is asked in rank order, only until ``k`` are found."""
        ranked = sorted(self.scores(query).items(), key=lambda item: (-item[1], item[0]))
        found: list[int] = []
        for doc, _ in ranked:
            if len(found) >= k:
                break
            if keep(doc):
                found.append(doc)
        return found
