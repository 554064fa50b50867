"""MCP over stdio: newline-delimited JSON-RPC on stdin/stdout (2026-07-28 basic/transports/stdio).

Both eras on one stream: an ``initialize`` makes this process a 2025-era
session; requests carrying the modern ``_meta`` are served statelessly.
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

from app.mcp import codec, wire
from app.mcp.context import is_modern_request
from app.mcp.notifications import ListenFilter, listen, session_stream
from app.mcp.server import Incoming, McpServer, parse_message, request_id_of
from app.mcp.sessions import LegacySession
from storage.events import EventBus

log = logging.getLogger(__name__)


class Served(Protocol):
    """What stdio needs of the runtime."""

    server: McpServer
    bus: EventBus

    @property
    def settings(self) -> Any: ...


class StdioConnection:
    def __init__(self, served: Served, output: BinaryIO, tasks: anyio.abc.TaskGroup) -> None:
        self.server = served.server
        self.bus = served.bus
        self.keepalive_s: float = served.settings.keepalive_s
        self.output = output
        self.tasks = tasks
        self.session: LegacySession | None = None
        self._subscriptions: dict[Any, anyio.CancelScope] = {}
        self._write_lock = anyio.Lock()

    async def send(self, message: dict[str, Any]) -> None:
        line = codec.encode(message) + b"\n"
        async with self._write_lock:
            await anyio.to_thread.run_sync(self._write, line)

    def _write(self, line: bytes) -> None:
        self.output.write(line)
        self.output.flush()

    async def handle_line(self, line: bytes) -> None:
        """Answer one line. Nothing a line holds may end the process: every failure becomes
        the line's JSON-RPC error, or nothing for a notification (never answered)."""
        raw: Any = None
        try:
            raw = codec.decode(line)
            message = parse_message(raw)
            response = await self._dispatch(message)
        except wire.McpError as error:
            if _is_notification(raw):
                log.debug("dropping error for a notification: %s", error.message)
                return
            response = wire.error_response(request_id_of(raw), error)
        except Exception as exc:
            log.exception("internal error answering a message")
            if _is_notification(raw):
                return
            internal = wire.McpError(wire.INTERNAL_ERROR, f"Internal error: {type(exc).__name__}")
            response = wire.error_response(request_id_of(raw), internal)
        if response is not None:
            await self.send(response)

    async def refuse_oversized(self) -> None:
        """A line longer than one message may be: skipped whole, unread (its id with it)."""
        await self.send(
            wire.error_response(
                None,
                wire.McpError(
                    wire.INVALID_REQUEST,
                    f"Invalid Request: a message is at most {codec.MAX_MESSAGE_BYTES} bytes "
                    "(4 MiB); this line was longer and was skipped",
                ),
            )
        )

    async def _dispatch(self, message: Incoming) -> dict[str, Any] | None:
        if message.kind == "response":
            return None
        modern = is_modern_request(message.params)
        if message.method == "initialize" and message.kind == "request" and not modern:
            self.session, result = self.server.initialize(message.params)
            return wire.result_response(message.id, result)
        if message.kind == "notification":
            self._notified(message)
            return None
        ctx = self.server.context_for(message, self.session)
        if message.method == "subscriptions/listen" and modern:
            listen_filter = ListenFilter.from_params(message.params)
            self._start_stream(
                message.id,
                listen(self.bus, message.id, listen_filter, keepalive_s=self.keepalive_s),
            )
            return None
        return wire.result_response(message.id, await self.server.call(message, ctx))

    def _notified(self, message: Incoming) -> None:
        if message.method == "notifications/initialized" and self.session is not None:
            if not self.session.initialized:
                self.session.initialized = True
                # basic/lifecycle: no server notifications before "initialized".
                self._start_stream(
                    None, session_stream(self.bus, self.session, keepalive_s=self.keepalive_s)
                )
        elif message.method == "notifications/cancelled":
            # stdio "Cancellation": stop the request and send nothing more for it. A requestId
            # that cannot name a request (not a RequestId) is ignored, like an unknown one
            # (basic/utilities/cancellation "Error Handling").
            request_id = message.params.get("requestId")
            if not _is_request_id(request_id):
                log.debug("ignoring notifications/cancelled without a valid requestId")
                return
            scope = self._subscriptions.pop(request_id, None)
            if scope is not None:
                scope.cancel()

    def _start_stream(
        self, request_id: Any, messages: AsyncIterator[dict[str, Any] | None]
    ) -> None:
        scope = anyio.CancelScope()
        if request_id is not None:
            self._subscriptions[request_id] = scope

        async def pump() -> None:
            with scope:
                async for message in messages:
                    if message is not None:  # stdio needs no keep-alive
                        await self.send(message)
            self._subscriptions.pop(request_id, None)

        self.tasks.start_soon(pump)


def _is_notification(raw: object) -> bool:
    return isinstance(raw, dict) and "id" not in raw and "method" in raw


def _is_request_id(value: object) -> bool:
    """A JSON-RPC RequestId: a string or an integer (a bool is neither, though Python says so)."""
    return isinstance(value, str | int) and not isinstance(value, bool)


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
        connection = StdioConnection(served, stdout, tasks)
        async for line in read_lines(stdin):
            if line is None:
                tasks.start_soon(connection.refuse_oversized)
            elif line.strip():
                tasks.start_soon(connection.handle_line, line)
        log.info("stdin closed; shutting down")
        tasks.cancel_scope.cancel()
