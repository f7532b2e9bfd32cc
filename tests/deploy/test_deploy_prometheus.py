"""A real Prometheus (Debian's prometheus 2.42) scrapes the real services under a short load,
and every dashboard query and every alert expression is run against it.

Topology: `domino serve all --engines 2` (two engine processes, one gunicorn gateway
balancing round-robin over both), the same shape as the cluster at small scale.
Prometheus scrapes them every second with the cluster's job names (domino-engine,
domino-gateway) and evaluates monitoring/rules/domino.rules.yml. The load plays
real games through the REST API for a few seconds (bounded in time and count),
with illegal actions, malformed requests and unknown URLs among them. Loopback only.
"""
from __future__ import annotations

import http.client
import json
import math
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from deploy_helpers import REPO, free_port, tool, wait_until
from promql import fill, metric_names, split_comparison

pytestmark = [pytest.mark.slow, pytest.mark.service, pytest.mark.serial]

RULES = REPO / "monitoring" / "rules" / "domino.rules.yml"
DASHBOARD = REPO / "monitoring" / "grafana" / "domino-dashboard.json"
LOAD_SECONDS = 4.0
LOAD_THREADS = 4
MAX_REQUESTS = 20_000
START_TIMEOUT = 45.0


def dashboard_targets() -> list[tuple[str, str]]:
    """(panel title / refId, query) for every query of every panel."""
    found = []
    for panel in json.loads(DASHBOARD.read_text())["panels"]:
        for target in panel.get("targets", []):
            found.append((f"{panel['title']} / {target['refId']}", target["expr"]))
    return found


def alert_rules() -> list[dict[str, Any]]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"] if "alert" in rule]


# ------------------------------------------------------------------ the services


@dataclass
class Topology:
    proc: subprocess.Popen[str]
    engines: list[tuple[str, str]]      # (grpc address, metrics address)
    gateway: str                        # host:port of the API
    gateway_metrics: str                # host:port of its metrics (their own port)
    output: list[str]


def _start_serve_all() -> Topology:
    if not (REPO / "clients" / "serve_all.py").is_file():
        pytest.skip("clients/serve_all.py (domino serve all) is not there yet")
    argv = [sys.executable, "-m", "clients.cli", "serve", "all", "--engines", "2", "--engine-port", "0",
            "--engine-metrics-port", "0", "--gateway-metrics-port", "0", "--port", "0", "--workers", "2"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGINE_", "GATEWAY_", "PROMETHEUS_"))}
    proc = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, start_new_session=True)
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + START_TIMEOUT
    engines: list[tuple[str, str]] = []
    gateway = gateway_metrics = ""
    while time.monotonic() < deadline and not gateway:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip())
        if m := re.match(r"engine \d+: grpc (\S+), metrics http://(\S+)/metrics", line):
            engines.append((m[1], m[2]))
        elif m := re.match(r"gateway: http://(\S+), metrics http://(\S+)/metrics", line):
            gateway, gateway_metrics = m[1], m[2]
    if not gateway:
        proc.kill()
        proc.wait()
        pytest.fail("domino serve all --engines 2 did not start:\n" + "\n".join(lines))
    return Topology(proc, engines, gateway, gateway_metrics, lines)


@pytest.fixture(scope="module")
def topology() -> Iterator[Topology]:
    tool("prometheus")   # skip before starting anything when Prometheus is missing
    started = _start_serve_all()
    try:
        yield started
    finally:
        if started.proc.poll() is None:
            os.killpg(started.proc.pid, signal.SIGTERM)
            try:
                started.proc.wait(40)
            except subprocess.TimeoutExpired:
                os.killpg(started.proc.pid, signal.SIGKILL)
                started.proc.wait()


# ------------------------------------------------------------------ Prometheus


@dataclass
class Prometheus:
    proc: subprocess.Popen[str]
    url: str
    log: Path

    def api(self, path: str, **params: str) -> Any:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=10) as reply:
            body = json.loads(reply.read())
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        data = self.api("query", query=expr)
        assert data["resultType"] == "vector", data
        return list(data["result"])

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start_prometheus(work: Path, engines: list[str], gateways: list[str]) -> Prometheus:
    """Prometheus on a free loopback port, scraping these targets every second with the
    cluster's job names and evaluating the alert rules every second."""
    binary = tool("prometheus")
    config = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(RULES)],
        "scrape_configs": [
            {"job_name": "domino-engine", "static_configs": [{"targets": engines}]},
            {"job_name": "domino-gateway", "metrics_path": "/metrics", "static_configs": [{"targets": gateways}]},
        ],
    }
    (work / "prometheus.yml").write_text(yaml.safe_dump(config))
    check = subprocess.run([tool("promtool"), "check", "config", str(work / "prometheus.yml")],
                           capture_output=True, text=True, timeout=60, check=False)
    assert check.returncode == 0, check.stdout + check.stderr
    port = free_port()
    log = work / "prometheus.log"
    with log.open("w") as out:
        proc = subprocess.Popen([binary, f"--config.file={work / 'prometheus.yml'}",
                                 f"--storage.tsdb.path={work / 'data'}", f"--web.listen-address=127.0.0.1:{port}",
                                 "--log.level=warn"], stdout=out, stderr=subprocess.STDOUT, text=True)
    server = Prometheus(proc, f"http://127.0.0.1:{port}", log)

    def ready() -> bool:
        try:
            with urllib.request.urlopen(f"{server.url}/-/ready", timeout=2) as reply:
                return reply.status == 200
        except OSError:
            return proc.poll() is not None

    if not wait_until(ready, 30) or proc.poll() is not None:
        server.stop()
        pytest.fail(f"prometheus did not start:\n{log.read_text()[-2000:]}")
    return server


@pytest.fixture(scope="module")
def prometheus(topology: Topology, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    server = start_prometheus(tmp_path_factory.mktemp("prometheus"), [m for _, m in topology.engines],
                              [topology.gateway_metrics])
    try:
        yield server
    finally:
        server.stop()


# ------------------------------------------------------------------ load


class Api:
    """A keep-alive JSON client of the gateway (one per load thread)."""

    def __init__(self, address: str) -> None:
        host, _, port = address.rpartition(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=10)
        self.statuses: dict[int, int] = {}

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        self.conn.request(method, path, None if body is None else json.dumps(body), headers)
        reply = self.conn.getresponse()
        data = reply.read()
        self.statuses[reply.status] = self.statuses.get(reply.status, 0) + 1
        return reply.status, json.loads(data) if data and reply.headers.get_content_type().endswith("json") else None


@dataclass
class LoadReport:
    requests: int
    seconds: float
    statuses: dict[int, int]
    rounds: int
    matches: int
    illegal: int
    started: float
    ended: float


def _play(api: Api, rng: random.Random, deadline: float, budget: list[int], tally: dict[str, int]) -> None:
    variant, players = rng.choice([("kozel", 4), ("block", 2), ("threes-fives", 2)])
    status, answer = api.call("POST", "/v1/matches", {"variant": variant, "players": players,
                                                      "seed": rng.randrange(2**32)})
    assert status == 201, answer
    state = answer["state"]
    while time.monotonic() < deadline and budget[0] > 0:
        budget[0] -= 3
        status, legal = api.call("POST", "/v1/matches/legal", {"state": state})
        assert status == 200, legal
        actions = legal["actions"]
        if rng.random() < 0.08:   # an action that is well formed but not legal now
            illegal = next((f"{a}-{b}" for a in range(7) for b in range(a, 7) if f"{a}-{b}" not in actions), None)
            if illegal is not None:
                status, problem = api.call("POST", "/v1/matches/apply", {"state": state, "action": illegal})
                assert 400 <= status < 500, problem
                tally["illegal"] += 1
        status, answer = api.call("POST", "/v1/matches/apply", {"state": state, "action": rng.choice(actions)})
        assert status == 200, answer
        state = answer["state"]
        kinds = {event.get("type") for event in answer.get("events", [])}
        if "match_ended" in kinds or state.get("match_over"):
            tally["matches"] += 1
            tally["rounds"] += 1
            return
        if "round_ended" in kinds:
            tally["rounds"] += 1
            status, answer = api.call("POST", "/v1/matches/next-round", {"state": state})
            assert status == 200, answer
            state = answer["state"]


def _load(gateway: str) -> LoadReport:
    """A few seconds of games through the gateway, and a little of everything else."""
    deadline = time.monotonic() + LOAD_SECONDS
    budget = [MAX_REQUESTS]
    tallies: list[dict[str, int]] = []
    apis: list[Api] = []
    failures: list[BaseException] = []

    def worker(seed: int) -> None:
        api = Api(gateway)
        apis.append(api)
        tally = {"rounds": 0, "matches": 0, "illegal": 0}
        tallies.append(tally)
        rng = random.Random(seed)
        try:
            api.call("GET", "/v1/variants")
            api.call("POST", "/v1/matches", {"variant": "no-such-variant", "players": 4})     # 4xx
            api.call("POST", "/v1/matches", {"variant": "kozel"})                           # 422
            api.call("GET", "/no/such/path")                                                # 404
            api.call("GET", "/readyz")
            while time.monotonic() < deadline and budget[0] > 0:
                _play(api, rng, deadline, budget, tally)
        except BaseException as exc:  # noqa: BLE001 (reported below)
            failures.append(exc)

    started = time.time()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(LOAD_THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(LOAD_SECONDS + 30)
    ended = time.time()
    assert not failures, failures[0]
    statuses: dict[int, int] = {}
    for api in apis:
        for code, count in api.statuses.items():
            statuses[code] = statuses.get(code, 0) + count
    return LoadReport(sum(statuses.values()), ended - started, statuses,
                      sum(t["rounds"] for t in tallies), sum(t["matches"] for t in tallies),
                      sum(t["illegal"] for t in tallies), started, ended)


@pytest.fixture(scope="module")
def loaded(topology: Topology, prometheus: Prometheus) -> LoadReport:
    # Every target scraped at least once before the load, so rates start from a sample.
    assert wait_until(lambda: len([s for s in prometheus.query('up{job=~"domino-.*"}') if s["value"][1] == "1"]) == 3,
                      20), prometheus.query("up")
    report = _load(topology.gateway)
    print(f"\nload: {report.requests} requests in {report.seconds:.1f}s, statuses {report.statuses}, "
          f"{report.rounds} rounds, {report.matches} matches, {report.illegal} illegal actions")
    # Wait for two scrapes of every target after the load ended.

    def scraped_after() -> bool:
        stamps = prometheus.query('timestamp(up{job=~"domino-.*"})')
        return len(stamps) == 3 and min(float(s["value"][1]) for s in stamps) > report.ended + 1.5

    assert wait_until(scraped_after, 20)
    return report


# ------------------------------------------------------------------ the checks


def test_serve_all_starts_two_engines_and_a_gateway(topology: Topology) -> None:
    assert len(topology.engines) == 2, topology.output
    assert len({g for g, _ in topology.engines}) == 2 and len({m for _, m in topology.engines}) == 2
    for grpc_address, metrics_address in topology.engines:
        assert grpc_address.startswith("127.0.0.1:") and metrics_address.startswith("127.0.0.1:")
    assert topology.gateway.startswith("127.0.0.1:") and topology.gateway_metrics.startswith("127.0.0.1:")
    assert topology.gateway_metrics != topology.gateway  # metrics on their own port


def test_load_played_real_games(loaded: LoadReport) -> None:
    assert loaded.requests > 200
    assert loaded.rounds > 0 and loaded.matches > 0 and loaded.illegal > 0
    assert loaded.statuses.get(200, 0) > 100 and loaded.statuses.get(404, 0) > 0
    assert not [code for code in loaded.statuses if code >= 500], loaded.statuses


def test_every_target_is_scraped(prometheus: Prometheus, loaded: LoadReport) -> None:
    up = {(s["metric"]["job"], s["metric"]["instance"]): s["value"][1]
          for s in prometheus.query('up{job=~"domino-.*"}')}
    assert sorted(job for job, _ in up) == ["domino-engine", "domino-engine", "domino-gateway"]
    assert set(up.values()) == {"1"}


def test_gateway_balances_over_both_engines(prometheus: Prometheus, loaded: LoadReport) -> None:
    per_engine = prometheus.query(
        'sum by (instance) (increase(grpc_server_handled_total{job="domino-engine", grpc_method="Apply"}[2m]))')
    counts = sorted(float(s["value"][1]) for s in per_engine)
    assert len(counts) == 2, per_engine
    assert counts[0] > 0.25 * sum(counts), f"round-robin should split Apply calls about evenly: {counts}"


def test_alert_rules_load_and_evaluate_cleanly(prometheus: Prometheus, loaded: LoadReport) -> None:
    groups = prometheus.api("rules")["groups"]
    rules = {rule["name"]: rule for group in groups for rule in group["rules"]}
    assert set(rules) == {rule["alert"] for rule in alert_rules()}
    for name, rule in rules.items():
        assert rule["health"] == "ok", (name, rule.get("lastError"))
        if "Latency" not in name:   # latency under a test load on a busy 2-core machine is not the point
            assert rule["state"] == "inactive", (name, rule["alerts"])   # a healthy system pages no one


@pytest.mark.parametrize("rule", alert_rules(), ids=lambda rule: rule["alert"])
def test_alert_expression_returns_data(prometheus: Prometheus, loaded: LoadReport, rule: dict[str, Any]) -> None:
    """The alert runs (empty: not firing), and its signal, the expression before the
    threshold, has a finite value for the running services."""
    prometheus.query(rule["expr"])
    parts = split_comparison(rule["expr"])
    assert parts is not None, f"{rule['alert']}: expected `signal <op> threshold`"
    signal_expr, _, threshold = parts
    float(threshold)
    values = [float(s["value"][1]) for s in prometheus.query(signal_expr)]
    assert any(math.isfinite(v) for v in values), f"{rule['alert']}: no data for {signal_expr}"


@pytest.mark.parametrize(("panel", "expr"), dashboard_targets(), ids=[t for t, _ in dashboard_targets()])
def test_dashboard_query_returns_data(prometheus: Prometheus, loaded: LoadReport, panel: str, expr: str) -> None:
    query = fill(expr)
    assert "$" not in query, f"{panel}: unknown variable in {expr}"
    values = [float(s["value"][1]) for s in prometheus.query(query)]
    assert any(math.isfinite(v) for v in values), f"{panel}: no data for {query}"


def test_no_query_names_a_metric_the_services_do_not_export(prometheus: Prometheus, loaded: LoadReport) -> None:
    exported = set(prometheus.api("label/__name__/values"))
    queries = [expr for _, expr in dashboard_targets()] + [rule["expr"] for rule in alert_rules()]
    named: set[str] = set()
    for expr in queries:
        names = metric_names(expr)
        assert names, f"no metric selected by {expr}"
        named |= names
    missing = sorted(named - exported)
    assert not missing, f"queried but not exported: {missing}"
    # and the check is not vacuous: the services' own metrics are among those named
    assert {"grpc_server_handled_total", "domino_gateway_http_requests_total",
            "domino_engine_actions_applied_total", "domino_engine_illegal_actions_total",
            "domino_engine_rounds_finished_total", "domino_gateway_engine_call_duration_seconds_count"} <= named


def test_engine_unavailable_alert_goes_pending_for_a_gateway_without_engine(
        tmp_path: Path, topology: Topology) -> None:
    """End to end: a gateway whose engine is gone. Its readiness probes alone (no client
    traffic) fail UNAVAILABLE, and Prometheus puts DominoEngineUnavailableFromGateway and
    DominoGatewayErrorRatioHigh in pending state (they fire after their `for:` time)."""
    dead_engine = f"127.0.0.1:{free_port()}"   # nothing listens there
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGINE_", "GATEWAY_", "PROMETHEUS_"))}
    proc = subprocess.Popen([sys.executable, "-m", "api_gateway", "--port", "0", "--metrics-port", "0",
                             "--workers", "1", "--engine", dead_engine, "--engine-timeout", "1"], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    server = None
    try:
        assert proc.stdout is not None
        bound = json.loads(proc.stdout.readline())
        address = bound["http"]
        server = start_prometheus(tmp_path, [], [bound["metrics"]])
        deadline = time.monotonic() + 12
        probes = 0
        pending: set[str] = set()
        while time.monotonic() < deadline and len(pending) < 2:
            try:
                urllib.request.urlopen(f"http://{address}/readyz", timeout=5)
                pytest.fail("/readyz answered 2xx with no engine")
            except urllib.error.HTTPError as exc:
                assert exc.code == 503
            probes += 1
            pending = {s["metric"]["alertname"] for s in server.query('ALERTS{alertstate="pending"}')}
            time.sleep(0.2)
        assert pending == {"DominoEngineUnavailableFromGateway", "DominoGatewayErrorRatioHigh"}, (probes, pending)
    finally:
        if server is not None:
            server.stop()
        proc.terminate()
        proc.wait(30)


def test_serve_all_stops_cleanly(topology: Topology, loaded: LoadReport) -> None:
    """Last in the module: SIGTERM reaches every process, and all of them stop."""
    os.killpg(topology.proc.pid, signal.SIGTERM)
    assert topology.proc.wait(40) == 0
