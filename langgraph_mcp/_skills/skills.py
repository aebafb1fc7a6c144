"""``MCPSkills``: the skills of MCP servers for an agent or a graph of one's own."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Self

from langgraph_mcp._pool.pool import MCPPool
from langgraph_mcp._skills.approval import SkillApproval, check_policy
from langgraph_mcp._skills.catalog import Headers, Run, SkillCatalog
from langgraph_mcp._skills.entries import MCPSkill
from langgraph_mcp._skills.loader import DEFAULT_MAX_FILE_BYTES, LOADER_NAME, SkillLoader
from langgraph_mcp._skills.prompt import skills_prompt
from langgraph_mcp._skills.verify import body_of
from langgraph_mcp.errors import MCPConfigError, MCPSkillError
from langgraph_mcp.options import ToolOptions

__all__ = ["MCPSkills"]


class MCPSkills:
    """The skills (``io.modelcontextprotocol/skills``) of MCP servers, loaded when the model asks.

    The model is told each skill's id, server and description (:meth:`prompt`: a system prompt
    section) and gets one tool, ``load_skill`` (:attr:`tool`), which reads a skill's ``SKILL.md``,
    or a file the skill lists, from the skill's own server when called, and checks it against the
    server's listing (size, SHA-256 digest, and the ``SKILL.md``'s frontmatter) before the model
    sees it. Nothing is read before that: listing skills reads no file. Loaded skills and
    approvals live in the graph state (:class:`~langgraph_mcp.skills.MCPSkillsState`).

    :class:`~langgraph_mcp.skills.MCPSkillsMiddleware` does all of this for ``create_agent`` /
    ``create_mcp_agent`` / ``create_deep_agent``. In a graph of your own, add :attr:`tool` to the
    tool node, ``MCPSkillsState`` to the state, and :meth:`prompt` to the model's system message::

        skills = MCPSkills(pool)
        tools = ToolNode([*mcp_tools, skills.tool])

        async def model(state, config):
            section = await skills.prompt(config, state=state)
            system = SystemMessage("You are helpful." + (f"\\n\\n{section}" if section else ""))
            return {"messages": [await llm.bind_tools([...]).ainvoke([system, *state["messages"]])]}

    Args:
        connections: An :class:`~langgraph_mcp.MCPPool` to share (the MCP middleware's
            ``middleware.pool``), or anything :func:`~langgraph_mcp.load_connections` accepts (a
            pool of its own is made, closed with :meth:`aclose`).
        servers: Only these servers' skills (default: every server that declares the extension).
        approval: Which skills a person approves before they load: ``True`` (all), or a collection
            of server names (all their skills) and skill ids (``"docs:pdf-processing"``) or
            ``"<server>:<name>"``. The question is a
            :class:`~langgraph_mcp.types.MCPSkillApprovalInterrupt`; an approval holds for exactly
            the files (and digests) it showed.
        allowed_tools: Let a skill's ``allowed-tools`` grant: a skill that names some asks a person
            (the question names the tools), and once approved, calls of those tools of the skill's
            server skip their own approval question in the thread. Off (the default): the field
            grants nothing.
        dynamic: Load skills whose server lists their files as ``"dynamic"`` (nothing can be
            checked against a digest; only the ``SKILL.md``'s frontmatter is compared, and an
            approval is asked at each load). Off by default.
        max_file_bytes: The largest file given to the model (a larger listed size is refused
            without reading it).
        server_options: The MCP middleware's ``server_options``: a server whose runs carry
            credentials (``ToolOptions(headers=..., per_user=True)``) is listed and read with them.
        tool_name: The loader tool's name.
    """

    def __init__(
        self,
        connections: Any,
        *,
        servers: Collection[str] | None = None,
        approval: SkillApproval = None,
        allowed_tools: bool = False,
        dynamic: bool = False,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        server_options: Mapping[str, ToolOptions] | None = None,
        tool_name: str = LOADER_NAME,
    ) -> None:
        if isinstance(max_file_bytes, bool) or not isinstance(max_file_bytes, int) or max_file_bytes < 1:
            raise MCPConfigError(
                None, "max_file_bytes", f"must be a positive number of bytes, not {max_file_bytes!r}"
            )
        if isinstance(connections, MCPPool):
            self.pool, self._owns_pool = connections, False
        else:
            self.pool, self._owns_pool = MCPPool(connections), True
        credentials: dict[str, Headers] = {
            server: options.headers
            for server, options in (server_options or {}).items()
            if options.per_user and options.headers is not None
        }
        for server in credentials:
            self.pool.acts_per_user(server)
        self.catalog = SkillCatalog(self.pool, servers=servers, credentials=credentials)
        self.loader = SkillLoader(
            self.catalog,
            approval=check_policy(approval),
            allowed_tools=allowed_tools,
            dynamic=dynamic,
            max_file_bytes=max_file_bytes,
            name=tool_name,
        )

    @property
    def tool(self) -> Any:
        """The ``load_skill`` tool (``skill``: an id or name; ``file``: a path within the skill)."""
        return self.loader.tool

    async def list(
        self, config: Any = None, *, context: Any = None, store: Any = None, state: Any = None
    ) -> list[MCPSkill]:
        """The skills a run with this ``config`` (thread, user), ``context`` and ``store`` may
        load, by server then path. Reads no skill file."""
        return list((await self.catalog.for_run(Run(config, context, store, state))).skills)

    async def read(
        self,
        skill: str,
        file: str | None = None,
        *,
        config: Any = None,
        context: Any = None,
        store: Any = None,
    ) -> str:
        """The text of ``skill``'s ``SKILL.md`` (its body, after the frontmatter) or of ``file``
        (a path within the skill), read from its server and checked against its listing; no
        approval is asked (this is code, not the model).

        Raises:
            MCPSkillError: no such skill (or more than one), a file it does not list, too large,
                not text, or not matching its listing.
        """
        run = Run(config, context, store, None)
        found = await self.loader.resolve(skill, run)
        reads = await self.loader.read(found, file, run)
        text = reads[-1].text
        if text is None:
            raise MCPSkillError("binary", f"{reads[-1].path!r} of the skill {found.id!r} is not text")
        if file is None:
            return body_of(text)
        return text

    async def prompt(
        self,
        config: Any = None,
        *,
        context: Any = None,
        store: Any = None,
        state: Any = None,
        local: Collection[str] = (),
    ) -> str | None:
        """The system prompt section that lists the skills this run may load (``None``: none);
        ``local`` names skills the agent has from elsewhere, marked so the model tells them apart."""
        skills = await self.catalog.for_run(Run(config, context, store, state))
        return skills_prompt(skills, self.loader.name, local)

    async def aclose(self) -> None:
        """Close an own pool (a shared pool is left to its owner)."""
        if self._owns_pool:
            await self.pool.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
