"""Which MCP tool a name in ``tool_options`` or ``approval`` means.

A policy follows the tool (its server and MCP name), never the name it happens to be exposed
under, which can change with reachability (``<server>_<name>`` while another server's names are
unknown) or with collisions. A reference is one of:

* ``"server/tool"``: the MCP tool ``tool`` of the configured server ``server`` (qualified; the
  longest configured server name that the key starts with, followed by ``/``, is taken);
* ``"tool"``: the MCP tool name, or the name built from it with its server's ``prefix``
  (``"fs_delete_file"`` for a server with ``prefix="fs_"``), on whichever server offers it.

Approval follows every tool a name may mean (asking too often is safe), the name a tool is
exposed under now included (``<server>_<name>`` while names collide, as a person reading a trace
would write it). Options are bound to one tool only: an unqualified key that another server
offers too, or might offer (its tool names are not known yet: never listed in this process, no
``tools`` allow-list), or that is a form of two tools of one server, cannot be resolved, and the
tool is withheld (not offered, its calls refused) until it can be, or until the key is qualified;
so is a tool whose exposed name, given to settle a collision, is a key (that name changes with
reachability). Otherwise one user's header, hidden argument or result mapping could reach
another tool.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from langgraph_mcp._catalog.naming import safe_tool_name
from langgraph_mcp.config import ServerConfig
from langgraph_mcp.errors import MCPConfigError

__all__ = ["ToolRef", "exposed_names", "parse_refs", "unqualified_forms"]


@dataclass(frozen=True)
class ToolRef:
    """A reference as given (``key``); ``server`` is set when it names one server's tool."""

    key: str
    server: str | None = None
    tool: str | None = None


def parse_refs(keys: Iterable[str], configs: Mapping[str, ServerConfig], what: str) -> list[ToolRef]:
    """Parse references; raises :class:`MCPConfigError` for a qualified reference to a server
    that is not configured, or to a tool its ``tools`` / ``exclude_tools`` never expose."""
    refs = []
    for key in keys:
        if not isinstance(key, str) or not key:
            raise MCPConfigError(None, what, f"tool names must be non-empty strings, got {key!r}")
        ref = _parse(key, configs)
        if "/" in key and ref.server is None:
            raise MCPConfigError(
                None,
                what,
                f"{key!r} names no configured MCP server (write 'server/tool' for one server's tool, "
                f"or the tool's name alone); configured: {sorted(configs)}",
            )
        if ref.server is not None and ref.tool is not None:
            config = configs[ref.server]
            hidden = config.tools is not None and ref.tool not in config.tools
            if hidden or ref.tool in config.exclude_tools:
                raise MCPConfigError(
                    ref.server,
                    what,
                    f"{key!r} names MCP tool {ref.tool!r}, which the server's 'tools' / "
                    "'exclude_tools' never expose",
                )
        refs.append(ref)
    return refs


def _parse(key: str, configs: Mapping[str, ServerConfig]) -> ToolRef:
    servers = [s for s in configs if key.startswith(s + "/") and len(key) > len(s) + 1]
    best = max(servers, key=len, default=None)
    if best is None:
        return ToolRef(key)
    return ToolRef(key, best, key[len(best) + 1 :])


def unqualified_forms(config: ServerConfig, mcp_name: str) -> frozenset[str]:
    """The unqualified references that mean this server's tool ``mcp_name``."""
    return frozenset({mcp_name, safe_tool_name((config.prefix or "") + mcp_name)})


def exposed_names(
    configs: Mapping[str, ServerConfig], remembered: Mapping[str, Collection[str]]
) -> dict[str, frozenset[str] | None]:
    """Per server, the MCP tool names it exposes as far as known: its last listing in this
    process (``remembered``) or its ``tools`` allow-list, less ``exclude_tools``; ``None`` while
    unknown (it could offer any name)."""
    out: dict[str, frozenset[str] | None] = {}
    for server, config in configs.items():
        known = remembered.get(server)
        if known is None:
            known = config.tools
        if known is None:
            out[server] = None
            continue
        allowed = set(config.tools) if config.tools is not None else None
        out[server] = frozenset(
            n for n in known if (allowed is None or n in allowed) and n not in config.exclude_tools
        )
    return out


def may_also_mean(
    key: str,
    server: str,
    mcp_name: str,
    configs: Mapping[str, ServerConfig],
    names: Mapping[str, frozenset[str] | None],
) -> list[str]:
    """The servers of which an unqualified ``key`` may also mean a tool other than ``server``'s
    ``mcp_name`` (servers whose names are unknown included; ``server`` itself when another of its
    tools has ``key`` as a form too: ``"fs_delete"`` is both ``delete`` with prefix ``"fs_"`` and
    the MCP tool ``fs_delete``)."""
    others = []
    for other, config in configs.items():
        known = names.get(other)
        if other == server:
            if known is not None and any(
                n != mcp_name and key in unqualified_forms(config, n) for n in known
            ):
                others.append(other)
            continue
        if known is None or any(key in unqualified_forms(config, n) for n in known):
            others.append(other)
    return others
