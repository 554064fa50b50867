"""Running the ASGI app under uvicorn, ending notification streams at the first signal.

Uvicorn waits for open responses before it shuts down; SSE notification streams
never finish on their own, so the first SIGINT/SIGTERM closes the event bus,
which ends every stream gracefully (subscriptions "Graceful Closure"). Anything
else still running after ``shutdown_timeout`` is cancelled.

Every connection is bounded in time and number (Settings): a deadline for the
request head (``app.transports.deadline``) and the body (``app.transports.body``),
uvicorn's keep-alive timeout, header size limit and concurrency limit (503).
"""

from __future__ import annotations

import contextlib
import logging
import socket
from collections.abc import Callable, Iterator
from types import FrameType

import uvicorn

from docshelf.app.asgi import create_app
from docshelf.app.runtime import Runtime
from docshelf.app.transports.deadline import with_head_deadline

log = logging.getLogger(__name__)


class GracefulServer(uvicorn.Server):
    def __init__(
        self,
        config: uvicorn.Config,
        runtime: Runtime,
        on_started: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(config)
        self.runtime = runtime
        self.on_started = on_started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and self.on_started is not None:
            self.on_started()  # serving: the runtime opened and the socket is being accepted on

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.runtime.bus.close()
        super().handle_exit(sig, frame)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """As uvicorn's, but a shutdown asked for by SIGINT/SIGTERM exits with status 0.

        uvicorn re-raises the signal after a graceful shutdown, so the process dies
        of it (status -15); for a server told to stop, stopping is success.
        """
        with super().capture_signals():
            yield
            self._captured_signals.clear()


def run_http(
    runtime: Runtime,
    sock: socket.socket,
    *,
    on_started: Callable[[], None] | None = None,
) -> bool:
    """Serve on ``sock`` (bound by ``app.startup.listen``, so a port in use is reported
    before anything here runs) until a signal; False if the server never started (the
    runtime could not open, say). ``on_started``: called once serving."""
    settings = runtime.settings
    host, port = sock.getsockname()[:2]
    log.info(
        "serving %s on http://%s:%d/mcp",
        ", ".join(runtime.shelves),
        f"[{host}]" if ":" in host else host,
        port,
    )
    config = uvicorn.Config(
        create_app(runtime),
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        access_log=settings.access_log,
        # uvloop where installed ("auto"); the HTTP protocol is httptools where installed.
        loop="auto",
        # Forwarded headers only name the client in access-log lines; nothing else reads them.
        proxy_headers=settings.access_log,
        # uvicorn has no deadline for a request's head; this protocol adds one (see there).
        http=with_head_deadline(settings.header_timeout),
        h11_max_incomplete_event_size=settings.max_header_bytes,
        timeout_keep_alive=settings.keep_alive_timeout,
        limit_concurrency=settings.max_connections,
        timeout_graceful_shutdown=settings.shutdown_timeout,
    )
    server = GracefulServer(config, runtime, on_started)
    server.run(sockets=[sock])
    return server.started
