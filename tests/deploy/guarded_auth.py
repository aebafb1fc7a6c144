"""LangGraph custom auth of a deployment with per-user OAuth that installs the package's store
rule (``langgraph_mcp.oauth.guard_store``): the users and thread rule of
``tests/browser/app_auth.py`` (``Authorization: Bearer <user>`` names the user; each thread is its
creator's alone), plus ``auth.on.store()(guard_store)``."""

from __future__ import annotations

from typing import Any

from langgraph_sdk import Auth

from langgraph_mcp.oauth import guard_store

auth = Auth()


@auth.authenticate
async def authenticate(authorization: str | None) -> str:
    if not authorization:
        return "anonymous"
    scheme, _, user = authorization.partition(" ")
    if scheme.lower() != "bearer" or not user.isidentifier():
        raise Auth.exceptions.HTTPException(status_code=401, detail="a bearer token naming a user")
    return user


@auth.on
async def owner_only(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    """Stamps what a user creates with their identity, and shows them only what they own."""
    if isinstance(value, dict):
        metadata = value.setdefault("metadata", {})
        if isinstance(metadata, dict):
            metadata["owner"] = ctx.user.identity
    return {"owner": ctx.user.identity}


auth.on.store()(guard_store)
