"""``${VAR}`` expansion from the environment, and a stdio server's ``envFile`` (dotenv)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langgraph_mcp.errors import MCPConfigError, MCPError

__all__ = ["ENV_FILE", "expand", "expand_fields", "parse_dotenv", "with_env_file"]

ENV_FILE = "envFile"
"""The key of a stdio server's dotenv file (VS Code's name)."""


_VAR = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-(.*?))?\}")


def expand(text: str, server: str, field: str) -> str:
    def sub(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = os.environ.get(name)
        if value is None or (value == "" and default is not None):
            if default is None:
                raise MCPConfigError(
                    server, field, f"environment variable {name!r} is not set (use ${{{name}:-default}})"
                )
            return default
        return value

    return _VAR.sub(sub, text)


def expand_fields(raw: dict[str, Any], server: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``raw`` with ``${VAR}`` expanded, and the stdio fields expansion changed, as written."""
    out = dict(raw)
    written: dict[str, Any] = {}
    for key in ("command", "cwd", "url"):
        if isinstance(out.get(key), str):
            out[key] = expand(out[key], server, key)
            if out[key] != raw[key] and key != "url":
                written[key] = raw[key]
    if isinstance(out.get("args"), (list, tuple)):
        out["args"] = [
            expand(a, server, f"args[{i}]") if isinstance(a, str) else a for i, a in enumerate(out["args"])
        ]
        if out["args"] != list(raw["args"]):
            written["args"] = tuple(raw["args"])
    for key in ("env", "headers"):
        if isinstance(out.get(key), Mapping):
            out[key] = {
                k: expand(v, server, f"{key}.{k}") if isinstance(v, str) else v for k, v in out[key].items()
            }
    if isinstance(out.get("oauth"), Mapping):
        out["oauth"] = {
            k: expand(v, server, f"oauth.{k}") if isinstance(v, str) else v for k, v in out["oauth"].items()
        }
    return out, written


def with_env_file(server: str, data: dict[str, Any], env_file: Any, folder: Path | None) -> dict[str, Any]:
    """``data`` with the variables of its ``envFile`` under its ``env`` (``env`` wins)."""
    if not isinstance(env_file, str) or not env_file:
        raise MCPConfigError(server, ENV_FILE, "must be the path of a dotenv file (a string)")
    path = Path(expand(env_file, server, ENV_FILE))
    hint = "fix the path or create the file"
    try:
        path = path.expanduser()
        if not path.is_absolute():
            base = "the config file's folder" if folder else "the working directory"
            hint += f" (a relative path is relative to {base})"
            path = (folder or Path.cwd()) / path
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, ValueError, RuntimeError) as exc:  # ValueError: a NUL, or not UTF-8
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise MCPConfigError(server, ENV_FILE, f"cannot read {str(path)!r}: {reason}; {hint}") from None
    try:
        variables = parse_dotenv(text)
    except _DotenvError as exc:
        raise MCPConfigError(server, ENV_FILE, f"{path}:{exc.line}: {exc.problem}") from None
    env = data.get("env", {})
    if not isinstance(env, Mapping):
        return data  # validation reports the bad 'env'
    return {**data, "env": {**variables, **env}}


class _DotenvError(MCPError, ValueError):
    def __init__(self, line: int, problem: str) -> None:
        self.line = line
        self.problem = problem
        super().__init__(f"line {line}: {problem}")


_DOTENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_DOTENV_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "$": "$"}


def parse_dotenv(text: str) -> dict[str, str]:
    """The variables of a dotenv file: ``KEY=VALUE`` lines, ``#`` comments, an optional
    ``export`` prefix, values in single quotes (literal) or double quotes (``\\n``-style
    escapes; may span lines), unquoted values ending at `` #``. Values are taken literally
    (no ``${VAR}`` expansion). Raises ``ValueError`` naming the line (never its content)."""
    lines = text.replace("\r\n", "\n").split("\n")
    variables: dict[str, str] = {}
    i = 0
    while i < len(lines):
        number, line = i + 1, lines[i].strip()
        i += 1
        if not line or line.startswith("#"):
            continue
        if line.startswith(("export ", "export\t")):
            line = line[len("export") :].lstrip()
        key, equals, rest = line.partition("=")
        key = key.strip()
        if not equals or not _DOTENV_KEY.fullmatch(key):
            raise _DotenvError(number, "expected KEY=VALUE")
        rest = rest.strip()
        if rest[:1] in ("'", '"'):
            quote, body = rest[0], rest[1:]
            while (end := _closing_quote(body, quote)) is None:
                if i >= len(lines):
                    raise _DotenvError(number, f"the value's {quote} quote is never closed")
                body += "\n" + lines[i]
                i += 1
            after = body[end + 1 :].strip()
            if after and not after.startswith("#"):
                raise _DotenvError(number, "unexpected text after the closing quote")
            value = body[:end]
            if quote == '"':
                value = re.sub(r"\\(.)", lambda m: _DOTENV_ESCAPES.get(m[1], m[0]), value)
        elif rest.startswith("#"):
            value = ""
        else:
            value = re.split(r"\s+#", rest, maxsplit=1)[0].strip()
        variables[key] = value
    return variables


def _closing_quote(body: str, quote: str) -> int | None:
    """Index of the quote that closes ``body`` (a backslash escapes in double quotes)."""
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\" and quote == '"':
            index += 2
            continue
        if char == quote:
            return index
        index += 1
    return None
