"""The agent graph on a real ``langgraph dev`` server, used from a chat page in headless Chromium.

The page (``tests/browser/src/app.tsx``) is built from the packages Agent Chat UI is built from
(``useStream``, ``LoadExternalComponent``) and handles the thread as that UI does: generative-UI
messages next to the AI message they name, HITL interrupts as approve/edit/reject forms.
The server (``tests/browser/conftest.py``) bundles this repository's ``ui/`` components
(``langgraph.json``'s ``ui``) and runs the scripted chat model, which calls the tools named in the
message typed.
"""

from __future__ import annotations

import asyncio
import functools
import http.server
import json
import os
import re
import threading
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlencode

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Page, async_playwright, expect

from tests.browser.install import ensure_built
from tests.langgraph_server import REPO_ROOT, DevServer

if TYPE_CHECKING:
    from tests.browser.conftest import Served

CHROMIUM = "/usr/bin/chromium"
WAIT_MS = 20_000
expect.set_options(timeout=WAIT_MS)


@dataclass
class Chat:
    server: DevServer
    page_url: str
    browser: Browser
    problems: list[str] = field(default_factory=list)
    """The browser's console errors and failed requests (shown when a test fails)."""

    async def open(self, assistant: str = "agent") -> Page:
        page = await self.browser.new_page(viewport={"width": 900, "height": 700})
        page.set_default_timeout(WAIT_MS)
        page.on(
            "console",
            lambda m: self.problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
        )
        page.on(
            "response",
            lambda r: self.problems.append(f"HTTP {r.status} {r.url}") if r.status >= 400 else None,
        )
        page.on("requestfailed", lambda r: self.problems.append(f"failed {r.url}: {r.failure}"))
        await page.goto(f"{self.page_url}?{urlencode({'apiUrl': self.server.url, 'assistantId': assistant})}")
        return page


class _PageHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the built page; proxies ``GET /ui/...`` to the LangGraph server.

    The server answers a ``LoadExternalComponent`` request with ``<script src="/ui/<graph>/...">``,
    a path on the page's own origin: a page served elsewhere must pass ``/ui/`` on to the server
    (as a reverse proxy in front of both would)."""

    api_url = ""

    def do_GET(self) -> None:
        if not self.path.startswith("/ui/"):
            super().do_GET()
            return
        try:
            with urllib.request.urlopen(f"{self.api_url}{self.path}", timeout=10) as upstream:
                body, status = upstream.read(), upstream.status
                kind = upstream.headers.get("Content-Type", "application/octet-stream")
        except urllib.error.HTTPError as error:
            body, status, kind = error.read(), error.code, "text/plain"
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def page_server(api_url: str) -> Iterator[str]:
    """The built chat page on 127.0.0.1 (a folder server in a thread); its URL."""
    page = ensure_built()
    handler = type("Handler", (_PageHandler,), {"api_url": api_url})
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(page.parent))
    )
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/{page.name}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest_asyncio.fixture
async def chat(served: Served) -> AsyncIterator[Chat]:  # (tests/browser/conftest.py)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM)
        chat = Chat(served.server, served.page_url, browser)
        try:
            yield chat
        finally:
            print("\n".join(chat.problems))
            await browser.close()


async def say(page: Page, text: str) -> None:
    await page.get_by_test_id("composer").fill(text)
    await page.get_by_role("button", name="Send").click()


@pytest.mark.deploy
@pytest.mark.timeout(120)
async def test_a_long_call_shows_a_progress_bar_with_the_servers_message(chat: Chat) -> None:
    page = await chat.open()
    await say(page, 'sleep {"seconds": 4}')

    # While the call runs, the bundled component shows the server's progress message under the
    # AI message that made the call.
    bar = page.locator('[data-testid="mcp-progress"][data-status="running"]')
    await expect(bar).to_be_visible()
    await expect(bar).to_contain_text("demo · sleep")
    await expect(bar.get_by_test_id("mcp-progress-message")).to_have_text(re.compile(r"^step \d+/80$"))
    call_message = page.locator('[data-testid="message-ai"]', has=page.get_by_test_id("tool-call"))
    await expect(call_message.locator('[data-testid="mcp-progress"]')).to_have_count(1)

    # The reply arrives; the bar stays, finished (the graph keeps it in its "ui" state key).
    await expect(page.get_by_test_id("message-ai").last).to_contain_text("slept 4.0")
    done = page.locator('[data-testid="mcp-progress"][data-status="done"]')
    await expect(done).to_contain_text("step 80/80")
    await expect(page.locator('[data-testid="mcp-progress"]')).to_have_count(1)
    await expect(page.get_by_test_id("error")).to_have_count(0)


# -- questions and approvals through the approve/edit/reject forms ------------------------------


async def shown_interrupt(page: Page) -> None:
    """Wait until the page shows an interrupt, as a review form or as a read-only payload."""
    shown = page.get_by_test_id("action-request").first.or_(page.get_by_test_id("generic-interrupt"))
    await expect(shown).to_be_visible()


async def reply_or_error(page: Page, text: str) -> None:
    """Wait for the last AI message to contain ``text``, failing at once on a run error."""
    reply = page.get_by_test_id("message-ai").last.filter(has_text=text)
    errors = page.get_by_test_id("error")
    await expect(reply.or_(errors)).to_be_visible()
    assert await errors.count() == 0, await errors.all_inner_texts()


@pytest.mark.deploy
@pytest.mark.timeout(120)
async def test_an_elicitation_is_answered_through_the_review_form(chat: Chat) -> None:
    page = await chat.open()
    await say(page, 'cancel_order {"order_id": "A-1001"}')
    form = page.get_by_test_id("action-request")
    await shown_interrupt(page)
    assert await form.count() == 1, await page.get_by_test_id("generic-interrupt").all_inner_texts()
    # The form's title is the tool and the question, as Agent Chat UI shows an action's name.
    await expect(form.locator("legend")).to_have_text(
        "cancel_order: Cancel order A-1001 (2 x espresso beans)?"
    )
    await expect(form.get_by_test_id("action-description")).to_contain_text("Cancel order A-1001")
    await form.locator('input[name="ok"]').fill("true")  # sent as the string "true", as typed
    await form.locator('button[data-decision="edit"]').click()
    await reply_or_error(page, "cancel_order: order A-1001 cancelled")


@pytest.mark.deploy
@pytest.mark.timeout(120)
async def test_an_approval_edited_to_another_number(chat: Chat) -> None:
    page = await chat.open("reviewed_agent")
    await say(page, 'add {"a": 2, "b": 40}')
    form = page.get_by_test_id("action-request")
    await expect(form).to_have_attribute("data-action", "add")
    await form.locator('input[name="a"]').fill("5")  # sent as the string "5", as typed
    await form.locator('button[data-decision="edit"]').click()
    # The edit ran as the number 5; the scripted model repeats the result, with its edit notice.
    await reply_or_error(page, 'changed its arguments to {"a": 5, "b": 40}')
    await expect(page.get_by_test_id("message-ai").last).to_contain_text("45.0")


@pytest.mark.deploy
@pytest.mark.timeout(120)
async def test_two_approvals_of_one_turn_in_one_form(chat: Chat) -> None:
    page = await chat.open("reviewed_agent")
    await say(page, 'add {"a": 1, "b": 2}\nadd {"a": 3, "b": 4}')
    forms = page.get_by_test_id("action-request")
    await shown_interrupt(page)
    assert await forms.count() == 2
    await forms.nth(0).locator('button[data-decision="approve"]').click()
    await forms.nth(1).locator('button[data-decision="approve"]').click()
    await reply_or_error(page, "add: 3.0\nadd: 7.0")


EXAMPLE_END = """
const state: any = await client.threads.getState(thread.thread_id);
console.log(JSON.stringify(state.values.messages.filter((m: any) => m.type === "tool")));
"""
"""Appended to the page's example (its variables in scope): what the thread ended with."""


@pytest.mark.deploy
@pytest.mark.timeout(120)
async def test_the_typescript_example_of_the_wire_format_page_answers_and_finishes(
    chat: Chat, tmp_path: Path
) -> None:
    """The ``ts`` block of docs/reference/wire-formats.md, bundled with esbuild and run on Node
    against the server: it answers the question it meets and the call finishes."""
    page = (REPO_ROOT / "docs" / "reference" / "wire-formats.md").read_text()
    [code] = re.findall(r"^```ts\n(.*?)^```", page, re.S | re.M)
    assert 'process.env.LANGGRAPH_URL ?? "http://127.0.0.1:2024"' in code  # run as the page says
    source = tmp_path / "example.ts"
    source.write_text(code + EXAMPLE_END)
    bundle = tmp_path / "example.mjs"
    harness = REPO_ROOT / "tests" / "browser"
    build = (
        "import { build } from 'esbuild';"
        f"await build({{ entryPoints: [{json.dumps(str(source))}], outfile: {json.dumps(str(bundle))},"
        f" bundle: true, platform: 'node', format: 'esm', target: 'node20',"
        f" nodePaths: [{json.dumps(str(harness / 'node_modules'))}], logLevel: 'warning' }});"
    )
    built = await asyncio.create_subprocess_exec(
        "node", "--input-type=module", "-e", build, cwd=harness,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await asyncio.wait_for(built.communicate(), 60)
    assert built.returncode == 0, err.decode()
    run = await asyncio.create_subprocess_exec(
        "node",
        str(bundle),
        env={**os.environ, "LANGGRAPH_URL": chat.server.url},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(run.communicate(), 60)
    assert run.returncode == 0, err.decode()
    [result] = json.loads(out.decode().strip().splitlines()[-1])
    assert result["name"] == "cancel_order" and result["content"] == "order A-1002 cancelled", result
