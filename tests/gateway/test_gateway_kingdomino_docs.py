"""docs/variants.md "A whole game over REST" (Kingdomino) works as pasted, against a real gateway.

Each shell block marked ``<!-- kingdomino rest walkthrough -->`` runs in bash as
written, in an empty directory, with only its first line (``G=http://localhost:8080``,
the address `make run` gives) pointed at the test's gateway; the game must reach
its end and the last line print the final score.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import REPO, Gateway

pytestmark = pytest.mark.service

DOC = REPO / "docs" / "variants.md"
MARK = "<!-- kingdomino rest walkthrough -->"
DEFAULT = "G=http://localhost:8080\n"


def blocks() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    return re.findall(re.escape(MARK) + r"\s*```sh\n(.*?)```", text, flags=re.DOTALL)


def run(block: str, gateway: Gateway, where: Path) -> list[str]:
    assert block.startswith(DEFAULT), "the walkthrough starts at make run's address"
    for tool in ("bash", "curl", "jq"):
        assert shutil.which(tool), f"{tool} is needed to run the walkthrough (scripts/ci-system-deps.sh)"
    script = f"set -euo pipefail\nG={gateway.url}\n" + block[len(DEFAULT):]
    done = subprocess.run(["bash", "-c", script], cwd=where, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()


def test_the_doc_has_the_transparent_and_the_sealed_walkthrough() -> None:
    found = blocks()
    assert len(found) == 2
    assert '"mode": "sealed"' in found[1] and "mode" not in found[0]


def test_the_transparent_walkthrough_plays_a_whole_game(gateway: Gateway, tmp_path: Path) -> None:
    lines = run(blocks()[0], gateway, tmp_path)
    assert json.loads(lines[0])[1] == {"type": "row_laid", "tiles": [3, 5, 45, 48]}
    assert json.loads(lines[1]) == {"seat": 1, "actions": ["pick 3", "pick 5", "pick 45", "pick 48"]}
    assert json.loads(lines[2]) == [{"type": "tile_picked", "player": 1, "king": 0, "tile": 48}]
    assert lines[3] == "tile 48 is already taken by player 1"
    end, score = json.loads(lines[4]), json.loads(lines[5])
    assert end["type"] == "game_over"
    assert score == {key: end[key] for key in ("scores", "largest_region", "crowns", "winners", "decided_by")}
    assert len(score["scores"]) == 2 and score["winners"]
    state = json.loads((tmp_path / "game.json").read_text())["state"]
    assert [len(k) for k in state["kingdoms"]] == [12, 12] and state["pile"] == []


def test_the_sealed_walkthrough_plays_a_whole_game_with_each_players_key(gateway: Gateway, tmp_path: Path) -> None:
    lines = run(blocks()[1], gateway, tmp_path)
    start = json.loads(lines[0])
    assert start["player"] is None and start["pile_size"] == 20 and start["to_move"] in (0, 1)
    end = json.loads(lines[-1])
    assert end["player"] in (0, 1) and end["winners"] and end["decided_by"]
    answer = json.loads((tmp_path / "sealed.json").read_text())
    assert "state" not in answer and answer["view"]["game_over"] and answer["seq"] == 48
