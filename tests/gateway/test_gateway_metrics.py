"""/metrics of a gateway with several gunicorn workers counts every worker's requests exactly.

It is served on its own port by the gunicorn master (GATEWAY_METRICS_PORT), never on the API's.

prometheus-client's multiprocess mode writes one file per worker into
PROMETHEUS_MULTIPROC_DIR; the test keeps asking until at least two workers
have answered (two counter files), then checks the exposition sums them all.
"""
from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from .conftest import Gateway

pytestmark = pytest.mark.service

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(gateway: Gateway) -> Samples:
    out: Samples = {}
    for family in text_string_to_metric_families(gateway.metrics()):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def worker_pids(metrics_dir: Path) -> set[int]:
    """Workers that have counted a request (each writes its own counter file)."""
    return {int(p.stem.rsplit("_", 1)[1]) for p in metrics_dir.glob("counter_*.db")}


def until(predicate: Callable[[], Any], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_requests_from_every_worker_are_counted_exactly(gateway: Gateway, gateway_metrics_dir: Path) -> None:
    route = "/v1/variants/<string:name>"  # known and unknown names alike
    before = scrape(gateway)
    ok_before = value(before, "domino_gateway_http_requests_total", route=route, method="GET", status="200")
    missing_before = value(before, "domino_gateway_http_requests_total", route=route, method="GET",
                           status="404")
    latency_before = value(before, "domino_gateway_http_request_duration_seconds_count", route=route,
                           method="GET")
    sent = 0
    deadline = time.monotonic() + 20
    while sent < 20 or len(worker_pids(gateway_metrics_dir)) < 2:
        assert time.monotonic() < deadline, "only one worker ever answered"
        assert gateway.get("/v1/variants/kozel").status == 200
        sent += 1
    for _ in range(3):
        assert gateway.get("/v1/variants/nope").status == 404
    after = scrape(gateway)
    assert value(after, "domino_gateway_http_requests_total", route=route, method="GET", status="200") \
        == ok_before + sent
    assert value(after, "domino_gateway_http_requests_total", route=route, method="GET", status="404") \
        == missing_before + 3
    assert value(after, "domino_gateway_http_request_duration_seconds_count", route=route, method="GET") \
        == latency_before + sent + 3
    assert value(after, "domino_gateway_http_request_duration_seconds_bucket", route=route, method="GET",
                 le="+Inf") == latency_before + sent + 3


def test_metrics_are_on_their_own_port_only(gateway: Gateway, start_gateway: Callable[..., Gateway],
                                            engine_proc: Any) -> None:
    """Issue 29: /metrics answered anyone on the API's port. Now the API port answers it 404 like any
    unknown path, and `off` serves none at all."""
    r = gateway.get("/metrics")
    assert r.status == 404 and r.content_type == "application/problem+json"
    assert gateway.metrics_url is not None and not gateway.metrics_url.startswith(gateway.url + "/")
    assert "domino_gateway_http_requests_total" in gateway.metrics()
    off = start_gateway(engine_proc.address, env={"GATEWAY_METRICS_PORT": "off"})
    assert off.metrics_url is None and off.get("/healthz").status == 200


def test_unmatched_paths_share_one_label(gateway: Gateway) -> None:
    for path in ("/a", "/b/c", "/v1/zzz"):
        assert gateway.get(path).status == 404
    samples = scrape(gateway)
    routes = {dict(labels)["route"] for (name, labels) in samples if name == "domino_gateway_http_requests_total"}
    assert "<unmatched>" in routes and not {"/a", "/b/c", "/v1/zzz"} & routes


def test_engine_calls_and_errors_are_measured(gateway: Gateway) -> None:
    state = gateway.post("/v1/matches", {"variant": "kozel", "players": 4, "seed": 42}).json["state"]
    before = scrape(gateway)
    calls_before = value(before, "domino_gateway_engine_call_duration_seconds_count", method="Apply")
    errors_before = value(before, "domino_gateway_engine_call_errors_total", method="Apply",
                          code="FAILED_PRECONDITION")
    assert gateway.post("/v1/matches/apply", {"state": state, "action": "1-1"}).status == 200
    assert gateway.post("/v1/matches/apply", {"state": state, "action": "6-6"}).status == 409
    after = scrape(gateway)
    assert value(after, "domino_gateway_engine_call_duration_seconds_count", method="Apply") == calls_before + 2
    assert value(after, "domino_gateway_engine_call_errors_total", method="Apply",
                 code="FAILED_PRECONDITION") == errors_before + 1
    assert value(after, "domino_gateway_http_requests_total", route="/v1/matches/apply", method="POST",
                 status="409") >= 1
    assert value(after, "process_start_time_seconds") > 1.7e9


def test_a_dead_workers_counts_are_kept(start_gateway: Callable[..., Gateway], engine_proc: Any,
                                        tmp_path: Path) -> None:
    """gunicorn replaces a killed worker; what it had counted stays in the total."""
    gw = start_gateway(engine_proc.address, "--workers", "2", env={"PROMETHEUS_MULTIPROC_DIR": str(tmp_path)})
    for _ in range(10):
        assert gw.get("/healthz").status == 200
    counted = value(scrape(gw), "domino_gateway_http_requests_total", route="/healthz", method="GET", status="200")
    assert counted >= 10  # the fixture's own readiness polls count too
    victim = next(iter(worker_pids(tmp_path)))
    os.kill(victim, signal.SIGKILL)
    until(lambda: "Worker (pid:" in gw.logs() or victim not in _live_children(gw.proc.pid))
    until(lambda: gw.get("/healthz").status == 200)
    after = value(scrape(gw), "domino_gateway_http_requests_total", route="/healthz", method="GET", status="200")
    assert after >= counted + 1
    assert value(scrape(gw), "domino_gateway_http_requests_in_flight") == 0.0  # a scrape is no API request


def _live_children(parent: int) -> set[int]:
    children = Path(f"/proc/{parent}/task/{parent}/children")
    return {int(p) for p in children.read_text().split()} if children.exists() else set()
