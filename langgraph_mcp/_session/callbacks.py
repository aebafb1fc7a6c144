"""What the SDK calls back into: notifications (list changes, resource updates), the server's
log messages, and its requests (elicitation, sampling, roots), handed to the call they belong to
(:class:`~langgraph_mcp._session.routing.Router`). They may run on the session's own tasks."""

from __future__ import annotations

import json
import logging
from typing import Any

import mcp_types as types
from mcp.client.session import ClientRequestContext

from langgraph_mcp._session.loops import ConnectionBase
from langgraph_mcp._support.redact import mask_all

__all__ = ["Callbacks"]

logger = logging.getLogger("langgraph_mcp.pool")

# MCP's (syslog's) eight levels on Python's standard five: handlers, filters and formatters
# know only those. The three without a Python name keep theirs in the text.
_PYTHON_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}
_UNNAMED_LEVELS = frozenset({"notice", "alert", "emergency"})


class Callbacks(ConnectionBase):
    """The SDK callbacks of one connection's sessions."""

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._tools_changed(notice=True)
        elif isinstance(message, types.ResourceListChangedNotification):
            self._lists_changed("resources", "resource_templates", notice=True)
        elif isinstance(message, types.PromptListChangedNotification):
            self._lists_changed("prompts", notice=True)
        elif isinstance(message, types.ResourceUpdatedNotification):
            self._resource_updated(message.params.uri)
        elif isinstance(message, Exception):
            logger.debug("MCP server %r: transport reported %s", self.name, self.redact(repr(message)))

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        """Log a server's log message (the record's ``mcp_level`` attribute keeps its MCP level),
        and hand it to its call, both without the server's secrets."""
        params = params.model_copy(
            update={
                "data": mask_all(params.data, self.redact),
                "logger": self.redact(params.logger) if params.logger else params.logger,
            }
        )
        data = params.data if isinstance(params.data, str) else json.dumps(params.data, default=str)
        text = f"[{params.logger}] {data}" if params.logger else data
        if params.level in _UNNAMED_LEVELS:
            text = f"{params.level}: {text}"
        level = _PYTHON_LEVELS.get(params.level, logging.INFO)
        self.logger.log(level, "%s", text, extra={"mcp_level": params.level})
        await self.router.log(params)

    async def _on_elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        return await self.router.elicit(params)

    async def _on_sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData:
        return await self.router.sample(params)

    async def _on_roots(self, context: ClientRequestContext) -> types.ListRootsResult | types.ErrorData:
        return self.list_roots()

    def list_roots(self) -> types.ListRootsResult:
        """The roots configured for this server (the same for every call)."""
        return types.ListRootsResult(roots=[types.Root.model_validate(r) for r in self.config.roots])
