"""Running the ASGI app under uvicorn, ending notification streams at the first signal.

Uvicorn waits for open responses before it shuts down; SSE notification streams
never finish on their own, so the first SIGINT/SIGTERM closes the event bus,
which ends every stream gracefully (subscriptions "Graceful Closure").
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from types import FrameType

import uvicorn

from app.asgi import create_app
from app.runtime import Runtime

log = logging.getLogger(__name__)


class GracefulServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, runtime: Runtime) -> None:
        super().__init__(config)
        self.runtime = runtime

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


def run_http(runtime: Runtime) -> None:
    settings = runtime.settings
    log.info(
        "serving %s on http://%s:%d/mcp",
        ", ".join(shelf.name for shelf in runtime.shelves),
        settings.host,
        settings.port,
    )
    config = uvicorn.Config(
        create_app(runtime), host=settings.host, port=settings.port, log_level=settings.log_level
    )
    GracefulServer(config, runtime).run()
