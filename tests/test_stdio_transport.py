"""stdio, line by line: every malformed line gets its spec error and the process keeps serving.

2026-07-28 basic/transports/stdio: one JSON-RPC message per line; the server
exits only when stdin closes ("Shutdown"). One bad line must never end it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.json_text import modern_text, nested
from tests.support.schema import validate_error, validate_response
from tests.support.servers import LEGACY, MODERN, listen_request, modern_meta
from tests.support.stdio import RawStdio, stdio_process


@pytest.fixture(scope="module")
def stdio(indexed_shelf: tuple[Path, Path]) -> Iterator[RawStdio]:
    """One ``docshelf stdio`` for the module: each test leaves it serving, or fails."""
    shelf, data = indexed_shelf
    with stdio_process(shelf, data) as process:
        yield process


def assert_error(message: dict, code: int, era: str = MODERN) -> None:
    validate_error(era, message)
    assert message["error"]["code"] == code, message


@pytest.mark.parametrize(
    "line",
    [
        nested(100_000).encode(),
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":' + b"{" * 3000,
        modern_text("server/discover", f'"deep":{nested(100_000)}'),
        modern_text("resources/list", f'"cursor":{nested(100_000)}'),
        modern_text("server/discover", f'"deep":{nested(63)}'),  # 65 levels in all
    ],
    ids=["bare-array", "unclosed-objects", "in-params", "as-cursor", "one-level-too-deep"],
)
def test_stdio_nesting_deeper_than_64_levels_is_32700_and_the_process_lives(
    stdio: RawStdio, line: bytes
) -> None:
    stdio.send_line(line)
    answer = stdio.response(None)
    assert_error(answer, -32700)
    assert "id" not in answer
    stdio.assert_serving()


def test_stdio_nesting_up_to_64_levels_is_read(stdio: RawStdio) -> None:
    stdio.send_line(modern_text("server/discover", f'"deep":{nested(62)}', '"deep-ok"'))
    validate_response(MODERN, "DiscoverResult", stdio.response("deep-ok"))


@pytest.mark.parametrize(
    "cursor",
    [json.loads(nested(60)), [], {"after": "x"}, 7, False, "", "not-a-cursor"],
    ids=["nested", "array", "object", "number", "bool", "empty", "foreign"],
)
def test_stdio_a_cursor_that_is_not_one_we_issued_is_32602(stdio: RawStdio, cursor: object) -> None:
    # server/utilities/pagination "Error Handling": invalid cursors → -32602.
    assert_error(stdio.modern("resources/list", {"cursor": cursor}), -32602)
    stdio.assert_serving()


def test_stdio_cancelled_with_a_request_id_of_the_wrong_type_is_ignored(stdio: RawStdio) -> None:
    # basic/utilities/cancellation "Error Handling": invalid cancellation notifications SHOULD be
    # ignored — with a listen stream open, whose id the server keeps in a table.
    stdio.send(listen_request({"resourcesListChanged": True}, "listen-1", modern_meta()))
    ack = stdio.receive()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    for params in (
        {"requestId": ["listen-1"]},
        {"requestId": {"id": "listen-1"}},
        {"requestId": 1.5},
        {"requestId": None},
        {},
        {"requestId": [[[[["x"]]]]]},
    ):
        stdio.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})
    stdio.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": ["listen-1"]})
    stdio.assert_serving()
    stdio.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "listen-1"}}
    )
    stdio.assert_serving()


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": None},
        {"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": [1]},
        {"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": "x"},
        {"jsonrpc": "2.0", "id": 1, "method": 42},
        {"jsonrpc": "2.0", "id": 1, "method": {"name": "ping"}},
        {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
        {"jsonrpc": "2.0", "id": [1], "method": "ping"},
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"id": 1, "method": "ping"},
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
        "ping",
        None,
        17,
    ],
)
def test_stdio_every_malformed_envelope_is_32600(stdio: RawStdio, message: object) -> None:
    stdio.send(message)
    readable_id = message.get("id") if isinstance(message, dict) else None
    answer = stdio.response(readable_id if type(readable_id) is int else None)
    assert_error(answer, -32600)
    stdio.assert_serving()


def test_stdio_invalid_utf8_and_not_json_are_32700(stdio: RawStdio) -> None:
    for line in (b'{"jsonrpc":"2.0","id":1,"method":"ping\xff"}', b"{nope", b"\xef\xbb\xbf{}"):
        stdio.send_line(line)
        answer = stdio.response(None)
        assert_error(answer, -32700)
        assert "id" not in answer
    stdio.assert_serving()


def test_stdio_lone_surrogates_are_answered(stdio: RawStdio) -> None:
    # JSON text may escape a lone surrogate that UTF-8 cannot carry; echoing it must not kill
    # the writer.
    stdio.send_line(b'{"jsonrpc":"2.0","id":"\\ud800","method":"no/such\\udfff","params":{}}')
    answer = stdio.response("\ud800")
    assert_error(answer, -32602)  # modern without _meta: malformed (basic/index "_meta")
    stdio.send_line(modern_text("resources/read", '"uri":"docshelf://shelf/\\udc80"', '"\\ud801"'))
    answer = stdio.response("\ud801")
    assert_error(answer, -32602)
    assert answer["error"]["data"] == {"uri": "docshelf://shelf/\udc80"}
    stdio.assert_serving()


def test_stdio_a_line_over_4_mib_is_refused_whole(stdio: RawStdio) -> None:
    # The same bound as an HTTP body: the line is skipped to its end, nothing of it is parsed.
    big = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping", "pad": "x" * (5 << 20)})
    stdio.send_line(big.encode())
    answer = stdio.response(None)
    assert_error(answer, -32600)
    assert "4194304" in answer["error"]["message"] or "4 MiB" in answer["error"]["message"]
    stdio.assert_serving()


def test_stdio_legacy_session_survives_bad_lines(stdio: RawStdio) -> None:
    stdio.send(
        {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {}},
        }
    )
    validate_response(LEGACY, "InitializeResult", stdio.response("init"))
    stdio.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    stdio.send_line(nested(100_000).encode())
    assert_error(stdio.response(None), -32700, LEGACY)
    stdio.send({"jsonrpc": "2.0", "id": "p", "method": "ping"})
    validate_response(LEGACY, "EmptyResult", stdio.response("p"))


def test_stdio_listen_with_more_than_1000_uris_is_32602(stdio: RawStdio) -> None:
    uris = [f"docshelf://shelf/file-{n}.md" for n in range(1001)]
    answer = stdio.modern(
        "subscriptions/listen", {"notifications": {"resourceSubscriptions": uris}}
    )
    assert_error(answer, -32602)
    assert "1000" in answer["error"]["message"]
    stdio.assert_serving()


def test_stdio_nan_is_parse_error_32700(stdio: RawStdio) -> None:
    # RFC 8259 §6: "Numeric values that cannot be represented in the grammar below (such as
    # Infinity and NaN) are not permitted". Python's reader takes NaN; the handshake that
    # stored it failed as an internal error.
    capabilities = {"experimental": {"x": {"nan": float("nan")}}}
    params = {"protocolVersion": LEGACY, "capabilities": capabilities, "clientInfo": {}}
    stdio.send({"jsonrpc": "2.0", "id": "nan", "method": "initialize", "params": params})
    answer = stdio.response(None)
    assert_error(answer, -32700, LEGACY)
    assert answer["error"]["message"] == "Parse error: NaN is not a JSON number (RFC 8259 §6)"
    stdio.assert_serving()
