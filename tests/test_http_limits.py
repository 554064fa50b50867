"""Nothing leaked: what one client can make the HTTP server hold is bounded, and expires.

- 2025-11-25 sessions expire when idle and are capped in number; what ``initialize``
  stores with one is capped in size. An expired or evicted session is unknown:
  404, and the client starts a new one (basic/transports "Session Management" 3, 4).
- A 2026-07-28 ``subscriptions/listen`` names a bounded number of URIs.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.schema import validate_error, validate_response
from tests.support.servers import (
    LEGACY,
    MODERN,
    RawClient,
    RunningServer,
    listen_stream,
    serve,
)

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
        idle_again = raw.initialize()
        time.sleep(1.5)
        # DELETE is a request carrying the id too: 404, not 204.
        gone = raw.http.delete(raw.url, headers={"Mcp-Session-Id": idle_again})
        assert gone.status_code == 404
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


def resident_kib(server: RunningServer) -> int:
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1])


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmRSS from /proc")
def test_sessions_hold_their_capabilities_compactly(tmp_path: Path) -> None:
    # 64 KiB of JSON may parse into ~1.5 MB of Python objects ([{}, {}, ...]); kept parsed,
    # 1,000 sessions could hold gigabytes. Kept as JSON, 200 such sessions stay near 13 MiB.
    worst = {"experimental": {"x": [{} for _ in range(21_000)]}}
    with serve(small_shelf(tmp_path / "shelf"), tmp_path / "data") as server:
        raw = RawClient(server.url)
        assert legacy_ok(raw, raw.initialize(capabilities=worst))
        before = resident_kib(server)
        sessions = [raw.initialize(capabilities=worst) for _ in range(200)]
        grown_mib = (resident_kib(server) - before) / 1024
        assert all(legacy_ok(raw, s) for s in sessions[-3:])
        raw.close()
    assert grown_mib < 60, f"200 sessions took {grown_mib:.0f} MiB"


def test_initialize_with_capabilities_just_under_64_kib_is_accepted(raw: RawClient) -> None:
    pad = 65_536 - len(json.dumps({"experimental": {"pad": ""}}, separators=(",", ":")))
    session = raw.initialize(capabilities={"experimental": {"pad": "x" * pad}})
    assert legacy_ok(raw, session)


# -- a listen stream names a bounded number of URIs ---------------------------------------------


def listen(url: str, uris: list[str]) -> dict:
    """The first answer to a listen for ``uris``: its acknowledgement or its refusal."""
    with listen_stream(url, {"resourceSubscriptions": uris}, "big-listen") as stream:
        return next(stream.messages)


def test_listen_with_more_than_1000_uris_is_32602(raw: RawClient) -> None:
    uris = [f"docshelf://shelf/file-{n}.md" for n in range(1001)]
    body = listen(raw.url, uris)
    validate_error(MODERN, body)
    assert body["id"] == "big-listen" and body["error"]["code"] == -32602
    assert "1000" in body["error"]["message"]


def test_listen_with_1000_uris_is_acknowledged(raw: RawClient) -> None:
    uris = [f"docshelf://shelf/file-{n}.md" for n in range(1000)]
    ack = listen(raw.url, uris)
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert len(ack["params"]["notifications"]["resourceSubscriptions"]) == 1000


# -- incomplete requests time out; the server keeps serving ------------------------------------

QUICK = ("--header-timeout", "1", "--body-timeout", "1", "--keep-alive-timeout", "1")


@pytest.fixture(scope="module")
def quick_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """A server whose request-head, body and keep-alive timeouts are all one second."""
    base = tmp_path_factory.mktemp("quick")
    with serve(small_shelf(base / "shelf"), base / "data", *QUICK) as server:
        yield server


def connect(server: RunningServer) -> socket.socket:
    url = httpx.URL(server.base)
    assert url.host and url.port
    return socket.create_connection((url.host, url.port), timeout=10)


def read_until_closed(sock: socket.socket, within: float) -> tuple[float, bytes]:
    """Seconds until the server closed ``sock``, and what it sent; AssertionError if it does
    not close it within ``within`` seconds."""
    started = time.monotonic()
    received = b""
    sock.settimeout(within)
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except TimeoutError:
        raise AssertionError(f"still open after {within}s; received {received!r}") from None
    except ConnectionResetError:
        pass
    return time.monotonic() - started, received


def request_head(server: RunningServer, method: str, path: str, *headers: str) -> bytes:
    host = httpx.URL(server.base).netloc.decode()
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", *headers, "", ""]
    return "\r\n".join(lines).encode()


@pytest.mark.parametrize(
    "sent",
    [b"", b"GE", b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl"],
    ids=["nothing", "half-a-request-line", "half-the-headers"],
)
def test_a_stalled_request_head_is_closed_within_the_header_timeout(
    quick_server: RunningServer, sent: bytes
) -> None:
    sock = connect(quick_server)
    with sock:
        sock.sendall(sent)
        # Other clients are served meanwhile.
        assert httpx.get(f"{quick_server.base}/healthz", timeout=10).status_code == 200
        elapsed, received = read_until_closed(sock, within=5)
    assert received == b""
    assert elapsed <= 3.5
    assert httpx.get(f"{quick_server.base}/healthz", timeout=10).status_code == 200


def test_a_head_trickled_byte_by_byte_is_closed_within_the_header_timeout(
    quick_server: RunningServer,
) -> None:
    # The deadline is for the whole head, not per read: slowloris sends a byte at a time.
    head = request_head(quick_server, "GET", "/healthz", "X-Padding: " + "a" * 100)
    sock = connect(quick_server)
    started = time.monotonic()
    with sock:
        try:
            for byte in head[:-2]:
                sock.sendall(bytes([byte]))
                time.sleep(0.05)
                if time.monotonic() - started > 5:
                    break
        except (BrokenPipeError, ConnectionResetError):
            pass
        read_until_closed(sock, within=5)
    assert time.monotonic() - started <= 4


def test_a_stalled_body_is_408_within_the_body_timeout(quick_server: RunningServer) -> None:
    head = request_head(
        quick_server,
        "POST",
        "/mcp",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        "Content-Length: 1000",
    )
    sock = connect(quick_server)
    with sock:
        sock.sendall(head + b'{"jsonrpc":')
        assert httpx.get(f"{quick_server.base}/healthz", timeout=10).status_code == 200
        elapsed, received = read_until_closed(sock, within=5)
    assert elapsed <= 3.5
    status, _, rest = received.partition(b"\r\n")
    assert status.startswith(b"HTTP/1.1 408"), received
    body = json.loads(rest.partition(b"\r\n\r\n")[2])
    validate_error(MODERN, body)
    assert body["error"]["code"] == -32600 and "id" not in body


def test_an_idle_keep_alive_connection_is_closed_within_the_keep_alive_timeout(
    quick_server: RunningServer,
) -> None:
    sock = connect(quick_server)
    with sock:
        sock.sendall(request_head(quick_server, "GET", "/healthz"))
        elapsed, received = read_until_closed(sock, within=5)
    assert received.startswith(b"HTTP/1.1 200")
    assert elapsed <= 3.5


def test_a_body_larger_than_4_mib_is_413_before_it_is_read(raw: RawClient) -> None:
    url = httpx.URL(raw.url)
    assert url.host and url.port
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: {url.netloc.decode()}\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"Content-Length: {5 << 20}\r\n\r\n"
    ).encode()
    with socket.create_connection((url.host, url.port), timeout=10) as sock:
        sock.sendall(head)
        _, received = read_until_closed(sock, within=10)
    assert received.startswith(b"HTTP/1.1 413"), received
    body = json.loads(received.partition(b"\r\n\r\n")[2])
    validate_error(MODERN, body)
    assert body["error"]["code"] == -32600


def test_a_head_still_incomplete_past_16_kib_is_400_and_the_server_keeps_serving(
    quick_server: RunningServer,
) -> None:
    # h11 buffers an incomplete head up to max_incomplete_event_size (--max-header-bytes), then
    # gives up: what a connection can make the server hold before a request exists is bounded.
    head = request_head(quick_server, "GET", "/healthz", "X-Padding: " + "a" * 20_000)
    sock = connect(quick_server)
    with sock:
        sock.sendall(head[:-4])  # no blank line yet: the head is still incomplete
        elapsed, received = read_until_closed(sock, within=5)
    assert received.startswith(b"HTTP/1.1 400"), received
    assert elapsed < 1  # refused at once, not by the header timeout
    assert httpx.get(f"{quick_server.base}/healthz", timeout=10).status_code == 200


def test_over_max_connections_requests_get_503_until_some_close(tmp_path: Path) -> None:
    flags = ("--max-connections", "4", "--header-timeout", "60")
    with serve(small_shelf(tmp_path / "shelf"), tmp_path / "data", *flags) as server:
        held = [connect(server) for _ in range(4)]
        try:
            time.sleep(0.3)
            assert httpx.get(f"{server.base}/healthz", timeout=10).status_code == 503
        finally:
            for sock in held:
                sock.close()
        time.sleep(0.3)
        assert httpx.get(f"{server.base}/healthz", timeout=10).status_code == 200


def test_shutdown_does_not_wait_past_the_shutdown_timeout(tmp_path: Path) -> None:
    flags = ("--shutdown-timeout", "1", "--body-timeout", "120")
    with serve(small_shelf(tmp_path / "shelf"), tmp_path / "data", *flags) as server:
        sock = connect(server)
        with sock:
            head = request_head(
                server,
                "POST",
                "/mcp",
                "Content-Type: application/json",
                "Accept: application/json, text/event-stream",
                "Content-Length: 1000",
            )
            sock.sendall(head + b"{")
            time.sleep(0.3)
            started = time.monotonic()
            server.process.terminate()
            server.process.wait(timeout=10)
        assert time.monotonic() - started <= 5
