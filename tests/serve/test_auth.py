"""Two users of one served graph over streamable HTTP with a token verifier: each one's threads,
questions and conversations are their own; without a token the server refuses the request and
points at its protected-resource metadata."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import SimpleNamespace
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.extension import advertise
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from langgraph_mcp._session.taskwire import STATE, TaskParams, TaskRequest, TaskState
from langgraph_mcp.serve import TASKS_EXTENSION, GraphServer, ServeOptions
from langgraph_mcp.serve._calls import Call
from langgraph_mcp.serve._tasks import Run
from langgraph_mcp.serve._threads import task_id
from tests.conftest_servers import serve_in_loop
from tests.helpers import free_port
from tests.servers import served_graphs

pytestmark = pytest.mark.slow

TOKENS = {
    "tok-alice": AccessToken(token="tok-alice", client_id="app", scopes=["run"], subject="alice"),
    "tok-bob": AccessToken(token="tok-bob", client_id="app", scopes=["run"], subject="bob"),
}


class Tokens:
    async def verify_token(self, token: str) -> AccessToken | None:
        return TOKENS.get(token)


async def _no_answer(ctx: Any, params: Any) -> types.ElicitResult:
    raise AssertionError("the test drives the rounds itself")


@asynccontextmanager
async def _client(url: str, token: str) -> AsyncIterator[Client]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    transport = streamable_http_client(url, http_client=http)
    extensions = [advertise(TASKS_EXTENSION)]
    async with http, Client(transport, elicitation_callback=_no_answer, extensions=extensions) as c:
        yield c


def _as(token: str) -> Any:
    """A request as the server sees it once ``token`` was verified."""
    return SimpleNamespace(scope={"user": SimpleNamespace(access_token=TOKENS[token])})


async def _task_state(client: Client, task: str) -> TaskState:
    request = TaskRequest(method="tasks/get", params=TaskParams(task_id=task))
    return await client.session.send_request(request, STATE)


async def test_two_users_are_isolated_over_http() -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    auth = AuthSettings(
        issuer_url="https://auth.example.com",
        resource_server_url=f"{base}/mcp",
        required_scopes=["run"],
        validate_token_resource=False,
    )
    server = GraphServer(
        [served_graphs.writer, served_graphs.notes],
        token_verifier=Tokens(),
        auth=auth,
        options=ServeOptions(tasks="auto", task_after=30),
    )
    async with serve_in_loop(server, port=port) as url:
        async with httpx2.AsyncClient() as plain:
            refused = await plain.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "server/discover"})
            assert refused.status_code == 401
            assert "oauth-protected-resource" in refused.headers["www-authenticate"]
            metadata = (await plain.get(f"{base}/.well-known/oauth-protected-resource/mcp")).json()
            assert metadata["resource"] == f"{base}/mcp"
            assert metadata["authorization_servers"] == ["https://auth.example.com"]

        async with _client(url, "tok-alice") as alice, _client(url, "tok-bob") as bob:
            # the same conversation name is a different thread for each user
            await alice.call_tool("notes", {"note": "a1", "thread": "shared"})
            mine = await alice.call_tool("notes", {"note": "a2", "thread": "shared"})
            theirs = await bob.call_tool("notes", {"note": "b1", "thread": "shared"})
            assert mine.structured_content == {"note": "a2", "notes": ["a1", "a2"]}
            assert theirs.structured_content == {"note": "b1", "notes": ["b1"]}

            # alice's question cannot be answered by bob, even with her requestState
            asked = await alice.session.call_tool("writer", {"topic": "keys"}, allow_input_required=True)
            assert isinstance(asked, types.InputRequiredResult)
            assert asked.input_requests is not None and asked.request_state is not None
            answers = {
                k: types.ElicitResult(action="accept", content={"answer": "Bob"})
                for k in asked.input_requests
            }
            replayed: Any
            try:
                replayed = await bob.session.call_tool(
                    "writer",
                    {"topic": "keys"},
                    input_responses=answers,
                    request_state=asked.request_state,
                    allow_input_required=True,
                )
            except Exception as exc:  # the SDK refuses a requestState sealed for another principal
                replayed = exc
            assert not isinstance(replayed, types.CallToolResult) or replayed.is_error
            answers = {
                k: types.ElicitResult(action="accept", content={"answer": "Alice"})
                for k in asked.input_requests
            }
            done = await alice.session.call_tool(
                "writer",
                {"topic": "keys"},
                input_responses=answers,
                request_state=asked.request_state,
                allow_input_required=True,
            )
            assert isinstance(done, types.CallToolResult) and not done.is_error
            assert done.structured_content == {"topic": "keys", "answer": "Alice writes about keys"}

            # alice's task: hers to poll, not found for bob
            call = server.begin("writer", {"topic": "tasks"}, _as("tok-alice"), None)
            assert isinstance(call, Call)
            run = Run(task_id(call.thread, "writer:1"), call)
            server.runs.start(run, call.payload)
            assert run.job is not None
            await asyncio.wait({run.job})
            assert (await _task_state(alice, run.task_id)).status == "input_required"
            with pytest.raises(MCPError, match="Task not found"):
                await _task_state(bob, run.task_id)
