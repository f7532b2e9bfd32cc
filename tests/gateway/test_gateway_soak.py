"""The soak (`domino soak`): a minute of every variant in both modes against real processes.

No request may fail, the memory of the engine and of each gateway worker must be
flat once warm (under 10% growth, no steady climb) and under its bound (engine
150 MiB, gateway worker 200 MiB). The memory judgement is shown to fail on
samples that grow, climb or exceed a bound. `domino soak --minutes 10` is the long
run, one command away.
"""
from __future__ import annotations

import io

import pytest

from clients import soak

pytestmark = pytest.mark.service


def test_a_minute_of_every_variant_in_both_modes() -> None:
    """A minute, where it was two: its four players take both cores from the suite's other worker, and the
    memory judgement's warm-up is the run's first fifth either way. `domino soak` runs ten."""
    out = io.StringIO()
    result = soak.run(1.0, threads=4, workers=2, progress=15, log=out)
    assert result["ok"], result["problems"]
    assert result["failures"] == 0 and result["matches"] > 25, result
    assert set(result["memory_mib"]) == {"engine", "gateway worker 1", "gateway worker 2"}
    assert "soak: 15/60 s" in out.getvalue()  # progress was shown


def _flat(level: float, seconds: float = 100) -> list[tuple[float, float]]:
    return [(t, level + (t % 3) * 0.1) for t in range(int(seconds))]


def test_the_memory_judgement_can_fail() -> None:
    limits = {"engine": 150.0, "gateway worker 1": 200.0}
    assert soak.judge({"engine": _flat(50), "gateway worker 1": _flat(70)}, 100, limits) == []
    grown = [(t, 50.0 if t < 60 else 60.0) for t in range(100)]     # a step of 20% after warm-up
    climbing = [(t, 50.0 + 0.08 * t) for t in range(100)]           # a steady climb
    assert any("after warm-up" in p for p in soak.judge({"engine": grown}, 100, limits))
    assert any("climbs" in p for p in soak.judge({"engine": climbing}, 100, limits))
    assert any("over its 150" in p for p in soak.judge({"engine": _flat(160)}, 100, limits))
    assert soak.judge({"engine": []}, 100, limits) == ["engine: no memory samples"]
