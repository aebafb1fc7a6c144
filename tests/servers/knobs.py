"""A server whose tool takes free-form object and array arguments and says what it received.

``tune(options, levels)`` returns the arguments exactly as they arrived, as JSON text, so a test
can tell what the server was sent (a non-finite number sent as ``null``, say).
"""

import json
import sys
from pathlib import Path
from typing import Any

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp.server.mcpserver import MCPServer

from tests.servers._runner import run_cli


def build_server(name: str = "knobs") -> MCPServer:
    srv: MCPServer = MCPServer(name)

    @srv.tool()
    def tune(options: dict[str, Any], levels: list[float] | None = None) -> str:
        """Echo the options and levels received, as JSON text."""
        return json.dumps({"options": options, "levels": levels}, sort_keys=True)

    return srv


def main() -> None:
    run_cli(build_server, description=__doc__)


if __name__ == "__main__":
    main()
