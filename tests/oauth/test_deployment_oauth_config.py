"""The deployment's own OAuth flows of an HTTP server entry (``oauth`` with a ``flow``): checked
when the configuration is read, their secrets never shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from langgraph_mcp import MCPConfigError
from langgraph_mcp._oauth.options import per_user_oauth
from langgraph_mcp.config import (
    ClientCredentialsOAuth,
    HTTPServerConfig,
    IdentityAssertionOAuth,
    PrivateKeyJWTOAuth,
    UserOAuth,
    load_connections,
)

SECRET = "s3cret-client-value"
EC_PEM = (
    ec.generate_private_key(ec.SECP256R1())
    .private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    .decode()
)


def entry(url: str = "https://mcp.example.com/mcp", **oauth: Any) -> dict[str, Any]:
    return {"api": {"url": url, "oauth": oauth}}


def cc(**changes: Any) -> dict[str, Any]:
    return {"flow": "client_credentials", "client_id": "agent", "client_secret": SECRET,
            "issuer": "https://auth.example.com/", **changes}  # fmt: skip


def test_the_client_secret_comes_from_the_environment_and_never_shows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MCP_CLIENT_SECRET", SECRET)
    (config,) = load_connections(entry(**cc(client_secret="${MCP_CLIENT_SECRET}", scopes=["read"]))).values()
    assert isinstance(config, HTTPServerConfig) and isinstance(config.oauth, ClientCredentialsOAuth)
    assert (config.oauth.client_secret, config.oauth.scope) == (SECRET, "read")
    assert per_user_oauth(config) is None and config.user_oauth is None
    for shown in (repr(config), str(config), repr(config.oauth)):
        assert SECRET not in shown
    assert config.redactor()(f"secret {SECRET}") == "secret ***"


def test_the_flow_picks_the_model_and_no_flow_is_per_user_oauth() -> None:
    key = "ZmDfcTF7_60GrrY167zsiPd67pEvs0aGOv2oasOM1Pg="
    per_user = HTTPServerConfig(url="https://x.example/mcp", oauth={"redirect_uri": "https://a.example/cb",
                                                                   "encryption_key": key})  # fmt: skip
    assert isinstance(per_user.oauth, UserOAuth) and per_user_oauth(per_user) is per_user.oauth
    signed = HTTPServerConfig(url="https://x.example/mcp", oauth={
        "flow": "private_key_jwt", "client_id": "c", "issuer": "https://a.example", "private_key": EC_PEM,
        "algorithm": "ES256"})  # fmt: skip
    assert isinstance(signed.oauth, PrivateKeyJWTOAuth)
    assert EC_PEM not in repr(signed) and signed.redactor()(EC_PEM) == "***"


@pytest.mark.parametrize(
    ("given", "says"),
    [
        (entry(**cc(flow="password")), "'flow' must be one of"),
        (entry(**{k: v for k, v in cc().items() if k != "issuer"}), "issuer"),
        (entry(**cc(issuer="http://auth.example.com/")), "only to a loopback host"),
        (entry("http://mcp.example.com/mcp", **cc()), "the deployment's token is sent to it"),
        ({"api": {"url": "https://m.example/mcp", "oauth": cc(), "auth": ("u", "pw")}}, "cannot both be set"),
        (entry(**cc(client_secret="")), "client_secret"),
        (entry(**cc(redirect_uri="https://a.example/cb")), "redirect_uri"),
    ],
)
def test_a_bad_client_credentials_entry_is_refused_without_its_secret(
    given: dict[str, Any], says: str
) -> None:
    with pytest.raises(MCPConfigError) as raised:
        load_connections(given)
    assert says in str(raised.value)
    assert SECRET not in str(raised.value)


def signer(**changes: Any) -> dict[str, Any]:
    return {"flow": "private_key_jwt", "client_id": "c", "issuer": "https://auth.example.com", **changes}


@pytest.mark.parametrize(
    ("oauth", "says"),
    [
        (signer(), "exactly one of 'private_key' and 'private_key_file'"),
        (signer(private_key=EC_PEM, private_key_file="/k.pem"), "exactly one of"),
        (signer(private_key=EC_PEM), "signs with RS256"),  # an EC key, the default RS256
        (signer(private_key="-----BEGIN PRIVATE KEY-----\nnot-a-key\n"), "not a PEM private key"),
        (signer(private_key=EC_PEM, algorithm="HS256"), "algorithm"),
        (
            signer(private_key_file="/nonexistent/key.pem"),
            "cannot read the private key file '/nonexistent/key.pem'",
        ),
    ],
)
def test_a_key_that_cannot_sign_is_refused_without_showing_it(oauth: dict[str, Any], says: str) -> None:
    with pytest.raises(MCPConfigError) as raised:
        load_connections(entry(**oauth))
    assert says in str(raised.value)
    assert "BEGIN" not in str(raised.value) and "not-a-key" not in str(raised.value)


def test_a_key_file_is_read_and_its_path_not_its_key_is_shown(tmp_path: Path) -> None:
    (tmp_path / "key.pem").write_text(EC_PEM)
    oauth = signer(private_key_file=str(tmp_path / "key.pem"), algorithm="ES256")
    (config,) = load_connections(entry(**oauth)).values()
    assert isinstance(config, HTTPServerConfig) and isinstance(config.oauth, PrivateKeyJWTOAuth)
    assert config.oauth.signing_key() == EC_PEM.strip()
    assert "key.pem" in repr(config.oauth) and "BEGIN" not in repr(config)


def test_an_identity_assertion_needs_one_source_and_a_secret() -> None:
    base = {"flow": "identity_assertion", "client_id": "e", "client_secret": SECRET,
            "issuer": "https://auth.example.com"}  # fmt: skip

    async def source(audience: str, resource: str) -> str:
        return "jag"

    for oauth, says in [
        (base, "exactly one of 'assertion_file' and 'assertion'"),
        ({**base, "assertion": source, "assertion_file": "/jag"}, "exactly one of"),
        ({**base, "assertion": "not-callable"}, "async callable"),
        ({k: v for k, v in base.items() if k != "client_secret"} | {"assertion": source}, "client_secret"),
    ]:
        with pytest.raises(MCPConfigError) as raised:
            load_connections(entry(**oauth))
        assert says in str(raised.value) and SECRET not in str(raised.value)
    config = HTTPServerConfig(url="https://m.example/mcp", oauth={**base, "assertion": source})
    assert isinstance(config.oauth, IdentityAssertionOAuth) and config.oauth.source() is source
    assert SECRET not in repr(config)
