"""A real ``docshelf stdio`` process driven line by line, for what an SDK would never send."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from tests.support.servers import CLIENT_INFO, LEGACY, child_env, docshelf_command, modern_meta


class RawStdio:
    """Hand-made JSON-RPC lines to a ``docshelf stdio`` child; its stdout read by a thread."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._stderr: list[bytes] = []
        self._next_id = 0
        assert process.stdout is not None and process.stderr is not None
        threading.Thread(target=self._read, args=(process.stdout,), daemon=True).start()
        threading.Thread(target=self._stderr.extend, args=(process.stderr,), daemon=True).start()

    def _read(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            self._lines.put(line)

    def log(self) -> str:
        """What the server wrote to stderr so far (its logs)."""
        return b"".join(self._stderr).decode(errors="replace")

    def log_with(self, *lines: str, timeout: float = 10) -> str:
        """The log once it holds every one of ``lines``: a line is read from the pipe by a
        thread, and a line logged while a request was answered may still be on its way."""
        deadline = time.monotonic() + timeout
        while not all(line in (log := self.log()) for line in lines):
            if time.monotonic() > deadline:
                missing = [line for line in lines if line not in log]
                raise AssertionError(f"not logged in {timeout}s: {missing}\n{log[-4000:]}")
            time.sleep(0.05)
        return log

    def send_line(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line if line.endswith(b"\n") else line + b"\n")
        self.process.stdin.flush()

    def send(self, message: object) -> None:
        self.send_line(json.dumps(message).encode())

    def receive(self, timeout: float = 30) -> dict[str, Any]:
        """The next message the server writes; AssertionError if none comes (or it died)."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"no message from docshelf stdio in {timeout}s "
                f"(exit code {self.process.poll()}):\n{self.log()[-4000:]}"
            ) from None
        message = json.loads(line)
        assert isinstance(message, dict), line
        return message

    def response(self, request_id: object = None, timeout: float = 30) -> dict[str, Any]:
        """The next response (notifications skipped); its id must be ``request_id``."""
        while True:
            message = self.receive(timeout)
            if "method" not in message:
                assert message.get("id") == request_id, message
                return message

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def modern(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A 2026-07-28 request and its response."""
        request_id = self.next_id()
        self.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": method,
                "params": {**(params or {}), "_meta": modern_meta()},
            }
        )
        return self.response(request_id)

    def initialize(self, capabilities: dict[str, Any]) -> dict[str, Any]:
        """A 2025-11-25 session with ``capabilities``, initialized; the initialize response."""
        request_id = self.next_id()
        params = {
            "protocolVersion": LEGACY,
            "capabilities": capabilities,
            "clientInfo": CLIENT_INFO,
        }
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params})
        answer = self.response(request_id)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def legacy(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A request of the session :meth:`initialize` started, and its response (what the
        server sends meanwhile — notifications, requests of its own — is skipped)."""
        request_id = self.next_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            answer = self.receive()
            if "method" not in answer and answer.get("id") == request_id:
                return answer

    def server_request(self, timeout: float = 30) -> dict[str, Any]:
        """The next request the server sends (a message with a method and an id)."""
        while True:
            message = self.receive(timeout)
            if "method" in message and "id" in message:
                return message

    def assert_serving(self) -> None:
        """The process is alive and answers a request."""
        exited = self.process.poll()
        assert exited is None, f"docshelf stdio exited with {exited}:\n{self.log()[-4000:]}"
        answer = self.modern("server/discover")
        assert "result" in answer, answer


@contextmanager
def stdio_process(shelf: Path, data_dir: Path, *args: str) -> Iterator[RawStdio]:
    """``docshelf stdio`` over an indexed shelf (not indexing, not watching: fast to start)."""
    with raw_stdio(
        "--root", str(shelf), "--data-dir", str(data_dir), "--no-index", "--no-watch", *args
    ) as process:
        yield process


@contextmanager
def raw_stdio(*args: str, preexec_fn: Callable[[], None] | None = None) -> Iterator[RawStdio]:
    """``docshelf stdio ARGS`` (with no shelf among them: its client's roots are its shelves).

    ``preexec_fn``: run in the child before it starts (``tests.support.permissions``)."""
    process = subprocess.Popen(
        docshelf_command("stdio", *args),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
        preexec_fn=preexec_fn,
    )
    try:
        yield RawStdio(process)
    finally:
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
