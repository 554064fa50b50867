"""JSON-RPC text written by hand, for what no encoder is asked to make: nesting past the
transports' limits, params the server must refuse before it reads them."""

from __future__ import annotations

import json

from tests.support.servers import modern_meta


def nested(depth: int, leaf: str = "1") -> str:
    """JSON text: ``depth`` arrays, one inside the other, around ``leaf``."""
    return "[" * depth + leaf + "]" * depth


def modern_text(method: str, params_text: str, request_id: str = "1") -> bytes:
    """A 2026-07-28 request with hand-written JSON text for its params (``_meta`` added)."""
    meta = json.dumps(modern_meta())
    return (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"{method}",'
        f'"params":{{"_meta":{meta},{params_text}}}}}'
    ).encode()
