"""Long work on the event loop, cut into slices: :class:`Pace` gives the loop a turn whenever a
slice has run for :data:`SLICE` seconds, so that reading or building a large listing never holds
every other task (every other user's call) for long.

:func:`loads_in_slices` is ``json.loads`` for large texts: one ``json.loads`` of a 27 MiB
``tools/list`` answer (100,000 tools) holds the loop for 0.4-1 s, and a worker thread would not
help (the parser holds the GIL throughout). It walks the outer containers itself and leaves each
value below them to ``json``, pacing between values.

While a large message is parsed (and while a listing drops the part of it past ``max_tools``),
:func:`full_collections_put_off` keeps the garbage collector's full collections from running:
each one walks every object alive, the half-built message's hundreds of thousands included
(0.1-0.5 s each, and a 27 MiB answer set off several). The young generations are still collected;
the settings are restored as soon as the last such block ends.
"""

from __future__ import annotations

import asyncio
import gc
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["SLICE", "Pace", "full_collections_put_off", "loads_in_slices"]

SLICE = 0.02
"""Seconds a loop runs before it lets the event loop run the other tasks."""


class Pace:
    """``await pace()`` in a long loop: returns at once while the current slice lasts, else
    lets the event loop run once (``asyncio.sleep(0)``) and starts a new slice."""

    __slots__ = ("_since", "_slice")

    def __init__(self, slice: float = SLICE) -> None:
        self._slice = slice
        self._since = time.perf_counter()

    async def __call__(self) -> None:
        if time.perf_counter() - self._since >= self._slice:
            await asyncio.sleep(0)
            self._since = time.perf_counter()


_put_off = 0
_threshold: tuple[int, int, int] | None = None
_put_off_lock = threading.Lock()


@contextmanager
def full_collections_put_off() -> Iterator[None]:
    """No full (generation 2) garbage collection starts in the block (see the module docstring);
    blocks may overlap, in any threads."""
    global _put_off, _threshold
    with _put_off_lock:
        if _put_off == 0:
            _threshold = gc.get_threshold()
            gc.set_threshold(_threshold[0], _threshold[1], 1 << 30)
        _put_off += 1
    try:
        yield
    finally:
        with _put_off_lock:
            _put_off -= 1
            if _put_off == 0 and _threshold is not None:
                young, middle, _ = gc.get_threshold()
                gc.set_threshold(young, middle, _threshold[2])  # as it was, unless changed meanwhile


_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")
_scanstring: Any = json.decoder.scanstring  # type: ignore[attr-defined]


def _skip(text: str, i: int) -> int:
    """Where the whitespace from ``text[i]`` on ends."""
    space = _SPACE.match(text, i)
    return space.end() if space is not None else i


async def loads_in_slices(text: str, depth: int = 4) -> Any:
    """``json.loads(text)``, pacing (:class:`Pace`) between the values of the containers
    ``depth`` levels deep or less (below them, a value is parsed in one go: for a JSON-RPC
    answer, one tool of a listing or one block of a result).

    Raises:
        ValueError: ``text`` is not JSON (``json.JSONDecodeError`` or a ``ValueError`` saying where).
        RecursionError: as ``json.loads``.
    """
    pace = Pace()
    with full_collections_put_off():
        value, end = await _value(text, _skip(text, 0), depth, pace)
    end = _skip(text, end)
    if end != len(text):
        raise ValueError(f"extra data at character {end}")
    return value


async def _value(text: str, i: int, depth: int, pace: Pace) -> tuple[Any, int]:
    """The value starting at ``text[i]`` (no space before it) and where it ends."""
    opening = text[i : i + 1]
    if depth <= 0 or opening not in ("{", "["):
        return _DECODER.raw_decode(text, i)
    closing = "}" if opening == "{" else "]"
    items: Any = {} if opening == "{" else []
    i = _skip(text, i + 1)
    if text[i : i + 1] == closing:
        return items, i + 1
    while True:
        if opening == "{":
            if text[i : i + 1] != '"':
                raise ValueError(f"expecting a property name at character {i}")
            key, i = _scanstring(text, i + 1)
            i = _skip(text, i)
            if text[i : i + 1] != ":":
                raise ValueError(f"expecting ':' at character {i}")
            value, i = await _value(text, _skip(text, i + 1), depth - 1, pace)
            items[key] = value
        else:
            value, i = await _value(text, i, depth - 1, pace)
            items.append(value)
        await pace()
        i = _skip(text, i)
        separator = text[i : i + 1]
        if separator == closing:
            return items, i + 1
        if separator != ",":
            raise ValueError(f"expecting ',' or {closing!r} at character {i}")
        i = _skip(text, i + 1)
