"""The expert's opponent model: past plays weighed in a world (bots/matching/likelihood.py)."""
from __future__ import annotations

import random

from engine_service.bots.matching import likelihood
from engine_service.bots.matching.knowledge import read_view
from engine_service.bots.matching.policy import fitting_after, move_pips, points_after
from engine_service.bots.matching.sampler import Sampler, build_round
from engine_service.bots.observe import SeatLog
from engine_service.rules import Match
from engine_service.rules.notation import PLAY, Move

from .conftest import matching_positions, seat_view


def test_a_choice_gives_the_seat_its_hand_at_that_play_exactly() -> None:
    """For every play the history lists, the true hand now and the tiles played since are the hand
    the seat really held then (a play followed by a draw of that seat is never listed)."""
    checked = 0
    for variant, players in (("kozel", 2), ("all-fives", 2), ("osel", 4), ("threes-fives", 3)):
        for seed in range(6):
            match, events = Match.new(variant, players, seed=seed)
            log = SeatLog()
            log.record(events)
            rnd = match.round
            assert rnd is not None
            held_at: list[tuple[int, int]] = []  # per play, in order: (seat, its hand before it)
            rng = random.Random(seed)
            while not rnd.over and not match.match_over:
                seat = match.to_move
                view = seat_view(match, log)
                know = read_view(view)
                plays = [(s, h) for s, h in held_at if s != know.seat]
                for s, _layout, _move, played in know.choices:
                    assert any(s == t and rnd.hands[s] | played == h for t, h in plays)
                    checked += 1
                action = rng.choice(match.legal_actions())
                if Move.parse(action)[0] == PLAY:
                    held_at.append((seat, rnd.hands[seat]))
                log.record(match.apply(action))
    assert checked > 200


def test_a_plays_chance_is_the_playout_policys_on_the_rules_legal_moves() -> None:
    """In sampled worlds, each past play's chance is the playout model's: (1 - EPSILON) shared by the
    moves with the policy's best key (greedy's points and pips, or the tiles kept fitting and pips)
    when the play is one of them, plus EPSILON over the one-tile moves the rules allowed that hand; and a
    player's choosing any of those alike, 1 / their number."""
    eps = likelihood.EPSILON
    checked = 0
    for variant in ("kozel", "all-fives", "block", "threes-fives"):
        for match, log in matching_positions(variant, 15, seed=8):
            know = read_view(seat_view(match, log))
            past = likelihood.plays(know)
            sampler = Sampler(know, random.Random(2))
            for _ in range(3):
                hands, _boneyard = sampler.hands()
                for (seat, layout, move, played), play in zip(
                        [c for c in know.choices if len(c[2][1]) == 1 and not c[2][1][0][2]], past):
                    assert play.seat == seat
                    hand = hands[seat] | played
                    then = build_round(know, [hand if s == seat else 0 for s in range(know.players)], [])
                    then.layout = layout.copy()
                    then.to_move = seat
                    moves = [m for m in then.legal_moves()
                             if m[0] == PLAY and len(m[1]) == 1 and not m[1][0][2]]
                    assert move in moves
                    fam = know.family
                    if fam.counts:
                        keys = [(points_after(layout, m, fam.in_play_points), move_pips(m)) for m in moves]
                    else:
                        keys = [(fitting_after(layout, hand, m), move_pips(m)) for m in moves]
                    best = max(keys)
                    ties = keys.count(best)
                    mine = keys[moves.index(move)]
                    expect = ((1 - eps) / ties if mine == best else 0.0) + eps / len(moves)
                    model, alike = play.chance(hands[seat])
                    assert abs(model - expect) < 1e-12 and abs(alike - 1 / len(moves)) < 1e-12
                    checked += 1
    assert checked > 100


def test_a_worlds_weight_mixes_per_seat_the_model_and_any_play_alike() -> None:
    """Per seat, MODEL_SHARE times the product of the model's chances plus the rest times the product of
    the alike chances; the seats' terms multiply."""
    checked = 0
    share = likelihood.MODEL_SHARE
    for match, log in matching_positions("osel", 30, seed=9):
        know = read_view(seat_view(match, log))
        past = likelihood.plays(know)
        if len({p.seat for p in past}) < 2:
            continue
        hands, _boneyard = Sampler(know, random.Random(3)).hands()
        expect = 1.0
        for seat in {p.seat for p in past}:
            mine = [p.chance(hands[seat]) for p in past if p.seat == seat]
            model = alike = 1.0
            for m, a in mine:
                model *= m
                alike *= a
            expect *= share * model + (1 - share) * alike
        assert abs(likelihood.weight(past, hands) - expect) < 1e-12
        checked += 1
    assert checked > 5


def test_worlds_the_plays_make_likely_are_kept_more_often() -> None:
    """Systematic resampling keeps each candidate about n times its share of the weights."""
    rng = random.Random(4)
    weights = [0.0, 1.0, 3.0, 0.0, 4.0]
    picks = likelihood.select(weights, 80, rng)
    assert len(picks) == 80
    assert picks.count(0) == picks.count(3) == 0
    assert picks.count(1) in (9, 10, 11) and picks.count(2) in (29, 30, 31) and picks.count(4) in (39, 40, 41)
    assert likelihood.select([0.0, 0.0], 2, rng) == [0, 1]
