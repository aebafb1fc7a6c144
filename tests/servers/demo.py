"""The main fixture server: typed tools, every content kind, errors, progress, cancellation.

Environment variables read by the running process:
- ``DEMO_PID_DIR``: at startup write a file named after the PID into that directory.
- ``DEMO_EVENTS_FILE``: append one line per cancelled ``sleep``/``hang`` call.
"""

import base64
import json
import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextResourceContents,
    ToolAnnotations,
)
from pydantic import BaseModel

from tests.servers._runner import run_cli

# A valid 1x1 RGBA PNG.
PNG_1X1 = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
    b"\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\xdacd`\xf8_\x0f\x00\x02\x87\x01\x80\xebG\xba\x92"
    b"\x00\x00\x00\x00IEND\xaeB`\x82"
)
PNG_1X1_B64 = base64.b64encode(PNG_1X1).decode("ascii")
# A 44-byte header + 4 silent samples WAV (8 kHz, mono, 8 bit), base64.
WAV_B64 = "UklGRigAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQQAAACAgICA"
BLOB_BYTES = b"\x00\x01binary"
WEIRD_TOOL_NAME = "weird.tool/v1:x"
LONG_TOOL_NAME = "a_very_long_tool_name_" + "x" * 48  # 70 characters
PROGRESS_INTERVAL = 0.05
HANDSHAKE_METHODS = frozenset({"initialize", "server/discover"})


@dataclass
class Counters:
    """Requests seen by one server (or, for the module-level ``COUNTERS``, the latest build)."""

    handshakes: int = 0
    calls: int = 0

    def reset(self) -> None:
        self.handshakes = self.calls = 0

    def middleware(self) -> "CountingMiddleware":
        return CountingMiddleware(self)


@dataclass
class CountingMiddleware:
    """Server middleware counting handshake requests and ``tools/call`` requests."""

    counters: Counters

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.request_id is not None:  # a request, not a notification
            if ctx.method in HANDSHAKE_METHODS:
                self.counters.handshakes += 1
            elif ctx.method == "tools/call":
                self.counters.calls += 1
        return await call_next(ctx)


COUNTERS = Counters()


class _Meeting:
    """Shared by ``rendezvous`` calls: each group of ``n`` arrivals shares one event."""

    def __init__(self) -> None:
        self.arrived = 0
        self.group: anyio.Event | None = None


class Weather(BaseModel):
    city: str
    temperature_c: float
    conditions: str


class Address(BaseModel):
    street: str
    city: str


class Payload(BaseModel):
    name: str
    address: Address
    tags: list[str] = []
    contacts: list[Address] = []


def record_event(line: str) -> None:
    """Append ``line`` to ``$DEMO_EVENTS_FILE`` (if set)."""
    path = os.environ.get("DEMO_EVENTS_FILE")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def write_pid_file() -> None:
    """Create ``$DEMO_PID_DIR/<pid>`` (if set) so tests can count spawned servers."""
    pid_dir = os.environ.get("DEMO_PID_DIR")
    if pid_dir:
        Path(pid_dir, str(os.getpid())).write_text(f"{os.getpid()}\n", encoding="utf-8")


def build_server(name: str = "demo", counters: Counters | None = None) -> MCPServer:
    """Build the demo server. Without ``counters`` it resets and counts into ``COUNTERS``."""
    if counters is None:
        counters = COUNTERS
        counters.reset()
    srv: MCPServer = MCPServer(name, middleware=[counters.middleware()])
    meeting = _Meeting()

    @srv.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @srv.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @srv.tool()
    def echo_runtime(runtime: str, x: int = 0) -> str:
        """Echo an argument literally named ``runtime``."""
        return f"runtime={runtime} x={x}"

    @srv.tool()
    def fail(message: str) -> str:
        """Fail with a tool error carrying ``message``."""
        raise ToolError(message)

    @srv.tool()
    def crash() -> str:
        """Raise an unexpected exception (its text must not reach the client)."""
        raise RuntimeError("secret internal detail")

    @srv.tool()
    async def sleep(seconds: float, ctx: Context) -> str:
        """Sleep, reporting progress about every 50 ms."""
        steps = max(1, round(seconds / PROGRESS_INTERVAL))
        try:
            for i in range(1, steps + 1):
                await anyio.sleep(seconds / steps)
                await ctx.report_progress(i, steps, f"step {i}/{steps}")
        except anyio.get_cancelled_exc_class():
            record_event(f"cancelled sleep {seconds}")
            raise
        return f"slept {seconds}"

    @srv.tool()
    async def chatty(n: int, ctx: Context) -> str:
        """Send ``n`` debug and ``n`` info log messages (logger ``chatter``), then a warning."""
        with warnings.catch_warnings():  # the logging capability is deprecated in 2026-07-28
            warnings.simplefilter("ignore")
            for i in range(n):
                await ctx.debug(f"debug {i}", logger_name="chatter")
                await ctx.info(f"info {i}", logger_name="chatter")
            await ctx.warning({"done": n}, logger_name="chatter")
        return f"chatted {n}"

    @srv.tool()
    async def hang() -> str:
        """Never return."""
        try:
            await anyio.Event().wait()
        except anyio.get_cancelled_exc_class():
            record_event("cancelled hang")
            raise
        return "unreachable"

    @srv.tool()
    async def quiet_sleep(seconds: float) -> str:
        """Sleep without sending anything (no progress), then answer."""
        await anyio.sleep(seconds)
        return f"slept quietly {seconds}"

    load = {"now": 0, "peak": 0}
    started: list[str] = []

    @srv.tool()
    async def gauge(tag: str, seconds: float = 0.1) -> str:
        """Note ``tag`` as started, count the calls running at once, sleep (at most
        ``$DEMO_GAUGE_CAP`` seconds), answer ``tag``. Starts and ends go to ``$DEMO_EVENTS_FILE``."""
        started.append(tag)
        record_event(f"gauge {tag} start")
        load["now"] += 1
        load["peak"] = max(load["peak"], load["now"])
        try:
            await anyio.sleep(min(seconds, float(os.environ.get("DEMO_GAUGE_CAP", "inf"))))
        finally:
            load["now"] -= 1
        record_event(f"gauge {tag} done")
        return tag

    @srv.tool()
    def gauge_report() -> dict[str, Any]:
        """The most ``gauge`` calls seen running at once, and the tags in the order they started."""
        return {"peak": load["peak"], "started": list(started)}

    @srv.tool()
    async def rendezvous(n: int, wait: float = 5.0) -> str:
        """Wait until ``n`` rendezvous calls are running at once (``met n``), at most ``wait`` s."""
        if meeting.arrived % n == 0:
            meeting.group = anyio.Event()
        group = meeting.group
        assert group is not None
        meeting.arrived += 1
        if meeting.arrived % n == 0:
            group.set()
        with anyio.move_on_after(wait):
            await group.wait()
            return f"met {n}"
        return f"missed ({meeting.arrived % n} of {n} arrived)"

    @srv.tool()
    def image() -> Image:
        """A 1x1 PNG."""
        return Image(data=PNG_1X1, format="png")

    @srv.tool()
    def photo_report() -> CallToolResult:
        """A 1x1 PNG, whose structured content repeats the image's data (raw and as a data URI)."""
        return CallToolResult(
            content=[ImageContent(type="image", data=PNG_1X1_B64, mime_type="image/png")],
            structured_content={
                "photo": PNG_1X1_B64,
                "preview": {"uri": f"data:image/png;base64,{PNG_1X1_B64}", "pixels": 1},
            },
        )

    @srv.tool()
    def audio() -> AudioContent:
        """A tiny WAV clip."""
        return AudioContent(type="audio", data=WAV_B64, mime_type="audio/wav")

    @srv.tool()
    def text_resource() -> EmbeddedResource:
        """An embedded text resource."""
        contents = TextResourceContents(
            uri="res://demo/readme", text="hello resource", mime_type="text/plain"
        )
        return EmbeddedResource(type="resource", resource=contents)

    @srv.tool()
    def blob_resource() -> EmbeddedResource:
        """An embedded binary resource."""
        contents = BlobResourceContents(
            uri="res://demo/blob",
            blob=base64.b64encode(BLOB_BYTES).decode(),
            mime_type="application/octet-stream",
        )
        return EmbeddedResource(type="resource", resource=contents)

    @srv.tool()
    def link() -> ResourceLink:
        """A link to a resource."""
        return ResourceLink(
            type="resource_link",
            uri="res://demo/linked",
            name="linked",
            title="Linked file",
            description="a linked resource",
            mime_type="text/plain",
        )

    @srv.tool()
    def mixed() -> list[str | Image]:
        """Text, image, text: three content blocks."""
        return ["first", Image(data=PNG_1X1, format="png"), "second"]

    @srv.tool()
    def weather(city: str) -> Weather:
        """Structured weather for a city."""
        return Weather(city=city, temperature_c=21.5, conditions="sunny")

    @srv.tool()
    def stats() -> dict[str, int]:
        """PID, handshakes seen and tools/call requests seen by this server."""
        return {"pid": os.getpid(), "handshakes": counters.handshakes, "calls": counters.calls}

    @srv.tool()
    def exit_process() -> str:
        """Kill the server process mid-call (exit code 3)."""
        os._exit(3)

    @srv.tool(name=WEIRD_TOOL_NAME)
    def weird(q: str) -> str:
        """A tool whose name needs sanitising."""
        return q

    @srv.tool(name=LONG_TOOL_NAME)
    def long_name() -> str:
        """A tool with a 70-character name."""
        return "long"

    @srv.tool(
        title="Delete an item",
        annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=False),
        meta={"example.com/owner": "tests"},
    )
    def delete_item(item: str) -> str:
        """Delete an item (annotated destructive)."""
        return f"deleted {item}"

    @srv.tool()
    def nested(payload: Payload) -> str:
        """Echo a nested payload as JSON."""
        return json.dumps(payload.model_dump(mode="json"), sort_keys=True)

    @srv.tool()
    def header(name: str, ctx: Context) -> str:
        """The value of one HTTP request header of this call (``<none>`` on stdio)."""
        headers = ctx.headers or {}
        return headers.get(name.lower(), headers.get(name, "<none>"))

    @srv.tool()
    def client_name(ctx: Context) -> str:
        """The ``clientInfo.name`` this connection identified itself with."""
        params = ctx.session.client_params
        return params.client_info.name if params is not None else "<unknown>"

    @srv.tool()
    def env(name: str) -> str:
        """The server process's value of an environment variable."""
        return os.environ.get(name, "<unset>")

    return srv


def main() -> None:
    run_cli(build_server, description=__doc__, on_start=write_pid_file)


if __name__ == "__main__":
    main()
