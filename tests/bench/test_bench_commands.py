"""`domino bench ...` runs on a token workload and emits its JSON keys (no timing is judged here).

The benchmarks themselves are not part of the suite's pass/fail: these tests only
check that the commands run end to end and report what docs/performance.md reads.
The service bench needs h2load (Debian nghttp2-client) and wrk; without them it
reports why it skipped, and the test checks that instead.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench import main
from bench.report import BEGIN, END, write_report


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_bench_engine_tiny_emits_every_figure(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "engine.json"
    r = _run(capsys, ["engine", "--tiny", "--json", "--save", str(out), "--group", "kozel-4",
                      "--group", "block-2", "--group", "all-fives-2", "--group", "osel-4"])
    assert r["kind"] == "engine"
    assert json.loads(out.read_text())["groups"].keys() == r["groups"].keys()
    for name in ("kozel-4", "block-2", "all-fives-2", "osel-4"):
        g = r["groups"][name]
        assert g["members"]["ours"]["games_per_s"] > 0
        assert g["members"]["ours"]["games"] > 0
        stateless = r["stateless"]["ours"][name]
        for key in ("proto_encode_us", "proto_decode_us", "json_encode_us", "json_decode_us", "decision_us",
                    "mid_round_proto_bytes", "mid_round_json_bytes", "proto_roundtrip_per_decision"):
            assert stateless[key] > 0, key
    for name, peer in (("kozel-4", "dominoes"), ("block-2", "openspiel")):
        g = r["groups"][name]
        if peer in r["peers_missing"]:
            assert "peer_skipped" in g
        else:
            assert g["ratios"][f"ours/{peer}"]["median"] > 0
            assert set(g["target"]) >= {"ratio", "met_pure", "met_compiled"}
    assert "compiled" in r["settings"] and "used" in r["settings"]["compiled"]


@pytest.mark.service
def test_bench_service_tiny_runs_or_says_why_not(capsys: pytest.CaptureFixture[str]) -> None:
    r = _run(capsys, ["service", "--tiny", "--json"])
    assert r["kind"] == "service"
    if shutil.which("h2load") is None or shutil.which("wrk") is None:
        assert "nghttp2-client" in r["skipped"]["all"] or "wrk" in r["skipped"]["all"]
        return
    for name in ("grpc_health", "grpc_apply", "bare_healthz", "bare_apply", "rest_healthz", "rest_readyz",
                 "rest_apply_transparent", "rest_apply_sealed"):
        assert r["paths"][name]["saturation_req_per_s"] > 0, name
        lat = r["latency"][name]
        assert 0 < lat["p50_ms"] <= lat["p90_ms"] <= lat["p99_ms"], name
    for key in ("grpc_apply/grpc_health", "rest_readyz/rest_healthz", "rest_healthz/bare_healthz",
                "rest_apply_sealed/bare_healthz", "rest_apply_transparent/bare_healthz", "bare_apply/bare_healthz",
                "rest_apply_sealed/bare_apply"):
        assert r["ratios"][key]["median"] > 0, key
    assert not any(key.endswith("/rest_readyz") for key in r["ratios"])  # issue 40: no ratio to readyz
    assert r["scale_out"]["ratio"]["median"] > 0
    assert r["sizes"]["kozel4_mid_round_sealed_token_chars"] > 0
    assert set(r["checks"]) == {"grpc_apply_vs_health", "rest_readyz_vs_healthz", "rest_apply_sealed_vs_bare",
                                "rest_p99_at_half_load_ms"} | ({"grpc_apply_vs_health_compiled"}
                                                               if r["compiled"]["used"] else set())
    assert r["checks"]["rest_readyz_vs_healthz"]["target"] == 0.5
    assert r["checks"]["rest_apply_sealed_vs_bare"]["target"] == 0.18


@pytest.mark.service
def test_bench_tables_tiny_emits_every_figure(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`domino bench tables --tiny`: moves reach the other seat's stream through one gateway and across two on
    a Redis started for it, turn clocks run out and are applied, and streams held by one worker are counted."""
    out = tmp_path / "tables.json"
    r = _run(capsys, ["tables", "--tiny", "--json", "--save", str(out)])
    assert r["kind"] == "tables" and json.loads(out.read_text())["kind"] == "tables"
    for name in ("one_gateway", "two_gateways"):
        m = r[name]
        assert m["moves"] == r["moves_per_setup"] and 0 < m["p50_ms"] <= m["p99_ms"] <= m["max_ms"], m
    for name in ("clocks_one_gateway", "clocks_two_gateways"):
        c = r[name]
        assert c["clocks"] == r["clock_tables"] and 0 < c["p50_ms"] <= c["p99_ms"] <= c["max_ms"], c
    memory = r["memory"]
    assert memory["updated"] == memory["streams"] and memory["rss_kib"]["held"] > 0


def test_bench_report_writes_tables_and_plot(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    results = tmp_path / "bench" / "results"
    results.mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "performance.md").write_text(f"# Performance\n\nwritten by hand\n\n{BEGIN}\nold\n{END}\n\ntail\n")
    assert main(["engine", "--tiny", "--save", str(results / "engine.json"), "--group", "kozel-4"]) == 0
    capsys.readouterr()
    doc, svg = write_report(tmp_path)
    text = doc.read_text()
    assert "written by hand" in text and "tail" in text and "old" not in text
    assert "kozel-4" in text and "Cost of statelessness" in text
    assert svg.read_text().startswith("<svg")


def test_bench_report_shows_the_service_ratios_to_the_floor() -> None:
    """The service section lists the bare floor and the gateway's healthz as paths, and each ratio with the bar
    the run itself carried (issue 40's: readyz / healthz, sealed apply / bare floor); a ratio without one has none."""
    from bench.report import service_tables
    from bench.service import TARGETS

    def ratio(median: float) -> dict[str, float]:
        return {"median": median, "min": median - 0.01, "max": median + 0.01, "n": 3}

    paths = {name: {"saturation_req_per_s": rate, "saturation_runs": [rate]}
             for name, rate in (("bare_healthz", 7000.0), ("rest_healthz", 6000.0), ("rest_readyz", 5400.0),
                                ("rest_apply_sealed", 1100.0))}
    run = {"kind": "service", "skipped": {}, "targets": TARGETS, "paths": paths, "latency": {},
           "settings": {"started": "2026-12-06T02:00:00Z", "repeats": 3, "seconds": 5.0, "cpus": 2,
                        "loadavg_before": [3.0, 3.0, 3.0]},
           "ratios": {"rest_readyz/rest_healthz": ratio(0.9), "rest_apply_sealed/bare_healthz": ratio(0.16),
                      "rest_healthz/bare_healthz": ratio(0.86)}}
    text = "\n".join(service_tables(run))
    assert "| bare Flask /healthz (the floor) | 7,000 |" in text and "| REST /healthz | 6,000 |" in text
    assert "| rest_readyz/rest_healthz | 0.90 | 0.89 | 0.91 | ≥ 0.50 |" in text
    assert "| rest_apply_sealed/bare_healthz | 0.16 | 0.15 | 0.17 | ≥ 0.18 |" in text
    assert "| rest_healthz/bare_healthz | 0.86 | 0.85 | 0.87 | – |" in text


def test_bench_bots_tiny_plays_every_family(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "bots.json"
    r = _run(capsys, ["bots", "--tiny", "--json", "--save", str(out), "--matchup", "greedy:random"])
    played = {(x["variant"], x["players"]) for x in r["runs"]}
    assert played == {("kozel", 2), ("osel", 2), ("bykovo", 4), ("threes-fives", 2), ("all-threes", 2),
                      ("all-fives", 2), ("block", 2), ("kingdomino", 2), ("kingdomino", 4)}
    for x in r["runs"]:
        sides = 4 if x["variant"] == "bykovo" or x["players"] == 4 else 2
        assert x["games"] == (2 if x["variant"] != "kingdomino" else 1) * sides
        assert 0 <= x["wilson95"][0] <= x["rate"] <= x["wilson95"][1] <= 1
        assert x["a_moves"] > 0 and x["a_cpu_p99_ms"] is not None
    history = (tmp_path / "bots.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in history] == r["runs"]
    assert json.loads(out.read_text())["runs"] == r["runs"]


def test_bench_bots_match_unit_plays_whole_matches(capsys: pytest.CaptureFixture[str]) -> None:
    r = _run(capsys, ["bots", "--json", "--no-save", "--variant", "kozel", "--matchup", "greedy:random",
                      "--unit", "match", "--pairs", "1"])
    (run,) = r["runs"]
    assert run["kind"] == "matching-match" and run["games"] == 2
    # A whole Kozel match to 101 takes several rounds: far more moves than one round's 7 tiles a seat.
    assert run["a_moves"] > 14


@pytest.mark.parametrize("argv, message", [
    (["--matchup", "expert-greedy"], "want A:B"),
    (["--matchup", "expert:grandmaster"], "want A:B"),
    (["--pairs", "0"], "at least 1"),
    (["--deals", "many"], "at least 1"),
    (["--budget", "-3"], "at least 1"),
])
def test_bench_bots_refuses_bad_flags_with_a_message(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                     message: str) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["bots", *argv])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def test_bench_report_shows_each_matchups_latest_run(tmp_path: Path) -> None:
    from bench import bots_report

    results = tmp_path / "bench" / "results"
    results.mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "bots.md").write_text(f"# Bots\n\nby hand\n\n{bots_report.BEGIN}\nold\n{bots_report.END}\n")
    base = {"kind": "matching", "variant": "kozel", "players": 2, "a": "expert", "b": "greedy", "budget": "default",
            "wins": 1, "ties": 0, "wilson95": [0.1, 0.9], "paired95": [0.1, 0.9], "a_median_ms": 1.0,
            "a_p99_ms": 2.0, "a_cpu_median_ms": 1.0, "a_cpu_p99_ms": 2.0}
    runs = [{**base, "games": 2000, "rate": 0.714}, {**base, "games": 20, "rate": 0.55},
            {**base, "b": "random", "games": 10, "rate": 0.6}]
    (results / "bots.jsonl").write_text("".join(json.dumps(x) + "\n" for x in runs))
    doc, svg = bots_report.write_report(tmp_path)
    text = doc.read_text()
    assert "by hand" in text and "old" not in text
    assert "**0.550**" in text and "**0.714**" not in text and "**0.600**" in text
    assert svg.read_text().count("<rect") == 1 + 2  # the background and one bar per matchup


@pytest.mark.service
def test_bench_peers_tiny_compares_both_servers_and_checks_hidden_hands(capsys: pytest.CaptureFixture[str],
                                                                        tmp_path: Path) -> None:
    """`domino bench peers --tiny` (issue 43): the same block game on our gateway and on boardgame.io, one load
    tool: every figure for both with its ratio, and no player shown the other hand, while boardgame.io as shipped
    (its sync's unfiltered initialState) is caught by the same check. Needs node and npm (`npm ci` on first use)."""
    out = tmp_path / "peers.json"
    r = _run(capsys, ["peers", "--tiny", "--json", "--save", str(out)])
    assert r["kind"] == "peers" and json.loads(out.read_text())["kind"] == "peers"
    assert r["peer"] == "boardgame.io 0.50.2" and r["uptime_before"] and len(r["loadavg_after"]) == 3
    for target in ("ours", "peer"):
        for load in ("full", "half", "low"):
            summary = r["summary"][target][load]
            assert len(r["runs"][target][load]) == r["repeats"] == 1
            # (a short window may hold less CPU than one clock tick of /proc/<pid>/stat: >= 0)
            assert summary["moves"] > 0 and summary["server_cpu_s_per_1000_moves"] >= 0, (target, load, summary)
            assert 0 < summary["p50_ms"] <= summary["p99_ms"], (target, load, summary)
        hidden = r["hidden_hand"][target]
        assert hidden["messages_checked"] > 0 and hidden["messages_leaking"] == 0 and not hidden["violations"]
    assert r["hidden_hand"]["peer_stock"]["leak_found"] and r["hidden_hand"]["peer_stock"]["messages_leaking"] > 0
    assert set(r["figures"]) >= {"server_cpu_s_per_1000_moves_at_saturation", "server_cpu_s_per_1000_moves_at_half_load"}
    for name in ("moves_per_s_at_saturation", *(f"delay_{q}_ms_{load}" for load in ("low", "half", "full")
                                                 for q in ("p50", "p99"))):
        assert r["figures"][name]["ours/peer"] > 0, name


@pytest.mark.service
def test_bench_webhooks_tiny_times_signed_deliveries(capsys: pytest.CaptureFixture[str]) -> None:
    """`domino bench webhooks --tiny` (issue 38): every delivery reaches the bench's receiver (`bench.local_http`)
    with a signature that checks, and each figure of the report is there."""
    r = _run(capsys, ["webhooks", "--tiny", "--json", "--no-save"])
    for name in ("latency", "latency_burst"):
        assert r[name]["deliveries"] > 0 and r[name]["bad"] == 0, r[name]
        assert 0 < r[name]["p50_ms"] <= r[name]["p99_ms"] <= r[name]["max_ms"], r[name]
    assert r["throughput"]["received"] == r["throughput"]["deliveries"] > 0 and r["throughput"]["bad"] == 0
    for who in ("guests", "vouched"):
        assert r["play"][who]["runs"] and 0 < r["play"][who]["p50_ms"] <= r["play"][who]["p99_ms"], r["play"][who]
    assert r["cost_cpu_us_per_apply"] == pytest.approx(r["play"]["vouched"]["gateway_cpu_us_per_apply"]
                                                        - r["play"]["guests"]["gateway_cpu_us_per_apply"])


@pytest.mark.service
def test_bench_state_tiny_reports_sizes_and_a_flat_cost(capsys: pytest.CaptureFixture[str]) -> None:
    """`domino bench state --tiny` (issue 27): the state's sizes and the cost at a match's end against its start,
    for the pure build (and the compiled one when it is current), and a sealed match through a real gateway."""
    r = _run(capsys, ["state", "--tiny", "--json", "--no-save"])
    after = r["trees"]["after"]
    for build in ("pure", *(["compiled"] if "compiled" in after else [])):
        flat, sizes = after[build]["flat"], after[build]["sizes"]
        assert flat["first_move_us"] > 0 and flat["match_end_us"] > 0 and flat["ratio"] > 0, flat
        assert 0 < sizes["mid_round_first_round_bytes"] <= sizes["mid_round_later_rounds_max_bytes"], sizes
        assert sizes["mid_round_max_token_chars"] > sizes["mid_round_later_rounds_max_bytes"], sizes  # sealed: larger
    sealed = after["rest_sealed"]
    assert sealed and all(v["calls"] > 0 and v["first_p50_ms"] > 0 and v["last_p50_ms"] > 0 for v in sealed.values())


@pytest.mark.service
def test_bench_lobby_tiny_pages_and_pairs_on_both_stores(capsys: pytest.CaptureFixture[str]) -> None:
    """`domino bench lobby --tiny`: the lobby's pages timed among other hosts' tables, and two seekers paired and
    their table filled, on SQLite and on Redis."""
    r = _run(capsys, ["lobby", "--tiny", "--json", "--no-save"])
    assert r["kind"] == "lobby" and r["foreign_tables"] > 0
    for store in ("sqlite", "redis"):
        s = r[store]
        assert s["tables"] > 0 and s["paired"] and s["filled"], s
        for page in ("lobby_page", "lobby_page_variant", "lobby_next_page"):
            assert 0 < s[page]["p50_ms"] <= s[page]["max_ms"], (store, page, s[page])
        assert len(s["seek_ms"]) == 2 and min(s["seek_ms"]) > 0, s


@pytest.mark.service
def test_bench_flood_tiny_shows_the_limits_refusing_the_flood(capsys: pytest.CaptureFixture[str]) -> None:
    """`domino bench flood --tiny`: people's calls timed calm, under a flood with the limits off, and with them on;
    with them on some of the flood is refused (429), with them off none is, and no person's call fails."""
    r = _run(capsys, ["flood", "--tiny", "--json", "--no-save"])
    phases = r["phases"]
    assert set(phases) == {"calm", "flood, limits off", "flood, limits on"}
    for name, phase in phases.items():
        for call in ("creates", "applies"):
            assert phase[call]["n"] > 0 and 0 < phase[call]["p50_ms"] <= phase[call]["p99_ms"], (name, call, phase)
    statuses = {name: {code for answers in phase["flood"].values() for code in answers}
                for name, phase in phases.items() if name != "calm"}
    assert "429" not in statuses["flood, limits off"] and "429" in statuses["flood, limits on"], statuses
