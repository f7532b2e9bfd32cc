"""The request examples of the OpenAPI document, made with the rules: `python -m clients.openapi_examples`.

Swagger UI prefills "Try it out" with each operation's example, so each must be a
request the gateway accepts as it stands (tests/gateway/test_gateway_examples.py
posts every one to a real gateway and checks the file is what this module makes).
The states in them are real: a Kozel match dealt from seed 42 (and its first round
played out), a match created without a deal, a Kingdomino game from docs/variants.md's
deal after its first four picks, a Bykovo micro-tournament. The gateway cannot make
them itself (it imports nothing of the engine), so they are kept in
`api_gateway/http/openapi_examples.json`.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from engine_service import records
from engine_service.rules import Kingdomino, Match, Tournament

Json = dict[str, Any]
TARGET = Path(__file__).resolve().parents[1] / "api_gateway" / "http" / "openapi_examples.json"
SEED = 42


#: Kingdomino from an explicit deal (the draw pile, the kings' first-pick order): docs/variants.md's
#: example game. After the first round's four picks, player 0 is to place tile 1.
KD_DEAL: Json = {"tiles": [48, 3, 9, 1, 45, 2, 13, 4, 46, 40, 24, 19, 47, 23, 10, 7, 16, 11, 8, 5, 36, 32, 14, 12],
                 "kings": [0, 1, 1, 0]}
KD_PICKS = ["pick 1", "pick 9", "pick 48", "pick 3"]


def _one(summary: str, value: Json) -> Json:
    return {"summary": summary, "value": value}


def examples() -> dict[str, dict[str, Json]]:
    """Operation name -> its named examples ({"summary", "value"}), each a body it accepts."""
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
    hands = [[], ["6-6", "5-4"], ["0-0"], ["3-2", "1-1"]]
    finished = Match.from_dict(state)  # the seeded round played to its end: the next one deals from the seed
    while finished.round is not None and not finished.round.over:
        finished.apply(finished.legal_actions()[0])
    tournament = Tournament.create(["Ann", "Bob", "Cid", "Dan", "Eve"], SEED)
    game, _ = Kingdomino.new(2, deal=KD_DEAL)
    for action in KD_PICKS:
        game.apply(action)
    kd = game.to_dict()
    kd_place = game.legal_actions()[0]
    block, _ = Match.new("block", 2, seed=SEED)  # a short match for the records' examples: one round
    while block.legal_actions():
        block.apply(block.legal_actions()[0])
    block_text = records.to_text(records.export(block, names=["Ann", "Bob"]))
    return {
        "new_match": {
            "kozel": _one("A seeded 4-player Kozel match", {"variant": "kozel", "players": 4, "seed": SEED}),
            "kozel-sealed": _one("Kozel in sealed mode: a token and one key per seat",
                                 {"variant": "kozel", "players": 4, "mode": "sealed"}),
            "kingdomino": _one("A seeded 2-player Kingdomino game", {"variant": "kingdomino", "players": 2, "seed": 7}),
            "kingdomino-deal": _one("Kingdomino from an explicit deal (the draw pile, the kings' first-pick order)",
                                    {"variant": "kingdomino", "players": 2, "deal": KD_DEAL}),
            "kozel-bots": _one("Kozel against the computer: seats 1-3 played by bots, seat 0 human",
                               {"variant": "kozel", "players": 4, "mode": "sealed",
                                "bots": [{"seat": 1, "level": "expert"}, {"seat": 2, "level": "greedy"},
                                         {"seat": 3, "level": "random"}]}),
            "kingdomino-dynasty-sealed": _one(
                "A Kingdomino dynasty of three games, sealed",
                {"variant": "kingdomino", "players": 3, "options": {"dynasty": True, "harmony": True},
                 "mode": "sealed"}),
        },
        "legal": {"kozel": _one("Kozel: who is to move, and its legal actions", {"state": state}),
                  "kingdomino": _one("Kingdomino: player 0 is to place tile 1", {"state": kd})},
        "apply": {"kozel": _one("Kozel: the leader plays", {"state": state, "action": first}),
                  "kingdomino": _one("Kingdomino: player 0 places tile 1",
                                     {"state": kd, "action": kd_place, "seat": 0})},
        "replay": {"kozel": _one("Kozel: three moves in one call", {"state": state, "actions": moves}),
                   "kingdomino": _one("Kingdomino: player 0 places tile 1, then picks tile 2 of the next row",
                                      {"state": kd, "actions": [kd_place, "pick 2"]})},
        "settle": {"kozel": _one("A round played with physical tiles, scored from the hands left",
                                 {"state": blank.to_dict(), "ending": "out", "hands": hands})},
        "next_round": {"kozel": _one("Deal the next round from the match seed", {"state": finished.to_dict()})},
        "timeout": {"kozel": _one("Kozel: seat 1 ran out of time", {"state": state, "seat": 1}),
                    "kingdomino": _one("Kingdomino: player 1 timed out and forfeits", {"state": kd, "seat": 1})},
        "view": {"kozel": _one("Kozel: what seat 0 sees", {"state": state, "seat": 0}),
                 "kingdomino": _one("Kingdomino: what player 1 sees (the pile's order hidden)",
                                    {"state": kd, "seat": 1})},
        "suggest": {"kozel": _one("Kozel: the expert's move for the seat to move",
                                  {"state": state, "level": "expert", "seed": 1}),
                    "kingdomino": _one("Kingdomino: the greedy bot's move for player 0", {"state": kd, "level": "greedy"})},
        "hints": {"kozel": _one("Kozel: what the expert knows from seat 0's view", {"state": state, "seat": 0}),
                  "kingdomino": _one("Kingdomino: the coach for player 0", {"state": kd, "seat": 0})},
        "record": {"kozel": _one("The full record of a Kozel round played out", {"state": finished.to_dict(),
                                                                                  "prior": finished.shed}),
                   "kozel-seat": _one("What seat 2 may keep of it: its own hand, the table, the hands shown "
                                      "at the round's end", {"state": finished.to_dict(), "view": "seat 2",
                                                               "prior": finished.shed}),
                   "kingdomino": _one("Kingdomino, with the players' names", {"state": kd, "names": ["Ann", "Bob"]})},
        "record_import": {
            "text": _one("A block round's record, text form", {"text": block_text}),
            "json": _one("The same record, JSON form", {"record": records.to_json(records.parse(block_text))})},
        "record_replay": {"text": _one("The state after move 5 of that record", {"text": block_text, "upto": 5})},
        "new_tournament": {"five": _one("A Bykovo micro-tournament of five",
                                        {"participants": ["Ann", "Bob", "Cid", "Dan", "Eve"], "seed": SEED})},
        "record_round": {"first": _one("The first round's points and winner",
                                       {"state": tournament.to_dict(), "points": [0, 14, 23, 9], "winner": 0})},
        "standings": {"now": _one("The standings so far", {"state": tournament.to_dict()})},
    }


def render() -> str:
    return json.dumps(examples(), indent=1) + "\n"


def main() -> int:
    TARGET.write_text(render())
    print(f"wrote {TARGET}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
