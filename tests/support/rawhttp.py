"""HTTP/1.1 written by hand on a socket, for what no client library sends: a header on
several lines (RFC 9110 §5.3), exactly as given, in order."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from dataclasses import dataclass

import httpx


@dataclass(frozen=True, slots=True)
class RawResponse:
    status: int
    headers: list[tuple[str, str]]  # as sent, lowercase names
    body: bytes  # what arrived with the head, for a stream

    def header(self, name: str) -> str | None:
        return next((value for key, value in self.headers if key == name.lower()), None)


def exchange(
    base: str,
    method: str,
    path: str,
    header_lines: Sequence[tuple[str, str]],
    body: bytes = b"",
    *,
    host: bool = True,
) -> RawResponse:
    """One request on a fresh connection, each of ``header_lines`` on a line of its own.

    ``host``: send ``Host: <the server's address>`` first (HTTP/1.1 needs one). The
    response's head is read whole; of its body, what a ``Content-Length`` says or, for a
    stream, what arrived first — the connection is then closed.
    """
    url = httpx.URL(base)
    assert url.host and url.port
    lines = [f"{method} {path} HTTP/1.1"]
    if host:
        lines.append(f"Host: {url.netloc.decode()}")
    lines.extend(f"{name}: {value}" for name, value in header_lines)
    if body or method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    head = ("\r\n".join([*lines, "", ""])).encode("latin-1")
    with socket.create_connection((url.host, url.port), timeout=30) as sock:
        sock.sendall(head + body)
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = sock.recv(65536)
            if not chunk:
                raise AssertionError(f"the server closed the connection; received {received!r}")
            received += chunk
        raw_head, _, rest = received.partition(b"\r\n\r\n")
        status_line, *raw_headers = raw_head.decode("latin-1").split("\r\n")
        headers = [
            (name.strip().lower(), value.strip())
            for name, _, value in (line.partition(":") for line in raw_headers)
        ]
        response = RawResponse(int(status_line.split()[1]), headers, rest)
        length = response.header("content-length")
        if length is not None:
            while len(rest) < int(length):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                rest += chunk
        return RawResponse(response.status, headers, rest)
