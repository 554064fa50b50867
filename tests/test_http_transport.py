"""Streamable HTTP, both eras, on one endpoint — every answer checked against the spec schema.

Each bad request gets its exact error, and the next good request still works.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path

import httpx
import pytest

from tests.support.json_text import modern_text, nested
from tests.support.rawhttp import exchange
from tests.support.schema import validate, validate_error, validate_response
from tests.support.servers import LEGACY, MODERN, RawClient, RunningServer, modern_meta, serve

ACCEPT_BOTH = "application/json, text/event-stream"


def assert_still_serving(raw: RawClient) -> None:
    response = raw.modern("resources/list")
    assert response.status_code == 200
    validate_response(MODERN, "ListResourcesResult", response.json())


# -- 2026-07-28 (modern, stateless) ---------------------------------------------------------


def test_discover_2026_lists_versions_capabilities_and_server_info(raw: RawClient) -> None:
    response = raw.modern("server/discover")
    assert response.status_code == 200
    body = response.json()
    validate_response(MODERN, "DiscoverResult", body)
    result = body["result"]
    assert result["supportedVersions"][0] == MODERN
    assert "2025-11-25" in result["supportedVersions"]
    assert "resources" in result["capabilities"]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "docshelf"
    assert result["resultType"] == "complete"


def test_list_2026_pages_with_opaque_cursors_in_a_stable_order(raw: RawClient) -> None:
    uris: list[str] = []
    cursor = None
    pages = 0
    while True:
        response = raw.modern("resources/list", {"cursor": cursor} if cursor else {})
        body = response.json()
        validate_response(MODERN, "ListResourcesResult", body)
        result = body["result"]
        # caching "Cacheable Results": resources/list carries hints; docshelf's list is the
        # same for every caller and fresh for a minute (app/mcp/context.py CACHE_HINTS).
        assert (result["ttlMs"], result["cacheScope"]) == (60_000, "public")
        assert len(result["resources"]) <= 3  # the fixture's --page-size
        uris += [r["uri"] for r in result["resources"]]
        pages += 1
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert pages >= 3
    assert uris == sorted(uris) and len(set(uris)) == len(uris)
    assert "docshelf://shelf/guides/field-guide.md" in uris
    assert "docshelf://shelf/Stra%C3%9Fe%20plan.md" in uris
    assert not any(".hidden" in uri for uri in uris)


def test_every_listed_resource_has_the_required_metadata(raw: RawClient) -> None:
    body = raw.modern("resources/list").json()
    for resource in body["result"]["resources"]:
        assert resource["name"] and resource["title"] and resource["description"]
        assert resource["mimeType"] and resource["size"] >= 0
        assert resource["annotations"]["lastModified"].endswith("Z")


def test_invalid_cursor_is_32602(raw: RawClient) -> None:
    response = raw.modern("resources/list", {"cursor": "not-a-cursor"})
    body = response.json()
    validate_error(MODERN, body)
    assert body["error"]["code"] == -32602
    assert "cursor" in body["error"]["message"].lower()
    assert_still_serving(raw)


def test_unknown_resource_is_32602_with_uri_in_2026(raw: RawClient) -> None:
    # server/resources "Error Handling": -32602, data.uri; never an empty contents array.
    uri = "docshelf://shelf/no/such/file.md"
    body = raw.modern("resources/read", {"uri": uri}).json()
    validate_error(MODERN, body)
    assert body["error"]["code"] == -32602
    assert body["error"]["data"] == {"uri": uri}
    assert_still_serving(raw)


@pytest.mark.parametrize(
    "uri",
    [
        "docshelf://shelf/../../etc/passwd",
        "docshelf://shelf/%2E%2E/x",
        "file:///etc/passwd",
        "docshelf://other/notes.txt",
    ],
)
def test_paths_outside_the_shelf_are_not_found(raw: RawClient, uri: str) -> None:
    body = raw.modern("resources/read", {"uri": uri}).json()
    assert body["error"]["code"] == -32602
    assert_still_serving(raw)


def test_templates_2026_one_per_shelf(raw: RawClient) -> None:
    body = raw.modern("resources/templates/list").json()
    validate_response(MODERN, "ListResourceTemplatesResult", body)
    templates = body["result"]["resourceTemplates"]
    # Issue #10: the form-style query names a part (pages of a PDF, a section).
    assert [t["uriTemplate"] for t in templates] == ["docshelf://shelf/{+path}{?pages,section}"]


def test_metadata_2026_answers_from_the_index(raw: RawClient) -> None:
    uri = "docshelf://shelf/notes.txt"
    body = raw.modern("resources/metadata", {"uri": uri}).json()
    validate(MODERN, "JSONRPCResultResponse", body)
    metadata = body["result"]["metadata"]
    assert metadata[0]["mimeType"] == "text/plain"
    assert metadata[0]["size"] == len(b"Plain notes.\nSecond line.\n")
    for resource in metadata:
        validate(MODERN, "Resource", resource)
        assert resource["uri"] == uri


def test_missing_meta_is_32602_and_400(raw: RawClient) -> None:
    response = raw.post(
        {"jsonrpc": "2.0", "id": 7, "method": "resources/list", "params": {}},
        {"MCP-Protocol-Version": MODERN, "Mcp-Method": "resources/list"},
    )
    assert response.status_code == 400
    body = response.json()
    validate_error(MODERN, body)
    assert body["id"] == 7 and body["error"]["code"] == -32602


def test_missing_client_capabilities_is_32602_and_400(raw: RawClient) -> None:
    meta = modern_meta()
    del meta["io.modelcontextprotocol/clientCapabilities"]
    response = raw.post(
        {"jsonrpc": "2.0", "id": 8, "method": "server/discover", "params": {"_meta": meta}},
        {"MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"},
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32602


def test_unsupported_version_is_32022_with_the_supported_list(raw: RawClient) -> None:
    meta = modern_meta()
    meta["io.modelcontextprotocol/protocolVersion"] = "1900-01-01"
    response = raw.post(
        {"jsonrpc": "2.0", "id": 9, "method": "resources/list", "params": {"_meta": meta}},
        {"MCP-Protocol-Version": "1900-01-01", "Mcp-Method": "resources/list"},
    )
    assert response.status_code == 400
    body = response.json()
    validate(MODERN, "UnsupportedProtocolVersionError", body)
    assert body["error"]["data"] == {
        "supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"],
        "requested": "1900-01-01",
    }
    assert_still_serving(raw)


@pytest.mark.parametrize(
    ("headers", "fragment"),
    [
        ({"Mcp-Method": "resources/templates/list"}, "Mcp-Method"),
        ({"Mcp-Method": "RESOURCES/READ"}, "Mcp-Method"),
        ({"MCP-Protocol-Version": "2025-11-25"}, "MCP-Protocol-Version"),
        ({"Mcp-Name": "docshelf://shelf/data.json"}, "Mcp-Name"),
        ({"Mcp-Name": "=?base64?not base64?="}, "Mcp-Name"),
    ],
)
def test_header_body_mismatch_is_32020_and_400(
    raw: RawClient, headers: dict[str, str], fragment: str
) -> None:
    response = raw.modern("resources/read", {"uri": "docshelf://shelf/notes.txt"}, headers=headers)
    assert response.status_code == 400
    body = response.json()
    validate_error(MODERN, body)
    assert body["error"]["code"] == -32020
    assert fragment in body["error"]["message"]
    assert_still_serving(raw)


def test_missing_mcp_name_on_read_is_32020(raw: RawClient) -> None:
    params = {"uri": "docshelf://shelf/notes.txt", "_meta": modern_meta()}
    response = raw.post(
        {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": params},
        {"MCP-Protocol-Version": MODERN, "Mcp-Method": "resources/read"},
    )
    assert response.status_code == 400 and response.json()["error"]["code"] == -32020


def test_base64_mcp_name_is_decoded_before_comparing(raw: RawClient) -> None:
    response = raw.modern("resources/read", {"uri": "docshelf://shelf/Stra%C3%9Fe%20plan.md"})
    assert response.status_code == 200
    encoded = raw.modern(
        "resources/read",
        {"uri": "docshelf://shelf/notes.txt"},
        headers={"Mcp-Name": "=?base64?ZG9jc2hlbGY6Ly9zaGVsZi9ub3Rlcy50eHQ=?="},
    )
    assert encoded.status_code == 200, encoded.text


@pytest.mark.parametrize(
    "method", ["initialize", "ping", "resources/subscribe", "logging/setLevel", "no/such"]
)
def test_legacy_only_and_unknown_methods_are_404_32601_in_2026(raw: RawClient, method: str) -> None:
    response = raw.modern(method, {"protocolVersion": LEGACY, "capabilities": {}})
    assert response.status_code == 404
    body = response.json()
    validate_error(MODERN, body)
    assert body["error"]["code"] == -32601


# -- JSON-RPC framing -----------------------------------------------------------------------


def test_malformed_json_is_parse_error_32700(raw: RawClient) -> None:
    response = raw.post(None, raw=b'{"jsonrpc": "2.0", "id": 1, "method": ')
    assert response.status_code == 400
    body = response.json()
    validate_error(MODERN, body)
    assert body["error"]["code"] == -32700 and "id" not in body
    assert_still_serving(raw)


@pytest.mark.parametrize(
    "message",
    [
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
        {"jsonrpc": "1.0", "id": 1, "method": "server/discover"},
        {"jsonrpc": "2.0", "id": None, "method": "server/discover"},
        {"jsonrpc": "2.0", "id": 1, "method": 42},
        {"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": [1]},
        "just a string",
    ],
)
def test_invalid_requests_are_32600(raw: RawClient, message: object) -> None:
    response = raw.post(message, {"MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"})
    assert response.status_code == 400
    body = response.json()
    validate_error(MODERN, body)
    assert body["error"]["code"] == -32600
    assert_still_serving(raw)


@pytest.mark.parametrize(
    "text",
    [
        nested(100_000).encode(),
        b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":' + b"{" * 3000,
        modern_text("server/discover", f'"deep":{nested(100_000)}'),
        modern_text("resources/list", f'"cursor":{nested(100_000)}'),
        modern_text("server/discover", f'"deep":{nested(63)}'),  # 65 in all
    ],
    ids=["bare-array", "unclosed-objects", "in-params", "as-cursor", "one-level-too-deep"],
)
def test_nesting_deeper_than_64_levels_is_parse_error_32700_not_500(
    raw: RawClient, text: bytes
) -> None:
    # JSON-RPC 2.0 "Error object": -32700 Parse error, "an error occurred on the server while
    # parsing the JSON text"; the id could not be read, so there is none (basic/index "Responses").
    response = raw.post(
        None, {"MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"}, raw=text
    )
    assert response.status_code == 400
    body = response.json()
    validate_error(MODERN, body)
    assert body["error"]["code"] == -32700 and "id" not in body
    assert_still_serving(raw)


def test_nesting_up_to_64_levels_is_read(raw: RawClient) -> None:
    response = raw.post(
        None,
        {"MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"},
        raw=modern_text("server/discover", f'"deep":{nested(62)}'),  # 64 with the envelope
    )
    assert response.status_code == 200, response.text
    validate_response(MODERN, "DiscoverResult", response.json())


def opaque(payload: bytes) -> str:
    """``payload`` wrapped as our cursors are: unpadded URL-safe Base64."""
    return base64.urlsafe_b64encode(payload).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        json.loads(nested(60)),
        [],
        {"after": "docshelf://shelf/a"},
        7,
        True,
        "",
        "x" * 20_000,
        # A string, as cursors are (under their 16 KiB limit), whose payload is JSON nested
        # past the parser's stack.
        opaque(nested(5_000).encode()),
        opaque(b'{"v":1,"after":' + nested(5_000).encode() + b"}"),
    ],
    ids=[
        "nested",
        "array",
        "object",
        "number",
        "bool",
        "empty",
        "huge",
        "deep-json-inside",
        "deep-after-inside",
    ],
)
def test_a_cursor_that_is_not_one_we_issued_is_32602_in_both_eras(
    raw: RawClient, cursor: object
) -> None:
    # server/utilities/pagination "Error Handling": invalid cursors → -32602.
    modern = raw.modern("resources/list", {"cursor": cursor}).json()
    validate_error(MODERN, modern)
    assert modern["error"]["code"] == -32602
    assert modern["error"]["message"].startswith("Invalid cursor")
    session = raw.initialize()
    legacy = raw.legacy(session, "resources/list", {"cursor": cursor}).json()
    validate_error(LEGACY, legacy)
    assert legacy["error"]["code"] == -32602
    assert legacy["error"]["message"].startswith("Invalid cursor")
    assert_still_serving(raw)


def test_invalid_utf8_is_parse_error_32700(raw: RawClient) -> None:
    response = raw.post(None, raw=b'{"jsonrpc":"2.0","id":1,"method":"ping\xff\xfe"}')
    assert response.status_code == 400
    body = response.json()
    validate_error(MODERN, body)
    assert body["error"]["code"] == -32700 and "id" not in body
    assert_still_serving(raw)


def test_lone_surrogates_are_answered_not_500(raw: RawClient) -> None:
    # JSON text may escape a lone surrogate ("\ud800") that no UTF-8 encodes; answers that
    # echo one (the id, an unknown method, a URI) must still go out as JSON.
    mismatch = raw.post(
        None,
        {"MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"},
        raw=modern_text("resources/list", '"x":1').replace(b'"id":1', b'"id":"\\ud800"'),
    )
    assert mismatch.status_code == 400, mismatch.text
    body = mismatch.json()
    validate_error(MODERN, body)
    assert body["id"] == "\ud800" and body["error"]["code"] == -32020
    session = raw.initialize()
    headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}
    unknown = raw.post(
        None, headers, raw=b'{"jsonrpc":"2.0","id":"\\udfff","method":"no/such\\ud800"}'
    )
    assert unknown.status_code == 200, unknown.text
    body = unknown.json()
    validate_error(LEGACY, body)
    assert body["id"] == "\udfff" and body["error"]["code"] == -32601
    read = raw.post(
        None,
        headers,
        raw=b'{"jsonrpc":"2.0","id":2,"method":"resources/read",'
        b'"params":{"uri":"docshelf://shelf/\\udc80.md"}}',
    )
    body = read.json()
    validate_error(LEGACY, body)
    assert body["error"]["code"] == -32002
    assert body["error"]["data"] == {"uri": "docshelf://shelf/\udc80.md"}
    assert_still_serving(raw)


def test_unsubscribe_from_a_uri_with_a_lone_surrogate_is_32602_not_32603(raw: RawClient) -> None:
    # 2025-11-25 server/resources: unsubscribe takes any URI string; one no UTF-8 can carry
    # cannot be looked up in the database and is a mistake in the request: -32602 (JSON-RPC
    # 2.0 "Invalid params"), not an internal error.
    session = raw.initialize()
    body = raw.legacy(session, "resources/unsubscribe", {"uri": "docshelf://shelf/\ud800"}).json()
    validate_error(LEGACY, body)
    assert body["error"]["code"] == -32602
    assert body["error"]["message"].startswith("params.uri is not valid Unicode text")
    assert (
        raw.legacy(session, "resources/unsubscribe", {"uri": "docshelf://shelf/x"}).json()["result"]
        == {}
    )
    assert_still_serving(raw)


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": None},
        {"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": "x"},
        {"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": 3},
        {"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": True},
        {"jsonrpc": "2.0", "id": 1, "method": None},
        {"jsonrpc": "2.0", "id": 1, "method": ["server/discover"]},
        {"jsonrpc": "2.0", "id": 1.5, "method": "server/discover"},
        {"jsonrpc": "2.0", "id": True, "method": "server/discover"},
        {"jsonrpc": "2.0", "id": [1], "method": "server/discover"},
        {"jsonrpc": "2.0", "id": {"a": 1}, "method": "server/discover"},
        {"jsonrpc": 2.0, "id": 1, "method": "server/discover"},
        {"id": 1, "method": "server/discover"},
        {},
        42,
        [],
    ],
)
def test_every_malformed_envelope_is_32600(raw: RawClient, message: object) -> None:
    response = raw.post(message, {"MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"})
    assert response.status_code == 400
    body = response.json()
    validate_error(MODERN, body)
    assert body["error"]["code"] == -32600
    assert_still_serving(raw)


def test_initialize_without_an_id_starts_no_session(raw: RawClient) -> None:
    # A notification gets no response (JSON-RPC 2.0 "Notification"); initialize must be a request.
    response = raw.post(
        {
            "jsonrpc": "2.0",
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {}},
        }
    )
    assert response.status_code == 400
    assert "mcp-session-id" not in response.headers
    body = response.json()
    validate_error(LEGACY, body)
    assert body["error"]["code"] == -32600 and "id" not in body
    assert_still_serving(raw)


def test_accept_without_event_stream_is_406(raw: RawClient) -> None:
    response = raw.modern("resources/list", headers={"Accept": "application/json"})
    assert response.status_code == 406
    assert "Accept" in response.json()["error"]["message"]


def test_non_json_content_type_is_415(raw: RawClient) -> None:
    response = raw.modern("resources/list", headers={"Content-Type": "text/plain"})
    assert response.status_code == 415


def test_foreign_origin_is_403(raw: RawClient) -> None:
    # streamable-http "Security & Endpoint": invalid Origin → 403, body a JSON-RPC error without id.
    response = raw.modern("resources/list", headers={"Origin": "http://evil.example.com"})
    assert response.status_code == 403
    body = response.json()
    validate_error(MODERN, body)
    assert "id" not in body
    assert_still_serving(raw)


def test_rebinding_host_is_403(raw: RawClient) -> None:
    response = raw.modern("resources/list", headers={"Host": "evil.example.com"})
    assert response.status_code == 403


def test_loopback_origin_is_allowed(raw: RawClient) -> None:
    response = raw.modern("resources/list", headers={"Origin": "http://localhost:6274"})
    assert response.status_code == 200


@pytest.mark.parametrize("allowed", [[], ["docs.example.com"]], ids=["no-names", "one-name"])
def test_host_check_stays_on_when_bound_to_every_interface(
    tmp_path: Path, allowed: list[str]
) -> None:
    # streamable-http "Security & Endpoint": DNS-rebinding protection. The container binds
    # 0.0.0.0; a rebinding attack still arrives with the attacker's name in Host, so the check
    # holds for every bind: loopback names plus the configured --allowed-host names.
    (tmp_path / "shelf").mkdir()
    flags = [arg for name in allowed for arg in ("--allowed-host", name)]
    with serve(tmp_path / "shelf", tmp_path / "data", "--host", "0.0.0.0", *flags) as server:
        raw = RawClient(server.url)
        port = httpx.URL(server.base).port

        def discover(host: str) -> httpx.Response:
            return raw.modern("server/discover", headers={"Host": host})

        refused = discover("evil.example")
        assert refused.status_code == 403
        body = refused.json()
        validate_error(MODERN, body)
        assert "id" not in body
        assert "'evil.example'" in body["error"]["message"]
        assert "--allowed-host" in body["error"]["message"]
        assert discover(f"evil.example:{port}").status_code == 403
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "localhost"):
            assert discover(host).status_code == 200, host
        for name in allowed:
            assert discover(name).status_code == 200, name
            assert discover(f"{name}:443").status_code == 200, name
        raw.close()


# -- 2025-11-25 (handshake era) ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("requested", "answered"),
    [("2025-11-25", "2025-11-25"), ("2025-06-18", "2025-06-18"), ("2024-11-05", "2025-11-25")],
)
def test_initialize_negotiates_the_version(raw: RawClient, requested: str, answered: str) -> None:
    # basic/lifecycle "Version Negotiation": same version if supported, else our latest.
    response = raw.post(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": requested,
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
    )
    body = response.json()
    validate_response(LEGACY, "InitializeResult", body)
    assert body["result"]["protocolVersion"] == answered
    assert body["result"]["capabilities"]["resources"] is not None
    session = response.headers["mcp-session-id"]
    assert all(0x21 <= ord(c) <= 0x7E for c in session)


def test_legacy_session_lists_reads_and_pings(raw: RawClient) -> None:
    session = raw.initialize()
    ping = raw.legacy(session, "ping").json()
    validate_response(LEGACY, "EmptyResult", ping)
    assert ping["result"] == {}
    listed = raw.legacy(session, "resources/list").json()
    validate_response(LEGACY, "ListResourcesResult", listed)
    assert "resultType" not in listed["result"]
    read = raw.legacy(session, "resources/read", {"uri": "docshelf://shelf/notes.txt"}).json()
    validate_response(LEGACY, "ReadResourceResult", read)
    assert read["result"]["contents"][0]["text"] == "Plain notes.\nSecond line.\n"


def test_unknown_resource_is_32002_in_2025_11_25(raw: RawClient) -> None:
    session = raw.initialize()
    body = raw.legacy(session, "resources/read", {"uri": "docshelf://shelf/missing.md"}).json()
    validate_error(LEGACY, body)
    assert body["error"]["code"] == -32002
    assert body["error"]["data"] == {"uri": "docshelf://shelf/missing.md"}


def test_request_without_session_is_400(raw: RawClient) -> None:
    response = raw.post(
        {"jsonrpc": "2.0", "id": 1, "method": "resources/list"}, {"MCP-Protocol-Version": LEGACY}
    )
    assert response.status_code == 400
    validate_error(LEGACY, response.json())


def test_unknown_session_is_404(raw: RawClient) -> None:
    response = raw.legacy("no-such-session", "resources/list")
    assert response.status_code == 404
    validate_error(LEGACY, response.json())


def test_delete_ends_the_session_and_later_requests_are_404(raw: RawClient) -> None:
    session = raw.initialize()
    deleted = raw.http.delete(
        raw.url, headers={"Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}
    )
    assert deleted.status_code == 204
    assert raw.legacy(session, "resources/list").status_code == 404
    again = raw.http.delete(raw.url, headers={"Mcp-Session-Id": session})
    assert again.status_code == 404


def test_unsupported_protocol_version_header_is_400_in_a_session(raw: RawClient) -> None:
    session = raw.initialize()
    response = raw.legacy(session, "resources/list", version="1999-01-01")
    assert response.status_code == 400
    assert "MCP-Protocol-Version" in response.json()["error"]["message"]


def test_unknown_method_in_a_session_is_32601(raw: RawClient) -> None:
    session = raw.initialize()
    body = raw.legacy(session, "logging/setLevel", {"level": "debug"}).json()
    validate_error(LEGACY, body)
    assert body["error"]["code"] == -32601


def test_get_opens_one_notification_stream_per_session(raw: RawClient) -> None:
    # 2025-11-25 transports "Listening for Messages from the Server" and "Multiple Connections".
    session = raw.initialize()
    headers = {
        "Accept": "text/event-stream",
        "Mcp-Session-Id": session,
        "MCP-Protocol-Version": LEGACY,
    }
    with raw.http.stream("GET", raw.url, headers=headers) as stream:
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        assert stream.headers["x-accel-buffering"] == "no"
        second = raw.http.get(raw.url, headers=headers)
        assert second.status_code == 409
    assert (
        raw.http.get(raw.url, headers={**headers, "Accept": "application/json"}).status_code == 406
    )
    assert raw.http.get(raw.url, headers={**headers, "Mcp-Session-Id": "gone"}).status_code == 404


def test_get_without_a_session_is_405_as_in_2026(raw: RawClient) -> None:
    # 2026-07-28 streamable-http "Earlier Streamable HTTP Revisions": GET → 405.
    response = raw.http.get(raw.url, headers={"Accept": "text/event-stream"})
    assert response.status_code == 405


# -- a header on several lines (RFC 9110 §5.3) ------------------------------------------------

READ_URI = "docshelf://shelf/notes.txt"


def read_request(session: str | None = None) -> tuple[list[tuple[str, str]], bytes]:
    """The header lines and body of a read: 2026-07-28, or 2025-11-25 in ``session``."""
    if session is None:
        params = {"uri": READ_URI, "_meta": modern_meta()}
        lines = [("MCP-Protocol-Version", MODERN), ("Mcp-Method", "resources/read")]
        lines.append(("Mcp-Name", READ_URI))
    else:
        params = {"uri": READ_URI}
        lines = [("Mcp-Session-Id", session), ("MCP-Protocol-Version", LEGACY)]
    body = {"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": params}
    return [("Content-Type", "application/json"), *lines], json.dumps(body).encode()


@pytest.mark.parametrize("era", [MODERN, LEGACY])
def test_accept_on_two_lines_is_one_list_rfc9110_5_3(
    shelf_server: RunningServer, raw: RawClient, era: str
) -> None:
    # RFC 9110 §5.3: field lines of one name are combined, in order, with ", "; Accept is a
    # list (§12.5.1), so these two lines list both types streamable-http "Sending Messages"
    # asks for.
    lines, body = read_request(raw.initialize() if era == LEGACY else None)
    accept = [("Accept", "application/json"), ("Accept", "text/event-stream")]
    response = exchange(shelf_server.base, "POST", "/mcp", [*lines, *accept], body)
    assert response.status == 200, response.body
    validate_response(era, "ReadResourceResult", json.loads(response.body))


def test_a_get_stream_accepts_the_event_stream_named_on_either_accept_line(
    shelf_server: RunningServer, raw: RawClient
) -> None:
    # 2025-11-25 transports "Listening for Messages from the Server": Accept lists
    # text/event-stream — here on the first of two lines (RFC 9110 §5.3).
    session = raw.initialize()
    lines = [
        ("Accept", "text/event-stream"),
        ("Accept", "application/json"),
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", LEGACY),
    ]
    response = exchange(shelf_server.base, "GET", "/mcp", lines)
    assert response.status == 200
    assert (response.header("content-type") or "").startswith("text/event-stream")


@pytest.mark.parametrize(
    ("name", "values", "code"),
    [
        # RFC 9112 §3.2: "MUST respond with a 400 ... more than one Host header field line".
        ("Host", ["evil.example.com", None], -32600),
        ("Host", [None, None], -32600),
        # RFC 6454 §7.3: one Origin; the second must not pass the check the first fails.
        ("Origin", ["http://evil.example.com", "http://localhost"], -32600),
        ("Content-Type", ["application/json", "application/json"], -32600),
        ("Mcp-Session-Id", ["session", "session"], -32600),
        # 2026-07-28 streamable-http "Server Validation": required headers malformed → -32020.
        ("MCP-Protocol-Version", [MODERN, MODERN], -32020),
        ("Mcp-Method", ["resources/read", "resources/read"], -32020),
        ("Mcp-Name", [READ_URI, READ_URI], -32020),
    ],
    ids=[
        "host-foreign-first",
        "host-twice",
        "origin",
        "content-type",
        "session-id",
        "protocol-version",
        "method",
        "name",
    ],
)
def test_a_single_valued_header_on_two_lines_is_400_naming_it(
    shelf_server: RunningServer,
    raw: RawClient,
    name: str,
    values: list[str | None],
    code: int,
) -> None:
    """RFC 9110 §5.3: only a list field may be sent on several lines; a field that takes
    one value, sent twice, has no value to act on — refused, whichever line a check reads."""
    session = raw.initialize() if name == "Mcp-Session-Id" else None
    lines, body = read_request(session)
    netloc = httpx.URL(shelf_server.base).netloc.decode()
    chosen = [value if value != "session" else session for value in values]
    twice = [(name, value if value is not None else netloc) for value in chosen]
    lines = [line for line in lines if line[0] != name]
    if name != "Host":
        twice = [("Host", netloc), *twice]
    request = [*twice, *lines, ("Accept", ACCEPT_BOTH)]
    response = exchange(shelf_server.base, "POST", "/mcp", request, body, host=False)
    assert response.status == 400, response.body
    error = json.loads(response.body)
    validate_error(MODERN, error)
    assert error["error"]["code"] == code
    assert f"the {name} header came on 2 lines" in error["error"]["message"]
    assert_still_serving(raw)


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_number_json_has_no_spelling_for_is_parse_error_32700(
    raw: RawClient, number: str
) -> None:
    # RFC 8259 §6: "Numeric values that cannot be represented in the grammar below (such as
    # Infinity and NaN) are not permitted"; 1e999 would become Infinity. Python's reader takes
    # them, and nothing could write them back: the handshake that stored one failed with 500.
    text = (
        '{"jsonrpc":"2.0","id":"n","method":"initialize","params":{"protocolVersion":"'
        + LEGACY
        + '","capabilities":{"experimental":{"x":{"n":'
        + number
        + '}}},"clientInfo":{}}}'
    )
    response = raw.post(None, raw=text.encode())
    assert response.status_code == 400
    body = response.json()
    validate_error(LEGACY, body)
    assert body["error"]["code"] == -32700 and "id" not in body
    assert number in body["error"]["message"]
    assert "RFC 8259" in body["error"]["message"]
    assert_still_serving(raw)


def test_an_error_before_dispatch_is_32603_with_the_request_id(tmp_path: Path) -> None:
    # JSON-RPC 2.0 "Response object": the id "MUST be the same as the value of the id member
    # in the Request Object" wherever it could be read. The handshake fails before any
    # handler runs when the database cannot keep the session: here its table is gone.
    (tmp_path / "shelf").mkdir()
    with serve(tmp_path / "shelf", tmp_path / "data") as server:
        with sqlite3.connect(tmp_path / "data" / "docshelf.db") as database:
            database.execute("ALTER TABLE sessions RENAME TO sessions_lost")
        raw = RawClient(server.url)
        params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {}}
        response = raw.post(
            {"jsonrpc": "2.0", "id": "boom", "method": "initialize", "params": params}
        )
        assert response.status_code == 500  # the server failed, not a handler
        assert "mcp-session-id" not in response.headers
        body = response.json()
        validate_error(LEGACY, body)
        assert body["error"]["code"] == -32603 and body["id"] == "boom"
        assert body["error"]["message"] == "Internal error: OperationalError"
        assert_still_serving(raw)  # the stateless era keeps no session
        raw.close()
