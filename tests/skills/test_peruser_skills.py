"""The skills of a per-user OAuth server: listed and read only on a signed-in user's own session,
with their token (the per-user catalog deployment of ``tests/oauth``, its protected server being
``tests/servers/skills.py`` behind a gate that guards every request)."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import SystemMessage

from tests.oauth.test_peruser_catalog import deployment, last_tool
from tests.servers import skills as fixture


async def test_a_users_skills_are_listed_and_read_with_their_token_only(tmp_path: Path) -> None:
    root = tmp_path / "api"
    fixture.write_bundled(root)
    async with deployment("auto", api=fixture.build_server("api", root), skills=True) as d:
        # Not connected: the server lists nothing for her, so no skill of it is offered.
        await d.say("alice", "a1", 'load_skill {"skill": "api:code-review"}')
        assert "connect_api" in d.offered()
        first = d.model.calls[0].messages[0]
        assert not (isinstance(first, SystemMessage) and "api:code-review" in str(first.content))
        assert fixture.log(root) == []  # nothing about skills reached the server without a token
        await d.connect("alice", "a1")
        # Connected: her session lists the skills, and the loader reads on it with her token.
        out = await d.say("alice", "a1", 'load_skill {"skill": "api:code-review"}')
        assert "Read the diff twice" in last_tool(out)
        system = d.model.calls[-2].messages[0]
        assert isinstance(system, SystemMessage) and "`api:code-review`" in str(system.content)
        assert fixture.reads(root) == ["skill://code-review/SKILL.md"]
        # Bob has not connected: none of the server's skills for him, and nothing read for him.
        await d.say("bob", "b1", 'load_skill {"skill": "api:code-review"}')
        assert "no skill is called" in [m for m in d.model.calls[-1].messages][-1].content
        assert fixture.reads(root) == ["skill://code-review/SKILL.md"]
