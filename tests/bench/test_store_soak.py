"""`domino bench store-soak` (issue 43): the live store holds its size while matches end and new ones start.

The soak itself (`--tiny`: 2.5 minutes, ~2 min 50 s of wall time, at 40 moves/s on one host) runs with the
gateway's shortest lifetimes (a minute for a finished or idle match and an idle table), so a store that
forgets nothing, a table that is never swept or a WAL that is never restarted shows as growth within the
run (the default lifetimes, an hour for a finished match, are `domino bench store-soak`'s to judge). No timing is judged here (the throughput half of the verdict is bench/'s); the judgement itself is
shown to fail on samples that grow or slow down.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from api_gateway.store.sqlite import SqliteStore
from bench import main, store_soak
from bench.service import BenchError


@pytest.mark.service
def test_the_store_levels_off_while_matches_end_and_start(capsys: pytest.CaptureFixture[str],
                                                          tmp_path: Path) -> None:
    out = tmp_path / "store_soak.json"
    assert main(["store-soak", "--tiny", "--json", "--save", str(out)]) == 0
    captured = capsys.readouterr()
    r = json.loads(captured.out)
    print(store_soak.format_text(r))  # the samples, shown when an assertion fails
    assert r["kind"] == "store_soak" and json.loads(out.read_text())["kind"] == "store_soak"
    assert "store-soak    120 s:" in captured.err  # progress was shown
    assert "verdict:" in out.with_suffix(".txt").read_text()
    samples = r["samples"]
    # a sample every 15 s of the load tool's clock (its timer a little late on a busy machine)
    assert len(samples) == 10 and all(abs(s["t"] - 15.0 * i) < 5 for i, s in enumerate(samples, 1)), samples
    report = r["load_report"]
    assert report["error_count"] == 0, report["errors"]
    assert samples[-1]["matches_played"] > 100 and all(s["moves_per_s"] > 0 for s in samples), samples[-1]
    # With every lifetime a minute, what the store holds at the end is its last ~1.5 minutes of play (a minute,
    # and a sweep's lag), not its 2.5: a table that keeps its rows forever would grow 5/3 from 90 s to 150 s.
    verdict = r["verdict"]
    base, last = samples[5], samples[-1]
    assert (verdict["baseline_t"], verdict["last_t"]) == (base["t"], last["t"])
    for rows in ("finished_matches", "tables"):
        assert last["store"][rows] < 1.4 * base["store"][rows], (rows, base["store"], last["store"])
    assert last["bytes"]["db"] < 1.6 * base["bytes"]["db"], (base["bytes"], last["bytes"])
    # the WAL is restarted once past its bound (a few seconds of this load above it at most)
    assert max(s["bytes"]["wal"] for s in samples) < 1.25 * SqliteStore.WAL_PAGES * (4096 + 24)
    assert {"events_s1", "tables_s2", "hosted_s2"} <= set(last["store"]["table_bytes"])


def _samples(total: list[float], moves_per_s: list[float], every: float = 30.0) -> list[dict[str, Any]]:
    samples, moves = [], 0.0
    for i, (size, rate) in enumerate(zip(total, moves_per_s, strict=True)):
        moves += rate * every
        samples.append({"t": every * (i + 1), "moves": moves, "playing": 32, "server_cores": 1.0,
                        "bytes": {"total": size}, "store": {"live_matches": 32, "finished_matches": 0}})
    return samples


def test_the_verdict_fails_on_a_store_that_grows_or_a_host_that_slows() -> None:
    flat = store_soak.judge(_samples([100.0, 110, 120, 118, 121, 119], [400.0] * 6))
    assert flat["held"] and flat["baseline_t"] == 120.0 and flat["last_t"] == 180.0
    assert flat["moves_per_s"]["baseline"] == 400.0 and flat["moves_per_s"]["last"] == 400.0
    assert flat["server_cpu_s_per_1000_moves"] == {"baseline": 2.5, "last": 2.5}  # a core for 400 moves/s
    grown = store_soak.judge(_samples([100.0, 110, 120, 120, 160, 200], [400.0] * 6))
    assert not grown["held"] and not grown["bytes"]["held"] and grown["bytes"]["ratio"] == pytest.approx(200 / 120,
                                                                                                         abs=1e-3)
    slowed = store_soak.judge(_samples([100.0] * 6, [400.0, 400, 400, 400, 340, 340]))
    assert not slowed["held"] and slowed["bytes"]["held"] and slowed["moves_per_s"]["ratio"] == 0.85
    with pytest.raises(BenchError, match="baseline"):
        store_soak.judge(_samples([100.0, 110, 120], [400.0] * 3), baseline_s=240.0)
