"""What the tests of untrusted tool definitions watch: a loopback HTTP server that records every
request (a schema ``$ref`` to it must never be fetched) and a file holding a sentinel (a
``file://`` ``$ref`` to it must never be read into anything a model or a log sees)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REMOTE_SENTINEL = "REMOTE-SENTINEL-7f3a"
FILE_SENTINEL = "FILE-SENTINEL-91c2"


class RefServer:
    """Serves a JSON schema naming :data:`REMOTE_SENTINEL` at ``url``; ``hits`` lists the paths
    requested so far."""

    def __init__(self) -> None:
        hits: list[str] = []
        self.hits = hits

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                body = json.dumps({"type": "string", "enum": [REMOTE_SENTINEL]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/schema.json"


@contextmanager
def ref_server() -> Iterator[RefServer]:
    """A :class:`RefServer` running in a thread (a blocking fetch from the event loop still
    gets an answer, so a fetch shows up in ``hits`` instead of hanging the test)."""
    server = RefServer()
    thread = threading.Thread(target=server._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server._httpd.shutdown()
        server._httpd.server_close()
        thread.join()


def sentinel_file(folder: Path) -> Path:
    """A JSON schema file in ``folder`` naming :data:`FILE_SENTINEL`."""
    path = folder / "secret.json"
    path.write_text(json.dumps({"type": "string", "enum": [FILE_SENTINEL]}), encoding="utf-8")
    return path
