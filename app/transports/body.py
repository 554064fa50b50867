"""Reading a POST body: bounded in size while it is read, and in time.

The size is checked against ``Content-Length`` before anything is read and again
as chunks arrive (a chunked body declares no length), so an oversized body is
refused without being held. The deadline covers the whole body, so a client that
trickles it cannot stretch it; the request's head has its own
(``app.transports.deadline``). Both answers close the connection: the rest of
the body would otherwise be read as the next request.
"""

from __future__ import annotations

import anyio
from starlette.requests import Request

from app.mcp import wire


def _refuse(message: str, status: int) -> wire.McpError:
    return wire.McpError(wire.INVALID_REQUEST, message, http_status=status)


async def read_body(request: Request, *, limit: int, timeout_s: float) -> bytes:
    """The whole body; a 413 or 408 :class:`~app.mcp.wire.McpError` if it is over ``limit``
    bytes or has not arrived within ``timeout_s``. ``ClientDisconnect`` passes through."""
    too_large = f"Payload Too Large: at most {limit} bytes"
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _refuse(too_large, 413)
    chunks: list[bytes] = []
    size = 0
    try:
        with anyio.fail_after(timeout_s):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise _refuse(too_large, 413)
                chunks.append(chunk)
    except TimeoutError:
        raise _refuse(
            f"Request Timeout: the body did not arrive within {timeout_s:g} s", 408
        ) from None
    return b"".join(chunks)
