"""Connection configuration: what servers to talk to and how.

Accepted shapes (all normalised to ``dict[str, ServerConfig]`` by
:func:`load_connections`):

* a mapping ``{name: server}`` where each server is a dict in the standard
  ``mcpServers`` shape (``command``/``args``/``env``/``cwd`` for stdio,
  ``url``/``headers`` for HTTP), a bare URL string (streamable HTTP), a typed
  model from this module, or an in-process ``MCPServer`` / low-level ``Server``;
* a mapping with a top-level ``"mcpServers"`` (Claude Desktop, Cursor) or
  ``"servers"`` (VS Code) key;
* a path (``str`` or ``os.PathLike``) to a JSON file in either of those shapes;
* a single in-process ``MCPServer`` (named after the server).

``${VAR}``, ``${VAR:-default}`` and ``${env:VAR}`` are expanded from
``os.environ`` in ``command``, ``args``, ``env``, ``cwd``, ``url`` and
``headers``. In a config file, a relative stdio ``cwd`` is resolved against
the file's folder (so a file can name servers next to it wherever the process
was started). A stdio server's ``envFile`` (VS Code) names a dotenv file whose
variables are added to its ``env`` (``env`` wins). Any problem raises
:class:`MCPConfigError`, naming the server and the field.

Reprs never show a value that came from the environment: a stdio server's
``command``, ``args`` and ``cwd`` are shown as written (``--token=${TOKEN}``),
``env``, ``headers`` and ``auth`` not at all, and a URL without its userinfo and
query values.
"""

from __future__ import annotations

import difflib
import json
import logging
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeAlias

from langchain_core.language_models import BaseChatModel
from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from langgraph_mcp._redact import Redactor, auth_secrets, header_secrets, redact_url
from langgraph_mcp.errors import MCPConfigError

__all__ = [
    "ContentRoute",
    "HTTPServerConfig",
    "InProcessServerConfig",
    "OutputHandling",
    "RestartPolicy",
    "SSEServerConfig",
    "ServerConfig",
    "StdioServerConfig",
    "load_connections",
]

logger = logging.getLogger("langgraph_mcp.config")

ContentRoute: TypeAlias = Literal["content", "artifact"]

LoggingLevel: TypeAlias = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]

ProtocolMode: TypeAlias = Literal["auto", "legacy", "2026-07-28"]

DEFAULT_CALL_TIMEOUT = 300.0
DEFAULT_CONNECT_TIMEOUT = 30.0

# Keys other clients write into their config files that mean nothing to us.
_FOREIGN_KEYS = frozenset({"autoApprove", "alwaysAllow", "description", "gallery", "version", "name"})
_ENV_FILE = "envFile"
_TRANSPORT_ALIASES = {
    "stdio": "stdio",
    "http": "http",
    "streamable_http": "http",
    "streamable-http": "http",
    "streamablehttp": "http",
    "sse": "sse",
}


class OutputHandling(BaseModel):
    """Where each kind of MCP content block goes: the message ``content`` (seen by
    the model) or the ``artifact`` (kept for the application, not sent to the model).

    Audio and embedded resources default to the artifact: ``ToolNode`` serialises
    any content list holding an ``audio`` block to a JSON string, and resources are
    usually large. A text note naming what was moved stays in ``content``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: ContentRoute = "content"
    image: ContentRoute = "content"
    audio: ContentRoute = "artifact"
    resource: ContentRoute = "artifact"
    resource_link: ContentRoute = "content"
    max_chars: int | None = Field(default=None, ge=100, strict=True)
    """At most this many characters of a result's (or an error's) text reach the model, followed
    by a note saying it was cut (``None``: no limit). See :mod:`langgraph_mcp.output`."""
    overflow: Literal["truncate", "artifact", "store"] = "truncate"
    """What happens to the full text of a cut output: dropped (``truncate``), kept in the
    ``ToolMessage`` artifact (``artifact``), or kept in the graph's store for the model to read
    on with the ``read_tool_output`` tool (``store``)."""


class RestartPolicy(BaseModel):
    """How a server that cannot be started or reached is tried again.

    A session that dies (a stdio server that exits, a lost HTTP connection) is replaced on its
    next use: the server is started (or reached) again. After a failed attempt the next one waits
    ``backoff`` seconds, then ``backoff * multiplier``, ... up to ``max_backoff``; within that wait
    every use fails at once with the last error (no new attempt). After ``max_attempts`` failed
    attempts in a row the server is given up: every use fails with an error saying so, without a
    new attempt, until :meth:`MCPPool.retry <langgraph_mcp.MCPPool.retry>`. A successful connect
    resets the count and the back-off.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_attempts: int | None = Field(default=None, ge=1, strict=True)
    """Failed attempts in a row before giving up (``None``: never give up)."""
    backoff: float = Field(default=1.0, ge=0)
    """Seconds to wait after the first failed attempt."""
    multiplier: float = Field(default=2.0, ge=1)
    """Each further wait is the previous one times this."""
    max_backoff: float = Field(default=30.0, ge=0)
    """The longest wait between two attempts."""


class _ServerBase(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, arbitrary_types_allowed=True, hide_input_in_errors=True
    )

    timeout: float | None = Field(default=DEFAULT_CALL_TIMEOUT, gt=0)
    """Seconds one ``tools/call`` may take (``None``: no limit). Unset: the pool's default."""
    connect_timeout: float = Field(default=DEFAULT_CONNECT_TIMEOUT, gt=0)
    """Seconds to start the server and finish the handshake."""
    restart: RestartPolicy = Field(default_factory=RestartPolicy)
    """How the server is tried again after it could not be started or reached."""
    max_concurrent_calls: int | None = Field(default=None, ge=1, strict=True)
    """At most this many tool calls in flight per session (``None``: no limit). Calls beyond it
    queue, served round-robin across LangGraph threads so that no graph starves another; the wait
    counts toward the call's timeout."""
    tools: tuple[str, ...] | None = None
    """Only expose these MCP tool names (``None``: all)."""
    exclude_tools: tuple[str, ...] = ()
    """Never expose these MCP tool names."""
    prefix: str | None = None
    """Prepended to every tool name of this server (e.g. ``"github_"``)."""
    protocol: ProtocolMode = "auto"
    """``auto`` negotiates; ``legacy`` forces the 2025-11-25 handshake; a version pins it."""
    output_handling: OutputHandling = Field(default_factory=OutputHandling)
    resource_tool: bool = False
    """Offer the model a ``read_resource(uri)`` tool that reads this server's resources (its
    description lists the first ones); its result follows ``output_handling`` /
    ``tool_output["read_resource"]`` like any tool's."""
    tool_output: dict[str, OutputHandling] = Field(default_factory=dict)
    """Per-tool changes to ``output_handling``, by MCP tool name: the fields given replace the
    server's (e.g. ``{"fetch": {"max_chars": 20000, "overflow": "store"}}``)."""
    tool_timeouts: dict[str, float | None] = Field(default_factory=dict)
    """Per-tool call timeouts in seconds, by MCP tool name (``None``: no limit)."""
    log_level: LoggingLevel | None = None
    """Ask the server for log messages at this level and above (``None``: the server's default;
    2026-07-28 servers then send none)."""
    log_events: bool = False
    """Also emit the server's log messages as ``{"type": "mcp_log"}`` custom stream events."""
    elicitation: Literal["interrupt", "decline"] | Callable[..., Any] = "interrupt"
    """How questions from the server are answered: ``interrupt`` the graph for a person,
    ``decline`` them all, or an async ``handler(request, call_info) -> response``."""
    elicitation_timeout: float | None = Field(default=3600.0, gt=0)
    """Seconds a handshake-era call is held open waiting for a person (``None``: no limit)."""
    sampling_model: Any = Field(default=None, repr=False)
    """A LangChain chat model that answers the server's sampling requests (``None``: refuse)."""
    sampling_approval: bool = False
    """Ask a person (an ``mcp_sampling`` interrupt) before answering a sampling request."""
    roots: tuple[dict[str, Any], ...] = ()
    """Roots offered to the server: paths or ``file://`` URIs, or ``{"uri", "name"}`` objects."""
    session_scope: Literal["shared", "thread"] = "shared"
    """``shared``: one session serves every conversation. ``thread``: each LangGraph thread
    (``thread_id``) gets a session of its own (for stdio, a server process of its own), so
    conversations never share the server's per-session state; calls without a thread use the
    shared session."""
    max_thread_sessions: int = Field(default=32, ge=1, strict=True)
    """With ``session_scope: thread``: at most this many thread sessions stay open; opening
    another closes the least recently used idle one (busy ones are never closed)."""
    thread_session_ttl: float | None = Field(default=600.0, gt=0)
    """With ``session_scope: thread``: seconds a thread session may stay idle (no call in flight)
    before it is closed (``None``: never). The thread's next call opens a fresh session."""

    def output_for(self, tool: str) -> OutputHandling:
        """The output handling of MCP tool ``tool``: ``output_handling`` with ``tool_output[tool]``'s
        fields over it."""
        own = self.tool_output.get(tool)
        if own is None:
            return self.output_handling
        return self.output_handling.model_copy(update={k: getattr(own, k) for k in own.model_fields_set})

    def redactor(self) -> Redactor:
        """What keeps this server's secrets out of messages and logs (see ``_redact.py``)."""
        return Redactor()

    @field_validator("sampling_model")
    @classmethod
    def _model(cls, value: Any) -> Any:
        if value is not None and not isinstance(value, BaseChatModel):
            raise ValueError(f"must be a LangChain chat model (got {type(value).__name__})")
        return value

    @field_validator("roots", mode="before")
    @classmethod
    def _roots(cls, value: Any) -> Any:
        if isinstance(value, (str, Mapping)):
            value = [value]
        roots = []
        for item in value or ():
            uri, name = (item.get("uri"), item.get("name")) if isinstance(item, Mapping) else (item, None)
            if not isinstance(uri, (str, os.PathLike)):
                raise ValueError("each root is a path, a file:// URI or an object with a 'uri'")
            uri = str(uri)
            if not uri.startswith("file://"):
                try:
                    uri = Path(uri).expanduser().resolve().as_uri()
                except (RuntimeError, OSError) as exc:  # ~nobody; (ValueError: a NUL) is reported
                    raise ValueError(f"cannot resolve a root path: {exc}") from None
            roots.append({"uri": uri, "name": name} if name else {"uri": uri})
        return tuple(roots)

    @field_validator("tools", "exclude_tools", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError("must be a list of tool names, not a string")
        return value


class StdioServerConfig(_ServerBase):
    """A server started as a child process, spoken to over stdin/stdout.

    The child gets only the SDK's safe default environment (``HOME``, ``PATH``,
    ``SHELL``, ``TERM``, ``USER``, ``LOGNAME``) plus ``env``: pass API keys
    explicitly. Its stderr is forwarded line by line to the logger
    ``langgraph_mcp.server.<name>``.
    """

    transport: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict, repr=False)
    cwd: str | None = None
    encoding: str = "utf-8"

    # command / args / cwd as written, where ${VAR} expansion changed them (reprs show these).
    _written: dict[str, Any] = PrivateAttr(default_factory=dict)

    @field_validator("args", mode="before")
    @classmethod
    def _args(cls, value: Any) -> Any:
        if isinstance(value, str):
            # Never split (quoting rules differ) and never echoed (it may hold a secret).
            raise ValueError(
                'must be a list with one string per argument (e.g. ["-y", "package"]), not one string'
            )
        return value

    def shown(self, field: Literal["command", "args", "cwd"]) -> Any:
        """``field`` as it may be shown in messages and logs: as written when ``${VAR}``
        expansion changed it (the expanded value may hold a secret), else its value."""
        return self._written.get(field, getattr(self, field))

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            yield name, self._written.get(name, value) if name else value

    def redactor(self) -> Redactor:
        """``env`` values become ``***``; expanded ``command`` / ``args`` / ``cwd`` show as written."""
        shown = {}
        for value, written in [
            (self.command, self.shown("command")),
            (self.cwd, self.shown("cwd")),
            *zip(self.args, self.shown("args"), strict=False),
        ]:
            if value is not None and value != written:
                shown[value] = written
        return Redactor(self.env.values(), shown=shown)

    def __eq__(self, other: object) -> bool:
        # How a value was written does not make two configs different.
        if not isinstance(other, StdioServerConfig):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]  # (a dict field: never hashable anyway)


class _RemoteBase(_ServerBase):
    url: str = Field(min_length=1)
    headers: dict[str, str] = Field(default_factory=dict, repr=False)
    auth: Any = Field(default=None, repr=False)
    """An ``httpx2.Auth`` (e.g. the SDK's ``OAuthClientProvider``) or a ``(user, password)`` pair."""

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            yield name, redact_url(value) if name == "url" else value

    def redactor(self) -> Redactor:
        """Header values, ``auth`` and the URL's userinfo, query values and fragment."""
        return Redactor([*header_secrets(self.headers), *auth_secrets(self.auth)], urls=[self.url])

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not re.match(r"^https?://", value, re.IGNORECASE):
            # The value is not echoed: URLs often carry credentials.
            raise ValueError("must start with http:// or https://")
        return value


class HTTPServerConfig(_RemoteBase):
    """A server reached over streamable HTTP."""

    transport: Literal["http"] = "http"
    sse_fallback: bool = True
    """Retry with the old SSE transport when the server rejects streamable HTTP."""


class SSEServerConfig(_RemoteBase):
    """A server reached over the old HTTP+SSE transport."""

    transport: Literal["sse"] = "sse"
    sse_read_timeout: float | None = Field(default=None, gt=0)
    """Seconds the event stream may stay silent before the session is dropped (``None``: never;
    a quiet stream is normal while a long call runs or nothing happens)."""


class InProcessServerConfig(_ServerBase):
    """An ``MCPServer`` (or low-level ``Server``) running in this process."""

    transport: Literal["in_process"] = "in_process"
    server: Any = Field(repr=False)

    @field_validator("server")
    @classmethod
    def _server(cls, value: Any) -> Any:
        if not isinstance(value, (MCPServer, Server)):
            raise ValueError(f"must be an MCPServer or Server instance (got {type(value).__name__})")
        return value


ServerConfig: TypeAlias = Annotated[
    StdioServerConfig | HTTPServerConfig | SSEServerConfig | InProcessServerConfig,
    Field(discriminator="transport"),
]
_CONFIG_TYPES = (StdioServerConfig, HTTPServerConfig, SSEServerConfig, InProcessServerConfig)
_MODEL_BY_TRANSPORT: dict[str, type[BaseModel]] = {
    "stdio": StdioServerConfig,
    "http": HTTPServerConfig,
    "sse": SSEServerConfig,
    "in_process": InProcessServerConfig,
}

_VAR = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-(.*?))?\}")


def _expand(text: str, server: str, field: str) -> str:
    def sub(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = os.environ.get(name)
        if value is None or (value == "" and default is not None):
            if default is None:
                raise MCPConfigError(
                    server, field, f"environment variable {name!r} is not set (use ${{{name}:-default}})"
                )
            return default
        return value

    return _VAR.sub(sub, text)


def _expand_fields(raw: dict[str, Any], server: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``raw`` with ``${VAR}`` expanded, and the stdio fields expansion changed, as written."""
    out = dict(raw)
    written: dict[str, Any] = {}
    for key in ("command", "cwd", "url"):
        if isinstance(out.get(key), str):
            out[key] = _expand(out[key], server, key)
            if out[key] != raw[key] and key != "url":
                written[key] = raw[key]
    if isinstance(out.get("args"), (list, tuple)):
        out["args"] = [
            _expand(a, server, f"args[{i}]") if isinstance(a, str) else a for i, a in enumerate(out["args"])
        ]
        if out["args"] != list(raw["args"]):
            written["args"] = tuple(raw["args"])
    for key in ("env", "headers"):
        if isinstance(out.get(key), Mapping):
            out[key] = {
                k: _expand(v, server, f"{key}.{k}") if isinstance(v, str) else v for k, v in out[key].items()
            }
    return out, written


def _field_name(loc: tuple[int | str, ...]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + item)
    return "".join(parts) or "<server>"


def _parse_server(name: str, raw: Any, folder: Path | None = None) -> ServerConfig | None:
    if isinstance(raw, _CONFIG_TYPES):
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
    for key in _FOREIGN_KEYS & data.keys():
        data.pop(key)
    env_file = data.pop(_ENV_FILE, None)
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
    data, written = _expand_fields(data, name)
    if env_file is not None:
        if transport != "stdio":
            raise MCPConfigError(name, _ENV_FILE, "only a stdio server (one with a 'command') has an envFile")
        data = _with_env_file(name, data, env_file, folder)
    model = _MODEL_BY_TRANSPORT[transport]
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


def _with_env_file(server: str, data: dict[str, Any], env_file: Any, folder: Path | None) -> dict[str, Any]:
    """``data`` with the variables of its ``envFile`` under its ``env`` (``env`` wins)."""
    if not isinstance(env_file, str) or not env_file:
        raise MCPConfigError(server, _ENV_FILE, "must be the path of a dotenv file (a string)")
    path = Path(_expand(env_file, server, _ENV_FILE))
    hint = "fix the path or create the file"
    try:
        path = path.expanduser()
        if not path.is_absolute():
            base = "the config file's folder" if folder else "the working directory"
            hint += f" (a relative path is relative to {base})"
            path = (folder or Path.cwd()) / path
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, ValueError, RuntimeError) as exc:  # ValueError: a NUL, or not UTF-8
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise MCPConfigError(server, _ENV_FILE, f"cannot read {str(path)!r}: {reason}; {hint}") from None
    try:
        variables = _parse_dotenv(text)
    except _DotenvError as exc:
        raise MCPConfigError(server, _ENV_FILE, f"{path}:{exc.line}: {exc.problem}") from None
    env = data.get("env", {})
    if not isinstance(env, Mapping):
        return data  # validation reports the bad 'env'
    return {**data, "env": {**variables, **env}}


class _DotenvError(ValueError):
    def __init__(self, line: int, problem: str) -> None:
        self.line = line
        self.problem = problem
        super().__init__(f"line {line}: {problem}")


_DOTENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_DOTENV_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "$": "$"}


def _parse_dotenv(text: str) -> dict[str, str]:
    """The variables of a dotenv file: ``KEY=VALUE`` lines, ``#`` comments, an optional
    ``export`` prefix, values in single quotes (literal) or double quotes (``\\n``-style
    escapes; may span lines), unquoted values ending at `` #``. Values are taken literally
    (no ``${VAR}`` expansion). Raises ``ValueError`` naming the line (never its content)."""
    lines = text.replace("\r\n", "\n").split("\n")
    variables: dict[str, str] = {}
    i = 0
    while i < len(lines):
        number, line = i + 1, lines[i].strip()
        i += 1
        if not line or line.startswith("#"):
            continue
        if line.startswith(("export ", "export\t")):
            line = line[len("export") :].lstrip()
        key, equals, rest = line.partition("=")
        key = key.strip()
        if not equals or not _DOTENV_KEY.fullmatch(key):
            raise _DotenvError(number, "expected KEY=VALUE")
        rest = rest.strip()
        if rest[:1] in ("'", '"'):
            quote, body = rest[0], rest[1:]
            while (end := _closing_quote(body, quote)) is None:
                if i >= len(lines):
                    raise _DotenvError(number, f"the value's {quote} quote is never closed")
                body += "\n" + lines[i]
                i += 1
            after = body[end + 1 :].strip()
            if after and not after.startswith("#"):
                raise _DotenvError(number, "unexpected text after the closing quote")
            value = body[:end]
            if quote == '"':
                value = re.sub(r"\\(.)", lambda m: _DOTENV_ESCAPES.get(m[1], m[0]), value)
        elif rest.startswith("#"):
            value = ""
        else:
            value = re.split(r"\s+#", rest, maxsplit=1)[0].strip()
        variables[key] = value
    return variables


def _closing_quote(body: str, quote: str) -> int | None:
    """Index of the quote that closes ``body`` (a backslash escapes in double quotes)."""
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\" and quote == '"':
            index += 2
            continue
        if char == quote:
            return index
        index += 1
    return None


_ALL_FIELDS = frozenset().union(*(m.model_fields for m in _MODEL_BY_TRANSPORT.values()))


_TRANSPORT_LABELS = {"stdio": "stdio", "http": "HTTP", "sse": "SSE", "in_process": "in-process"}


def _unknown_field_message(field: str, transport: str | None = None) -> str:
    kind = f"a {transport} server" if transport else "any server"
    msg = f"unknown field for {kind}"
    owners = [t for t, model in _MODEL_BY_TRANSPORT.items() if field in model.model_fields]
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
    canonical = _TRANSPORT_ALIASES.get(value.lower()) if isinstance(value, str) else None
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
        MCPConfigError: naming the server and field that is wrong.
    """
    folder: Path | None = None
    if isinstance(source, (str, os.PathLike)):
        source, folder = _read_file(source)
    elif isinstance(source, (MCPServer, Server)):
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
