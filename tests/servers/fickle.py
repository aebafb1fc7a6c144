"""Fixture server whose questions and answers change between calls.

Era-agnostic unless noted. Its tools exercise what a client must not get wrong when a call is
re-issued or replayed:

- ``delete_target``: asks ``Really delete <target>?``; the target is read when the question is
  asked (``$FICKLE_TARGET_FILE`` in process mode, ``FickleState.target`` in-process), so a
  re-issued call may ask a different question.
- ``url_twice``: refuses with ``-32042`` (URL elicitation required) for URL ``a``, then, when sent
  again, for a different URL ``b``; the third attempt succeeds.
- ``poll``: 2026-07-28 only, ``n`` state-only ``InputRequiredResult`` rounds (no questions, just a
  ``request_state`` to send back), then ``polled <n>``. The arrival time of every poll (event
  loop clock) is recorded.
- ``sample_then_confirm``: samples the client's model, then asks to publish what it wrote (two
  rounds on 2026-07-28).
- ``upstream_timeout``: answers with the server's own JSON-RPC error ``-32001``.

Environment variables read by the running process: ``FICKLE_TARGET_FILE`` (see above) and
``FICKLE_LOG`` (one line per ``tools/call`` received, as ``tests.servers.asker.call_log_line``).
"""

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio
from mcp.server.mcpserver import (
    AcceptedElicitation,
    Context,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
    Sample,
)
from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError
from mcp_types import (
    CreateMessageResult,
    ElicitRequestURLParams,
    InputRequiredResult,
    SamplingMessage,
    TextContent,
)

from tests.servers._runner import run_cli
from tests.servers.asker import CallsLogMiddleware, Confirm

MODERN = "2026-07-28"
URLS = {
    "a": "https://auth.example.com/step-a",
    "b": "https://auth.example.com/step-b",
}
SERVER_TIMEOUT_CODE = -32001
SERVER_TIMEOUT_MESSAGE = "upstream service timed out"


@dataclass
class FickleState:
    """Server-side state; in process mode ``target`` comes from ``$FICKLE_TARGET_FILE``."""

    default_target: str = "invoice-2024.pdf"
    url_attempts: int = 0
    poll_times: list[float] = field(default_factory=list)

    def target(self) -> str:
        path = os.environ.get("FICKLE_TARGET_FILE")
        if path and Path(path).exists():
            return Path(path).read_text(encoding="utf-8").strip()
        return self.default_target


STATE = FickleState()


def _text(result: CreateMessageResult) -> str:
    content: Any = result.content
    blocks = content if isinstance(content, list) else [content]
    return "".join(b.text for b in blocks if isinstance(b, TextContent))


# --- resolvers (module level: stable input_requests keys) ---


async def ask_target() -> Elicit[Confirm]:
    return Elicit(f"Really delete {STATE.target()}?", Confirm)


async def ask_sample(topic: str) -> Sample:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=f"Write about {topic}"))
    return Sample([message], max_tokens=50)


async def ask_publish(
    topic: str, draft: Annotated[CreateMessageResult, Resolve(ask_sample)]
) -> Elicit[Confirm]:
    return Elicit(f"Publish {_text(draft)!r}?", Confirm)


def build_server(
    name: str = "fickle", state: FickleState | None = None, calls_log: list[str] | None = None
) -> MCPServer:
    """Build the server around ``state`` (the module's ``STATE`` by default)."""
    global STATE
    if state is not None:
        STATE = state
    log_file = os.environ.get("FICKLE_LOG")
    middleware: list[Any] = []
    if calls_log is not None or log_file:
        middleware.append(CallsLogMiddleware(calls_log, log_file))
    srv: MCPServer = MCPServer(name, middleware=middleware)

    @srv.tool()
    async def delete_target(answer: Annotated[ElicitationResult[Confirm], Resolve(ask_target)]) -> str:
        """Ask ``Really delete <target>?`` and report what happened to the current target."""
        if isinstance(answer, AcceptedElicitation):
            return f"deleted {STATE.target()}" if answer.data.ok else f"kept {STATE.target()}"
        return answer.action

    @srv.tool()
    def url_twice() -> str:
        """Need URL ``a``, then (sent again) URL ``b``, then succeed."""
        STATE.url_attempts += 1
        if STATE.url_attempts <= len(URLS):
            key = "ab"[STATE.url_attempts - 1]
            raise UrlElicitationRequiredError(
                [ElicitRequestURLParams(message=f"Authorize step {key}", url=URLS[key], elicitation_id=key)]
            )
        return "authorized twice"

    @srv.tool()
    async def poll(n: int, ctx: Context) -> str | InputRequiredResult:
        """``n`` state-only rounds, then ``polled <n>`` (2026-07-28 only)."""
        STATE.poll_times.append(anyio.current_time())
        if ctx.protocol_version != MODERN:
            return "polling needs 2026-07-28"
        done = int(ctx.request_state or "0")
        if done < n:
            return InputRequiredResult(request_state=str(done + 1))
        return f"polled {n}"

    @srv.tool()
    async def sample_then_confirm(
        topic: str,
        draft: Annotated[CreateMessageResult, Resolve(ask_sample)],
        answer: Annotated[ElicitationResult[Confirm], Resolve(ask_publish)],
    ) -> str:
        """Sample a draft about ``topic``, then ask whether to publish it."""
        if isinstance(answer, AcceptedElicitation) and answer.data.ok:
            return f"published {_text(draft)}"
        return "not published"

    @srv.tool()
    def upstream_timeout() -> str:
        """Fail with the server's own ``-32001`` JSON-RPC error."""
        raise MCPError(SERVER_TIMEOUT_CODE, SERVER_TIMEOUT_MESSAGE)

    @srv.tool()
    def poll_count() -> int:
        """How many ``poll`` requests this process received."""
        return len(STATE.poll_times)

    return srv


def main() -> None:
    from tests.servers import fickle

    run_cli(lambda: fickle.build_server(), description=__doc__)


if __name__ == "__main__":
    main()
