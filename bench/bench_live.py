"""Live-shelf latency: from a file write to the MCP notification, and absorbing a bulk copy.

Starts a real ``docshelf serve`` on a temporary shelf, then

* edits one small Markdown file ``--edits`` times and measures, at the client, the
  time from just before each write to the ``notifications/resources/updated`` for
  it: on a 2026-07-28 ``subscriptions/listen`` stream (the SDK's ``client.listen``)
  and on a 2025-11-25 session's GET stream (``subscribe_resource``);
* copies ``--files`` small ``.md``/``.txt`` files (in about 50 folders) into the shelf
  with one ``shutil.copytree`` and measures the time until ``resources/list`` shows
  them all, counting the ``list_changed`` notifications a listener received; then
  deletes the folder and measures the time until the list is back where it was.

Run: ``python -m bench.bench_live`` or ``python bench/bench_live.py`` (``--help`` for
the options, ``--quick`` for a smoke run). See ``bench/README.md`` for what is measured.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import httpx
import mcp_types as types
from mcp import Client
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated

# The bench package lives in the checkout, not the wheel: ``python bench/bench_live.py`` finds it.
REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.docshelf_process import RunningServer, serve  # noqa: E402
from bench.modern_client import LISTEN_HEADERS, MODERN, ModernClient, listen_request  # noqa: E402

SHELF = "shelf"  # the shelf's name is its folder's name
EDIT_TIMEOUT = 30.0  # seconds for one notification; the watcher answers in well under one
LIST_CHANGED = "notifications/resources/list_changed"

ORIGINAL_FILES = {
    "edit.md": "# Edited\n\nThis file is rewritten by the benchmark.\n",
    "edit.txt": "This file is rewritten by the benchmark.\n",
    "readme.md": "# A small shelf\n\nFor the live benchmark.\n",
    "notes/monday.txt": "Monday's notes.\n",
    "notes/tuesday.md": "# Tuesday\n\n- one\n- two\n",
}


# -- figures --------------------------------------------------------------------------------


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile (p95 of 100 values is the 95th smallest)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


@dataclass
class EditRun:
    label: str
    latencies: list[float] = field(default_factory=list)  # seconds
    timeouts: int = 0
    extra: int = 0  # notifications for the file beyond one per edit

    def cells(self) -> list[str]:
        if not self.latencies:
            note = f"{self.timeouts} timed out" if self.timeouts else "not run"
            return [self.label, "—", "—", "—", "—", "—", note]
        ms = [value * 1000 for value in self.latencies]
        median, p95 = statistics.median(ms), percentile(ms, 0.95)
        notes = []
        if self.timeouts:
            notes.append(f"{self.timeouts} timed out")
        if self.extra:
            notes.append(f"{self.extra} extra notes")
        return [
            f"{self.label} (n={len(ms)})",
            f"{min(ms):.0f}",
            f"{median:.0f}",
            f"{p95:.0f}",
            f"{max(ms):.0f}",
            f"{p95 / median:.2f}x",
            ", ".join(notes),
        ]


@dataclass
class BulkRun:
    label: str
    files: int
    seconds: float | None  # until the listing showed the expected count; None: timed out
    last_count: int
    expected: int
    copy_seconds: float
    first_moved: float | None  # seconds until the listing first changed
    notifications: int
    first_notification: float | None  # seconds after the start
    last_notification: float | None
    passes: float
    pass_seconds: float

    def cells(self) -> list[str]:
        if self.seconds is None:
            absorbed = f"TIMED OUT at {self.last_count}/{self.expected}"
            rate = "—"
        else:
            absorbed = f"{self.seconds:.1f}"
            rate = f"{self.files / self.seconds:.0f}"
        first = "—" if self.first_notification is None else f"{self.first_notification:.1f}"
        last = "—" if self.last_notification is None else f"{self.last_notification:.1f}"
        moved = "—" if self.first_moved is None else f"{self.first_moved:.1f}"
        return [
            self.label,
            f"{self.copy_seconds:.2f}",
            moved,
            absorbed,
            rate,
            str(self.notifications),
            first,
            last,
            f"{self.passes:.0f} / {self.pass_seconds:.1f}",
        ]


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"]
    lines.append("|" + "|".join("-" * (w + 1) + (":" if i else "-") for i, w in enumerate(widths)))
    lines[-1] += "|"
    for r in rows:
        cells = [r[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# -- the server side ------------------------------------------------------------------------


def list_count(raw: ModernClient) -> int:
    """Every resource the server lists, all pages."""
    count, cursor = 0, None
    for _ in range(10_000):
        response = raw.modern("resources/list", {"cursor": cursor} if cursor else {})
        result = response.json()["result"]
        count += len(result["resources"])
        cursor = result.get("nextCursor")
        if not cursor:
            return count
    raise RuntimeError("resources/list did not end")


def metric_values(server: RunningServer) -> dict[str, float]:
    """The index-pass counters from /metrics (name{labels} → value)."""
    text = httpx.get(f"{server.base}/metrics", timeout=30).text
    values: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith(("docshelf_index_pass_duration_seconds_", "docshelf_indexed_files")):
            name, _, value = line.rpartition(" ")
            values[name] = float(value)
    return values


def wait_for_count(
    raw: ModernClient, expected: int, timeout: float, poll: float, started: float | None = None
) -> tuple[bool, int, float | None]:
    """Poll until the listing shows ``expected``; also when it first moved (after ``started``)."""
    deadline = time.monotonic() + timeout
    count = first = list_count(raw)
    moved = None
    while count != expected and time.monotonic() < deadline:
        time.sleep(poll)
        count = list_count(raw)
        if moved is None and count != first and started is not None:
            moved = time.perf_counter() - started
    if moved is None and count != first and started is not None:
        moved = time.perf_counter() - started
    return count == expected, count, moved


class ListChangedCounter:
    """A raw 2026-07-28 listen stream in a thread: the time of every list_changed frame."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.times: list[float] = []
        self.acked = threading.Event()
        self._lock = threading.Lock()
        self._response: httpx.Response | None = None
        self._thread = threading.Thread(target=self._run, name="list-changed", daemon=True)

    def start(self, timeout: float = 30) -> None:
        self._thread.start()
        if not self.acked.wait(timeout):
            raise RuntimeError("the listen stream was not acknowledged")

    def _run(self) -> None:
        body = listen_request({"resourcesListChanged": True}, "bench-list-changed")
        headers = LISTEN_HEADERS
        timeout = httpx.Timeout(30, read=None)
        try:
            with httpx.stream("POST", self.url, json=body, headers=headers, timeout=timeout) as r:
                self._response = r
                for line in r.iter_lines():
                    if not line.startswith("data:"):
                        continue
                    method = json.loads(line[5:]).get("method")
                    if method == LIST_CHANGED:
                        with self._lock:
                            self.times.append(time.perf_counter())
                    elif method == "notifications/subscriptions/acknowledged":
                        self.acked.set()
        except Exception:  # the stream ends when the server stops; nothing to report
            pass

    def since(self, started: float) -> list[float]:
        with self._lock:
            return [t - started for t in self.times if t >= started]


# -- edits ----------------------------------------------------------------------------------


def edit_text(suffix: str, i: int) -> str:
    if suffix == ".md":
        return f"# Edit {i}\n\nRevision **{i}**, written at {time.time():.6f}.\n"
    return f"Edit {i}, written at {time.time():.6f}.\n"


async def run_edits(
    run: EditRun,
    path: Path,
    edits: int,
    gap: float,
    next_arrival: Callable[[float], Awaitable[float | None]],
    warm_up: int = 1,
) -> None:
    """Write, wait for the arrival, let ``gap`` pass (counting strays); ``warm_up`` untimed."""
    for i in range(-warm_up, edits):
        text = edit_text(path.suffix, i)
        started = time.perf_counter()
        path.write_text(text)
        arrived = await next_arrival(EDIT_TIMEOUT)
        if i >= 0:
            if arrived is None:
                run.timeouts += 1
            else:
                run.latencies.append(arrived - started)
        with anyio.move_on_after(gap):
            while await next_arrival(gap) is not None:
                run.extra += i >= 0


async def modern_edits(url: str, path: Path, uri: str, edits: int, gap: float) -> EditRun:
    run = EditRun(f"2026-07-28 listen, {path.suffix}")
    async with (
        Client(url, mode=MODERN, cache=None) as client,
        client.listen(resource_subscriptions=[uri]) as subscription,
    ):

        async def next_arrival(timeout: float) -> float | None:
            with anyio.move_on_after(timeout):
                async for event in subscription:
                    if isinstance(event, ResourceUpdated) and event.uri == uri:
                        return time.perf_counter()
                    if isinstance(event, ResourcesListChanged):
                        continue
            return None

        await run_edits(run, path, edits, gap, next_arrival)
    return run


async def legacy_edits(url: str, path: Path, uri: str, edits: int, gap: float) -> EditRun:
    run = EditRun(f"2025-11-25 session GET, {path.suffix}")
    send, receive = anyio.create_memory_object_stream[float](1000)

    async def on_message(message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and message.params.uri == uri:
            send.send_nowait(time.perf_counter())

    async def next_arrival(timeout: float) -> float | None:
        with anyio.move_on_after(timeout):
            return await receive.receive()
        return None

    async with Client(url, mode="legacy", cache=None, message_handler=on_message) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # subscribe_resource is deprecated in 2026-07-28
            await client.subscribe_resource(uri)
        await anyio.sleep(0.5)  # the SDK opens its GET stream in the background
        await run_edits(run, path, edits, gap, next_arrival)
    return run


# -- bulk copy ------------------------------------------------------------------------------


def make_bulk(source: Path, files: int, folders: int, md_share: float) -> tuple[int, int]:
    """``files`` small files over ``folders`` folders; every 1/md_share-th one is Markdown."""
    md_every = round(1 / md_share) if md_share > 0 else 0
    markdown = 0
    for i in range(files):
        folder = source / f"folder-{i % folders:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        if md_every and i % md_every == 0:
            markdown += 1
            (folder / f"note-{i:05d}.md").write_text(
                f"# Note {i}\n\nA small note, number **{i}**.\n\n- first\n- second\n"
            )
        else:
            (folder / f"note-{i:05d}.txt").write_text(f"Note {i}.\nA small plain-text note.\n")
    return markdown, files - markdown


def bulk_step(
    label: str,
    server: RunningServer,
    raw: ModernClient,
    counter: ListChangedCounter,
    change: Callable[[], object],
    files: int,
    expected: int,
    timeout: float,
    poll: float,
) -> BulkRun:
    before = metric_values(server)
    started = time.perf_counter()
    change()
    copied = time.perf_counter() - started
    done, count, moved = wait_for_count(raw, expected, timeout, poll, started)
    seconds = time.perf_counter() - started if done else None
    # The bus publishes after the pass commits: give the last notification a moment.
    quiet_until = time.monotonic() + 30
    seen = len(counter.since(started))
    while time.monotonic() < quiet_until:
        time.sleep(2)
        now = len(counter.since(started))
        if now == seen:
            break
        seen = now
    notes = counter.since(started)
    after = metric_values(server)
    passes = "docshelf_index_pass_duration_seconds_count"
    pass_sum = "docshelf_index_pass_duration_seconds_sum"
    return BulkRun(
        label,
        files,
        seconds,
        count,
        expected,
        copied,
        moved,
        len(notes),
        notes[0] if notes else None,
        notes[-1] if notes else None,
        after.get(passes, 0) - before.get(passes, 0),
        after.get(pass_sum, 0) - before.get(pass_sum, 0),
    )


# -- main -----------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=100, help="timed edits per era (100)")
    parser.add_argument("--files", type=int, default=5000, help="files in the bulk copy (5000)")
    parser.add_argument("--quick", action="store_true", help="smoke run: --edits 20 --files 500")
    parser.add_argument("--folders", type=int, default=50, help="folders in the bulk copy (50)")
    parser.add_argument(
        "--md-share", type=float, default=0.5, help="share of .md files in the bulk copy (0.5)"
    )
    parser.add_argument("--gap", type=float, default=0.05, help="pause after each edit (0.05 s)")
    parser.add_argument("--workers", type=int, default=2, help="server conversion processes (2)")
    parser.add_argument("--poll", type=float, default=0.5, help="resources/list poll (0.5 s)")
    parser.add_argument("--timeout", type=float, default=1200, help="bulk wait limit (1200 s)")
    parser.add_argument("--no-legacy", action="store_true", help="skip the 2025-11-25 edits")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    if args.quick:
        args.edits, args.files = 20, 500

    with tempfile.TemporaryDirectory(prefix="docshelf-bench-live-") as temp:
        tmp = Path(temp)
        shelf, data, source = tmp / SHELF, tmp / "data", tmp / "source"
        for relative, text in ORIGINAL_FILES.items():
            (shelf / relative).parent.mkdir(parents=True, exist_ok=True)
            (shelf / relative).write_text(text)
        markdown, plain = make_bulk(source / "bulk", args.files, args.folders, args.md_share)
        original = len(ORIGINAL_FILES)
        extra = ("--page-size", "1000", "--workers", str(args.workers))
        with serve(shelf, data, *extra) as server:
            raw = ModernClient(server.url)
            if not wait_for_count(raw, original, 60, 0.2)[0]:
                raise RuntimeError(f"the shelf did not list its {original} files:\n{server.log()}")
            print(
                f"docshelf serve on {server.base}, workers {args.workers}, page size 1000; "
                f"{args.edits} edits per row, gap {args.gap * 1000:.0f} ms; "
                f"bulk {args.files} files ({markdown} .md, {plain} .txt) in {args.folders} folders"
            )

            edits: list[EditRun] = []
            targets = [("edit.md", modern_edits)]
            if not args.no_legacy:
                targets.append(("edit.md", legacy_edits))
            targets.append(("edit.txt", modern_edits))
            for name, runner in targets:
                uri = f"docshelf://{SHELF}/{name}"
                edits.append(anyio.run(runner, server.url, shelf / name, uri, args.edits, args.gap))

            counter = ListChangedCounter(server.url)
            counter.start()
            bulk = [
                bulk_step(
                    "copy in",
                    server,
                    raw,
                    counter,
                    lambda: shutil.copytree(source / "bulk", shelf / "bulk"),
                    args.files,
                    original + args.files,
                    args.timeout,
                    args.poll,
                ),
                bulk_step(
                    "delete",
                    server,
                    raw,
                    counter,
                    lambda: shutil.rmtree(shelf / "bulk"),
                    args.files,
                    original,
                    args.timeout,
                    args.poll,
                ),
            ]
            raw.close()
            batches = len(re.findall(r"shelf \S+: \d+ added", server.log()))
        if args.keep:
            kept = Path(tempfile.mkdtemp(prefix="docshelf-bench-live-kept-"))
            shutil.copytree(data, kept / "data")
            print(f"server data and log kept in {kept}")

    print()
    print("Write → notifications/resources/updated at the client (ms)")
    print(
        table(
            ["stream, file", "min", "median", "p95", "max", "p95/median", "notes"],
            [run.cells() for run in edits],
        )
    )
    with_data = [run for run in edits if run.latencies]
    if len(with_data) >= 2:
        base = statistics.median(with_data[0].latencies)
        ratios = ", ".join(
            f"{run.label}: {statistics.median(run.latencies) / base:.2f}x" for run in with_data[1:]
        )
        print(f"median against {with_data[0].label}: {ratios}")
    print()
    print(f"Bulk: one copytree / rmtree of {args.files} files, until resources/list agrees (s)")
    print(
        table(
            [
                "step",
                "copy",
                "list moved",
                "absorbed",
                "files/s",
                "list_changed",
                "first note",
                "last note",
                "passes / s",
            ],
            [run.cells() for run in bulk],
        )
    )
    print(f"watcher batches logged by the server over the whole run: {batches}")
    return 0 if all(run.seconds is not None for run in bulk) else 1


if __name__ == "__main__":
    sys.exit(main())
