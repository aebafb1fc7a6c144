"""Check this repository's deployment with Agent Chat UI itself, as a person uses it.

    git clone https://github.com/langchain-ai/agent-chat-ui /tmp/agent-chat-ui
    uv run python scripts/agent_chat_ui.py --source /tmp/agent-chat-ui [--keep] \\
        [--screenshots docs/assets/agent-chat-ui]

1. Builds Agent Chat UI (``scripts/agent_chat_ui_app.py``, cached under
   ``~/.cache/langgraph-mcp/agent-chat-ui/``): from the checkout ``--source`` names, or without
   it from the template of the npm package ``create-agent-chat-app`` (0.1.6, an older UI with
   no form for this package's interrupts: a and c then fail, saying so). Configured as deployed:
   the browser talks to the UI's ``/api`` passthrough, which forwards to the LangGraph server;
   ``next start`` on 127.0.0.1.
2. Starts ``langgraph dev`` for ``langgraph.json`` offline, with the scripted model
   (``LANGGRAPH_MCP_MODEL=scripted``) and one graph added, ``approving``
   (``scripts/agent_chat_ui_graph.py``: the deployed ``agent`` asks no approvals).
3. Drives the UI in headless Chromium through these scenarios, asserting what a person sees
   and what the thread holds, and prints a report per scenario; exits 1 if any failed:

   a. two ``add`` approvals of one turn (``approving``): one form; the first approved, the second
      edited (``b`` 4 -> 5), both sent with "Submit all 2 decisions"; both results, the edited
      one with its note, and the AI message's call rewritten;
   b. the ``weather`` example's MCP Apps view (``agent``): shown, its Refresh button's call goes
      through the UI's ``/api`` route and succeeds;
   c. a server's question (``book_trip`` on ``agent``) answered wrongly (nights ``lots``): the
      refusal shown, the question still pending; then rightly, and its second question too;
   d. a message typed while an approval is pending (``approving``): the UI's made-up "Successfully
      handled tool call." is replaced, the thread says the call was not executed, and the model's
      next reply is to the typed message;
   e. a long call's progress bar (``agent``);
   f. d on the deployed ``agent`` while a server's question (``cancel_order``) is pending: its
      repair node (``MCPToolNode.unanswered_repair``) replaces the made-up result too, saying the
      call did not complete.

With ``--screenshots DIR`` each scenario's key moment is saved there as PNG. A scenario that
failed is saved under a name of its own (``*-failed.png``), never over a docs screenshot.
``--keep`` leaves both servers running after the scenarios until Ctrl-C (to look around).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
sys.path[:0] = [str(REPO_ROOT), str(HERE)]

import agent_chat_ui_app as acu  # noqa: E402
from langgraph_sdk import get_client  # noqa: E402
from playwright.async_api import Browser, Page, async_playwright, expect  # noqa: E402

from tests.langgraph_server import BIN, DevServer, _copy_ui_sources, ui_bundle  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
WAIT_MS = 30_000
FAKE = "Successfully handled tool call."
expect.set_options(timeout=WAIT_MS)


# -- servers ---------------------------------------------------------------------------------------


def _config(folder: Path) -> Path:
    """``langgraph.json`` with the ``approving`` graph added (its UI registered like the others')."""
    config = json.loads((REPO_ROOT / "langgraph.json").read_text())
    config["dependencies"] = [str(REPO_ROOT)]
    config["graphs"]["approving"] = f"{HERE / 'agent_chat_ui_graph.py'}:graph"
    config["ui"]["approving"] = config["ui"]["agent"]
    path = folder / "langgraph.json"
    path.write_text(json.dumps(config))
    return path


def _wait_http(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"{proc.args!r} exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}"
            )
        with suppress(OSError), urllib.request.urlopen(url, timeout=2) as response:
            if response.status == 200:
                return
        time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer in {timeout} s:\n{log.read_text(errors='replace')[-3000:]}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group the script started, then SIGKILL what is left of it."""
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with suppress(subprocess.TimeoutExpired):
        proc.wait(30)
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@contextmanager
def langgraph_dev(folder: Path, port: int) -> Iterator[DevServer]:
    """``langgraph dev`` offline on 127.0.0.1:``port``, as ``tests/langgraph_server.py`` starts it."""
    workdir = folder / "server"
    workdir.mkdir(parents=True)
    config = _config(folder)
    _copy_ui_sources(config, workdir)  # the UI bundler reads ui/ from the working folder
    environ = {k: v for k, v in os.environ.items() if k not in ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")}
    environ.update(
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGGRAPH_NO_VERSION_CHECK="true",
        LANGSMITH_TRACING="false",
        LANGGRAPH_MCP_MODEL="scripted",
        PATH=f"{BIN}{os.pathsep}{environ.get('PATH', '')}",
    )
    log = workdir / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(BIN / "langgraph"), "dev", "--config", str(config), "--no-browser", "--host", "127.0.0.1",
             "--port", str(port), "--n-jobs-per-worker", "4", "--no-reload"],
            cwd=workdir, env=environ, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        _wait_http(f"http://127.0.0.1:{port}/ok", proc, log)
        for graph in ("agent", "approving"):
            ui_bundle(workdir, graph, timeout=180)
        yield DevServer(proc, f"http://127.0.0.1:{port}", log)
    finally:
        _stop(proc)


@contextmanager
def chat_ui(app: Path, folder: Path, ui_port: int, api_port: int) -> Iterator[str]:
    log = folder / "next.log"
    proc = acu.start(app, ui_port, api_port, log)
    try:
        _wait_http(f"http://127.0.0.1:{ui_port}/", proc, log)
        yield f"http://127.0.0.1:{ui_port}"
    finally:
        _stop(proc)


# -- the person's side -----------------------------------------------------------------------------


@dataclass
class Run:
    ui: str
    api: str
    browser: Browser
    shots: Path | None
    problems: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    """``"<status> <method> <url>"`` of every ``/api`` request of the current page."""

    async def open(self, assistant: str) -> Page:
        self.problems.clear()
        self.requests.clear()
        page = await self.browser.new_page(viewport={"width": 1100, "height": 1000})
        page.set_default_timeout(WAIT_MS)
        page.on(
            "console", lambda m: self.problems.append(f"console: {m.text}") if m.type == "error" else None
        )
        page.on(
            "response",
            lambda r: (
                self.requests.append(f"{r.status} {r.request.method} {r.url}") if "/api/" in r.url else None
            ),
        )
        await page.goto(f"{self.ui}/?assistantId={assistant}")
        await expect(page.get_by_placeholder("Type your message...")).to_be_visible()
        return page

    async def shot(self, page: Page, name: str, passed: bool, height: int = 1000) -> str | None:
        """Save the page as ``name`` (``*-failed.png`` when not ``passed``), ``height`` pixels tall.
        Anything scrolled sideways (a wide tool result, a toast) is scrolled back first."""
        if self.shots is None:
            return None
        self.shots.mkdir(parents=True, exist_ok=True)
        path = self.shots / (name if passed else name.replace(".png", "-failed.png"))
        if height != 1000:
            await page.set_viewport_size({"width": 1100, "height": height})
            await page.wait_for_timeout(500)
        await page.evaluate("document.querySelectorAll('*').forEach(e => { e.scrollLeft = 0; })")
        await page.screenshot(path=str(path))
        if height != 1000:
            await page.set_viewport_size({"width": 1100, "height": 1000})
        return str(path)

    async def state(self, page: Page) -> dict[str, Any]:
        """The thread's state on the LangGraph server (the thread the page shows)."""
        match = re.search(r"threadId=([0-9a-f-]+)", page.url)
        assert match, f"no thread in the page's URL {page.url}"
        return await get_client(url=self.api).threads.get_state(match.group(1))


async def say(page: Page, text: str) -> None:
    await page.get_by_placeholder("Type your message...").fill(text)
    await page.locator('form button[type="submit"]').click()


async def interrupt_shown(page: Page) -> str:
    """Wait for the page to show the pending interrupt; ``"form"`` (the UI's review form) or
    ``"read-only"`` (its generic view of an interrupt it does not know: no way to answer)."""
    generic = page.get_by_text("Human Interrupt", exact=True)
    form = page.get_by_role("button", name=re.compile(r"^(Accept|Submit|Approve)"))
    await expect(generic.or_(form).first).to_be_visible()
    return "read-only" if await generic.count() else "form"


def text_of(message: dict[str, Any]) -> str:
    """A message's text (the UI sends a human message's content as a list of text blocks)."""
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)


def tool_results(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in state["values"]["messages"] if m["type"] == "tool"]


# -- scenarios -------------------------------------------------------------------------------------


async def batched_approvals(run: Run) -> str:
    page = await run.open("approving")
    await say(page, 'add {"a": 1, "b": 2}\nadd {"a": 3, "b": 4}')
    shown = await interrupt_shown(page)
    state = await run.state(page)
    values = [i["value"] for t in state["tasks"] for i in t.get("interrupts", [])]
    asked = [len(v.get("action_requests", [])) for v in values if isinstance(v, dict)]
    package = f"the server has {len(values)} interrupt(s) pending with {asked} action request(s)"
    if shown != "form":
        await run.shot(page, "batched-approvals.png", passed=False)
        raise AssertionError(
            f"{package} (one interrupt, both calls: as the docs say), but the UI shows it only as its "
            "read-only 'Human Interrupt' table, with no Approve/Edit/Reject: this Agent Chat UI reads the "
            "older HumanInterrupt schema (action_request, config.allow_*), not action_requests/review_configs"
        )
    submit_all = page.get_by_role("button", name="Submit all 2 decisions")
    await expect(submit_all).to_be_visible()
    await expect(page.get_by_role("button", name="Approve All")).to_be_visible()
    await run.shot(page, "batched-approvals.png", passed=True, height=1450)
    # The first call approved as asked, the second edited (b: 4 -> 5), then both sent at once.
    await page.get_by_role("button", name="Approve", exact=True).click()
    fields = page.locator("textarea:not([placeholder])")  # the edit card's a and b
    await expect(fields.nth(1)).to_have_value("4")
    await fields.nth(1).fill("5")
    await page.get_by_role("button", name="Submit", exact=True).click()
    await expect(submit_all).to_be_enabled()
    await submit_all.click()
    deadline = time.monotonic() + WAIT_MS / 1000
    while True:
        state = await run.state(page)
        if not state["next"] and len(tool_results(state)) == 2:
            break
        assert time.monotonic() < deadline, f"the run did not end: next={state['next']}"
        await asyncio.sleep(0.5)
    results = [str(r["content"]) for r in tool_results(state)]
    assert results[0].startswith("3"), results
    assert "changed" in results[1] and "8" in results[1], results
    messages = state["values"]["messages"]
    calls = [c["args"] for m in messages if m["type"] == "ai" for c in m.get("tool_calls", [])]
    assert calls == [{"a": 1, "b": 2}, {"a": 3, "b": 5}], f"the AI message's calls: {calls}"
    await expect(page.get_by_text(results[1][:40]).first).to_be_visible()
    await page.wait_for_timeout(1000)
    await run.shot(page, "batched-approvals-done.png", passed=True)
    note = page.get_by_text(re.compile(r"^Note: before this call ran")).first
    await note.evaluate("e => e.scrollIntoView({block: 'center'})")
    await run.shot(page, "edited-approval.png", passed=True)
    return (
        f"{package}; one form: the first approved, the second edited (b 4 -> 5), 'Submit all 2 "
        f"decisions'; results {results[0][:40]!r} and {results[1][:160]!r}; the AI message's calls "
        f"now {calls}"
    )


async def mcp_app(run: Run) -> str:
    page = await run.open("agent")
    await say(page, 'show_forecast {"city": "Oslo"}')
    frame = page.frame_locator("iframe").first
    try:
        await expect(frame.get_by_text("Forecast for Oslo")).to_be_visible()
    except AssertionError:
        await run.shot(page, "mcp-app-weather.png", passed=False)
        console = "; ".join(run.problems[-5:]) or "none"
        raise AssertionError(
            f"no view of show_forecast on the page (iframes: {await page.locator('iframe').count()}); "
            f"browser console errors: {console}"
        ) from None
    await expect(frame.locator("#days tr")).to_have_count(3)
    # As a person would: the run has ended (the model's reply is shown), then Refresh. (A click
    # within a moment of the view filling in was seen to do nothing: no request was sent.)
    await expect(page.get_by_text(re.compile(r"^show_forecast: \{"))).to_be_visible()
    await page.wait_for_timeout(1500)
    await frame.get_by_role("button", name="Refresh").click()
    status = frame.locator("#status")
    with suppress(AssertionError):
        await expect(status).to_have_text(re.compile(r"^(Refreshed|Refresh failed)"))
    text = await status.inner_text()
    calls = [r for r in run.requests if "/mcp-apps/" in r]
    passed = re.match(r"Refreshed Oslo: updated \d+ time", text) is not None
    await page.locator("iframe").first.evaluate("e => e.scrollIntoView({block: 'center'})")
    await run.shot(page, "mcp-app-weather.png", passed=passed)
    assert passed, f"after Refresh, the view says {text!r}; route requests: {calls}"
    assert not any(r.startswith("415 ") for r in calls), calls
    return f"the view shows Oslo's 3 days; Refresh -> {text!r}; through /api: {', '.join(calls)}"


async def pending_titles(run: Run, page: Page) -> list[str]:
    state = await run.state(page)
    values = [i["value"] for t in state["tasks"] for i in t.get("interrupts", [])]
    return [r.get("name") for v in values if isinstance(v, dict) for r in v.get("action_requests", [])]


async def refused_answer(run: Run) -> str:
    page = await run.open("agent")
    await say(page, 'book_trip {"city": "Oslo"}')
    shown = await interrupt_shown(page)
    if shown != "form":
        await run.shot(page, "elicitation.png", passed=False)
        raise AssertionError(
            f"the server asks (pending: {await pending_titles(run, page)}), but the UI shows the question "
            "only as its read-only 'Human Interrupt' table: there is no form to answer, so no refused "
            "answer can be made or shown"
        )
    first = await pending_titles(run, page)
    fields = page.locator("textarea:not([placeholder])")  # Start, Nights, Room
    await expect(fields).to_have_count(3)
    # Wrong: no start date, and nights that is no number.
    await fields.nth(1).fill("lots")
    await page.get_by_role("button", name="Submit", exact=True).click()
    toast = page.get_by_text(re.compile(r"Your answer was not accepted")).first
    await expect(toast).to_be_visible()
    refusal = " ".join((await toast.inner_text()).split())
    await run.shot(page, "elicitation-refused.png", passed=True)
    still = await pending_titles(run, page)
    assert still == first, f"after the refused answer, pending: {still} (was {first})"
    # Rightly: the form is shown again once the UI has reset it; start and nights filled in.
    await expect(fields.nth(1)).to_have_value("2")
    await page.wait_for_timeout(1000)
    await expect(fields.nth(1)).to_have_value("2")
    await fields.nth(0).fill("2026-12-24")
    await fields.nth(1).fill("3")
    await page.get_by_role("button", name="Submit", exact=True).click()
    deadline = time.monotonic() + WAIT_MS / 1000
    while (second := await pending_titles(run, page)) == first:
        assert time.monotonic() < deadline, f"the answer was not taken: pending {second}"
        await asyncio.sleep(0.5)
    assert second and "step 2" in second[0], f"no second question: pending {second}"
    await expect(fields).to_have_count(2)  # Ok, Reason
    await fields.nth(0).fill("true")
    await page.get_by_role("button", name="Submit", exact=True).click()
    booked = "booked: Oslo, 3 nights from 2026-12-24, double room"
    await expect(page.get_by_text(booked).first).to_be_visible()
    state = await run.state(page)
    [result] = tool_results(state)
    assert booked in str(result["content"]), result["content"]
    await page.wait_for_timeout(1000)
    return (
        f"asked {first}; Submit with no start and nights 'lots' -> toast {refusal[:300]!r}, the question "
        f"still pending; answered rightly -> asked {second}; ok=true -> the tool's result {booked!r}"
    )


async def run_ended(run: Run, page: Page) -> dict[str, Any]:
    """The thread's state once its run has ended: no pending task, a reply after the last message."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while True:
        state = await run.state(page)
        messages = state["values"]["messages"]
        if not state["next"] and messages[-1]["type"] == "ai" and messages[-2]["type"] != "ai":
            return state
        assert time.monotonic() < deadline, f"the run did not end: next={state['next']}"
        await asyncio.sleep(0.5)


async def typed_instead(run: Run, page: Page, words: str) -> str:
    """Type ``hello`` while a question is pending; assert the UI's made-up result was replaced
    by what happened (``words``: how the call's tool message says it), the model then answers
    ``hello``. Returns the report."""
    before = await run.state(page)
    assert before["next"], f"no question pending: {before['next']}"
    await say(page, "hello")
    await expect(page.get_by_text("hello", exact=True)).to_be_visible()
    state = await run_ended(run, page)
    messages = state["values"]["messages"]
    [result] = tool_results(state)
    reply = text_of(messages[-1])
    human = [i for i, m in enumerate(messages) if m["type"] == "human"][-1]
    assert text_of(messages[human]) == "hello", messages[human]
    assert result["content"] != FAKE, f"the thread keeps the UI's made-up result {FAKE!r}"
    assert re.search(words, str(result["content"])), result["content"]
    assert messages.index(result) < human, "the repaired result is not before the typed message"
    assert "hello" in reply, f"the model's next reply is not to 'hello': {reply!r}"
    await expect(page.get_by_text(reply[:25]).first).to_be_visible()
    await page.wait_for_timeout(1000)
    page_text = await page.locator("body").inner_text()
    shown = "shown" if str(result["content"])[:40] in page_text else "not shown (its id is one the UI hides)"
    return (
        f"the thread's tool message for {result.get('name')} is {str(result['content'])[:170]!r} (the UI "
        f"had sent {FAKE!r}); on the page it is {shown}; the next AI message: {reply[:120]!r}"
    )


async def typed_while_pending(run: Run) -> str:
    page = await run.open("approving")
    await say(page, 'add {"a": 20, "b": 22}')
    await interrupt_shown(page)
    report = await typed_instead(run, page, r"not executed")
    await run.shot(page, "typed-while-pending.png", passed=True)
    page_text = await page.locator("body").inner_text()
    assert "42" not in page_text.split("hello")[-1], "the sum was shown: the call ran?"
    return report


async def typed_while_pending_deployed(run: Run) -> str:
    """The deployed ``agent`` graph puts ``MCPToolNode.unanswered_repair`` first: the UI's made-up
    result for a call whose server had asked a question is replaced there too."""
    page = await run.open("agent")
    await say(page, 'cancel_order {"order_id": "A-1002"}')
    shown = await interrupt_shown(page)
    await run.shot(page, "elicitation.png", passed=shown == "form", height=1300)
    return await typed_instead(run, page, r"did not complete|not executed")


async def progress(run: Run) -> str:
    page = await run.open("agent")
    await say(page, 'count_primes {"limit": 400000}')
    bar = page.locator('[data-testid="mcp-progress"][data-status="running"]')
    any_bar = page.locator('[data-testid="mcp-progress"]').first
    try:
        await expect(bar).to_contain_text(re.compile(r"running · \d+ / 400000"))
    except AssertionError:
        await run.shot(page, "progress.png", passed=False)
        bars = await page.locator('[data-testid="mcp-progress"]').all_inner_texts()
        raise AssertionError(f"no running progress bar of 400000; bars: {bars}") from None
    # The docs' caption says 180000 of 400000: the bar is read as often as can be (it is in the
    # component's shadow root), and photographed as soon as it shows 180000 or more.
    seen: list[str] = []
    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline:
        found = re.search(r"(running|done) · (\d+) / 400000", await any_bar.inner_text())
        if found and (not seen or seen[-1] != found[2]):
            seen.append(found[2])
        if found and int(found[2]) >= 180000:
            break
    before = " ".join((await any_bar.inner_text()).split())
    await run.shot(page, "progress.png", passed="running" in before)
    after = " ".join((await any_bar.inner_text()).split())
    assert "running" in before, f"the bar was done before it was photographed: {before!r}; seen {seen}"
    photographed = before if before == after else f"between {before!r} and {after!r}"
    done = page.locator('[data-testid="mcp-progress"][data-status="done"]')
    await expect(done).to_be_visible(timeout=90_000)
    await expect(page.get_by_text(re.compile(r"^count_primes: \d+"))).to_be_visible()
    return (
        f"the bar shows {photographed!r} when photographed while the call runs, then done; the reply "
        f"follows; values the bar showed: {' '.join(seen)}"
    )


SCENARIOS: list[tuple[str, Callable[[Run], Awaitable[str]]]] = [
    ("a. two approvals of one turn in one form", batched_approvals),
    ("b. an MCP Apps view and its Refresh button", mcp_app),
    ("c. a question answered after a refused answer", refused_answer),
    ("d. typing while a question is pending", typed_while_pending),
    ("e. a long call's progress bar", progress),
    ("f. typing while a question is pending, deployed agent graph", typed_while_pending_deployed),
]


async def scenarios(ui: str, api: str, shots: Path | None, only: list[str]) -> list[tuple[str, bool, str]]:
    results = []
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM)
        run = Run(ui, api, browser, shots)
        for name, scenario in SCENARIOS:
            if only and name[0] not in only:
                continue
            try:
                results.append((name, True, await asyncio.wait_for(scenario(run), 180)))
            except Exception as error:
                detail = str(error) if isinstance(error, AssertionError) else traceback.format_exc(limit=3)
                seen = [r for r in run.requests if "/mcp-apps/" in r] + run.problems[-6:]
                detail += "".join(f"\n          seen: {line[:300]}" for line in seen)
                results.append((name, False, detail))
            for context in browser.contexts:
                for page in context.pages:
                    await page.close()
        await browser.close()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="leave the servers running until Ctrl-C")
    parser.add_argument(
        "--screenshots", type=Path, metavar="DIR", help="save each scenario's screenshot here"
    )
    parser.add_argument(
        "--source",
        type=Path,
        metavar="DIR",
        help="a checkout of github.com/langchain-ai/agent-chat-ui to build (default: the npm template)",
    )
    parser.add_argument("--only", default="", help="scenario letters to run, e.g. 'bd' (default: all)")
    parser.add_argument("--ui-port", type=int, default=3917, help="Agent Chat UI's port (part of its build)")
    parser.add_argument(
        "--api-port", type=int, default=2917, help="langgraph dev's port (part of the UI's build)"
    )
    args = parser.parse_args()

    if args.source:
        app, seconds = acu.ensure_built_source(args.source, args.ui_port, args.api_port)
        commit = acu.source_commit(args.source) or "no git checkout"
        print(f"Agent Chat UI: built from {args.source.resolve()} ({commit}) in {app}")
    else:
        app, seconds = acu.ensure_built(args.ui_port, args.api_port)
        print(f"Agent Chat UI: create-agent-chat-app@{acu.VERSION} template in {app}")
    print(f"  build: {f'{seconds:.0f} s' if seconds else 'cached'}")
    with tempfile.TemporaryDirectory(prefix="agent-chat-ui-") as temp:
        folder = Path(temp)
        with (
            langgraph_dev(folder, args.api_port) as server,
            chat_ui(app, folder, args.ui_port, args.api_port) as ui,
        ):
            print(f"  langgraph dev: {server.url}  Agent Chat UI: {ui} (/api -> {server.url})\n")
            shots = args.screenshots.resolve() if args.screenshots else None
            results = asyncio.run(scenarios(ui, server.url, shots, list(args.only)))
            for name, passed, detail in results:
                print(f"{'PASSED' if passed else 'FAILED'}  {name}\n        {detail}\n")
            if args.keep:
                print(f"Servers kept running: open {ui}/?assistantId=agent (Ctrl-C to stop)")
                with suppress(KeyboardInterrupt):
                    signal.pause()
    failed = [name for name, passed, _ in results if not passed]
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
