"""Request examples of the OpenAPI document (Swagger UI's "Try it out" starts from them).

Plain data: the gateway reads no state, and these are the bodies a client would
send. The Kingdomino state is that of docs/variants.md's KD example game (2
players, an explicit deal) after the first round's four picks, with player 0 to
place tile 1; tests/gateway/test_gateway_kingdomino.py sends every example to a
real gateway and checks that the library writes this very state.
"""
from __future__ import annotations

from typing import Any

Json = dict[str, Any]

KD_DEAL: Json = {
    "tiles": [48, 3, 9, 1, 45, 2, 13, 4, 46, 40, 24, 19, 47, 23, 10, 7, 16, 11, 8, 5, 36, 32, 14, 12],
    "kings": [0, 1, 1, 0],
}

KD_STATE: Json = {
    "variant": "kingdomino", "players": 2, "options": {}, "seed": None, "kings": [0, 1, 1, 0],
    "pile": [46, 40, 24, 19, 47, 23, 10, 7, 16, 11, 8, 5, 36, 32, 14, 12],
    "current": [{"tile": 1, "king": 0}, {"tile": 3, "king": 3}, {"tile": 9, "king": 1}, {"tile": 48, "king": 2}],
    "next": [{"tile": 2, "king": None}, {"tile": 4, "king": None}, {"tile": 13, "king": None},
             {"tile": 45, "king": None}],
    "picker": None, "kingdoms": [[], []],
}


def _one(summary: str, value: Json) -> Json:
    return {"summary": summary, "value": value}


#: Operation (the route's path under /v1/matches) -> its named examples.
EXAMPLES: dict[str, dict[str, Json]] = {
    "": {
        "kozel": _one("A seeded 4-player Kozel match", {"variant": "kozel", "players": 4, "seed": 42}),
        "kingdomino": _one("A seeded 2-player Kingdomino game",
                           {"variant": "kingdomino", "players": 2, "seed": 7}),
        "kingdomino-deal": _one("Kingdomino from an explicit deal (the draw pile, the kings' first-pick order)",
                                {"variant": "kingdomino", "players": 2, "deal": KD_DEAL}),
        "kingdomino-dynasty-sealed": _one(
            "A Kingdomino dynasty of three games, sealed (a token and one key per player)",
            {"variant": "kingdomino", "players": 3, "options": {"dynasty": True, "harmony": True},
             "mode": "sealed"}),
    },
    "/legal": {"kingdomino": _one("Kingdomino: player 0 is to place tile 1", {"state": KD_STATE})},
    "/apply": {"kingdomino": _one("Kingdomino: player 0 places tile 1 south of the castle",
                                  {"state": KD_STATE, "action": "place 1 0,-2 N", "seat": 0})},
    "/replay": {"kingdomino": _one("Kingdomino: player 0 places tile 1, then picks tile 2 of the next row",
                                   {"state": KD_STATE, "actions": ["place 1 0,-2 N", "pick 2"]})},
    "/view": {"kingdomino": _one("Kingdomino: what player 1 sees (the pile's order hidden)",
                                 {"state": KD_STATE, "seat": 1})},
    "/timeout": {"kingdomino": _one("Kingdomino: player 1 timed out and forfeits",
                                    {"state": KD_STATE, "seat": 1})},
}
