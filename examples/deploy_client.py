"""Drive the deployed graphs (``graphs/``, ``langgraph.json``) with ``langgraph-sdk``.

Start the server first, then run this against it:

    LANGGRAPH_CLI_NO_ANALYTICS=1 LANGGRAPH_NO_VERSION_CHECK=true LANGSMITH_TRACING=false \\
        uv run langgraph dev --no-browser --port 2024
    uv run examples/deploy_client.py    # or --url http://127.0.0.1:PORT

The server's URL is ``--url``, else the environment variable ``LANGGRAPH_URL``, else
``http://127.0.0.1:2024``. (When port 2024 is taken, ``langgraph dev`` serves on another one and
logs ``Port 2024 is already in use, using port N instead.``: use that one.)

It runs the ``tools`` graph (progress from ``count_primes``, a question from ``cancel_order``,
answered "yes"), then the ``agent`` graph with the offline scripted model.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import Any

from langgraph_sdk import get_client

from langgraph_mcp.elicitation import accept, resume_elicitations


async def main(url: str) -> None:
    client = get_client(url=url)

    thread = (await client.threads.create())["thread_id"]
    calls = [
        {"name": "count_primes", "args": {"limit": 3000}},
        {"name": "cancel_order", "args": {"order_id": "A-1001"}},
    ]
    questions: list[dict[str, Any]] = []
    async for part in client.runs.stream(
        thread, "tools", input={"tool_calls": calls}, stream_mode=["updates", "custom"]
    ):
        if part.event == "custom" and part.data.get("type") == "mcp_progress":
            data = part.data
            print(f"progress {data['tool_name']}: {data['progress']:g}/{data['total']:g} {data['message']}")
        elif part.event == "updates" and "__interrupt__" in part.data:
            questions += part.data["__interrupt__"]

    for question in questions:
        for request in question["value"]["requests"]:
            print(f"question from {question['value']['server']}: {request['message']} -> yes")
    answer = resume_elicitations(questions, lambda q: {r["key"]: accept({"ok": True}) for r in q["requests"]})
    async for _part in client.runs.stream(thread, "tools", command={"resume": answer.resume}):
        pass
    state = await client.threads.get_state(thread)
    for message in state["values"]["messages"]:
        if message["type"] == "tool":
            print(f"result {message['name']}: {message['content']}")

    assistant = await client.assistants.create("agent", config={"configurable": {"model": "scripted"}})
    thread = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(
        thread,
        assistant["assistant_id"],
        input={
            "messages": [{"role": "user", "content": 'add {"a": 2, "b": 40}\nsearch_notes {"query": "milk"}'}]
        },
    )
    assert isinstance(out, dict)
    print("agent:", out["messages"][-1]["content"].replace("\n", " | "))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--url",
        default=os.environ.get("LANGGRAPH_URL", "http://127.0.0.1:2024"),
        help="the LangGraph server (default: $LANGGRAPH_URL, else http://127.0.0.1:2024)",
    )
    asyncio.run(main(parser.parse_args().url))
