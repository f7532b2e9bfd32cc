"""The playout policy of the games that score no points in play: keep the most tiles fitting the ends."""
from __future__ import annotations

import random

from engine_service.bots.matching.knowledge import read_view
from engine_service.bots.matching.numbers import ends_numbers, numbers_tiles
from engine_service.bots.matching.policy import fitting_after, keeping_move, move_pips, playout_choice
from engine_service.bots.matching.sampler import Sampler, build_round
from engine_service.rules.notation import DRAW, PASS

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
