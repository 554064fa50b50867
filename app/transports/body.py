"""Reading a POST body: bounded in size while it is read, and in time.

The size is checked against ``Content-Length`` before anything is read and again
as chunks arrive (a chunked body declares no length), so an oversized body is
refused without being held. The deadline covers the whole body, so a client that
trickles it cannot stretch it; the request's head has its own
(``app.transports.deadline``). Both answers close the connection: the rest of
the body would otherwise be read as the next request.
"""

from __future__ import annotations

import asyncio

from starlette.types import Receive

from docshelf.app.mcp import wire


class ClientGone(Exception):
    """The client disconnected before its body arrived: nobody is left to answer."""


def _refuse(message: str, status: int) -> wire.McpError:
    return wire.McpError(wire.INVALID_REQUEST, message, http_status=status)


async def read_body(
    receive: Receive, content_length: bytes | None, *, limit: int, timeout_s: float
) -> bytes:
    """The whole body; a 413 or 408 :class:`~app.mcp.wire.McpError` if it is over ``limit``
    bytes or has not arrived within ``timeout_s``; :class:`ClientGone` on a disconnect."""
    too_large = f"Payload Too Large: at most {limit} bytes"
    if content_length is not None and content_length.isdigit() and int(content_length) > limit:
        raise _refuse(too_large, 413)
    # The deadline is a plain timer that cancels this task: an anyio cancel scope per
    # request cost ~5 % of a small read (issue 13). Set, and cleared, on this task alone.
    task = asyncio.current_task()
    assert task is not None
    late = asyncio.Event()

    def expire() -> None:
        late.set()
        task.cancel()

    timer = asyncio.get_running_loop().call_later(timeout_s, expire)
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ClientGone
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise _refuse(too_large, 413)
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
    except asyncio.CancelledError:
        if not late.is_set():
            raise  # cancelled by someone else (shutdown): not ours to turn into a 408
        task.uncancel()
        raise _refuse(
            f"Request Timeout: the body did not arrive within {timeout_s:g} s", 408
        ) from None
    finally:
        timer.cancel()
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
