"""Positions for the bot tests: seeded matches played part way, with each seat's history."""
from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from engine_service.bots.observe import SeatLog
from engine_service.rules import Kingdomino, Match
from engine_service.rules.registry import PRESETS


def matching_positions(variant: str, count: int, seed: int = 0) -> Iterator[tuple[Match, SeatLog]]:
    """`count` positions of `variant` (every player count in turn), a random number of random moves in."""
    rng = random.Random(f"{variant}:{seed}")
    p = PRESETS[variant]
    made = 0
    game = 0
    while made < count:
        players = p.min_players + game % (p.max_players - p.min_players + 1)
        match, events = Match.new(variant, players, seed=seed * 1000 + game)
        game += 1
        log = SeatLog()
        log.record(events)
        rnd = match.round
        assert rnd is not None
        stop = rng.randrange(0, 30)
        for _ in range(stop):
            if rnd.over or match.match_over:
                break
            log.record(match.apply(rng.choice(match.legal_actions())))
        if rnd.over or match.match_over:
            continue
        made += 1
        yield match, log


def kingdomino_positions(count: int, seed: int = 0) -> Iterator[Kingdomino]:
    rng = random.Random(f"kd:{seed}")
    for i in range(count):
        game, _ = Kingdomino.new(2 + i % 3, seed=seed * 1000 + i)
        for _ in range(rng.randrange(0, 60)):
            if game.game_over:
                break
            game.apply(rng.choice(game.legal_actions()))
        if not game.game_over:
            yield game


def seat_view(match: Match, log: SeatLog) -> dict[str, Any]:
    return log.view(match, match.to_move)
