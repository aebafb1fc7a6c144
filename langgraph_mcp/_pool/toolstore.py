"""The persisted tool catalog: each server's tools as it last listed them, kept between runs so
that ``lazy`` servers are not started until one of their tools is called.

Where it lives (``MCPPool(tool_catalog=...)``):

* a path: one JSON file (:class:`~langgraph_mcp.types.MCPToolCatalog`, JSON Schema
  ``docs/schemas/tool-catalog.json``), read once per pool and rewritten whole (a temporary file
  renamed over it) when a server's tools change;
* a LangGraph ``BaseStore``: one item per server (an
  :class:`~langgraph_mcp.types.MCPToolCatalogServer`) under the namespace
  :data:`CATALOG_NAMESPACE`, keyed by the configured server name.

Another process may have written it, so every read is bounded and fails closed: a file that is
not a regular file, is larger than :data:`MAX_CATALOG_BYTES`, is not JSON of the format, holds
more than :data:`MAX_CATALOG_SERVERS` entries or :data:`MAX_CATALOG_TOOLS` tools, has a tool
(or any other value below an entry) over :data:`MAX_VALUE_CHARS` characters of JSON, or takes
longer than :data:`READ_TIMEOUT` to read, and an entry whose ``tools`` do not match its
``fingerprint``, that was written for another configuration of the server (``source``), or that
lists more than the server's ``max_tools``, are not used (one warning): the server is then
started as usual. Tools read from the catalog are checked like a live listing
(:func:`~langgraph_mcp._support.schema.vet_tool`, off the event loop). Writing never fails a
listing: a write that fails is logged and the next change is written again.

The work is bounded too, not only the bytes: one ``json.loads`` of a large file holds the GIL,
and so the event loop, for its whole length (a worker thread does not help; 60 MB of small
objects held it 6-9 s). The file is parsed on the event loop one value at a time (each tool,
each other value below an entry, at most :data:`MAX_VALUE_CHARS` characters), giving the loop a
turn every :data:`~langgraph_mcp._support.pace.SLICE` seconds; an entry is checked, fingerprinted and
written one tool at a time too. A rewrite does not parse the file again: the other entries are
written back as the text they were read as, unless another writer changed the file since (then
it is read again, the same way).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
from pydantic import TypeAdapter, ValidationError

from langgraph_mcp._support.pace import Pace, full_collections_put_off
from langgraph_mcp._support.redact import redact_url
from langgraph_mcp._support.schema import vet_tool
from langgraph_mcp.config import InProcessServerConfig, ServerConfig, StdioServerConfig
from langgraph_mcp.errors import MCPConfigError
from langgraph_mcp.types._catalog import MCPToolCatalog, MCPToolCatalogServer

__all__ = [
    "CATALOG_NAMESPACE",
    "MAX_CATALOG_BYTES",
    "MAX_CATALOG_SERVERS",
    "MAX_CATALOG_TOOLS",
    "MAX_VALUE_CHARS",
    "READ_TIMEOUT",
    "ToolCatalog",
    "dump_tools",
    "open_catalog",
    "source_of",
    "tools_fingerprint",
]

logger = logging.getLogger("langgraph_mcp.catalog")

CATALOG_NAMESPACE: tuple[str, ...] = ("langgraph_mcp", "tool_catalog")
"""The store namespace of a catalog kept in a LangGraph ``BaseStore`` (one item per server)."""
MAX_CATALOG_BYTES = 16 * 1024 * 1024
"""A catalog file larger than this is not read (16 MiB: four servers of 1,000 tools of 4 KiB)."""
MAX_CATALOG_SERVERS = 1_000
"""A catalog file with more server entries than this is not used."""
MAX_CATALOG_TOOLS = 100_000
"""A catalog file with more tools than this, all entries together, is not used."""
MAX_VALUE_CHARS = 256 * 1024
"""The most characters of JSON one tool (or any other value below an entry) may have: each is
parsed in one go, so this bounds how long the event loop waits for one."""
READ_TIMEOUT = 10.0
"""Seconds a catalog read may take; a slower one is not waited for (the server is started)."""

_ENTRY = TypeAdapter(MCPToolCatalogServer)
_FILE = TypeAdapter(MCPToolCatalog)


def dump_tools(tools: list[types.Tool]) -> list[dict[str, Any]]:
    """``tools`` as ``tools/list`` entries (JSON objects)."""
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


def _dumped(tools: list[types.Tool]) -> tuple[list[dict[str, Any]], str]:
    raw = dump_tools(tools)
    return raw, tools_fingerprint(raw)


def _canonical(value: Any) -> bytes:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8", "surrogatepass")


def _fingerprint_parts(raw: list[Any]) -> Iterator[bytes]:
    """The canonical JSON of ``raw``, one entry at a time: ``[``, each entry, ``,``, ..., ``]``
    (``json.dumps`` of a list with these separators is exactly that)."""
    yield b"["
    for i, item in enumerate(raw):
        yield b"," + _canonical(item) if i else _canonical(item)
    yield b"]"


def tools_fingerprint(raw: list[Any]) -> str:
    """The ``fingerprint`` of a list of tool entries: SHA-256 of its canonical JSON (encoded one
    entry at a time, so that a thread computing it lets the event loop run between entries)."""
    digest = hashlib.sha256()
    for part in _fingerprint_parts(raw):
        digest.update(part)
    return digest.hexdigest()


async def _paced_fingerprint(raw: list[Any]) -> str:
    """:func:`tools_fingerprint` on the event loop, one entry at a time (paced)."""
    digest, pace = hashlib.sha256(), Pace()
    for part in _fingerprint_parts(raw):
        digest.update(part)
        await pace()
    return digest.hexdigest()


def source_of(config: ServerConfig) -> str:
    """The ``source`` of an entry: what says which server ``config`` starts or reaches, without
    its secrets (command, arguments and directory as written; the URL without userinfo, query
    values or fragment; never ``env`` or headers)."""
    if isinstance(config, StdioServerConfig):
        what: list[Any] = ["stdio", config.shown("command"), list(config.shown("args")), config.shown("cwd")]
    elif isinstance(config, InProcessServerConfig):
        what = ["in_process", type(config.server).__name__, str(getattr(config.server, "name", ""))]
    else:
        what = [config.transport, redact_url(config.url)]
    what.append(bool(config.resource_tool))
    return hashlib.sha256(json.dumps(what).encode()).hexdigest()


_DECODER = json.JSONDecoder()
_SPACES = " \t\n\r"
_scanstring: Any = json.decoder.scanstring  # type: ignore[attr-defined]


class _Text:
    """A catalog file's text, walked one value at a time (see the module docstring)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pace = Pace()
        self.tools = 0

    def skip(self, i: int) -> int:
        text = self.text
        while i < len(text) and text[i] in _SPACES:
            i += 1
        return i

    def value(self, i: int) -> tuple[Any, int]:
        """One value below the walked containers, parsed in one go, but never more than
        :data:`MAX_VALUE_CHARS` of it: an object or array is parsed from a window of the text that
        grows up to that (a value cut short by the window is not JSON, so no other value is
        taken for it)."""
        text = self.text
        if text[i : i + 1] not in ("{", "["):
            if text[i : i + 1] == '"':
                string: tuple[str, int] = _scanstring(text, i + 1)
                return string
            return _DECODER.raw_decode(text, i)  # a number, true, false or null
        window = 8192
        while True:
            stop = min(len(text), i + window)
            try:
                found, end = _DECODER.raw_decode(text[i:stop], 0)
            except ValueError:
                if stop == len(text) or window >= MAX_VALUE_CHARS:
                    raise ValueError(
                        f"the value at character {i} is not JSON or is over {MAX_VALUE_CHARS:,} characters"
                    ) from None
                window = min(window * 8, MAX_VALUE_CHARS)
                continue
            return found, i + end

    async def container(self, i: int, opening: str, each: Any) -> int:
        """Walk the object (``{``) or array (``[``) at ``text[i]``, calling ``await each(key, j)``
        (``key`` ``None`` in an array) with where each member's value starts; ``each`` returns
        where that value ends. Where the container ends."""
        text = self.text
        if text[i : i + 1] != opening:
            raise ValueError(f"expecting {opening!r} at character {i}")
        closing = "}" if opening == "{" else "]"
        i = self.skip(i + 1)
        if text[i : i + 1] == closing:
            return i + 1
        while True:
            key: str | None = None
            if opening == "{":
                if text[i : i + 1] != '"':
                    raise ValueError(f"expecting a property name at character {i}")
                key, i = _scanstring(text, i + 1)
                i = self.skip(i)
                if text[i : i + 1] != ":":
                    raise ValueError(f"expecting ':' at character {i}")
                i = self.skip(i + 1)
            i = self.skip(await each(key, i))
            await self.pace()
            separator = text[i : i + 1]
            if separator == closing:
                return i + 1
            if separator != ",":
                raise ValueError(f"expecting ',' or {closing!r} at character {i}")
            i = self.skip(i + 1)

    async def entry(self, i: int, keep: bool) -> tuple[dict[str, Any], int]:
        """One server's entry at ``text[i]``: its values, each tool parsed on its own (and
        dropped at once unless ``keep``: a scan for where entries end keeps none of them alive),
        and where it ends."""
        found: dict[str, Any] = {}

        async def member(key: str | None, j: int) -> int:
            assert key is not None
            if key == "tools" and self.text[j : j + 1] == "[":
                tools: list[Any] = []

                async def tool(_: str | None, k: int) -> int:
                    self.tools += 1
                    if self.tools > MAX_CATALOG_TOOLS:
                        raise ValueError(f"it holds more than {MAX_CATALOG_TOOLS:,} tools")
                    value, end = self.value(k)
                    if keep:
                        tools.append(value)
                    return end

                end = await self.container(j, "[", tool)
                found[key] = tools
                return end
            found[key], end = self.value(j)
            return end

        end = await self.container(i, "{", member)
        return found, end

    async def document(self) -> dict[str, str]:
        """Each entry's text as it is in the file, by server name (the file checked as a whole:
        a version 1 catalog, within the bounds)."""
        texts: dict[str, str] = {}
        version: list[Any] = []

        async def server(key: str | None, j: int) -> int:
            assert key is not None
            if len(texts) >= MAX_CATALOG_SERVERS:
                raise ValueError(f"it holds more than {MAX_CATALOG_SERVERS:,} servers")
            if self.text[j : j + 1] == "{":
                _, end = await self.entry(j, keep=False)
            else:
                _, end = self.value(j)  # not an entry: refused when it is asked for
            texts[key] = self.text[j:end]
            return end

        async def top(key: str | None, j: int) -> int:
            if key == "servers":
                if self.text[j : j + 1] != "{":
                    raise ValueError("its 'servers' is not an object")
                texts.clear()
                return await self.container(j, "{", server)
            value, end = self.value(j)
            if key == "version":
                version[:] = [value]
            return end

        with full_collections_put_off():
            start = self.skip(0)
            if self.text[start : start + 1] != "{":
                raise ValueError("it is not a version 1 tool catalog")
            end = self.skip(await self.container(start, "{", top))
        if end != len(self.text):
            raise ValueError(f"extra data at character {end}")
        if version != [1] or isinstance(version[0], bool):
            raise ValueError("it is not a version 1 tool catalog")
        return texts


async def _parse_entry(text: str) -> Any:
    """One entry's text (as :meth:`_Text.document` found it), parsed the same bounded way."""
    walk = _Text(text)
    with full_collections_put_off():
        if text[:1] == "{":
            value, end = await walk.entry(0, keep=True)
        else:
            value, end = walk.value(0)
    if end != len(text):
        raise ValueError(f"extra data at character {end}")
    return value


_Identity = tuple[int, int, int, int] | None
"""A file as it was seen: device, inode, size and modification time (ns); ``None``: no file."""


def _identity(path: Path) -> _Identity:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


@dataclass
class _Read:
    """What one read of a catalog file found."""

    identity: _Identity
    servers: dict[str, Any] = field(default_factory=dict)
    """The entries asked for, parsed (only those: the others are never kept as objects)."""
    texts: dict[str, str] = field(default_factory=dict)
    """Each entry's JSON text (written back as it is, unless it changes)."""


class _FileBackend:
    """A catalog file: read once (bounded, paced), rewritten whole on each change."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._read: _Read | None = None
        self._reading: dict[asyncio.AbstractEventLoop, asyncio.Task[_Read]] = {}
        self._lock = threading.Lock()  # the file's rewrites, from any thread or loop

    def __repr__(self) -> str:
        return f"tool catalog file {str(self.path)!r}"

    def _bytes(self) -> tuple[_Identity, bytes | None]:
        """The file's bytes (``None``: there is none) and identity; ``ValueError`` for a file
        that is not a regular file or is too large."""
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            return None, None
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ValueError("it is not a regular file")
            if info.st_size > MAX_CATALOG_BYTES:
                raise ValueError(f"it is larger than {MAX_CATALOG_BYTES:,} bytes")
            data = file.read(MAX_CATALOG_BYTES + 1)
        if len(data) > MAX_CATALOG_BYTES:
            raise ValueError(f"it is larger than {MAX_CATALOG_BYTES:,} bytes")
        return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns), data

    async def _load(self) -> _Read:
        """The file as it is now (no entries when there is none); ``ValueError`` for a file
        that is not a catalog."""
        identity, data = await asyncio.to_thread(self._bytes)
        if data is None:
            return _Read(identity)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("it is not UTF-8 text") from None
        try:
            texts = await _Text(text).document()
        except RecursionError:
            raise ValueError("it nests too deeply") from None
        return _Read(identity, texts=texts)

    async def _load_or_nothing(self) -> _Read:
        try:
            return await self._load()
        except (OSError, ValueError) as exc:
            logger.warning("%s is not used: %s; lazy servers are started", self, exc)
            return _Read(_identity(self.path))

    async def _read_all(self) -> _Read:
        """The file as this pool read it (once: every caller waits for the same read, which goes
        on when one of them stops waiting)."""
        if self._read is not None:
            return self._read
        loop = asyncio.get_running_loop()
        task = self._reading.get(loop)
        if task is None:
            task = self._reading[loop] = loop.create_task(self._load_or_nothing())

            def landed(done: asyncio.Task[_Read]) -> None:
                if self._reading.get(loop) is done:
                    del self._reading[loop]
                if not done.cancelled() and done.exception() is None and self._read is None:
                    self._read = done.result()

            task.add_done_callback(landed)
        found = await asyncio.shield(task)
        if self._read is None:
            self._read = found
        return self._read

    async def read(self, server: str) -> Any:
        read = await self._read_all()
        if server not in read.servers:
            text = read.texts.get(server)
            # Checked as a whole when the file was read: parsed again only for its own server.
            read.servers[server] = None if text is None else await _parse_entry(text)
        return read.servers[server]

    def _replace(
        self, read: _Read, server: str, entry: MCPToolCatalogServer, text: str, force: bool = False
    ) -> bool:
        """Write the file: ``read``'s entries as their text, ``server``'s as ``text``; ``False``
        (nothing written) when the file is no longer the one ``read`` read, unless ``force``."""
        with self._lock:
            if not force and _identity(self.path) != read.identity:
                return False
            texts = {**read.texts, server: text}
            parts = [
                '{"version":1,"servers":{',
                ",".join(f"{json.dumps(name, ensure_ascii=False)}:{value}" for name, value in texts.items()),
                "}}",
            ]
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as file:
                    for part in parts:
                        file.write(part)
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            self._read = _Read(_identity(self.path), {**read.servers, server: entry}, texts)
            return True

    async def write(self, server: str, entry: MCPToolCatalogServer) -> None:
        text = await asyncio.to_thread(_entry_text, entry)
        read = await self._read_all()
        if await asyncio.to_thread(self._replace, read, server, entry, text):
            return
        # Another writer changed the file since it was read: read it again (paced), and write
        # over whatever it is then, as a whole-file rewrite always did.
        try:
            again = await self._load()
        except (OSError, ValueError):
            again = _Read(_identity(self.path))  # not a catalog (said when read): replaced by one
        await asyncio.to_thread(self._replace, again, server, entry, text, True)


def _entry_text(entry: MCPToolCatalogServer) -> str:
    """``entry`` as compact JSON, one tool at a time (a worker thread lets the loop run between
    them)."""
    head = json.dumps(
        {k: v for k, v in entry.items() if k != "tools"}, ensure_ascii=False, separators=(",", ":")
    )
    tools = ",".join(json.dumps(t, ensure_ascii=False, separators=(",", ":")) for t in entry["tools"])
    return f'{head[:-1]},"tools":[{tools}]}}'


class _StoreBackend:
    """A LangGraph ``BaseStore``: one item per server."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def __repr__(self) -> str:
        return f"tool catalog in {type(self.store).__name__}"

    async def read(self, server: str) -> Any:
        item = await self.store.aget(CATALOG_NAMESPACE, server)
        return None if item is None else item.value

    async def write(self, server: str, entry: MCPToolCatalogServer) -> None:
        await self.store.aput(CATALOG_NAMESPACE, server, dict(entry), index=False)


class ToolCatalog:
    """The persisted catalog of one pool: what it read (per server, used while the server has
    not started) and what it wrote."""

    def __init__(self, backend: _FileBackend | _StoreBackend) -> None:
        self._backend = backend
        self._read: dict[str, list[types.Tool] | None] = {}
        self._written: dict[str, str] = {}
        """The fingerprint the catalog holds for each server, as far as this pool knows."""
        self._last: dict[str, list[types.Tool]] = {}
        """The listing last compared with it, per server (a cached listing is not hashed again)."""
        self._warned: set[str] = set()

    def __repr__(self) -> str:
        return f"ToolCatalog({self._backend!r})"

    def _warn(self, server: str, why: str) -> None:
        key = f"{server}\0{why}"
        if key not in self._warned:
            self._warned.add(key)
            logger.warning(
                "MCP server %r: its entry in the %s is not used (%s); it is started",
                server,
                self._backend,
                why,
            )

    async def tools_for(self, server: str, config: ServerConfig) -> list[types.Tool] | None:
        """``server``'s tools as the catalog holds them for this configuration, checked like a
        live listing; ``None`` when the catalog has no usable entry (then start the server)."""
        if server in self._read:
            return self._read[server]
        tools = await self._tools_for(server, config)
        self._read.setdefault(server, tools)
        return self._read[server]

    async def _tools_for(self, server: str, config: ServerConfig) -> list[types.Tool] | None:
        try:
            raw = await asyncio.wait_for(self._backend.read(server), READ_TIMEOUT)
        except TimeoutError:
            self._warn(server, f"not read within {READ_TIMEOUT:g}s")
            return None
        except Exception as exc:  # a store that fails: the server is started instead
            self._warn(server, f"it could not be read: {type(exc).__name__}")
            return None
        if raw is None:
            return None
        listed = raw.get("tools") if isinstance(raw, dict) else None
        if isinstance(listed, list) and len(listed) > config.max_tools:
            self._warn(server, f"it lists more than the server's max_tools ({config.max_tools})")
            return None
        # Checked as the format says, the tools one by one (a large entry never holds the loop).
        try:
            if not isinstance(listed, list):
                raise ValueError
            entry = _ENTRY.validate_python({**raw, "tools": []}, strict=True)
            pace = Pace()
            for tool in listed:
                if not isinstance(tool, dict):
                    raise ValueError
                await pace()
        except (ValidationError, ValueError):
            self._warn(server, "it is not a catalog entry")
            return None
        entry["tools"] = listed
        if entry["source"] != source_of(config):
            self._warn(server, "it was written for another configuration of the server")
            return None
        try:
            matches = await _paced_fingerprint(entry["tools"]) == entry["fingerprint"]
        except (TypeError, ValueError, RecursionError):
            matches = False
        if not matches:
            self._warn(server, "its tools do not match its fingerprint")
            return None
        modern = entry["era"] == "2026-07-28"
        vetted = await asyncio.to_thread(
            lambda: [vet_tool(server, t, position=i, modern=modern) for i, t in enumerate(entry["tools"])]
        )
        self._written.setdefault(server, entry["fingerprint"])
        return [t for t in vetted if t is not None]

    async def record(
        self, server: str, config: ServerConfig, tools: list[types.Tool], era: str | None
    ) -> bool:
        """Write ``server``'s live listing if it differs from what the catalog holds; whether
        it did (its tools changed since they were kept)."""
        if self._last.get(server) is tools:
            return False  # the same listing object as last time (a cached listing): unchanged
        raw, fingerprint = await asyncio.to_thread(_dumped, tools)
        if self._written.get(server) == fingerprint:
            self._last[server] = tools
            return False
        source = source_of(config)
        if server not in self._written and await self._holds(server, fingerprint, source):
            self._written[server], self._last[server] = fingerprint, tools
            return False
        entry: MCPToolCatalogServer = {
            "fingerprint": fingerprint,
            "source": source,
            "era": "2026-07-28" if era == "2026-07-28" else "legacy",
            "listed_at": time.time(),
            "tools": raw,
        }
        try:
            await self._backend.write(server, entry)
        except Exception as exc:  # never fails the listing; the next change is written again
            logger.warning(
                "MCP server %r: its tools could not be written to the %s: %s", server, self._backend, exc
            )
            return False
        changed = server in self._written
        self._written[server], self._last[server] = fingerprint, tools
        return changed

    async def _holds(self, server: str, fingerprint: str, source: str) -> bool:
        """Does the catalog already hold this listing for this configuration (no write needed)?"""
        try:
            raw = await asyncio.wait_for(self._backend.read(server), READ_TIMEOUT)
        except Exception:  # unreadable: written anew
            return False
        return isinstance(raw, dict) and raw.get("fingerprint") == fingerprint and raw.get("source") == source


def open_catalog(value: Any) -> ToolCatalog | None:
    """The catalog ``tool_catalog=value`` means: a path (``str`` or ``os.PathLike``) to a JSON
    file, a LangGraph ``BaseStore``, or ``None`` (no catalog).

    Raises:
        MCPConfigError: anything else.
    """
    if value is None or isinstance(value, ToolCatalog):
        return value
    if isinstance(value, str | os.PathLike):
        return ToolCatalog(_FileBackend(Path(value).expanduser()))
    if callable(getattr(value, "aget", None)) and callable(getattr(value, "aput", None)):
        return ToolCatalog(_StoreBackend(value))
    raise MCPConfigError(
        None, None, f"tool_catalog must be a file path or a LangGraph BaseStore; got {type(value).__name__}"
    )
