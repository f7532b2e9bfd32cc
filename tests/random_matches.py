"""Random matches of every matching preset, step by step, with the log a text-only match would keep.

Shared by the tests of the round's moves held as step codes (issue 27: tests/rules/test_log_steps.py,
the wire's in tests/engine/test_small_state.py): explicit deals, settled rounds and timeouts among the
moves, so that every kind of log entry is met.
"""
from __future__ import annotations

import random
from collections.abc import Iterator

from engine_service.rules import PRESETS, Match, RulesError
from engine_service.rules.notation import Move
from engine_service.rules.registry import preset
from engine_service.rules.tiles import NAMES, TILE_COUNT


def _between_rounds(match: Match, rng: random.Random) -> None:
    """Deal the next round (from the seed, or explicitly), or settle one as at a physical table."""
    players, x = match.players, rng.random()
    tiles = list(range(TILE_COUNT))
    rng.shuffle(tiles)
    try:
        if x < 0.1:
            hands = [[NAMES[t] for t in tiles[3 * i:3 * i + 3]] for i in range(players)]
            if x < 0.05:
                hands[0] = []
            match.settle("out" if x < 0.05 else "blocked", hands)
            return
        if x < 0.25:
            n = match.family.hand_size
            match.start_round({"hands": [[NAMES[t] for t in tiles[i * n:(i + 1) * n]] for i in range(players)],
                               "boneyard": [NAMES[t] for t in tiles[players * n:]]})
            return
    except RulesError:
        pass
    match.start_round()


def random_matches(seeds: int = 2) -> Iterator[tuple[Match, list[str], list[str]]]:
    """Every step of random matches of every matching preset and player count: the match, and the log a
    match that kept every entry as text would hold (its current entries, and those that left it)."""
    for variant in PRESETS:
        p = preset(variant)
        for players in range(p.min_players, p.max_players + 1):
            for seed in range(seeds):
                rng = random.Random(f"{variant}/{players}/{seed}")
                match, _ = Match.new(variant, players, seed=seed)
                text, shed = list(match.log), []
                yield match, text, shed
                for _ in range(300):
                    if match.match_over:
                        break
                    rnd = match.round
                    if rnd is None or rnd.over:
                        _between_rounds(match, rng)
                        text.append((match.log or match.shed)[-1])  # a deal, or a settle (shed at once)
                    elif rng.random() < 0.004:
                        try:
                            match.timeout(rng.randrange(players))
                        except RulesError:  # a preset without a timeout rule
                            continue
                        text.append(f"timeout {match.timed_out}")
                    else:
                        action = rng.choice(match.legal_actions())
                        match.apply(action)
                        text.append(Move.parse(action).text())
                    if match.log_count > len(shed):  # a round ended: its entries left the state
                        shed.extend(text)
                        text.clear()
                    yield match, text, shed
