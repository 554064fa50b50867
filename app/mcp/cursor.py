"""Opaque pagination cursors (2026-07-28 server/utilities/pagination).

A cursor names the last URI of the previous page (or, for a listing in another
order, the last row's sort value and URI), so pages stay stable while documents
are added or removed elsewhere in the order. Clients must treat it as
opaque; we still refuse anything we did not make (-32602, "Invalid cursors
SHOULD result in an error with code -32602").
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from docshelf.app.mcp import codec

_VERSION = 1


class InvalidCursor(ValueError):
    pass


def encode_cursor(after_uri: str) -> str:
    return encode_payload({"after": after_uri})


def decode_cursor(cursor: object) -> str:
    """The URI a cursor continues after; :class:`InvalidCursor` for anything else."""
    payload = decode_payload(cursor)
    if set(payload) != {"v", "after"} or not isinstance(payload["after"], str):
        raise InvalidCursor("cursor was not issued by this server")
    return payload["after"]


def encode_payload(fields: Mapping[str, object]) -> str:
    """A cursor holding ``fields`` (JSON values), for a listing whose position takes more
    than one URI to name (``list_documents``: its order, sort value and tie-breaker)."""
    payload = json.dumps({"v": _VERSION, **fields}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def decode_payload(cursor: object) -> dict[str, Any]:
    """The fields of a cursor :func:`encode_payload` made (``"v"`` among them);
    :class:`InvalidCursor` for anything else, byte for byte: a cursor we would not have
    written is refused, so no other spelling of the same fields gets through."""
    if not isinstance(cursor, str) or not cursor or len(cursor) > 16_384:
        raise InvalidCursor("cursor must be a non-empty string this server issued")
    try:
        # Bounded like a message: the JSON inside is the client's too, nested as deep as
        # 16 KiB of Base64 allows.
        payload = codec.parse(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, ValueError) as exc:  # codec.Malformed is a ValueError
        raise InvalidCursor("cursor was not issued by this server") from exc
    if not isinstance(payload, dict) or payload.get("v") != _VERSION:
        raise InvalidCursor("cursor was not issued by this server")
    fields = {key: value for key, value in payload.items() if key != "v"}
    if encode_payload(fields) != cursor:
        raise InvalidCursor("cursor was not issued by this server")
    return payload
