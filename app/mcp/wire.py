"""Wire constants and the protocol error type: the vocabulary every handler shares.

Reserved ``_meta`` keys, protocol versions and error codes live here as named
constants instead of string literals scattered through handlers.
"""

from __future__ import annotations

from typing import Any

JSONRPC_VERSION = "2.0"

# Protocol versions. Modern = per-request _meta, no handshake (2026-07-28 basic/versioning
# "Terminology"); legacy = initialize handshake (2025-11-25 and earlier).
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)
LEGACY_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26")
SUPPORTED_VERSIONS: tuple[str, ...] = MODERN_VERSIONS + LEGACY_VERSIONS
LATEST_LEGACY = LEGACY_VERSIONS[0]

# Reserved _meta keys (2026-07-28 basic/index "_meta").
META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
# Our own _meta keys on resources and results.
META_DOCSHELF = "dev.docshelf/document"
META_FOLDER = "dev.docshelf/folder"
# A folder read's children go on past its contents: the cursor of resources/list {uri}.
META_NEXT_CURSOR = "dev.docshelf/nextCursor"

# SEP-2093 "Resource Contents Metadata and Resource Capabilities" (draft) names no extension
# id and no opt-in; a client declares this one to get folders and per-resource capabilities.
EXTENSION_FOLDERS = "dev.docshelf/sep-2093"

# HTTP headers.
HEADER_SESSION_ID = "mcp-session-id"
HEADER_PROTOCOL_VERSION = "mcp-protocol-version"
HEADER_METHOD = "mcp-method"
HEADER_NAME = "mcp-name"

# JSON-RPC 2.0 error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# MCP error codes.
RESOURCE_NOT_FOUND_LEGACY = -32002  # 2025-11-25 server/resources "Error Handling"
HEADER_MISMATCH = -32020  # 2026-07-28 streamable-http "Server Validation"
UNSUPPORTED_PROTOCOL_VERSION = -32022  # 2026-07-28 basic/versioning


class McpError(Exception):
    """A JSON-RPC error to send back. ``http_status`` is what Streamable HTTP answers with."""

    def __init__(
        self, code: int, message: str, data: Any = None, *, http_status: int = 200
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status

    def to_error(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def error_response(request_id: Any, error: McpError) -> dict[str, Any]:
    """A JSON-RPC error response; ``id`` is left out when the request's id was unreadable."""
    response: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION}
    if request_id is not None:
        response["id"] = request_id
    response["error"] = error.to_error()
    return response


def result_response(request_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC_VERSION, "id": request_id, "result": result}


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION, "method": method}
    if params is not None:
        message["params"] = params
    return message


def unsupported_version(requested: object) -> McpError:
    """UnsupportedProtocolVersionError (2026-07-28 basic/versioning), HTTP 400."""
    return McpError(
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        {
            "supported": list(SUPPORTED_VERSIONS),
            "requested": requested if isinstance(requested, str) else str(requested),
        },
        http_status=400,
    )
