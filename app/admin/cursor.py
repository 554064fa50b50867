"""The cursor of ``GET /admin/documents``: an opaque token for the id a page ends at."""

from __future__ import annotations

import base64
import binascii

MAX_ID = 2**63 - 1
_CURSOR_PREFIX = "after:"


class InvalidCursor(ValueError):
    """A cursor this server did not hand out."""


def encode_cursor(last_id: int) -> str:
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{last_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> int:
    """The id after which the page starts; :class:`InvalidCursor` for anything else."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise InvalidCursor(cursor) from exc
    number = text.removeprefix(_CURSOR_PREFIX)
    if not text.startswith(_CURSOR_PREFIX) or not number.isdigit() or int(number) > MAX_ID:
        raise InvalidCursor(cursor)
    return int(number)
