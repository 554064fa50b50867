"""``/metrics`` in Prometheus format, fed by real MCP traffic and real index passes."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from docshelf.app import metrics
from tests.support.admin import TOKEN, Admin
from tests.support.servers import RawClient, RunningServer, child_env, serve
from tests.support.shelves import make_shelf


@pytest.fixture(scope="module")
def metrics_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    base = tmp_path_factory.mktemp("metrics")
    shelf = make_shelf(base / "shelf")
    with serve(shelf, base / "data", env=child_env(DOCSHELF_ADMIN_TOKEN=TOKEN)) as server:
        yield server


def scrape(server: RunningServer) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample as {(name, sorted labels): value}."""
    response = httpx.get(server.base + "/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_mcp_requests_are_counted_by_method_and_outcome_with_latency(
    metrics_server: RunningServer,
) -> None:
    before = scrape(metrics_server)
    raw = RawClient(metrics_server.url)
    for _ in range(3):
        assert raw.modern("resources/list").status_code == 200
    missing = raw.modern("resources/read", {"uri": "docshelf://shelf/nope.txt"})
    assert missing.json()["error"]["code"] == -32602
    unknown = raw.modern("tools/explode")
    assert unknown.json()["error"]["code"] == -32601
    raw.close()
    after = scrape(metrics_server)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("docshelf_mcp_requests_total", method="resources/list", outcome="ok") == 3
    assert (
        delta("docshelf_mcp_requests_total", method="resources/read", outcome="invalid_params") == 1
    )
    assert delta("docshelf_mcp_requests_total", method="other", outcome="method_not_found") == 1
    assert delta("docshelf_mcp_request_duration_seconds_count", method="resources/list") == 3
    assert delta("docshelf_mcp_request_duration_seconds_sum", method="resources/list") > 0
    assert (
        delta("docshelf_mcp_request_duration_seconds_bucket", method="resources/list", le="+Inf")
        == 3
    )
    assert not any(
        name == "docshelf_mcp_requests_total" and ("method", "tools/explode") in labels
        for name, labels in after
    )


def test_index_passes_feed_document_and_conversion_metrics(metrics_server: RunningServer) -> None:
    start = scrape(metrics_server)  # after the start-up pass over the sample shelf
    assert value(start, "docshelf_documents") == 9
    assert value(start, "docshelf_indexed_files_total", result="added") == 9
    assert value(start, "docshelf_conversion_failures_total", reason="encrypted") == 1
    assert (
        sum(v for (name, _), v in start.items() if name == "docshelf_conversion_failures_total")
        == 2
    )
    assert value(start, "docshelf_index_pass_duration_seconds_count") == 1
    assert value(start, "docshelf_index_lag_seconds") == 0
    assert value(start, "docshelf_conversions_total") == 9  # failures are recorded too

    admin = Admin(metrics_server.base)
    job = admin.wait_job(
        admin.reindex({"shelf": "shelf", "paths": ["papers"], "force": True})["job_id"]
    )
    assert job["state"] == "succeeded"
    admin.close()
    after = scrape(metrics_server)
    assert value(after, "docshelf_index_pass_duration_seconds_count") == 2
    assert value(after, "docshelf_indexed_files_total", result="changed") == 3
    assert value(after, "docshelf_conversion_failures_total", reason="encrypted") == 2
    assert value(after, "docshelf_conversions_total") == 12


def test_active_sessions_gauge_follows_handshake_sessions(metrics_server: RunningServer) -> None:
    raw = RawClient(metrics_server.url)
    base = value(scrape(metrics_server), "docshelf_active_sessions")
    session = raw.initialize()
    assert value(scrape(metrics_server), "docshelf_active_sessions") == base + 1
    raw.http.delete(metrics_server.url, headers={"Mcp-Session-Id": session})
    assert value(scrape(metrics_server), "docshelf_active_sessions") == base
    raw.close()
    assert ("docshelf_active_subscriptions", ()) in scrape(metrics_server)


def test_outcome_labels_are_bounded() -> None:
    class Coded(Exception):
        def __init__(self, code: int) -> None:
            self.code = code

    assert metrics.outcome_of(None) == "ok"
    assert metrics.outcome_of(Coded(-32002)) == "resource_not_found"
    assert metrics.outcome_of(Coded(-32099)) == "error"
    assert metrics.outcome_of(RuntimeError()) == "internal_error"
    assert metrics.outcome_of(KeyboardInterrupt()) == "cancelled"


def test_conversion_failures_are_counted_by_reason() -> None:

    def failures() -> float:
        found = metrics.REGISTRY.get_sample_value(
            "docshelf_conversion_failures_total", {"reason": "timeout"}
        )
        return found or 0.0

    before = failures()
    metrics.observe_conversion_failure("timeout")
    assert failures() == before + 1


def test_errors_before_dispatch_are_counted_too(metrics_server: RunningServer) -> None:
    """Issue 13: a message refused before any method ran (not JSON, not a message, too large,
    the wrong media type, a malformed _meta) reaches /metrics like every other error."""
    before = scrape(metrics_server)
    raw = RawClient(metrics_server.url)
    assert raw.post(None, raw=b"{not json").json()["error"]["code"] == -32700
    assert raw.post([1, 2]).json()["error"]["code"] == -32600
    too_large = raw.post(None, raw=b" " * (4 * 1024 * 1024 + 1))
    assert too_large.status_code == 413
    wrong_type = raw.post({}, headers={"Content-Type": "text/plain"})
    assert wrong_type.status_code == 415
    no_meta = raw.post({"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": {}})
    assert no_meta.json()["error"]["code"] == -32602
    raw.close()
    after = scrape(metrics_server)

    def delta(**labels: str) -> float:
        name = "docshelf_mcp_requests_total"
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta(method="other", outcome="parse_error") == 1
    assert delta(method="other", outcome="invalid_request") == 3  # batch, 413, 415
    assert delta(method="resources/list", outcome="invalid_params") == 1


def test_one_process_names_its_host_and_describes_itself(metrics_server: RunningServer) -> None:
    """Issue 27, item 5: every scrape names the host (the machine, not the scrape target a
    load balancer stands for). One process needs no metrics folder: its own process and
    GC figures, unlabelled, as before."""
    samples = scrape(metrics_server)
    pid = str(metrics_server.process.pid)
    host = socket.gethostname()
    assert value(samples, "docshelf_host_info", host=host, pid=pid) == 1
    assert [labels for (name, labels) in samples if name == "docshelf_host_info"] == [
        (("host", host), ("pid", pid))
    ]
    assert value(samples, "process_resident_memory_bytes") > 0
    assert ("python_gc_collections_total", (("generation", "0"),)) in samples
