"""MCP Apps views on a real ``langgraph dev`` server: the ``mcp-app`` component (``ui/``) renders
a tool's view in headless Chromium and passes the view's own calls to the deployment's route
(``graphs/app.py``: ``langgraph_mcp.apps.app_routes``), which runs them on the thread.

The server (``tests/browser/conftest.py``) has LangGraph custom auth (a bearer token names the
user, each thread is its creator's) and the apps fixture server twice, over stdio (``apps``) and
over streamable HTTP (``apps_http``), both with ``apps: true``; both log each ``refresh_chart``
call to a file.

``LANGGRAPH_MCP_SCREENSHOTS=1`` makes the browser test take ``docs/assets/mcp-app.png``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from langgraph_sdk import get_client
from playwright.async_api import Browser, Page, async_playwright, expect

from tests.browser.conftest import APPS_SERVERS, Served
from tests.browser.test_chat_ui import CHROMIUM, WAIT_MS, say
from tests.browser.test_mcp_app_passthrough import api_passthrough
from tests.langgraph_server import REPO_ROOT

pytestmark = [pytest.mark.deploy, pytest.mark.slow]

ASSETS = REPO_ROOT / "docs" / "assets"


@pytest.mark.timeout(120)
async def test_the_view_renders_and_its_click_calls_the_server_through_the_route(served: Served) -> None:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM)
        page = await browser.new_page(viewport={"width": 760, "height": 420})
        page.set_default_timeout(WAIT_MS)
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on(
            "response", lambda r: problems.append(f"HTTP {r.status} {r.url}") if r.status >= 400 else None
        )
        await page.goto(
            f"{served.page_url}?{urlencode({'apiUrl': served.server.url, 'assistantId': 'agent'})}"
        )
        await say(page, 'show_chart {"city": "Oslo"}')

        # The component renders the view in its iframe; the view got the call's input and result.
        app = page.locator('[data-testid="mcp-app"]')
        await expect(app).to_have_attribute("data-status", "ready")
        assert await app.locator("iframe").get_attribute("sandbox") == "allow-scripts"
        view = page.frame_locator('[data-testid="mcp-app"] iframe')
        await expect(view.locator("#city")).to_have_text("Oslo")
        await expect(view.locator("#temps")).to_have_text("11, 14, 9")
        assert "refresh_chart" not in served.log("apps")

        # A click in the view calls the app-only tool through the route; the server logs it.
        await view.locator("#refresh").click()
        await expect(view.locator("#refreshed")).to_have_text("refreshed Oslo: 11, 14, 9")
        assert "refresh_chart called: city='Oslo'" in served.log("apps")
        if os.environ.get("LANGGRAPH_MCP_SCREENSHOTS"):
            await view.locator("#controls").evaluate("controls => { controls.hidden = true; }")
            await page.locator("main").screenshot(path=str(ASSETS / "mcp-app.png"))

        # The view's message, once the person said yes to it, becomes the thread's next human
        # message, sent with the model context it set before; the agent answers it.
        await view.locator("#ask").click()
        consent = page.get_by_test_id("mcp-app-consent")
        await expect(consent).to_contain_text('plain_echo {"text": "asked from the view about Oslo"}')
        await expect(view.locator("#refreshed")).to_have_text("refreshed Oslo: 11, 14, 9")  # it waits
        await consent.get_by_role("button", name="Send it").click()
        await expect(view.locator("#refreshed")).to_have_text("asked")
        await expect(consent).to_have_count(0)
        reply = page.get_by_test_id("message-ai").last
        await expect(reply).to_contain_text("plain_echo: asked from the view about Oslo")
        [thread] = await get_client(url=served.server.url).threads.search(limit=1)
        state = await get_client(url=served.server.url).threads.get_state(thread["thread_id"])
        assert state["values"]["mcp_app_context"]["structuredContent"] == {
            "city": "Oslo",
            "looking_at": "the chart",
        }
        assert state["values"]["mcp_app_context"]["server"] == "apps"
        assert not [p for p in problems if "Content Security Policy" in p], (
            problems
        )  # the view kept to its CSP
        await browser.close()


@pytest.mark.timeout(120)
async def test_the_example_apps_servers_view_works_through_agent_chat_uis_passthrough(served: Served) -> None:
    """``examples/servers/apps_server.py`` (``weather`` in ``graphs/mcp.json``), as Agent Chat UI
    is deployed: every request through its ``/api`` passthrough, which sends bodies as text."""
    with api_passthrough(served.server.url) as api:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM)
            page = await browser.new_page(viewport={"width": 760, "height": 480})
            page.set_default_timeout(WAIT_MS)
            failed: list[str] = []
            page.on(
                "response", lambda r: failed.append(f"HTTP {r.status} {r.url}") if r.status >= 400 else None
            )
            await page.goto(f"{served.page_url}?{urlencode({'apiUrl': api, 'assistantId': 'agent'})}")
            await say(page, 'show_forecast {"city": "Lisbon"}')

            # The view renders, says it is initialized (the component is then "ready" and sends the
            # call), and shows the call's data.
            app = page.locator('[data-testid="mcp-app"]')
            await expect(app).to_have_attribute("data-status", "ready")
            view = page.frame_locator('[data-testid="mcp-app"] iframe')
            await expect(view.locator("#city")).to_have_text("Lisbon")
            await expect(view.locator("#days tr")).to_have_count(3)
            await expect(view.locator("#status")).to_have_text("Updated 0 time(s).")

            # Its button calls the app-only tool with the city it shows, through the passthrough.
            await view.locator("#refresh").click()
            await expect(view.locator("#status")).to_have_text("Refreshed Lisbon: updated 1 time(s).")
            assert not failed, failed
            await browser.close()


async def _show_chart(playwright: Any, served: Served, assistant: str, city: str) -> tuple[Browser, Page]:
    """A browser with the chat page open on ``assistant``, showing the chart view of ``city``."""
    browser = await playwright.chromium.launch(executable_path=CHROMIUM)
    page = await browser.new_page(viewport={"width": 900, "height": 700})
    page.set_default_timeout(WAIT_MS)
    await page.goto(f"{served.page_url}?{urlencode({'apiUrl': served.server.url, 'assistantId': assistant})}")
    await say(page, f'show_chart {{"city": "{city}"}}')
    await expect(page.get_by_test_id("mcp-app")).to_have_attribute("data-status", "ready")
    view = page.frame_locator('[data-testid="mcp-app"] iframe')
    await expect(view.locator("#city")).to_have_text(city)
    return browser, page


@pytest.mark.timeout(120)
async def test_a_views_message_needs_a_persons_yes_an_idle_thread_and_a_bounded_rate(served: Served) -> None:
    async with async_playwright() as playwright:
        browser, page = await _show_chart(playwright, served, "viewed", "Lima")
        view = page.frame_locator('[data-testid="mcp-app"] iframe')
        consent = page.get_by_test_id("mcp-app-consent")
        answer = view.locator("#refreshed")

        # The person sees the proposed message; one question at a time: another message of the
        # view meanwhile is refused. The person refuses it: the view gets a JSON-RPC error.
        await view.locator("#ask").click()
        await expect(consent).to_contain_text('plain_echo {"text": "asked from the view about Lima"}')
        await view.locator("#ask").click()
        await expect(answer).to_have_text(
            "refused: another request of this view waits for the person's answer"
        )
        await expect(consent).to_have_count(1)
        await consent.get_by_role("button", name="Don't send").click()
        await expect(answer).to_have_text("refused: the person did not send the view's message")
        await expect(consent).to_have_count(0)

        # Three proposals a minute at most: the fourth is refused without asking the person.
        for _ in range(2):
            await view.locator("#ask").click()
            await expect(consent).to_contain_text("asked from the view about Lima")
            await consent.get_by_role("button", name="Don't send").click()
            await expect(consent).to_have_count(0)
        await view.locator("#ask").click()
        await expect(answer).to_have_text(
            "refused: this view proposed 3 messages in the last minute; try again later"
        )
        await expect(consent).to_have_count(0)

        # While a run is in flight, and while the thread waits for a person, a message is refused
        # before the person is asked (the rate bound would refuse it too: these checks come first).
        await say(page, 'sleep {"seconds": 3}')
        await expect(page.locator('[data-testid="mcp-progress"][data-status="running"]')).to_be_visible()
        await view.locator("#ask").click()
        await expect(answer).to_have_text("refused: a run of this thread is in progress")
        await expect(page.get_by_test_id("status")).to_have_attribute("data-loading", "false")
        await say(page, 'plain_echo {"text": "hold"}')
        await expect(page.get_by_test_id("review")).to_contain_text("plain_echo")
        await view.locator("#ask").click()
        await expect(answer).to_have_text("refused: the thread waits for a person's answer")
        await expect(consent).to_have_count(0)

        [thread] = await get_client(url=served.server.url).threads.search(limit=1)
        state = await get_client(url=served.server.url).threads.get_state(thread["thread_id"])
        humans = [m["content"] for m in state["values"]["messages"] if m["type"] == "human"]
        assert not [h for h in humans if "asked from the view" in str(h)], humans
        await browser.close()


@pytest.mark.timeout(120)
async def test_a_view_that_leaves_or_replaces_its_document_loses_the_bridge(served: Served) -> None:
    async with async_playwright() as playwright:
        browser, page = await _show_chart(playwright, served, "agent", "Bern")
        app = page.get_by_test_id("mcp-app")
        view = page.frame_locator('[data-testid="mcp-app"] iframe')

        # The view navigates its frame to a page of another server; that page asks the frame's
        # parent for the bridge (initialize, a tool call, a message, pings) and gets no answer.
        await view.locator("#leave").click()
        await expect(app).to_have_attribute("data-status", "navigated")
        await expect(view.locator("#sent")).to_have_text("12")
        await expect(view.locator("#answered")).to_have_text("0")
        assert f"{served.probe[0].rsplit(':', 1)[1]} /elsewhere" in served.probed
        assert "Elsewhere" not in served.log("apps")
        await expect(page.get_by_test_id("mcp-app-consent")).to_have_count(0)

        # The person may show the view again: a fresh copy of the document the server sent, with a
        # bridge of its own.
        await app.get_by_role("button", name="Show the view again").click()
        await expect(app).to_have_attribute("data-status", "ready")
        await expect(view.locator("#city")).to_have_text("Bern")

        # The fresh copy asks to open a link (the answer waits for the person), then writes that
        # page over its own document (no navigation: the host is told nothing and sees no new
        # load). Each message of the frame, and each answer to it, waits until the document in it
        # proves to be the copy the host made; this one cannot, so nothing is answered, the answer
        # to the view's own question is not posted to it either, and when the check goes
        # unanswered the bridge is closed.
        await view.locator("#link").click()
        consent = page.get_by_test_id("mcp-app-consent")
        await expect(consent).to_contain_text("/linked?from=view")
        await view.locator("#rewrite").click()
        await expect(view.locator("#sent")).to_have_text("12")
        await consent.get_by_role("button", name="Don't open").click()
        await expect(app).to_have_attribute("data-status", "navigated", timeout=30_000)
        await expect(view.locator("#answered")).to_have_text("0")
        await expect(view.locator("#stray")).to_have_text("-")
        assert "Elsewhere" not in served.log("apps")
        await app.get_by_role("button", name="Show the view again").click()
        await expect(app).to_have_attribute("data-status", "ready")
        await expect(view.locator("#city")).to_have_text("Bern")
        await browser.close()


@pytest.mark.timeout(120)
async def test_the_view_keeps_to_its_csp_and_gets_display_modes_and_downloads_but_no_sampling(
    served: Served,
) -> None:
    async with async_playwright() as playwright:
        browser, page = await _show_chart(playwright, served, "agent", "Rome")
        app = page.get_by_test_id("mcp-app")
        view = page.frame_locator('[data-testid="mcp-app"] iframe')
        out = view.locator("#out")
        undeclared = served.probe[1]

        # Its CSP lets it load from and connect to the origin it declared, and nothing else.
        await view.locator("#probe").click()
        await expect(out).to_have_text(
            "img declared: loaded, img undeclared: failed, "
            "fetch declared: fetched 200, fetch undeclared: failed"
        )
        violations = view.locator("#violations")
        await expect(violations).to_contain_text(f"img-src {undeclared}/probe/img")
        await expect(violations).to_contain_text(f"connect-src {undeclared}/probe/fetch")
        declared_port, undeclared_port = (o.rsplit(":", 1)[1] for o in served.probe)
        assert {f"{declared_port} /probe/img", f"{declared_port} /probe/fetch"} <= set(served.probed)
        assert not [r for r in served.probed if r.startswith(undeclared_port)], served.probed

        # Display modes: offered in the host context; full screen fills the page until the
        # person leaves it, and the view is told.
        await expect(view.locator("#modes")).to_have_text("inline,fullscreen,pip")
        await expect(view.locator("#mode")).to_have_text("inline")
        await view.locator("#fullscreen").click()
        await expect(out).to_have_text("mode: fullscreen")
        await expect(view.locator("#mode")).to_have_text("fullscreen")
        await expect(app).to_have_attribute("data-display-mode", "fullscreen")
        assert await app.bounding_box() == {"x": 0, "y": 0, "width": 900, "height": 700}
        await app.get_by_role("button", name="Exit full screen").click()
        await expect(view.locator("#mode")).to_have_text("inline")
        await expect(app).to_have_attribute("data-display-mode", "inline")
        # Picture in picture: a small box at the bottom right, over the chat.
        await view.locator("#pip").click()
        await expect(out).to_have_text("mode: pip")
        await expect(app).to_have_attribute("data-display-mode", "pip")
        assert await app.bounding_box() == {
            "x": 900 - 16 - 360,
            "y": 700 - 16 - 280,
            "width": 360,
            "height": 280,
        }
        await app.get_by_role("button", name="Back to the chat").click()
        await expect(view.locator("#mode")).to_have_text("inline")

        # A download goes through the host, once the person said yes, under a safe name.
        await view.locator("#download").click()
        consent = page.get_by_test_id("mcp-app-consent")
        await expect(consent).to_contain_text("Rome temps_v1.csv")
        async with page.expect_download() as info:
            await consent.get_by_role("button", name="Save", exact=True).click()
        download = await info.value
        assert download.suggested_filename == "Rome temps_v1.csv"
        assert Path(await download.path()).read_text() == "city,temp\nRome,11\n"
        await expect(out).to_have_text("saved")
        await view.locator("#download-big").click()
        await expect(out).to_have_text("refused: the file is larger than 5000000 bytes")
        await expect(consent).to_have_count(0)

        # Sampling is refused: this deployment did not opt in.
        await view.locator("#sample").click()
        await expect(out).to_have_text(
            "refused: sampling/createMessage is not offered to views by this deployment"
        )
        await browser.close()


@pytest.mark.timeout(120)
async def test_a_view_gets_no_program_and_no_link_or_permission_the_person_did_not_allow(
    served: Served,
) -> None:
    async with async_playwright() as playwright:
        browser, page = await _show_chart(playwright, served, "agent", "Bergen")
        app = page.get_by_test_id("mcp-app")
        view = page.frame_locator('[data-testid="mcp-app"] iframe')
        out = view.locator("#out")
        consent = page.get_by_test_id("mcp-app-consent")

        # A file that could run as a program is refused, however its name hides its extension.
        await view.locator("#download-exe").click()
        await expect(out).to_have_text(
            "refused: the file report.pdf .exe could run as a program: it is not saved"
        )
        await expect(consent).to_have_count(0)

        # A link is opened only once the person saw where it goes and said yes.
        linked = f"{served.probe[0]}/linked?from=view"
        await view.locator("#link").click()
        await expect(consent).to_have_attribute("data-kind", "link")
        await expect(consent).to_contain_text(linked)
        await consent.get_by_role("button", name="Don't open").click()
        await expect(out).to_have_text("not opened")
        assert not [r for r in served.probed if "/linked" in r], served.probed
        await view.locator("#link").click()
        async with page.context.expect_page() as opened:
            await consent.get_by_role("button", name="Open", exact=True).click()
        tab = await opened.value
        await tab.wait_for_load_state()
        assert tab.url == linked
        await expect(out).to_have_text("opened")

        # The permission the chart declares (clipboard-write) is its frame's only once the person
        # allowed it (the view is shown again with it); camera and full screen it never gets.
        asked = page.get_by_test_id("mcp-app-permissions")
        await expect(asked).to_contain_text("clipboard-write")
        frame = app.locator("iframe")
        assert "clipboard-write 'none'" in str(await frame.get_attribute("allow")).split("; ")
        await view.locator("#policy").click()
        await expect(out).to_have_text("camera=false,clipboard-write=false,fullscreen=false")
        await asked.get_by_role("button", name="Allow", exact=True).click()
        await expect(asked).to_have_count(0)
        await expect(frame).to_have_attribute("allow", re.compile(r"(^|; )clipboard-write \*(;|$)"))
        allow = str(await frame.get_attribute("allow")).split("; ")
        assert "camera 'none'" in allow and "fullscreen 'none'" in allow
        await expect(view.locator("#city")).to_have_text("Bergen")
        await view.locator("#policy").click()
        await expect(out).to_have_text("camera=false,clipboard-write=true,fullscreen=false")
        await browser.close()


async def _thread(served: Served, user: str) -> str:
    thread = await served.client(user).threads.create()
    return str(thread["thread_id"])


@pytest.mark.parametrize("server", APPS_SERVERS)
@pytest.mark.timeout(60)
async def test_a_view_may_call_only_its_servers_tools_for_views(served: Served, server: str) -> None:
    tid = await _thread(served, "alice")
    call = {"server": server, "method": "tools/call", "assistant_id": "agent"}

    answer = await served.route(
        "alice",
        "POST",
        f"{tid}/call",
        {**call, "params": {"name": "refresh_chart", "arguments": {"city": "Rome"}}},
    )
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    assert (
        result["structuredContent"] == {"city": "Rome", "temps": [11, 14, 9]} and result["isError"] is False
    )
    assert "refresh_chart called: city='Rome'" in served.log(server)

    # A model-only tool is refused before any run; so is a tool the server does not have.
    for name in ("plain_echo", "no_such_tool"):
        answer = await served.route(
            "alice", "POST", f"{tid}/call", {**call, "params": {"name": name, "arguments": {"text": "x"}}}
        )
        assert answer.status_code == 403, answer.text
        assert "may not call" in answer.json()["error"]
    answer = await served.route(
        "alice", "POST", f"{tid}/call", {**call, "server": "nope", "params": {"name": "x"}}
    )
    assert answer.status_code == 404

    # resources/read goes through the thread's session of the view's server.
    answer = await served.route(
        "alice",
        "POST",
        f"{tid}/call",
        {"server": server, "method": "resources/read", "params": {"uri": "ui://apps/chart.html"}},
    )
    assert answer.status_code == 200, answer.text
    assert "chart v" in answer.json()["result"]["contents"][0]["text"]

    # The model's conversation is untouched.
    state = await served.client("alice").threads.get_state(tid)
    assert state["values"].get("messages", []) == []


@pytest.mark.parametrize("server", APPS_SERVERS)
@pytest.mark.timeout(60)
async def test_a_view_call_that_needs_approval_waits_for_the_threads_interrupt(
    served: Served, server: str
) -> None:
    client = served.client("alice")
    tid = await _thread(served, "alice")
    body = {
        "server": server,
        "method": "tools/call",
        "assistant_id": "viewed",
        "params": {"name": "refresh_chart", "arguments": {"city": "Lima"}},
    }

    answer = await served.route("alice", "POST", f"{tid}/call", body)
    assert answer.status_code == 202, answer.text
    call_id = answer.json()["call_id"]
    assert answer.json()["status"] == "pending"
    thread = await client.threads.get(tid)
    assert thread["status"] == "interrupted"
    [interrupt] = [i for items in thread["interrupts"].values() for i in items]
    assert interrupt["value"]["type"] == "tool_approval" and interrupt["value"]["server"] == server
    assert interrupt["value"]["args"] == {"city": "Lima"}
    assert "city='Lima'" not in served.log(server)

    # Still pending; another view call is refused while the person has not answered.
    answer = await served.route("alice", "GET", f"{tid}/calls/{call_id}")
    assert answer.status_code == 202
    answer = await served.route("alice", "POST", f"{tid}/call", body)
    assert answer.status_code == 409

    # The person approves, like any approval; the view's call then has its result.
    await client.runs.wait(tid, "viewed", command={"resume": {"type": "approve"}})
    answer = await served.route("alice", "GET", f"{tid}/calls/{call_id}")
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["structuredContent"]["city"] == "Lima"
    assert "refresh_chart called: city='Lima'" in served.log(server)


@pytest.mark.timeout(60)
async def test_a_call_for_a_thread_the_caller_cannot_access_is_refused(served: Served) -> None:
    tid = await _thread(served, "alice")
    body = {
        "server": "apps",
        "method": "tools/call",
        "assistant_id": "agent",
        "params": {"name": "refresh_chart", "arguments": {"city": "Quito"}},
    }

    answer = await served.route("mallory", "POST", f"{tid}/call", body)
    assert answer.status_code == 404, answer.text
    answer = await served.route(
        "mallory",
        "POST",
        f"{tid}/call",
        {**body, "method": "resources/read", "params": {"uri": "ui://apps/chart.html"}},
    )
    assert answer.status_code == 404
    answer = await served.route("mallory", "GET", f"{tid}/calls/mcp-app-call:{'0' * 32}")
    assert answer.status_code == 404
    answer = await served.route("not a user", "POST", f"{tid}/call", body)
    assert answer.status_code == 401
    assert "city='Quito'" not in served.log("apps")

    # Its owner may; a malformed request is refused before anything runs.
    answer = await served.route("alice", "POST", f"{tid}/call", body)
    assert answer.status_code == 200, answer.text
    answer = await served.route("alice", "POST", f"{tid}/call", {**body, "method": "tools/list"})
    assert answer.status_code == 400
    answer = await served.route("alice", "POST", f"{tid}%3Fx/call", body)
    assert answer.status_code == 404


@pytest.mark.timeout(60)
async def test_a_view_call_never_drops_the_question_of_a_run_it_waited_for(served: Served) -> None:
    client = served.client("alice")
    tid = await _thread(served, "alice")
    # The agent's run will stop at an approval of plain_echo (tests/browser/viewed.py).
    message = {"type": "human", "content": 'plain_echo {"text": "hold"}'}
    await client.runs.create(tid, "viewed", input={"messages": [message]})
    body = {
        "server": "apps",
        "method": "tools/call",
        "assistant_id": "viewed",
        "params": {"name": "show_chart", "arguments": {"city": "Busy"}},
    }
    # The view's call waits for that run, then is refused: the thread waits for a person.
    answer = await served.route("alice", "POST", f"{tid}/call", body)
    assert answer.status_code == 409, answer.text
    thread = await client.threads.get(tid)
    assert thread["status"] == "interrupted"
    [interrupt] = [i for items in thread["interrupts"].values() for i in items]
    assert interrupt["value"]["mcp_tool"] == "plain_echo"  # the question still stands

    # Once answered, the view's call runs.
    await client.runs.wait(tid, "viewed", command={"resume": {"type": "approve"}})
    answer = await served.route("alice", "POST", f"{tid}/call", body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["structuredContent"]["city"] == "Busy"
