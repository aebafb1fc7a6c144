"""A server with the tasks extension (``io.modelcontextprotocol/tasks``, 2026-07-28).

Built on the SDK's server extension API: an ``Extension`` that serves ``tasks/get``,
``tasks/update`` and ``tasks/cancel`` and intercepts ``tools/call``. A call of one of the task
tools, from a client that declared the extension on that request, comes back as a task handle
(``resultType: "task"``); a client that did not declare it gets ``-32021`` for ``job`` and a plain
result for ``maybe_job``.

Tasks are kept in files under ``$TASKS_DIR`` (a temporary folder when unset), one JSON file per
task, and a task's state is a function of that file and the clock: any process of this server
answers for any task, so a client that comes back with a new server process (stdio) finds its
task. Every request about a task is appended to ``$TASKS_DIR/log`` as one JSON line
(``{"event": "created" | "get" | "update" | "cancel", "task": id, ...}``).

Tools:

- ``job(seconds, label="job")``: completes ``seconds`` after creation with ``done <label>``;
  status messages ``step <n>`` while it works.
- ``maybe_job(seconds)``: the same, as a task only for clients that declared the extension.
- ``ask_job(seconds)``: after ``seconds``, needs a name (``input_required``, one form question under
  the key ``name-1``), then completes ``seconds`` after the answer with ``Hello, <name>!`` (or
  ``declined`` / ``cancelled`` for those actions).
- ``broken_job()``: fails with a JSON-RPC error (``-32603 quota exceeded``).
- ``sorry_job()``: completes with an ``isError`` result.
- ``quick(x)``: a plain result, never a task.
- ``stuck_job()``: works until cancelled.
- ``gated_ask(label)``: works until ``$TASKS_DIR/release-<label>`` exists, then asks like
  ``ask_job``.
- ``greedy_ask()``: asks a new question after every answer, for ever (a hostile server).
- ``odd_job()``: answers with a task handle whose ``taskId`` is empty (a broken server).
- ``gated_job(label)``: works until the file ``$TASKS_DIR/release-<label>`` exists, then completes
  with ``done <label>`` (a test decides when).
- ``big_job(size)``: completes with a text result of ``size`` characters.
- ``echo_job(seconds)``: works for ``seconds`` with the status message ``working on <task id>``,
  then fails with an error that names its task id (a server echoing its bearer token).
- ``sample_job()``: asks ``SAMPLES_PER_ROUND`` sampling questions after every answer, for ever.
- ``greedy_sample()`` (no task): asks the client's model again after every answer, for ever: live
  ``sampling/createMessage`` requests on 2025-11-25 (each one logged as ``sampled``), rounds of
  ``SAMPLES_PER_ROUND`` sampling requests on 2026-07-28.

The 2025-11-25 experimental task API is served too (:class:`LegacyTasks`, a server middleware):
the server declares task-augmented ``tools/call`` (``capabilities.tasks.requests.tools.call``), and
a call of ``job``, ``big_job``, ``echo_job``, ``stuck_job`` or ``sampling_job`` with a ``task``
parameter is answered with a ``CreateTaskResult``; ``tasks/get``, ``tasks/result`` and
``tasks/cancel`` follow it, logged like the 2026-07-28 requests (``result`` for ``tasks/result``).
``tasks/result`` waits until the task ends; for ``echo_job`` it is a JSON-RPC error naming the
task id, and for ``sampling_job()`` (2025-11-25 only) it asks the client's model during the
request, again after every answer, for ever (each request logged as ``sampled``).

``job``, ``big_job``, ``echo_job``, ``stuck_job`` and ``sampling_job`` are listed with
``execution.taskSupport: "required"``.

Task status notifications: a ``subscriptions/listen`` whose ``notifications.taskIds`` names tasks
is acknowledged with the ids of those that exist (logged ``listen`` with ``tasks``: how many were
asked, ``honored``: how many agreed), then a ``notifications/tasks`` (the state ``tasks/get``
would answer; logged ``notified``) is sent whenever one of them changes status. With
``TASKS_NOTIFY=0`` the acknowledgement names no task (a server that sends none); with
``TASKS_NOTIFY=refuse`` such a listen is answered with an error (logged ``listen`` with
``refused``). A listen without
``taskIds`` is the SDK's own.
"""

import contextlib
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, cast

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CreateMessageRequest,
    CreateMessageRequestParams,
    InputRequiredResult,
    RequestParams,
    SamplingMessage,
    SubscriptionsListenRequestParams,
    TextContent,
    Tool,
    ToolExecution,
)
from pydantic import BaseModel, ConfigDict, Field

from tests.servers._runner import run_cli

EXTENSION = "io.modelcontextprotocol/tasks"
MISSING_CAPABILITY = -32021
TASK_TOOLS = {
    "greedy_ask",
    "gated_ask",
    "odd_job",
    "job",
    "maybe_job",
    "ask_job",
    "broken_job",
    "sorry_job",
    "stuck_job",
    "gated_job",
    "big_job",
    "echo_job",
    "sample_job",
}
LEGACY_TASK_TOOLS = {"job", "big_job", "echo_job", "stuck_job", "sampling_job"}
"""The tools called as 2025-11-25 tasks (with a ``task`` parameter)."""
REQUIRED = {"job", "big_job", "echo_job", "stuck_job", "sampling_job"}
"""The tools listed with ``execution.taskSupport: "required"``."""
SAMPLES_PER_ROUND = 8
SAMPLES_MAX = 2000
"""A bound for the fixture itself: the most sampling requests one call sends."""
POLL_MS = int(os.environ.get("TASKS_POLL_MS", "50"))


def _folder() -> Path:
    folder = Path(os.environ.get("TASKS_DIR") or tempfile.mkdtemp(prefix="tasks-"))
    folder.mkdir(parents=True, exist_ok=True)
    os.environ["TASKS_DIR"] = str(folder)
    return folder


def _routing(ctx: ServerRequestContext[Any, Any]) -> dict[str, Any]:
    """The ``Mcp-Name`` header of an HTTP request (absent on stdio)."""
    headers = getattr(ctx.request, "headers", None)
    return {"mcp_name": headers.get("mcp-name")} if headers is not None else {}


def log(folder: Path) -> list[dict[str, Any]]:
    """The requests the server of ``folder`` (its ``$TASKS_DIR``) logged, in order."""
    path = folder / "log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _log(event: str, task: str, **extra: Any) -> None:
    with open(_folder() / "log", "a", encoding="utf-8") as log:
        log.write(json.dumps({"event": event, "task": task, "pid": os.getpid(), **extra}) + "\n")


def _path(task_id: str) -> Path:
    if not task_id.isalnum():
        raise MCPError(INVALID_PARAMS, "Failed to retrieve task: Task not found")
    return _folder() / f"{task_id}.json"


def _load(task_id: str) -> dict[str, Any]:
    path = _path(task_id)
    if not path.exists():
        raise MCPError(INVALID_PARAMS, "Failed to retrieve task: Task not found")
    return json.loads(path.read_text(encoding="utf-8"))


def _save(record: dict[str, Any]) -> None:
    path = _path(record["id"])
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record), encoding="utf-8")
    tmp.replace(path)


def _stamp(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at % 1 * 1000):03d}Z"


def _text(text: str, *, error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": error}
    if not error:  # the tools declare an outputSchema ({"result": str})
        result["structuredContent"] = {"result": text}
    return result


def _state(record: dict[str, Any]) -> dict[str, Any]:
    """The task as ``tasks/get`` shows it now."""
    now = time.time()
    seconds = float(record["args"].get("seconds", 0))
    tool = record["tool"]
    base = {
        "taskId": record["id"],
        "createdAt": _stamp(record["created"]),
        "lastUpdatedAt": _stamp(now),
        "ttlMs": 3_600_000,
        "pollIntervalMs": POLL_MS,
    }
    if record.get("cancelled"):
        return {**base, "status": "cancelled", "statusMessage": "cancelled by the client"}
    if tool == "broken_job":
        return {**base, "status": "failed", "error": {"code": -32603, "message": "quota exceeded"}}
    if tool == "sorry_job":
        return {**base, "status": "completed", "result": _text("it went wrong", error=True)}
    if tool == "stuck_job":
        return {**base, "status": "working", "statusMessage": "still stuck"}
    if tool == "big_job":
        return {**base, "status": "completed", "result": _text("x" * int(record["args"].get("size", 0)))}
    if tool == "echo_job":
        if now - record["created"] < seconds:
            return {**base, "status": "working", "statusMessage": f"working on {record['id']}"}
        error = {"code": -32603, "message": f"task {record['id']} failed"}
        return {**base, "status": "failed", "error": error}
    if tool == "sample_job":  # sampling questions after every answer, without end
        asked = int(record.get("answers", 0)) + 1
        requests = {
            f"s-{asked}-{i}": _sampling_request(f"Sample {asked}.{i}?") for i in range(SAMPLES_PER_ROUND)
        }
        return {**base, "status": "input_required", "inputRequests": requests}
    if tool == "gated_job":
        label = str(record["args"].get("label", ""))
        if not (_folder() / f"release-{label}").exists():
            return {**base, "status": "working", "statusMessage": "waiting for the gate"}
        return {**base, "status": "completed", "result": _text(f"done {label}")}
    elapsed = now - record["created"]
    if tool == "greedy_ask":  # a new question after every answer, without end
        asked = int(record.get("answers", 0)) + 1
        question = {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": f"Question {asked}?",
                "requestedSchema": {"type": "object", "properties": {}},
            },
        }
        return {**base, "status": "input_required", "inputRequests": {f"q-{asked}": question}}
    if tool == "gated_ask":  # asks once its gate is open (``release-<label>``)
        if (
            record.get("answer") is None
            and not (_folder() / f"release-{record['args'].get('label')}").exists()
        ):
            return {**base, "status": "working", "statusMessage": "waiting for the gate"}
        record = {**record, "tool": "ask_job", "args": {"seconds": 0}}
        record.setdefault("answered", record["created"])
    if record["tool"] == "ask_job":
        answer = record.get("answer")
        if answer is None:
            if elapsed < seconds:
                return {**base, "status": "working", "statusMessage": "warming up"}
            question = {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "What is your name?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}},
                        "required": ["name"],
                    },
                },
            }
            return {**base, "status": "input_required", "inputRequests": {"name-1": question}}
        if now - record["answered"] < seconds:
            return {**base, "status": "working", "statusMessage": "greeting"}
        if answer.get("action") != "accept":
            return {**base, "status": "completed", "result": _text(str(answer.get("action")))}
        name = (answer.get("content") or {}).get("name")
        return {**base, "status": "completed", "result": _text(f"Hello, {name}!")}
    if elapsed < seconds:
        step = int(elapsed / max(seconds, 1e-9) * 3) + 1
        return {**base, "status": "working", "statusMessage": f"step {step}"}
    return {**base, "status": "completed", "result": _text(f"done {record['args'].get('label', 'job')}")}


def _sampling_request(text: str) -> dict[str, Any]:
    return {
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
            "maxTokens": 10,
        },
    }


def _declared(ctx: ServerRequestContext[Any, Any]) -> bool:
    capabilities = ctx.session.client_capabilities
    extensions = capabilities.extensions if capabilities is not None else None
    return bool(extensions) and EXTENSION in extensions


class TaskParams(RequestParams):
    task_id: str
    input_responses: dict[str, Any] | None = None


def _refuse_undeclared(ctx: ServerRequestContext[Any, Any]) -> None:
    if not _declared(ctx):
        raise MCPError(
            MISSING_CAPABILITY,
            "Missing required client capability",
            {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
        )


async def _get(ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
    _refuse_undeclared(ctx)
    record = _load(params.task_id)
    state = _state(record)
    _log("get", params.task_id, status=state["status"], **_routing(ctx))
    return state


async def _update(ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
    _refuse_undeclared(ctx)
    record = _load(params.task_id)
    responses = params.input_responses or {}
    _log("update", params.task_id, keys=sorted(responses), **_routing(ctx))
    if record["tool"] == "greedy_ask" and f"q-{int(record.get('answers', 0)) + 1}" in responses:
        record["answers"] = int(record.get("answers", 0)) + 1
        _save(record)
    if record["tool"] == "sample_job" and f"s-{int(record.get('answers', 0)) + 1}-0" in responses:
        record["answers"] = int(record.get("answers", 0)) + 1
        _save(record)
    if record["tool"] in ("ask_job", "gated_ask") and record.get("answer") is None and "name-1" in responses:
        record["answer"] = responses["name-1"]
        record["answered"] = time.time()
        _save(record)
    return {}


async def _cancel(ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
    _refuse_undeclared(ctx)
    record = _load(params.task_id)
    _log("cancel", params.task_id, **_routing(ctx))
    record["cancelled"] = True
    _save(record)
    return {}


class Tasks(Extension):
    identifier = EXTENSION

    def methods(self) -> list[MethodBinding]:
        return [
            MethodBinding("tasks/get", TaskParams, _get),
            MethodBinding("tasks/update", TaskParams, _update),
            MethodBinding("tasks/cancel", TaskParams, _cancel),
        ]

    async def intercept_tool_call(
        self, params: CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if params.name not in TASK_TOOLS:
            return await call_next(ctx)
        if params.name == "odd_job":
            now = _stamp(time.time())
            return {
                "resultType": "task",
                "taskId": "",
                "status": "working",
                "createdAt": now,
                "lastUpdatedAt": now,
                "ttlMs": None,
            }
        if not _declared(ctx):
            if params.name == "maybe_job":
                return await call_next(ctx)
            raise MCPError(
                MISSING_CAPABILITY,
                "Missing required client capability",
                {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
            )
        record = {
            "id": uuid.uuid4().hex,
            "tool": params.name,
            "args": params.arguments or {},
            "created": time.time(),
        }
        _save(record)
        _log("created", record["id"], tool=params.name, args=record["args"])
        return {"resultType": "task", **_state(record)}


# -- the 2025-11-25 experimental task API ----------------------------------------------------------


def _legacy_task(record: dict[str, Any]) -> dict[str, Any]:
    """The task as a 2025-11-25 ``Task`` (``tasks/get``, ``CreateTaskResult.task``)."""
    state = _state(record)
    task = {
        "taskId": state["taskId"],
        "status": state["status"],
        "createdAt": state["createdAt"],
        "lastUpdatedAt": state["lastUpdatedAt"],
        "ttl": state["ttlMs"],
        "pollInterval": POLL_MS,
    }
    if record["tool"] == "sampling_job":  # its work is done during tasks/result
        task["status"] = "cancelled" if record.get("cancelled") else "input_required"
    if state.get("statusMessage"):
        task["statusMessage"] = state["statusMessage"]
    return task


async def _legacy_result(ctx: ServerRequestContext[Any, Any], task_id: str) -> HandlerResult:
    record = _load(task_id)
    if record["tool"] == "sampling_job":
        question = SamplingMessage(role="user", content=TextContent(type="text", text="And now?"))
        for _ in range(SAMPLES_MAX):
            _log("sampled", task_id)
            with contextlib.suppress(MCPError):  # asks again all the same (a hostile server)
                await ctx.session.create_message([question], max_tokens=10, related_request_id=ctx.request_id)
        return _text("sampled enough")
    while True:  # the state is a function of a file and the clock: looked at every poll interval
        state = _state(_load(task_id))
        if state["status"] not in ("working", "input_required"):
            break
        await anyio.sleep(POLL_MS / 1000)
    if state["status"] == "failed":
        raise MCPError(state["error"]["code"], state["error"]["message"])
    if state["status"] == "cancelled":
        raise MCPError(INVALID_PARAMS, "the task was cancelled")
    return dict(state["result"])


class LegacyTasks:
    """A server middleware serving the 2025-11-25 experimental task API (see the module
    docstring); 2026-07-28 requests pass through."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        method, params = ctx.method, dict(ctx.params or {})
        if method == "initialize":  # only 2025-11-25 clients send it
            result = await call_next(ctx)
            if isinstance(result, dict):
                result["capabilities"]["tasks"] = {"requests": {"tools": {"call": {}}}, "cancel": {}}
            return result
        if ctx.protocol_version == "2026-07-28" or ctx.request_id is None:
            return await call_next(ctx)
        if method == "tools/call" and params.get("task") is not None:
            name = params.get("name")
            if name not in LEGACY_TASK_TOOLS:
                raise MCPError(INVALID_PARAMS, f"{name} does not run as a task")
            record = {
                "id": uuid.uuid4().hex,
                "tool": name,
                "args": params.get("arguments") or {},
                "created": time.time(),
            }
            _save(record)
            _log("created", record["id"], tool=name, args=record["args"], era="2025-11-25")
            return {"task": _legacy_task(record)}
        if method in ("tasks/get", "tasks/result", "tasks/cancel"):
            task_id = str(params.get("taskId", ""))
            record = _load(task_id)
            if method == "tasks/get":
                task = _legacy_task(record)
                _log("get", task_id, status=task["status"])
                return task
            if method == "tasks/cancel":
                _log("cancel", task_id)
                record["cancelled"] = True
                _save(record)
                return _legacy_task(record)
            _log("result", task_id)
            return await _legacy_result(ctx, task_id)
        return await call_next(ctx)


def _greedy_round(ctx: Context) -> InputRequiredResult:
    asked = int(ctx.request_state or 0) + 1
    requests = {
        f"s-{asked}-{i}": CreateMessageRequest(
            params=CreateMessageRequestParams.model_validate(
                _sampling_request(f"Sample {asked}.{i}?")["params"]
            )
        )
        for i in range(SAMPLES_PER_ROUND)
    }
    _log("sampled", "-", count=SAMPLES_PER_ROUND)
    return InputRequiredResult(input_requests=requests, request_state=str(asked))


class _Notification(BaseModel):
    """Any notification: what ``ServerSession.send_notification`` needs."""

    method: str
    params: dict[str, Any] | None = None


class ListenParams(RequestParams):
    model_config = ConfigDict(extra="allow")
    notifications: dict[str, Any] = Field(default_factory=dict)


SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


def _serve_listen(srv: MCPServer) -> None:
    """``subscriptions/listen`` with ``taskIds`` served here; without, by the SDK's handler."""
    lowlevel = srv._lowlevel_server
    sdk_listen = lowlevel.get_request_handler("subscriptions/listen")
    assert sdk_listen is not None

    async def notify(ctx: ServerRequestContext[Any, Any], method: str, params: dict[str, Any]) -> None:
        note = cast(Any, _Notification(method=method, params=params))
        await ctx.session.send_notification(note, related_request_id=ctx.request_id)

    async def listen(ctx: ServerRequestContext[Any, Any], params: ListenParams) -> HandlerResult:
        asked = params.notifications.get("taskIds")
        if not isinstance(asked, list):
            sdk_params = SubscriptionsListenRequestParams.model_validate(params.model_dump(by_alias=True))
            return await sdk_listen.handler(ctx, sdk_params)
        _refuse_undeclared(ctx)
        if os.environ.get("TASKS_NOTIFY") == "refuse":
            _log("listen", "-", tasks=len(asked), refused=True)
            raise MCPError(INVALID_PARAMS, "taskIds are not supported here")
        meta = {SUBSCRIPTION_ID: ctx.request_id}
        honored = []
        if os.environ.get("TASKS_NOTIFY", "1") != "0":
            honored = [t for t in asked if isinstance(t, str) and t.isalnum() and _path(t).exists()]
        headers = getattr(ctx.request, "headers", None)
        replica = headers.get("x-replica") if headers is not None else None
        _log(
            "listen", "-", tasks=len(asked), honored=len(honored), **({"replica": replica} if replica else {})
        )
        last = {task_id: _state(_load(task_id))["status"] for task_id in honored}
        await notify(
            ctx,
            "notifications/subscriptions/acknowledged",
            {"notifications": {"taskIds": honored}, "_meta": meta},
        )
        while last:
            await anyio.sleep(0.05)
            for task_id in list(last):
                state = _state(_load(task_id))
                if state["status"] != last[task_id]:
                    last[task_id] = state["status"]
                    _log("notified", task_id, status=state["status"])
                    await notify(ctx, "notifications/tasks", {**state, "_meta": meta})
                if state["status"] in ("completed", "failed", "cancelled"):
                    del last[task_id]
        await anyio.sleep_forever()  # open until the client ends it
        return {}

    lowlevel.add_request_handler("subscriptions/listen", ListenParams, listen)


class _TaskServer(MCPServer):
    async def list_tools(self) -> list[Tool]:
        tools = await super().list_tools()
        for tool in tools:
            if tool.name in REQUIRED:
                tool.execution = ToolExecution(task_support="required")
        return tools


def build_server(name: str = "tasks") -> MCPServer:
    srv: MCPServer = _TaskServer(name, extensions=[Tasks()], middleware=[LegacyTasks()])
    _serve_listen(srv)

    @srv.tool()
    async def job(seconds: float, label: str = "job") -> str:
        """A job that takes ``seconds``; runs as a task."""
        raise AssertionError("runs as a task")

    @srv.tool()
    async def maybe_job(seconds: float) -> str:
        """A job that runs as a task where the client can follow one."""
        return "done inline"

    @srv.tool()
    async def ask_job(seconds: float) -> str:
        """A job that asks for a name along the way."""
        raise AssertionError("runs as a task")

    @srv.tool()
    async def broken_job() -> str:
        """A job that fails with a protocol error."""
        raise AssertionError("runs as a task")

    @srv.tool()
    async def sorry_job() -> str:
        """A job whose result is an error."""
        raise AssertionError("runs as a task")

    @srv.tool()
    async def stuck_job() -> str:
        """A job that works until it is cancelled."""
        raise AssertionError("runs as a task")

    @srv.tool()
    async def gated_job(label: str) -> str:
        """A job that waits for its gate."""
        raise AssertionError("runs as a task")

    @srv.tool()
    async def greedy_ask() -> str:
        """A job that never stops asking."""
        raise AssertionError("runs as a task")

    @srv.tool()
    async def gated_ask(label: str) -> str:
        """A job that asks for a name once its gate opens."""
        raise AssertionError("runs as a task")

    @srv.tool()
    async def odd_job() -> str:
        """A job whose task handle is broken."""
        raise AssertionError("answered by the extension")

    @srv.tool()
    async def big_job(size: int) -> str:
        """A job whose result is ``size`` characters long."""
        raise AssertionError("runs as a task")

    @srv.tool()
    async def echo_job(seconds: float) -> str:
        """A job that names its task id in what it says."""
        raise AssertionError("runs as a task")

    @srv.tool()
    async def sample_job() -> str:
        """A job that asks the client's model again and again."""
        raise AssertionError("runs as a task")

    @srv.tool()
    async def sampling_job() -> str:
        """A 2025-11-25 job that asks the client's model again and again while its result is fetched."""
        raise AssertionError("runs as a task")

    @srv.tool()
    async def greedy_sample(ctx: Context) -> str | InputRequiredResult:
        """Ask the client's model again after every answer, for ever."""
        if ctx.protocol_version == "2026-07-28":
            return _greedy_round(ctx)
        question = SamplingMessage(role="user", content=TextContent(type="text", text="And now?"))
        for _ in range(SAMPLES_MAX):
            _log("sampled", "-", count=1)
            with contextlib.suppress(MCPError):  # asks again all the same (a hostile server)
                await ctx.session.create_message([question], max_tokens=10, related_request_id=ctx.request_id)
        return "sampled enough"

    @srv.tool()
    async def quick(x: int) -> str:
        """A plain tool."""
        return f"quick {x}"

    return srv


if __name__ == "__main__":
    run_cli(build_server)
