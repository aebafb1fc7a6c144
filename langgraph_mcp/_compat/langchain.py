"""Every private langchain (agents package) name this package relies on, in one place, and how
this package adds to a model request's system message.

Provider-native tool search: langchain's ``ProviderToolSearchMiddleware`` knows which chat
model providers search deferred tools on their side (Anthropic, OpenAI) and how to tell a
model's provider; :func:`native_search_provider` asks it the same way.
"""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware import ModelRequest
from langchain.agents.middleware.provider_tool_search import _SERVER_TOOL_SEARCH_TOOLS, _get_model_provider
from langchain_core.messages import SystemMessage

__all__ = ["append_to_system", "native_search_provider"]


def native_search_provider(model: Any, runtime: Any) -> str | None:
    """The provider of ``model`` if it searches deferred tools on its side, else ``None``."""
    try:
        provider = _get_model_provider(model, runtime)
    except Exception:  # a model that cannot say: not native
        return None
    return provider if provider in _SERVER_TOOL_SEARCH_TOOLS else None


def append_to_system(request: ModelRequest, section: str | None) -> ModelRequest:
    """``request`` with ``section`` after its system message (a new system message if it has
    none; a text block after a list of blocks); unchanged for ``None``."""
    if section is None:
        return request
    system = request.system_message
    if system is None:
        return request.override(system_message=SystemMessage(section))
    content: Any = system.content
    if isinstance(content, str):
        return request.override(
            system_message=SystemMessage(f"{content}\n\n{section}" if content else section)
        )
    return request.override(system_message=SystemMessage([*content, {"type": "text", "text": section}]))
