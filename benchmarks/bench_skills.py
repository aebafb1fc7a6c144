"""MCP skills: what 50 skills cost in the model's context, with progressive disclosure and without.

    uv run python benchmarks/bench_skills.py [--skills 50] [--seed 7]

One process: ``examples/servers/skills_server.py`` serving a generated folder of ``--skills``
skills (realistic ``SKILL.md`` files: sections, numbered steps, a code example; bodies of 1.5 to
6 KB, descriptions of 80 to 300 characters; fixed by ``--seed``), served with uvicorn on loopback
HTTP, and as the client an ``MCPPool`` with ``create_agent(ScriptedChatModel, middleware=[
MCPSkillsMiddleware(pool)])``. An ASGI wrapper counts the JSON-RPC requests the server receives
(``skills/list``, ``resources/read``, ...).

The conversation has three model calls: the model loads one skill (``load_skill``), answers, and
answers a follow-up. For each call, the characters about skills the model is given (read from what
the scripted model received):

* ``MCPSkillsMiddleware``: the prompt section (:meth:`MCPSkills.prompt`: id, server and
  description of each skill), plus the loaded skill's text once it is in the conversation;
* all in the prompt: every skill's full ``SKILL.md`` (frontmatter and body) in the system prompt,
  as one would without progressive disclosure.

Tokens are estimated as characters / 4 (English prose; no tokenizer is run). Also printed: the
server's requests when the skills are listed (no file may be read) and when one skill is loaded
(one ``resources/read``: its ``SKILL.md``), and the first listing's latency. Results: RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import logging
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from _common import ROOT, load_average, quiet, table
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_mcp import MCPPool
from langgraph_mcp.skills import MCPSkills, MCPSkillsMiddleware
from langgraph_mcp.testing import ScriptedChatModel
from tests.conftest_servers import serve_in_loop

BODY_BYTES = (1500, 6000)
DESCRIPTION_CHARS = (80, 300)

_AREAS = [
    "billing",
    "invoices",
    "refunds",
    "payroll",
    "onboarding",
    "offboarding",
    "access",
    "backups",
    "deploys",
    "releases",
    "incidents",
    "postmortems",
    "dashboards",
    "alerts",
    "contracts",
    "vendors",
    "hiring",
    "interviews",
    "budgets",
    "forecasts",
    "audits",
    "privacy",
    "security",
    "migrations",
    "schemas",
    "api-docs",
    "changelogs",
    "support",
    "escalations",
    "surveys",
]
_ACTS = ["review", "draft", "triage", "plan", "check", "report", "reconcile", "summarise", "prepare"]
_OBJECTS = [
    "the customer's account history",
    "last quarter's figures",
    "the open tickets",
    "the runbook",
    "the change request",
    "the vendor's invoice",
    "the access list",
    "the on-call schedule",
    "the service's error budget",
    "the signed contract",
    "the data retention policy",
    "the release branch",
    "the audit log",
    "the team's calendar",
    "the survey answers",
]
_VERBS = [
    "Collect",
    "Compare",
    "Check",
    "Group",
    "Summarise",
    "Flag",
    "Confirm",
    "List",
    "Write down",
    "Ask the owner about",
    "Cross-check",
    "Estimate",
    "Sort",
    "Archive",
    "Link",
]
_CLAUSES = [
    "before you change anything",
    "and note every exception",
    "against the previous period",
    "so that a reviewer can follow your reasoning",
    "with the dates in UTC",
    "in a table",
    "and stop if a number does not add up",
    "leaving out personal data",
    "with one line per item",
    "and keep the source links",
    "using the team's naming conventions",
    "for the last 30 days",
]
_PURPOSES = [
    "when a person asks for it by name",
    "at the end of each month",
    "before a release is tagged",
    "after an incident is closed",
    "when a new customer signs",
    "when numbers disagree between systems",
    "for the weekly review meeting",
    "when an auditor asks for evidence",
    "before a contract renews",
]


def _sentence(rng: random.Random) -> str:
    return f"{rng.choice(_VERBS)} {rng.choice(_OBJECTS)} {rng.choice(_CLAUSES)}."


def description(rng: random.Random) -> str:
    """A description of 80 to 300 characters (whole words, one or more sentences)."""
    target = rng.randint(*DESCRIPTION_CHARS)
    act, obj = rng.choice(_ACTS).capitalize(), rng.choice(_OBJECTS)
    text = f"{act} {obj} {rng.choice(_PURPOSES)}."
    while len(text) < target:
        text += " " + _sentence(rng)
    while len(text) > DESCRIPTION_CHARS[1]:
        text = text[: text.rstrip(".").rfind(" ")].rstrip(",") + "."
    return text


def body(rng: random.Random, name: str) -> str:
    """A SKILL.md body of 1.5 to 6 KB: a title, when to use it, steps, checks, an example."""
    target = rng.randint(*BODY_BYTES)
    title = name.replace("-", " ").capitalize()
    parts = [
        f"# {title}\n",
        f"Use this skill {rng.choice(_PURPOSES)}. {_sentence(rng)} {_sentence(rng)}\n",
        "## When to use it\n",
        "\n".join(f"- {rng.choice(_PURPOSES).capitalize()}." for _ in range(3)) + "\n",
        "## Steps\n",
    ]
    steps = []
    while len("\n".join(parts + steps)) < target * 0.7:
        steps.append(f"{len(steps) + 1}. {_sentence(rng)} {_sentence(rng)}")
    parts.append("\n".join(steps) + "\n")
    parts.append("## Checks\n")
    checks = []
    while len("\n".join(parts + checks)) < target * 0.9:
        checks.append(f"- [ ] {_sentence(rng)}")
    parts.append("\n".join(checks) + "\n")
    parts.append("## Example\n")
    example = {"skill": name, "period": "2026-11", "items": rng.randint(3, 40), "owner": "team-lead"}
    parts.append("```json\n" + json.dumps(example, indent=2) + "\n```\n")
    text = "\n".join(parts)
    while len(text.encode()) < target:
        text += f"\nNote: {_sentence(rng)}"
    return text + "\n"


def generate(root: Path, n: int, seed: int) -> dict[str, str]:
    """``n`` skills under ``root`` (one folder each, with a SKILL.md); {name: SKILL.md text}."""
    rng = random.Random(seed)
    names: list[str] = []
    while len(names) < n:
        name = f"{rng.choice(_AREAS)}-{rng.choice(_ACTS)}"
        if name not in names:
            names.append(name)
    texts = {}
    for name in names:
        text = f"---\nname: {name}\ndescription: {json.dumps(description(rng))}\n---\n\n{body(rng, name)}"
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(text, encoding="utf-8")
        texts[name] = text
    return texts


class Requests:
    """ASGI: counts the JSON-RPC methods of the requests the server receives."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.methods: Counter[str] = Counter()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []

        async def counted() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    self._count(b"".join(chunks))
            return message

        await self.app(scope, counted, send)

    def _count(self, raw: bytes) -> None:
        try:
            sent = json.loads(raw)
        except ValueError:
            return
        for message in sent if isinstance(sent, list) else [sent]:
            if isinstance(message, dict) and "method" in message and "id" in message:
                self.methods[message["method"]] += 1

    def since(self, before: Counter[str]) -> dict[str, int]:
        return {m: c for m, c in (self.methods - before).items() if m.startswith(("skills/", "resources/"))}


def example_server_module() -> Any:
    path = ROOT / "examples" / "servers" / "skills_server.py"
    spec = importlib.util.spec_from_file_location("skills_server", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def system_text(message: Any) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(b if isinstance(b, str) else b.get("text", "") for b in content)


def tokens(chars: int) -> str:
    return f"{chars:,} (~{round(chars / 4):,})"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    ns = parser.parse_args()
    server_module = example_server_module()

    with tempfile.TemporaryDirectory(prefix="bench-skills-") as tmp:
        root = Path(tmp)
        texts = generate(root, ns.skills, ns.seed)
        wrappers: list[Requests] = []

        def wrap(app: Any) -> Any:
            wrappers.append(Requests(app))
            return wrappers[-1]

        async with (
            serve_in_loop(server_module.build_server(root), "http", wrap=wrap) as url,
            MCPPool({"docs": {"url": url}}) as pool,
        ):
            requests = wrappers[0]
            skills = MCPSkills(pool)
            before = requests.methods.copy()
            start = time.perf_counter()
            listed = await skills.list()
            first_list_ms = (time.perf_counter() - start) * 1000
            section = await skills.prompt()
            assert section is not None and len(listed) == ns.skills, (len(listed), ns.skills)
            on_listing = requests.since(before)

            pick = sorted(texts)[len(texts) // 2]
            model = ScriptedChatModel(
                [[("load_skill", {"skill": f"docs:{pick}"}, "c1")], "Done, following the skill.", "Yes."]
            )
            agent = create_agent(
                model, middleware=[MCPSkillsMiddleware(skills)], checkpointer=InMemorySaver()
            )
            config = {"configurable": {"thread_id": "bench"}}
            before = requests.methods.copy()
            out = await agent.ainvoke(
                {"messages": [HumanMessage(f"Please {pick.replace('-', ' ')}.")]}, config
            )
            on_load = requests.since(before)
            loaded = [m for m in out["messages"] if isinstance(m, ToolMessage)]
            assert loaded and loaded[0].status == "success", loaded
            await agent.ainvoke({"messages": [HumanMessage("Anything else?")]}, config)

    everything = "\n\n".join(texts.values())  # every SKILL.md in the system prompt
    bodies = [len(t) for t in texts.values()]
    descriptions = [len(s.description) for s in listed]
    rows = []
    total_mw = total_all = 0
    for i, call in enumerate(model.calls, 1):
        system = call.messages[0]
        assert isinstance(system, SystemMessage)
        shown = system_text(system)
        assert "## Skills from MCP servers" in shown and texts[pick].split("\n## Steps")[0][-40:] not in shown
        in_prompt = len(shown)  # the system message holds only the section (no system_prompt)
        assert shown == section, "the model was shown another section than MCPSkills.prompt()"
        in_history = sum(
            len(str(m.content))
            for m in call.messages
            if isinstance(m, ToolMessage) and m.name == "load_skill"
        )
        mw = in_prompt + in_history
        total_mw += mw
        total_all += len(everything)
        rows.append(
            [
                f"{i}",
                tokens(in_prompt),
                tokens(in_history),
                f"**{tokens(mw)}**",
                tokens(len(everything)),
                f"{len(everything) / mw:.1f}x",
            ]
        )
    rows.append(
        ["all 3", "", "", f"**{tokens(total_mw)}**", tokens(total_all), f"{total_all / total_mw:.1f}x"]
    )

    print(f"{ns.skills} skills (seed {ns.seed}); {load_average()}")
    print(
        f"SKILL.md sizes: {min(bodies):,} to {max(bodies):,} characters, {sum(bodies):,} in all "
        f"(mean {sum(bodies) / len(bodies):,.0f}); descriptions {min(descriptions)} to {max(descriptions)} "
        f"characters (mean {sum(descriptions) / len(descriptions):.0f})"
    )
    print(
        f"prompt section: {len(section):,} characters, {len(section) / ns.skills:.0f} per skill; "
        f"the loaded skill ({pick}): {len(texts[pick]):,} characters in its SKILL.md"
    )
    print(
        "\nCharacters (~tokens = characters / 4, an estimate; no tokenizer) about skills the model "
        "is given at each model call"
    )
    print(
        table(
            [
                "model call",
                "MCPSkillsMiddleware: prompt section",
                "+ loaded skill in history",
                "= in all",
                "every SKILL.md in the prompt",
                "ratio",
            ],
            rows,
        )
    )
    print("\nRequests the skills server received (HTTP, counted at the server)")
    print(
        table(
            ["step", "skills/list", "resources/read", "other skills/ and resources/ requests"],
            [
                [
                    f"list {ns.skills} skills ({first_list_ms:.0f} ms) and build the prompt",
                    on_listing.get("skills/list", 0),
                    f"**{on_listing.get('resources/read', 0)}**",
                    sum(v for k, v in on_listing.items() if k not in ("skills/list", "resources/read")),
                ],
                [
                    "agent run: 2 model calls, load one skill",
                    on_load.get("skills/list", 0),
                    f"**{on_load.get('resources/read', 0)}**",
                    sum(v for k, v in on_load.items() if k not in ("skills/list", "resources/read")),
                ],
            ],
        )
    )
    if on_listing.get("resources/read", 0) != 0 or on_load.get("resources/read", 0) != 1:
        raise SystemExit(f"unexpected reads: listing {on_listing}, load {on_load}")


if __name__ == "__main__":
    quiet()
    logging.getLogger("langgraph_mcp").setLevel(logging.WARNING)
    asyncio.run(main())
