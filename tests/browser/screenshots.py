"""Take the progress bar screenshots of docs/how-to/progress.md (docs/assets/progress-*.png).

Starts ``langgraph dev`` with the bundled graphs and the scripted model, asks the agent for a
long ``count_primes`` call in the chat page (headless Chromium), and photographs the page while
the call runs and once it is done::

    uv run python -m tests.browser.screenshots
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from pathlib import Path
from urllib.parse import urlencode

from playwright.async_api import async_playwright, expect

from tests.browser.test_chat_ui import CHROMIUM, page_server, say
from tests.deploy.test_langgraph_dev import mcp_config
from tests.langgraph_server import REPO_ROOT, langgraph_dev, ui_bundle

ASSETS = REPO_ROOT / "docs" / "assets"


async def main() -> None:
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        env = {"LANGGRAPH_MCP_CONFIG": str(mcp_config(folder)), "LANGGRAPH_MCP_MODEL": "scripted"}
        workdir = folder / "server"
        config = REPO_ROOT / "langgraph.json"
        with langgraph_dev(workdir, config, env, ui=True) as server, page_server(server.url) as url:
            await asyncio.to_thread(ui_bundle, workdir, "agent")
            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(executable_path=CHROMIUM)
                page = await browser.new_page(viewport={"width": 760, "height": 330})
                await page.goto(f"{url}?{urlencode({'apiUrl': server.url, 'assistantId': 'agent'})}")
                await say(page, 'count_primes {"limit": 40000}')
                bar = page.locator('[data-testid="mcp-progress"][data-status="running"]')
                await expect(bar).to_contain_text(re.compile(r"running · [1-9]\d{4} / 40000"), timeout=60_000)
                await page.locator("main").screenshot(path=str(ASSETS / "progress-running.png"))
                reply = page.get_by_test_id("message-ai").last.filter(has_text="count_primes: ")
                await expect(reply).to_be_visible(timeout=60_000)
                await page.locator("main").screenshot(path=str(ASSETS / "progress-done.png"))
                await browser.close()


if __name__ == "__main__":
    asyncio.run(main())
