"""The JSON-RPC 2.0 envelope of one incoming message: what it is, and its id even when it
is malformed (an error answers with the id wherever it could be read)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from docshelf.app.mcp import wire


class Kind(enum.Enum):
    """What a JSON-RPC message is (JSON-RPC 2.0: a request has an id, a notification none,
    a response a result or an error)."""

    REQUEST = "request"
    NOTIFICATION = "notification"
    RESPONSE = "response"


@dataclass(frozen=True, slots=True)
class Incoming:
    """A well-formed JSON-RPC message from the client."""

    kind: Kind
    id: Any
    method: str | None
    params: dict[str, Any]
    answer: dict[str, Any] | None = None  # a response: the whole message


def invalid_request(message: str) -> wire.McpError:
    return wire.McpError(wire.INVALID_REQUEST, f"Invalid Request: {message}", http_status=400)


def parse_message(raw: Any) -> Incoming:
    """Validate the JSON-RPC 2.0 envelope; -32600 for anything that is not a message."""
    if not isinstance(raw, dict):
        raise invalid_request("expected one JSON-RPC message object (batches are not supported)")
    request_id = raw.get("id")
    if raw.get("jsonrpc") != wire.JSONRPC_VERSION:
        raise invalid_request('"jsonrpc" must be "2.0"')
    if "id" in raw and not is_request_id(request_id):
        raise invalid_request("id must be a string or an integer")
    method = raw.get("method")
    if method is None:
        if "id" in raw and ("result" in raw or "error" in raw):
            return Incoming(Kind.RESPONSE, request_id, None, {}, raw)
        raise invalid_request('"method" is missing')
    if not isinstance(method, str):
        raise invalid_request('"method" must be a string')
    params = raw.get("params", {})
    if not isinstance(params, dict):
        raise invalid_request('"params" must be an object')
    kind = Kind.REQUEST if "id" in raw else Kind.NOTIFICATION
    return Incoming(kind, request_id, method, params)


def is_request_id(value: object) -> bool:
    """A JSON-RPC RequestId: a string or an integer (a bool is neither, though Python says so)."""
    return isinstance(value, str | int) and not isinstance(value, bool)


def is_notification(raw: object) -> bool:
    return isinstance(raw, dict) and "id" not in raw and "method" in raw


def request_id_of(raw: Any) -> Any:
    """The id of a possibly malformed message, for its error response (None if unreadable)."""
    if isinstance(raw, dict):
        value = raw.get("id")
        if is_request_id(value):
            return value
    return None
