"""MCP prompts as LangChain messages, and argument completion (``completion/complete``).

The functions here take a :class:`~langgraph_mcp._session.connection.ServerConnection`;
:class:`~langgraph_mcp.MCPPool` offers each of them by server name (``pool.get_prompt(...)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

import mcp_types as types
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langgraph_mcp._pool.content import convert_block
from langgraph_mcp._pool.resources import template_uri
from langgraph_mcp.errors import MCPArgumentError

if TYPE_CHECKING:
    from langgraph_mcp._session.connection import ServerConnection

__all__ = ["complete", "get_prompt", "list_prompts", "to_messages"]


async def list_prompts(connection: ServerConnection) -> list[types.Prompt]:
    """The server's prompts (every page), cached like the resources
    (:func:`~langgraph_mcp._pool.resources.list_resources`)."""
    return cast(list[types.Prompt], await connection.listing("prompts"))


async def _listed(connection: ServerConnection, name: str) -> types.Prompt:
    prompts = await list_prompts(connection)
    for prompt in prompts:
        if prompt.name == name:
            return prompt
    known = ", ".join(repr(p.name) for p in prompts[:20]) or "none"
    raise MCPArgumentError(connection.name, None, f"no prompt {name!r} (prompts: {known})")


def check_arguments(server: str, prompt: types.Prompt, arguments: Mapping[str, Any]) -> dict[str, str]:
    """``arguments`` checked against what ``prompt`` declares: each is a declared one, holds a
    string, and every required one is there (and not empty).

    Raises:
        MCPArgumentError: naming the server, the prompt and the argument.
    """
    declared = {arg.name: arg for arg in prompt.arguments or []}
    for name, value in arguments.items():
        if name not in declared:
            known = ", ".join(repr(n) for n in declared) or "none"
            raise MCPArgumentError(
                server, name, f"prompt {prompt.name!r} has no argument {name!r} (it takes: {known})"
            )
        if not isinstance(value, str):
            raise MCPArgumentError(
                server,
                name,
                f"prompt {prompt.name!r} takes strings only; got {type(value).__name__} (pass str(value))",
            )
    for arg in declared.values():
        if arg.required and not arguments.get(arg.name):
            about = f" ({arg.description})" if arg.description else ""
            raise MCPArgumentError(server, arg.name, f"prompt {prompt.name!r} needs {arg.name!r}{about}")
    return dict(arguments)


async def get_prompt(
    connection: ServerConnection, name: str, arguments: Mapping[str, Any] | None = None
) -> list[BaseMessage]:
    """Get prompt ``name`` filled with ``arguments``, as LangChain messages (see
    :func:`to_messages`). The arguments are checked against the server's listing first.

    Raises:
        MCPArgumentError: no such prompt, or wrong arguments (nothing was sent).
        MCPServerError, MCPConnectionError, MCPTimeoutError, MCPProtocolError: as for any request.
    """
    prompt = await _listed(connection, name)
    checked = check_arguments(connection.name, prompt, arguments or {})
    result = await connection.request(
        f"prompts/get {name!r}", lambda client: client.get_prompt(name, checked or None)
    )
    return to_messages(connection.name, result)


def to_messages(server: str, result: types.GetPromptResult) -> list[BaseMessage]:
    """A ``prompts/get`` result as messages: role ``user`` -> ``HumanMessage``, ``assistant`` ->
    ``AIMessage``. Text stays text (a message of one text block has a plain ``str`` content);
    images and audio become image / audio blocks; an embedded text resource becomes its text, an
    embedded binary one a ``file`` block; a resource link a ``file`` block with its ``url``.
    Embedded resources and links carry ``extras["uri"]`` / ``extras["server"]``. The result's
    ``description`` is in each message's ``response_metadata["mcp_prompt_description"]``."""
    messages: list[BaseMessage] = []
    for message in result.messages:
        block = _block(server, message.content)
        content: Any = block["text"] if block["type"] == "text" else [block]
        meta = {"mcp_prompt_description": result.description} if result.description else {}
        cls = AIMessage if message.role == "assistant" else HumanMessage
        messages.append(cls(content=content, response_metadata=meta))
    return messages


def _block(server: str, block: types.ContentBlock) -> dict[str, Any]:
    if isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.TextResourceContents):
        return {"type": "text", "text": block.resource.text}
    converted = convert_block(block)
    if isinstance(block, types.EmbeddedResource):
        converted["extras"] = {**converted.get("extras", {}), "server": server}
    elif isinstance(block, types.ResourceLink):
        converted["extras"] = {**converted.get("extras", {}), "uri": str(block.uri), "server": server}
    return converted


async def complete(
    connection: ServerConnection,
    *,
    argument: str,
    value: str,
    prompt: str | None = None,
    template: str | None = None,
    context: Mapping[str, str] | None = None,
) -> types.Completion:
    """Ask the server to complete ``argument`` of a prompt (``prompt=`` its name) or of a
    resource template (``template=`` its ``uriTemplate`` or its ``name``), given what was typed so far
    (``value``) and the arguments already chosen (``context``). A server without the
    ``completions`` capability gives an empty completion.

    Raises:
        MCPArgumentError: neither or both of ``prompt`` / ``template``, or a value not a string.
        MCPServerError, MCPConnectionError, MCPTimeoutError: as for any request.
    """
    if (prompt is None) == (template is None):
        raise MCPArgumentError(connection.name, None, "complete() needs exactly one of prompt= or template=")
    if not isinstance(value, str) or not isinstance(argument, str):
        raise MCPArgumentError(connection.name, str(argument), "argument and value must be strings")
    caps = await connection.server_capabilities()
    if caps.completions is None:
        return types.Completion(values=[], total=None, has_more=None)
    ref: types.PromptReference | types.ResourceTemplateReference
    if prompt is not None:
        ref = types.PromptReference(name=prompt)
    else:
        assert template is not None
        ref = types.ResourceTemplateReference(uri=await template_uri(connection, template))
    context_arguments = dict(context) if context else None
    answer = await connection.request(
        f"completion/complete {argument!r}",
        lambda client: client.complete(ref, {"name": argument, "value": value}, context_arguments),
    )
    return answer.completion
