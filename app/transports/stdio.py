"""MCP over stdio: newline-delimited JSON-RPC on stdin/stdout (2026-07-28 basic/transports/stdio).

Both eras on one stream: an ``initialize`` makes this process a 2025-era
session; requests carrying the modern ``_meta`` are served statelessly. The server
sends requests of its own on the same stream (``roots/list``: app.mcp.outbound).
Nothing but MCP messages is written to stdout; logs go to stderr. The server
exits when stdin reaches end-of-file ("Shutdown"), and only then: a line that
is not a message gets its JSON-RPC error (or, for a notification, nothing) and
the next line is read as usual.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any, BinaryIO, Protocol

import anyio
import anyio.abc

from docshelf.app.mcp import codec, wire
from docshelf.app.mcp.envelope import Incoming
from docshelf.app.mcp.kernel import Kernel, Reply, Stream
from docshelf.app.mcp.outbound import ClientRequests
from docshelf.app.mcp.roots import RootsFollower
from docshelf.app.mcp.sessions import LegacySession, Peer

log = logging.getLogger(__name__)


class Served(Protocol):
    """What stdio needs of the runtime."""

    kernel: Kernel
    # Started with no shelf: the client's roots are the shelves (app.mcp.roots).
    roots: RootsFollower | None


class StdioConnection:
    """One client on stdin/stdout, and the channel the kernel sees
    (:class:`app.mcp.kernel.Channel`): at most one session, for the life of the process."""

    pushes_session_notifications = True

    def __init__(self, kernel: Kernel, output: BinaryIO, tasks: anyio.abc.TaskGroup) -> None:
        self.kernel = kernel
        self.output = output
        self.tasks = tasks
        self._session: LegacySession | None = None
        # The requests we send the client (roots/list) wait here for their answers.
        self._peer = Peer(outbound=ClientRequests(self.send))
        self._write_lock = anyio.Lock()

    # -- the channel ------------------------------------------------------------------------

    async def session(self) -> LegacySession | None:
        return self._session

    async def start_session(self, session: LegacySession) -> None:
        self._session = session

    def peer(self) -> Peer:
        return self._peer

    def claims_modern(self) -> bool:
        return False  # stdio has no headers: the era is the message's own

    def check_modern(self, message: Incoming, version: str) -> None:
        pass

    def check_legacy(self) -> None:
        pass

    # -- framing ----------------------------------------------------------------------------

    async def send(self, message: dict[str, Any]) -> None:
        line = codec.encode(message) + b"\n"
        async with self._write_lock:
            await anyio.to_thread.run_sync(self._write, line)

    def _write(self, line: bytes) -> None:
        self.output.write(line)
        self.output.flush()

    async def handle_line(self, line: bytes) -> None:
        """Answer one line. Nothing a line holds may end the process: the kernel answers
        every failure with the line's JSON-RPC error, which a notification never gets."""
        outcome = await self.kernel.handle(line, self)
        if isinstance(outcome, Reply):
            if outcome.to_notification:
                log.debug("dropping error for a notification: %s", outcome.message)
            else:
                await self.send(outcome.message)
        elif isinstance(outcome, Stream):
            self.tasks.start_soon(self._pump, outcome)

    async def _pump(self, stream: Stream) -> None:
        async for message in stream.messages:
            if message is not None:  # stdio needs no keep-alive
                await self.send(message)

    async def refuse_oversized(self) -> None:
        """A line longer than one message may be: skipped whole, unread (its id with it)."""
        error = wire.McpError(
            wire.INVALID_REQUEST,
            f"Invalid Request: a message is at most {codec.MAX_MESSAGE_BYTES} bytes "
            "(4 MiB); this line was longer and was skipped",
        )
        self.kernel.refused(error)
        await self.send(wire.error_response(None, error))


async def read_lines(stdin: BinaryIO) -> AsyncIterator[bytes | None]:
    """stdin's lines until end-of-file; ``None`` in place of a line longer than
    ``MAX_MESSAGE_BYTES``, which is read to its end in pieces, never held whole."""
    limit = codec.MAX_MESSAGE_BYTES
    while True:
        line = await anyio.to_thread.run_sync(stdin.readline, limit + 1)
        if not line:
            return
        if line.endswith(b"\n") or len(line) <= limit:
            yield line
            continue
        while True:
            rest = await anyio.to_thread.run_sync(stdin.readline, 1 << 16)
            if not rest or rest.endswith(b"\n"):
                break
        yield None


async def serve_stdio(served: Served, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Serve until stdin closes. Requests run concurrently; each response is one line."""
    async with anyio.create_task_group() as tasks:
        connection = StdioConnection(served.kernel, stdout, tasks)
        if served.roots is not None:
            served.roots.attach(tasks)
        async for line in read_lines(stdin):
            if line is None:
                tasks.start_soon(connection.refuse_oversized)
            elif line.strip():
                tasks.start_soon(connection.handle_line, line)
        log.info("stdin closed; shutting down")
        tasks.cancel_scope.cancel()
