"""The ``oauth`` option of an HTTP server entry: checked when the configuration is read, its
secrets never shown."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet

from langgraph_mcp import MCPConfigError
from langgraph_mcp.config import HTTPServerConfig, load_connections

KEY = Fernet.generate_key().decode()


def entry(**oauth: object) -> dict[str, object]:
    return {
        "api": {
            "url": "https://mcp.example.com/mcp",
            "oauth": {"redirect_uri": "https://app.example.com/oauth/callback", **oauth},
        }
    }


def test_the_key_and_client_secret_come_from_the_environment_and_never_show(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MCP_OAUTH_KEY", KEY)
    monkeypatch.setenv("MCP_CLIENT_SECRET", "s3cret-client-value")
    (config,) = load_connections(
        entry(
            encryption_key="${MCP_OAUTH_KEY}",
            client_id="app",
            client_secret="${MCP_CLIENT_SECRET}",
            issuer="https://auth.example.com/",
        )
    ).values()
    assert isinstance(config, HTTPServerConfig) and config.oauth is not None
    assert (config.oauth.encryption_key, config.oauth.client_secret) == (KEY, "s3cret-client-value")
    for shown in (repr(config), str(config), repr(config.oauth)):
        assert KEY not in shown and "s3cret-client-value" not in shown
    redact = config.redactor()
    assert redact(f"key {KEY} secret s3cret-client-value") == "key *** secret ***"


@pytest.mark.parametrize(
    ("oauth", "extra", "says"),
    [
        ({"encryption_key": "not-a-key"}, {}, "must be a Fernet key"),
        ({"encryption_key": KEY}, {"auth": ("user", "pw")}, "'oauth' and 'auth' cannot both be set"),
        ({"encryption_key": KEY, "redirect_uri": "javascript:alert(1)"}, {}, "must be an https:// URL"),
        ({"encryption_key": KEY, "redirect_uri": "http://app.example.com/cb"}, {}, "only to a loopback host"),
        (
            {"encryption_key": KEY, "redirect_uri": "http://127.attacker.example/cb"},
            {},
            "only to a loopback host",
        ),
        ({"encryption_key": KEY, "client_metadata_url": "ftp://x/c.json"}, {}, "must be an https:// URL"),
        ({"encryption_key": KEY, "state_ttl": 0}, {}, "greater than 0"),
    ],
)
def test_a_bad_oauth_option_is_refused(oauth: dict[str, object], extra: dict[str, object], says: str) -> None:
    raw = entry(**oauth)
    raw["api"].update(extra)  # type: ignore[attr-defined]
    with pytest.raises(MCPConfigError, match=says) as caught:
        load_connections(raw)
    assert "not-a-key" not in str(caught.value)
