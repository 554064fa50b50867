"""The collectors behind ``/metrics`` that are not plain metric objects (``app.metrics``).

- :class:`DatabaseGauges`: figures read from the database at scrape time (documents,
  sessions, backlogs). Every process of a host — and of every host — reads the same rows,
  so the process answering the scrape reads them once; adding up N processes' readings
  would multiply them by N.
- :class:`HostCollector`: under ``serve --processes N``, every process's metric files added
  up (prometheus-client's multiprocess mode: counters and histograms summed, dead
  processes' included; live gauges summed over the processes alive), plus the CPU and
  memory of each live process, labelled with its pid. A process's own process collector
  describes only itself, and a scrape reaches one random child.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

from prometheus_client import ProcessCollector
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

# The series whose live processes name the pids to describe (``app.metrics.HOST_INFO``).
HOST_INFO = "docshelf_host_info"


class DatabaseGauges(Collector):
    """Gauges read when scraped: ``help`` names them; :meth:`watch` gives their readings."""

    def __init__(self, help_texts: Mapping[str, str]) -> None:
        self.help_texts = dict(help_texts)
        self._readers: dict[str, Callable[[], float]] = {}

    def watch(self, readers: Mapping[str, Callable[[], float]]) -> None:
        unknown = set(readers) - set(self.help_texts)
        if unknown:
            raise ValueError(f"no such database gauge: {', '.join(sorted(unknown))}")
        self._readers = dict(readers)

    def describe(self) -> Iterable[Metric]:
        return [GaugeMetricFamily(name, text) for name, text in self.help_texts.items()]

    def collect(self) -> Iterable[Metric]:
        for name, read in self._readers.items():
            yield GaugeMetricFamily(name, self.help_texts[name], value=read())


class HostCollector(Collector):
    """The metric files of every process of this host (``path``), added up."""

    def __init__(self, path: str) -> None:
        self.files = MultiProcessCollector(None, path)
        self._processes: dict[str, ProcessCollector] = {}

    def describe(self) -> Iterable[Metric]:
        return []  # names vary with the files; nothing to check at registration

    def collect(self) -> Iterator[Metric]:
        families = list(self.files.collect())
        yield from families
        pids = sorted(
            {
                sample.labels["pid"]
                for family in families
                if family.name == HOST_INFO
                for sample in family.samples
            },
            key=int,
        )
        yield from self._each_process(pids)

    def _each_process(self, pids: list[str]) -> Iterable[Metric]:
        """``process_*`` (CPU seconds, memory, file descriptors, start time) of each live
        process, read from ``/proc/PID``, labelled ``pid``: sum them for the host."""
        self._processes = {
            pid: self._processes.get(pid) or ProcessCollector(pid=_constant(pid), registry=None)
            for pid in pids
        }
        merged: dict[str, Metric] = {}
        for pid, collector in self._processes.items():
            for family in collector.collect():  # nothing for a process gone since
                into = merged.setdefault(
                    family.name, Metric(family.name, family.documentation, family.type)
                )
                for sample in family.samples:
                    into.add_sample(sample.name, {**sample.labels, "pid": pid}, sample.value)
        return merged.values()


def _constant(pid: str) -> Callable[[], str]:
    return lambda: pid
