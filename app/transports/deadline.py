"""A deadline for each request's head (request line and headers), which uvicorn lacks.

uvicorn (read in 0.54: ``protocols/http/h11_impl.py``; ``httptools_impl.py`` is
the same) has one connection timer, ``timeout_keep_alive``, armed only after a
response and cancelled by the first byte of the next request. A connection that
sends nothing, or half a request line or half its headers and then stalls — or
trickles a byte at a time — is held for ever: 5,000 such connections were.

This is uvicorn's h11 protocol plus one timer. It is armed when the connection
opens and whenever bytes arrive while no complete head has (h11 keeps the
client in ``IDLE`` until a whole head is parsed), and cancelled once the head is
complete; from then the body has its own deadline (``app.transports.body``) and
an idle keep-alive connection uvicorn's. The deadline runs from the first
moment of waiting, so trickling does not extend it. When it passes, the
connection is closed without a response, as nginx's ``client_header_timeout``
does: a client that cannot send its headers in time will not read one.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)


class HeadDeadlineH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, closing connections whose request head is late."""

    head_timeout_s: float = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE:
            self._arm()  # part of a head: the deadline already running, if any, stands
        else:
            self._disarm()

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
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            log.debug(
                "closing a connection from %s: no complete request head in %gs",
                self.client,
                self.head_timeout_s,
            )
            self.transport.close()


def with_head_deadline(timeout_s: float) -> type[HeadDeadlineH11Protocol]:
    """The protocol class to give uvicorn (``Config(http=...)``), with this deadline."""
    if timeout_s <= 0:
        raise ValueError("the request-head timeout must be positive")
    return type(
        "HeadDeadlineH11Protocol", (HeadDeadlineH11Protocol,), {"head_timeout_s": timeout_s}
    )
