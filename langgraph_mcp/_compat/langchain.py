"""Every private langchain (agents package) name this package relies on, in one place.

Provider-native tool search: langchain's ``ProviderToolSearchMiddleware`` knows which chat
model providers search deferred tools on their side (Anthropic, OpenAI) and how to tell a
model's provider; :func:`native_search_provider` asks it the same way.
"""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware.provider_tool_search import _SERVER_TOOL_SEARCH_TOOLS, _get_model_provider

__all__ = ["native_search_provider"]


def native_search_provider(model: Any, runtime: Any) -> str | None:
    """The provider of ``model`` if it searches deferred tools on its side, else ``None``."""
    try:
        provider = _get_model_provider(model, runtime)
    except Exception:  # a model that cannot say: not native
        return None
    return provider if provider in _SERVER_TOOL_SEARCH_TOOLS else None
