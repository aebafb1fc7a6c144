"""LangGraph custom auth of a deployment with per-user OAuth that installs the package's store
rule (``langgraph_mcp.oauth.guard_store``): the users and thread rule of
``tests/browser/app_auth.py`` (``Authorization: Bearer <user>`` names the user; each thread is its
creator's alone), plus ``auth.on.store()(guard_store)``."""

from __future__ import annotations

from langgraph_mcp.oauth import guard_store
from tests.browser.app_auth import auth

auth.on.store()(guard_store)

__all__ = ["auth"]
