"""What ``docshelf index`` and ``docshelf reindex`` print while they run and when they end.

On a terminal (stderr is one): two bars, the catalog pass and the formats being
built, each with its files per second, the second with its backlog, and under them
each file that has been converting for more than :data:`SLOW_AFTER_S`, with how long
so far (a bar that sits still says why). Log lines are printed above the bars through
the same console, never onto a bar's line.
Without a terminal (a pipe, CI) nothing is drawn: log lines as usual, no carriage
returns. Either way the run ends with the counts and every failed file, ``path:
reason: message``, on stdout; with ``--json`` stdout holds just one JSON document
(:func:`report_json`) and everything else goes to stderr.
"""

from __future__ import annotations

import io
import json
import logging
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import IO, Any

from rich.console import Console, RenderableType
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from docshelf.storage.indexer import COUNT_NAMES, FileError

UPDATE_EVERY_S = 0.05  # the pass reports every file; the bars take at most 20 updates a second
SLOW_AFTER_S = 2.0  # a file converting longer than this is named under the bars
CATALOG_LABEL = "cataloguing"
BUILD_LABEL = "building formats"


class _Rate(ProgressColumn):
    """Files per second over the last seconds (rich keeps the samples)."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        if speed is None and task.finished_time:  # done too quickly for rich's samples
            speed = task.completed / task.finished_time
        return Text("" if speed is None else f"{speed:,.0f} files/s", style="progress.data.speed")


class _Backlog(ProgressColumn):
    """For the formats bar: documents whose formats are still to be built."""

    def render(self, task: Task) -> Text:
        if not task.fields.get("backlog") or task.total is None:
            return Text("")
        return Text(f"{int(task.total - task.completed):,} to build", style="progress.remaining")


class _SlowFiles:
    """The files being converted (``FormatBuilder.working_on``), each timed from when it
    was first seen converting: those over :data:`SLOW_AFTER_S`, as lines."""

    def __init__(self, working_on: Callable[[], list[str]]) -> None:
        self.working_on = working_on
        self._since: dict[str, float] = {}

    def lines(self) -> list[Text]:
        now = time.monotonic()
        self._since = {path: self._since.get(path, now) for path in self.working_on()}
        return [
            Text(
                f"  still converting {path} ({timedelta(seconds=int(now - since))})",
                style="progress.elapsed",
                no_wrap=True,
                overflow="ellipsis",
            )
            for path, since in self._since.items()
            if now - since >= SLOW_AFTER_S
        ]


class _BarsAndSlowFiles(Progress):
    """rich's bars, then a line for each slow file (rich draws what this yields)."""

    slow: _SlowFiles | None = None

    def get_renderables(self) -> Iterable[RenderableType]:
        yield from super().get_renderables()
        if self.slow is not None:
            yield from self.slow.lines()


class Bars:
    """The two bars on a terminal; :meth:`catalog` and :meth:`build` are the pass's
    ``progress`` and ``build_progress`` callbacks (``(done, total)``, every file)."""

    def __init__(self, stream: IO[str]) -> None:
        self.console = Console(file=stream)
        self.progress = _BarsAndSlowFiles(
            TextColumn("{task.description:<16}"),
            BarColumn(bar_width=30),
            MofNCompleteColumn(),
            _Rate(),
            _Backlog(),
            TimeElapsedColumn(),
            console=self.console,
            refresh_per_second=10,
        )
        self._tasks: dict[str, TaskID] = {}
        self._updated: dict[str, float] = {}

    def follow(self, working_on: Callable[[], list[str]]) -> None:
        """Name the files ``working_on`` returns once they take over :data:`SLOW_AFTER_S`."""
        self.progress.slow = _SlowFiles(working_on)

    def catalog(self, done: int, total: int) -> None:
        self._show(CATALOG_LABEL, done, total)

    def build(self, done: int, total: int) -> None:
        self._show(BUILD_LABEL, done, total, backlog=True)

    def _show(self, label: str, done: int, total: int, **fields: Any) -> None:
        now = time.monotonic()
        if done < total and now - self._updated.get(label, 0.0) < UPDATE_EVERY_S:
            return  # cheap enough to call for every file of a 100,000-file shelf
        self._updated[label] = now
        task = self._tasks.get(label)
        if task is None:
            self._tasks[label] = self.progress.add_task(
                label, total=total, completed=done, **fields
            )
        else:
            self.progress.update(task, total=total, completed=done)

    @contextmanager
    def shown(self) -> Iterator[Bars]:
        """Draw the bars while the block runs, with every log line printed above them."""
        above = _LinesAbove(self.console)
        moved = [(h, h.setStream(above)) for h in _stream_handlers(self.console.file)]
        self.progress.start()  # also points sys.stdout and sys.stderr above the bars
        try:
            yield self
        finally:
            for handler, stream in moved:
                if stream is not None:
                    handler.setStream(stream)
            self.progress.stop()


class _LinesAbove(io.TextIOBase):
    """A stream for log handlers: each line is printed through the console, which puts
    it above the bars and draws them again below it. Not wrapped by rich (the terminal
    wraps a long line), and never read as markup."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._partial = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        *lines, self._partial = (self._partial + text).split("\n")
        for line in lines:
            self.console.print(line, markup=False, highlight=False, emoji=False, soft_wrap=True)
        return len(text)

    def flush(self) -> None:
        pass  # whole lines only: a handler writes its line and its newline at once


def _stream_handlers(stream: IO[str]) -> list[logging.StreamHandler[Any]]:
    """The root logger's handlers that write to ``stream`` (``configure_logging``'s)."""
    return [
        handler
        for handler in logging.getLogger().handlers
        if type(handler) is logging.StreamHandler and handler.stream is stream
    ]


@contextmanager
def bars_if_terminal(stream: IO[str] | None = None) -> Iterator[Bars | None]:
    """:class:`Bars` when ``stream`` (stderr) is a terminal, else None: nothing drawn."""
    stream = stream or sys.stderr
    if not stream.isatty():
        yield None
        return
    bars = Bars(stream)
    with bars.shown():
        yield bars


@dataclass(frozen=True, slots=True)
class RunReport:
    """One run's outcome as printed: counts, time, and the files that failed."""

    counts: dict[str, int]
    errors: tuple[FileError, ...]
    duration_s: float
    extra: dict[str, Any] | None = None  # reindex: the job's id, state and message

    @property
    def files_per_s(self) -> float:
        return self.counts["seen"] / self.duration_s if self.duration_s > 0 else 0.0


def counts_of(source: object) -> dict[str, int]:
    return {name: int(getattr(source, name)) for name in COUNT_NAMES}


def report_text(report: RunReport, prefix: str = "") -> str:
    c = report.counts
    lines = [
        f"{prefix}indexed {c['seen']} files: {c['added']} added, {c['changed']} changed, "
        f"{c['unchanged']} unchanged, {c['removed']} removed, {c['failed']} failed, "
        f"{c['unsupported']} unsupported "
        f"({report.duration_s:.1f} s, {report.files_per_s:,.0f} files/s)",
        *_failure_lines(report.errors),
    ]
    return "\n".join(lines)


def _failure_lines(errors: Iterable[FileError]) -> list[str]:
    return [f"  {e.path}: {e.reason}: {e.message}" for e in errors]


def report_json(report: RunReport) -> str:
    document: dict[str, Any] = {
        **(report.extra or {}),
        "counts": report.counts,
        "duration_s": round(report.duration_s, 3),
        "files_per_s": round(report.files_per_s, 1),
        "failed": [
            {"path": e.path, "reason": e.reason, "message": e.message} for e in report.errors
        ],
    }
    return json.dumps(document, ensure_ascii=False)
