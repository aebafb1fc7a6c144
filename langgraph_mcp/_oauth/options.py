"""The per-user OAuth option of an HTTP server (``HTTPServerConfig.oauth``)."""

from __future__ import annotations

import ipaddress
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = ["UserOAuth", "per_user_oauth", "secure_url"]


class UserOAuth(BaseModel):
    """Per-user OAuth for an HTTP server that acts for a person (see the "Per-user OAuth" guide).

    Each user connects once, in a browser: a call that needs the user's authorization raises an
    ``mcp_authorization`` interrupt carrying the authorization URL; the authorization server sends
    the browser to ``redirect_uri`` (the deployment's :func:`langgraph_mcp.oauth.oauth_callback_app`),
    which stores the user's tokens, encrypted with ``encryption_key``, in the graph's store.
    Resuming the run retries the call with them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)

    flow: Literal["authorization_code"] = "authorization_code"
    """``authorization_code`` (the default): each user signs in. The deployment's own flows are
    :class:`ClientCredentialsOAuth`, :class:`PrivateKeyJWTOAuth` and
    :class:`IdentityAssertionOAuth`."""
    redirect_uri: str = Field(min_length=1)
    """The URL of the deployment's callback route (``https://``; ``http://`` only to a loopback
    host), registered with the authorization server."""
    encryption_key: str = Field(repr=False, min_length=1)
    """A Fernet key (``cryptography.fernet.Fernet.generate_key()``; ``${VAR}`` expanded) that
    seals tokens in the store and signs ``state``; several, comma-separated and the newest first,
    while rotating keys (the first seals and signs, any opens, and tokens opened with an older
    one are sealed again with the first). A secret: never shown."""
    client_id: str | None = None
    """A client pre-registered with the authorization server (``None``: a client ID metadata
    document when ``client_metadata_url`` is set and the server supports it, else dynamic
    registration)."""
    client_secret: str | None = Field(default=None, repr=False)
    """The pre-registered client's secret, if it has one (a secret: never shown). Needs
    ``issuer``."""
    issuer: str | None = None
    """The issuer identifier of the authorization server ``client_id`` is registered with
    (``https://``; ``http://`` only to a loopback host). Required with ``client_secret``. Set, the
    client is used with that authorization server only: a server whose discovery names another
    one fails its calls instead of receiving the client's secret."""
    client_metadata_url: str | None = None
    """An ``https://`` URL of this client's metadata document, used as its client ID where the
    authorization server supports client ID metadata documents."""
    client_name: str = "langgraph-mcp"
    """The name dynamic registration gives the client (shown on consent pages)."""
    scopes: tuple[str, ...] | None = None
    """The scopes to ask for (``None``: those the server's challenge or metadata name)."""
    user_key: str | None = None
    """Where the user id is read when the run has no authenticated LangGraph user
    (``configurable.langgraph_auth_user``): this key of the run's context, or of its
    ``configurable``. A run with neither has no user: its calls fail, never using a token."""
    state_ttl: float = Field(default=600.0, gt=0, le=86400)
    """Seconds an authorization URL (its ``state``) stays usable."""
    refresh_margin: float = Field(default=60.0, ge=0, le=3600)
    """A token expiring within this many seconds is refreshed before a call."""

    @field_validator("redirect_uri", "client_metadata_url", "issuer")
    @classmethod
    def _https(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if not secure_url(value):
            raise ValueError("must be an https:// URL (http:// only to a loopback host)")
        return value

    @field_validator("encryption_key")
    @classmethod
    def _key(cls, value: str) -> str:
        from cryptography.fernet import Fernet

        keys = [k.strip() for k in value.split(",") if k.strip()]
        try:
            if not keys:
                raise ValueError
            for key in keys:
                Fernet(key.encode("ascii"))
        except (ValueError, UnicodeEncodeError):
            raise ValueError(
                "must be a Fernet key: 32 url-safe base64-encoded bytes "
                "(cryptography.fernet.Fernet.generate_key()), or several, comma-separated"
            ) from None
        return value

    @model_validator(mode="after")
    def _pinned(self) -> UserOAuth:
        if self.client_secret is not None and self.issuer is None:
            raise ValueError(
                "'client_secret' needs 'issuer': the authorization server the client is registered "
                "with (its secret is sent to no other)"
            )
        return self

    def secrets(self) -> list[str]:
        """The values never to show: the keys and the client secret."""
        return [s for s in (*self.keys(), self.encryption_key, self.client_secret) if s]

    def keys(self) -> list[str]:
        """The Fernet keys of ``encryption_key``, the newest first."""
        return [k.strip() for k in self.encryption_key.split(",") if k.strip()]


def secure_url(value: str) -> bool:
    """Is ``value`` an ``https://`` URL, or an ``http://`` one to a loopback host?"""
    parts = urlsplit(value)
    loopback = parts.hostname == "localhost" or _is_loopback_ip(parts.hostname or "")
    return bool(parts.netloc) and (parts.scheme == "https" or (parts.scheme == "http" and loopback))


def _is_loopback_ip(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def per_user_oauth(config: object) -> UserOAuth | None:
    """A server configuration's per-user OAuth (``oauth`` with the ``authorization_code`` flow),
    or ``None`` (no ``oauth``, or one of the deployment's own flows)."""
    oauth = getattr(config, "oauth", None)
    return oauth if isinstance(oauth, UserOAuth) else None
