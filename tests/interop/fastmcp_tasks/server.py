"""A task server built with ``fastmcp-tasks`` (FastMCP's implementation of the 2026-07-28 tasks
extension, ``io.modelcontextprotocol/tasks``), for the interoperability tests.

Runs in the environment of ``tests/interop/fastmcp_tasks`` (its own ``fastmcp`` and ``mcp``).
Its task engine (docket) keeps the tasks in memory (``memory://``, the default), so one process
holds them. ``python server.py`` serves stdio; ``python server.py --http`` serves streamable
HTTP at ``/mcp`` on a free port of 127.0.0.1 and prints ``LISTENING <port>`` on stdout once it
accepts connections.

Every tool body appends what it does to the JSON-lines file ``$TASKS_LOG`` (``{"event", "tool",
"task", "label"}``), so a test can tell how many tasks were started, run again and cancelled.
Every tool runs as a task when the client declares the extension:

- ``job(label, steps)``: reports ``step i of n`` as its status (``ctx.report_progress``), and
  goes on to the next step only once the file ``$TASKS_LOG.<label>-<i>`` exists, then logs
  ``finished`` and returns ``done <label>``;
- ``ask(label)``: asks for a name, then whether to shout it (each an ``InputRequiredResult``;
  fastmcp-tasks parks the task in ``input_required`` and runs the body again, in the same task,
  with the answer), then greets;
- ``must(label="")``: runs only as a task (``mode="required"``, listed with ``execution.taskSupport``);
- ``broken(label="")``: raises a tool error (a completed task whose result has ``isError``);
- ``faulty(label="")``: raises a JSON-RPC error (a ``failed`` task);
- ``nag()``: calls ``ctx.elicit`` (a tool error inside a task);
- ``stuck(label)``: runs until cancelled, and logs ``cancelled`` when it is.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from datetime import timedelta
from pathlib import Path

import mcp_types
import uvicorn
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension
from mcp.shared.exceptions import MCPError

LOG = Path(os.environ["TASKS_LOG"])
FAST = TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=50))

server = FastMCP("interop-fastmcp-tasks")
server.add_extension(TasksExtension())


def log(event: str, tool: str, ctx: Context, label: str = "") -> None:
    with LOG.open("a") as f:
        f.write(json.dumps({"event": event, "tool": tool, "task": ctx.task_id, "label": label}) + "\n")


async def gate(path: Path) -> None:
    """Wait until the test creates ``path`` (in another process: no event to wait on)."""
    while not path.exists():  # noqa: ASYNC110
        await asyncio.sleep(0.01)


@server.tool(task=FAST)
async def job(label: str, steps: int, ctx: Context) -> str:
    """Count ``steps`` steps, each one's status shown until the test lets it go on."""
    log("started", "job", ctx, label)
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i} of {steps}")
        await gate(LOG.with_name(f"{LOG.name}.{label}-{i}"))
    log("finished", "job", ctx, label)
    return f"done {label}"


def _question(message: str, field: str, kind: str) -> mcp_types.ElicitRequest:
    return mcp_types.ElicitRequest(
        params=mcp_types.ElicitRequestFormParams(
            message=message,
            requested_schema={"type": "object", "properties": {field: {"type": kind}}, "required": [field]},
        )
    )


@server.tool(task=FAST)
async def ask(label: str, ctx: Context) -> str | mcp_types.InputRequiredResult:
    """Ask for a name, then whether to shout it (the name carried in ``request_state``); greet."""
    responses = ctx.input_responses or {}
    log(f"answered {','.join(sorted(responses))}" if responses else "started", "ask", ctx, label)
    if "name" in responses:
        answer = responses["name"]
        assert isinstance(answer, mcp_types.ElicitResult)
        if answer.action != "accept" or not answer.content:
            return f"no name ({answer.action})"
        return mcp_types.InputRequiredResult(
            input_requests={"shout": _question(f"Shout {answer.content['name']}?", "shout", "boolean")},
            request_state=str(answer.content["name"]),
        )
    if "shout" in responses:
        answer = responses["shout"]
        assert isinstance(answer, mcp_types.ElicitResult) and ctx.request_state is not None
        loud = answer.action == "accept" and bool(answer.content and answer.content.get("shout"))
        return f"Hello, {ctx.request_state.upper() if loud else ctx.request_state}!"
    return mcp_types.InputRequiredResult(
        input_requests={"name": _question(f"Your name, for {label}?", "name", "string")}
    )


@server.tool(task=TaskConfig(mode="required", poll_interval=timedelta(milliseconds=50)))
async def must(ctx: Context, label: str = "") -> str:
    """Runs only as a task: a client that does not declare the extension cannot call it."""
    log("started", "must", ctx, label)
    return "ran as a task"


@server.tool(task=FAST)
async def broken(ctx: Context, label: str = "") -> str:
    """Fail as a tool: a result with ``isError``."""
    log("started", "broken", ctx, label)
    raise ToolError("quota exceeded")


@server.tool(task=FAST)
async def faulty(ctx: Context, label: str = "") -> str:
    """Fail as the protocol: a ``failed`` task carrying a JSON-RPC error."""
    log("started", "faulty", ctx, label)
    raise MCPError(code=-32000, message="backend unreachable")


@server.tool(task=FAST)
async def nag(ctx: Context) -> str:
    """Ask the 2025-11-25 way (``ctx.elicit``), which fastmcp-tasks refuses inside a task."""
    answer = await ctx.elicit("Sure?", response_type=bool)
    return f"answered {answer.action}"


@server.tool(task=FAST)
async def stuck(label: str, ctx: Context) -> str:
    """Run until cancelled."""
    log("started", "stuck", ctx, label)
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        log("cancelled", "stuck", ctx, label)
        raise
    return "never"


def serve_http() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    config = uvicorn.Config(server.http_app(path="/mcp"), log_level="warning", lifespan="on")
    http = uvicorn.Server(config)

    async def run() -> None:
        serving = asyncio.create_task(http.serve(sockets=[sock]))
        while not http.started:
            if serving.done():
                await serving
                return
            await asyncio.sleep(0.01)
        print(f"LISTENING {port}", flush=True)
        await serving

    asyncio.run(run())


if __name__ == "__main__":
    if "--http" in sys.argv[1:]:
        serve_http()
    else:
        server.run(show_banner=False)
