"""``load_connections``: accepted shapes, env expansion, validation errors, defaults."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.server.mcpserver import MCPServer

from langgraph_mcp import (
    HTTPServerConfig,
    InProcessServerConfig,
    MCPConfigError,
    OutputHandling,
    SSEServerConfig,
    StdioServerConfig,
    load_connections,
)
from langgraph_mcp.config._env import parse_dotenv

SECRET = "s3cret-token-value"


def config_error(source: Any) -> MCPConfigError:
    with pytest.raises(MCPConfigError) as info:
        load_connections(source)
    return info.value


# --- shapes -------------------------------------------------------------------------------------


def test_stdio_inferred_from_command_keeps_args_env_cwd() -> None:
    raw = {"command": "npx", "args": ["-y", "pkg"], "env": {"KEY": "v"}, "cwd": "/srv"}
    cfg = load_connections({"s": raw})["s"]
    assert isinstance(cfg, StdioServerConfig)
    assert (cfg.command, cfg.args, cfg.env, cfg.cwd) == ("npx", ("-y", "pkg"), {"KEY": "v"}, "/srv")


def test_http_inferred_from_url() -> None:
    cfg = load_connections({"s": {"url": "https://h/mcp", "headers": {"X-A": "1"}}})["s"]
    assert isinstance(cfg, HTTPServerConfig)
    assert (cfg.url, cfg.headers) == ("https://h/mcp", {"X-A": "1"})


@pytest.mark.parametrize("key", ["transport", "type"])
@pytest.mark.parametrize(
    ("value", "model"),
    [
        ("http", HTTPServerConfig),
        ("streamable_http", HTTPServerConfig),
        ("streamable-http", HTTPServerConfig),
        ("sse", SSEServerConfig),
    ],
)
def test_explicit_remote_transport(key: str, value: str, model: type) -> None:
    cfg = load_connections({"s": {key: value, "url": "http://h/x"}})["s"]
    assert type(cfg) is model
    assert cfg.url == "http://h/x"


@pytest.mark.parametrize("key", ["transport", "type"])
def test_explicit_stdio_transport(key: str) -> None:
    cfg = load_connections({"s": {key: "stdio", "command": "srv"}})["s"]
    assert type(cfg) is StdioServerConfig
    assert cfg.command == "srv"


def test_explicit_transport_overrides_inference() -> None:
    # A url alone means streamable HTTP; "sse" must win over that inference.
    assert type(load_connections({"s": {"url": "http://h", "transport": "sse"}})["s"]) is SSEServerConfig


def test_transport_and_type_disagree() -> None:
    err = config_error({"s": {"url": "http://h", "transport": "http", "type": "sse"}})
    assert (err.server, err.field) == ("s", "transport")
    assert "disagree" in str(err)


def test_transport_and_type_agreeing_is_fine() -> None:
    cfg = load_connections({"s": {"url": "http://h", "transport": "sse", "type": "sse"}})["s"]
    assert type(cfg) is SSEServerConfig


SERVERS = {"a": {"command": "run-a"}, "b": {"url": "https://b/mcp"}}


@pytest.mark.parametrize("wrapper", ["mcpServers", "servers"])
def test_wrapper_shapes(wrapper: str) -> None:
    loaded = load_connections({wrapper: SERVERS})
    assert list(loaded) == ["a", "b"]
    assert isinstance(loaded["a"], StdioServerConfig)
    assert isinstance(loaded["b"], HTTPServerConfig)


def test_wrapper_must_hold_a_mapping() -> None:
    err = config_error({"mcpServers": ["a"]})
    assert err.field == "mcpServers"


@pytest.mark.parametrize("wrapper", ["mcpServers", "servers"])
@pytest.mark.parametrize("as_str", [True, False], ids=["str", "Path"])
def test_json_file(tmp_path: Path, wrapper: str, as_str: bool) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({wrapper: SERVERS}), encoding="utf-8")
    loaded = load_connections(str(path) if as_str else path)
    assert loaded["a"] == StdioServerConfig(command="run-a")
    assert loaded["b"] == HTTPServerConfig(url="https://b/mcp")


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    err = config_error(path)
    assert "cannot read config file" in str(err)
    assert str(path) in str(err)


def test_invalid_json_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"mcpServers": {', encoding="utf-8")
    err = config_error(str(path))
    assert "not valid JSON" in str(err)
    assert str(path) in str(err)


@pytest.mark.parametrize("source", [["a"], 42, None, b"{}"])
def test_non_mapping_source(source: Any) -> None:
    err = config_error(source)
    assert "connections must be a mapping" in str(err)
    assert type(source).__name__ in str(err)


@pytest.mark.parametrize("value", [42, ["npx"], None])
def test_server_value_of_wrong_type(value: Any) -> None:
    err = config_error({"s": value})
    assert (err.server, err.field) == ("s", "<server>")
    assert type(value).__name__ in str(err)


def test_bare_url_string_is_http() -> None:
    cfg = load_connections({"s": "https://h/mcp"})["s"]
    assert cfg == HTTPServerConfig(url="https://h/mcp")
    err = config_error({"s": "npx"})
    assert (err.server, err.field) == ("s", "url")


def test_typed_models_kept_as_is() -> None:
    stdio = StdioServerConfig(command="x")
    http = HTTPServerConfig(url="https://h")
    sse = SSEServerConfig(url="https://h/sse")
    loaded = load_connections({"a": stdio, "b": http, "c": sse})
    assert loaded["a"] is stdio
    assert loaded["b"] is http
    assert loaded["c"] is sse


def test_mcpserver_value_becomes_in_process() -> None:
    server = MCPServer("inner")
    cfg = load_connections({"local": server})["local"]
    assert isinstance(cfg, InProcessServerConfig)
    assert cfg.server is server


def test_in_process_dict_with_options() -> None:
    server = MCPServer("inner")
    cfg = load_connections({"local": {"server": server, "prefix": "x_"}})["local"]
    assert isinstance(cfg, InProcessServerConfig)
    assert (cfg.server, cfg.prefix) == (server, "x_")


def test_bare_mcpserver_source() -> None:
    server = MCPServer("solo")
    loaded = load_connections(server)
    assert list(loaded) == ["solo"]
    assert loaded["solo"].server is server  # type: ignore[union-attr]


def test_in_process_rejects_non_server() -> None:
    err = config_error({"s": {"server": object()}})
    assert (err.server, err.field) == ("s", "server")


# --- environment expansion ----------------------------------------------------------------------


def test_expansion_in_every_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LGMCP_BIN", "/opt/bin/srv")
    monkeypatch.setenv("LGMCP_KEY", SECRET)
    monkeypatch.setenv("LGMCP_DIR", "/data")
    monkeypatch.delenv("LGMCP_UNSET", raising=False)
    stdio = load_connections(
        {
            "s": {
                "command": "${LGMCP_BIN}",
                "args": ["--dir=${env:LGMCP_DIR}", "${LGMCP_UNSET:-fallback}", "lit"],
                "env": {"API_KEY": "${LGMCP_KEY}", "MIX": "a-${LGMCP_DIR}-b"},
                "cwd": "${LGMCP_DIR}/work",
            }
        }
    )["s"]
    assert isinstance(stdio, StdioServerConfig)
    assert stdio.command == "/opt/bin/srv"
    assert stdio.args == ("--dir=/data", "fallback", "lit")
    assert stdio.env == {"API_KEY": SECRET, "MIX": "a-/data-b"}
    assert stdio.cwd == "/data/work"

    monkeypatch.setenv("LGMCP_HOST", "example.com")
    http = load_connections(
        {"h": {"url": "https://${LGMCP_HOST}/mcp", "headers": {"Authorization": "Bearer ${env:LGMCP_KEY}"}}}
    )["h"]
    assert isinstance(http, HTTPServerConfig)
    assert http.url == "https://example.com/mcp"
    assert http.headers == {"Authorization": f"Bearer {SECRET}"}


@pytest.mark.parametrize("value", [None, ""], ids=["unset", "empty"])
def test_default_used_when_unset_or_empty(monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
    if value is None:
        monkeypatch.delenv("LGMCP_V", raising=False)
    else:
        monkeypatch.setenv("LGMCP_V", value)
    cfg = load_connections({"s": {"command": "${LGMCP_V:-dflt}", "args": ["${LGMCP_V:-}x"]}})["s"]
    assert (cfg.command, cfg.args) == ("dflt", ("x",))  # type: ignore[union-attr]


def test_default_ignored_when_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LGMCP_V", "real")
    assert load_connections({"s": {"command": "${LGMCP_V:-dflt}"}})["s"].command == "real"  # type: ignore[union-attr]


def test_empty_variable_without_default_expands_to_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LGMCP_V", "")
    assert load_connections({"s": {"command": "x${LGMCP_V}"}})["s"].command == "x"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"command": "x", "env": {"API_KEY": "${LGMCP_MISSING}"}}, "env.API_KEY"),
        ({"command": "x", "args": ["ok", "${env:LGMCP_MISSING}"]}, "args[1]"),
        (
            {"url": "https://h", "headers": {"Authorization": "Bearer ${LGMCP_MISSING}"}},
            "headers.Authorization",
        ),
        ({"url": "https://${LGMCP_MISSING}/mcp"}, "url"),
        ({"command": "${LGMCP_MISSING}"}, "command"),
        ({"command": "x", "cwd": "${LGMCP_MISSING}"}, "cwd"),
    ],
)
def test_unset_variable_without_default(
    monkeypatch: pytest.MonkeyPatch, raw: dict[str, Any], field: str
) -> None:
    monkeypatch.delenv("LGMCP_MISSING", raising=False)
    err = config_error({"srv": raw})
    assert (err.server, err.field) == ("srv", field)
    assert "LGMCP_MISSING" in str(err)
    assert "is not set" in str(err)


# --- validation errors --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "field", "fragment"),
    [
        ({"args": ["x"]}, "command", "no 'command'"),
        ({"command": "x", "transport": "websocket"}, "transport", "unknown transport 'websocket'"),
        ({"command": "npx", "comand": "npx"}, "comand", "unknown field"),
        ({"url": "https://h", "bogus": 1}, "bogus", "unknown field"),
        ({"command": "x", "timeout": -1}, "timeout", "greater than 0"),
        ({"command": "x", "timeout": 0}, "timeout", "greater than 0"),
        ({"command": "x", "connect_timeout": -5}, "connect_timeout", "greater than 0"),
        ({"url": "localhost:8000/mcp"}, "url", "http:// or https://"),
        ({"url": "ws://h/mcp", "transport": "sse"}, "url", "http:// or https://"),
        ({"command": "x", "tools": "echo"}, "tools", "not a string"),
        ({"command": "x", "exclude_tools": "echo"}, "exclude_tools", "not a string"),
        ({"command": "x", "headers": {"Authorization": "Bearer t"}}, "headers", "unknown field"),
        ({"command": "x", "args": ["a", 3]}, "args[1]", "valid string"),
        ({"command": "x", "protocol": "2024-01-01"}, "protocol", "'auto'"),
        (
            {"command": "x", "output_handling": {"text": "nowhere"}},
            "output_handling.text",
            "'content' or 'artifact'",
        ),
        ({"url": "https://h", "sse_fallback": "maybe"}, "sse_fallback", "valid boolean"),
        *(
            (
                {"command": "x", "listing_ttl": bad},
                "listing_ttl",
                f"or a number of seconds from 0 to 86400, not {shown}",
            )
            for bad, shown in [
                (-1, "-1"),
                (86401, "86401"),
                (float("nan"), "nan"),
                (True, "True"),
                ("always", "'always'"),
                ("60", "'60'"),
                (None, "None"),
            ]
        ),
    ],
)
def test_invalid_config_names_server_and_field(raw: dict[str, Any], field: str, fragment: str) -> None:
    err = config_error({"my-server": raw})
    assert (err.server, err.field) == ("my-server", field)
    assert "MCP server 'my-server'" in str(err)
    assert f"field '{field}'" in str(err)
    assert fragment in str(err)


@pytest.mark.parametrize(
    "raw",
    [
        {"command": "x", "env": {"API_KEY": SECRET}, "timeout": -1},
        {"command": "x", "env": {"API_KEY": SECRET}, "headers": {"Authorization": SECRET}},
        {"command": "x", "env": {"API_KEY": SECRET, "PORT": 80}},
        {"url": "https://h", "headers": {"Authorization": f"Bearer {SECRET}"}, "tools": "a"},
        {"url": "https://h", "headers": {"Authorization": f"Bearer {SECRET}", "X-N": 1}},
        {"url": "https://h", "headers": {"Authorization": f"Bearer {SECRET}"}, "bogus": SECRET},
    ],
)
def test_secrets_not_in_error_messages(raw: dict[str, Any]) -> None:
    err = config_error({"s": raw})
    assert SECRET not in str(err)
    assert SECRET not in repr(err)
    assert err.server == "s"


def test_secret_from_environment_not_in_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LGMCP_KEY", SECRET)
    monkeypatch.delenv("LGMCP_MISSING", raising=False)
    err = config_error({"s": {"command": "x", "env": {"A": "${LGMCP_KEY}", "B": "${LGMCP_MISSING}"}}})
    assert err.field == "env.B"
    assert SECRET not in str(err)


@pytest.mark.parametrize(
    "cfg",
    [
        StdioServerConfig(command="x", env={"API_KEY": SECRET}),
        HTTPServerConfig(url="https://h", headers={"Authorization": SECRET}, auth=("user", SECRET)),
        SSEServerConfig(url="https://h", headers={"Authorization": SECRET}),
    ],
    ids=["stdio", "http", "sse"],
)
def test_secrets_not_in_model_repr(cfg: Any) -> None:
    assert SECRET not in repr(cfg)
    assert SECRET not in str(cfg)
    assert repr(cfg).startswith(type(cfg).__name__ + "(")


def test_secrets_not_in_repr_of_loaded_config() -> None:
    loaded = load_connections(
        {
            "a": {"command": "x", "env": {"API_KEY": SECRET}},
            "b": {"url": "https://h", "headers": {"Authorization": f"Bearer {SECRET}"}},
        }
    )
    assert SECRET not in repr(loaded)
    assert loaded["a"].env == {"API_KEY": SECRET}  # type: ignore[union-attr]


def test_empty_server_name() -> None:
    err = config_error({"": {"command": "x"}})
    assert err.field == "<name>"


@pytest.mark.parametrize(
    ("value", "kept"), [("server", "server"), ("ignore", "ignore"), (0, 0.0), (90.5, 90.5)]
)
def test_listing_ttl_takes_a_mode_or_seconds(value: Any, kept: Any) -> None:
    assert load_connections({"s": {"command": "x", "listing_ttl": value}})["s"].listing_ttl == kept
    assert load_connections({"s": {"command": "x"}})["s"].listing_ttl == "server"


# --- skipped and ignored keys -------------------------------------------------------------------


def test_disabled_servers_skipped() -> None:
    loaded = load_connections(
        {
            "off": {"command": "x", "disabled": True},
            "on": {"command": "y", "disabled": False},
            "plain": {"url": "https://h"},
        }
    )
    assert list(loaded) == ["on", "plain"]


def test_disabled_server_not_validated() -> None:
    # A disabled entry with otherwise invalid content does not break loading.
    assert load_connections({"off": {"disabled": True, "comand": "x"}}) == {}


def test_foreign_keys_ignored() -> None:
    raw = {
        "command": "x",
        "autoApprove": ["a"],
        "alwaysAllow": ["b"],
        "description": "desc",
    }
    assert load_connections({"s": raw})["s"] == StdioServerConfig(command="x")


# --- defaults -----------------------------------------------------------------------------------


@pytest.mark.parametrize("raw", [{"command": "x"}, {"url": "https://h"}, {"url": "https://h", "type": "sse"}])
def test_defaults(raw: dict[str, Any]) -> None:
    cfg = load_connections({"s": raw})["s"]
    assert cfg.timeout == 300
    assert cfg.connect_timeout == 30
    assert cfg.protocol == "auto"
    assert cfg.tools is None
    assert cfg.exclude_tools == ()
    assert cfg.prefix is None
    assert cfg.output_handling == OutputHandling(
        text="content", image="content", resource_link="content", audio="artifact", resource="artifact"
    )


def test_http_defaults() -> None:
    cfg = load_connections({"s": {"url": "https://h"}})["s"]
    assert isinstance(cfg, HTTPServerConfig)
    assert cfg.sse_fallback is True
    assert cfg.headers == {}
    assert cfg.auth is None


def test_options_override_defaults() -> None:
    raw = {
        "url": "https://h",
        "timeout": None,
        "connect_timeout": 2.5,
        "protocol": "legacy",
        "sse_fallback": False,
        "tools": ["a", "b"],
        "exclude_tools": ["c"],
        "prefix": "gh_",
        "output_handling": {"audio": "content", "text": "artifact"},
    }
    cfg = load_connections({"s": raw})["s"]
    assert isinstance(cfg, HTTPServerConfig)
    assert (cfg.timeout, cfg.connect_timeout, cfg.protocol, cfg.sse_fallback) == (None, 2.5, "legacy", False)
    assert (cfg.tools, cfg.exclude_tools, cfg.prefix) == (("a", "b"), ("c",), "gh_")
    assert cfg.output_handling == OutputHandling(audio="content", text="artifact")


def test_url_errors_do_not_echo_the_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LGMCP_URL_SECRET", "s3cret")
    for url in ("localhost:8000/mcp?api_key=${LGMCP_URL_SECRET}", "ftp://user:${LGMCP_URL_SECRET}@host/mcp"):
        with pytest.raises(MCPConfigError) as info:
            load_connections({"s": {"url": url}})
        assert info.value.field == "url"
        assert "s3cret" not in str(info.value)


def test_typed_model_errors_hide_inputs() -> None:
    with pytest.raises(ValueError) as info:
        StdioServerConfig(command="x", headers={"Authorization": "Bearer s3cret"})  # type: ignore[call-arg]
    assert "s3cret" not in str(info.value)


@pytest.mark.parametrize(
    ("transport", "kind"), [("streamable_http", "http"), ("streamable-http", "HTTP"), ("SSE", "sse")]
)
def test_transport_aliases_agree_with_type(transport: str, kind: str) -> None:
    loaded = load_connections({"s": {"url": "https://h/mcp", "transport": transport, "type": kind}})
    assert loaded["s"].transport == ("sse" if kind == "sse" else "http")


def test_misspelt_key_alone_is_named_with_a_suggestion() -> None:
    with pytest.raises(MCPConfigError) as info:
        load_connections({"s": {"comand": "npx"}})
    assert info.value.field == "comand"
    assert "did you mean 'command'?" in str(info.value)
    with pytest.raises(MCPConfigError) as info:
        load_connections({"s": {"transport": "stdio", "comand": "npx"}})
    assert info.value.field == "comand"


def test_upper_case_scheme_is_accepted() -> None:
    assert isinstance(load_connections({"s": "HTTPS://host/mcp"})["s"], HTTPServerConfig)


def test_disabled_must_be_a_boolean() -> None:
    with pytest.raises(MCPConfigError) as info:
        load_connections({"s": {"command": "x", "disabled": "true"}})
    assert info.value.field == "disabled"


def test_config_path_expands_the_home_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"s": {"command": "x"}}}))
    assert list(load_connections("~/mcp.json")) == ["s"]


def test_a_relative_cwd_in_a_config_file_is_relative_to_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "project" / "config"
    folder.mkdir(parents=True)
    path = folder / "mcp.json"
    servers = {
        "up": {"command": "python", "cwd": ".."},
        "here": {"command": "python", "cwd": "servers/a"},
        "absolute": {"command": "python", "cwd": "/srv/x"},
        "unset": {"command": "python"},
    }
    path.write_text(json.dumps({"mcpServers": servers}))
    loaded = load_connections(path)
    cwd = {name: getattr(cfg, "cwd", None) for name, cfg in loaded.items()}
    assert cwd == {
        "up": str(tmp_path / "project"),
        "here": str(folder / "servers" / "a"),
        "absolute": "/srv/x",
        "unset": None,  # the process's own working directory, as before
    }
    # A mapping has no folder of its own: its cwd is taken as written.
    assert getattr(load_connections(servers)["up"], "cwd", None) == ".."


# --- what users get wrong -----------------------------------------------------------------------


def test_args_given_as_one_string_is_refused_not_split() -> None:
    err = config_error({"srv": {"command": "python", "args": "-m server"}})
    assert (err.server, err.field) == ("srv", "args")
    assert "a list" in err.reason
    assert "-m server" not in err.reason and '"server"' not in err.reason  # not split, not echoed


def test_args_string_never_echoes_its_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LGMCP_KEY", SECRET)
    for args in (f"--token={SECRET}", "--token=${LGMCP_KEY}"):
        err = config_error({"srv": {"command": "python", "args": args}})
        assert err.field == "args"
        assert SECRET not in str(err)


@pytest.mark.parametrize("order", ["command-first", "url-first"])
def test_command_and_url_together_say_pick_one(order: str) -> None:
    raw = {"command": "npx", "url": "https://h/mcp"}
    if order == "url-first":
        raw = {"url": "https://h/mcp", "command": "npx"}
    err = config_error({"srv": raw})
    assert err.server == "srv"
    assert err.field in ("command", "url")
    assert "stdio ('command') or HTTP ('url'), not both" in err.reason
    assert "did you mean" not in err.reason


@pytest.mark.parametrize(
    ("raw", "field", "belongs"),
    [
        ({"transport": "http", "url": "https://h", "command": "npx"}, "command", "stdio"),
        ({"transport": "sse", "url": "https://h", "env": {"A": "b"}}, "env", "stdio"),
        ({"transport": "stdio", "command": "npx", "url": "https://h"}, "url", "HTTP"),
        ({"command": "npx", "headers": {"A": "b"}}, "headers", "HTTP"),
    ],
)
def test_a_field_of_the_other_transport_is_named_as_such(
    raw: dict[str, Any], field: str, belongs: str
) -> None:
    err = config_error({"srv": raw})
    assert (err.server, err.field) == ("srv", field)
    assert "unknown field" in err.reason
    assert f"'{field}' belongs to {belongs} servers" in err.reason
    assert "did you mean" not in err.reason


# --- envFile ------------------------------------------------------------------------------------

DOTENV = """\
# a comment
PLAIN=plain value
export EXPORTED=yes
DOUBLE="two words # not a comment"
SINGLE='$HOME ${NOPE} \\n'
ESCAPED="line1\\nline2 \\"quoted\\""
INLINE=value # trailing comment
EMPTY=
  SPACED  =  padded
MULTI="first
second"
"""


def test_env_file_is_loaded_relative_to_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "server.env").write_text(DOTENV, encoding="utf-8")
    path = tmp_path / "conf" / "mcp.json"
    path.write_text(json.dumps({"servers": {"s": {"command": "x", "envFile": "server.env"}}}))
    cfg = load_connections(path)["s"]
    assert isinstance(cfg, StdioServerConfig)
    assert cfg.env == {
        "PLAIN": "plain value",
        "EXPORTED": "yes",
        "DOUBLE": "two words # not a comment",
        "SINGLE": "$HOME ${NOPE} \\n",
        "ESCAPED": 'line1\nline2 "quoted"',
        "INLINE": "value",
        "EMPTY": "",
        "SPACED": "padded",
        "MULTI": "first\nsecond",
    }


def test_env_file_in_a_mapping_is_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("A=1\n", encoding="utf-8")
    cfg = load_connections({"s": {"command": "x", "envFile": ".env"}})["s"]
    assert cfg.env == {"A": "1"}  # type: ignore[union-attr]


def test_explicit_env_wins_over_env_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LGMCP_V", "from-environment")
    env_file = tmp_path / "a.env"
    env_file.write_text("A=file\nB=file\n", encoding="utf-8")
    raw = {"command": "x", "envFile": str(env_file), "env": {"B": "${LGMCP_V}", "C": "explicit"}}
    cfg = load_connections({"s": raw})["s"]
    assert cfg.env == {"A": "file", "B": "from-environment", "C": "explicit"}  # type: ignore[union-attr]


def test_env_file_path_expands_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LGMCP_DIR", str(tmp_path))
    (tmp_path / "x.env").write_text("A=1\n", encoding="utf-8")
    cfg = load_connections({"s": {"command": "x", "envFile": "${LGMCP_DIR}/x.env"}})["s"]
    assert cfg.env == {"A": "1"}  # type: ignore[union-attr]


def test_env_file_values_are_not_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LGMCP_V", "expanded")
    (tmp_path / "x.env").write_text("A=${LGMCP_V}\n", encoding="utf-8")
    cfg = load_connections({"s": {"command": "x", "envFile": str(tmp_path / "x.env")}})["s"]
    assert cfg.env == {"A": "${LGMCP_V}"}  # type: ignore[union-attr]


def test_missing_env_file_names_server_field_and_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.env"
    err = config_error({"srv": {"command": "x", "envFile": str(missing)}})
    assert (err.server, err.field) == ("srv", "envFile")
    assert (
        err.reason
        == f"cannot read {str(missing)!r}: No such file or directory; fix the path or create the file"
    )
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"srv": {"command": "x", "envFile": "nope.env"}}}))
    err = config_error(path)
    assert err.reason == (
        f"cannot read {str(missing)!r}: No such file or directory; fix the path or create the file "
        "(a relative path is relative to the config file's folder)"
    )


def test_unreadable_env_file(tmp_path: Path) -> None:
    err = config_error({"srv": {"command": "x", "envFile": str(tmp_path)}})  # a folder
    assert (err.server, err.field) == ("srv", "envFile")
    assert str(tmp_path) in err.reason


def test_malformed_env_file_names_the_line_without_echoing_it(tmp_path: Path) -> None:
    path = tmp_path / "bad.env"
    path.write_text(f"A=1\nthis line has no equals sign {SECRET}\n", encoding="utf-8")
    err = config_error({"srv": {"command": "x", "envFile": str(path)}})
    assert (err.server, err.field) == ("srv", "envFile")
    assert f"{path}:2" in err.reason
    assert SECRET not in str(err)
    path.write_text(f'A="{SECRET}\n', encoding="utf-8")  # an unclosed quote
    err = config_error({"srv": {"command": "x", "envFile": str(path)}})
    assert f"{path}:1" in err.reason and "quote" in err.reason
    assert SECRET not in str(err)


def test_env_file_must_be_a_string() -> None:
    err = config_error({"srv": {"command": "x", "envFile": [".env"]}})
    assert (err.server, err.field) == ("srv", "envFile")


def test_env_file_on_an_http_server_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x.env").write_text("A=1\n", encoding="utf-8")
    err = config_error({"srv": {"url": "https://h", "envFile": str(tmp_path / "x.env")}})
    assert (err.server, err.field) == ("srv", "envFile")
    assert "stdio" in err.reason


def test_env_file_values_stay_out_of_reprs(tmp_path: Path) -> None:
    (tmp_path / "x.env").write_text(f"TOKEN={SECRET}\n", encoding="utf-8")
    loaded = load_connections({"s": {"command": "x", "envFile": str(tmp_path / "x.env")}})
    assert SECRET not in repr(loaded)


# --- what reprs show ----------------------------------------------------------------------------


def test_expanded_stdio_values_stay_out_of_reprs(monkeypatch: pytest.MonkeyPatch) -> None:
    from langgraph_mcp import MCPPool

    monkeypatch.setenv("LGMCP_KEY", SECRET)
    raw = {
        "command": "/opt/${LGMCP_KEY}/srv",
        "args": ["--token=${LGMCP_KEY}", "--verbose"],
        "cwd": "/srv/${LGMCP_KEY}",
        "env": {"TOKEN": "${LGMCP_KEY}"},
    }
    loaded = load_connections({"s": raw})
    cfg = loaded["s"]
    assert isinstance(cfg, StdioServerConfig)
    assert cfg.args == (f"--token={SECRET}", "--verbose")  # the child still gets the value
    for text in (repr(loaded), str(cfg), repr(MCPPool(loaded)), repr(MCPPool(loaded).connection("s"))):
        assert SECRET not in text
    # What was written is shown instead.
    assert "--token=${LGMCP_KEY}" in repr(cfg)
    assert "'--verbose'" in repr(cfg)
    assert "/opt/${LGMCP_KEY}/srv" in repr(cfg)


def test_literal_stdio_values_are_shown_as_written() -> None:
    cfg = load_connections({"s": {"command": "npx", "args": ["-y", "pkg"]}})["s"]
    assert "command='npx'" in repr(cfg) and "args=('-y', 'pkg')" in repr(cfg)
    assert cfg == StdioServerConfig(command="npx", args=("-y", "pkg"))


# --- properties ---------------------------------------------------------------------------------

FIELDS = sorted(
    {
        *StdioServerConfig.model_fields,
        *HTTPServerConfig.model_fields,
        *SSEServerConfig.model_fields,
        "type",
        "disabled",
        "envFile",
        "autoApprove",
        "comand",
    }
)
# Text made of pieces that mean something to the loader (variables, paths, URLs), and plain text.
PIECES = ["${", "}", "LGMCP_SET", "LGMCP_UNSET", "env:", ":-", "~", "~nobody-x", "/", "..", ".", "\x00"]
PIECES += [" ", "#", "=", "file://"]
PIECES += ["http://", "https://", "h", "@", ":", "?", "stdio", "sse", "http", "-m"]
texts = st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=8).map("".join)
scalars = st.none() | st.booleans() | st.integers() | st.floats() | texts | st.text(max_size=20)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
# Mostly real field names, so that values reach the validators (and ${VAR} expansion).
server_entries = st.dictionaries(st.sampled_from(FIELDS) | texts, json_values, max_size=6)
sources = st.one_of(
    texts,  # a path to a config file
    json_values,
    st.dictionaries(st.text(max_size=8), server_entries | json_values, max_size=4),
    st.builds(lambda key, servers: {key: servers}, st.sampled_from(["mcpServers", "servers"]), json_values),
    st.builds(
        lambda key, servers: {key: servers},
        st.sampled_from(["mcpServers", "servers"]),
        st.dictionaries(st.text(max_size=8), server_entries, max_size=3),
    ),
)


@pytest.mark.slow  # hypothesis: 500 generated documents
@settings(max_examples=500, deadline=None)
@given(source=sources)
def test_loading_any_json_raises_only_config_errors(source: Any) -> None:
    os.environ["LGMCP_SET"] = "value"
    os.environ.pop("LGMCP_UNSET", None)
    try:
        with contextlib.chdir(EMPTY_FOLDER):  # relative paths (a str source, envFile) resolve here
            loaded = load_connections(source)
    except MCPConfigError as exc:
        assert str(exc)
        return
    finally:
        os.environ.pop("LGMCP_SET", None)
    assert all(isinstance(name, str) and name for name in loaded)
    repr(loaded)  # every loaded config can be shown


@settings(max_examples=300, deadline=None)
@given(
    field=st.sampled_from(["cwd", "roots", "envFile", "command", "args", "url", "env"]),
    value=texts | st.lists(texts, max_size=2),
    from_file=st.booleans(),
)
def test_any_path_or_variable_text_loads_or_raises_a_config_error(
    field: str, value: Any, from_file: bool
) -> None:
    entry = {"command": "x", field: value} if field != "url" else {"url": value}
    source: Any = {"mcpServers": {"s": entry}}
    os.environ["LGMCP_SET"] = "value"
    try:
        with contextlib.chdir(EMPTY_FOLDER):
            if from_file:
                path = EMPTY_FOLDER / "mcp.json"
                path.write_text(json.dumps(source), encoding="utf-8")
                source = path
            load_connections(source)
    except MCPConfigError as exc:
        assert exc.server == "s"
    finally:
        os.environ.pop("LGMCP_SET", None)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200))
def test_any_env_file_text_parses_or_names_a_line(text: str) -> None:
    try:
        variables = parse_dotenv(text)
    except ValueError as exc:
        assert str(exc).startswith("line ")
        return
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in variables.items())


env_keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)


@settings(max_examples=300, deadline=None)
@given(variables=st.dictionaries(env_keys, st.text(max_size=30), max_size=6), export=st.booleans())
def test_env_file_values_in_double_quotes_round_trip(variables: dict[str, str], export: bool) -> None:
    def quoted(value: str) -> str:
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
        return f'"{escaped}"'

    text = "".join(f"{'export ' if export else ''}{k}={quoted(v)}\n# note\n" for k, v in variables.items())
    assert parse_dotenv(text) == variables


EMPTY_FOLDER = Path(tempfile.mkdtemp(prefix="lgmcp-config-props-"))
