"""The typed configuration of one MCP server (one model per transport) and its parts."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeAlias

from langchain_core.language_models import BaseChatModel
from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
    model_validator,
)

from langgraph_mcp._oauth.deployment import (
    ClientCredentialsOAuth,
    DeploymentOAuth,
    IdentityAssertionOAuth,
    OAuthOption,
    PrivateKeyJWTOAuth,
)
from langgraph_mcp._oauth.options import UserOAuth, secure_url
from langgraph_mcp._support.headers import header_problem
from langgraph_mcp._support.redact import Redactor, auth_secrets, header_secrets, redact_url

__all__ = [
    "CONFIG_TYPES",
    "ClientCredentialsOAuth",
    "DeploymentOAuth",
    "IdentityAssertionOAuth",
    "OAuthOption",
    "PrivateKeyJWTOAuth",
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_CONNECT_TIMEOUT",
    "MODEL_BY_TRANSPORT",
    "ContentRoute",
    "HTTPServerConfig",
    "InProcessServerConfig",
    "ListingTTL",
    "LoggingLevel",
    "OutputHandling",
    "ProtocolMode",
    "RestartPolicy",
    "SSEServerConfig",
    "ServerConfig",
    "UserOAuth",
    "StdioServerConfig",
]


ContentRoute: TypeAlias = Literal["content", "artifact"]

LoggingLevel: TypeAlias = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]

ProtocolMode: TypeAlias = Literal["auto", "legacy", "2026-07-28"]

ListingTTL: TypeAlias = Literal["server", "ignore"] | Annotated[float, Field(ge=0, le=86400)]
"""How long a server's listings are reused: see ``_ServerBase.listing_ttl``."""

DEFAULT_CALL_TIMEOUT = 300.0
DEFAULT_CONNECT_TIMEOUT = 30.0


# Keys other clients write into their config files that mean nothing to us.
class OutputHandling(BaseModel):
    """Where each kind of MCP content block goes: the message ``content`` (seen by
    the model) or the ``artifact`` (kept for the application, not sent to the model).

    Audio and embedded resources default to the artifact: ``ToolNode`` serialises
    any content list holding an ``audio`` block to a JSON string, and resources are
    usually large. A text note naming what was moved stays in ``content``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: ContentRoute = "content"
    """Where text blocks go."""
    image: ContentRoute = "content"
    """Where image blocks go."""
    audio: ContentRoute = "artifact"
    """Where audio blocks go (in the content they travel as ``file`` blocks)."""
    resource: ContentRoute = "artifact"
    """Where embedded resources (text or blob) go."""
    resource_link: ContentRoute = "content"
    """Where resource links go."""
    max_chars: int | None = Field(default=None, ge=100, strict=True)
    """At most this many characters of a result's (or an error's) text reach the model, followed
    by a note saying it was cut (``None``: no limit). See :mod:`langgraph_mcp._call.output`."""
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
    max_tools: int = Field(default=1000, ge=1, strict=True)
    """At most this many entries of the server's tool listing are read, the first ones in the
    server's order (further pages are not fetched); the rest are left out with one warning naming
    the server. It bounds the time and memory a listing takes. 1,000 is several times what a
    model can usefully choose from, and takes about a second of CPU to check (off the event
    loop: other calls go on meanwhile)."""
    listing_ttl: ListingTTL = "server"
    """How long the server's listings (tools, resources, resource templates, prompts) are reused
    before they are listed again, on their next use. ``"server"``: as long as the server's
    freshness hints say (2026-07-28 ``ttlMs``; a ``cacheScope: "public"`` listing is shared by
    the server's ``session_scope: thread`` sessions); without a hint, until the server says the
    list changed. ``"ignore"``: hints are not taken; until the server says the list changed. A
    number: that many seconds (at most 86400), whatever the server says, in either protocol era
    (``0``: listed again at every use). A change notice from the server always ends a listing at
    once. Resource reads are reused only with ``"server"``, as long as their ``ttlMs`` says."""
    tools: tuple[str, ...] | None = None
    """Only expose these MCP tool names (``None``: all)."""
    exclude_tools: tuple[str, ...] = ()
    """Never expose these MCP tool names."""
    prefix: str | None = None
    """Prepended to every tool name of this server (e.g. ``"github_"``)."""
    protocol: ProtocolMode = "auto"
    """``auto`` negotiates; ``legacy`` forces the 2025-11-25 handshake; a version pins it."""
    output_handling: OutputHandling = Field(default_factory=OutputHandling)
    """Where each kind of content of a result goes (the model or the artifact), and how long a
    text the model sees may be."""
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
    progress_ui: bool = True
    """Also show a call's progress as a generative-UI message (component ``mcp-progress``, a
    progress bar in Agent Chat UI); off: progress is only the ``mcp_progress`` stream events."""
    instructions: bool = False
    """Offer the server's ``instructions`` (what it says, when a session starts, about how to use
    its tools) to the model in agents (``MCPMiddleware``, ``create_mcp_agent``): in the system
    message, marked as the server's text, without hidden characters, at most 4,000 characters,
    updated with each new session. The server's text is untrusted, as its tool descriptions are:
    turn it on only for servers you trust."""
    apps: bool = False
    """Host this server's MCP Apps views (``io.modelcontextprotocol/ui``): advertise the extension
    to the server, and when a tool with a ``ui://`` view returns a result, read the view and emit
    it with the result as an ``mcp-app`` generative-UI message
    (:class:`~langgraph_mcp.types.MCPAppUIProps`). Tools meant only for a view (``visibility``
    without ``"model"``) are never offered to the model, with or without this option."""
    tasks: bool = True
    """Follow tasks (``io.modelcontextprotocol/tasks``, 2026-07-28): advertise the extension, so
    the server may answer a call with a task, which is polled to its result at the server's
    interval; its handle is kept in the checkpoint, its questions are asked like any others, and
    cancelling the run or its timeout cancels it on the server. Off: the extension is not
    advertised (a server that needs it then refuses such calls)."""
    skills: bool = True
    """Use this server's skills (``io.modelcontextprotocol/skills``) where it declares the
    extension: advertise it, and list its skills (``skills/list``, no file is read until a skill
    is loaded) for :class:`~langgraph_mcp.skills.MCPSkillsMiddleware`. Off: never listed."""
    task_detach_after: float | None = Field(default=None, ge=0)
    """Seconds a call follows its task before the run parks with an ``mcp_task`` interrupt
    instead of holding a worker (``None``: never; ``0``: as soon as the task is created); a
    resume picks the task up where it is (see the tasks guide)."""
    elicitation: Literal["interrupt", "decline"] | Callable[..., Any] = "interrupt"
    """How questions from the server are answered: ``interrupt`` the graph for a person,
    ``decline`` them all, or an async ``handler(request, call_info) -> response``."""
    elicitation_timeout: float | None = Field(default=3600.0, gt=0)
    """Seconds a handshake-era call is held open waiting for a person (``None``: no limit)."""
    elicitation_loopback_http: bool = False
    """Also show URL-mode questions whose URL is plain ``http://`` to a loopback host
    (``localhost``, ``127.0.0.0/8``, ``::1``), e.g. a sign-in page of a server run locally. Other
    than that only ``https://`` URLs are shown; any other URL is refused to the server."""
    sampling_model: Any = Field(default=None, repr=False)
    """A LangChain chat model that answers the server's sampling requests (``None``: refuse).
    One that implements ``bind_tools`` is also given the tools a request offers (the client then
    declares ``sampling.tools``)."""
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
    lazy: bool = False
    """Start the server only when one of its tools is called (a tool search reveals its tools
    without starting it), while the pool's tool catalog (``MCPPool(tool_catalog=...)``,
    ``ToolSearch(catalog=...)``) holds its tools for this configuration; until then its tools are
    offered from the catalog. Without a catalog entry it starts at the first listing as usual, and
    its tools are written to the catalog for next time."""
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

    @property
    def samples_with_tools(self) -> bool:
        """Can ``sampling_model`` be given the tools a sampling request offers (it implements
        ``bind_tools``)? Then the client declares the ``sampling.tools`` capability."""
        model = self.sampling_model
        return isinstance(model, BaseChatModel) and type(model).bind_tools is not BaseChatModel.bind_tools

    def redactor(self) -> Redactor:
        """What keeps this server's secrets out of messages and logs (a
        :class:`~langgraph_mcp._support.redact.Redactor`)."""
        return Redactor()

    @field_validator("sampling_model")
    @classmethod
    def _model(cls, value: Any) -> Any:
        if value is not None and not isinstance(value, BaseChatModel):
            raise ValueError(f"must be a LangChain chat model (got {type(value).__name__})")
        return value

    @field_validator("listing_ttl", mode="before")
    @classmethod
    def _listing_ttl(cls, value: Any) -> Any:
        if value in ("server", "ignore") and isinstance(value, str):
            return value
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or not 0 <= value <= 86400
        ):
            raise ValueError(
                "must be 'server' (reuse listings as long as the server's hints say), 'ignore' "
                "(reuse them until the server says they changed) or a number of seconds from 0 to "
                f"86400, not {value!r}"[:300]
            )
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
    explicitly. Its stderr is forwarded line by line, without these secrets, to the logger
    ``langgraph_mcp.server.<name>.stderr``.
    """

    transport: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    """The program to start (``${VAR}`` expanded)."""
    args: tuple[str, ...] = ()
    """Its arguments, one string per argument (never split)."""
    env: dict[str, str] = Field(default_factory=dict, repr=False)
    """Environment variables for the server, added to the safe default environment (values are
    secrets: never shown)."""
    cwd: str | None = None
    """The server's working directory (``None``: the process's). In a config file, relative to
    the file's folder."""
    encoding: str = "utf-8"
    """The text encoding of the server's stdin, stdout and stderr."""

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
    """The server's ``http://`` or ``https://`` URL (``${VAR}`` expanded)."""
    headers: dict[str, str] = Field(default_factory=dict, repr=False)
    """HTTP headers sent with every request (values are secrets: never shown)."""
    auth: Any = Field(default=None, repr=False)
    """An ``httpx2.Auth`` (e.g. the SDK's ``OAuthClientProvider``) or a ``(user, password)`` pair."""

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            yield name, redact_url(value) if name == "url" else value

    def redactor(self) -> Redactor:
        """Header values, ``auth`` and the URL's userinfo, query values and fragment."""
        return Redactor([*header_secrets(self.headers), *auth_secrets(self.auth)], urls=[self.url])

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, item in value.items():
            problem = header_problem(name, item)
            if problem is not None:  # (said without the value: it may be a secret)
                raise ValueError(f"{problem}; it cannot be sent")
        return value

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
    oauth: OAuthOption | None = None
    """OAuth, by its ``flow``. Per-user (:class:`UserOAuth`, the default ``authorization_code``):
    each user's calls carry that user's own token, on sessions of their own (per user, or per
    user and thread with ``session_scope: thread``); the server's shared session (its tool
    listing) carries ``headers`` and ``auth`` only. The deployment's own
    (:class:`ClientCredentialsOAuth`, :class:`PrivateKeyJWTOAuth`,
    :class:`IdentityAssertionOAuth`): every session of the server, the shared one included,
    carries one token of the deployment's, kept in memory (see the "Headless agents" section
    of the OAuth guide)."""

    @property
    def user_oauth(self) -> UserOAuth | None:
        """``oauth`` when it is per-user OAuth, else ``None``."""
        return self.oauth if isinstance(self.oauth, UserOAuth) else None

    def redactor(self) -> Redactor:
        """As for any remote server, plus the OAuth secrets (keys, client secret, private key)."""
        base = super().redactor()
        if self.oauth is None:
            return base
        extra = self.oauth.secrets()
        return Redactor([*header_secrets(self.headers), *auth_secrets(self.auth), *extra], urls=[self.url])

    @field_validator("oauth")
    @classmethod
    def _oauth(cls, value: Any, info: Any) -> Any:
        if value is not None and info.data.get("auth") is not None:
            raise ValueError("'oauth' and 'auth' cannot both be set: the OAuth tokens replace 'auth'")
        return value

    @model_validator(mode="after")
    def _token_over_https(self) -> HTTPServerConfig:
        if self.oauth is not None and self.user_oauth is None and not secure_url(self.url):
            # (the URL is not echoed: URLs often carry credentials)
            raise ValueError(
                "'url' must be an https:// URL (http:// only to a loopback host) with the "
                f"{self.oauth.flow} flow: the deployment's token is sent to it"
            )
        return self


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
    """The ``MCPServer`` or low-level ``Server`` instance."""

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
CONFIG_TYPES = (StdioServerConfig, HTTPServerConfig, SSEServerConfig, InProcessServerConfig)
MODEL_BY_TRANSPORT: dict[str, type[BaseModel]] = {
    "stdio": StdioServerConfig,
    "http": HTTPServerConfig,
    "sse": SSEServerConfig,
    "in_process": InProcessServerConfig,
}
