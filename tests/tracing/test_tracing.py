"""Each MCP tool call is traced: an OpenTelemetry span under the caller's span, whose context the
SDK's request span and the server (through the request's ``_meta``) inherit, and a LangChain
child run of the tool's run. Off, neither costs anything."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import AsyncCallbackManager, BaseCallbackHandler
from langchain_core.tracers.base import BaseTracer
from langchain_core.tracers.schemas import Run
from langgraph.prebuilt import ToolNode
from langgraph.types import Command
from mcp.shared import _otel as sdk_otel
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from opentelemetry.util._once import Once

from langgraph_mcp import MCPPool, MCPToolNode, ToolOptions
from langgraph_mcp.elicitation import accept
from langgraph_mcp.options import FromConfig
from tests.conftest_servers import serve_in_loop, stdio_params
from tests.helpers import ai, text_of, thread, tool_call, tool_graph, tool_results, tools_by_name
from tests.servers import echoing, traced

CASES = [("http", "auto"), ("http", "legacy"), ("stdio", "auto"), ("stdio", "legacy")]
HIDDEN = "hidden-value-7f3a"


def _reset_provider() -> None:
    """No tracer provider, as in a process that never set one (the SDK's proxy tracer, bound to
    the first provider it saw, is unbound too, so no other test sees a trace context)."""
    otel_trace._TRACER_PROVIDER = None  # type: ignore[attr-defined]
    otel_trace._TRACER_PROVIDER_SET_ONCE = Once()  # type: ignore[attr-defined]
    sdk_otel._tracer._real_tracer = None  # type: ignore[attr-defined]


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """A global tracer provider exporting to memory for the test (the API allows one per process:
    it is taken back afterwards)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    _reset_provider()
    otel_trace.set_tracer_provider(provider)
    try:
        yield exporter
    finally:
        _reset_provider()
        provider.shutdown()


@pytest.fixture(params=CASES, ids=[f"{t}-{p}" for t, p in CASES])
async def server(request: pytest.FixtureRequest) -> AsyncIterator[dict[str, Any]]:
    transport, protocol = request.param
    if transport == "stdio":
        yield {**stdio_params("traced"), "protocol": protocol}
    else:
        async with serve_in_loop(traced.build_server()) as url:
            yield {"url": url, "protocol": protocol}


def _named(spans: list[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def _parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def _traceparent(text: str) -> tuple[int, int]:
    """(trace id, parent span id) of a ``traceparent`` value."""
    version, trace_id, span_id, _flags = text.split("-")
    assert version == "00"
    return int(trace_id, 16), int(span_id, 16)


async def test_a_call_is_a_span_under_the_callers_and_the_server_joins_its_trace(
    spans: InMemorySpanExporter, server: dict[str, Any]
) -> None:
    async with MCPPool({"traced": server}) as pool:
        tool = (await tools_by_name(pool))["seen_trace"]
        with otel_trace.get_tracer("tests").start_as_current_span("caller") as caller:
            message = await tool.ainvoke(tool_call("seen_trace", {}, "c1"))
        era = pool.connection("traced").era
    finished = spans.get_finished_spans()
    (call,) = _named(finished, "mcp.tool_call seen_trace")
    assert _parent_id(call) == caller.get_span_context().span_id
    (send,) = _named(finished, "MCP send tools/call seen_trace")
    assert _parent_id(send) == call.context.span_id
    # The server got the SDK span's context: same trace as the caller, its parent the send span.
    trace_id, parent = _traceparent(text_of(message))
    assert trace_id == caller.get_span_context().trace_id
    assert parent == send.context.span_id
    attributes = dict(call.attributes or {})
    assert attributes["langgraph_mcp.server"] == "traced"
    assert attributes["gen_ai.tool.name"] == "seen_trace"
    assert attributes["gen_ai.tool.call.id"] == "c1"
    assert attributes["langgraph_mcp.era"] == era
    assert attributes["langgraph_mcp.transport"] == ("stdio" if "command" in server else "http")
    assert attributes["langgraph_mcp.outcome"] == "ok"
    assert (attributes["langgraph_mcp.rounds"], attributes["langgraph_mcp.resends"]) == (0, 0)
    assert attributes["langgraph_mcp.result.content_bytes"] == len(text_of(message))
    assert call.status.is_ok


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_an_interrupted_call_and_its_resumed_call_are_two_spans(
    spans: InMemorySpanExporter, protocol: str
) -> None:
    tracer = otel_trace.get_tracer("tests")
    async with (
        serve_in_loop(traced.build_server()) as url,
        MCPToolNode({"traced": {"url": url, "protocol": protocol}}) as node,
    ):
        graph = tool_graph(node)
        with tracer.start_as_current_span("first run") as first:
            out = await graph.ainvoke({"messages": [ai(("confirm_trace", {}, "c1"))]}, thread())
        ((pending,),) = [out["__interrupt__"]]
        (question,) = pending.value["requests"]
        asked = _named(spans.get_finished_spans(), "mcp.tool_call confirm_trace")
        assert len(asked) == 1
        assert asked[0].attributes["langgraph_mcp.outcome"] == "interrupted"  # type: ignore[index]
        assert asked[0].status.is_unset  # a person is asked: not an error
        with tracer.start_as_current_span("resumed run") as resumed:
            out = await graph.ainvoke(
                Command(resume={"responses": {question["key"]: accept({"ok": True})}}), thread()
            )
    action, traceparent = tool_results(out)["c1"].split(" ")
    assert action == "accept"
    calls = _named(spans.get_finished_spans(), "mcp.tool_call confirm_trace")
    assert len(calls) == 2
    again = calls[1]
    assert again.context.span_id != asked[0].context.span_id
    assert again.context.trace_id == resumed.get_span_context().trace_id
    assert _parent_id(asked[0]) is not None and asked[0].context.trace_id == first.get_span_context().trace_id
    attributes = dict(again.attributes or {})
    assert attributes["langgraph_mcp.outcome"] == "ok"
    assert attributes["langgraph_mcp.rounds"] == 1  # the answer was delivered in the resumed run
    trace_id, parent = _traceparent(traceparent)
    sends = _named(spans.get_finished_spans(), "MCP send tools/call confirm_trace")
    if protocol == "legacy":
        # 2025-11-25: one request, held open while the person answered; it was sent (and its
        # context given to the server) in the first run, under the first call's span.
        (send,) = sends
        assert _parent_id(send) == asked[0].context.span_id
        assert trace_id == first.get_span_context().trace_id
    else:
        # 2026-07-28: the answer goes in a new request of the resumed run, under the new span.
        assert [_parent_id(s) for s in sends] == [asked[0].context.span_id, again.context.span_id]
        assert trace_id == resumed.get_span_context().trace_id
    assert parent == sends[-1].context.span_id


class Recorder(BaseCallbackHandler):
    """Every run a callback handler is told about, with its parent."""

    def __init__(self) -> None:
        self.started: dict[UUID, dict[str, Any]] = {}
        self.ended: dict[UUID, Any] = {}

    def on_tool_start(self, serialized: Any, input_str: str, *, run_id: UUID, **kwargs: Any) -> None:
        self.started[run_id] = {"type": "tool", "input": input_str, **kwargs}

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.started[run_id] = {"type": "chain", "inputs": inputs, **kwargs}

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.ended[run_id] = outputs

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self.ended[run_id] = error


class Runs(BaseTracer):
    """What a tracer (LangSmith's, say) sends: each run as it ends."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[Run] = []

    def _persist_run(self, run: Run) -> None:
        pass

    def _end_trace(self, run: Run) -> None:
        self.runs.append(run)
        super()._end_trace(run)


async def test_a_call_is_a_child_run_of_the_tool_run_with_its_facts_and_no_secret(
    spans: InMemorySpanExporter,
) -> None:
    async with (
        serve_in_loop(traced.build_server()) as url,
        MCPPool({"traced": {"url": url, "headers": {"Authorization": "Bearer header-secret-91"}}}) as pool,
    ):
        tool = (await tools_by_name(pool))["seen_trace"].with_options(
            ToolOptions(hidden={"token": FromConfig("token")})
        )
        recorder, runs = Recorder(), Runs()
        config = {"callbacks": [recorder, runs], "configurable": {"token": HIDDEN, "thread_id": "t1"}}
        node = ToolNode([tool])
        out = await tool_graph(node).ainvoke({"messages": [ai(("seen_trace", {}, "c1"))]}, config)
    (call,) = _named(spans.get_finished_spans(), "mcp.tool_call seen_trace")
    assert _traceparent(tool_results(out)["c1"])[0] == call.context.trace_id
    (tool_run,) = [i for i, r in recorder.started.items() if r["type"] == "tool"]
    (mcp_run,) = [i for i, r in recorder.started.items() if r.get("name") == "mcp.tool_call seen_trace"]
    started = recorder.started[mcp_run]
    assert started["parent_run_id"] == tool_run
    assert started["metadata"]["mcp_server"] == "traced"
    assert started["metadata"]["mcp_server_tool"] == "seen_trace"
    assert started["metadata"]["mcp_era"] == "2026-07-28"
    assert started["metadata"]["mcp_transport"] == "http"
    assert "mcp" in started["tags"]
    outputs = recorder.ended[mcp_run]
    assert outputs == {
        "outcome": "ok",
        "era": "2026-07-28",
        "rounds": 0,
        "client_wait_s": 0.0,
        "resends": 0,
        "result_bytes": 55,  # the traceparent
    }
    (traced_run,) = [r for r in runs.runs if r.name == "mcp.tool_call seen_trace"]
    assert traced_run.extra["metadata"]["mcp_outcome"] == "ok"  # sent with the run's end
    assert traced_run.extra["metadata"]["mcp_rounds"] == 0
    seen = repr(recorder.started) + repr(recorder.ended) + repr(traced_run.model_dump())
    seen += repr([(s.name, dict(s.attributes or {}), s.events) for s in spans.get_finished_spans()])
    assert HIDDEN not in seen and "header-secret-91" not in seen


async def test_a_failed_call_says_how_it_failed(spans: InMemorySpanExporter) -> None:
    async with (
        serve_in_loop(traced.build_server()) as url,
        MCPPool({"traced": {"url": url, "tool_timeouts": {"wait_trace": 0.2}}}) as pool,
    ):
        tools = await tools_by_name(pool)
        failed = await tools["fail_trace"].ainvoke(tool_call("fail_trace", {}, "c1"))
        late = await tools["wait_trace"].ainvoke(tool_call("wait_trace", {"seconds": 30}, "c2"))
    assert (failed.status, late.status) == ("error", "error")
    finished = spans.get_finished_spans()
    for name, outcome in (("fail_trace", "tool_error"), ("wait_trace", "timeout")):
        (call,) = _named(finished, f"mcp.tool_call {name}")
        attributes = dict(call.attributes or {})
        assert attributes["langgraph_mcp.outcome"] == attributes["error.type"] == outcome
        assert call.status.status_code is StatusCode.ERROR


async def test_tracing_off_costs_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _reset_provider()
    started: list[str] = []
    proxy_start = otel_trace.ProxyTracer.start_as_current_span

    def spy(self: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        started.append(name)
        return proxy_start(self, name, *args, **kwargs)

    monkeypatch.setattr(otel_trace.ProxyTracer, "start_as_current_span", spy)
    runs: list[str] = []
    chain_start = AsyncCallbackManager.on_chain_start

    async def chain_spy(self: Any, serialized: Any, inputs: Any, **kwargs: Any) -> Any:
        runs.append(str(kwargs.get("name")))
        return await chain_start(self, serialized, inputs, **kwargs)

    monkeypatch.setattr(AsyncCallbackManager, "on_chain_start", chain_spy)
    async with (
        serve_in_loop(traced.build_server()) as url,
        MCPPool({"traced": {"url": url, "protocol": "legacy"}}) as pool,
    ):
        tool = (await tools_by_name(pool))["seen_trace"]
        message = await tool.ainvoke(tool_call("seen_trace", {}, "c1"))
    assert text_of(message) == "none"
    assert "MCP send tools/call seen_trace" in started  # the SDK's own span, through the API's no-op
    assert not [name for name in started if name.startswith("mcp.tool_call")]
    assert not [name for name in runs if name.startswith("mcp.tool_call")]


async def test_streaming_messages_makes_no_run_for_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """``stream_mode="messages"`` adds LangGraph's own handler, which is not a tracer: no run."""
    runs: list[str] = []
    chain_start = AsyncCallbackManager.on_chain_start

    async def chain_spy(self: Any, serialized: Any, inputs: Any, **kwargs: Any) -> Any:
        runs.append(str(kwargs.get("name")))
        return await chain_start(self, serialized, inputs, **kwargs)

    monkeypatch.setattr(AsyncCallbackManager, "on_chain_start", chain_spy)
    async with (
        serve_in_loop(traced.build_server()) as url,
        MCPToolNode({"traced": {"url": url}}) as node,
    ):
        graph = tool_graph(node)
        chunks = [
            c
            async for c in graph.astream(
                {"messages": [ai(("seen_trace", {}, "c1"))]}, thread(), stream_mode="messages"
            )
        ]
    assert chunks  # the tool message streamed
    assert not [name for name in runs if name.startswith("mcp.tool_call")]


def test_a_synchronous_run_is_traced_the_same(spans: InMemorySpanExporter) -> None:
    recorder = Recorder()
    node = MCPToolNode({"traced": {"server": traced.build_server()}})
    try:
        with otel_trace.get_tracer("tests").start_as_current_span("caller") as caller:
            out = tool_graph(node).invoke(
                {"messages": [ai(("seen_trace", {}, "c1"))]}, {**thread(), "callbacks": [recorder]}
            )
    finally:
        node.pool.close()
    (call,) = _named(spans.get_finished_spans(), "mcp.tool_call seen_trace")
    assert _parent_id(call) == caller.get_span_context().span_id
    # In process on 2026-07-28 the SDK sends no trace context: this call's span is sent instead.
    assert _traceparent(tool_results(out)["c1"]) == (call.context.trace_id, call.context.span_id)
    (tool_run,) = [i for i, r in recorder.started.items() if r["type"] == "tool"]
    (mcp_run,) = [i for i, r in recorder.started.items() if r.get("name") == "mcp.tool_call seen_trace"]
    assert recorder.started[mcp_run]["parent_run_id"] == tool_run
    assert recorder.ended[mcp_run]["outcome"] == "ok"


SECRET_CASES = [("stdio", "auto"), ("stdio", "legacy"), ("http", "auto"), ("http", "legacy")]


@pytest.mark.parametrize(("transport", "protocol"), SECRET_CASES, ids=[f"{t}-{p}" for t, p in SECRET_CASES])
async def test_no_span_of_the_trace_keeps_a_secret_the_server_echoed(
    spans: InMemorySpanExporter, transport: str, protocol: str
) -> None:
    """A JSON-RPC error whose message repeats the server's configured secrets (an env value, an
    ``Authorization`` header): neither the package's span nor the SDK's send span under it keeps
    the text, in its status, attributes or events; both still say the call failed."""
    secret = "env-secret-5c1e0d"
    token = "Bearer header-token-83b2"
    async with contextlib.AsyncExitStack() as stack:
        if transport == "stdio":
            config: dict[str, Any] = {**stdio_params("echoing", env={"ECHO_SECRET": secret})}
        else:
            url = await stack.enter_async_context(serve_in_loop(echoing.build_server(), "http"))
            config = {"url": url, "headers": {"Authorization": token, "X-Api-Key": secret}}
        pool = await stack.enter_async_context(MCPPool({"echo": {**config, "protocol": protocol}}))
        tool = (await tools_by_name(pool))["reject_echo"]
        message = await tool.ainvoke(tool_call("reject_echo", {}, "c1"))
    assert message.status == "error"
    # The client's spans: the server's own (kind SERVER, in this process over HTTP) are its own.
    finished = [s for s in spans.get_finished_spans() if s.kind is not otel_trace.SpanKind.SERVER]
    (call,) = _named(finished, "mcp.tool_call reject_echo")
    (send,) = _named(finished, "MCP send tools/call reject_echo")
    assert _parent_id(send) == call.context.span_id
    assert call.status.status_code is StatusCode.ERROR and send.status.status_code is StatusCode.ERROR
    assert dict(send.attributes or {})["error.type"] == "-32603"
    seen = repr(
        [
            (
                s.name,
                s.status.description,
                dict(s.attributes or {}),
                [(e.name, dict(e.attributes or {})) for e in s.events],
            )
            for s in finished
        ]
    )
    for value in (secret, "header-token-83b2"):
        assert value not in seen
