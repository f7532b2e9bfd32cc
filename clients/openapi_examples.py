"""The request examples of the OpenAPI document, made with the rules: `python -m clients.openapi_examples`.

Swagger UI prefills "Try it out" with each operation's example, so each must be a
request the gateway accepts as it stands (tests/gateway/test_gateway_examples.py
posts every one to a real gateway and checks the file is what this module makes).
The states in them are real: a Kozel match dealt from seed 42 (and its first round
played out), a match created without a deal, a Bykovo micro-tournament. The gateway cannot make
them itself (it imports nothing of the engine), so they are kept in
`api_gateway/openapi_examples.json`.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from engine_service.rules import Match, Tournament

Json = dict[str, Any]
TARGET = Path(__file__).resolve().parents[1] / "api_gateway" / "openapi_examples.json"
SEED = 42


def examples() -> dict[str, Json]:
    """Operation name -> a request body that operation accepts."""
    match, _ = Match.new("kozel", 4, seed=SEED)
    state = match.to_dict()
    first = match.legal_actions()[0]
    replayed = Match.from_dict(state)
    moves = []
    for _ in range(3):
        move = replayed.legal_actions()[0]
        moves.append(move)
        replayed.apply(move)
    blank, _ = Match.new("kozel", 4, no_deal=True)
    blank_state = blank.to_dict()
    hands = [[], ["6-6", "5-4"], ["0-0"], ["3-2", "1-1"]]
    finished = Match.from_dict(state)  # the seeded round played to its end: the next one deals from the seed
    while finished.round is not None and not finished.round.over:
        finished.apply(finished.legal_actions()[0])
    tournament = Tournament.create(["Ann", "Bob", "Cid", "Dan", "Eve"], SEED)
    return {
        "new_match": {"variant": "kozel", "players": 4, "seed": SEED},
        "legal": {"state": state},
        "apply": {"state": state, "action": first},
        "replay": {"state": state, "actions": moves},
        "settle": {"state": blank_state, "ending": "out", "hands": hands},
        "next_round": {"state": finished.to_dict()},
        "timeout": {"state": state, "seat": 1},
        "view": {"state": state, "seat": 0},
        "new_tournament": {"participants": ["Ann", "Bob", "Cid", "Dan", "Eve"], "seed": SEED},
        "record_round": {"state": tournament.to_dict(), "points": [0, 14, 23, 9], "winner": 0},
        "standings": {"state": tournament.to_dict()},
    }


def render() -> str:
    return json.dumps(examples(), indent=1) + "\n"


def main() -> int:
    TARGET.write_text(render())
    print(f"wrote {TARGET}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
