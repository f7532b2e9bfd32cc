"""A hostile seat keeps every token it ever sees and plays them again: nothing comes of it.

For every preset, a sealed match is played through a real gateway by all its
seats, each with its own key and always the latest token, while the rules
library plays the same seeded match alongside. Seat 0 is hostile: it keeps
every token, and at random moments tries the old ones again with every call a
seat may make (apply, replay, view, legal, timeout, next-round). Each try must be
refused as stale, carrying nothing of the match; every answer the hostile seat
does get is exactly what the rules let that seat see (`Match.view(0)`).
"""
from __future__ import annotations

import random
from typing import Any

import pytest

from engine_service.rules import PRESETS, Match

from .conftest import Gateway

pytestmark = pytest.mark.service

HOSTILE = 0
MAX_MOVES = 40
CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("apply", {"action": "draw"}), ("replay", {"actions": ["pass"]}), ("view", {}), ("legal", {}),
    ("timeout", {}), ("next-round", {}))


def _post(gateway: Gateway, path: str, body: dict[str, Any]) -> Any:
    return gateway.post(path, body)


def _assert_stale(reply: Any, latest: int) -> None:
    assert reply.status == 409, reply.json
    body = reply.json
    assert body["type"] == "/v1/problems/stale-token" and body["latest"] == latest
    assert set(body) <= {"type", "title", "status", "detail", "instance", "field", "latest", "action"}


@pytest.mark.parametrize("variant", list(PRESETS))
def test_a_seat_that_keeps_its_tokens_gains_nothing(gateway: Gateway, variant: str) -> None:
    players = PRESETS[variant].max_players
    seed = 7000 + len(variant) * 13 + players
    rng = random.Random(seed)
    reference, _ = Match.new(variant, players, seed=seed)
    created = _post(gateway, "/v1/matches", {"variant": variant, "players": players, "seed": seed,
                                             "mode": "sealed"})
    assert created.status == 201, created.json
    keys = created.json["seat_keys"]
    token, seq = created.json["token"], 0
    kept: list[str] = [token]  # every token the hostile seat has seen
    stale_tries = 0
    for _ in range(MAX_MOVES):
        if not reference.legal_actions():
            break
        mover = reference.to_move
        legal = _post(gateway, "/v1/matches/legal", {"token": token, "seat_key": keys[mover]})
        assert legal.status == 200 and legal.json == {"seat": mover, "actions": reference.legal_actions()}
        action = rng.choice(legal.json["actions"])
        applied = _post(gateway, "/v1/matches/apply", {"token": token, "seat_key": keys[mover], "action": action})
        assert applied.status == 200, applied.json
        reference.apply(action)
        seq += 1
        token = applied.json["token"]
        assert applied.json["seq"] == seq and applied.json["view"] == reference.view(mover)
        kept.append(token)
        if mover == HOSTILE:
            assert applied.json["view"] == reference.view(HOSTILE)  # its own view, nothing more
        if rng.random() < 0.25:
            for old in rng.sample(kept[:-1], min(4, len(kept) - 1)):
                for call, extra in CALLS:
                    _assert_stale(_post(gateway, f"/v1/matches/{call}",
                                        {"token": old, "seat_key": keys[HOSTILE], **extra}), seq)
                    stale_tries += 1
        # What the hostile seat may legally see, through the latest token: its own view.
        seen = _post(gateway, "/v1/matches/view", {"token": token, "seat_key": keys[HOSTILE]})
        assert seen.status == 200 and seen.json == {"view": reference.view(HOSTILE), "scores": reference.ledger.scores}
    assert seq >= 3 and stale_tries > 0
    # At the end, every kept token but the latest is refused, for every call.
    for old in kept[:-1]:
        _assert_stale(_post(gateway, "/v1/matches/view", {"token": old, "seat_key": keys[HOSTILE]}), seq)
