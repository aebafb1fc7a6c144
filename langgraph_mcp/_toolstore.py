"""The persisted tool catalog: each server's tools as it last listed them, kept between runs so
that ``lazy`` servers are not started until one of their tools is revealed or called.

Where it lives (``MCPPool(tool_catalog=...)``):

* a path: one JSON file (:class:`~langgraph_mcp.types.MCPToolCatalog`, JSON Schema
  ``docs/schemas/tool-catalog.json``), read once per pool and rewritten whole (a temporary file
  renamed over it) when a server's tools change;
* a LangGraph ``BaseStore``: one item per server (an
  :class:`~langgraph_mcp.types.MCPToolCatalogServer`) under the namespace
  :data:`CATALOG_NAMESPACE`, keyed by the configured server name.

Another process may have written it, so every read is bounded and fails closed: a file that is
not a regular file, is larger than :data:`MAX_CATALOG_BYTES`, is not JSON of the format, or takes
longer than :data:`READ_TIMEOUT` to read, and an entry whose ``tools`` do not match its
``fingerprint``, that was written for another configuration of the server (``source``), or that
lists more than the server's ``max_tools``, are not used (one warning): the server is then
started as usual. Tools read from the catalog are checked like a live listing
(``_schema.vet_tool``, off the event loop). Writing never fails a listing: a write that fails
is logged and the next change is written again.
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
from pathlib import Path
from typing import Any

import mcp_types as types
from pydantic import TypeAdapter, ValidationError

from langgraph_mcp._redact import redact_url
from langgraph_mcp._schema import vet_tool
from langgraph_mcp._types_catalog import MCPToolCatalog, MCPToolCatalogServer
from langgraph_mcp.config import InProcessServerConfig, ServerConfig, StdioServerConfig
from langgraph_mcp.errors import MCPConfigError

__all__ = [
    "CATALOG_NAMESPACE",
    "MAX_CATALOG_BYTES",
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
MAX_CATALOG_BYTES = 64 * 1024 * 1024
"""A catalog file larger than this is not read."""
READ_TIMEOUT = 10.0
"""Seconds a catalog read may take; a slower one is not waited for (the server is started)."""

_ENTRY = TypeAdapter(MCPToolCatalogServer)
_FILE = TypeAdapter(MCPToolCatalog)


def dump_tools(tools: list[types.Tool]) -> list[dict[str, Any]]:
    """``tools`` as ``tools/list`` entries (JSON objects)."""
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


def tools_fingerprint(raw: list[Any]) -> str:
    """The ``fingerprint`` of a list of tool entries: SHA-256 of its canonical JSON."""
    text = json.dumps(raw, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


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


class _FileBackend:
    """A catalog file: read once (bounded), rewritten whole on each change."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._servers: dict[str, Any] | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"tool catalog file {str(self.path)!r}"

    def _load(self) -> dict[str, Any]:
        """The ``servers`` of the file as it is now (empty when there is none); raises
        ``ValueError`` for a file that is not a catalog."""
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            return {}
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ValueError("it is not a regular file")
            if info.st_size > MAX_CATALOG_BYTES:
                raise ValueError(f"it is larger than {MAX_CATALOG_BYTES} bytes")
            data = file.read(MAX_CATALOG_BYTES + 1)
        if len(data) > MAX_CATALOG_BYTES:
            raise ValueError(f"it is larger than {MAX_CATALOG_BYTES} bytes")
        try:
            document = json.loads(data)
        except RecursionError:
            raise ValueError("it nests too deeply") from None
        except UnicodeDecodeError:
            raise ValueError("it is not UTF-8 text") from None
        if not (isinstance(document, dict) and document.get("version") == 1):
            raise ValueError("it is not a version 1 tool catalog")
        servers = document.get("servers")
        if not isinstance(servers, dict):
            raise ValueError("its 'servers' is not an object")
        return servers

    def _read_all(self) -> dict[str, Any]:
        with self._lock:
            if self._servers is None:
                try:
                    self._servers = self._load()
                except (OSError, ValueError) as exc:
                    logger.warning("%s is not used: %s; lazy servers are started", self, exc)
                    self._servers = {}
            return self._servers

    async def read(self, server: str) -> Any:
        return (await asyncio.to_thread(self._read_all)).get(server)

    def _write(self, server: str, entry: MCPToolCatalogServer) -> None:
        with self._lock:
            try:
                servers = dict(self._load())
            except (OSError, ValueError):
                servers = {}  # not a catalog (said when read): replaced by one
            servers[server] = entry
            document: MCPToolCatalog = {"version": 1, "servers": servers}
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as file:
                    json.dump(document, file, ensure_ascii=False, separators=(",", ":"))
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            if self._servers is not None:
                self._servers = {**self._servers, server: entry}

    async def write(self, server: str, entry: MCPToolCatalogServer) -> None:
        await asyncio.to_thread(self._write, server, entry)


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
        try:
            entry = _ENTRY.validate_python(raw, strict=True)
        except ValidationError as exc:
            self._warn(server, f"it is not a catalog entry: {exc.error_count()} problem(s)")
            return None
        if entry["source"] != source_of(config):
            self._warn(server, "it was written for another configuration of the server")
            return None
        try:
            matches = await asyncio.to_thread(tools_fingerprint, entry["tools"]) == entry["fingerprint"]
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
        raw = dump_tools(tools)
        fingerprint = await asyncio.to_thread(tools_fingerprint, raw)
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
