"""What a failed connect says when the cause is outside the package: a URL that is not an MCP
endpoint, a typo in a config file, a launcher that needs a CA or proxy the server was not given."""

from __future__ import annotations

import json
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from langgraph_mcp import MCPPool, load_connections
from langgraph_mcp._session.hints import PROXY_VARIABLES, TLS_VARIABLES
from langgraph_mcp.errors import MCPConfigError, MCPConnectionError
from tests.conftest_servers import serve_in_loop
from tests.servers import demo


def answering(status: int, content_type: str = "text/html") -> Callable[[Any], Any]:
    """Wraps the fixture server's app in one that answers every request ``status`` with a page."""

    def wrap(_app: Any) -> Any:
        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                return
            headers = [(b"content-type", content_type.encode())]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": b"<html><body>a web page</body></html>"})

        return app

    return wrap


async def connect_error(url: str, **config: Any) -> str:
    async with MCPPool({"web": {"url": url, "connect_timeout": 10, **config}}) as pool:
        with pytest.raises(MCPConnectionError) as caught:
            await pool.list_all_tools()
    return str(caught.value)


@pytest.mark.parametrize(
    ("status", "said"),
    [(404, "HTTP 404 Not Found"), (405, "HTTP 405 Method Not Allowed"), (501, "HTTP 501 Not Implemented")],
)
async def test_a_url_that_is_not_an_mcp_endpoint_says_what_the_server_answered(
    status: int, said: str
) -> None:
    async with serve_in_loop(demo.build_server(), wrap=answering(status)) as url:
        message = await connect_error(url)
    assert f"the server answered {said} to the MCP handshake (POST)" in message
    assert (
        "this URL is probably not an MCP endpoint (check its path; MCP servers usually serve '/mcp'"
        in message
    )
    assert "MCP error -32603" not in message and "MCP error -32601" not in message


async def test_a_web_page_is_not_taken_for_an_mcp_server() -> None:
    async with serve_in_loop(demo.build_server(), wrap=answering(200)) as url:
        message = await connect_error(url)
    assert "answered the MCP handshake with 'text/html', not JSON or an event stream" in message
    assert "probably not an MCP endpoint" in message


async def test_a_server_failing_the_handshake_is_not_called_a_wrong_url() -> None:
    async with serve_in_loop(demo.build_server(), wrap=answering(503, "text/plain")) as url:
        message = await connect_error(url)
    assert "failed the MCP handshake with HTTP 503 Service Unavailable" in message
    assert "not an MCP endpoint" not in message


async def test_an_sse_url_that_is_not_an_endpoint_points_at_sse_paths() -> None:
    async with serve_in_loop(demo.build_server(), "sse", wrap=answering(404)) as url:
        message = await connect_error(url, transport="sse")
    assert "HTTP 404 Not Found to the MCP handshake (GET)" in message
    assert "MCP servers usually serve '/sse'" in message


async def test_a_real_endpoint_still_connects() -> None:
    async with serve_in_loop(demo.build_server()) as url, MCPPool({"web": url}) as pool:
        assert "add" in {t.name for t in (await pool.list_all_tools())["web"]}


def test_a_config_file_error_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"github": {"comand": "npx"}}}))
    with pytest.raises(MCPConfigError) as caught:
        load_connections(path)
    error = caught.value
    assert str(error).startswith(f"config file {str(path)!r}, MCP server 'github', field 'comand': ")
    assert (error.file, error.server, error.field) == (str(path), "github", "comand")
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.file) == (str(error), error.file)
    # A mapping is no file: said as before.
    with pytest.raises(MCPConfigError) as caught:
        load_connections({"github": {"comand": "npx"}})
    assert str(caught.value).startswith("MCP server 'github', field 'comand': ") and caught.value.file is None


def dying_with(line: str, **config: Any) -> dict[str, Any]:
    """A stdio server that prints ``line`` to stderr and exits, as a launcher that cannot fetch
    its package does."""
    script = f"import sys; print({line!r}, file=sys.stderr); sys.exit(1)"
    return {"command": sys.executable, "args": ["-c", script], "connect_timeout": 20, **config}


async def stdio_error(config: dict[str, Any]) -> str:
    async with MCPPool({"launcher": config}) as pool:
        with pytest.raises(MCPConnectionError) as caught:
            await pool.list_all_tools()
    return str(caught.value)


TLS_FAILURE = (
    "npm error code UNABLE_TO_GET_ISSUER_CERT_LOCALLY npm error errno "
    "UNABLE_TO_GET_ISSUER_CERT_LOCALLY request to https://registry.npmjs.org/x failed"
)


async def test_a_launcher_failing_on_a_private_ca_gets_the_variables_to_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in TLS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.setenv("NODE_EXTRA_CA_CERTS", "/etc/ssl/corp.pem")
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/ssl/corp.pem")
    message = await stdio_error(dying_with(TLS_FAILURE))
    assert TLS_FAILURE in message  # the server's own words first
    assert "the server's stderr shows a TLS certificate error" in message
    assert "SSL_CERT_FILE, NODE_EXTRA_CA_CERTS are set here but not passed" in message
    assert '"env": {"SSL_CERT_FILE": "${SSL_CERT_FILE}"}' in message
    assert "/etc/ssl/corp.pem" not in message  # names, never values
    # Passed already: not named as missing.
    message = await stdio_error(dying_with(TLS_FAILURE, env={"SSL_CERT_FILE": "/etc/ssl/corp.pem"}))
    assert "NODE_EXTRA_CA_CERTS is set here but not passed" in message


async def test_a_launcher_failing_on_the_network_gets_the_proxy_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    failure = "error: Failed to fetch: `https://pypi.org/simple/mcp-server-time/` dns error"
    message = await stdio_error(dying_with(failure))
    assert "the server's stderr shows a network error" in message
    assert "if it needs a private CA or a proxy, pass HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY" in message
    monkeypatch.setenv("https_proxy", "http://proxy.internal:3128")
    message = await stdio_error(dying_with(failure))
    assert "https_proxy is set here but not passed" in message
    assert "proxy.internal" not in message


async def test_other_crashes_get_no_network_hint() -> None:
    message = await stdio_error(dying_with("Traceback: KeyError: 'x'"))
    assert "KeyError" in message and "minimal environment" not in message


@pytest.mark.parametrize(
    ("status", "said"),
    [(429, "HTTP 429 Too Many Requests"), (408, "HTTP 408 Request Timeout")],
)
async def test_a_busy_server_is_not_called_a_wrong_url(status: int, said: str) -> None:
    async with serve_in_loop(demo.build_server(), wrap=answering(status, "application/json")) as url:
        message = await connect_error(url)
    assert f"the server did not take the MCP handshake now ({said}); it may be busy" in message
    assert "not an MCP endpoint" not in message


@pytest.mark.parametrize("status", [400, 404])
async def test_an_mcp_server_s_own_refusal_is_not_called_a_wrong_url(status: int) -> None:
    """A 4xx with a JSON body is a server speaking JSON-RPC: its own words are kept."""
    async with serve_in_loop(demo.build_server(), wrap=answering(status, "application/json")) as url:
        message = await connect_error(url)
    assert "not an MCP endpoint" not in message and "cannot connect to" in message
