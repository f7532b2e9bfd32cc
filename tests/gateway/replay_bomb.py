"""The bot-seat replay bomb of issue 29, kept as data: `kingdomino_replay_bomb.json` beside this file.

A 4-player Kingdomino dynasty (seed 29) with expert bots in seats 1-3, and the first 72 actions of seat 0
(its first legal action each turn): replayed in one transparent `POST /v1/matches/replay`, the bots decide
216 times, about 29 s of CPU on the project machine (22.4 s in the issue's run). Making the list costs just
that, so it is made once: `python tests/gateway/replay_bomb.py` writes it again (after a change to the bots,
whose decisions the later actions depend on).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "kingdomino_replay_bomb.json"
MOVES = 72


def bomb() -> dict[str, Any]:
    """The replay's body: ``{"state": ..., "actions": [...]}``."""
    body: dict[str, Any] = json.loads(DATA.read_text())
    return body


def make() -> dict[str, Any]:
    from engine_service import calls

    game, _ = calls.new_kingdomino(4, options={"dynasty": True}, seed=29,
                                   bots=[{"seat": s, "level": "expert"} for s in (1, 2, 3)])
    start = game.to_dict()
    actions: list[str] = []
    while len(actions) < MOVES:
        action = game.legal_actions()[0]
        calls.apply(game, action, 0)
        actions.append(action)
    return {"state": start, "actions": actions}


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    DATA.write_text(json.dumps(make()) + "\n")
    print(f"wrote {DATA}")
