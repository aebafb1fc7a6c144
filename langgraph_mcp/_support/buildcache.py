"""Tools built from a pool's listings, kept per set of reserved names, and built once for every
run that asks for them at the same time.

A graph's runs all ask for the pool's tools as they start; after a listing changes (or before
the first), a hundred runs starting together would each build the same tools. Here the first
one builds and the others wait for its result (or its error): one build per loop and version.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Generic, TypeVar

__all__ = ["ToolCache"]

_T = TypeVar("_T")


class ToolCache(Generic[_T]):
    """Tools built from a pool's listings, per set of reserved names (names never given to MCP
    tools, e.g. local tools'): the tools of the last build with the pool's ``tools_version`` they
    were built at, and every name ever given to an MCP tool, so a tool keeps its name while its
    server is unreachable and after."""

    def __init__(self) -> None:
        self._built: dict[frozenset[str], tuple[Hashable, list[_T]]] = {}
        self._sources: dict[frozenset[str], dict[str, list[Any]]] = {}
        self._names: dict[frozenset[str], dict[tuple[str, str], str]] = {}
        # Builds in progress, per reserved names and event loop (a task runs on one loop only).
        self._building: dict[
            tuple[frozenset[str], asyncio.AbstractEventLoop], tuple[Hashable, asyncio.Task[list[_T]]]
        ] = {}

    def current(self, reserved: frozenset[str], version: Hashable) -> list[_T] | None:
        """The tools built at ``version`` (``None``: not built at it, or left stale)."""
        built = self._built.get(reserved)
        return built[1] if built is not None and built[0] == version else None

    def last(self, reserved: frozenset[str]) -> list[_T]:
        """The tools of the last build, whatever its version (empty before the first)."""
        built = self._built.get(reserved)
        return built[1] if built is not None else []

    def store(
        self, reserved: frozenset[str], version: Hashable, tools: list[_T], sources: dict[str, list[Any]]
    ) -> None:
        """Remember a build from the listings ``sources`` (server name to listing); ``version=None``
        keeps it only for :meth:`last` (built while a server was unreachable, so the next call
        builds again)."""
        self._built[reserved] = (version, tools)
        self._sources[reserved] = dict(sources)

    def built_from(self, reserved: frozenset[str], sources: dict[str, list[Any]]) -> bool:
        """The last build was made from these very listings (the same objects: a server's
        listing is a new list whenever it is listed again)."""
        last = self._sources.get(reserved)
        return (
            last is not None
            and last.keys() == sources.keys()
            and all(sources[name] is listing for name, listing in last.items())
        )

    def names(self, reserved: frozenset[str]) -> dict[tuple[str, str], str]:
        """``{(server, MCP tool name): exposed name}`` for every tool ever named (mutable)."""
        return self._names.setdefault(reserved, {})

    async def build_once(
        self, reserved: frozenset[str], version: Hashable, build: Callable[[], Awaitable[list[_T]]]
    ) -> list[_T]:
        """``build()``'s tools, run once for the callers that ask at ``version`` while it runs:
        each gets its result, or its error. A caller cancelled while it waits leaves the build
        running for the others."""
        loop = asyncio.get_running_loop()
        key = (reserved, loop)
        flight = self._building.get(key)
        if flight is None or flight[0] != version:
            task = loop.create_task(_run(build))
            flight = self._building[key] = (version, task)

            def landed(done: asyncio.Task[list[_T]]) -> None:
                if self._building.get(key, (None, None))[1] is done:
                    del self._building[key]
                if not done.cancelled():
                    done.exception()  # read, so that a failure nobody waits for is not logged

            task.add_done_callback(landed)
        return await asyncio.shield(flight[1])


async def _run(build: Callable[[], Awaitable[_T]]) -> _T:
    return await build()
