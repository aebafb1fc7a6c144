"""Every accepted connection shape, normalised to ``{name: ServerConfig}``; errors that name the
server and the field."""

from __future__ import annotations

import difflib
import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from pydantic import ValidationError

from langgraph_mcp.config._env import ENV_FILE, expand_fields, with_env_file
from langgraph_mcp.config._models import (
    CONFIG_TYPES,
    MODEL_BY_TRANSPORT,
    InProcessServerConfig,
    ServerConfig,
    StdioServerConfig,
)
from langgraph_mcp.errors import MCPConfigError

__all__ = ["load_connections"]

logger = logging.getLogger("langgraph_mcp.config")


FOREIGN_KEYS = frozenset({"autoApprove", "alwaysAllow", "description", "gallery", "version", "name"})
TRANSPORT_ALIASES = {
    "stdio": "stdio",
    "http": "http",
    "streamable_http": "http",
    "streamable-http": "http",
    "streamablehttp": "http",
    "sse": "sse",
}


def _field_name(loc: tuple[int | str, ...]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + item)
    return "".join(parts) or "<server>"


def _parse_server(name: str, raw: Any, folder: Path | None = None) -> ServerConfig | None:
    if isinstance(raw, CONFIG_TYPES):
        return raw
    if isinstance(raw, (MCPServer, Server)):
        return InProcessServerConfig(server=raw)
    if isinstance(raw, str):
        raw = {"url": raw}  # shorthand: a URL means streamable HTTP
    if not isinstance(raw, Mapping):
        raise MCPConfigError(
            name, "<server>", f"expected a mapping or a server config object, got {type(raw).__name__}"
        )
    data = dict(raw)
    disabled = data.pop("disabled", False)
    if not isinstance(disabled, bool):
        raise MCPConfigError(name, "disabled", "must be true or false")
    if disabled:
        logger.info("MCP server %r is disabled in its configuration; skipping it", name)
        return None
    for key in FOREIGN_KEYS & data.keys():
        data.pop(key)
    env_file = data.pop(ENV_FILE, None)
    transport = _transport_name(name, data.pop("transport", None), "transport")
    kind = _transport_name(name, data.pop("type", None), "type")
    if transport is not None and kind is not None and transport != kind:
        raise MCPConfigError(name, "transport", f"'transport' ({transport!r}) and 'type' ({kind!r}) disagree")
    transport = transport or kind
    if transport is None:
        if "server" in data:
            transport = "in_process"
        elif "command" in data and "url" in data:
            raise MCPConfigError(
                name,
                "url",
                "a server is either stdio ('command') or HTTP ('url'), not both: remove one of them",
            )
        elif "command" in data:
            transport = "stdio"
        elif "url" in data:
            transport = "http"
        else:
            unknown = sorted(k for k in data if k not in _ALL_FIELDS)
            if unknown:
                raise MCPConfigError(name, unknown[0], _unknown_field_message(unknown[0]))
            raise MCPConfigError(
                name, "command", "no 'command' (stdio) or 'url' (HTTP) given, and no 'transport'"
            )
    data, written = expand_fields(data, name)
    if env_file is not None:
        if transport != "stdio":
            raise MCPConfigError(name, ENV_FILE, "only a stdio server (one with a 'command') has an envFile")
        data = with_env_file(name, data, env_file, folder)
    model = MODEL_BY_TRANSPORT[transport]
    try:
        config = model.model_validate(data)
    except ValidationError as exc:
        # A misspelt key explains a "missing" one: report unknown keys first.
        first = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")[0]
        field = _field_name(first["loc"])
        msg = first["msg"]
        if first["type"] == "extra_forbidden":
            msg = _unknown_field_message(field, transport)
        more = f" (and {len(exc.errors()) - 1} more problem(s))" if len(exc.errors()) > 1 else ""
        raise MCPConfigError(name, field, msg + more) from None
    if isinstance(config, StdioServerConfig):
        config._written = written
    return config  # type: ignore[return-value]


_ALL_FIELDS = frozenset().union(*(m.model_fields for m in MODEL_BY_TRANSPORT.values()))


_TRANSPORT_LABELS = {"stdio": "stdio", "http": "HTTP", "sse": "SSE", "in_process": "in-process"}


def _unknown_field_message(field: str, transport: str | None = None) -> str:
    kind = f"a {transport} server" if transport else "any server"
    msg = f"unknown field for {kind}"
    owners = [t for t, model in MODEL_BY_TRANSPORT.items() if field in model.model_fields]
    if owners:  # a field of another transport
        if {"http", "sse"} <= set(owners):
            owners = [t for t in owners if t != "sse"]
        labels = " and ".join(_TRANSPORT_LABELS[t] for t in owners)
        return f"{msg}: {field!r} belongs to {labels} servers"
    close = difflib.get_close_matches(field, sorted(_ALL_FIELDS), n=1)
    return f"{msg}; did you mean {close[0]!r}?" if close else msg


def _transport_name(server: str, value: Any, key: str) -> str | None:
    """Canonical transport for a ``transport`` / ``type`` value (aliases resolved)."""
    if value is None:
        return None
    canonical = TRANSPORT_ALIASES.get(value.lower()) if isinstance(value, str) else None
    if canonical is None and value == "in_process":
        canonical = "in_process"
    if canonical is None:
        raise MCPConfigError(
            server,
            key,
            f"unknown transport {value!r}; use one of 'stdio', 'http' "
            "(aliases 'streamable_http', 'streamable-http') or 'sse'",
        )
    return canonical


def _read_file(source: str | os.PathLike[str]) -> tuple[Any, Path]:
    """The JSON in a config file, and the file's folder (symlinks kept)."""
    try:
        path = Path(source).expanduser()
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError, RuntimeError) as exc:  # ValueError: a NUL; RuntimeError: ~nobody
        raise MCPConfigError(None, None, f"cannot read config file {str(source)!r}: {exc}") from None
    try:
        return json.loads(text), Path(os.path.abspath(path)).parent
    except json.JSONDecodeError as exc:
        raise MCPConfigError(None, None, f"config file {str(path)!r} is not valid JSON: {exc}") from None


def load_connections(source: Any) -> dict[str, ServerConfig]:
    """Normalise any accepted connection shape to ``{name: ServerConfig}``.

    Raises:
        MCPConfigError: naming the server and field that is wrong, and the file when ``source``
            is a path.
    """
    if isinstance(source, (str, os.PathLike)):
        data, folder = _read_file(source)
        try:
            return _connections(data, folder)
        except MCPConfigError as exc:  # said with the file it is in (a deployment reads one)
            if exc.file is not None:
                raise
            shown = str(Path(source).expanduser())
            raise MCPConfigError(exc.server, exc.field, exc.reason, file=shown) from None
    return _connections(source, None)


def _connections(source: Any, folder: Path | None) -> dict[str, ServerConfig]:
    if isinstance(source, (MCPServer, Server)):
        name = source.name or "server"
        return {name: InProcessServerConfig(server=source)}
    if not isinstance(source, Mapping):
        raise MCPConfigError(
            None,
            None,
            "connections must be a mapping of server name to server config, a path to a JSON "
            f"config file, or an MCPServer (got {type(source).__name__})",
        )
    if "mcpServers" in source or "servers" in source:
        key = "mcpServers" if "mcpServers" in source else "servers"
        inner = source[key]
        if not isinstance(inner, Mapping):
            raise MCPConfigError(None, key, "must be a mapping of server name to server config")
        source = inner
    servers: dict[str, ServerConfig] = {}
    for name, raw in source.items():
        if not isinstance(name, str) or not name:
            raise MCPConfigError(str(name), "<name>", "server names must be non-empty strings")
        parsed = _parse_server(name, raw, folder)
        if isinstance(parsed, StdioServerConfig) and folder and parsed.cwd:
            try:
                cwd = Path(parsed.cwd).expanduser()
            except RuntimeError as exc:  # ~nobody
                raise MCPConfigError(name, "cwd", str(exc)) from None
            parsed = parsed.model_copy(update={"cwd": os.path.normpath(folder / cwd)})
        if parsed is not None:
            servers[name] = parsed
    return servers
