"""Nothing leaked: what one client can make the HTTP server hold is bounded, and expires.

- 2025-11-25 sessions expire when idle and are capped in number; what ``initialize``
  stores with one is capped in size. An expired or evicted session is unknown:
  404, and the client starts a new one (basic/transports "Session Management" 3, 4).
- A 2026-07-28 ``subscriptions/listen`` names a bounded number of URIs.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.schema import validate_error, validate_response
from tests.support.servers import LEGACY, MODERN, RawClient, RunningServer, modern_meta, serve

SSE = {"Accept": "text/event-stream", "MCP-Protocol-Version": LEGACY}


def small_shelf(root: Path) -> Path:
    """One text file: a server over it is ready in moments."""
    root.mkdir(parents=True)
    (root / "notes.txt").write_text("Plain notes.\n")
    return root


@pytest.fixture
def raw(shelf_server: RunningServer) -> Iterator[RawClient]:
    client = RawClient(shelf_server.url)
    yield client
    client.close()


def legacy_ok(raw: RawClient, session: str) -> bool:
    """Whether the session still answers; asserts the only other answer is 404."""
    response = raw.legacy(session, "ping")
    if response.status_code == 404:
        validate_error(LEGACY, response.json())
        return False
    assert response.status_code == 200, response.text
    validate_response(LEGACY, "EmptyResult", response.json())
    return True


# -- sessions expire when idle ------------------------------------------------------------------


def test_an_idle_session_expires_and_answers_404_while_a_busy_one_lives(tmp_path: Path) -> None:
    # "Session Management" 3: the server MAY terminate a session at any time, after which it
    # MUST answer requests carrying its id with 404.
    with serve(
        small_shelf(tmp_path / "shelf"), tmp_path / "data", "--session-idle-timeout", "1"
    ) as server:
        raw = RawClient(server.url)
        idle, busy = raw.initialize(), raw.initialize()
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            assert legacy_ok(raw, busy)  # every request counts as use
            time.sleep(0.25)
        assert not legacy_ok(raw, idle)
        assert legacy_ok(raw, busy)
        # "Session Management" 4: the client starts over with initialize, and that works.
        assert legacy_ok(raw, raw.initialize())
        raw.close()


def test_a_session_with_an_open_stream_does_not_expire(tmp_path: Path) -> None:
    with serve(
        small_shelf(tmp_path / "shelf"), tmp_path / "data", "--session-idle-timeout", "1"
    ) as server:
        raw = RawClient(server.url)
        session = raw.initialize()
        with raw.http.stream("GET", raw.url, headers={**SSE, "Mcp-Session-Id": session}) as stream:
            assert stream.status_code == 200
            time.sleep(2.0)
            assert legacy_ok(raw, session)
        raw.close()


# -- sessions are capped in number --------------------------------------------------------------


def test_at_the_cap_the_least_recently_used_idle_session_makes_room(tmp_path: Path) -> None:
    with serve(small_shelf(tmp_path / "shelf"), tmp_path / "data", "--max-sessions", "3") as server:
        raw = RawClient(server.url)
        first, second, third = raw.initialize(), raw.initialize(), raw.initialize()
        assert legacy_ok(raw, first)  # now `second` is the least recently used
        fourth = raw.initialize()
        assert not legacy_ok(raw, second)
        assert all(legacy_ok(raw, s) for s in (first, third, fourth))
        raw.close()


def test_at_the_cap_with_every_session_streaming_initialize_is_refused_clearly(
    tmp_path: Path,
) -> None:
    with serve(small_shelf(tmp_path / "shelf"), tmp_path / "data", "--max-sessions", "2") as server:
        raw = RawClient(server.url)
        sessions = [raw.initialize(), raw.initialize()]
        streams = [
            raw.http.stream("GET", raw.url, headers={**SSE, "Mcp-Session-Id": s}) for s in sessions
        ]
        opened = [s.__enter__() for s in streams]
        try:
            assert all(s.status_code == 200 for s in opened)
            time.sleep(0.5)  # the streams register as the response starts
            refused = raw.post(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {}},
                }
            )
            assert refused.status_code == 503
            assert "mcp-session-id" not in refused.headers
            body = refused.json()
            validate_error(LEGACY, body)
            assert body["id"] == 1 and body["error"]["code"] == -32603
            assert "2 sessions" in body["error"]["message"]
            assert all(legacy_ok(raw, s) for s in sessions)
        finally:
            for stream in streams:
                stream.__exit__(None, None, None)
        time.sleep(0.5)
        assert legacy_ok(raw, raw.initialize())  # a closed stream leaves its session idle
        raw.close()


# -- what a session stores is capped in size ----------------------------------------------------


@pytest.mark.parametrize("field", ["capabilities", "clientInfo"])
def test_initialize_with_more_than_64_kib_to_store_is_32602(raw: RawClient, field: str) -> None:
    big = (
        {"experimental": {"pad": "x" * 70_000}}
        if field == "capabilities"
        else {
            "name": "x" * 70_000,
            "version": "1",
        }
    )
    params = {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    params[field] = big
    response = raw.post({"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": params})
    assert "mcp-session-id" not in response.headers
    body = response.json()
    validate_error(LEGACY, body)
    assert body["id"] == 5 and body["error"]["code"] == -32602
    assert field in body["error"]["message"] and "65536" in body["error"]["message"]


def test_initialize_with_capabilities_just_under_64_kib_is_accepted(raw: RawClient) -> None:
    pad = 65_536 - len(json.dumps({"experimental": {"pad": ""}}, separators=(",", ":")))
    session = raw.initialize(capabilities={"experimental": {"pad": "x" * pad}})
    assert legacy_ok(raw, session)


# -- a listen stream names a bounded number of URIs ---------------------------------------------


def listen(url: str, uris: list[str]) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": "big-listen",
        "method": "subscriptions/listen",
        "params": {"_meta": modern_meta(), "notifications": {"resourceSubscriptions": uris}},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "subscriptions/listen",
    }
    with httpx.stream("POST", url, json=body, headers=headers, timeout=30) as response:
        if response.headers["content-type"].startswith("text/event-stream"):
            first = next(line for line in response.iter_lines() if line.startswith("data:"))
            return httpx.Response(response.status_code, json=json.loads(first[5:]))
        response.read()
        return response


def test_listen_with_more_than_1000_uris_is_32602(raw: RawClient) -> None:
    uris = [f"docshelf://shelf/file-{n}.md" for n in range(1001)]
    body = listen(raw.url, uris).json()
    validate_error(MODERN, body)
    assert body["id"] == "big-listen" and body["error"]["code"] == -32602
    assert "1000" in body["error"]["message"]


def test_listen_with_1000_uris_is_acknowledged(raw: RawClient) -> None:
    uris = [f"docshelf://shelf/file-{n}.md" for n in range(1000)]
    ack = listen(raw.url, uris).json()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert len(ack["params"]["notifications"]["resourceSubscriptions"]) == 1000
