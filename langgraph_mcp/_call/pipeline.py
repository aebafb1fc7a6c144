"""One call of an MCP tool, as ordered steps: the path from the model's arguments to the wire and
back.

:class:`~langgraph_mcp._call.adapter.MCPTool` builds one :class:`~langgraph_mcp._call.call.Call`
and hands it to :func:`run_pipeline`. Each step does one job and passes the call on to the next,
or stops it with the call's outcome (a ``(content, artifact)`` pair, or a message or ``Command``
as content); what a step does with the outcome on its way back is its own job too. Down, in
order (:data:`STEPS`), each step in the module of its concern:

1. :func:`lazy_start`: a ``lazy`` server's tool starts its server and must still be listed;
2. :func:`~langgraph_mcp._call.arguments.check_arguments`: hidden arguments leave the model's,
   which must fit the schema;
3. :func:`~langgraph_mcp._call.arguments.hidden_values`: the hidden arguments' values, from the
   run;
4. :func:`~langgraph_mcp._call.approval.approve`: a person's decision (or one recorded before);
   back, the notice of an edit;
5. :func:`~langgraph_mcp._call.secrets.hold_secrets`: hidden values kept out of logs and errors
   while the call runs;
6. :func:`~langgraph_mcp._call.results.to_result`: back, the result (or the failure) as the
   call's outcome;
7. :func:`~langgraph_mcp._call.runner.choose_session`: the shared session, the thread's, or the
   user's OAuth session;
8. :func:`~langgraph_mcp._call.runner.send`: the call itself, and the MCP Apps view sent with
   its result.

The steps are chained once (each given the rest as its ``next_step``), so a call goes from one
step straight into the next and back, never through this module in between. A step with nothing to
do for a call is left out of its chain: :func:`lazy_start` for a server that is not ``lazy`` (or a
pool without a tool catalog), :func:`~langgraph_mcp._call.arguments.hidden_values` and
:func:`~langgraph_mcp._call.secrets.hold_secrets` for a tool without hidden arguments (four chains,
made once).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from langgraph_mcp._call.approval import approve
from langgraph_mcp._call.arguments import check_arguments, hidden_values
from langgraph_mcp._call.call import Call, Next, Step
from langgraph_mcp._call.results import CALL_FAILURES, call_failed, call_site, not_listed, to_result
from langgraph_mcp._call.runner import choose_session, send
from langgraph_mcp._call.secrets import hold_secrets

__all__ = ["STEPS", "lazy_start", "run_pipeline"]


async def lazy_start(call: Call, next_step: Next) -> Any:
    """For a tool of a ``lazy`` server (maybe offered from the tool catalog): start the server
    if it has not started (bounded by its ``connect_timeout``) and make sure it still lists
    this tool as it was offered; else the call's error, and it is not sent."""
    pool = call.pool
    if pool is not None and pool.catalog is not None and call.connection.config.lazy:
        try:
            listed = await pool.live_tools(call.server)
        except CALL_FAILURES as exc:
            return call_failed(call_site(call), exc, limit="connect_timeout")
        refused = not_listed(call_site(call), call.mcp_tool, listed)
        if refused is not None:
            return refused
    return await next_step(call)


STEPS: tuple[Step, ...] = (
    lazy_start,
    check_arguments,
    hidden_values,
    approve,
    hold_secrets,
    to_result,
    choose_session,
)
"""The steps of every call, in the order they run on the way down; :func:`send` ends them."""


def _chain(steps: tuple[Step, ...], last: Next) -> Next:
    chained = last
    for step in reversed(steps):
        chained = partial(step, next_step=chained)
    return chained


def _without(*left_out: Step) -> Next:
    return _chain(tuple(s for s in STEPS if s not in left_out), send)


_PIPELINES: dict[tuple[bool, bool], Next] = {
    (True, True): _without(),
    (True, False): _without(hidden_values, hold_secrets),
    (False, True): _without(lazy_start),
    (False, False): _without(lazy_start, hidden_values, hold_secrets),
}
"""The chains, by (may the server be waiting to start, has the tool hidden arguments)."""


async def run_pipeline(call: Call) -> Any:
    """Run ``call`` down :data:`STEPS` to :func:`~langgraph_mcp._call.runner.send` and back: its
    outcome, a ``(content, artifact)`` pair (or a message or ``Command`` as content)."""
    pool = call.pool
    lazy = pool is not None and pool.catalog is not None and call.connection.config.lazy
    return await _PIPELINES[lazy, bool(call.options.hidden)](call)
