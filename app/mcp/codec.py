"""JSON text in and out, bounded: what both transports use to read and write one message.

Reading is where a hostile peer gets its say, so it is bounded three ways before
any handler sees a value: size (``MAX_MESSAGE_BYTES``, checked by the
transports while they read), UTF-8, and nesting depth. Python's parser recurses
once per level and raises ``RecursionError`` somewhere past ~1,000 levels (how
far depends on the caller's stack), and every later walk of the value (``repr``
in an error message, ``json.dumps`` of stored capabilities) would recurse again;
so anything deeper than ``MAX_DEPTH`` is refused at the door, the same way
whether or not the parser managed it. Python's parser also takes ``NaN``,
``Infinity`` and ``-Infinity``, which are not JSON (RFC 8259 §6: "Numeric values
that cannot be represented in the grammar below (such as Infinity and NaN) are not
permitted") and which nothing can write back; a number past a double's range (``1e999``)
would become one of them, so it is refused too (§9 lets a parser limit the range).
Too deep, not UTF-8 or not JSON is -32700 (JSON-RPC 2.0 "Error object": "Invalid
JSON was received by the server. An error occurred on the server while parsing the
JSON text").

Reading uses the standard library on purpose: requests are small, and it keeps
integers of any size (orjson reads those as floats).

Writing never fails on what a client sent: JSON text may escape a lone
surrogate (``"\\ud800"``) that no UTF-8 can carry, and an error message or id
that echoes it must still go out — escaped, as JSON allows.
"""

from __future__ import annotations

import json
import math
from typing import Any

from docshelf.app.mcp import wire

try:
    import orjson
except ImportError:  # optional: the standard library writes the same JSON, slower
    orjson = None  # type: ignore[assignment]

# One message: a POST body on Streamable HTTP, one line on stdio.
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
# Levels of arrays and objects, the envelope included. MCP messages need fewer than ten;
# client capabilities are free-form, so leave room.
MAX_DEPTH = 64


def _parse_error(reason: str) -> wire.McpError:
    return wire.McpError(wire.PARSE_ERROR, f"Parse error: {reason}", http_status=400)


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than ``limit`` levels; iterative, so a deep value
    cannot exhaust the stack here either."""
    level = [value] if isinstance(value, dict | list) else []
    for _ in range(limit):
        below: list[Any] = []
        for node in level:
            children = node.values() if isinstance(node, dict) else node
            below.extend(child for child in children if isinstance(child, dict | list))
        if not below:
            return False
        level = below
    return bool(level)


class Malformed(ValueError):
    """Not UTF-8 JSON text of at most ``MAX_DEPTH`` levels; the message says why."""


def _not_json(constant: str) -> Any:
    raise Malformed(f"{constant} is not a JSON number (RFC 8259 §6)")


def _finite(number: str) -> float:
    value = float(number)
    if math.isinf(value):
        raise Malformed(f"{number} is beyond the range of a double (RFC 8259 §6)")
    return value


def parse(data: bytes) -> Any:
    """The JSON value of ``data``, read the bounded way; :class:`Malformed` if there is none.

    Every JSON a client hands us goes through here — a message, and the JSON inside an
    opaque cursor alike (:mod:`app.mcp.cursor`) — so none can reach a handler as a
    ``RecursionError`` (-32603).
    """
    too_deep = f"arrays and objects nest deeper than {MAX_DEPTH} levels"
    try:
        # Strict UTF-8 (RFC 8259 §8.1): json.loads(bytes) would also take UTF-16/32 and
        # UTF-8-encoded surrogates.
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Malformed(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    try:
        value = json.loads(text, parse_constant=_not_json, parse_float=_finite)
    except RecursionError:
        raise Malformed(too_deep) from None
    except ValueError as exc:
        raise Malformed(str(exc)) from None
    # Cheap bound first: a message with few brackets cannot be deep.
    if data.count(b"[") + data.count(b"{") > MAX_DEPTH and _deeper_than(value, MAX_DEPTH):
        raise Malformed(too_deep)
    return value


def decode(data: bytes) -> Any:
    """The JSON value of one message; -32700 :class:`~app.mcp.wire.McpError` if it is not
    UTF-8 JSON text of at most ``MAX_DEPTH`` levels."""
    try:
        return parse(data)
    except Malformed as exc:
        raise _parse_error(str(exc)) from None


def encode(message: Any) -> bytes:
    """One message (or any JSON value) as compact UTF-8 JSON; lone surrogates (which UTF-8
    cannot carry) escaped.

    orjson where installed: it writes a read's contents[] several times faster than the
    standard library (JSON encoding was 38 % of a five-format read's time). What it
    refuses — a lone surrogate, an integer beyond 64 bits echoed from a request id —
    goes through the standard library as before.
    """
    if orjson is not None:
        try:
            return orjson.dumps(message)
        except TypeError:  # orjson.JSONEncodeError is a TypeError
            pass
    try:
        return json.dumps(
            message, ensure_ascii=False, allow_nan=False, separators=(",", ":")
        ).encode()
    except UnicodeEncodeError:
        return json.dumps(
            message, ensure_ascii=True, allow_nan=False, separators=(",", ":")
        ).encode()
