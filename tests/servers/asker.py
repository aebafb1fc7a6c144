"""Fixture server whose tools ask the client for input: elicitation (form and URL), sampling, roots.

Era-agnostic: on 2025-11-25 connections the questions are live ``elicitation/create`` /
``sampling/createMessage`` / ``roots/list`` requests sent mid-call; on 2026-07-28 they come back
as ``InputRequiredResult`` rounds (``Resolve``/``Elicit``). The resolvers live at module level so
the ``input_requests`` keys are ``tests.servers.asker:<resolver>`` both in-process and when run
with ``python -m tests.servers.asker`` (``main`` builds from the imported module, not ``__main__``).

Environment variables read by the running process:
- ``ASKER_STATE_KEY``: seal ``request_state`` with a key derived from this value (ttl 3600 s), so
  a state minted before a restart still verifies; unset = the SDK's per-process ephemeral key.
- ``ASKER_LOG``: append one line per ``tools/call`` request received (see ``CallsLogMiddleware``).
"""

import hashlib
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.mcpserver import (
    AcceptedElicitation,
    Context,
    Elicit,
    ElicitationResult,
    ListRoots,
    MCPServer,
    RequestStateSecurity,
    Resolve,
    Sample,
)
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp_types import (
    CreateMessageResult,
    CreateMessageResultWithTools,
    ElicitRequest,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequiredResult,
    ListRootsResult,
    SamplingMessage,
    TextContent,
    Tool,
    ToolChoice,
    ToolResultContent,
    ToolUseContent,
)
from pydantic import BaseModel, WithJsonSchema

from tests.servers._runner import run_cli
from tests.servers.demo import COUNTERS, Counters

STATE_TTL = 3600.0
LOGIN_URL = "https://auth.example.com/login?session=abc"
LOGIN_MESSAGE = "Sign in to continue"
LOGIN_ELICITATION_ID = "login-abc"
LOGIN_KEY = "login"  # the input_requests key of the hand-rolled 2026 URL round
INPUT_REQUIRED_VERSION = "2026-07-28"
SLOW_CONFIRM_DELAY = 0.5

Plan = Literal["basic", "pro", "team"]
PLAN_TITLES: dict[str, str] = {"basic": "Basic plan", "pro": "Pro plan", "team": "Team plan"}
# The SDK renders a Literal as an untitled enum; a titled single-select (oneOf const/title, a valid
# ``TitledSingleSelectEnumSchema``) needs an explicit JSON schema. Validation still uses the Literal.
TITLED_PLAN_SCHEMA: dict[str, Any] = {
    "type": "string",
    "title": "Plan",
    "oneOf": [{"const": value, "title": title} for value, title in PLAN_TITLES.items()],
    "default": "basic",
}


class Confirm(BaseModel):
    ok: bool
    note: str = ""


class Dates(BaseModel):
    start: str
    nights: int = 1


class Options(BaseModel):
    color: Literal["red", "green", "blue"]
    plan: Annotated[Plan, WithJsonSchema(TITLED_PLAN_SCHEMA)] = "basic"
    toppings: list[Literal["cheese", "ham", "olives"]] = []
    size: int = 2
    urgent: bool = False


def state_security(state_key: str) -> RequestStateSecurity:
    """A durable ``request_state`` policy: AES key material = sha256 hex of ``state_key`` (64 bytes)."""
    secret = hashlib.sha256(state_key.encode()).hexdigest()
    return RequestStateSecurity(keys=[secret], ttl=STATE_TTL)


def call_log_line(params: Any) -> str:
    """``<tool name> rs=<yes|no> ir=<comma-separated input_responses keys or ->`` for raw params."""
    p: dict[str, Any] = dict(params) if isinstance(params, dict) else {}
    responses = p.get("inputResponses")
    keys = ",".join(sorted(responses)) if isinstance(responses, dict) and responses else "-"
    rs = "yes" if p.get("requestState") is not None else "no"
    return f"{p.get('name', '?')} rs={rs} ir={keys}"


@dataclass
class CallsLogMiddleware:
    """Record every ``tools/call`` request as one ``call_log_line`` (into a list and/or a file).

    User middleware runs inside the SDK's ``RequestStateBoundary``, so ``requestState`` here is
    already unsealed; only its presence is logged.
    """

    calls_log: list[str] | None = None
    log_file: str | None = None

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.request_id is not None and ctx.method == "tools/call":
            params = dict(ctx.params) if ctx.params is not None else {}
            line = call_log_line(params)
            if self.calls_log is not None:
                self.calls_log.append(line)
            if self.log_file:
                with open(self.log_file, "a", encoding="utf-8") as f:
                    f.write(line + "\n")
        return await call_next(ctx)


def outcome_text(item: str, answer: ElicitationResult[Confirm]) -> str:
    """``deleted {item} ({note})`` / ``kept {item}`` / ``declined`` / ``cancelled``."""
    if isinstance(answer, AcceptedElicitation):
        return f"deleted {item} ({answer.data.note})" if answer.data.ok else f"kept {item}"
    return "declined" if answer.action == "decline" else "cancelled"


# --- resolvers (module level: stable input_requests keys) ---


async def ask_delete(item: str) -> Elicit[Confirm]:
    return Elicit(f"Really delete {item}?", Confirm)


async def ask_dates(city: str) -> Elicit[Dates]:
    return Elicit(f"Which dates for {city}?", Dates)


async def ask_booking(
    city: str, dates: Annotated[ElicitationResult[Dates], Resolve(ask_dates)]
) -> Elicit[Confirm] | Confirm:
    """Round 2, asked only once the dates are known; no dates (declined/cancelled) = no question."""
    if not isinstance(dates, AcceptedElicitation):
        return Confirm(ok=False, note=f"dates {dates.action}")
    return Elicit(f"Book {dates.data.nights} nights from {dates.data.start} in {city}?", Confirm)


async def ask_options() -> Elicit[Options]:
    return Elicit("Pick your options", Options)


async def ask_summary(text: str) -> Sample:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarize: {text}"))
    return Sample([message], max_tokens=50)


WEATHER = Tool(
    name="weather",
    description="The current weather in a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
"""The tool the ``forecast`` tool offers the client's model while sampling."""
ToolChoiceMode = Literal["auto", "required", "none"]
BadSampling = Literal["schema", "name", "tool_use_from_user"]


def weather_report(arguments: dict[str, Any]) -> str:
    """What the server's ``weather`` tool answers."""
    return f"sunny, 21 C in {arguments.get('city')}"


def _forecast_question(city: str) -> SamplingMessage:
    return SamplingMessage(
        role="user", content=TextContent(type="text", text=f"What is the weather in {city}?")
    )


async def ask_forecast(city: str, choice: ToolChoiceMode) -> Sample:
    """Sample with the ``weather`` tool offered under ``toolChoice: {mode: choice}``."""
    return Sample(
        [_forecast_question(city)], max_tokens=100, tools=[WEATHER], tool_choice=ToolChoice(mode=choice)
    )


async def ask_forecast_again(
    city: str, first: Annotated[CreateMessageResultWithTools, Resolve(ask_forecast)]
) -> Sample | CreateMessageResultWithTools:
    """The server's tool loop: run the tools the model called, and sample again with their results
    (the model's first answer as it is, when it called none)."""
    uses = [block for block in first.content_as_list if isinstance(block, ToolUseContent)]
    if not uses:
        return first
    results: list[Any] = [
        ToolResultContent(
            tool_use_id=use.id, content=[TextContent(type="text", text=weather_report(use.input))]
        )
        for use in uses
    ]
    messages = [
        _forecast_question(city),
        SamplingMessage(role="assistant", content=first.content_as_list),
        SamplingMessage(role="user", content=results),
    ]
    return Sample(messages, max_tokens=100, tools=[WEATHER])


async def ask_badly(kind: BadSampling) -> Sample:
    """A sampling request whose tools or content are malformed."""
    question = SamplingMessage(role="user", content=TextContent(type="text", text="Weather?"))
    if kind == "schema":
        schema = {"type": "object", "properties": {"city": {"$ref": "#/$defs/missing"}}}
        return Sample([question], max_tokens=10, tools=[WEATHER.model_copy(update={"input_schema": schema})])
    if kind == "name":
        return Sample(
            [question], max_tokens=10, tools=[WEATHER.model_copy(update={"name": "no spaces allowed"})]
        )
    use = ToolUseContent(type="tool_use", name="weather", id="t1", input={"city": "Oslo"})
    answer = SamplingMessage(role="assistant", content=TextContent(type="text", text="Which city?"))
    return Sample(
        [SamplingMessage(role="user", content=[use]), answer, question], max_tokens=10, tools=[WEATHER]
    )


def sampled_dump(result: CreateMessageResult | CreateMessageResultWithTools) -> dict[str, Any]:
    """A sampling answer as the server received it (wire JSON)."""
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def ask_roots() -> ListRoots:
    return ListRoots()


async def ask_slow(item: str) -> Elicit[Confirm]:
    await anyio.sleep(SLOW_CONFIRM_DELAY)
    return Elicit(f"Confirm {item}?", Confirm)


def _login_params() -> ElicitRequestURLParams:
    return ElicitRequestURLParams(
        mode="url", message=LOGIN_MESSAGE, url=LOGIN_URL, elicitation_id=LOGIN_ELICITATION_ID
    )


def _sampled_text(result: CreateMessageResult) -> str:
    content: Any = result.content
    blocks = content if isinstance(content, list) else [content]
    return "".join(b.text for b in blocks if isinstance(b, TextContent))


def build_server(
    name: str = "asker",
    counters: Counters | None = None,
    *,
    state_key: str | None = None,
    calls_log: list[str] | None = None,
    log_file: str | None = None,
) -> MCPServer:
    """Build the asker server. Without ``counters`` it resets and counts into ``COUNTERS``.

    ``state_key`` makes ``request_state`` survive restarts; ``calls_log`` / ``log_file`` receive
    one ``call_log_line`` per ``tools/call`` request.
    """
    if counters is None:
        counters = COUNTERS
        counters.reset()
    middleware: list[ServerMiddleware[Any]] = [counters.middleware()]
    if calls_log is not None or log_file:
        middleware.append(CallsLogMiddleware(calls_log, log_file))
    security = state_security(state_key) if state_key else None
    srv: MCPServer = MCPServer(name, middleware=middleware, request_state_security=security)

    @srv.tool()
    async def delete_item(
        item: str, answer: Annotated[ElicitationResult[Confirm], Resolve(ask_delete)]
    ) -> str:
        """Ask ``Really delete {item}?`` (Confirm), then report the outcome."""
        return outcome_text(item, answer)

    @srv.tool()
    async def book(
        city: str,
        dates: Annotated[ElicitationResult[Dates], Resolve(ask_dates)],
        confirm: Annotated[ElicitationResult[Confirm], Resolve(ask_booking)],
    ) -> str:
        """Two rounds: ask for dates, then confirm the booking (any other outcome: not booked)."""
        booked = isinstance(confirm, AcceptedElicitation) and confirm.data.ok
        if booked and isinstance(dates, AcceptedElicitation):
            return f"booked {city} from {dates.data.start} for {dates.data.nights} nights"
        return "not booked"

    @srv.tool()
    async def pick_options(answer: Annotated[ElicitationResult[Options], Resolve(ask_options)]) -> str:
        """Ask with enums (single, titled, multi) and defaulted fields; echo the content as JSON."""
        if isinstance(answer, AcceptedElicitation):
            return json.dumps(answer.data.model_dump(), sort_keys=True)
        return "declined" if answer.action == "decline" else "cancelled"

    @srv.tool()
    async def login(ctx: Context) -> str | InputRequiredResult:
        """URL-mode elicitation: a hand-rolled round on 2026-07-28, ``ctx.elicit_url`` before."""
        caps = ctx.client_capabilities
        if caps is None or caps.elicitation is None or caps.elicitation.url is None:
            raise UrlElicitationRequiredError([_login_params()])
        if ctx.protocol_version == INPUT_REQUIRED_VERSION:
            answer = (ctx.input_responses or {}).get(LOGIN_KEY)
            if answer is None:
                return InputRequiredResult(
                    input_requests={LOGIN_KEY: ElicitRequest(params=_login_params())},
                    request_state=LOGIN_KEY,
                )
            accepted = isinstance(answer, ElicitResult) and answer.action == "accept"
        else:
            result = await ctx.elicit_url(LOGIN_MESSAGE, LOGIN_URL, LOGIN_ELICITATION_ID)
            accepted = result.action == "accept"
        return "logged in" if accepted else "not logged in"

    @srv.tool()
    async def summarize(text: str, sampled: Annotated[CreateMessageResult, Resolve(ask_summary)]) -> str:
        """Sample the client's LLM: ``Summarize: {text}`` (max_tokens 50)."""
        return f"summary: {_sampled_text(sampled)}"

    @srv.tool()
    async def forecast(
        city: str,
        choice: ToolChoiceMode,
        first: Annotated[CreateMessageResultWithTools, Resolve(ask_forecast)],
        final: Annotated[CreateMessageResultWithTools, Resolve(ask_forecast_again)],
    ) -> str:
        """Sample with a ``weather`` tool; when the model calls it, run it and sample again with its
        result. JSON ``{"first": <answer>, "final": <answer>}`` of what the server received."""
        return json.dumps({"first": sampled_dump(first), "final": sampled_dump(final)})

    @srv.tool()
    async def sample_badly(
        kind: BadSampling, sampled: Annotated[CreateMessageResult, Resolve(ask_badly)]
    ) -> str:
        """Send a malformed sampling request (``kind``: a tool's schema, its name, or content)."""
        return f"sampled: {_sampled_text(sampled)}"

    @srv.tool()
    def sampling_capability(ctx: Context) -> str:
        """The client's declared ``sampling`` capability as JSON (``null``: none)."""
        caps = ctx.client_capabilities
        sampling = caps.sampling if caps is not None else None
        return json.dumps(None if sampling is None else sampling.model_dump(mode="json", exclude_none=True))

    @srv.tool()
    async def where(roots: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
        """The client's root URIs joined by ``,``."""
        return ",".join(str(root.uri) for root in roots.roots)

    @srv.tool()
    async def slow_confirm(
        item: str, answer: Annotated[ElicitationResult[Confirm], Resolve(ask_slow)]
    ) -> str:
        """Sleep 0.5 s, then ask ``Confirm {item}?`` (for concurrent legacy calls)."""
        return outcome_text(item, answer)

    @srv.tool()
    async def confirm_then_work(
        item: str, seconds: float, answer: Annotated[ElicitationResult[Confirm], Resolve(ask_delete)]
    ) -> str:
        """Ask ``Really delete {item}?``, then work for ``seconds`` before reporting the outcome."""
        await anyio.sleep(seconds)
        return outcome_text(item, answer)

    @srv.tool()
    def stats() -> dict[str, int]:
        """PID, handshakes seen and tools/call requests seen by this server."""
        return {"pid": os.getpid(), "handshakes": counters.handshakes, "calls": counters.calls}

    return srv


def build_from_env(build: Callable[..., MCPServer] = build_server) -> MCPServer:
    """Build with ``$ASKER_STATE_KEY`` and ``$ASKER_LOG`` (process mode)."""
    return build(state_key=os.environ.get("ASKER_STATE_KEY") or None, log_file=os.environ.get("ASKER_LOG"))


def main() -> None:
    # Build from the importable module so resolver keys read ``tests.servers.asker:...``.
    from tests.servers import asker

    run_cli(lambda: asker.build_from_env(asker.build_server), description=__doc__)


if __name__ == "__main__":
    main()
