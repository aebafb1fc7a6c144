"""No configured secret ever shows: not in a ToolMessage, an exception, a repr, a log record, a
stream event or a checkpoint.

Every place a secret can be configured holds a sentinel (``SNTL-<where>-<n>``): ``headers``
values, ``auth``, a URL's query and userinfo, stdio ``env`` (also from an ``envFile``), and
``${VAR}`` values expanded into a stdio server's ``args`` and ``cwd`` (and ``command``). Then a
real graph (``MCPToolNode`` in a ``StateGraph`` with a SQLite checkpointer) runs over servers
that fail in every way we report: an HTTP server that is down, one that refuses the credentials
at connect (streamable HTTP and SSE), one that accepts them and later revokes them, a stdio
server that crashes mid-call, and one whose command does not exist. Every log record (all
loggers, DEBUG), stream event, message, exception, repr and stored checkpoint byte is searched.

What a server itself says passes through the same redaction: a stdio server that prints its
``env`` to stderr or stdout, an ``isError`` result, a JSON-RPC error or a log notification that
echoes a configured value (and, in ``tests/session/test_call_headers.py``, a per-call header value).
"""

from __future__ import annotations

import base64
import gc
import logging
import sqlite3
from collections.abc import Iterable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from langgraph_mcp import MCPConfigError, MCPConnectionError, MCPPool, MCPToolNode, load_connections
from langgraph_mcp._support.redact import redact_url
from tests.conftest_servers import BearerGate, serve_in_loop, stdio_params
from tests.helpers import SERVER_SIDE_LOGGERS, free_port, record_texts, thread, tool_graph
from tests.servers import demo

TOKEN = "SNTL-header-1"
SECRETS = {
    "header": TOKEN,
    "header2": "SNTL-header-2",
    "query": "SNTL-query-3",
    "userinfo_user": "SNTL-user-4",
    "userinfo_password": "SNTL-password-5",
    "auth": "SNTL-auth-6",
    "env": "SNTL-env-7",
    "env_file": "SNTL-envfile-8",
    "args": "SNTL-args-9",
    "cwd": "SNTL-cwd-10",
    "command": "SNTL-command-11",
}
# Forms a secret takes on the wire (Basic credentials are base64).
ENCODED = {
    "auth_basic": base64.b64encode(f"user:{SECRETS['auth']}".encode()).decode(),
    "userinfo_basic": base64.b64encode(
        f"{SECRETS['userinfo_user']}:{SECRETS['userinfo_password']}".encode()
    ).decode(),
}


def leaks(text: str) -> list[str]:
    """Which sentinels ``text`` shows (any ``SNTL-`` at all counts)."""
    found = [name for name, value in {**SECRETS, **ENCODED}.items() if value in text]
    return found or (["unknown SNTL-"] if "SNTL-" in text else [])


def remote(url: str, *, userinfo: bool, auth: bool, token: str = TOKEN, **options: Any) -> dict[str, Any]:
    """An HTTP server entry with a secret in each remote place (``${VAR}`` expanded)."""
    scheme, rest = url.split("://", 1)
    if userinfo:
        rest = "${LGMCP_SNTL_USER}:${LGMCP_SNTL_PASSWORD}@" + rest
    entry: dict[str, Any] = {
        "url": f"{scheme}://{rest}?api_key=${{LGMCP_SNTL_QUERY}}&plain=1",
        "headers": {"Authorization": f"Bearer {token}", "X-Other": "${LGMCP_SNTL_HEADER2}"},
        **options,
    }
    if auth:
        entry["auth"] = ("user", SECRETS["auth"])
    return entry


def gate(status: int = 401) -> tuple[list[BearerGate], Any]:
    gates: list[BearerGate] = []

    def wrap(app: Any) -> BearerGate:
        gates.append(BearerGate(app, TOKEN, status))
        return gates[-1]

    return gates, wrap


def texts_of(value: Any) -> Iterable[str]:
    yield repr(value)
    yield str(value)


@pytest.mark.slow  # hypothesis: hundreds of generated configurations
async def test_no_secret_shows_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("LGMCP_SNTL_QUERY", SECRETS["query"])
    monkeypatch.setenv("LGMCP_SNTL_USER", SECRETS["userinfo_user"])
    monkeypatch.setenv("LGMCP_SNTL_PASSWORD", SECRETS["userinfo_password"])
    monkeypatch.setenv("LGMCP_SNTL_HEADER2", SECRETS["header2"])
    monkeypatch.setenv("LGMCP_SNTL_ENV", SECRETS["env"])
    monkeypatch.setenv("LGMCP_SNTL_ARG", SECRETS["args"])
    monkeypatch.setenv("LGMCP_SNTL_COMMAND", SECRETS["command"])
    cwd = tmp_path / SECRETS["cwd"]
    cwd.mkdir()
    monkeypatch.setenv("LGMCP_SNTL_CWD", str(cwd))
    env_file = tmp_path / "server.env"
    env_file.write_text(f"FILE_TOKEN={SECRETS['env_file']}\n", encoding="utf-8")
    caplog.set_level(logging.DEBUG)

    local = stdio_params("demo", env={"API_KEY": "${LGMCP_SNTL_ENV}"})
    local.update(
        args=["-X", "token=${LGMCP_SNTL_ARG}", *local["args"]],  # python ignores unknown -X options
        cwd="${LGMCP_SNTL_CWD}",
        envFile=str(env_file),
        log_level="debug",
        log_events=True,
    )
    down_url = f"http://127.0.0.1:{free_port()}/mcp"
    async with AsyncExitStack() as stack:
        refused_gates, refused_wrap = gate(401)
        sse_gates, sse_wrap = gate(403)
        web_gates, web_wrap = gate(401)
        refused_url = await stack.enter_async_context(
            serve_in_loop(demo.build_server(counters=demo.Counters()), wrap=refused_wrap)
        )
        sse_url = await stack.enter_async_context(
            serve_in_loop(demo.build_server(counters=demo.Counters()), "sse", wrap=sse_wrap)
        )
        web_url = await stack.enter_async_context(
            serve_in_loop(demo.build_server("web", counters=demo.Counters()), wrap=web_wrap)
        )
        connections = {  # reachable servers first: the names of their tools do not depend on the others
            "local": local,
            "web": remote(web_url, userinfo=False, auth=False, prefix="web_"),
            "gone": {"command": "/nonexistent/${LGMCP_SNTL_COMMAND}/server"},
            "down": remote(down_url, userinfo=True, auth=True),
            "refused": remote(refused_url, userinfo=True, auth=True, token="SNTL-header-1-wrong"),
            "sse": remote(sse_url, userinfo=False, auth=False, token="SNTL-header-1-wrong", transport="sse"),
        }
        pool = MCPPool(connections, on_connection_error="warn")
        stack.push_async_callback(pool.aclose)
        node = MCPToolNode(pool)
        saver = await stack.enter_async_context(AsyncSqliteSaver.from_conn_string(str(tmp_path / "cp.db")))
        graph = tool_graph(node, checkpointer=saver)

        events: list[Any] = []

        async def run(*calls: tuple[str, dict[str, Any], str]) -> None:
            request = {
                "messages": [AIMessage("", tool_calls=[{"name": n, "args": a, "id": i} for n, a, i in calls])]
            }
            async for event in graph.astream(
                request, thread("secrets"), stream_mode=["custom", "updates", "messages"]
            ):
                events.append(event)

        await run(
            ("add", {"a": 1, "b": 2}, "local-ok"),
            ("web_add", {"a": 2, "b": 2}, "web-ok"),
            ("chatty", {"n": 1}, "local-logs"),
            ("nowhere", {}, "unknown-tool"),  # some server is down: the outage message
        )
        await run(("exit_process", {}, "local-crash"))
        web_gates[0].token = "rotated"  # the credentials the web server accepted are revoked
        await run(("web_add", {"a": 3, "b": 3}, "web-revoked"), ("add", {"a": 4, "b": 4}, "local-again"))

        errors: dict[str, BaseException] = dict(pool.unreachable())
        for name in ("gone", "down", "refused", "sse"):
            try:
                await pool.connection(name).connect()
            except Exception as exc:
                errors[f"{name} (connect)"] = exc
        state = await graph.aget_state(thread("secrets"))
        messages = state.values["messages"]
        results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
        tools = node.toolset.known

        # The scenario happened as intended.
        assert set(errors) >= {"gone", "down", "refused", "sse"}, errors
        assert results["local-ok"].content == "3" and results["web-ok"].content == "4"
        assert results["local-crash"].status == "error"
        assert "refused the credentials (HTTP 401" in str(results["web-revoked"].content)
        assert "refused the credentials (HTTP 403" in str(errors["sse"])
        assert "could not be reached" in str(results["unknown-tool"].content)
        assert results["local-again"].content == "8"
        assert any(isinstance(e, tuple) and e[0] == "custom" and e[1]["type"] == "mcp_log" for e in events)
        assert refused_gates[0].refused and sse_gates[0].refused

        places: dict[str, Iterable[str]] = {
            "tool messages": [str(m.content) for m in results.values()] + [repr(m) for m in messages],
            "exceptions": [t for exc in errors.values() for t in texts_of(exc)],
            "reprs": [
                *texts_of(pool.servers),
                *texts_of(load_connections(connections)),
                *texts_of(pool),
                *(t for c in pool.connections.values() for t in texts_of(c)),
                *(t for tool in tools for t in texts_of(tool)),
                *texts_of(node),
            ],
            "stream events": [repr(e) for e in events],
            "checkpoints": _stored(tmp_path / "cp.db"),
        }
    places["log records"] = record_texts(caplog.records, skip=SERVER_SIDE_LOGGERS)
    assert any("HTTP Request:" in t for t in places["log records"])  # httpx2 logged URLs: checked
    found = {
        where: sorted({leak for text in texts for leak in leaks(text)}) for where, texts in places.items()
    }
    assert {where: names for where, names in found.items() if names} == {}


def _stored(db: Path) -> list[str]:
    """Every value of every row of every table of a SQLite checkpoint, as text."""
    out: list[str] = []
    with sqlite3.connect(db) as conn:
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        assert "checkpoints" in tables and "writes" in tables
        for table in tables:
            for row in conn.execute(f"SELECT * FROM {table}"):  # (table names come from the db itself)
                for value in row:
                    if isinstance(value, bytes):
                        out.append(value.decode("utf-8", "replace"))
                    elif value is not None:
                        out.append(str(value))
    assert out
    return out


def test_the_sentinel_search_finds_what_it_looks_for() -> None:
    assert leaks(f"x {SECRETS['query']} y") == ["query"]
    assert leaks(ENCODED["auth_basic"]) == ["auth_basic"]
    assert leaks("SNTL-something-else") == ["unknown SNTL-"]
    assert leaks("clean") == []


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://host/mcp", "https://host/mcp"),
        ("https://host/mcp?api_key=k1&v=2", "https://host/mcp?api_key=***&v=***"),
        ("https://user:pw@host:8443/mcp", "https://***@host:8443/mcp"),
        ("https://token@host/mcp?bare", "https://***@host/mcp?***"),
        ("https://host/cb#access_token=t", "https://host/cb#***"),
    ],
)
def test_redact_url_keeps_the_endpoint_and_hides_the_rest(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_http_config_repr_hides_userinfo_and_query() -> None:
    cfg = load_connections({"s": {"url": "https://u:SNTL-password-5@host/mcp?api_key=SNTL-query-3"}})["s"]
    assert "https://***@host/mcp?api_key=***" in repr(cfg)
    assert leaks(repr(cfg)) == []
    assert cfg.url.endswith("?api_key=SNTL-query-3")  # type: ignore[union-attr]  # (the client uses it)


def test_library_records_are_cleaned_only_of_live_secrets(caplog: pytest.LogCaptureFixture) -> None:
    library = logging.getLogger("httpx2")
    query, token = "SNTL-only-here-12", "SNTL-only-here-13"  # no other test's pool holds these
    entry = {"url": f"http://h/mcp?api_key={query}", "headers": {"Authorization": f"Bearer {token}"}}
    redactor = load_connections({"s": entry})["s"].redactor()
    redactor.watch_library_logs()
    with caplog.at_level(logging.INFO, logger="httpx2"):
        library.info("HTTP Request: %s %s", "POST", f"http://h/mcp?api_key={query}")
        library.info("unrelated %s", "http://h/mcp?page=2")
        try:
            raise RuntimeError(f"failed for {token}")
        except RuntimeError:
            library.exception("request failed")
        del redactor
        gc.collect()  # the pool that held it is gone: its secrets are no longer looked for
        library.info("after %s", query)
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "HTTP Request: POST http://h/mcp?api_key=***",
        "unrelated http://h/mcp?page=2",
        "request failed",
        f"after {query}",
    ]
    assert caplog.records[2].exc_info is None and "failed for ***" in (caplog.records[2].exc_text or "")


async def test_a_stdio_server_that_prints_its_env_secret_shows_it_nowhere(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The server writes its configured env secret to stderr (at start-up, and as it crashes),
    # to stdout (a line that is not JSON-RPC, the secret across the preview's cut), into an
    # isError result and a log notification. Every one of those is reported or forwarded.
    caplog.set_level(logging.DEBUG)
    secret = SECRETS["env"]
    echo = stdio_params("echoing", env={"ECHO_SECRET": secret})
    echo.update(log_level="debug", log_events=True)
    events: list[Any] = []
    async with AsyncExitStack() as stack:
        pool = await stack.enter_async_context(MCPPool({"echo": echo}))
        saver = await stack.enter_async_context(AsyncSqliteSaver.from_conn_string(str(tmp_path / "cp.db")))
        graph = tool_graph(MCPToolNode(pool), checkpointer=saver)
        calls = [("fail_echo", "c-fail"), ("log_echo", "c-log"), ("crash", "c-crash")]
        for name, call_id in calls:
            request = {"messages": [AIMessage("", tool_calls=[{"name": name, "args": {}, "id": call_id}])]}
            async for event in graph.astream(request, thread("stderr"), stream_mode=["custom", "updates"]):
                events.append(event)
        state = await graph.aget_state(thread("stderr"))
        dead = stdio_params("echoing", "--crash-at-start", env={"ECHO_SECRET": secret})
        async with MCPPool({"dead": dead}) as dead_pool:
            with pytest.raises(MCPConnectionError) as caught:
                await dead_pool.connection("dead").connect()
    results = {m.tool_call_id: m for m in state.values["messages"] if isinstance(m, ToolMessage)}

    crashed = str(results["c-crash"].content)
    assert "last lines of the server's stderr:" in crashed
    assert "fatal: the backend refused ['***']" in crashed and "starting with ECHO_SECRET=***" in crashed
    assert "fatal: cannot sign in with ***" in str(caught.value)
    assert (results["c-fail"].status, results["c-fail"].content) == (
        "error",
        "refused: credentials ['***'] are not valid",
    )
    assert results["c-log"].content == "ok"
    records = [r.getMessage() for r in caplog.records]
    assert any("stdout is not a JSON-RPC message" in m for m in records)
    assert any(r.name == "langgraph_mcp.server.echo.stderr" for r in caplog.records)
    assert any(
        r.name == "langgraph_mcp.server.echo" and "using ['***']" in r.getMessage() for r in caplog.records
    )
    assert any(e[0] == "custom" and e[1]["type"] == "mcp_log" for e in events)
    places = {
        "tool messages": [repr(m) for m in state.values["messages"]],
        "connection error": list(texts_of(caught.value)),
        "stream events": [repr(e) for e in events],
        "checkpoints": _stored(tmp_path / "cp.db"),
        "log records": record_texts(caplog.records),  # (no server runs in this process)
    }
    found = {
        where: sorted({leak for text in texts for leak in leaks(text)}) for where, texts in places.items()
    }
    assert {where: names for where, names in found.items() if names} == {}


def test_a_preview_cut_through_a_secret_masks_the_part_it_keeps() -> None:
    redactor = load_connections({"s": {"command": "x", "env": {"K": "SNTL-env-7"}}})["s"].redactor()
    text = "x" * 74 + "SNTL-env-7 and more"
    assert redactor.head(text, 80) == "x" * 74 + "*** an"
    assert redactor.head("short", 80) == "short"


def test_a_held_secret_is_masked_only_while_it_is_held() -> None:
    redactor = load_connections({"s": {"url": "http://h/mcp", "headers": {"X-A": "SNTL-header-2"}}})[
        "s"
    ].redactor()
    with redactor.holding(["SNTL-held-24", "abc"]):
        with redactor.holding(["SNTL-held-24"]):
            pass
        assert redactor("SNTL-held-24 SNTL-header-2 abc") == "*** *** abc"  # (short: never masked)
    assert redactor("SNTL-held-24 SNTL-header-2") == "SNTL-held-24 ***"


@pytest.mark.parametrize(
    ("headers", "said"),
    [
        (
            {"Authorization": "Bearer ${LGMCP_SNTL_HEADER2}"},
            "header 'Authorization': its value ends with a line break",
        ),
        ({"X Key": "v"}, "a header name is not a valid HTTP header name: it has a space after 'X'"),
        ({"X-Key": "SNTL-header-2\u00a0"}, "header 'X-Key': its value has a non-ASCII character (U+00A0)"),
    ],
)
def test_a_configured_header_that_cannot_be_sent_is_refused_naming_it(
    headers: dict[str, str], said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LGMCP_SNTL_HEADER2", "SNTL-header-2\n")  # read from a file, newline kept
    with pytest.raises(MCPConfigError) as caught:
        load_connections({"s": {"url": "http://h/mcp", "headers": headers}})
    assert said in str(caught.value) and caught.value.field == "headers"
    assert leaks(str(caught.value)) == []


def test_a_secret_is_masked_in_keys_too() -> None:
    """A server's log data, error data or structured result may use a secret as a key."""
    from langgraph_mcp._support.redact import Redactor, mask_all

    redact = Redactor(["sk-live-SECRET123", "other-SECRET-456"])
    data = {
        "sk-live-SECRET123": "ok",
        "x": ["token sk-live-SECRET123", {"other-SECRET-456": 1}],
        "other-SECRET-456": 2,
        7: "sk-live-SECRET123",
    }
    masked = mask_all(data, redact)
    assert masked == {"***": "ok", "x": ["token ***", {"***": 1}], "*** (2)": 2, 7: "***"}
    assert "SECRET" not in repr(masked)
