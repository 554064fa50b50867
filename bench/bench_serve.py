"""Serving, measured: docshelf against a server built with the official Python SDK.

The targets are those of issue 13, on the same Markdown files (2-4 KB each),
Streamable HTTP on loopback, 2025-11-25 sessions, one kept-alive connection per
client:

* ``resources/read`` of the original at 8 clients: >= 3x the requests/s of the
  SDK reference server (``bench/reference_sdk.py``: ``MCPServer`` with one
  ``FileResource`` per file) with a lower p99;
* <= 0.4 ms of server CPU per small read (docshelf's serving processes, not its
  conversion workers);
* ``resources/metadata`` p50 <= 2 ms at 50,000 documents;
* ``docshelf serve --processes 2`` >= 1.6x the requests/s of ``--processes 1``
  (SKIP while docshelf has no such flag).

Also printed, as information and an aim: docshelf's default read (every format,
the rendered PDF included) against the SDK's read of the original; two floors
with docshelf's distance to them, the same bytes base64-encoded and
JSON-serialised in-process with no HTTP, and a bare Starlette endpoint
(``bench/bare_starlette.py``) on uvicorn returning them (the aim: docshelf
within 2x of it).

The servers run side by side and are measured in A/B/A/B rounds in one run
(each round: every server once, at one client count), the figure per server
being the median of its rounds. The clients are ``bench/loadgen.py``, a separate
process of raw asyncio HTTP/1.1, cheap enough to leave a core to the server; its
own CPU per request is printed too. Server CPU is user + system time of the
server's processes from ``/proc`` over each timed window, divided by the
requests answered in it.

Run ``python -m bench serve`` (~8 min; ``--quick`` for a smoke run of well under
a minute with the same rows and no PASS/FAIL). See ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import loadgen  # noqa: E402
from bench.bench_index import Row, make_shelf  # noqa: E402
from bench.docshelf_process import child_env, docshelf_command, free_port, serve, stop  # noqa: E402
from bench.shelf_files import ServedFile, served_files  # noqa: E402
from docshelf.app.negotiation_features import EXTENSION_ID  # noqa: E402
from docshelf.storage.uris import build_uri  # noqa: E402

HOST = "127.0.0.1"
TARGET_CLIENTS = 8  # the targets are at 8 clients
# The content negotiation features that make docshelf return the original alone
# (app/negotiation.py: format=original puts it first, verbosity=compact keeps only the first).
ORIGINAL_ONLY = {
    "extensions": {
        EXTENSION_ID: {"version": "1.0", "features": ["format=original", "verbosity=compact"]}
    }
}
# docshelf's conversion machinery: forkserver-started workers and the resource tracker.
# Everything else in the server's process tree is counted as serving.
CONVERSION_MARKERS = ("multiprocessing.forkserver", "multiprocessing.resource_tracker")
PARAGRAPH = (
    "Docshelf serves a folder of documents as MCP resources, each in several formats. "
    "A client lists them, reads the one it wants and gets the bytes it asked for — "
    "no more, no less; the café's naïve façade is still UTF-8. "
)


@dataclass
class ServeRow(Row):
    """A :class:`bench.bench_index.Row` that can also be an aim, a quick run's, or skipped."""

    aim: bool = False  # judged "aim met/missed", not PASS/FAIL
    quick: bool = False  # a smoke run: the target is shown, not judged
    skip: str = ""

    @property
    def verdict(self) -> str:
        if self.skip:
            return "SKIP"
        if self.target is None:
            return "info"
        if self.quick:
            return "quick"
        ok = self.figure <= self.target if self.at_most else self.figure >= self.target
        if self.aim:
            return "aim met" if ok else "aim missed"
        return "PASS" if ok else "FAIL"

    def line(self) -> str:
        if self.skip:
            return f"{self.name:<58} {'':>20} {'':<16} SKIP ({self.skip})"
        return super().line()


_T0 = time.monotonic()


def progress(message: str) -> None:
    """A progress line on stderr (the table goes to stdout)."""
    print(f"[{time.monotonic() - _T0:6.1f} s] {message}", file=sys.stderr, flush=True)


# -- the shelf --------------------------------------------------------------------------------


def markdown_document(n: int, size: int, rng: random.Random) -> str:
    """A Markdown note of about ``size`` bytes: headings, paragraphs, a list, a table."""
    text = f"# Note {n}\n\nWritten for the serving benchmark, number {n}.\n"
    section = 0
    while len(text.encode()) < size:
        section += 1
        items = "\n".join(f"- item {k} of note {n}" for k in range(rng.randint(2, 5)))
        table = f"| key | value |\n| --- | --- |\n| size | {size} |\n| section | {section} |"
        text += f"\n## Section {section}\n\n{PARAGRAPH * rng.randint(1, 3)}\n\n{items}\n\n{table}\n"
    return text[:size].rsplit(" ", 1)[0] + "\n"


def make_markdown_shelf(root: Path, count: int, seed: int = 13) -> None:
    """``count`` Markdown files of 2-4 KB in folders of 500 (as ``bench_index.make_shelf``)."""
    rng = random.Random(seed)
    for n in range(count):
        folder = root / f"part-{n // 500:03}"
        folder.mkdir(parents=True, exist_ok=True)
        text = markdown_document(n, rng.randint(2048, 4096), rng)
        (folder / f"note-{n:05}.md").write_text(text, encoding="utf-8")


def docshelf_uris(root: Path) -> list[str]:
    """docshelf's URIs for the files under ``root`` (its shelf name is the folder's name)."""
    return [
        build_uri(root.name, p.relative_to(root).as_posix())
        for p in sorted(root.rglob("*"))
        if p.is_file()
    ]


# -- servers ----------------------------------------------------------------------------------


@dataclass
class Target:
    """A server to measure and how to ask it: which URIs, with which capabilities."""

    label: str
    port: int
    pid: int
    uris: list[str]
    capabilities: dict[str, Any] = field(default_factory=dict)
    method: str = "resources/read"


def has_processes_flag() -> bool:
    """Whether ``docshelf serve`` takes ``--processes`` (issue 13's multi-process serving)."""
    done = subprocess.run(
        docshelf_command("serve", "--help"), capture_output=True, text=True, env=child_env()
    )
    return "--processes" in done.stdout


@dataclass
class Spawned:
    """A server script started in the background: ``listening()`` waits until it accepts."""

    module: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    def listening(self, timeout: float = 120) -> tuple[int, int]:
        """(port, pid) once the server accepts connections."""
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"{self.module} exited with {self.process.returncode}:\n{self.log.read_text()}"
                )
            try:
                socket.create_connection((HOST, self.port), timeout=1).close()
                return self.port, self.process.pid
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{self.module} did not listen in {timeout:.0f} s") from None
                time.sleep(0.1)


@contextmanager
def script_server(module: str, shelf: Path, log: Path, *args: str) -> Iterator[Spawned]:
    """``python -m module --root shelf --port P`` from the checkout, stopped on exit."""
    port = free_port()
    command = [sys.executable, "-m", module, "--root", str(shelf), "--port", str(port), *args]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=REPO)
    try:
        yield Spawned(module, port, process, log)
    finally:
        stop(process)


@contextmanager
def docshelf_server(shelf: Path, data: Path, *args: str) -> Iterator[tuple[int, int]]:
    """``docshelf serve`` once its catalog is current and no format is left to build (so
    no background conversion runs while it is measured); (port, pid)."""
    with serve(shelf, data, *args, ready_timeout=900) as server:
        yield int(server.base.rsplit(":", 1)[1]), server.process.pid


def call(target: Target, uri: str, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    """One request outside any timing (checks and warm-up)."""
    caps = target.capabilities if capabilities is None else capabilities
    message = asyncio.run(loadgen.call_once(HOST, target.port, caps, target.method, {"uri": uri}))
    if "result" not in message:
        raise RuntimeError(f"{target.label}: {target.method} {uri} failed: {message}")
    result: dict[str, Any] = message["result"]
    return result


def check_same_bytes(targets: list[Target], files: list[ServedFile], sample: int) -> None:
    """Each target's read of a sample of files returns each file's text, and only it."""
    for index in range(0, len(files), max(1, len(files) // sample)):
        expected = files[index].path.read_text(encoding="utf-8")
        for target in targets:
            contents = call(target, target.uris[index])["contents"]
            if len(contents) != 1 or contents[0].get("text") != expected:
                kinds = [c.get("mimeType") for c in contents]
                uri = target.uris[index]
                raise AssertionError(f"{target.label}: {uri} is not the file ({kinds})")


async def warm_every_format(port: int, uris: list[str], parallel: int) -> None:
    """Read every URI once (all formats), so a lazily rendered PDF is built before timing."""
    queue = list(uris)

    async def worker() -> None:
        connection, session = await loadgen.open_session(HOST, port, {})
        while queue:
            uri = queue.pop()
            reply = await connection.post(loadgen.jsonrpc("resources/read", {"uri": uri}, 1))
            contents = reply.message()["result"]["contents"]
            if not any(c["mimeType"] == "application/pdf" for c in contents):
                raise AssertionError(f"no rendered PDF in the default read of {uri}")
        await loadgen.end_session(connection, session, HOST, port)

    await asyncio.gather(*(worker() for _ in range(parallel)))


# -- measuring --------------------------------------------------------------------------------


@dataclass
class Sample:
    """One timed window against one server."""

    rps: float
    p50_ms: float
    p99_ms: float
    server_cpu_ms: float  # per request, serving processes only
    client_cpu_ms: float  # per request, the load generator
    conversion_cpu_s: float  # docshelf's conversion workers over the window (should be ~0)


def measure(target: Target, clients: int, window_s: float, warmup_s: float) -> Sample:
    """One run of the load generator against ``target``."""
    config = {
        "host": HOST,
        "port": target.port,
        "clients": clients,
        "method": target.method,
        "uris": target.uris,
        "capabilities": target.capabilities,
        "warmup_s": warmup_s,
        "window_s": window_s,
        "server_pid": target.pid,
    }
    done = subprocess.run(
        [sys.executable, "-m", "bench.loadgen"],
        input=json.dumps(config).encode(),
        capture_output=True,
        cwd=REPO,
        timeout=window_s + warmup_s + 120,
    )
    if done.returncode:
        raise RuntimeError(f"load generator failed:\n{done.stderr.decode(errors='replace')}")
    report = json.loads(done.stdout)
    requests = report["requests"]
    if not requests or report["errors"] > requests / 100:
        raise RuntimeError(
            f"{target.label}: {report['errors']} errors in {requests} requests, e.g. "
            f"{report['error_sample']}"
        )
    serving = conversion = 0.0
    for process in report["server"].values():
        if any(marker in process["command"] for marker in CONVERSION_MARKERS):
            conversion += process["cpu_s"]
        else:
            serving += process["cpu_s"]
    return Sample(
        rps=requests / report["window_s"],
        p50_ms=report["p50_ms"],
        p99_ms=report["p99_ms"],
        server_cpu_ms=serving / requests * 1e3,
        client_cpu_ms=report["client_cpu_s"] / requests * 1e3,
        conversion_cpu_s=conversion,
    )


@dataclass
class Figures:
    """The median of one server's rounds at one client count."""

    label: str
    clients: int
    samples: list[Sample]

    def median(self, attribute: str) -> float:
        return statistics.median(getattr(s, attribute) for s in self.samples)

    @property
    def rps(self) -> float:
        return self.median("rps")

    @property
    def p50(self) -> float:
        return self.median("p50_ms")

    @property
    def p99(self) -> float:
        return self.median("p99_ms")

    @property
    def cpu(self) -> float:
        return self.median("server_cpu_ms")

    def line(self) -> str:
        rounds = "/".join(f"{s.rps:.0f}" for s in self.samples)
        return (
            f"{self.label:<34} {self.clients:>7} {self.rps:>9.0f} {self.p50:>8.2f} "
            f"{self.p99:>8.2f} {self.cpu:>11.3f} {self.median('client_cpu_ms'):>11.3f}   {rounds}"
        )


TABLE_HEAD = (
    f"{'server':<34} {'clients':>7} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} "
    f"{'srv CPU ms':>11} {'cli CPU ms':>11}   req/s of each round"
)


def rounds(
    targets: list[Target],
    counts: list[int],
    repeats: int,
    window_s: float,
    warmup_s: float,
    only_at: dict[str, int],
) -> dict[tuple[str, int], Figures]:
    """A/B/A/B: at each client count, ``repeats`` rounds of every target in turn, so drift
    in the machine's load falls on all of them alike. ``only_at``: label -> the one client
    count a target is measured at."""
    figures: dict[tuple[str, int], Figures] = {}
    for clients in counts:
        for _ in range(repeats):
            for target in targets:
                if only_at.get(target.label, clients) != clients:
                    continue
                sample = measure(target, clients, window_s, warmup_s)
                key = (target.label, clients)
                figures.setdefault(key, Figures(target.label, clients, [])).samples.append(sample)
                progress(f"{target.label}, {_clients(clients)}: {sample.rps:.0f} req/s")
    return figures


# -- floors -----------------------------------------------------------------------------------


def _encoders() -> dict[str, Callable[[Any], bytes]]:
    """docshelf's encoder (``app/mcp/codec.py``: compact ``json.dumps``), and orjson if here."""
    encoders: dict[str, Callable[[Any], bytes]] = {
        "json": lambda m: json.dumps(m, ensure_ascii=False, separators=(",", ":")).encode()
    }
    try:
        import orjson

        encoders["orjson"] = orjson.dumps
    except ImportError:
        pass
    return encoders


def in_process_floor(files: list[ServedFile], seconds: float) -> dict[str, float]:
    """CPU µs per read to base64-encode a file and serialise its read result, no HTTP."""
    loaded = [(f.uri, f.mime_type, f.path.read_bytes()) for f in files]
    floors = {}
    for name, encode in _encoders().items():
        done = 0
        started = time.process_time()
        while time.process_time() - started < seconds:
            for uri, mime, data in loaded:
                blob = base64.b64encode(data).decode("ascii")
                entry = {"uri": uri, "mimeType": mime, "blob": blob}
                encode({"jsonrpc": "2.0", "id": done, "result": {"contents": [entry]}})
                done += 1
        floors[name] = (time.process_time() - started) / done * 1e6
    return floors


# -- the run ----------------------------------------------------------------------------------


@dataclass
class Plan:
    files: int
    counts: list[int]
    repeats: int
    window_s: float
    warmup_s: float
    all_formats_docs: int  # documents read with every format (each renders a PDF first)
    metadata_docs: int | None  # None: time metadata on the notes shelf (no big shelf)
    processes_clients: int
    quick: bool


# Five short rounds rather than two long ones: on a shared machine others' jobs come
# and go within seconds, and a median of five shrugs off a round or two they hit.
FULL = Plan(2_000, [1, 8, 32], 5, 3.0, 0.75, 100, 50_000, 32, quick=False)
QUICK = Plan(100, [1, 8], 1, 0.5, 0.25, 5, None, 8, quick=True)

DOCSHELF = "docshelf (original only)"
DOCSHELF_ALL = "docshelf (all formats)"
DOCSHELF_2 = "docshelf --processes 2"
METADATA = "docshelf metadata"
SDK = "SDK reference"
BARE = "bare Starlette"
PRODUCT = ("app", "storage", "converters", "migrations")


def serving_rounds(
    work: Path, shelf: Path, plan: Plan, processes: bool
) -> dict[tuple[str, int], Figures]:
    """Every server up at once on the same files, checked, warmed, then the rounds."""
    files = served_files(shelf)
    uris = docshelf_uris(shelf)
    one_process = ("--processes", "1") if processes else ()
    with ExitStack() as stack:
        progress(f"starting the servers on {len(files):,} files")
        sdk = stack.enter_context(script_server("bench.reference_sdk", shelf, work / "sdk.log"))
        bare = stack.enter_context(script_server("bench.bare_starlette", shelf, work / "bare.log"))
        port, pid = stack.enter_context(docshelf_server(shelf, work / "data", *one_process))
        targets = [Target(DOCSHELF, port, pid, uris, ORIGINAL_ONLY)]
        formats_uris = uris[:: max(1, len(uris) // plan.all_formats_docs)][: plan.all_formats_docs]
        targets.append(Target(DOCSHELF_ALL, port, pid, formats_uris))
        if plan.metadata_docs is None:  # quick: the notes shelf stands in for the big one
            targets.append(Target(METADATA, port, pid, uris, method="resources/metadata"))
        reference = [f.uri for f in files]
        targets.append(Target(SDK, *sdk.listening(), reference))
        targets.append(Target(BARE, *bare.listening(), reference))
        if processes:
            port, pid = stack.enter_context(
                docshelf_server(shelf, work / "data-2", "--processes", "2")
            )
            targets.append(Target(DOCSHELF_2, port, pid, uris, ORIGINAL_ONLY))
        progress("all servers ready, docshelf's formats built")
        original = [t for t in targets if t.label not in (DOCSHELF_ALL, METADATA)]
        progress("checking every server returns the same bytes")
        check_same_bytes(original, files, sample=10)
        progress(f"rendering {len(formats_uris)} PDFs for the all-formats reads")
        asyncio.run(warm_every_format(targets[0].port, formats_uris, parallel=2))
        return rounds(
            targets,
            plan.counts,
            plan.repeats,
            plan.window_s,
            plan.warmup_s,
            only_at={DOCSHELF_2: plan.processes_clients, METADATA: 1},
        )


def metadata_figures(work: Path, documents: int, plan: Plan) -> Figures:
    """``resources/metadata`` of random documents, one client, on an indexed shelf of
    ``documents`` documents: 4 % Markdown (every format), the rest binary files with
    none, so indexing them takes a minute, not the ~5 of converting 50,000 texts."""
    shelf = work / "big"
    markdown = documents // 25
    progress(f"making a shelf of {documents:,} files")
    make_shelf(shelf, markdown=markdown, other=documents - markdown)
    data = work / "big-data"
    progress("docshelf index")
    done = subprocess.run(
        docshelf_command("index", "--root", str(shelf), "--data-dir", str(data)),
        env=child_env(),
        capture_output=True,
        timeout=1800,
    )
    if done.returncode:
        raise RuntimeError(f"docshelf index failed:\n{done.stderr.decode(errors='replace')}")
    uris = docshelf_uris(shelf)
    progress("starting docshelf on the indexed shelf")
    with docshelf_server(shelf, data) as (port, pid):
        progress("timing resources/metadata")
        target = Target(METADATA, port, pid, uris, method="resources/metadata")
        call(target, uris[0])
        samples = [measure(target, 1, plan.window_s, plan.warmup_s) for _ in range(plan.repeats)]
    return Figures(f"{METADATA}, {documents:,} docs", 1, samples)


def verdict_rows(
    figures: dict[tuple[str, int], Figures],
    metadata: Figures,
    floors: dict[str, float],
    plan: Plan,
    processes: bool,
) -> list[ServeRow]:
    q = plan.quick
    rows: list[ServeRow] = []
    at = TARGET_CLIENTS
    ds, sdk, bare = figures[DOCSHELF, at], figures[SDK, at], figures[BARE, at]
    rows.append(
        ServeRow(
            f"read, {at} clients: docshelf / SDK requests/s",
            ds.rps / sdk.rps,
            "x",
            3.0,
            at_most=False,
            quick=q,
            note=f"{ds.rps:.0f} vs {sdk.rps:.0f} req/s",
        )
    )
    rows.append(
        ServeRow(
            f"read, {at} clients: docshelf / SDK p99",
            ds.p99 / sdk.p99,
            "x",
            1.0,
            quick=q,
            note=f"{ds.p99:.2f} vs {sdk.p99:.2f} ms (target: lower)",
        )
    )
    rows.append(
        ServeRow(
            f"server CPU per small read, docshelf, {at} clients",
            ds.cpu,
            "ms",
            0.4,
            quick=q,
            note=f"SDK {sdk.cpu:.3f} ms; docshelf / SDK {ds.cpu / sdk.cpu:.2f}x",
        )
    )
    rows.append(
        ServeRow(
            f"resources/metadata p50, {plan.metadata_docs or plan.files:,} documents",
            metadata.p50,
            "ms",
            2.0,
            quick=q,
            note=f"p99 {metadata.p99:.2f} ms, 1 client",
        )
    )
    if processes:
        clients = plan.processes_clients
        one, two = figures[DOCSHELF, clients], figures[DOCSHELF_2, clients]
        rows.append(
            ServeRow(
                f"--processes 2 / 1 requests/s, {clients} clients",
                two.rps / one.rps,
                "x",
                1.6,
                at_most=False,
                quick=q,
                note=f"{two.rps:.0f} vs {one.rps:.0f} req/s",
            )
        )
    else:
        rows.append(
            ServeRow(
                "--processes 2 / 1 requests/s",
                float("nan"),
                "x",
                1.6,
                skip="docshelf serve has no --processes",
            )
        )
    for clients in (c for c in plan.counts if c != at):  # the target row has `at`
        ds, sdk = figures[DOCSHELF, clients], figures[SDK, clients]
        rows.append(
            ServeRow(
                f"read, {_clients(clients)}: docshelf / SDK requests/s",
                ds.rps / sdk.rps,
                "x",
                note=f"{ds.rps:.0f} vs {sdk.rps:.0f} req/s; p50 {ds.p50:.2f} vs {sdk.p50:.2f} ms",
            )
        )
    all_formats, sdk = figures[DOCSHELF_ALL, at], figures[SDK, at]
    rows.append(
        ServeRow(
            f"all formats, {at} clients: docshelf / SDK (original)",
            all_formats.rps / sdk.rps,
            "x",
            note=f"{all_formats.rps:.0f} req/s, {all_formats.cpu:.3f} ms CPU/read",
        )
    )
    ds = figures[DOCSHELF, at]
    rows.append(
        ServeRow(
            "floor 1: in-process base64 + json.dumps, per read",
            floors["json"],
            "us",
            note=f"orjson {floors['orjson']:.1f} us" if "orjson" in floors else "no orjson",
        )
    )
    rows.append(
        ServeRow(
            f"docshelf server CPU per read / floor 1, {at} clients",
            ds.cpu * 1e3 / floors["json"],
            "x",
        )
    )
    rows.append(
        ServeRow(
            f"floor 2: bare Starlette, {at} clients",
            bare.rps,
            "req/s",
            note=f"p99 {bare.p99:.2f} ms, {bare.cpu:.3f} ms CPU/read",
        )
    )
    rows.append(
        ServeRow(
            f"bare Starlette / docshelf requests/s, {at} clients",
            bare.rps / ds.rps,
            "x",
            2.0,
            aim=True,
            quick=q,
            note=f"CPU/read {ds.cpu / bare.cpu:.1f}x the floor's",
        )
    )
    client = max(f.median("client_cpu_ms") for f in figures.values())
    conversion = max(s.conversion_cpu_s for f in figures.values() for s in f.samples)
    rows.append(ServeRow("load generator CPU per request (worst server)", client, "ms"))
    rows.append(
        ServeRow(
            "docshelf conversion workers' CPU in a window (worst)",
            conversion,
            "s",
            note="should be ~0: formats built before timing",
        )
    )
    return rows


def _clients(n: int) -> str:
    return "1 client" if n == 1 else f"{n} clients"


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        product = subprocess.run(  # the product measured: the last commit that changed it
            ["git", "log", "-1", "--format=%h", "--", *PRODUCT],
            capture_output=True,
            text=True,
            cwd=REPO,
        ).stdout.strip()
    except OSError:
        product = "?"
    extras = [m for m in ("uvloop", "httptools", "orjson") if _importable(m)]
    return (
        f"{os.cpu_count()} cores, {model}; Python {platform.python_version()}; "
        f"load {os.getloadavg()[0]:.1f}; product code at {product or '?'}; "
        f"installed: {', '.join(extras) or 'none of uvloop, httptools, orjson'}"
    )


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench serve", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="a smoke run, no PASS/FAIL (CI)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary shelves")
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else FULL
    work = Path(tempfile.mkdtemp(prefix="docshelf-bench-serve-"))
    print(f"docshelf serving benchmark ({'quick' if plan.quick else 'full'}); {machine()}")
    started = time.monotonic()
    try:
        processes = has_processes_flag()
        shelf = work / "notes"
        make_markdown_shelf(shelf, plan.files)
        floors = in_process_floor(served_files(shelf), 1.0)
        figures = serving_rounds(work, shelf, plan, processes)
        if plan.metadata_docs is None:
            metadata = figures.pop((METADATA, 1))
            metadata.label = f"{METADATA}, {plan.files:,} docs"
        else:
            metadata = metadata_figures(work, plan.metadata_docs, plan)
        rows = verdict_rows(figures, metadata, floors, plan, processes)
    finally:
        if args.keep:
            print(f"shelves kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print()
    print(TABLE_HEAD)
    for figure in [*figures.values(), metadata]:
        print(figure.line())
    print()
    for row in rows:
        print(row.line())
    took = time.monotonic() - started
    if plan.quick:
        print(f"{len(rows)} rows, none judged (quick run); {took:.0f} s")
    else:
        verdicts = [row.verdict for row in rows]
        judged = {v: verdicts.count(v) for v in ("PASS", "FAIL", "aim met", "aim missed")}
        summary = ", ".join(f"{n} {v}" for v, n in judged.items())
        print(f"{summary}; {took:.0f} s; load at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
