"""``tools/call`` by hand over HTTP in either era, each answer checked against its schema."""

from __future__ import annotations

from typing import Any

from tests.support.schema import validate_response
from tests.support.servers import MODERN, RawClient

NEGOTIATION = "io.modelcontextprotocol/content-negotiation"


def features(*tags: str) -> dict[str, Any]:
    """Client capabilities declaring the content negotiation SEP's feature ``tags``."""
    return {"extensions": {NEGOTIATION: {"features": list(tags)}}}


def call_tool(
    raw: RawClient,
    era: str,
    name: str,
    arguments: dict[str, Any],
    capabilities: dict[str, Any] | None = None,
    session: str | None = None,
) -> dict[str, Any]:
    """The ``CallToolResult`` of one call: a stateless request in 2026-07-28; in 2025-11-25
    on ``session``, or on a new session with ``capabilities``."""
    params = {"name": name, "arguments": arguments}
    if era == MODERN:
        body = raw.modern(
            "tools/call", params, capabilities=capabilities, headers={"Mcp-Name": name}
        ).json()
    else:
        body = raw.legacy(
            session or raw.initialize(capabilities=capabilities), "tools/call", params
        ).json()
    validate_response(era, "CallToolResult", body)
    result: dict[str, Any] = body["result"]
    return result
