"""The playout policy of the games that score no points in play: keep the most tiles fitting the ends
(the side's: in the team games the partner's count too)."""
from __future__ import annotations

import random

from engine_service.bots.matching.knowledge import read_view
from engine_service.bots.matching.numbers import ends_numbers, numbers_tiles
from engine_service.bots.matching.policy import (
    fitting_after,
    keeping_move,
    move_pips,
    playout_choice,
    side_hand,
)
from engine_service.bots.matching.sampler import Sampler, build_round
from engine_service.bots.observe import SeatLog
from engine_service.rules import Match
from engine_service.rules.notation import DRAW, PASS, Move
from engine_service.rules.round import Round

from .conftest import matching_positions, seat_view


def test_fitting_after_is_exact_on_a_line() -> None:
    """On a line (Kozel, block) a move changes one end: the estimate is what the layout then shows."""
    checked = 0
    for variant in ("kozel", "block"):
        for match, log in matching_positions(variant, 12, seed=5):
            know = read_view(seat_view(match, log))
            rnd = Sampler(know, random.Random(1)).world()
            seat = rnd.to_move
            for move in rnd.legal_moves():
                if move[0] in (DRAW, PASS) or not rnd.layout.placements:
                    assert fitting_after(rnd.layout, rnd.hands[seat], move) == -1
                    continue
                after = rnd.copy()
                after.apply_move(move, [])
                fit = after.hands[seat] & numbers_tiles(ends_numbers(after.layout))
                assert fitting_after(rnd.layout, rnd.hands[seat], move) == fit.bit_count()
                checked += 1
    assert checked > 20


def test_keeping_move_prefers_fitting_then_pips_and_never_draws_when_it_can_play() -> None:
    for match, log in matching_positions("kozel", 10, seed=6):
        know = read_view(seat_view(match, log))
        rnd = build_round(know, [know.hand if s == know.seat else 0 for s in range(know.players)], [])
        moves = rnd.legal_moves()
        chosen = keeping_move(rnd, moves)
        assert playout_choice(rnd, moves) == chosen
        playing = [m for m in moves if m[0] not in (DRAW, PASS)]
        if not playing:
            continue
        assert chosen in playing
        key = (fitting_after(rnd.layout, know.hand, chosen), move_pips(chosen))
        assert all((fitting_after(rnd.layout, know.hand, m), move_pips(m)) <= key for m in playing)


def _key(world: Round, move: Move, hand: int) -> tuple[int, int]:
    """What `keeping_move` ranks by, counting the tiles of `hand`."""
    return fitting_after(world.layout, hand, move), move_pips(move)


def test_in_team_games_keeping_move_counts_the_partners_fitting_tiles_too() -> None:
    """Osel in teams (seats 0+2 against 1+3): in a world every hand is known, and a playout move keeps
    the most tiles of the mover's side fitting the ends (not blocking the partner); some positions
    choose otherwise than the mover's own tiles alone would."""
    differs = checked = 0
    for seed in range(40):
        match, events = Match.new("osel", 4, {"teams": True}, seed=seed)
        log = SeatLog()
        log.record(events)
        rng = random.Random(seed)
        rnd = match.round
        assert rnd is not None
        while not rnd.over:
            know = read_view(seat_view(match, log))
            world = Sampler(know, random.Random(seed)).world()
            seat = world.to_move
            partner = (seat + 2) % 4
            assert side_hand(world, seat) == world.hands[seat] | world.hands[partner]
            playing = [m for m in world.legal_moves() if m[0] not in (DRAW, PASS)]
            if len(playing) > 1 and world.layout.placements:
                chosen = keeping_move(world, world.legal_moves())
                side, own = side_hand(world, seat), world.hands[seat]
                assert all(_key(world, m, side) <= _key(world, chosen, side) for m in playing)
                alone = max(playing, key=lambda m: _key(world, m, own))
                differs += _key(world, alone, own) > _key(world, chosen, own)
                checked += 1
            log.record(match.apply(rng.choice(match.legal_actions())))
    assert checked > 50 and differs > 0
