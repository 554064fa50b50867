"""Opaque pagination cursors (2026-07-28 server/utilities/pagination).

A cursor names the last URI of the previous page, so pages stay stable while
documents are added or removed elsewhere in the order. Clients must treat it as
opaque; we still refuse anything we did not make (-32602, "Invalid cursors
SHOULD result in an error with code -32602").
"""

from __future__ import annotations

import base64
import binascii
import json

from docshelf.app.mcp import codec

_VERSION = 1


class InvalidCursor(ValueError):
    pass


def encode_cursor(after_uri: str) -> str:
    payload = json.dumps({"v": _VERSION, "after": after_uri}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def decode_cursor(cursor: object) -> str:
    """The URI a cursor continues after; :class:`InvalidCursor` for anything else."""
    if not isinstance(cursor, str) or not cursor or len(cursor) > 16_384:
        raise InvalidCursor("cursor must be a non-empty string this server issued")
    try:
        # Bounded like a message: the JSON inside is the client's too, nested as deep as
        # 16 KiB of Base64 allows.
        payload = codec.parse(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, ValueError) as exc:  # codec.Malformed is a ValueError
        raise InvalidCursor("cursor was not issued by this server") from exc
    if (
        not isinstance(payload, dict)
        or payload.get("v") != _VERSION
        or not isinstance(payload.get("after"), str)
        or encode_cursor(payload["after"]) != cursor
    ):
        raise InvalidCursor("cursor was not issued by this server")
    return payload["after"]
