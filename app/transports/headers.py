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


def request_headers(scope: Scope) -> dict[str, str]:
    """The request's headers by (lowercase) name, decoded once per request and kept in the
    scope for whoever asks next (the origin guard, then the endpoint)."""
    headers: dict[str, str] | None = scope.get("docshelf.headers")
    if headers is None:
        # RFC 9110 §5.5: a field value has no leading or trailing whitespace (OWS is not
        # part of it); a server may see it padded anyway ("Mcp-Name:  search_documents ").
        headers = {
            k.decode("latin-1"): v.decode("latin-1").strip(" \t") for k, v in scope["headers"]
        }
        scope["docshelf.headers"] = headers
    return headers
