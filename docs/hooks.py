"""MkDocs hook: writes the server configuration tables from the pydantic models.

A page holding the line ``<!-- server-config-fields -->`` gets one table per configuration
model in its place: every field with its type, its default and its docstring. The tables are
built from ``langgraph_mcp.config`` at build time, so they cannot drift from the code.
"""

from __future__ import annotations

import ast
import inspect
import re
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

MARKER = "<!-- server-config-fields -->"
TRANSPORT = "The transport. Optional in a mapping or a file: inferred from ``command`` or ``url``."


def _field_docs(model: type[BaseModel]) -> dict[str, str]:
    """The docstrings written under each field, for the model and its bases."""
    docs: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or cls is BaseModel:
            continue
        try:
            tree = ast.parse(inspect.getsource(cls))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for item, following in zip(body, [*body[1:], None], strict=True):
            if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                continue
            if (
                isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                docs[item.target.id] = inspect.cleandoc(following.value.value)
    return docs


def _type_name(annotation: Any) -> str:
    text = annotation.__name__ if isinstance(annotation, type) else repr(annotation)
    text = text.replace("typing.", "").replace("collections.abc.", "")
    text = re.sub(r"\blanggraph_mcp\.[\w.]*\.(\w+)", r"\1", text)
    text = re.sub(r"<class '([\w.]+)'>", lambda m: m.group(1).rsplit(".", 1)[-1], text)
    return text


def _default(field: Any) -> str:
    if field.default_factory is not None:
        value = field.default_factory()
        if isinstance(value, BaseModel):
            return f"`{type(value).__name__}()`"
        return f"`{value!r}`"
    if field.default is PydanticUndefined:
        return "required"
    return f"`{field.default!r}`"


def _cell(text: str) -> str:
    """Text for a table cell: reST literals as Markdown code, pipes outside code escaped."""
    text = text.replace("``", "`")
    text = re.sub(r":(?:class|meth|mod|func|attr):`~?([^`<]*?)(?: <[^>]*>)?`", r"`\1`", text)
    parts = " ".join(text.split()).split("`")
    return "`".join(part if i % 2 else part.replace("|", "\\|") for i, part in enumerate(parts))


def _table(model: type[BaseModel], docs: dict[str, str], skip: set[str]) -> str:
    rows = ["| field | type | default | meaning |", "|---|---|---|---|"]
    hints = typing.get_type_hints(model)
    for name, field in model.model_fields.items():
        if name in skip:
            continue
        kind = _type_name(hints.get(name, field.annotation))
        meaning = docs.get(name, TRANSPORT if name == "transport" else "")
        rows.append(f"| `{name}` | `{' '.join(kind.split())}` | {_default(field)} | {_cell(meaning)} |")
    return "\n".join(rows)


def server_config_markdown() -> str:
    """The Markdown that replaces the marker: shared fields, then each transport's own."""
    from langgraph_mcp.config import (
        HTTPServerConfig,
        InProcessServerConfig,
        OutputHandling,
        RestartPolicy,
        SSEServerConfig,
        StdioServerConfig,
    )

    shared = set(StdioServerConfig.model_fields) & set(HTTPServerConfig.model_fields)
    shared &= set(InProcessServerConfig.model_fields)
    shared.discard("transport")
    parts = [
        "## Fields of every server",
        "",
        _table(
            StdioServerConfig, _field_docs(StdioServerConfig), set(StdioServerConfig.model_fields) - shared
        ),
    ]
    for model, title in [
        (StdioServerConfig, "stdio servers (`StdioServerConfig`)"),
        (HTTPServerConfig, "streamable HTTP servers (`HTTPServerConfig`)"),
        (SSEServerConfig, "SSE servers (`SSEServerConfig`)"),
        (InProcessServerConfig, "in-process servers (`InProcessServerConfig`)"),
        (OutputHandling, "`output_handling` and `tool_output` entries (`OutputHandling`)"),
        (RestartPolicy, "`restart` (`RestartPolicy`)"),
    ]:
        own = shared if model not in (OutputHandling, RestartPolicy) else set()
        parts += ["", f"## Fields of {title}", "", _table(model, _field_docs(model), own)]
    return '<div class="config-fields" markdown>\n\n' + "\n".join(parts) + "\n\n</div>\n"


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    if MARKER in markdown:
        return markdown.replace(MARKER, server_config_markdown())
    return markdown


# The docstrings name things with reST roles (:class:`~x.Y`); in the rendered reference the
# role's name and the ``~`` would show as text. Keep the code span only.
ROLE = re.compile(r":(?:class|meth|mod|func|attr|data|exc|obj):(<code>)~?")


def on_page_content(html: str, **kwargs: Any) -> str:
    return ROLE.sub(r"\1", html)
