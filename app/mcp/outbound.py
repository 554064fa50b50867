"""Requests this server sends to its client, and their answers matched back by id.

2025-11-25 basic "Requests": either side may send requests, each with an id the sender
has not used before in the session; responses carry that id back. The client's ids and
ours travel in opposite directions and never meet, but ours are strings of their own
(``docshelf-1``, ``docshelf-2`` …) so a log line says at once which side a message
belongs to.

Only stdio sends requests (``roots/list``, app.mcp.roots): one connection, one writer;
its notifications outside a stream go the same way (:meth:`ClientRequests.notify`).
A request waits a bounded time for its answer; an error answer becomes
:class:`ClientError` with the client's code and message; an answer whose id no request
of ours is waiting for (a late one, after its timeout, or one made up) is logged and
dropped, and the server goes on.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from docshelf.app.mcp import wire

log = logging.getLogger(__name__)

ID_PREFIX = "docshelf-"


class ClientError(Exception):
    """The client answered a request of ours with a JSON-RPC error (``code`` and
    ``message`` as it sent them), or with something that is no answer (``code`` None)."""

    def __init__(self, method: str, code: object, message: object) -> None:
        self.method = method
        self.code = code
        self.message = message if isinstance(message, str) else repr(message)
        what = self.message if code is None else f"error {code}: {self.message}"
        super().__init__(f"the client answered {method} with {what}")


class NoAnswer(TimeoutError):
    """The client did not answer a request of ours in time."""

    def __init__(self, method: str, timeout_s: float) -> None:
        self.method = method
        super().__init__(f"the client did not answer {method} within {timeout_s:g} s")


@dataclass(eq=False)
class _Waiting:
    method: str
    answered: anyio.Event = field(default_factory=anyio.Event)
    response: dict[str, Any] | None = None


class ClientRequests:
    """The requests of one connection's server side that still wait for an answer."""

    def __init__(self, send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        self._send = send
        self._ids = itertools.count(1)
        self._waiting: dict[str, _Waiting] = {}

    @property
    def waiting(self) -> int:
        """Requests sent and not answered (nor given up on) yet."""
        return len(self._waiting)

    async def request(
        self, method: str, params: dict[str, Any] | None, *, timeout_s: float
    ) -> dict[str, Any]:
        """Send ``method`` to the client and return its result object; :class:`ClientError`
        for an error answer (or a result that is not an object), :class:`NoAnswer` after
        ``timeout_s``. Called on the connection's event loop."""
        request_id = f"{ID_PREFIX}{next(self._ids)}"
        waiting = self._waiting[request_id] = _Waiting(method)
        try:
            await self._send({"id": request_id, **wire.notification(method, params)})
            with anyio.move_on_after(timeout_s):
                await waiting.answered.wait()
        finally:
            del self._waiting[request_id]
        response = waiting.response
        if response is None:
            raise NoAnswer(method, timeout_s)
        if "error" in response:
            error = response["error"]
            if not isinstance(error, dict):
                raise ClientError(method, None, f"an error that is not an object: {error!r}")
            raise ClientError(method, error.get("code"), error.get("message"))
        result = response.get("result")
        if not isinstance(result, dict):
            raise ClientError(method, None, f"a result that is not an object: {result!r}")
        return result

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send the client a notification of our own accord (outside any stream)."""
        await self._send(wire.notification(method, params))

    def settle(self, response: dict[str, Any]) -> bool:
        """Hand a response from the client to the request it answers; False (and a log
        line) if no request of ours waits for its id."""
        request_id = response.get("id")
        waiting = self._waiting.get(request_id) if isinstance(request_id, str) else None
        if waiting is None or waiting.response is not None:
            log.warning(
                "the client sent a response with id %r, which no request of ours is waiting "
                "for (answered already, given up on, or never sent): ignored",
                request_id,
            )
            return False
        waiting.response = response
        waiting.answered.set()
        return True
