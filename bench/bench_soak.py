"""Memory under churn: does ``docshelf serve --processes 2`` level off, or keep growing?

Issue 24, item 17: in an 11-minute churn soak both serving processes grew from
about 110 MB to 190-200 MB and were still rising. This runs the same kind of
soak for ``--minutes`` (45 by default) and samples the memory of every process
of the server's tree every ``--sample`` seconds (30): the supervisor, each
serving process, the multiprocessing resource tracker, each conversion
forkserver and its workers. Before the churn, a warm-up reads every document
and part in every negotiation profile (``--warm-up`` passes), so the bounded
caches of a serving process are full. Per process it prints RSS, PSS and USS
(private pages: what the process alone holds) over time, and the slope of RSS
after warm-up: a least-squares line through the samples of the last two thirds
of the churn, in MB per 10 minutes, against the target of **<= 1 MB per 10
minutes**. ``--trace DIR`` records what grew (``python -m bench.soak_trace``).

The churn, all at once and at a steady rate:

* a shelf of a few hundred documents (Markdown, text, HTML, CSV, JSON and the
  PDFs of ``tests/data/pdf``), and a writer that edits, creates and deletes
  files continuously (``--write-interval``), so the watcher, the indexer, the
  format builder and the change feed never rest; created files get new names,
  as on a real shelf, so new URIs keep appearing;
* clients at ``--rate`` requests/s in all: 2025-11-25 sessions that are
  started, used for a few dozen requests and ended (a few abandoned, as real
  clients do), a third of them with a GET notification stream and
  subscriptions; 2026-07-28 stateless requests; 2026-07-28
  ``subscriptions/listen`` streams opened, held and dropped. The requests:
  reads (whole documents and parts), metadata, list pages, both tools
  (search and read), completion, templates, ping/discover, subscribe.

Run ``python -m bench soak`` (``--quick`` for a smoke run of a few seconds with
no PASS/FAIL). See ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import loadgen  # noqa: E402
from bench.bench_live import table  # noqa: E402
from bench.bench_serve import ORIGINAL_ONLY, machine  # noqa: E402
from bench.docshelf_process import child_env, serve  # noqa: E402
from bench.modern_client import MODERN, modern_meta, name_header  # noqa: E402
from docshelf.app.negotiation_features import EXTENSION_ID  # noqa: E402
from docshelf.storage.uris import build_uri  # noqa: E402

HOST = "127.0.0.1"
SHELF = "soak"  # the shelf's name is its folder's name
FIXTURE_PDF = REPO / "tests" / "data" / "pdf"
TARGET_MB_PER_10_MIN = 1.0
WORDS = [
    *("harbour", "lantern", "orchard", "granite", "meadow", "copper", "willow", "quarry"),
    *("saffron", "thistle", "beacon", "juniper", "cobalt", "falcon", "prairie", "marble"),
    *("cinder", "hollow", "tundra", "velvet", "amber", "glacier"),
]
MARKDOWN_FIRST = {"extensions": {EXTENSION_ID: {"version": "1.0", "features": ["human"]}}}
CAPABILITIES: tuple[dict[str, Any], ...] = (
    {},
    ORIGINAL_ONLY,
    MARKDOWN_FIRST,
)  # nothing, original only, Markdown first
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
SECTIONS = 3  # every Markdown document has "## Section 1" .. "## Section 3"
CHURN_FILES = 60  # created files alive at once, at most
KINDS = ("md", "md", "md", "txt", "txt", "html", "csv", "json")


# -- the shelf --------------------------------------------------------------------------------


def _sentence(rng: random.Random) -> str:
    words = rng.sample(WORDS, 4)
    return f"The {words[0]} and the {words[1]} keep the {words[2]} near the {words[3]}."


def document_text(kind: str, n: int, revision: int, rng: random.Random) -> str:
    """A small document of ``kind``; Markdown and HTML keep the same headings in every
    revision, so a part URI (``?section=section-2``) stays valid across edits."""
    paragraph = " ".join(_sentence(rng) for _ in range(rng.randint(3, 8)))
    if kind == "md":
        sections = "".join(
            f"\n## Section {k}\n\n{paragraph}\n\n- {rng.choice(WORDS)} item\n- revision "
            f"{revision}\n\n| key | value |\n| --- | --- |\n| n | {n} |\n| k | {k} |\n"
            for k in range(1, SECTIONS + 1)
        )
        return f"# Note {n}\n\nRevision {revision} of note {n}.\n{sections}"
    if kind == "txt":
        return f"Note {n}, revision {revision}.\n\n{paragraph}\n\n{paragraph}\n"
    if kind == "html":
        rows = "".join(f"<tr><td>{k}</td><td>{rng.choice(WORDS)}</td></tr>" for k in range(5))
        return (
            f"<html><head><title>Page {n}</title></head><body><h1>Page {n}</h1>"
            f"<h2>Overview</h2><p>{paragraph}</p><h2>Details</h2><p>Revision {revision}.</p>"
            f"<table>{rows}</table><script>var x = {n};</script></body></html>"
        )
    if kind == "csv":
        lines = [f"{k},{rng.choice(WORDS)},{rng.randint(1, 10_000)}" for k in range(30)]
        return "id,word,count\n" + "\n".join(lines) + "\n"
    items = [{"id": k, "word": rng.choice(WORDS)} for k in range(20)]
    return json.dumps({"note": n, "revision": revision, "summary": paragraph, "items": items})


def make_soak_shelf(root: Path, documents: int, rng: random.Random) -> list[str]:
    """``documents`` text documents in folders of 50, and the fixture PDFs (each a few
    times over); the relative paths of the text documents, which the writer edits."""
    paths = []
    for n in range(documents):
        kind = KINDS[n % len(KINDS)]
        path = f"part-{n // 50:02}/doc-{n:04}.{kind}"
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(document_text(kind, n, 0, rng), encoding="utf-8")
        paths.append(path)
    (root / "papers").mkdir(parents=True, exist_ok=True)
    for pdf in sorted(FIXTURE_PDF.glob("*.pdf")):
        for copy in range(max(1, documents // 100)):
            shutil.copy(pdf, root / "papers" / f"{pdf.stem}-{copy}.pdf")
    return paths


# -- the writer -------------------------------------------------------------------------------


@dataclass
class Writer:
    """Edits, creates and deletes files on the shelf, one change every ``interval`` s."""

    root: Path
    paths: list[str]  # the shelf's text documents (edited, never deleted)
    interval: float
    rng: random.Random
    counts: Counter[str] = field(default_factory=Counter)
    churn: list[str] = field(default_factory=list)  # created files alive now
    _serial: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def churn_paths(self) -> list[str]:
        with self._lock:
            return list(self.churn)

    def run(self) -> None:
        while not self._stop.wait(self.interval):
            self.step()

    def step(self) -> None:
        roll = self.rng.random()
        churn = len(self.churn)
        if roll < 0.5:
            path = self.rng.choice(self.paths)
            kind = path.rsplit(".", 1)[1]
            text = document_text(kind, self.rng.randrange(10_000), next(self._serial), self.rng)
            (self.root / path).write_text(text, encoding="utf-8")
            self.counts["edited"] += 1
        elif roll < 0.55:
            pdf = self.rng.choice(sorted((self.root / "papers").glob("*.pdf")))
            shutil.copyfile(FIXTURE_PDF / f"{pdf.stem.rsplit('-', 1)[0]}.pdf", pdf)
            self.counts["PDF rewritten"] += 1
        elif churn < CHURN_FILES and (churn == 0 or roll < 0.78):
            serial = next(self._serial)
            kind = self.rng.choice(KINDS)
            path = f"churn/new-{serial:06}.{kind}"
            (self.root / path).parent.mkdir(exist_ok=True)
            (self.root / path).write_text(document_text(kind, serial, 0, self.rng))
            with self._lock:
                self.churn.append(path)
            self.counts["created"] += 1
        else:
            with self._lock:
                path = self.churn.pop(self.rng.randrange(churn))
            (self.root / path).unlink()
            self.counts["deleted"] += 1

    def stop(self) -> None:
        self._stop.set()


# -- the memory of a process tree -------------------------------------------------------------


@dataclass(frozen=True)
class Memory:
    rss: float  # MB
    pss: float  # MB
    uss: float  # MB: private clean + private dirty
    threads: int
    fds: int


def memory(pid: int) -> Memory | None:
    """A process's memory from ``/proc``; None once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    fields: dict[str, int] = {}
    for line in (status + rollup).splitlines():
        name, _, rest = line.partition(":")
        value = rest.split()
        if value and value[0].isdigit():
            fields.setdefault(name, int(value[0]))
    return Memory(
        rss=fields.get("VmRSS", 0) / 1024,
        pss=fields.get("Pss", 0) / 1024,
        uss=(fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)) / 1024,
        threads=fields.get("Threads", 0),
        fds=fds,
    )


def parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def indexing_pid(base: str, serving: set[int], tries: int = 60) -> int | None:
    """Which serving process indexes, from ``/healthz`` on fresh connections (the kernel hands
    each to whichever process accepts first, so a few tries reach both)."""
    for _ in range(tries):
        with contextlib.suppress(httpx.HTTPError):
            process = httpx.get(f"{base}/healthz", timeout=5).json()["process"]
            if process["indexing"] and process["pid"] in serving:
                return int(process["pid"])
    return None


class Labels:
    """Short, stable names for the processes of the tree, given at first sight: supervisor,
    tracker, serve-0 (indexing), serve-1 (and on: the replicas), forkserver-0 (of serve-0),
    worker-0a, worker-0b, ... A process started again (a dead child, a retired worker) gets
    a new name: ``serve-1*`` for the second serve-1."""

    def __init__(self, root: int, base: str) -> None:
        self.root = root
        self.base = base
        self.names: dict[int, str] = {}
        self._indexing: int | None = None
        self._replicas = 0
        self._workers: Counter[str] = Counter()

    def name(self, pid: int, command: str) -> str:
        if pid not in self.names:
            name = self._name(pid, command)
            while name in self.names.values():
                name += "*"
            self.names[pid] = name
        return self.names[pid]

    def _name(self, pid: int, command: str) -> str:
        if pid == self.root:
            return "supervisor"
        if "resource_tracker" in command:
            return "tracker"
        parent = parent_of(pid)
        if parent == self.root:
            if self._indexing is None:
                serving = {p for p in loadgen.process_tree(self.root) if parent_of(p) == self.root}
                self._indexing = indexing_pid(self.base, serving)
            if pid == self._indexing:
                return "serve-0"
            self._replicas += 1
            return f"serve-{self._replicas}"
        owner = self.names.get(parent or -1, "?").rstrip("*")
        number = owner.partition("-")[2]
        if owner.startswith("serve-") and "forkserver" in command:
            return f"forkserver-{number}"
        if owner.startswith("forkserver-"):
            self._workers[number] += 1
            return f"worker-{number}{chr(ord('a') + (self._workers[number] - 1) % 26)}"
        return f"other-{pid}"


@dataclass
class Sample:
    seconds: float  # since the clock started
    load: float  # 1-minute load average
    processes: dict[str, Memory]  # by label


def sample_tree(labels: Labels, started: float) -> Sample:
    processes = {}
    for pid, command in sorted(loadgen.process_tree(labels.root).items()):
        found = memory(pid)
        if found is not None:
            processes[labels.name(pid, command)] = found
    return Sample(time.monotonic() - started, os.getloadavg()[0], processes)


# -- clients ----------------------------------------------------------------------------------


@dataclass
class Tally:
    requests: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)  # unexpected: "<method> <what>"
    expected: Counter[str] = field(default_factory=Counter)  # a churned file gone, say
    events: Counter[str] = field(default_factory=Counter)  # sessions, streams, notifications
    error_samples: list[str] = field(default_factory=list)

    def error(self, kind: str, sample: str) -> None:
        self.errors[kind] += 1
        if len(self.error_samples) < 8:
            self.error_samples.append(f"{kind}: {sample[:300]}")


class Pace:
    """One request every 1/rate s across every client: a steady load, whatever each does."""

    def __init__(self, rate: float) -> None:
        self.interval = 1 / rate
        self._next = time.monotonic()

    async def __call__(self) -> None:
        now = time.monotonic()
        slot = max(self._next, now)
        self._next = slot + self.interval
        await asyncio.sleep(slot - now)


@dataclass
class Plan:
    """Where the clients go and what they pick from: the shelf's URIs, the writer's new
    files among them."""

    port: int
    documents: list[str]  # URIs of documents that stay
    parts: list[str]  # part URIs (sections of Markdown, pages of PDFs)
    churn: Callable[[], list[str]]  # URIs of created files alive now
    rng: random.Random
    hold: float  # the shortest time a notification stream is held, s
    tally: Tally = field(default_factory=Tally)

    def uri(self) -> str:
        churn = self.churn()
        if churn and self.rng.random() < 0.2:
            return self.rng.choice(churn)
        if self.rng.random() < 0.15:
            return self.rng.choice(self.parts)
        return self.rng.choice(self.documents)

    def request(self, legacy: bool) -> tuple[str, dict[str, Any]]:
        """A method and its params, in the proportions of a client browsing a shelf."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.35:
            return "resources/read", {"uri": self.uri()}
        if roll < 0.50:
            return "resources/metadata", {"uri": self.uri()}
        if roll < 0.58:
            return "resources/list", {}
        if roll < 0.72:
            query = " ".join(rng.sample(WORDS, rng.randint(1, 2)))
            return "tools/call", {"name": "search_documents", "arguments": {"query": query}}
        if roll < 0.82:
            arguments: dict[str, Any] = {"uri": self.uri()}
            if rng.random() < 0.5:
                arguments["format"] = rng.choice(["markdown", "text", "json"])
            return "tools/call", {"name": "read_document", "arguments": arguments}
        if roll < 0.88:
            template = f"docshelf://{SHELF}/{{+path}}{{?pages,section}}"
            return "completion/complete", {
                "ref": {"type": "ref/resource", "uri": template},
                "argument": {"name": "path", "value": f"part-{rng.randrange(6):02}/doc-"},
            }
        if roll < 0.92:
            return "resources/templates/list", {}
        return ("ping", {}) if legacy else ("server/discover", {})

    def check(self, reply: loadgen.Reply, method: str) -> None:
        """Count the answer: a result, an expected error (a churned file gone, or not indexed
        yet), or an unexpected one."""
        tally = self.tally
        tally.requests[method] += 1
        if reply.status != 200:
            tally.error(f"{method} HTTP {reply.status}", repr(reply.body))
            return
        try:
            error = reply.message().get("error")
        except (ValueError, IndexError):
            tally.error(f"{method} unreadable", repr(reply.body))
            return
        if error is not None and error.get("message") == "Resource not found":
            # -32002 in 2025-11-25, -32602 in 2026-07-28 (server/resources "Error Handling")
            tally.expected[f"{method} {error.get('code')}"] += 1
        elif error is not None:
            tally.error(f"{method} {error.get('code')}", json.dumps(error))


async def _chunks(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    while True:
        size = int((await reader.readuntil(b"\r\n"))[:-2].split(b";", 1)[0], 16)
        if size == 0:
            return
        yield (await reader.readexactly(size + 2))[:-2]


async def sse_messages(reader: asyncio.StreamReader) -> AsyncIterator[dict[str, Any]]:
    """The JSON-RPC messages of a chunked SSE response, as they arrive (keep-alives skipped)."""
    buffer = b""
    async for chunk in _chunks(reader):
        buffer += chunk
        while b"\n\n" in buffer:
            event, buffer = buffer.split(b"\n\n", 1)
            data = [line[5:] for line in event.split(b"\n") if line.startswith(b"data:")]
            if data:
                yield json.loads(b"\n".join(data))


async def hold_stream(
    plan: Plan, request: bytes, seconds: float, kind: str, ended: asyncio.Event
) -> None:
    """Open a notification stream and read it for ``seconds``, until ``ended`` or until the
    server ends it; then drop the connection."""
    tally = plan.tally
    reader, writer = await asyncio.open_connection(HOST, plan.port)
    try:
        writer.write(request)
        status_line = (await reader.readuntil(b"\r\n\r\n")).split(b"\r\n", 1)[0]
        if status_line[9:12] != b"200":
            tally.error(f"{kind} {status_line[9:12].decode()}", repr(status_line))
            return
        tally.events[f"{kind} opened"] += 1

        async def read() -> None:
            async for message in sse_messages(reader):
                method = message.get("method", "result")
                tally.events[f"{kind}: {method.rsplit('/', 1)[-1]}"] += 1
            tally.events[f"{kind} ended by the server"] += 1

        reading = asyncio.ensure_future(read())
        waiting = asyncio.ensure_future(ended.wait())
        await asyncio.wait([reading, waiting], timeout=seconds, return_when="FIRST_COMPLETED")
        for task in (reading, waiting):
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reading
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


def _modern_headers(method: str, params: dict[str, Any]) -> bytes:
    """The headers a 2026-07-28 request mirrors from its body (streamable-http)."""
    headers = f"MCP-Protocol-Version: {MODERN}\r\nMcp-Method: {method}\r\n"
    if method == "resources/read":
        headers += f"Mcp-Name: {name_header(params['uri'])}\r\n"
    elif method == "tools/call":
        headers += f"Mcp-Name: {name_header(params['name'])}\r\n"
    return headers.encode()


async def _session(plan: Plan, pace: Pace, stop: asyncio.Event) -> None:
    """One 2025-11-25 session: initialize, a few dozen requests, DELETE (or abandoned); a
    third of them subscribe and hold a GET stream meanwhile."""
    rng, tally = plan.rng, plan.tally
    connection, session = await loadgen.open_session(HOST, plan.port, rng.choice(CAPABILITIES))
    tally.events["session started"] += 1
    stream: asyncio.Future[None] | None = None
    ended = asyncio.Event()
    if rng.random() < 1 / 3:
        for _ in range(2):
            await pace()
            params = {"uri": plan.uri()}
            reply = await connection.post(loadgen.jsonrpc("resources/subscribe", params, 0))
            plan.check(reply, "resources/subscribe")
        get = (
            f"GET /mcp HTTP/1.1\r\nHost: {HOST}:{plan.port}\r\nAccept: text/event-stream\r\n"
            f"Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: {loadgen.PROTOCOL}\r\n\r\n"
        ).encode()
        stream = asyncio.ensure_future(hold_stream(plan, get, plan.hold * 10, "GET", ended))
    try:
        for number in range(1, rng.randint(10, 40)):
            if stop.is_set():
                break
            await pace()
            method, params = plan.request(legacy=True)
            reply = await connection.post(loadgen.jsonrpc(method, params, number))
            plan.check(reply, method)
        if rng.random() < 0.05:
            await connection.close()  # abandoned: it expires after the idle timeout
            tally.events["session abandoned"] += 1
            return
        if stream is not None and rng.random() < 0.5:
            ended.set()  # the client drops its stream first, then ends the session
            await stream
        await loadgen.end_session(connection, session, HOST, plan.port)
        tally.events["session ended"] += 1
    finally:
        ended.set()
        if stream is not None:
            await stream


async def legacy_client(plan: Plan, pace: Pace, stop: asyncio.Event) -> None:
    """2025-11-25 sessions, one after another."""
    while not stop.is_set():
        try:
            await _session(plan, pace, stop)
        except (OSError, asyncio.IncompleteReadError, RuntimeError) as exc:
            plan.tally.error("session", f"{type(exc).__name__}: {exc}")
            await asyncio.sleep(1)


async def modern_client(plan: Plan, pace: Pace, stop: asyncio.Event) -> None:
    """2026-07-28 requests on one kept-alive connection, no session; reconnects when the
    connection drops (the server's keep-alive timeout, say)."""
    rng = plan.rng
    connection: loadgen.Connection | None = None
    number = itertools.count(1)
    while not stop.is_set():
        await pace()
        method, params = plan.request(legacy=False)
        meta = {**modern_meta(), META_CAPABILITIES: rng.choice(CAPABILITIES)}
        body = loadgen.jsonrpc(method, {**params, "_meta": meta}, next(number))
        try:
            connection = connection or await loadgen.Connection.open(HOST, plan.port)
            reply = await connection.post(body, _modern_headers(method, params))
        except (OSError, asyncio.IncompleteReadError) as exc:
            plan.tally.events["2026 reconnects"] += 1
            if connection is None:
                plan.tally.error("2026 connection", repr(exc))
            connection = None
            continue
        plan.check(reply, method)
    if connection is not None:
        await connection.close()


async def listener(plan: Plan, stop: asyncio.Event) -> None:
    """2026-07-28 ``subscriptions/listen`` streams, each held a while, then dropped."""
    rng = plan.rng
    serial = itertools.count(1)
    while not stop.is_set():
        uris = [plan.uri() for _ in range(rng.randint(1, 4))]
        params = {
            "_meta": modern_meta(),
            "notifications": {"resourcesListChanged": True, "resourceSubscriptions": uris},
        }
        body = loadgen.jsonrpc("subscriptions/listen", params, f"listen-{next(serial)}")
        request = (
            f"POST /mcp HTTP/1.1\r\nHost: {HOST}:{plan.port}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"MCP-Protocol-Version: {MODERN}\r\nMcp-Method: subscriptions/listen\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        try:
            await hold_stream(plan, request, rng.uniform(plan.hold, plan.hold * 6), "listen", stop)
        except (OSError, asyncio.IncompleteReadError) as exc:
            plan.tally.error("listen", f"{type(exc).__name__}: {exc}")
            await asyncio.sleep(1)


async def warm_up(plan: Plan, passes: int, parallel: int = 4) -> None:
    """Read every document and every part in each negotiation profile, ``passes`` times over,
    on a fresh connection every few reads (each lands on whichever serving process accepts
    it, so each process gets its share): the bounded caches of a serving process (catalog
    records, negotiation outcomes, parts) fill to the shelf's working set, and the PDFs
    rendered on demand are made, before the churn starts. Growth after that is not
    warm-up."""
    work = [
        (uri, capabilities)
        for _ in range(passes)
        for capabilities in CAPABILITIES
        for uri in plan.documents + plan.parts
    ]
    plan.rng.shuffle(work)
    queue = deque(work)

    async def reader() -> None:
        while queue:
            connection = await loadgen.Connection.open(HOST, plan.port)
            try:
                for number in range(20):
                    if not queue:
                        break
                    uri, capabilities = queue.popleft()
                    meta = {**modern_meta(), META_CAPABILITIES: capabilities}
                    body = loadgen.jsonrpc("resources/read", {"uri": uri, "_meta": meta}, number)
                    headers = _modern_headers("resources/read", {"uri": uri})
                    plan.check(await connection.post(body, headers), "warm-up read")
            finally:
                await connection.close()

    await asyncio.gather(*(reader() for _ in range(parallel)))


async def drive(plan: Plan, rate: float, seconds: float) -> None:
    """Every client at once, for ``seconds``."""
    pace = Pace(rate)
    stop = asyncio.Event()
    clients = [
        *(legacy_client(plan, pace, stop) for _ in range(3)),
        *(modern_client(plan, pace, stop) for _ in range(2)),
        *(listener(plan, stop) for _ in range(2)),
    ]
    running = [asyncio.ensure_future(client) for client in clients]
    await asyncio.sleep(seconds)
    stop.set()
    done, pending = await asyncio.wait(running, timeout=60)
    for task in pending:
        task.cancel()
    for task in done:
        if (exc := task.exception()) is not None:
            plan.tally.error("client died", f"{type(exc).__name__}: {exc}")


# -- figures ----------------------------------------------------------------------------------


def slope_per_10_min(points: Sequence[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, MB) points, in MB per 10 minutes."""
    times, values = zip(*points, strict=True)
    return statistics.linear_regression(times, values).slope * 600


@dataclass
class Verdict:
    label: str
    rss: list[tuple[float, float]]  # (seconds, MB) after warm-up
    uss: list[tuple[float, float]]
    first: Memory
    last: Memory
    peak_rss: float
    whole_run: bool  # alive from the start of the fit to the end

    @property
    def slope(self) -> float:
        return slope_per_10_min(self.rss) if len(self.rss) >= 3 else float("nan")

    @property
    def uss_slope(self) -> float:
        return slope_per_10_min(self.uss) if len(self.uss) >= 3 else float("nan")

    def verdict(self, quick: bool) -> str:
        if not self.whole_run or len(self.rss) < 3:
            return "n/a (not alive through the fit)"
        if quick:
            return "quick"
        return "PASS" if self.slope <= TARGET_MB_PER_10_MIN else "FAIL"


def verdicts(samples: list[Sample], warmed: float) -> list[Verdict]:
    """Per process, the fit over the last two thirds of the churn (which starts ``warmed``
    seconds into the run)."""
    end = samples[-1].seconds
    fitted = [s for s in samples if s.seconds >= warmed + (end - warmed) / 3]
    labels = list(dict.fromkeys(label for s in samples for label in s.processes))
    found = []
    for label in labels:
        seen = [s for s in samples if label in s.processes]
        points = [s for s in fitted if label in s.processes]
        found.append(
            Verdict(
                label,
                [(s.seconds, s.processes[label].rss) for s in points],
                [(s.seconds, s.processes[label].uss) for s in points],
                seen[0].processes[label],
                seen[-1].processes[label],
                max(s.processes[label].rss for s in seen),
                len(points) == len(fitted),
            )
        )
    return found


def over_time(samples: list[Sample], rows: int = 19) -> str:
    """RSS (MB) per process over the run: about ``rows`` samples, evenly spaced."""
    labels = list(dict.fromkeys(label for s in samples for label in s.processes))
    step = max(1, round((len(samples) - 1) / (rows - 1)))
    picked = samples[::step]
    if picked[-1] is not samples[-1]:
        picked.append(samples[-1])
    body = [
        [f"{s.seconds / 60:.1f}", f"{s.load:.1f}"]
        + [f"{s.processes[label].rss:.1f}" if label in s.processes else "—" for label in labels]
        for s in picked
    ]
    return table(["minute", "load", *labels], body)


def summary(found: list[Verdict], quick: bool) -> str:
    body = []
    for v in found:
        body.append(
            [
                v.label,
                f"{v.first.rss:.1f}",
                f"{v.rss[0][1]:.1f}" if v.rss else "—",
                f"{v.peak_rss:.1f}",
                f"{v.last.rss:.1f}",
                f"{v.last.uss:.1f}",
                f"{v.slope:+.2f}",
                f"{v.uss_slope:+.2f}",
                f"{v.first.threads}→{v.last.threads}",
                f"{v.first.fds}→{v.last.fds}",
                v.verdict(quick),
            ]
        )
    head = [
        "process",
        "RSS start",
        "fit start",
        "peak",
        "end",
        "USS end",
        "RSS MB/10 min",
        "USS MB/10 min",
        "threads",
        "fds",
        f"≤ {TARGET_MB_PER_10_MIN:g} MB/10 min",
    ]
    return table(head, body)


def counts(tally: Tally, writer: Writer) -> str:
    requests = sum(tally.requests.values())
    lines = [
        f"requests: {requests:,} ("
        + ", ".join(f"{m} {n:,}" for m, n in tally.requests.most_common())
        + ")",
        f"expected errors (a churned file gone): {sum(tally.expected.values()):,}",
        f"unexpected errors: {sum(tally.errors.values()):,}"
        + (f" ({dict(tally.errors)})" if tally.errors else ""),
        f"sessions and streams: {', '.join(f'{k} {n:,}' for k, n in sorted(tally.events.items()))}",
        f"writer: {', '.join(f'{k} {n:,}' for k, n in sorted(writer.counts.items()))}",
    ]
    lines.extend(f"  e.g. {sample}" for sample in tally.error_samples)
    return "\n".join(lines)


# -- the run ----------------------------------------------------------------------------------


def uris_of(paths: list[str]) -> list[str]:
    return [build_uri(SHELF, path) for path in paths]


def part_uris(root: Path, paths: list[str]) -> list[str]:
    parts = [
        f"{build_uri(SHELF, path)}?section=section-{k}"
        for path in paths
        if path.endswith(".md")
        for k in range(1, SECTIONS + 1)
    ]
    for pdf in sorted((root / "papers").glob("pdflatex-4-pages-*.pdf")):
        parts.extend(f"{build_uri(SHELF, f'papers/{pdf.name}')}?pages={p}" for p in (1, 2, 3))
    return parts


def sampler(
    labels: Labels, started: float, every: float, samples: list[Sample], stop: threading.Event
) -> None:
    """Sample the tree every ``every`` s, printing a progress line per sample on stderr."""
    while True:
        sample = sample_tree(labels, started)
        samples.append(sample)
        rss = ", ".join(f"{k} {m.rss:.0f}" for k, m in sample.processes.items())
        print(
            f"[{sample.seconds / 60:5.1f} min, load {sample.load:.1f}] RSS MB: {rss}",
            file=sys.stderr,
            flush=True,
        )
        if stop.wait(every - (time.monotonic() - started - sample.seconds)):
            return


def trace_env(directory: Path, every: float, frames: int) -> dict[str, str]:
    """The server's environment with ``bench/tracing`` on its path (see there)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = [str(REPO / "bench" / "tracing"), os.environ.get("PYTHONPATH", "")]
    return child_env(
        PYTHONPATH=os.pathsep.join(p for p in path if p),
        SOAK_TRACE_DIR=str(directory.resolve()),
        SOAK_TRACE_EVERY=f"{every:g}",
        SOAK_TRACE_FRAMES=str(frames),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench soak", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--minutes", type=float, default=45.0, help="how long to run (45)")
    parser.add_argument("--processes", type=int, default=2, help="serving processes (2)")
    parser.add_argument("--sample", type=float, default=30.0, help="seconds between samples (30)")
    parser.add_argument("--documents", type=int, default=300, help="text documents (300)")
    parser.add_argument("--rate", type=float, default=20.0, help="client requests/s in all (20)")
    parser.add_argument(
        "--write-interval", type=float, default=1.0, help="seconds between file changes (1)"
    )
    parser.add_argument("--hold", type=float, default=20.0, help="shortest stream hold, s (20)")
    parser.add_argument("--json", type=Path, help="write every sample to this file")
    parser.add_argument(
        "--trace",
        type=Path,
        metavar="DIR",
        help="trace the serving processes' allocations into DIR (bench/tracing); the "
        "figures are then tracemalloc's as much as docshelf's",
    )
    parser.add_argument(
        "--trace-frames",
        type=int,
        default=12,
        help="frames per traced allocation (12); 0: only count objects, malloc and SQLite",
    )
    parser.add_argument(
        "--warm-up",
        type=int,
        default=2,
        metavar="PASSES",
        help="read every document and part in every profile this often first (2)",
    )
    parser.add_argument(
        "--server-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set this in the server's environment (repeatable), e.g. "
        "DOCSHELF_HEAP_TRIM_INTERVAL=0 to soak without heap trimming",
    )
    parser.add_argument("--quick", action="store_true", help="a smoke run of seconds, no verdict")
    parser.add_argument("--keep", action="store_true", help="keep the shelf and server log")
    args = parser.parse_args(argv)
    if args.quick:
        args.minutes, args.sample, args.documents, args.hold = 0.1, 1.0, 20, 1.0
        args.write_interval, args.warm_up = 0.3, 1
    rng = random.Random(24)
    work = Path(tempfile.mkdtemp(prefix="docshelf-bench-soak-"))
    print(
        f"docshelf churn soak ({'quick' if args.quick else f'{args.minutes:g} min'}): "
        f"serve --processes {args.processes}, {args.documents} documents + PDFs, "
        f"{args.rate:g} requests/s, a file change every {args.write_interval:g} s; {machine()}"
        + "".join(f"; {item}" for item in args.server_env),
        flush=True,
    )
    shelf = work / SHELF
    paths = make_soak_shelf(shelf, args.documents, rng)
    writer = Writer(shelf, paths, args.write_interval, random.Random(25))
    tally = Tally()
    samples: list[Sample] = []
    log = ""
    try:
        extra = ("--processes", str(args.processes))
        env = (
            trace_env(args.trace, args.sample * 2, args.trace_frames) if args.trace else child_env()
        )
        env.update(item.split("=", 1) for item in args.server_env)
        with serve(shelf, work / "data", *extra, ready_timeout=600, env=env) as server:
            pdfs = [f"papers/{p.name}" for p in sorted((shelf / "papers").glob("*.pdf"))]
            plan = Plan(
                int(server.base.rsplit(":", 1)[1]),
                uris_of(paths + pdfs),
                part_uris(shelf, paths),
                lambda: uris_of(writer.churn_paths()),
                random.Random(26),
                args.hold,
                tally,
            )
            labels = Labels(server.process.pid, server.base)
            started = time.monotonic()
            stop = threading.Event()
            threads = [
                threading.Thread(
                    target=sampler,
                    args=(labels, started, args.sample, samples, stop),
                    name="soak-sampler",
                    daemon=True,
                ),
                threading.Thread(target=writer.run, name="soak-writer", daemon=True),
            ]
            threads[0].start()
            try:
                asyncio.run(warm_up(plan, args.warm_up))
                warmed = time.monotonic() - started
                threads[1].start()
                asyncio.run(drive(plan, args.rate, args.minutes * 60))
            finally:
                writer.stop()
                stop.set()
                for thread in threads:
                    if thread.is_alive():
                        thread.join(timeout=60)
            samples.append(sample_tree(labels, started))
        log = server.log()
    finally:
        if args.keep:
            print(f"shelf and server log kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    found = verdicts(samples, warmed)
    print()
    print("RSS (MB) of each process over the run")
    print(over_time(samples))
    print()
    warm_reads = tally.requests["warm-up read"]
    print(
        f"Per process: RSS at the start, at the fit's start (a third into the churn, which "
        f"began {warmed / 60:.1f} min in, after {warm_reads:,} warm-up reads), its peak and "
        "at the end; USS at the end; slopes of a least-squares line through the samples of "
        "the last two thirds of the churn"
    )
    print(summary(found, args.quick))
    print()
    print(counts(tally, writer))
    errors = sum(1 for line in log.splitlines() if " ERROR " in line or "Traceback" in line)
    print(f"server log: {len(log.splitlines()):,} lines, {errors} ERROR/Traceback lines")
    if args.json:
        args.json.write_text(
            json.dumps(
                [{"seconds": s.seconds, "load": s.load, "processes": s.processes} for s in samples],
                default=vars,
            )
        )
    loads = [s.load for s in samples]
    print(
        f"load average over the run: {min(loads):.1f} to {max(loads):.1f}, "
        f"mean {statistics.fmean(loads):.1f} ({os.cpu_count()} cores)"
    )
    if args.trace:
        print(f"\nallocations traced in {args.trace}: python -m bench.soak_trace {args.trace}")
    judged = [v.verdict(args.quick) for v in found]
    if args.quick:
        print(f"{len(found)} processes sampled, none judged (quick run)")
    else:
        print(
            f"{judged.count('PASS')} PASS, {judged.count('FAIL')} FAIL "
            f"(slope of RSS after warm-up ≤ {TARGET_MB_PER_10_MIN:g} MB per 10 minutes)"
        )
    broken = sum(tally.errors.values()) > max(10, sum(tally.requests.values()) / 100)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
