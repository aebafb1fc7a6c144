"""The generated catalog of ``bench_search.py``: servers of business-domain tools.

    SEARCH_PID_DIR=<dir> python benchmarks/search_catalog.py <index> <tools>

serves the ``index``-th generated server (of ``tools`` tools) over stdio, after writing a file
named after its pid into ``$SEARCH_PID_DIR`` (so a benchmark can count the servers started). It imports
only the MCP SDK's server, so that ten of them start in a few seconds.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

DOMAINS: dict[str, list[str]] = {
    "crm": [
        "contact",
        "lead",
        "account",
        "opportunity",
        "deal",
        "note",
        "task",
        "campaign",
        "segment",
        "pipeline",
    ],
    "billing": [
        "invoice",
        "payment",
        "subscription",
        "refund",
        "customer",
        "coupon",
        "price",
        "tax_rate",
        "credit_note",
        "payout",
    ],
    "calendar": [
        "event",
        "calendar",
        "attendee",
        "reminder",
        "room",
        "availability",
        "invitation",
        "recurrence",
        "timezone_rule",
        "booking",
    ],
    "storage": [
        "bucket",
        "object",
        "folder",
        "snapshot",
        "volume",
        "share_link",
        "lifecycle_rule",
        "replica",
        "quota",
        "upload",
    ],
    "tickets": [
        "ticket",
        "comment",
        "assignee",
        "label",
        "sla",
        "queue",
        "macro",
        "escalation",
        "attachment",
        "survey",
    ],
    "inventory": [
        "product",
        "stock_level",
        "warehouse",
        "supplier",
        "purchase_order",
        "shipment",
        "sku",
        "batch",
        "transfer",
        "stocktake",
    ],
    "analytics": [
        "dashboard",
        "report",
        "metric",
        "saved_query",
        "chart",
        "funnel",
        "cohort",
        "alert",
        "dataset",
        "export_job",
    ],
    "hr": [
        "employee",
        "leave_request",
        "payslip",
        "position",
        "candidate",
        "interview",
        "review",
        "benefit",
        "timesheet",
        "department",
    ],
    "messaging": [
        "channel",
        "message",
        "thread",
        "reaction",
        "direct_message",
        "user_group",
        "webhook",
        "emoji",
        "pin",
        "status",
    ],
    "devops": [
        "deployment",
        "pipeline_run",
        "container",
        "cluster",
        "secret",
        "log_stream",
        "incident",
        "build",
        "environment",
        "release",
    ],
}
ACTIONS: list[tuple[str, str, list[str]]] = [
    ("list", "List the {o}s of the {d} system, with optional filters.", ["filter", "limit"]),
    ("get", "Get one {o} of the {d} system by its id.", ["{k}_id"]),
    ("create", "Create a new {o} in the {d} system.", ["fields"]),
    ("update", "Update fields of an existing {o} in the {d} system.", ["{k}_id", "fields"]),
    ("delete", "Delete a {o} from the {d} system permanently.", ["{k}_id"]),
    ("search", "Search the {o}s of the {d} system by free text.", ["query", "limit"]),
    ("archive", "Archive a {o} of the {d} system: hidden from lists but kept.", ["{k}_id"]),
    ("export", "Export the {o}s of the {d} system as a CSV file.", ["filter", "format"]),
    ("count", "Count the {o}s of the {d} system that match a filter.", ["filter"]),
    ("history", "Show the change history of a {o} in the {d} system.", ["{k}_id", "since"]),
]


def function(name: str, arguments: list[str]) -> Any:
    params = [
        inspect.Parameter(a, inspect.Parameter.KEYWORD_ONLY, annotation=str, default="") for a in arguments
    ]

    def fn(**kwargs: Any) -> str:
        return f"{name}:" + json.dumps(kwargs, sort_keys=True)

    fn.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    fn.__name__ = name.replace("-", "_")
    return fn


def synthetic(servers: int, per_server: int) -> dict[str, MCPServer]:
    """``servers`` servers of ``per_server`` tools (domains and objects repeat past ten)."""
    made: dict[str, MCPServer] = {}
    domains = list(DOMAINS.items())
    for s in range(servers):
        domain, objects = domains[s % len(domains)]
        name = domain if s < len(domains) else f"{domain}{s // len(domains)}"
        server = MCPServer(name)
        for t in range(per_server):
            key = objects[t % len(objects)]
            verb, text, arguments = ACTIONS[(t // len(objects)) % len(ACTIONS)]
            tool = f"{verb}_{key}" if t < len(objects) * len(ACTIONS) else f"{verb}_{key}_{t}"
            args = [a.format(k=key) for a in arguments]
            description = text.format(o=key.replace("_", " "), d=domain)
            server.add_tool(function(tool, args), name=tool, description=description)
        made[name] = server
    return made


def main(argv: list[str]) -> None:
    index, tools = int(argv[0]), int(argv[1])
    Path(os.environ["SEARCH_PID_DIR"], str(os.getpid())).write_text("")
    server = list(synthetic(index + 1, tools).values())[index]
    server.run("stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
