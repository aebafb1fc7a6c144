"""The deployment's own OAuth of an HTTP server (``HTTPServerConfig.oauth`` with a ``flow``): a
headless agent authenticates as itself, with no person to sign in.

Each flow is one of the MCP SDK's providers (``mcp.client.auth.extensions``), built from these
models by ``langgraph_mcp._oauth.deployauth``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeAlias

import anyio
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

from langgraph_mcp._oauth.options import UserOAuth, secure_url

__all__ = [
    "ClientCredentialsOAuth",
    "DeploymentOAuth",
    "IdentityAssertionOAuth",
    "OAuthOption",
    "PrivateKeyJWTOAuth",
    "SigningAlgorithm",
]

SigningAlgorithm: TypeAlias = Literal[
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"
]
"""The asymmetric JWS algorithms a client assertion may be signed with."""

_MAX_FILE = 64 * 1024
"""The largest key or assertion file read, in bytes."""


def read_secret_file(path: str, what: str) -> str:
    """The text of a key or assertion file (``ValueError`` naming the path, never its content)."""
    try:
        with Path(path).expanduser().open("rb") as file:
            data = file.read(_MAX_FILE + 1)
    except OSError as exc:
        raise ValueError(
            f"cannot read the {what} file {path!r}: {exc.strerror or type(exc).__name__}"
        ) from None
    if len(data) > _MAX_FILE:
        raise ValueError(f"the {what} file {path!r} is larger than {_MAX_FILE} bytes")
    try:
        return data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ValueError(f"the {what} file {path!r} is not UTF-8 text") from None


class _Headless(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)

    client_id: str = Field(min_length=1)
    """The client registered with the authorization server for this deployment."""
    issuer: str = Field(min_length=1)
    """The issuer identifier of the authorization server the client is registered with
    (``https://``; ``http://`` only to a loopback host). The client's credentials are sent to
    that server only: a server whose discovery names another one fails its calls instead."""
    scopes: tuple[str, ...] | None = None
    """The scopes to ask for (``None``: those the server's challenge or metadata name)."""

    @field_validator("issuer")
    @classmethod
    def _https(cls, value: str) -> str:
        if not secure_url(value):
            raise ValueError("must be an https:// URL (http:// only to a loopback host)")
        return value

    def secrets(self) -> list[str]:
        """The values never to show (in errors, logs, reprs)."""
        return []

    @property
    def scope(self) -> str | None:
        """``scopes`` as the space-separated ``scope`` parameter."""
        return " ".join(self.scopes) if self.scopes else None


class ClientCredentialsOAuth(_Headless):
    """The client credentials grant (RFC 6749 section 4.4) with a client secret: the deployment
    authenticates as its own client; no person signs in.

    Runs on the MCP SDK's ``ClientCredentialsOAuthProvider``. One token per server and
    authorization server, kept in memory and shared by every session of the server (the shared
    one and any thread sessions); a token that expires, or that the server refuses (HTTP 401),
    is replaced by a new one.
    """

    flow: Literal["client_credentials"]
    """``client_credentials``."""
    client_secret: str = Field(repr=False, min_length=1)
    """The client's secret (``${VAR}`` expanded; a secret: never shown)."""
    token_endpoint_auth_method: Literal["client_secret_basic", "client_secret_post"] = "client_secret_basic"
    """How the secret is presented to the token endpoint: an HTTP Basic header, or form fields."""

    def secrets(self) -> list[str]:
        """The client secret."""
        return [self.client_secret]


class PrivateKeyJWTOAuth(_Headless):
    """The client credentials grant with ``private_key_jwt`` client authentication (RFC 7523
    section 2.2): each token request carries a short-lived JWT signed with the client's private
    key; no secret is sent.

    Runs on the MCP SDK's ``PrivateKeyJWTOAuthProvider``, with assertions signed by its
    ``SignedJWTParameters`` (``iss`` and ``sub``: ``client_id``; ``aud``: the authorization
    server's issuer). The token is kept and replaced as for :class:`ClientCredentialsOAuth`.
    """

    flow: Literal["private_key_jwt"]
    """``private_key_jwt``."""
    private_key: str | None = Field(default=None, repr=False)
    """The PEM private key (``${VAR}`` expanded; a secret: never shown). Or ``private_key_file``."""
    private_key_file: str | None = None
    """A file holding the PEM private key, read for each token request (so a rotated key is
    taken up); relative to the working directory, ``~`` expanded."""
    algorithm: SigningAlgorithm = "RS256"
    """The JWS algorithm of the assertions (it must suit the key)."""
    assertion_lifetime: int = Field(default=300, ge=10, le=3600)
    """Seconds each assertion is valid."""

    @model_validator(mode="after")
    def _key(self) -> PrivateKeyJWTOAuth:
        if (self.private_key is None) == (self.private_key_file is None):
            raise ValueError("give exactly one of 'private_key' and 'private_key_file'")
        self.signing_key()  # a key that cannot sign fails here, not at the first call
        return self

    def signing_key(self) -> str:
        """The PEM key, read from ``private_key_file`` if that is given (``ValueError``, without
        the key, when it is missing or cannot sign with ``algorithm``)."""
        import jwt

        key = self.private_key
        if key is None:
            assert self.private_key_file is not None
            key = read_secret_file(self.private_key_file, "private key")
        try:
            jwt.encode({"probe": True}, key, algorithm=self.algorithm)
        except Exception:  # (the key's text is in no message)
            raise ValueError(
                f"the private key is not a PEM private key that signs with {self.algorithm}"
            ) from None
        return key

    def secrets(self) -> list[str]:
        """The inline private key."""
        return [self.private_key] if self.private_key else []


AssertionSource: TypeAlias = Callable[[str, str], Awaitable[str]]
"""``async (audience, resource) -> ID-JAG``: the issuer the ID-JAG is for and the MCP server's
resource identifier (its ``aud`` and ``resource`` claims)."""


class IdentityAssertionOAuth(_Headless):
    """Enterprise-managed authorization (SEP-990, the Identity Assertion Authorization Grant): an
    ID-JAG that the enterprise identity provider issued is traded at the MCP server's
    authorization server for an access token (RFC 7523 JWT-bearer grant), by a confidential
    client.

    Runs on the MCP SDK's ``IdentityAssertionOAuthProvider``: the authorization server is
    ``issuer``, never one the MCP server names; its metadata is read from the issuer's own
    well-known document and the ID-JAG and secret go to its token endpoint only. Getting the
    ID-JAG from the identity provider (the first leg) is the deployment's: ``assertion_file``, a
    file something else keeps current, or ``assertion``, an async callable (in Python).
    """

    flow: Literal["identity_assertion"]
    """``identity_assertion``."""
    client_secret: str = Field(repr=False, min_length=1)
    """The client's secret (``${VAR}`` expanded; a secret: never shown)."""
    token_endpoint_auth_method: Literal["client_secret_basic", "client_secret_post"] = "client_secret_post"
    """How the secret is presented to the token endpoint."""
    assertion_file: str | None = None
    """A file holding the current ID-JAG, read for each token request; relative to the working
    directory, ``~`` expanded."""
    assertion: Any = Field(default=None, repr=False, exclude=True)
    """An async ``(audience, resource) -> str`` that returns an ID-JAG for the authorization
    server ``audience`` and the MCP server ``resource`` (Python configuration only)."""

    @model_validator(mode="after")
    def _source(self) -> IdentityAssertionOAuth:
        if (self.assertion is None) == (self.assertion_file is None):
            raise ValueError("give exactly one of 'assertion_file' and 'assertion' (an async callable)")
        if self.assertion is not None and not callable(self.assertion):
            raise ValueError("'assertion' must be an async callable (audience, resource) -> str")
        return self

    def source(self) -> AssertionSource:
        """Where each token request's ID-JAG comes from."""
        if self.assertion is not None:
            made: AssertionSource = self.assertion
            return made
        path = self.assertion_file
        assert path is not None

        async def from_file(audience: str, resource: str) -> str:
            return await anyio.to_thread.run_sync(read_secret_file, path, "assertion")

        return from_file

    def secrets(self) -> list[str]:
        """The client secret."""
        return [self.client_secret]


_FLOWS = ("authorization_code", "client_credentials", "private_key_jwt", "identity_assertion")


def _flow_of(value: Any) -> str | None:
    flow = (
        value.get("flow", "authorization_code")
        if isinstance(value, Mapping)
        else getattr(value, "flow", None)
    )
    return flow if flow in _FLOWS else None


DeploymentOAuth: TypeAlias = ClientCredentialsOAuth | PrivateKeyJWTOAuth | IdentityAssertionOAuth
"""The flows in which the deployment authenticates as itself (no person signs in)."""

OAuthOption: TypeAlias = Annotated[
    Annotated[UserOAuth, Tag("authorization_code")]
    | Annotated[ClientCredentialsOAuth, Tag("client_credentials")]
    | Annotated[PrivateKeyJWTOAuth, Tag("private_key_jwt")]
    | Annotated[IdentityAssertionOAuth, Tag("identity_assertion")],
    Discriminator(
        _flow_of,
        custom_error_type="oauth_flow",
        custom_error_message=f"'flow' must be one of {', '.join(_FLOWS)} (default: authorization_code)",
    ),
]
"""``HTTPServerConfig.oauth``: by its ``flow``, per-user OAuth (the default) or one of the
deployment's own flows."""
