"""The load generator of ``python -m bench serve``: cheap MCP clients over raw HTTP/1.1.

The machine the benchmark runs on may have two cores, one of them taken by the
server under test; a client that costs as much per request as the server would
measure itself. So this is not httpx or the SDK's client but a few lines over
``asyncio.open_connection``: one kept-alive connection per simulated client,
request bytes built from pre-encoded pieces, and only the status line, the
headers this needs and the body read back (``Content-Length`` or chunked, JSON
or an SSE stream, whichever the server answers). It runs in its own process
(``python -m bench.loadgen``, a JSON config on stdin, a JSON report on stdout)
and reports its own CPU per request, so the reader can see it stayed cheap.

The server's CPU is read here too, from ``/proc`` at the window's two ends, so
the window it covers is exactly the one the requests were counted in.

Each client speaks the 2025-11-25 era, as a client of either server would:
``initialize`` (with the capabilities it is given), ``notifications/initialized``,
then requests with ``Mcp-Session-Id`` and ``MCP-Protocol-Version``; ``DELETE``
at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import random
import resource
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROTOCOL = "2025-11-25"
CLIENT_INFO = {"name": "docshelf-bench", "version": "1.0"}
_TICK = os.sysconf("SC_CLK_TCK")


# -- server CPU from /proc --------------------------------------------------------------------


def process_cpu(pid: int) -> float | None:
    """CPU seconds (user + system, all threads) a process has used; None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / _TICK


def process_tree(root: int) -> dict[int, str]:
    """``root`` and its descendants, each with its command line."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    tree, frontier = {root}, [root]
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        tree.update(children)
        frontier = children
    commands = {}
    for pid in tree:
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        commands[pid] = raw.replace(b"\0", b" ").decode(errors="replace").strip()
    return commands


# -- one HTTP/1.1 connection ------------------------------------------------------------------


@dataclass
class Reply:
    status: int
    headers: dict[bytes, bytes]
    body: bytes

    def message(self) -> dict[str, Any]:
        """The JSON-RPC message of a JSON or single-message SSE body (its last ``data:``)."""
        if self.headers.get(b"content-type", b"").startswith(b"text/event-stream"):
            data = [line[5:] for line in self.body.splitlines() if line.startswith(b"data:")]
            answer: dict[str, Any] = json.loads(data[-1])
            return answer
        answer = json.loads(self.body)
        return answer


class Connection:
    """One kept-alive HTTP/1.1 connection posting to an MCP endpoint."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.head = head  # "POST ... HTTP/1.1" and the fixed headers, without the final CRLF

    @classmethod
    async def open(cls, host: str, port: int, path: str = "/mcp") -> Connection:
        reader, writer = await asyncio.open_connection(host, port)
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "Content-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\n"
        ).encode()
        return cls(reader, writer, head)

    def add_header(self, name: str, value: str) -> None:
        self.head += f"{name}: {value}\r\n".encode()

    async def post(self, body: bytes, headers: bytes = b"") -> Reply:
        """POST ``body``; ``headers``: more header lines for this request alone, each ending
        in CRLF (a 2026-07-28 request's ``Mcp-Method``, say)."""
        self.writer.write(
            b"%s%sContent-Length: %d\r\n\r\n%s" % (self.head, headers, len(body), body)
        )
        return await self.reply()

    async def send(self, request: bytes) -> Reply:
        """A whole request, as bytes (for methods other than POST)."""
        self.writer.write(request)
        return await self.reply()

    async def reply(self) -> Reply:
        reader = self.reader
        lines = (await reader.readuntil(b"\r\n\r\n")).split(b"\r\n")
        status = int(lines[0][9:12])
        headers = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(b":")
                headers[name.strip().lower()] = value.strip()
        length = headers.get(b"content-length")
        if status in (204, 304) or 100 <= status < 200:
            body = b""  # no body, whatever the headers say (RFC 9112 §6.3)
        elif length is not None:
            body = await reader.readexactly(int(length))
        elif headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            parts = []
            while True:
                size = int((await reader.readuntil(b"\r\n"))[:-2].split(b";", 1)[0], 16)
                if size == 0:
                    await reader.readuntil(b"\r\n")  # no trailers are sent
                    break
                parts.append((await reader.readexactly(size + 2))[:-2])
            body = b"".join(parts)
        else:
            body = await reader.read()  # until close
        return Reply(status, headers, body)

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()


def jsonrpc(method: str, params: dict[str, Any], request_id: int | str | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if request_id is not None:
        message["id"] = request_id
    return json.dumps(message, separators=(",", ":")).encode()


async def open_session(
    host: str, port: int, capabilities: dict[str, Any], path: str = "/mcp"
) -> tuple[Connection, str]:
    """A connection with an initialized 2025-11-25 session; its id."""
    connection = await Connection.open(host, port, path)
    params = {"protocolVersion": PROTOCOL, "capabilities": capabilities, "clientInfo": CLIENT_INFO}
    reply = await connection.post(jsonrpc("initialize", params, 0))
    session = reply.headers.get(b"mcp-session-id")
    if reply.status != 200 or session is None or "result" not in reply.message():
        raise RuntimeError(f"initialize failed: {reply.status} {reply.body[:300]!r}")
    connection.add_header("Mcp-Session-Id", session.decode())
    connection.add_header("MCP-Protocol-Version", PROTOCOL)
    reply = await connection.post(jsonrpc("notifications/initialized", {}))
    if reply.status != 202:
        raise RuntimeError(f"notifications/initialized: {reply.status} {reply.body[:300]!r}")
    return connection, session.decode()


async def end_session(connection: Connection, session: str, host: str, port: int) -> None:
    request = (
        f"DELETE /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nMcp-Session-Id: {session}\r\n"
        f"MCP-Protocol-Version: {PROTOCOL}\r\nContent-Length: 0\r\n\r\n"
    ).encode()
    with contextlib.suppress(TimeoutError, OSError, asyncio.IncompleteReadError):
        await asyncio.wait_for(connection.send(request), 5)
    await connection.close()


async def call_once(
    host: str, port: int, capabilities: dict[str, Any], method: str, params: dict[str, Any]
) -> dict[str, Any]:
    """One request in a fresh session: the JSON-RPC message answered (for checks, not timing)."""
    connection, session = await open_session(host, port, capabilities)
    try:
        return (await connection.post(jsonrpc(method, params, 1))).message()
    finally:
        await end_session(connection, session, host, port)


# -- a timed run ------------------------------------------------------------------------------


@dataclass
class Config:
    host: str
    port: int
    clients: int
    method: str
    uris: list[str]
    capabilities: dict[str, Any] = field(default_factory=dict)
    warmup_s: float = 1.0
    window_s: float = 5.0
    server_pid: int | None = None
    seed: int = 13


@dataclass
class Tally:
    """What the clients share: the window (``inf`` until the clock starts) and the counts."""

    start: float = math.inf
    end: float = math.inf
    answered: int = 0
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    error_sample: str = ""


def _bodies(method: str, uris: list[str]) -> list[tuple[bytes, bytes]]:
    """Per URI, the request body around its id: ``prefix + id + suffix``."""
    method_json = json.dumps(method).encode()
    return [
        (
            b'{"jsonrpc":"2.0","id":',
            b',"method":%s,"params":{"uri":%s}}' % (method_json, json.dumps(uri).encode()),
        )
        for uri in uris
    ]


async def _client(
    config: Config, order: list[tuple[bytes, bytes]], ready: asyncio.Barrier, tally: Tally
) -> None:
    """One simulated client: its session, then requests back to back until the window ends.

    A request counts if it was answered inside the window (the rate, CPU per request),
    its latency if it was also sent inside; any answer that is not a 200 with a
    JSON-RPC result is an error, in the window or not.
    """
    connection, session = await open_session(config.host, config.port, config.capabilities)
    clock = time.perf_counter
    post = connection.post
    record = tally.latencies.append
    n, i = len(order), 0
    await ready.wait()
    try:
        while True:
            sent = clock()
            if sent >= tally.end:
                break
            prefix, suffix = order[i % n]
            i += 1
            reply = await post(b"%s%d%s" % (prefix, i, suffix))
            done = clock()
            if reply.status != 200 or b'"result"' not in reply.body:
                tally.errors += 1
                tally.error_sample = tally.error_sample or f"{reply.status} {reply.body[:300]!r}"
            elif tally.start <= done <= tally.end:
                tally.answered += 1
                if sent >= tally.start:
                    record(done - sent)
    finally:
        await end_session(connection, session, config.host, config.port)


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile of already sorted values."""
    if not values:
        return math.nan
    return values[min(len(values) - 1, max(0, math.ceil(q * len(values)) - 1))]


def _cpu(pids: dict[int, str]) -> dict[int, float | None]:
    return {pid: process_cpu(pid) for pid in pids}


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def run(config: Config) -> dict[str, Any]:
    """Open every session, warm up, then count and time requests in a window, reading the
    server's CPU (per process of its tree) and this process's own at the window's ends."""
    ready = asyncio.Barrier(config.clients + 1)
    rng = random.Random(config.seed)
    pieces = _bodies(config.method, config.uris)
    tally = Tally()
    tasks = []
    for _ in range(config.clients):
        order = pieces[:]
        rng.shuffle(order)  # each client its own order: no lockstep on one document
        tasks.append(asyncio.ensure_future(_client(config, order, ready, tally)))
    barrier = asyncio.ensure_future(ready.wait())
    done, _ = await asyncio.wait([barrier, *tasks], timeout=60, return_when="FIRST_COMPLETED")
    if barrier not in done:  # a client failed to open its session (or timed out)
        for task in tasks:
            task.cancel()
        errors = [error for task in done if (error := task.exception()) is not None]
        raise errors[0] if errors else TimeoutError("sessions not open in 60 s")
    tally.start = time.perf_counter() + config.warmup_s
    tally.end = tally.start + config.window_s
    tree = process_tree(config.server_pid) if config.server_pid else {}
    await asyncio.sleep(max(0.0, tally.start - time.perf_counter()))
    server_before, own_before = _cpu(tree), _own_cpu()
    await asyncio.sleep(max(0.0, tally.end - time.perf_counter()))
    server_after, own_after = _cpu(tree), _own_cpu()
    await asyncio.gather(*tasks)
    tally.latencies.sort()
    server = {}
    for pid, command in tree.items():
        before, after = server_before[pid], server_after[pid]
        if before is not None and after is not None:
            server[str(pid)] = {"command": command, "cpu_s": after - before}
    return {
        "requests": tally.answered,
        "window_s": config.window_s,
        "p50_ms": percentile(tally.latencies, 0.50) * 1e3,
        "p99_ms": percentile(tally.latencies, 0.99) * 1e3,
        "errors": tally.errors,
        "error_sample": tally.error_sample,
        "client_cpu_s": own_after - own_before,
        "server": server,
    }


def main() -> int:
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    config = Config(**json.load(sys.stdin))
    report = asyncio.run(run(config))
    json.dump(report, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
