"""Real docshelf processes for tests: ``docshelf serve`` on a free loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
# The error code of a resource that does not exist: 2025-11-25 server/resources -32002,
# 2026-07-28 server/resources "Error Handling" -32602.
NOT_FOUND = {MODERN: -32602, LEGACY: -32002}
CLIENT_INFO = {"name": "docshelf-tests", "version": "1.0"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def docshelf_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "docshelf.app", *args]


def run_docshelf(
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """``docshelf ARGS`` run to its end, as a user runs it: output captured as text."""
    return subprocess.run(
        docshelf_command(*args),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env or child_env(),
        cwd=cwd,
    )


def stop(process: subprocess.Popen[bytes], timeout: float = 15) -> None:
    """SIGTERM, then SIGKILL if the process has not exited within ``timeout`` seconds."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env.update(extra)
    return env


@dataclass
class RunningServer:
    url: str  # the MCP endpoint
    base: str
    process: subprocess.Popen[bytes]
    shelf: Path
    data_dir: Path
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@contextmanager
def serve(
    shelf: Path,
    data_dir: Path,
    *extra_args: str,
    ready_timeout: float = 120.0,
    env: dict[str, str] | None = None,
    roots: Sequence[str] | None = None,
    formats_built: bool = True,
) -> Iterator[RunningServer]:
    """A real ``docshelf serve`` on loopback, once its catalog is current.

    ``formats_built``: also wait until the background conversion backlog is
    empty, so a test sees every document's formats (facts, sizes) settled.
    """
    port = free_port()
    log_path = data_dir / f"server-{port}.log"
    data_dir.mkdir(parents=True, exist_ok=True)
    root_args = [a for r in (roots or [str(shelf)]) for a in ("--root", r)]
    command = docshelf_command(
        "serve", *root_args, "--data-dir", str(data_dir), "--port", str(port), *extra_args
    )
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            command, stdout=log_file, stderr=subprocess.STDOUT, env=env or child_env()
        )
    base = f"http://127.0.0.1:{port}"
    server = RunningServer(f"{base}/mcp", base, process, shelf, data_dir, log_path)
    try:
        deadline = time.monotonic() + ready_timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"docshelf exited with {process.returncode}:\n{server.log()}")
            try:
                ready = httpx.get(f"{base}/readyz", timeout=2)
                if ready.status_code == 200 and (
                    not formats_built or ready.json()["conversion_backlog"] == 0
                ):
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"docshelf was not ready in {ready_timeout}s:\n{server.log()}")
            time.sleep(0.1)
        yield server
    finally:
        stop(process)


def modern_meta(capabilities: dict | None = None) -> dict:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
    }


class RawClient:
    """Hand-made JSON-RPC over HTTP, for the cases an SDK would never send."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = httpx.Client(timeout=30)
        self._next_id = 0

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def post(
        self, body: object, headers: dict[str, str] | None = None, raw: bytes | None = None
    ) -> httpx.Response:
        base_headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        base_headers.update(headers or {})
        content = raw if raw is not None else httpx.Request("POST", self.url, json=body).content
        return self.http.post(self.url, content=content, headers=base_headers)

    def modern(
        self,
        method: str,
        params: dict | None = None,
        *,
        capabilities: dict | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        params = dict(params or {})
        params["_meta"] = modern_meta(capabilities)
        request_headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
        if method == "resources/read" and isinstance(params.get("uri"), str):
            uri = params["uri"]
            if uri.isascii():
                request_headers["Mcp-Name"] = uri
            else:
                import base64

                request_headers["Mcp-Name"] = (
                    "=?base64?" + base64.b64encode(uri.encode()).decode() + "?="
                )
        request_headers.update(headers or {})
        return self.post(
            {"jsonrpc": "2.0", "id": self.next_id(), "method": method, "params": params},
            request_headers,
        )

    def initialize(self, version: str = LEGACY, capabilities: dict | None = None) -> str:
        response = self.post(
            {
                "jsonrpc": "2.0",
                "id": self.next_id(),
                "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": capabilities or {},
                    "clientInfo": CLIENT_INFO,
                },
            }
        )
        assert response.status_code == 200, response.text
        session = response.headers["mcp-session-id"]
        note = self.post(
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"Mcp-Session-Id": session, "MCP-Protocol-Version": version},
        )
        assert note.status_code == 202, note.text
        return session

    def legacy(
        self, session: str, method: str, params: dict | None = None, version: str = LEGACY
    ) -> httpx.Response:
        return self.post(
            {"jsonrpc": "2.0", "id": self.next_id(), "method": method, "params": params or {}},
            {"Mcp-Session-Id": session, "MCP-Protocol-Version": version},
        )

    def close(self) -> None:
        self.http.close()
