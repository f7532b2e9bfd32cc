"""Every /v1/matches answer is exactly what its documented schema describes.

The play routes send the answers `Matches` builds without a marshmallow dump
(`api_gateway.http.routes.answer`): this pins that the dump would change nothing,
i.e. no key missing from the OpenAPI document and no value of another type,
over whole matches of every family, in both modes, with every event type.
"""
from __future__ import annotations

import random
from typing import Any

import pytest
from marshmallow import Schema

from api_gateway.http.schemas import (
    LegalAnswerSchema,
    MatchAnswerSchema,
    ReplayAnswerSchema,
    ViewAnswerSchema,
)

from .conftest import Gateway

pytestmark = pytest.mark.service

Json = dict[str, Any]
VARIANTS = [("kozel", 4), ("osel", 4), ("bykovo", 4), ("threes-fives", 2), ("all-fives", 2), ("block", 2)]


def checked(gateway: Gateway, path: str, body: Json, schema: Schema, status: int = 200,
            seen: set[str] | None = None) -> Json:
    r = gateway.post(path, body)
    assert r.status == status, r.json
    answer: Json = r.json
    assert schema.dump(answer) == answer, f"{path}: the answer differs from its schema's dump"
    if seen is not None:
        seen.update(e["type"] for e in answer.get("events", []))
    return answer


def test_transparent_answers_match_their_schemas(gateway: Gateway) -> None:
    seen: set[str] = set()
    for variant, players in VARIANTS:
        play_two_rounds(gateway, variant, players, seen)
    blank = checked(gateway, "/v1/matches", {"variant": "kozel", "players": 4, "no_deal": True},
                    MatchAnswerSchema(), 201)["state"]
    checked(gateway, "/v1/matches/settle", {"state": blank, "ending": "out", "hands": [[], ["6-6"], ["1-2"], ["0-1"]]},
            MatchAnswerSchema(), seen=seen)
    assert seen == {"played", "drew", "passed", "points_scored", "round_ended", "match_ended", "next_leader",
                    "round_dealt"}


def play_two_rounds(gateway: Gateway, variant: str, players: int, seen: set[str]) -> None:
    """A match of `variant`, randomly played for two rounds (or to its end); Kozel then times out."""
    rng = random.Random(7)
    answer = checked(gateway, "/v1/matches", {"variant": variant, "players": players, "seed": 7},
                     MatchAnswerSchema(), 201, seen)
    state = answer["state"]
    checked(gateway, "/v1/matches/view", {"state": state, "seat": 1}, ViewAnswerSchema())
    checked(gateway, "/v1/matches/replay", {"state": state, "actions": ["nonsense"]}, ReplayAnswerSchema())
    rounds = 0
    for _ in range(400):
        if state["match_over"] or rounds == 2:
            break
        if state["round"] is None or state["round"]["over"]:
            state = checked(gateway, "/v1/matches/next-round", {"state": state}, MatchAnswerSchema(),
                            seen=seen)["state"]
            rounds += 1
            continue
        legal = checked(gateway, "/v1/matches/legal", {"state": state}, LegalAnswerSchema())
        action = rng.choice(legal["actions"])
        state = checked(gateway, "/v1/matches/apply", {"state": state, "action": action},
                        MatchAnswerSchema(), seen=seen)["state"]
    if variant == "kozel":  # the variant with a timeout rule (RULES.md K)
        checked(gateway, "/v1/matches/timeout", {"state": state, "seat": 0}, MatchAnswerSchema(), seen=seen)


def test_sealed_answers_match_their_schemas(gateway: Gateway) -> None:
    rng = random.Random(3)
    answer = checked(gateway, "/v1/matches", {"variant": "threes-fives", "players": 2, "seed": 3,
                                                   "mode": "sealed"},
                     MatchAnswerSchema(), 201)
    token, keys, host = answer["token"], answer["seat_keys"], answer["host_key"]
    checked(gateway, "/v1/matches/view", {"token": token, "seat_key": host}, ViewAnswerSchema())
    for _ in range(6):
        view = answer["view"]
        seat = view["to_move"]
        legal = checked(gateway, "/v1/matches/legal", {"token": token, "seat_key": keys[seat]}, LegalAnswerSchema())
        answer = checked(gateway, "/v1/matches/apply", {"token": token, "seat_key": keys[seat],
                                                        "action": rng.choice(legal["actions"])},
                         MatchAnswerSchema())
        token = answer["token"]
    seat = answer["view"]["to_move"]
    checked(gateway, "/v1/matches/replay", {"token": token, "seat_key": keys[seat], "actions": ["nonsense"]},
            ReplayAnswerSchema())
    checked(gateway, "/v1/matches/view", {"token": token, "seat_key": keys[1]}, ViewAnswerSchema())
