"""Header-body consistency for 2026-07-28 requests (streamable-http "Server Validation").

"Servers that process the request body MUST reject requests where the values
specified in the headers do not match the corresponding values in the request
body" — with HTTP 400 and ``HeaderMismatch`` (-32020).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from starlette.types import Scope

from docshelf.app.mcp import wire

# streamable-http "Standard Request Headers": Mcp-Name mirrors params.name or params.uri.
NAME_SOURCES = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_SENTINEL_PREFIX, _SENTINEL_SUFFIX = "=?base64?", "?="


def _mismatch(message: str) -> wire.McpError:
    return wire.McpError(wire.HEADER_MISMATCH, f"Header mismatch: {message}", http_status=400)


def decode_header_value(value: str) -> str:
    """Undo the Base64 sentinel encoding (streamable-http "Value Encoding")."""
    if value.startswith(_SENTINEL_PREFIX) and value.endswith(_SENTINEL_SUFFIX):
        encoded = value[len(_SENTINEL_PREFIX) : -len(_SENTINEL_SUFFIX)]
        try:
            return base64.b64decode(encoded, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise _mismatch("Mcp-Name is not valid Base64-encoded UTF-8") from exc
    if any(not (0x20 <= ord(c) <= 0x7E or c == "\t") for c in value):
        raise _mismatch("header value contains invalid characters")
    return value


def check_request_headers(
    headers: Mapping[str, str], method: str, params: Mapping[str, Any], body_version: object
) -> None:
    """Raise HeaderMismatch unless the mirrored headers match the body."""
    header_version = headers.get(wire.HEADER_PROTOCOL_VERSION)
    if header_version is None:
        raise _mismatch("required header MCP-Protocol-Version is missing")
    if header_version != body_version:
        raise _mismatch(
            f"MCP-Protocol-Version header value {header_version!r} does not match "
            f"body value {body_version!r}"
        )
    header_method = headers.get(wire.HEADER_METHOD)
    if header_method is None:
        raise _mismatch("required header Mcp-Method is missing")
    if header_method != method:
        raise _mismatch(
            f"Mcp-Method header value {header_method!r} does not match body value {method!r}"
        )
    source = NAME_SOURCES.get(method)
    if source is None:
        return
    raw_name = headers.get(wire.HEADER_NAME)
    if raw_name is None:
        raise _mismatch(f"required header Mcp-Name is missing for {method}")
    name = decode_header_value(raw_name)
    if name != params.get(source):
        raise _mismatch(
            f"Mcp-Name header value {name!r} does not match body value {params.get(source)!r}"
        )


# The fields we read that take one value — (how the specs spell the name, where that is
# said) by lowercase name. Each sent on two lines is refused (400): it cannot be combined
# like a list (RFC 9110 §5.3: only "if that field's definition allows multiple field line
# values to be recombined as a comma-separated list"), and which line counts is exactly
# what a proxy reading the first and a server reading the last would disagree on — an
# Origin check passed by the second of two Origins is no check.
SINGLE_VALUED = {
    # "MUST respond with a 400 ... more than one Host header field line"
    "host": ("Host", "RFC 9112 §3.2"),
    "origin": ("Origin", "RFC 6454 §7.3"),  # "MUST NOT include more than one Origin header"
    "content-type": ("Content-Type", "RFC 9110 §8.3"),
    "authorization": ("Authorization", "RFC 9110 §11.6.2"),
    wire.HEADER_SESSION_ID: ("Mcp-Session-Id", "streamable-http Session Management"),
    # Mirrors of one body value each (2026-07-28): malformed, so HeaderMismatch (-32020).
    wire.HEADER_PROTOCOL_VERSION: ("MCP-Protocol-Version", "streamable-http Server Validation"),
    wire.HEADER_METHOD: ("Mcp-Method", "streamable-http Server Validation"),
    wire.HEADER_NAME: ("Mcp-Name", "streamable-http Server Validation"),
}
_MIRRORED = (wire.HEADER_PROTOCOL_VERSION, wire.HEADER_METHOD, wire.HEADER_NAME)


def request_headers(scope: Scope) -> dict[str, str]:
    """The request's headers by (lowercase) name, decoded once per request and kept in the
    scope for whoever asks next (the origin guard, then the endpoint).

    A field sent on several lines is one value, the lines' values joined with ", " in
    order (RFC 9110 §5.3): ``Accept: application/json`` then ``Accept: text/event-stream``
    is one Accept listing both. :func:`repeated_single_value` refuses the fields that take
    one value.
    """
    headers: dict[str, str] | None = scope.get("docshelf.headers")
    if headers is None:
        headers = {}
        lines: dict[str, int] = {}
        for raw_name, raw_value in scope["headers"]:
            name = raw_name.decode("latin-1")
            # RFC 9110 §5.5: a field value has no leading or trailing whitespace (OWS is not
            # part of it); a server may see it padded anyway ("Mcp-Name:  search_documents ").
            value = raw_value.decode("latin-1").strip(" \t")
            lines[name] = lines.get(name, 0) + 1
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        scope["docshelf.headers"] = headers
        scope["docshelf.header_lines"] = lines
    return headers


def repeated_single_value(scope: Scope) -> wire.McpError | None:
    """A 400 naming the first single-valued field (:data:`SINGLE_VALUED`) the request sent on
    more than one line; None if there is none."""
    request_headers(scope)
    lines: dict[str, int] = scope["docshelf.header_lines"]
    for name, (spelled, source) in SINGLE_VALUED.items():
        count = lines.get(name, 0)
        if count > 1:
            code = wire.HEADER_MISMATCH if name in _MIRRORED else wire.INVALID_REQUEST
            message = (
                f"Bad Request: the {spelled} header came on {count} lines; it takes one "
                f"value ({source}): send it once"
            )
            return wire.McpError(code, message, http_status=400)
    return None
