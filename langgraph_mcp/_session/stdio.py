"""The stdio transport: a server run as a child process, JSON-RPC over its stdin and stdout.

It yields the ``(read, write)`` pair of memory object streams the SDK's ``Client`` takes, as
the SDK's own ``stdio_client`` does, and keeps its contract:

* The child runs ``command args`` in ``cwd``, in a session (and process group) of its own, with
  the SDK's safe default environment (``HOME``, ``PATH``, ...) plus the configured ``env``
  only. Its stderr goes to ``errlog``.
* The read stream yields one ``SessionMessage`` per line of stdout. A line that is not a
  JSON-RPC message (a server printing to stdout, invalid UTF-8, a truncated message) yields a
  :class:`NotJSONRPCError` instead and the session goes on; the first such line is logged at
  WARNING, the rest at DEBUG (their first 80 characters, without the server's secrets); blank
  lines are skipped. The read stream ends when stdout ends
  (the child exited or closed it), or, logged as an error, when a line grows past
  ``MAX_MESSAGE_BYTES`` (256 MiB): memory stays bounded whatever a child writes.
* Messages sent on the write stream are written to stdin one line each, one at a time: the
  next one is taken once the child has read all but 64 KiB of the one before, so at most one
  message waits in memory. A child that stops reading holds up senders, never memory.
* Closing: stop reading (stdout is drained and dropped from then on, so a child blocked on a
  full pipe can exit), up to 0.5 s to flush the message being written, then close stdin and
  give the child 2 s to exit; then SIGTERM to its process group, SIGKILL to the group 2 s
  later. Closing finishes even when the caller is cancelled (the cancellation is raised once
  it has).

Unlike the SDK's reader, which joins its whole buffer again for each chunk it reads (quadratic
in a line's length: a 50 MB result took about a minute), a line is assembled once, in a
``bytearray``, from the chunks that arrive; only new data is searched for the newline, and a
complete line is decoded and parsed once. Reading pauses while 1 MiB read from the pipe waits
for the session, so a client slower than the child bounds what is buffered. Memory for one
large message peaks at about twice its size here: its bytes then its text, or its text then
its parsed form (each is released once the next exists).

``on_spawn`` receives the child's PID as soon as the process exists (before any other await),
so its owner can take a handle on it and stop it even if this context is never exited.
"""

from __future__ import annotations

import asyncio
import codecs
import collections
import json
import logging
import subprocess
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

import anyio
import anyio.lowlevel
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

from langgraph_mcp._session import grace
from langgraph_mcp._session.process import ServerProcess
from langgraph_mcp._support.pace import loads_in_slices
from langgraph_mcp._support.redact import Redactor
from langgraph_mcp.errors import MCPError

__all__ = ["MAX_MESSAGE_BYTES", "NotJSONRPCError", "StdioParams", "stdio_transport"]

logger = logging.getLogger("langgraph_mcp.pool")

FLUSH_TIMEOUT = 0.5
"""Seconds the message being written gets to reach the pipe when the session closes."""
READ_AHEAD = 1 << 20
"""Bytes read from stdout and not yet taken by the session, beyond which reading pauses."""
MAX_MESSAGE_BYTES = 256 << 20
"""The longest message a server may send: a line of stdout (and an SSE event on streamable
HTTP, see :func:`~langgraph_mcp._session.transports.open_client`)."""
_PREVIEW = 80
_SLICED_PARSE = 1 << 20
"""Lines longer than this (bytes) are parsed in slices: one ``json.loads`` holds the loop about
30 ms per MiB."""


@dataclass(frozen=True)
class StdioParams:
    """How to start a stdio server (see :class:`langgraph_mcp.config.StdioServerConfig`)."""

    command: str
    args: Sequence[str] = ()
    env: Mapping[str, str] | None = field(default=None, repr=False)
    cwd: str | Path | None = None
    encoding: str = "utf-8"


class NotJSONRPCError(MCPError, ValueError):
    """A line of a server's stdout that is not a JSON-RPC message (yielded, not raised)."""


class MessageTooLargeError(MCPError, ValueError):
    """A line of stdout longer than the limit."""


class _Lines:
    """Splits a byte stream into lines, in time linear in its length.

    A line that spans chunks is assembled once in a ``bytearray``; each chunk is searched for
    the newline once. Lines come without their newline, as ``bytes`` or ``bytearray``.
    """

    def __init__(self, limit: int) -> None:
        self._partial = bytearray()
        self._limit = limit

    def feed(self, chunk: bytes) -> collections.deque[bytes | bytearray]:
        """The lines ``chunk`` completes (taken from the deque, they are not held here).

        Raises:
            MessageTooLargeError: a line grew past the limit.
        """
        out: collections.deque[bytes | bytearray] = collections.deque()
        end = chunk.find(b"\n")
        if end < 0:
            self._grow(chunk)
            return out
        view = memoryview(chunk)
        if self._partial:
            self._grow(view[:end])
            out.append(self._partial)
            self._partial = bytearray()
        else:
            out.append(chunk[:end])
        start = end + 1
        while (end := chunk.find(b"\n", start)) >= 0:
            out.append(chunk[start:end])
            start = end + 1
        if start < len(chunk):
            self._grow(view[start:])
        return out

    def _grow(self, data: bytes | memoryview) -> None:
        if len(self._partial) + len(data) > self._limit:
            raise MessageTooLargeError
        self._partial += data

    def rest(self) -> bytearray:
        """What followed the last newline (at the end of the stream)."""
        rest, self._partial = self._partial, bytearray()
        return rest


class _Child(asyncio.SubprocessProtocol):
    """The child's pipes, as the event loop reports them: stdout chunks (reading paused while
    more than ``READ_AHEAD`` bytes wait), stdin flow control, and the exit."""

    def __init__(self) -> None:
        self.transport: asyncio.SubprocessTransport | None = None
        self.exited = asyncio.Event()
        self._chunks: collections.deque[bytes] = collections.deque()
        self._buffered = 0
        self._eof = False
        self._discarding = False
        self._read_paused = False
        self._write_paused = False
        self._stdin_lost = False
        self._waiters: dict[str, asyncio.Future[None]] = {}

    # -- called by the event loop --

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # (Not an isinstance check: uvloop's transports do not derive from asyncio's classes.)
        self.transport = cast(asyncio.SubprocessTransport, transport)

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        if fd != 1 or self._discarding:
            return
        self._chunks.append(data.encode() if isinstance(data, str) else data)  # (bytes: binary pipes)
        self._buffered += len(data)
        if self._buffered > READ_AHEAD and not self._read_paused:
            self._set_reading(paused=True)
        self._wake()

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self._eof = True
        elif fd == 0:
            self._stdin_lost = True
        self._wake()

    def process_exited(self) -> None:
        self.exited.set()

    def pause_writing(self) -> None:
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        self._wake()

    # -- called by the transport's tasks --

    async def read(self) -> bytes | None:
        """The next chunk of stdout, or None at its end."""
        while not self._chunks:
            if self._eof or self._discarding:
                return None
            await self._wait("read")
        data = self._chunks.popleft()
        self._buffered -= len(data)
        if self._read_paused and self._buffered <= READ_AHEAD // 2:
            self._set_reading(paused=False)
        return data

    async def write(self, data: bytes) -> None:
        """Hand ``data`` to stdin, then wait while the pipe holds more than its limit.

        Raises:
            anyio.BrokenResourceError: stdin is closed (the child exited or closed it).
        """
        pipe = self._pipe(0)
        if self._stdin_lost or pipe is None or pipe.is_closing():
            raise anyio.BrokenResourceError
        cast(asyncio.WriteTransport, pipe).write(data)
        while self._write_paused:
            if self._stdin_lost:
                raise anyio.BrokenResourceError
            await self._wait("write")

    def discard(self) -> None:
        """Drop stdout from now on (read() returns None): the child can flush and exit."""
        self._discarding = True
        self._chunks.clear()
        self._buffered = 0
        if self._read_paused:
            self._set_reading(paused=False)
        self._wake()

    def close_stdin(self) -> None:
        pipe = self._pipe(0)
        if pipe is not None:
            pipe.close()

    def _pipe(self, fd: int) -> asyncio.BaseTransport | None:
        if self.transport is None or self.transport.is_closing():
            return None
        return self.transport.get_pipe_transport(fd)

    def _set_reading(self, *, paused: bool) -> None:
        pipe = self._pipe(1)
        if pipe is None:
            return
        reader = cast(asyncio.ReadTransport, pipe)
        if paused:
            reader.pause_reading()
        else:
            reader.resume_reading()
        self._read_paused = paused

    async def _wait(self, side: str) -> None:
        """Until something happens on the pipes (one waiter per side: reading, writing)."""
        waiter = self._waiters[side] = asyncio.get_running_loop().create_future()
        try:
            await waiter
        finally:
            del self._waiters[side]

    def _wake(self) -> None:
        for waiter in self._waiters.values():
            if not waiter.done():
                waiter.set_result(None)


def _line_codec(encoding: str) -> str:
    """The codec's normalised name; only codecs in which a newline byte is always a line end."""
    name = codecs.lookup(encoding).name
    if "\n".encode(name) != b"\n" or name.startswith(("utf-16", "utf-32", "utf_16", "utf_32")):
        raise ValueError(f"encoding {encoding!r} cannot carry newline-delimited JSON-RPC")
    return name


class _Parser:
    """Lines of stdout -> ``SessionMessage`` or :class:`NotJSONRPCError`.

    A line is decoded, parsed by ``json`` and then validated from Python objects: pydantic's
    own JSON parsing of a 50 MB string peaked at six times its size (the line's ``str`` and
    ``json``'s result at most two). Each step drops what the one before it made.
    """

    def __init__(self, server: str, codec: str, redact: Redactor) -> None:
        self._server = server
        self._codec = codec
        self._redact = redact
        self._window = _PREVIEW + redact.reach
        """Characters kept for a preview: enough to recognise a secret that the cut would split."""
        self._line_no = 0
        self._bad = 0

    async def parse(
        self, lines: collections.deque[bytes | bytearray]
    ) -> SessionMessage | NotJSONRPCError | None:
        """The next line of ``lines``, taken from it (so its bytes go once decoded); None for a
        blank line. A line over ``_SLICED_PARSE`` bytes is parsed in slices
        (:func:`~langgraph_mcp._support.pace.loads_in_slices`): the
        event loop goes on while a 100,000-tool listing is read."""
        line = lines.popleft()
        self._line_no += 1
        if not line or line.isspace():
            return None
        size = len(line)
        try:
            text = line.decode(self._codec)
        except UnicodeDecodeError:
            return self._bad_line(size, bytes(line[: 4 * self._window]).decode(self._codec, "replace"))
        del line
        try:
            data = json.loads(text) if size <= _SLICED_PARSE else await loads_in_slices(text)
        except (ValueError, RecursionError):
            return self._bad_line(size, text[: self._window])
        preview = text[: self._window]
        del text
        try:
            message = types.jsonrpc_message_adapter.validate_python(data, by_name=False)
        except (ValueError, RecursionError):  # pydantic's ValidationError is a ValueError
            return self._bad_line(size, preview)
        return SessionMessage(message)

    def _bad_line(self, size: int, start: str) -> NotJSONRPCError:
        """``start``: the line's beginning, of which a preview without secrets is shown."""
        self._bad += 1
        preview = self._redact.head(start, _PREVIEW)
        more = "..." if size > len(preview.encode(self._codec, "replace")) else ""
        error = NotJSONRPCError(
            f"line {self._line_no} of its stdout is not a JSON-RPC message ({size} bytes: {preview!r}{more})"
        )
        if self._bad == 1:
            logger.warning(
                "MCP server %r: %s; ignored (a server must write only JSON-RPC to stdout; "
                "further lines like this are logged at DEBUG)",
                self._server,
                error,
            )
        else:
            logger.debug("MCP server %r: %s; ignored", self._server, error)
        return error


@asynccontextmanager
async def stdio_transport(
    params: StdioParams,
    *,
    server: str,
    redact: Redactor | None = None,
    errlog: IO[Any] | int = subprocess.DEVNULL,
    on_spawn: Callable[[int], None] | None = None,
) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
]:
    """Start ``params``' server and yield ``(read, write)`` for an SDK ``Client`` (see the module
    docstring for the contract). ``server`` names it in logs; ``redact`` keeps the secrets out of
    what is shown of stdout lines that are not JSON-RPC.

    Raises:
        OSError: the child could not be started (``FileNotFoundError``: no such command).
        ValueError: ``params.encoding`` is unknown or cannot carry newline-delimited messages.
    """
    codec = _line_codec(params.encoding)
    parser = _Parser(server, codec, redact if redact is not None else Redactor())
    loop = asyncio.get_running_loop()
    transport, child = await loop.subprocess_exec(
        _Child,
        params.command,
        *params.args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errlog,
        env=get_default_environment() | dict(params.env or {}),
        cwd=params.cwd,
        start_new_session=True,
    )
    # The child runs: no await until the task group below is entered (and its finally armed),
    # or a cancellation delivered in between would leave it running.
    process = ServerProcess(transport.get_pid())
    if on_spawn is not None:
        on_spawn(process.pid)
    read_sender, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_receiver = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()

    async def read_stdout() -> None:
        lines = _Lines(MAX_MESSAGE_BYTES)
        async with read_sender:
            try:
                while (chunk := await child.read()) is not None:
                    complete = lines.feed(chunk)
                    del chunk
                    while complete:
                        item = await parser.parse(complete)
                        if item is not None:
                            await read_sender.send(item)
                        del item
                item = await parser.parse(collections.deque([lines.rest()]))  # a last line without "\n"
                if item is not None:
                    await read_sender.send(item)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass  # the session is gone
            except MessageTooLargeError:
                logger.error(
                    "MCP server %r sent a message longer than %d MiB on stdout, the most one may "
                    "be; ending its session",
                    server,
                    MAX_MESSAGE_BYTES >> 20,
                )
            finally:
                child.discard()

    async def write_stdin() -> None:
        try:
            async with write_receiver:
                async for message in write_receiver:
                    text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await child.write((text + "\n").encode(codec))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # The child may still run but cannot be spoken to: end the session now, rather than
            # leave a request waiting for an answer to a message that was never sent.
            await read_sender.aclose()
        finally:
            writer_done.set()

    async def shutdown() -> None:
        child.discard()  # stop reading; a child blocked writing stdout cannot read its stdin
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(FLUSH_TIMEOUT):
            await writer_done.wait()
        child.close_stdin()
        with anyio.move_on_after(grace.EXIT):
            await child.exited.wait()
        if not child.exited.is_set():
            await process.stop(grace.KILL)
        process.close()
        transport.close()
        for stream in (read_stream, write_stream, read_sender, write_receiver):
            await stream.aclose()
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_stdout)
        tg.start_soon(write_stdin)
        try:
            yield read_stream, write_stream
        finally:
            try:
                with anyio.CancelScope(shield=True):
                    await _to_the_end(shutdown())
            finally:
                tg.cancel_scope.cancel()


async def _to_the_end(work: Coroutine[Any, Any, None]) -> None:
    """Await ``work`` until it has finished, even through cancellations of the caller (an
    anyio shield does not stop ``task.cancel()``); a cancellation is raised after it. ``work``
    must bound its own waits."""
    task = asyncio.ensure_future(work)
    cancelled: asyncio.CancelledError | None = None
    while True:
        try:
            await asyncio.shield(task)
            break
        except asyncio.CancelledError as exc:
            if task.done():  # ``work`` itself was cancelled (its loop is shutting down)
                raise
            cancelled = exc
    if cancelled is not None:
        raise cancelled
