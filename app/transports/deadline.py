"""A deadline for each request's head (request line and headers), which uvicorn lacks.

uvicorn (read in 0.54: ``protocols/http/httptools_impl.py``; ``h11_impl.py`` is
the same) has one connection timer, ``timeout_keep_alive``, armed only after a
response and cancelled by the first byte of the next request. A connection that
sends nothing, or half a request line or half its headers and then stalls — or
trickles a byte at a time — is held for ever: 5,000 such connections were.

This is uvicorn's httptools protocol (the C parser: about twice as fast as h11
per request, issue 13) plus one timer. It is armed when the connection opens
and whenever bytes arrive while no complete head has (from a message's first
byte to its last header), and cancelled once the head is complete; from then
the body has its own deadline (``app.transports.body``) and an idle keep-alive
connection uvicorn's. The deadline runs from the first moment of waiting, so
trickling does not extend it. When it passes, the connection is closed without
a response, as nginx's ``client_header_timeout`` does: a client that cannot send
its headers in time will not read one.

The head's size is bounded too, as uvicorn bounds it on h11
(``h11_max_incomplete_event_size``, ``--max-header-bytes``): the C parser has no
such limit of its own.
"""

from __future__ import annotations

import asyncio
import logging

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger(__name__)
DEFAULT_MAX_HEAD_BYTES = 16 * 1024  # h11's own default


class HeadDeadlineProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, closing connections whose request head is late or large."""

    head_timeout_s: float = 10.0
    _head_deadline: asyncio.TimerHandle | None = None
    _head_complete = False
    _head_bytes = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        awaiting = not self._head_complete
        super().data_received(data)
        if self._head_complete or self.transport.is_closing():
            self._disarm()
            return
        self._arm()  # part of a head: the deadline already running, if any, stands
        self._head_bytes = (self._head_bytes if awaiting else 0) + len(data)
        limit = self.config.h11_max_incomplete_event_size or DEFAULT_MAX_HEAD_BYTES
        if self._head_bytes > limit:
            self._disarm()
            self.send_400_response(f"Request head over {limit} bytes")

    def on_message_begin(self) -> None:
        self._head_complete = False
        self._head_bytes = 0
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._head_complete = True
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._head_deadline is None and not self.transport.is_closing():
            self._head_deadline = self.loop.call_later(self.head_timeout_s, self._late)

    def _disarm(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _late(self) -> None:
        self._head_deadline = None
        if not self._head_complete and not self.transport.is_closing():
            log.debug(
                "closing a connection from %s: no complete request head in %gs",
                self.client,
                self.head_timeout_s,
            )
            self.transport.close()


def with_head_deadline(timeout_s: float) -> type[HeadDeadlineProtocol]:
    """The protocol class to give uvicorn (``Config(http=...)``), with this deadline."""
    if timeout_s <= 0:
        raise ValueError("the request-head timeout must be positive")
    return type("HeadDeadlineProtocol", (HeadDeadlineProtocol,), {"head_timeout_s": timeout_s})
