"""A server with large text results, a quick tool, and a tool that writes garbage to stdout.

- ``bulky(mb, kind="mixed")``: ``bulky_text(mb, kind)``, about ``mb`` million characters of
  text mixing ASCII, line breaks, quotes, backslashes and multi-byte characters (so JSON
  escaping and UTF-8 sequences cut across read boundaries are exercised); ``kind="ascii"``
  leaves out the multi-byte ones. Before it returns it logs ``sending <n>`` (logger ``bulky``)
  and reports progress ``1/1`` (when the call asked for progress), so a client knows the result
  is on its way.
- ``prepare(mb, kind="mixed")``: builds that text ahead (so timing ``bulky`` leaves out
  building it) and returns ``"<length> <sha256 of its UTF-8>"``.
- ``small()``: ``"small"`` at once.
- ``garbage(lines, invalid_utf8=False)``: writes each of ``lines`` (and a line that is not
  UTF-8) straight to the process's stdout, between JSON-RPC messages; returns ``"wrote <n>"``.
  Stdio only.
- ``length(text)``: ``len(text)`` (for large arguments).
- ``pid()``, ``cwd()``, ``env_value(name)``: the server's process id, working directory, and
  one of its environment variables.
"""

import hashlib
import os
import sys
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Literal

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp.server.mcpserver import Context, MCPServer

from tests.servers._runner import run_cli

Kind = Literal["mixed", "ascii"]
_BLOCKS: dict[Kind, str] = {
    "mixed": 'block {:09d}: plain ASCII, "quotes", back\\slash, tab\t, café, naïve, ✓, 日本語, ½\n',
    # Python keeps an ASCII str at one byte per character (the mixed text takes two).
    "ascii": 'block {:09d}: plain ASCII, "quotes", back\\slash, tab\t, and more plain ASCII text\n',
}


def _blocks(mb: float, kind: Kind) -> tuple[str, int]:
    block = _BLOCKS[kind]
    return block, max(1, round(mb * 1_000_000 / len(block.format(0))))


@lru_cache(maxsize=2)
def bulky_text(mb: float, kind: Kind = "mixed") -> str:
    """About ``mb`` million characters: numbered blocks, so a lost, doubled or shifted piece of
    the text changes it."""
    block, count = _blocks(mb, kind)
    return "".join([block.format(i) for i in range(count)])


# The SDK's stdio server points fd 1 at stderr while it serves (stray prints miss the wire), so
# ``garbage`` writes to a duplicate of the original stdout taken before it starts.
_wire = 1


def _keep_the_wire() -> None:
    global _wire
    _wire = os.dup(1)


def bulky_length(mb: float, kind: Kind = "mixed") -> int:
    """``len(bulky_text(mb, kind))``, without building it."""
    block, count = _blocks(mb, kind)
    return count * len(block.format(0))


def build_server(name: str = "bulky") -> MCPServer:
    srv: MCPServer = MCPServer(name)

    # Text content only: a str result would also travel as structured content ({"result": ...}).
    @srv.tool(structured_output=False)
    async def bulky(mb: float, ctx: Context, kind: Kind = "mixed") -> str:
        """About ``mb`` million characters of text."""
        text = bulky_text(mb, kind)
        with warnings.catch_warnings():  # the logging capability is deprecated in 2026-07-28
            warnings.simplefilter("ignore")
            await ctx.info(f"sending {len(text)}", logger_name="bulky")
        await ctx.report_progress(1, 1, "sending")
        return text

    @srv.tool()
    def prepare(mb: float, kind: Kind = "mixed") -> str:
        """Build ``bulky(mb, kind)``'s text ahead: ``"<length> <sha256 of its UTF-8>"``."""
        text = bulky_text(mb, kind)
        return f"{len(text)} {hashlib.sha256(text.encode()).hexdigest()}"

    @srv.tool()
    def small() -> str:
        """Answer at once."""
        return "small"

    @srv.tool()
    def garbage(lines: list[str], invalid_utf8: bool = False) -> str:
        """Write ``lines`` to stdout as they are, outside any JSON-RPC message (then a line that
        is not UTF-8 if ``invalid_utf8``)."""
        data = "".join(f"{line}\n" for line in lines).encode()
        if invalid_utf8:
            data += b'{"jsonrpc": "2.0", "\xff\xfe": 1}\n'
        os.write(_wire, data)
        return f"wrote {len(lines) + invalid_utf8}"

    @srv.tool()
    def length(text: str) -> int:
        """The length of ``text`` (for large arguments)."""
        return len(text)

    @srv.tool()
    def cwd() -> str:
        """The server's working directory."""
        return os.getcwd()

    @srv.tool()
    def pid() -> int:
        """The server's process id."""
        return os.getpid()

    @srv.tool()
    def env_value(name: str) -> str:
        """The server process's value of an environment variable."""
        return os.environ.get(name, "<unset>")

    return srv


if __name__ == "__main__":
    run_cli(build_server, description=__doc__, on_start=_keep_the_wire)
