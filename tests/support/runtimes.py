"""A docshelf runtime in the test's own process, for tests that drive the indexer, the
catalog or the store directly rather than through a server."""

from __future__ import annotations

from pathlib import Path

from docshelf.app.runtime import Runtime
from docshelf.app.settings import Settings


def open_runtime(shelf: Path, data: Path, **settings: object) -> Runtime:
    """An opened runtime serving ``shelf`` from ``data``; the caller closes it.

    One conversion worker unless ``settings`` say otherwise, so what a test sees happen
    happens in order; ``database_url=`` (the ``database_url`` fixture) runs it on
    PostgreSQL too."""
    options: dict[str, object] = {"workers": 1, **settings}
    runtime = Runtime(Settings(shelves=[str(shelf)], data_dir=data, **options))
    runtime.open()
    return runtime
