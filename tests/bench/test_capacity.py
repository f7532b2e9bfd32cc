"""`domino bench capacity --tiny` (issue 40): people at 4-seat tables are seated in steps on one host and on
two gateways over one Redis, every move reaches the three other seats' streams, the bare floor is loaded
by the same tool, and idle streams are counted on one host. No timing is judged here (bench/ does that)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import capacity, main
from bench.capacity import chart, markdown


@pytest.mark.service
def test_bench_capacity_tiny_seats_people_and_times_every_move(capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc, svg_file = tmp_path / "performance.md", tmp_path / "performance_capacity.svg"
    doc.write_text("# Performance\n")
    monkeypatch.setattr(capacity, "DOC", doc)
    monkeypatch.setattr(capacity, "CHART", svg_file)
    out = tmp_path / "capacity.json"
    assert main(["capacity", "--tiny", "--json", "--save", str(out)]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["kind"] == "capacity" and json.loads(out.read_text())["kind"] == "capacity"
    assert r["bare_floor"]["req_per_s"] > 0 and all(f["failures"] == 0 for f in r["bare_floor"]["runs"])
    for name in ("one_host", "two_gateways"):
        m = r[name]
        first = m["steps"][0]
        assert first["people"] == 8 and first["tables"] == 2, first
        # every apply timed on each of the three other seats' streams; nothing refused or lost
        assert first["moves"] > 0 and first["samples"] == 3 * first["moves"], first
        assert first["failures"] == 0 and first["seat_failures"] == 0, first["failure_texts"]
        assert 0 < first["p50_ms"] <= first["p99_ms"] <= first["max_ms"], first
        assert first["server_cpu_share"]["gateway"] > 0 and first["load_cpu_share"] > 0, first
        assert m["capacity_people"] in (0, *(s["people"] for s in m["steps"] if s["passed"]))
        # the p99 alone never ends a ramp sooner than the rule (failures or the p99)
        assert m["p99_only"]["capacity_people"] >= m["capacity_people"]
        assert m["moves_per_s_over_bare"] >= 0 and m["p99_only"]["moves_per_s_over_bare"] >= 0
    assert "redis" in r["two_gateways"]["steps"][0]["server_cpu_share"]
    idle = r["idle"]
    assert idle["streams"] == 16 and idle["seat_failures"] == 0 and idle["workers"] == 2
    assert all(kib > 0 for kib in idle["rss_kib_held"])
    assert idle["probe"]["moves"] == 4 and idle["probe"]["samples"] == 12 and idle["probe"]["failures"] == 0
    # a tiny run leaves the page and the chart alone
    assert doc.read_text() == "# Performance\n" and not svg_file.exists()
    svg = chart(r)
    assert svg.startswith("<svg") and svg.count("<polyline") == 4  # p50 and p99 of each setup
    text = "\n".join(markdown(r))
    assert "| one host, SQLite, 2 workers |" in text and "| 16 | default (25) s |" in text
    # a full run's results also go to the page, between the section's markers, and to the chart
    r["settings"]["tiny"] = False
    capacity.save(r, tmp_path / "full.json")
    assert doc.read_text().startswith("# Performance\n") and f"{capacity.BEGIN}\n\n{text}\n\n{capacity.END}" in doc.read_text()
    assert svg_file.read_text() == svg


@pytest.mark.parametrize("flag, value", [("--people", "400,x"), ("--people", "400,100"), ("--people", "2"),
                                         ("--pace", "2"), ("--pace", "4,2"), ("--pace", "0,1")])
def test_bench_capacity_refuses_steps_that_do_not_rise_and_paces_out_of_order(
        capsys: pytest.CaptureFixture[str], flag: str, value: str) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["capacity", flag, value])
    assert stop.value.code == 2
    assert flag in capsys.readouterr().err
