"""The client the official MCP conformance suite (client mode) drives.

Usage: ``python tests/conformance/client.py <server-url>``. The suite appends the URL of the
scenario's server to the command, names the scenario in ``MCP_CONFORMANCE_SCENARIO`` and passes
any credentials the scenario provisions as JSON in ``MCP_CONFORMANCE_CONTEXT``.

Everything MCP goes through ``langgraph_mcp``'s public API: the server is a connection of an
``MCPPool`` (its ``auth`` option carries the OAuth provider), tools come from ``load_mcp_tools``
and are called with ``MCPTool.ainvoke``, and elicitation is answered through a LangGraph graph
whose ``MCPToolNode`` interrupts. The OAuth providers are the MCP SDK's own ``httpx2.Auth``
classes, which is what ``auth`` is documented to take; the code here only stands in for the
person and the browser (following the authorization redirect) and, for cross-app access, for
the enterprise identity provider's first leg, which the SDK leaves to the deployment.

``python tests/conformance/client.py --serve <socket>`` keeps one interpreter with all of this
imported and forks it per scenario for ``launch.py`` (see there); ``run.py`` uses that.

Exit status: 0 when the scenario's MCP operations succeeded, 1 otherwise (the suite judges
conformance from what its server saw, not from this status).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, TokenStorage
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from langgraph_mcp import MCPPool, MCPTool, MCPToolNode, load_mcp_tools
from langgraph_mcp.auth import DPoPAuth, JWTBearerOAuthProvider
from langgraph_mcp.elicitation import accept, resume_elicitations
from langgraph_mcp.skills import MCPSkills, MCPSkillsMiddleware
from langgraph_mcp.testing import ScriptedChatModel

log = logging.getLogger("conformance-client")

SERVER = "conformance"
"""The name the scenario's server has in the pool's configuration."""

CONNECT_TIMEOUT = 50.0
"""Seconds to connect, OAuth flow included. The suites start every scenario at once and give
each 60 s: on two busy cores an authorization flow's dozen requests can take longer than the
package's default 30 s."""

REDIRECT_URI = "http://localhost:3000/callback"
"""Where the authorization server sends the browser back to; nothing listens there: the
stand-in browser reads the code off the redirect instead of following it."""

CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""The client ID metadata document URL offered to servers that support them (the suite's
authorization server accepts this one)."""


class MemoryTokens(TokenStorage):
    """Tokens and client registration for one run, kept in memory."""

    def __init__(self, client_info: OAuthClientInformationFull | None = None) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info = client_info

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class Browser:
    """Stands in for the user agent of the authorization-code flow.

    ``open`` is the provider's redirect handler: it requests the authorization URL (the suite's
    authorization server approves at once and redirects) and keeps the redirect's query;
    ``callback`` hands its ``code``, ``state`` and ``iss`` back to the provider.
    """

    def __init__(self) -> None:
        self.query: dict[str, list[str]] = {}

    async def open(self, authorization_url: str) -> None:
        async with httpx2.AsyncClient(follow_redirects=False) as http:
            response = await http.get(authorization_url)
        location = response.headers.get("location")
        if response.status_code not in (301, 302, 303, 307, 308) or not location:
            raise RuntimeError(f"authorization endpoint answered {response.status_code} without a redirect")
        self.query = parse_qs(urlsplit(location).query)

    async def callback(self) -> AuthorizationCodeResult:
        def one(name: str) -> str | None:
            values = self.query.get(name)
            return values[0] if values else None

        code = one("code")
        if code is None:
            raise RuntimeError(f"the authorization redirect carried no code: {self.query.get('error')}")
        return AuthorizationCodeResult(code=code, state=one("state"), iss=one("iss"))


def context() -> dict[str, Any]:
    """The scenario's provisioned values (``MCP_CONFORMANCE_CONTEXT``), or ``{}``."""
    raw = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    value = json.loads(raw) if raw else {}
    if not isinstance(value, dict):
        raise ValueError("MCP_CONFORMANCE_CONTEXT is not a JSON object")
    return value


def authorization_code_provider(url: str, client_info: OAuthClientInformationFull | None = None) -> Any:
    """The SDK's authorization-code provider (PKCE, discovery, registration) for ``url``."""
    browser = Browser()
    return OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="langgraph-mcp-conformance",
            redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]  # (pydantic coerces the str)
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        ),
        storage=MemoryTokens(client_info),
        redirect_handler=browser.open,
        callback_handler=browser.callback,
        client_metadata_url=CLIENT_METADATA_URL,
    )


def pre_registered_provider(url: str) -> Any:
    ctx = context()
    info = OAuthClientInformationFull(
        client_id=ctx["client_id"],
        client_secret=ctx["client_secret"],
        redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]
        # A pre-registered client knows how it authenticates; the SDK sends no secret for a
        # record without a method (it does not apply RFC 7591's client_secret_basic default).
        token_endpoint_auth_method="client_secret_basic",
    )
    return authorization_code_provider(url, info)


def client_credentials_basic_provider(url: str) -> Any:
    ctx = context()
    return ClientCredentialsOAuthProvider(
        server_url=url,
        storage=MemoryTokens(),
        client_id=ctx["client_id"],
        client_secret=ctx["client_secret"],
        token_endpoint_auth_method="client_secret_basic",
    )


def client_credentials_jwt_provider(url: str) -> Any:
    ctx = context()
    signer = SignedJWTParameters(
        issuer=ctx["client_id"],
        subject=ctx["client_id"],
        signing_key=ctx["private_key_pem"],
        signing_algorithm=ctx.get("signing_algorithm") or "ES256",
    )
    return PrivateKeyJWTOAuthProvider(
        server_url=url,
        storage=MemoryTokens(),
        client_id=ctx["client_id"],
        assertion_provider=signer.create_assertion_provider(),
    )


async def cross_app_access_provider(url: str) -> Any:
    """SEP-990: the ID token is exchanged at the identity provider for an ID-JAG (the
    deployment's part, done here by hand), which the SDK's provider presents to the MCP
    authorization server (learned from the server's protected resource metadata)."""
    ctx = context()
    async with httpx2.AsyncClient() as http:
        split = urlsplit(url)
        prm_url = urljoin(url, "/.well-known/oauth-protected-resource" + split.path)
        prm = (await http.get(prm_url)).raise_for_status().json()
        issuer = prm["authorization_servers"][0]

    async def id_jag(audience: str, resource: str) -> str:
        async with httpx2.AsyncClient() as http:
            response = await http.post(
                ctx["idp_token_endpoint"],
                data={
                    "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                    "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                    "audience": audience,
                    "resource": resource,
                    "subject_token": ctx["idp_id_token"],
                    "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
                    "client_id": ctx["idp_client_id"],
                },
            )
        token = response.raise_for_status().json()["access_token"]
        assert isinstance(token, str)
        return token

    return IdentityAssertionOAuthProvider(
        server_url=url,
        storage=MemoryTokens(),
        client_id=ctx["client_id"],
        client_secret=ctx["client_secret"],
        issuer=issuer,
        assertion_provider=id_jag,
        token_endpoint_auth_method="client_secret_basic",
    )


async def call_tool(tool: MCPTool, args: dict[str, Any]) -> str:
    """Call ``tool`` as a graph would (a tool call in, a ``ToolMessage`` out); raise on error."""
    message = await tool.ainvoke({"name": tool.name, "args": args, "id": "call-1", "type": "tool_call"})
    assert isinstance(message, ToolMessage)
    if message.status == "error":
        raise RuntimeError(f"{tool.name} failed: {message.content}")
    return str(message.content)


async def list_and_call(url: str, auth: Any = None, calls: dict[str, dict[str, Any]] | None = None) -> None:
    """Connect, list the tools, and call each named tool the server offers with its arguments."""
    server: dict[str, Any] = {"url": url, "sse_fallback": False, "connect_timeout": CONNECT_TIMEOUT}
    if auth is not None:
        server["auth"] = auth
    async with MCPPool({SERVER: server}) as pool:
        tools = {tool.name: tool for tool in await load_mcp_tools(pool)}
        log.info("tools: %s", sorted(tools))
        for name, args in (calls or {}).items():
            if name in tools:
                log.info("%s -> %s", name, await call_tool(tools[name], args))


async def answer_in_graph(
    node: MCPToolNode, graph: Any, thread: str, name: str, content: dict[str, Any]
) -> str:
    """Call ``name`` through ``graph`` (whose ``MCPToolNode`` turns the server's questions into
    interrupts) and accept every question with ``content``; the call's result text."""
    config: Any = {"configurable": {"thread_id": thread}}
    call = {"name": name, "args": {}, "id": f"{thread}-1", "type": "tool_call"}
    out = await graph.ainvoke({"messages": [AIMessage("", tool_calls=[call])]}, config)
    rounds = 0
    while pending := out.get("__interrupt__"):
        rounds += 1
        if rounds > 3:
            raise RuntimeError("the server kept asking")
        out = await graph.ainvoke(
            resume_elicitations(pending, lambda p: {r["key"]: accept(content) for r in p["requests"]}), config
        )
    result = out["messages"][-1]
    assert isinstance(result, ToolMessage)
    if result.status == "error":
        raise RuntimeError(f"{name} failed: {result.content}")
    return str(result.content)


def tool_graph(node: MCPToolNode) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node(node)
    builder.add_edge(START, "tools")
    return builder.compile(checkpointer=InMemorySaver())


async def elicitation_defaults(url: str) -> None:
    """The person accepts the server's question without filling anything in, so the schema's
    defaults are what the server gets."""
    node = MCPToolNode({SERVER: {"url": url, "sse_fallback": False, "connect_timeout": CONNECT_TIMEOUT}})
    async with node:
        result = await answer_in_graph(
            node, tool_graph(node), "defaults", "test_client_elicitation_defaults", {}
        )
    log.info("result: %s", result)


async def echo_schema(url: str) -> None:
    """Send the focal tool's input schema, as the package gives it to a model, back through the
    server's echo tool: the server checks which JSON Schema keywords survived."""
    async with MCPPool(
        {SERVER: {"url": url, "sse_fallback": False, "connect_timeout": CONNECT_TIMEOUT}}
    ) as pool:
        tools = {tool.name: tool for tool in await load_mcp_tools(pool)}
        schema = tools["json_schema_2020_12_tool"].args_schema
        log.info("echo -> %s", await call_tool(tools["json_schema_echo"], {"schema": schema}))


async def request_state(url: str) -> None:
    """Multi-round tool calls (2026-07-28): a round's ``requestState`` goes back unchanged, none
    is invented when the server sent none, another call made while one waits for its answer
    carries nothing of it, and a result without ``resultType`` is complete."""
    node = MCPToolNode({SERVER: {"url": url, "sse_fallback": False, "connect_timeout": CONNECT_TIMEOUT}})
    graph = tool_graph(node)
    async with node:
        tools = {tool.name: tool for tool in await load_mcp_tools(node.pool)}
        config: Any = {"configurable": {"thread_id": "echo"}}
        call = {"name": "test_mrtr_echo_state", "args": {}, "id": "echo-1", "type": "tool_call"}
        out = await graph.ainvoke({"messages": [AIMessage("", tool_calls=[call])]}, config)
        pending = out.get("__interrupt__")
        if not pending:
            raise RuntimeError("test_mrtr_echo_state did not ask")
        # While that call waits for its person, another tool is called on the same connection.
        log.info("unrelated -> %s", await call_tool(tools["test_mrtr_unrelated"], {}))
        out = await graph.ainvoke(
            resume_elicitations(
                pending, lambda p: {r["key"]: accept({"confirmed": True}) for r in p["requests"]}
            ),
            config,
        )
        log.info("echo -> %s", out["messages"][-1].content)
        log.info(
            "no state -> %s",
            await answer_in_graph(node, graph, "nostate", "test_mrtr_no_state", {"confirmed": True}),
        )
        log.info(
            "no type -> %s", await answer_in_graph(node, graph, "notype", "test_mrtr_no_result_type", {})
        )


def auth_flow(make: Callable[[str], Any]) -> Callable[[str], Coroutine[Any, Any, None]]:
    async def run(url: str) -> None:
        await list_and_call(url, make(url), {"test-tool": {}})

    return run


def jwt_bearer_provider(url: str) -> Any:
    """Workload identity: the scenario's signed workload JWT traded for a token (RFC 7523)."""
    ctx = context()
    return JWTBearerOAuthProvider(url, MemoryTokens(), ctx["client_id"], ctx["valid_jwt"])


async def cross_app_access(url: str) -> None:
    await list_and_call(url, await cross_app_access_provider(url), {"test-tool": {}})


async def context_calls(url: str) -> None:
    """Call the tools the scenario names in its context (``toolCalls``), with its arguments."""
    calls = {call["name"]: call.get("arguments") or {} for call in context().get("toolCalls", [])}
    await list_and_call(url, calls=calls)


async def skills(url: str) -> None:
    """An agent offered the server's skills (``MCPSkillsMiddleware``): for ``no-prefetch`` the model
    answers without loading any; otherwise it loads the first skill, then asks for each file that
    skill lists (a file is read only once its SKILL.md checked out against the listing)."""
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    server: dict[str, Any] = {"url": url, "sse_fallback": False, "connect_timeout": CONNECT_TIMEOUT}
    async with MCPPool({SERVER: server}) as pool:
        found = await MCPSkills(pool).list()
        log.info("skills: %s", [s.id for s in found])
        turns: list[Any] = ["No skill is needed."]
        if not scenario.endswith("no-prefetch") and found:
            skill = found[0]
            files = [f.path for f in skill.files or () if f.path != "SKILL.md"]
            reads = [("load_skill", {"skill": skill.id, "file": p}, f"file-{i}") for i, p in enumerate(files)]
            turns = [[("load_skill", {"skill": skill.id}, "load")], reads or "Loaded.", "Done."]
        agent = create_agent(
            ScriptedChatModel(turns),
            middleware=[MCPSkillsMiddleware(pool)],
            checkpointer=InMemorySaver(),
        )
        out = await agent.ainvoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "t"}})
        answers = [m for m in out["messages"] if isinstance(m, ToolMessage)]
        for answer in answers:
            log.info("%s %s: %s", answer.name, answer.status, str(answer.content)[:300])
        if any(a.status == "error" for a in answers):
            raise RuntimeError("a skill or one of its files was refused")


SCENARIOS: dict[str, Callable[[str], Coroutine[Any, Any, None]]] = {
    "initialize": lambda url: list_and_call(url),
    "tools_call": lambda url: list_and_call(url, calls={"add_numbers": {"a": 5, "b": 3}}),
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": lambda url: list_and_call(url, calls={"test_reconnection": {}}),
    "auth/pre-registration": auth_flow(pre_registered_provider),
    "auth/client-credentials-basic": auth_flow(client_credentials_basic_provider),
    "auth/client-credentials-jwt": auth_flow(client_credentials_jwt_provider),
    "auth/wif-jwt-bearer": auth_flow(jwt_bearer_provider),
    "auth/dpop": auth_flow(lambda url: DPoPAuth(authorization_code_provider(url))),
    "auth/dpop-nonce": auth_flow(lambda url: DPoPAuth(authorization_code_provider(url))),
    "auth/cross-app-access-complete-flow": cross_app_access,
    "auth/enterprise-managed-authorization": cross_app_access,
    "request-metadata": lambda url: list_and_call(url),
    "json-schema-ref-no-deref": lambda url: list_and_call(url),
    "http-standard-headers": lambda url: list_and_call(
        url, calls={"test_headers": {}, "my-hyphenated-tool": {}}
    ),
    "http-custom-headers": context_calls,
    "http-invalid-tool-headers": lambda url: list_and_call(url, calls={"valid_tool": {"region": "us-west1"}}),
    "sep-2322-client-request-state": request_state,
    "json-schema-2020-12-preservation": echo_schema,
    "sep-2640-client-no-prefetch": skills,
    "sep-2640-client-verify-digest": skills,
    "sep-2640-client-verify-size": skills,
    "sep-2640-client-verify-frontmatter": skills,
}
"""Scenario name -> what the client does; other ``auth/*`` scenarios run the plain
authorization-code flow."""


def handler(scenario: str) -> Callable[[str], Coroutine[Any, Any, None]]:
    if scenario in SCENARIOS:
        return SCENARIOS[scenario]
    if scenario.startswith("auth/"):
        return auth_flow(authorization_code_provider)
    raise SystemExit(f"unknown scenario {scenario!r}")


def serve(path: str) -> None:
    """Serve ``launch.py`` on the Unix socket ``path``: fork per request, run the scenario in
    the child on the launcher's own stdin/stdout/stderr and send back its exit status.

    The parent has only imported modules (no threads, no event loop), so each child starts as
    clean as a new interpreter would, minus the import time.
    """
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(path)
        listener.listen(64)
        print("ready", flush=True)
        while True:
            conn, _ = listener.accept()
            if os.fork() == 0:
                listener.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                status = 1
                try:
                    status = serve_one(conn)
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(status)
            conn.close()


def serve_one(conn: socket.socket) -> int:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    while chunk := conn.recv(1 << 16):
        data += chunk
    request = json.loads(data)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    for name in ("MCP_CONFORMANCE_SCENARIO", "MCP_CONFORMANCE_CONTEXT", "MCP_CONFORMANCE_PROTOCOL_VERSION"):
        os.environ.pop(name, None)
    os.environ.update(request["env"])
    status = main(request["argv"])
    sys.stdout.flush()
    sys.stderr.flush()
    conn.sendall(bytes([status]))
    return status


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "--serve":
        serve(argv[2])
        return 0
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    if len(argv) != 2:
        print("usage: client.py <server-url>  (scenario in MCP_CONFORMANCE_SCENARIO)", file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    run = handler(scenario)
    try:
        asyncio.run(run(argv[1]))
    except Exception:
        log.exception("scenario %s failed", scenario)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
