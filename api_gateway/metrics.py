"""Prometheus metrics of the gateway, right under several gunicorn workers.

- ``domino_gateway_http_requests_total{route, method, status}``: answered requests.
- ``domino_gateway_http_request_duration_seconds{route, method}``: latency histogram.
- ``domino_gateway_http_requests_in_flight``: requests being served now (all workers).
- ``domino_gateway_engine_call_duration_seconds{method}``: engine (gRPC) call latency,
  retries included, whatever the outcome.
- ``domino_gateway_engine_call_errors_total{method, code}``: engine calls that did not
  answer OK, by gRPC status name.
- ``domino_gateway_engine_batch_calls``: how many engine calls went in each `JsonEngine/Batch`
  (`api_gateway.engine_batches`).
- ``domino_gateway_limit_refusals_total{limit}``: requests answered 429 rate-limited, by the
  limit they met (`api_gateway.http.limits`).

`route` is the URL rule (``/v1/variants/<name>``), or ``<unmatched>`` for a
path no rule matches, so hostile URLs cannot grow the label set; `method` is
one of the standard HTTP methods or ``other``.

Under gunicorn every worker is its own process, so each would report only its
own counts. With ``PROMETHEUS_MULTIPROC_DIR`` set (`api_gateway.server` and the
gunicorn config set it before any worker starts), prometheus-client keeps the
values in memory-mapped files there and `registry()` sums every worker's
files; the gunicorn config marks a dead worker's files so live gauges drop it.
The variable must be set before `prometheus_client` is first imported.

The exposition is served on its own port (GATEWAY_METRICS_PORT, 9465), never on
the API's, by `serve`: under gunicorn the master process serves it (every
worker's files summed), so a scrape never waits behind requests and the API
port shows nothing of the service's internals to its clients.
"""
from __future__ import annotations

import os
import time

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    multiprocess,
    start_http_server,
)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
#: Set by the gunicorn master to its own start time, so every worker reports the same value.
START_TIME_ENV = "GATEWAY_MASTER_START_TIME"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "<unmatched>"

REQUESTS = Counter(
    "domino_gateway_http_requests_total", "HTTP requests answered, by route, method and status.",
    ["route", "method", "status"],
)
LATENCY = Histogram(
    "domino_gateway_http_request_duration_seconds", "Time to answer an HTTP request, in seconds.",
    ["route", "method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
IN_FLIGHT = Gauge(
    "domino_gateway_http_requests_in_flight", "HTTP requests being answered now.",
    multiprocess_mode="livesum",
)
SPECTATOR_STREAMS = Gauge(
    "domino_gateway_spectator_streams", "Spectator streams open now (GET /v1/matches/<id>/spectate).",
    multiprocess_mode="livesum",
)
# Labelled, so that a value (and its file, counter_<pid>.db) exists only in a worker that refused one: an
# unlabelled counter would make a file in every process that imports this module, the master included.
CONNECTIONS_REFUSED = Counter(
    "domino_gateway_connections_refused_total",
    "Connections answered 429 before their request was read, by why (address-share: their address held "
    "its share of a worker's connections, GATEWAY_CONNECTIONS_PER_ADDRESS).",
    ["reason"],
)
CLOCK_TIMEOUTS = Counter(
    "domino_gateway_clock_timeouts_total",
    "Turn clocks of online tables that ran out, by what this worker did: timeout (the variant's rule applied), "
    "autopilot (a bot plays the seat on), lost (another gateway applied it first, or the seat moved in time), "
    "failed (the engine or the store did not answer: tried again on the next pass).",
    ["outcome"],
)
LIMIT_REFUSALS = Counter(
    "domino_gateway_limit_refusals_total",
    "Requests answered 429 rate-limited, by the limit they met (`api_gateway.http.limits`: tables-per-address, "
    "seeks-per-address, seeks-per-player, tickets-per-credential, sealed-per-address).",
    ["limit"],
)
STORE_TRIPS = Counter(
    "domino_gateway_store_round_trips_total",
    "Round trips to the live store (one SQLite transaction, or one Redis command, pipeline or script), by "
    "backend: what the gateway's calls, streams and keepers cost the store (none while nothing happens).",
    ["backend"],
)
ENGINE_LATENCY = Histogram(
    "domino_gateway_engine_call_duration_seconds",
    "Time of an engine gRPC call as the gateway sees it (retries included), in seconds.",
    ["method"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
ENGINE_BATCHES = Histogram(
    "domino_gateway_engine_batch_calls",
    "Engine calls sent in one JsonEngine/Batch (a worker's calls waiting at the same moment).",
    buckets=(1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64),
)
ENGINE_ERRORS = Counter(
    "domino_gateway_engine_call_errors_total", "Engine gRPC calls not answered OK, by method and status.",
    ["method", "code"],
)


def multiprocess_dir() -> str | None:
    """The shared metrics directory, when the gateway runs with several processes."""
    return os.environ.get(MULTIPROC_ENV) or None


if multiprocess_dir() is not None:
    # The process collector does not work across processes; report the gunicorn master's
    # start time instead (the restart alerts' process_start_time_seconds). Not registered in
    # the default registry, whose process collector owns the name in a single process.
    _START = Gauge("process_start_time_seconds", "Start time of the gateway's master process (unix seconds).",
                   registry=None, multiprocess_mode="max")
    _START.set(float(os.environ.get(START_TIME_ENV) or time.time()))


def method_label(method: str) -> str:
    return method if method in METHODS else "other"


def observe_request(route: str, method: str, status: int, seconds: float) -> None:
    """Count one answered request."""
    label = method_label(method)
    REQUESTS.labels(route, label, str(status)).inc()
    LATENCY.labels(route, label).observe(seconds)


def observe_engine_call(method: str, code: str, seconds: float) -> None:
    """Record one engine call (code "OK" or a gRPC status name)."""
    ENGINE_LATENCY.labels(method).observe(seconds)
    if code != "OK":
        ENGINE_ERRORS.labels(method, code).inc()


def observe_engine_batch(calls: int) -> None:
    """Record one batch of engine calls sent (`api_gateway.engine_batches`)."""
    ENGINE_BATCHES.observe(calls)


def registry() -> CollectorRegistry:
    """What a scrape reads: every worker's files (multiprocess mode), or this process's metrics."""
    if multiprocess_dir() is not None:
        summed = CollectorRegistry()
        multiprocess.MultiProcessCollector(summed)  # type: ignore[no-untyped-call]
        return summed
    return REGISTRY


def serve(host: str, port: int) -> str:
    """Serve `/metrics` on (host, port) from a thread of this process (port 0: a free one); its address.
    OSError naming the address when it cannot bind."""
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        server, _thread = start_http_server(port, addr=host, registry=registry())
    except OSError as exc:
        raise OSError(f"cannot serve metrics on {where}: {exc.strerror or exc}") from None
    bound = int(server.server_port)
    return f"[{host}]:{bound}" if ":" in host else f"{host}:{bound}"
