"""Helpers shared by the tests (plain functions, not fixtures)."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END
from langgraph.runtime import Runtime
from langgraph.types import Send

from langgraph_mcp import MCPPool, MCPTool, load_mcp_tools
from tests.forkserver import command


def runtime_config() -> RunnableConfig:
    """Config that lets a ToolNode run outside a graph."""
    return {"configurable": {"__pregel_runtime": Runtime()}}


def tool_call(name: str, args: dict[str, Any] | None = None, call_id: str = "call_1") -> dict[str, Any]:
    return {"name": name, "args": args or {}, "id": call_id, "type": "tool_call"}


async def call(tool: MCPTool, args: dict[str, Any] | None = None, call_id: str = "call_1") -> ToolMessage:
    result = await tool.ainvoke(tool_call(tool.name, args, call_id))
    assert isinstance(result, ToolMessage)
    return result


async def tools_by_name(pool: MCPPool) -> dict[str, MCPTool]:
    return {t.name: t for t in await load_mcp_tools(pool)}


async def server_stats(pool: MCPPool, server: str = "demo") -> dict[str, int]:
    """The demo server's own counters: its PID, handshakes and tools/call requests seen."""
    result = await pool.connection(server).call_tool("stats", {})
    assert result.structured_content is not None, result
    return dict(result.structured_content)


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def spawned_pids(pid_dir: Path) -> list[int]:
    return sorted(int(p.name) for p in pid_dir.iterdir())


def json_content(message: ToolMessage) -> Any:
    assert isinstance(message.content, str)
    return json.loads(message.content)


def send_per_call(state: dict[str, Any]) -> list[Send] | str:
    """Route each tool call of the last message to the ``tools`` node as its own task."""
    calls = state["messages"][-1].tool_calls
    return [Send("tools", [{**c, "type": "tool_call"}]) for c in calls] or END


def ai(*calls: tuple[str, dict[str, Any], str]) -> Any:
    """An ``AIMessage`` asking for ``(name, args, id)`` tool calls."""
    from langchain_core.messages import AIMessage

    return AIMessage("", tool_calls=[{"name": n, "args": a, "id": i} for n, a, i in calls])


def tool_graph(node: Any, *, checkpointer: Any = None, send: bool = False, retry: Any = None) -> Any:
    """``START -> tools`` (or ``START -> agent -Send per call-> tools``) over ``MessagesState``."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, MessagesState, StateGraph

    builder = StateGraph(MessagesState)
    builder.add_node(node, retry_policy=retry)
    if send:
        builder.add_node("agent", lambda s: {})
        builder.add_edge(START, "agent")
        builder.add_conditional_edges("agent", send_per_call, ["tools", END])
    else:
        builder.add_edge(START, "tools")
    return builder.compile(checkpointer=checkpointer if checkpointer is not None else InMemorySaver())


def tool_results(out: dict[str, Any]) -> dict[str, Any]:
    """``{tool_call_id: content}`` of the tool messages in a graph output."""
    return {m.tool_call_id: m.content for m in out["messages"] if isinstance(m, ToolMessage)}


def thread(name: str = "t1") -> RunnableConfig:
    return {"configurable": {"thread_id": name}}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


GRAPH_RUNNER = Path(__file__).with_name("graph_runner.py")


def run_script(script: Path, *args: str) -> dict[str, Any]:
    """Run a runner script of ``tests/`` in a new OS process (forked from the warm interpreter);
    the JSON object on the last line it printed."""
    import subprocess

    done = subprocess.run(
        command(str(script), *args),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=script.parents[1],
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def run_phase(scenario: str, phase: str, *args: str) -> dict[str, Any]:
    """Run one phase of a ``tests/graph_runner.py`` scenario in a new OS process; its JSON line."""
    return run_script(GRAPH_RUNNER, scenario, phase, *args)


def gated_demo(tmp_path: Path, **restart: Any) -> tuple[dict[str, Any], Path, Path]:
    """A stdio server entry (with ``restart`` policy) that counts its starts in ``starts`` and
    exits at once unless ``ready`` exists, in which case it runs the demo server: a server that
    is down until the test brings it up. Returns ``(config, starts, ready)``."""
    from tests.conftest_servers import stdio_params
    from tests.forkserver import command

    starts, ready = tmp_path / "starts", tmp_path / "ready"
    script = (
        "import os, runpy, sys\n"
        f"open({str(starts)!r}, 'a').write('x')\n"
        f"if not os.path.exists({str(ready)!r}):\n"
        "    sys.exit(3)\n"
        "sys.argv = ['demo']\n"
        "runpy.run_module('tests.servers.demo', run_name='__main__')\n"
    )
    # A script file, not ``-c``: the fork server runs it (milliseconds to start, where a new
    # interpreter would spend a second importing the demo server's dependencies on each start).
    gate = tmp_path / "gated_demo.py"
    gate.write_text(script)
    executable, *argv = command(str(gate))
    config = {**stdio_params("demo"), "command": executable, "args": argv, "restart": restart}
    return config, starts, ready


async def until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    """Wait until ``condition()`` holds (checked every 20 ms), at most ``timeout`` seconds."""
    import asyncio
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for a condition"
        await asyncio.sleep(0.02)


SERVER_SIDE_LOGGERS = ("mcp.server", "sse_starlette", "uvicorn", "starlette")
"""Loggers of fixture servers that run in the test's own process (their records are theirs)."""


def record_texts(records: Iterable[logging.LogRecord], *, skip: tuple[str, ...] = ()) -> list[str]:
    """Every text of each record (message, arguments, traceback), but those of loggers whose
    names start with one of ``skip``."""
    return [
        text
        for record in records
        if not record.name.startswith(skip)
        for text in (
            record.getMessage(),
            repr(record.args),
            logging.Formatter().formatException(record.exc_info) if record.exc_info else "",
            record.exc_text or "",
        )
    ]


def text_of(message: ToolMessage) -> str:
    """A ``ToolMessage``'s text: its string content, or its text blocks joined by newlines."""
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text")


async def answer_rounds(
    graph: Any, out: dict[str, Any], answer: Callable[[dict[str, Any]], Any], config: RunnableConfig
) -> tuple[dict[str, Any], list[list[tuple[str, str]]]]:
    """Answer the server's questions with ``answer`` until none is pending (at most four
    rounds): the last output, and each round's sorted ``(tool_call_id, first message)`` pairs."""
    from langgraph_mcp.elicitation import resume_elicitations

    asked: list[list[tuple[str, str]]] = []
    for _ in range(4):
        pending = out.get("__interrupt__")
        if not pending:
            break
        asked.append(sorted((i.value["tool_call_id"], i.value["requests"][0]["message"]) for i in pending))
        out = await graph.ainvoke(resume_elicitations(pending, answer), config)
    return out, asked


@functools.cache
def _validator(schema: str) -> Any:
    import jsonschema

    from langgraph_mcp.schemas import json_schema

    return jsonschema.Draft202012Validator(json_schema(schema))


def check(schema: str, value: Any) -> None:
    """``value``, sent through JSON, fits the published JSON Schema named ``schema``."""
    _validator(schema).validate(json.loads(json.dumps(value)))


def fill(template: str, **values: str) -> Any:
    """The JSON text ``template``, its ``$name`` placeholders filled in (a question's key, an
    interrupt id), parsed: a value as a client in another language writes it."""
    from string import Template

    return json.loads(Template(template).substitute(values))
