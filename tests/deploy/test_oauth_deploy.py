"""Per-user OAuth on a real ``langgraph dev`` server, driven by ``langgraph-sdk``.

The server runs the bundled ``tools`` graph and ``graphs.app:app`` (which serves the OAuth
redirect route, ``/oauth/callback``) with LangGraph custom auth (``tests/browser/app_auth.py``:
a bearer token names the user; each thread is its creator's) applied to the custom routes too.
Its one MCP server is the sign-in fixture server (``tests/servers/signin.py``: a real
authorization server and an MCP server that takes its tokens), configured with per-user
``oauth`` once per protocol era. The browser is httpx.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import NotFoundError, PermissionDeniedError

from langgraph_mcp._oauth.records import TOKENS, Sealer
from tests.conftest_servers import spawn_http_server
from tests.deploy.signin import (
    KEY_ENV,
    authenticated,
    authorize,
    callback_of,
    calls,
    come_back,
    new_key,
    signin_servers,
    tampered,
    write_config,
)
from tests.deploy.test_langgraph_dev import interrupts_of, tool_results
from tests.helpers import check
from tests.langgraph_server import REPO_ROOT, langgraph_dev


def as_user(url: str, user: str) -> LangGraphClient:
    return get_client(url=url, headers={"Authorization": f"Bearer {user}"}, timeout=60)


async def call(client: LangGraphClient, thread: str, **kwargs: Any) -> list[tuple[str, Any]]:
    return [
        (part.event, part.data)
        async for part in client.runs.stream(thread, "tools", stream_mode=["updates"], **kwargs)
    ]


def asked(events: list[tuple[str, Any]]) -> dict[str, Any]:
    """The one ``mcp_authorization`` interrupt of a run, checked against the published schemas."""
    [raised] = interrupts_of(events)
    value: dict[str, Any] = raised["value"]
    check("authorization-interrupt", value)
    check("interrupt", value)
    assert (value["type"], value["reason"], value["scopes"]) == ("mcp_authorization", "connect", ["read"])
    return value


def whoami(p: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": f"{p}whoami", "args": {}, "id": "who"}]}


async def result(client: LangGraphClient, thread: str) -> dict[str, str]:
    return tool_results(await client.threads.get_state(thread))


@pytest.mark.slow
@pytest.mark.deploy
@pytest.mark.timeout(300)
async def test_each_user_connects_through_the_deployments_callback_route(tmp_path: Path) -> None:
    """Alice is asked, connects in her browser through the deployment's route, and her resumed
    run makes the call with her token; Bob is asked for himself, cannot touch Alice's thread, and
    only ever sends his own token; a changed ``state`` is refused. The 2025-11-25 server (the
    same server, pinned to that era) then takes Alice through the same steps."""
    started = time.monotonic()
    base = json.loads((REPO_ROOT / "langgraph.json").read_text())
    async with spawn_http_server("signin") as signin:
        config = write_config(tmp_path, signin_servers(signin))
        env = {"LANGGRAPH_MCP_CONFIG": str(config), **new_key()}
        with langgraph_dev(tmp_path / "server", authenticated(tmp_path, base), env) as server:
            alice, bob = as_user(server.url, "alice"), as_user(server.url, "bob")
            # Alice's call: no token yet, she is asked to connect.
            a1 = (await alice.threads.create())["thread_id"]
            question = asked(await call(alice, a1, input=whoami("")))
            assert (question["server"], question["tool_name"], question["tool_call_id"]) == (
                "mail", "whoami", "who",
            )  # fmt: skip
            assert question["url"].startswith(signin.removesuffix("/mcp") + "/authorize?")
            assert (await alice.threads.get(a1))["status"] == "interrupted"

            # Bob, on his own thread, is asked for himself; Alice's thread is not his.
            b1 = (await bob.threads.create())["thread_id"]
            bobs = asked(await call(bob, b1, input=whoami("")))
            assert bobs["url"] != question["url"]
            for refused in (
                bob.threads.get(a1),
                bob.threads.get_state(a1),
                bob.runs.create(a1, "tools", command={"resume": True}),
            ):
                with pytest.raises(NotFoundError):
                    await refused

            # Alice's browser signs in; the authorization server sends it to the deployment.
            callback = callback_of(await authorize(question["url"], "alice"), server.url)
            refused = await come_back(tampered(callback), "alice")
            assert (refused.status_code, "Connected" in refused.text) == (400, False), refused.text
            unknown = await come_back(callback, "not a user!")  # the deployment's auth refuses it
            assert unknown.status_code in (401, 403), unknown.text
            answer = await come_back(callback, "alice")
            assert (answer.status_code, "Connected" in answer.text) == (200, True), answer.text
            assert (await come_back(callback, "alice")).status_code == 400  # good once

            # Resumed through the SDK, the call is made again, with Alice's token.
            assert not interrupts_of(await call(alice, a1, command={"resume": True}))
            assert await result(alice, a1) == {"whoami": "signed in as alice"}
            # Her other threads use her token at once.
            a2 = (await alice.threads.create())["thread_id"]
            assert not interrupts_of(await call(alice, a2, input=whoami("")))
            assert await result(alice, a2) == {"whoami": "signed in as alice"}

            # Bob, still not connected: his resumed call fails, and sends no token.
            before = len(await calls(signin))
            await call(bob, b1, command={"resume": True})
            messages = (await bob.threads.get_state(b1))["values"]["messages"]
            [message] = [m for m in messages if m["type"] == "tool"]
            assert message["status"] == "error" and "has not connected" in message["content"], message
            assert [c["user"] for c in (await calls(signin))[before:]] == []
            # He connects for himself, on a new call, and gets his own identity.
            b2 = (await bob.threads.create())["thread_id"]
            bobs = asked(await call(bob, b2, input=whoami("")))
            answer = await come_back(callback_of(await authorize(bobs["url"], "bob"), server.url), "bob")
            assert answer.status_code == 200, answer.text
            assert not interrupts_of(await call(bob, b2, command={"resume": True}))
            assert await result(bob, b2) == {"whoami": "signed in as bob"}
            # Every call the MCP server took carried its own run's user's token.
            assert [(c["status"], c["user"]) for c in await calls(signin)] == [
                (200, "alice"), (200, "alice"), (200, "bob"),
            ]  # fmt: skip

            # The 2025-11-25 era: asked, connected, resumed.
            a3 = (await alice.threads.create())["thread_id"]
            question = asked(await call(alice, a3, input=whoami("legacy_")))
            assert (question["server"], question["tool_name"]) == ("legacy_mail", "legacy_whoami")
            callback = callback_of(await authorize(question["url"], "alice"), server.url)
            assert (await come_back(callback, "alice")).status_code == 200
            assert not interrupts_of(await call(alice, a3, command={"resume": True}))
            assert await result(alice, a3) == {"legacy_whoami": "signed in as alice"}

            # The server's request log: the callbacks the route read show the code blanked (one
            # the deployment's auth refused never reached the route, and is logged as sent);
            # no key in it, and no failure.
            log = server.log_text()
            assert "Traceback" not in log, log[-3000:]
            assert env["MCP_OAUTH_KEY"] not in log
            lines = [line for line in log.splitlines() if "GET /oauth/callback" in line]
            read = [line for line in lines if "status=401" not in line and "status=403" not in line]
            assert len(read) >= 2, lines  # the refused ones at least (a 200 is logged at INFO)
            assert all("query_string='code=-&state=" in line for line in read), read
    print(f"\nper-user OAuth on langgraph dev: {time.monotonic() - started:.1f} s")


def test_the_bundled_app_takes_only_a_user_custom_auth_signed_in() -> None:
    """``graphs.app``'s callback route: the identity LangGraph's custom auth gave the request;
    nobody without custom auth (the server then sets an unauthenticated user, identity ``""``)."""
    from starlette.authentication import UnauthenticatedUser
    from starlette.requests import Request

    from graphs.app import signed_in_user

    class User:  # what custom auth sets: an authenticated user with an identity
        is_authenticated = True

        def __init__(self, identity: Any) -> None:
            self.identity = identity

    class Nobody(UnauthenticatedUser):  # langgraph_api.auth.noop's
        identity = ""

    def request(user: Any = None) -> Request:
        scope: dict[str, Any] = {"type": "http", "method": "GET", "path": "/oauth/callback", "headers": []}
        if user is not None:
            scope["user"] = user
        return Request(scope)

    assert signed_in_user(request(User("alice"))) == "alice"
    for nobody in (Nobody(), None, User(""), User(None)):
        assert signed_in_user(request(nobody)) is None
    anonymous = Nobody()
    anonymous.identity = "alice"  # unauthenticated, whatever it says
    assert signed_in_user(request(anonymous)) is None


@pytest.mark.slow
@pytest.mark.deploy
@pytest.mark.timeout(300)
async def test_another_user_cannot_read_or_delete_a_users_tokens_through_the_store_api(
    tmp_path: Path,
) -> None:
    """With the package's store rule installed (``tests/deploy/guarded_auth.py``), Bob cannot
    read, overwrite, delete or list Alice's token record through the store API, whether he
    computes its old key (the plain digest of user and server) or knows its real one (an HMAC
    under the deployment's key, which he cannot compute); Alice's calls go on with her token, and
    the rest of the store is served as before."""
    base = json.loads((REPO_ROOT / "langgraph.json").read_text())
    async with spawn_http_server("signin") as signin:
        config = write_config(tmp_path, signin_servers(signin))
        key = new_key()
        env = {"LANGGRAPH_MCP_CONFIG": str(config), **key}
        guarded = authenticated(tmp_path, base, auth="tests/deploy/guarded_auth.py")
        with langgraph_dev(tmp_path / "server", guarded, env) as server:
            alice, bob = as_user(server.url, "alice"), as_user(server.url, "bob")
            a1 = (await alice.threads.create())["thread_id"]
            question = asked(await call(alice, a1, input=whoami("")))
            callback = callback_of(await authorize(question["url"], "alice"), server.url)
            assert (await come_back(callback, "alice")).status_code == 200
            assert not interrupts_of(await call(alice, a1, command={"resume": True}))

            # The key Bob can compute is not the record's; the record's needs the deployment's key.
            plain = hashlib.sha256(b"tokens\0alice\0mail").hexdigest()
            keyed = Sealer(key[KEY_ENV]).token_keys("alice", "mail")[0]
            assert keyed != plain and keyed not in Sealer(new_key()[KEY_ENV]).token_keys("alice", "mail")
            for record_key in (plain, keyed):
                for refused in (
                    bob.store.get_item(list(TOKENS), record_key),
                    bob.store.delete_item(list(TOKENS), record_key),
                    bob.store.put_item(list(TOKENS), record_key, {"sealed": "planted"}),
                ):
                    with pytest.raises(PermissionDeniedError):
                        await refused
            for prefix in (list(TOKENS), ["langgraph_mcp"], []):
                with pytest.raises(PermissionDeniedError):
                    await bob.store.search_items(prefix)
            with pytest.raises(PermissionDeniedError):  # nor can Alice: the API serves none of them
                await alice.store.delete_item(list(TOKENS), keyed)

            # Alice's token is still there: her next call runs with it, without asking.
            a2 = (await alice.threads.create())["thread_id"]
            assert not interrupts_of(await call(alice, a2, input=whoami("")))
            assert await result(alice, a2) == {"whoami": "signed in as alice"}
            # The rest of the store is served as before.
            await bob.store.put_item(["notes", "bob"], "n1", {"text": "hello"})
            item = await bob.store.get_item(["notes", "bob"], "n1")
            assert item is not None and item["value"] == {"text": "hello"}
            await bob.store.delete_item(["notes", "bob"], "n1")
            assert "Traceback" not in server.log_text()
