"""``/metrics`` of a host's processes, seen whole (a scrape) and one process at a time.

A scrape is the host's figures added up, so it cannot say what each process did; the
tests read that from the process's own files in the supervisor's folder (found in the
child's environment), with prometheus-client's own reader.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

import httpx
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parse(text: str) -> Samples:
    """Every sample as {(name, sorted labels): value}."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def scrape_from(base: str) -> tuple[int, Samples]:
    """A scrape, and the pid of the process that answered it (asked ``/healthz`` on the same
    connection, which one process serves)."""
    with httpx.Client(timeout=10) as client:
        pid = int(client.get(f"{base}/healthz").json()["process"]["pid"])
        response = client.get(f"{base}/metrics")
    assert response.status_code == 200, response.text
    return pid, parse(response.text)


def metrics_folder(pid: int) -> Path:
    """The folder a child of ``serve --processes N`` keeps its metrics in."""
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    (folder,) = [e.split(b"=", 1)[1] for e in environ if e.startswith(b"PROMETHEUS_MULTIPROC_DIR=")]
    return Path(os.fsdecode(folder))


def own_samples(folder: Path, pid: int) -> Samples:
    """What the process ``pid`` alone has counted (its files in ``folder``)."""
    files = glob.glob(str(folder / f"*_{pid}.db"))
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in MultiProcessCollector.merge(files)
        for sample in family.samples
    }


def total(samples: Samples, name: str) -> float:
    """A metric's samples added up over every label set (pid labels included)."""
    return sum(v for (sample, _labels), v in samples.items() if sample == name)
