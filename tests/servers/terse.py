"""Runs a stdio MCP server and leaves ``resultType`` out of its ``tools/call`` results.

    python tests/servers/terse.py <server command...>

The 2026-07-28 revision says a result without ``resultType`` is complete: a server may leave it
out. Lines from the client pass unchanged (the relay notes the ids of ``tools/call`` requests);
each result line for one of those ids loses its ``resultType``. Standard library only.
"""

import contextlib
import json
import subprocess
import sys
import threading

_calls: set[object] = set()
_lock = threading.Lock()


def _relay_input(server: "subprocess.Popen[bytes]") -> None:
    assert server.stdin is not None
    for line in sys.stdin.buffer:
        with contextlib.suppress(ValueError):
            message = json.loads(line)
            if isinstance(message, dict) and message.get("method") == "tools/call":
                with _lock:
                    _calls.add(message.get("id"))
        try:
            server.stdin.write(line)
            server.stdin.flush()
        except (BrokenPipeError, ValueError):
            break
    with contextlib.suppress(BrokenPipeError, ValueError):
        server.stdin.close()


def _terse(line: bytes) -> bytes:
    try:
        message = json.loads(line)
    except ValueError:
        return line
    if not (isinstance(message, dict) and isinstance(message.get("result"), dict)):
        return line
    with _lock:
        if message.get("id") not in _calls:
            return line
        _calls.discard(message.get("id"))
    message["result"].pop("resultType", None)
    return json.dumps(message).encode() + b"\n"


def main() -> None:
    server = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdout is not None
    threading.Thread(target=_relay_input, args=(server,), daemon=True).start()
    for line in iter(server.stdout.readline, b""):
        sys.stdout.buffer.write(_terse(line))
        sys.stdout.buffer.flush()
    sys.exit(server.wait())


if __name__ == "__main__":
    main()
