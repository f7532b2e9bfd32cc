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

from clients.bench import main
from clients.bench.report import BEGIN, END, write_report


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
    for name in ("grpc_health", "grpc_apply", "rest_readyz", "rest_apply_transparent", "rest_apply_sealed"):
        assert r["paths"][name]["saturation_req_per_s"] > 0, name
        lat = r["latency"][name]
        assert 0 < lat["p50_ms"] <= lat["p90_ms"] <= lat["p99_ms"], name
    for key in ("grpc_apply/grpc_health", "rest_apply_sealed/rest_readyz"):
        assert r["ratios"][key]["median"] > 0
    assert r["scale_out"]["ratio"]["median"] > 0
    assert r["sizes"]["kozel4_mid_round_sealed_token_chars"] > 0
    assert set(r["checks"]) >= {"grpc_apply_vs_health", "rest_apply_sealed_vs_readyz", "rest_p99_at_half_load_ms"}


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
