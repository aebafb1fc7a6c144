"""What a run says while it runs, sent to the client: progress and logs.

* progress: ``notifications/progress`` against the call's ``progressToken`` (nothing when the
  client sent none), numbered 1, 2, 3... with the report's message;
* logs: ``notifications/message`` at the report's level. On 2025-11-25 the client sets the least
  level it wants with ``logging/setLevel`` (per connection; every level until it does); on
  2026-07-28 a request asks for logs itself (``_meta`` log level), and the SDK filters them.

A report that cannot be sent never fails the run.
"""

from __future__ import annotations

import logging
import warnings
import weakref
from typing import Any

import mcp_types as types
from mcp.server.context import HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context

from langgraph_mcp.serve._runs import Report, Reporter

__all__ = ["LogLevels", "reporter", "request_reporter"]

logger = logging.getLogger("langgraph_mcp.serve")
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class LogLevels:
    """The least log level each 2025-11-25 connection asked for (``logging/setLevel``)."""

    def __init__(self) -> None:
        self._levels: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()

    async def set_level(
        self, ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
    ) -> HandlerResult:
        self._levels[ctx.session] = params.level
        return types.EmptyResult()

    def wanted(self, session: Any, level: str) -> bool:
        least = self._levels.get(session)
        return least is None or LEVELS.index(level) >= LEVELS.index(least)


def reporter(context: Context[Any, Any], levels: LogLevels) -> Reporter:
    """A reporter that sends a call's reports to its client."""
    return request_reporter(context.request_context, levels)


def request_reporter(ctx: ServerRequestContext[Any, Any], levels: LogLevels) -> Reporter:
    """A reporter that sends the reports of the request ``ctx`` to its client."""
    session = ctx.session
    request_id = ctx.request_id

    async def report(said: Report) -> None:
        try:
            if said.kind == "progress":
                await session.report_progress(said.step, None, said.message)
            elif levels.wanted(session, said.level):
                with warnings.catch_warnings():  # the logging capability is deprecated on 2026-07-28
                    warnings.simplefilter("ignore")
                    await session.send_log_message(
                        level=said.level,  # type: ignore[arg-type]
                        data=said.data if said.data is not None else said.message,
                        logger=said.logger,
                        related_request_id=request_id,
                    )
        except Exception:
            logger.debug("A report was not sent", exc_info=True)

    return report
