"""Void inference: what passes, draws and the lead prove is true, and the sampler honours it.

(That it is also everything they prove is tests/bots/test_exact_deals.py's part.)"""
from __future__ import annotations

import random

from engine_service.bots import hints
from engine_service.bots.matching.deals import SeatDeals
from engine_service.bots.matching.knowledge import read_view
from engine_service.bots.matching.sampler import Sampler
from engine_service.bots.observe import SeatLog
from engine_service.rules import Match
from engine_service.rules.registry import PRESETS
from engine_service.rules.tiles import NUMBER_MASK, parse_tile

from .conftest import seat_view


def _play_and_check(variant: str, players: int, seed: int, rng: random.Random) -> int:
    """Play a random round; at every turn, every tile a seat's view proves another seat cannot hold is
    one it does not hold, and sampled worlds give no seat such a tile.

    Returns how many voids (seat and number) were proven along the way.
    """
    match, events = Match.new(variant, players, seed=seed)
    log = SeatLog()
    log.record(events)
    rnd = match.round
    assert rnd is not None
    voids = 0
    while not rnd.over and not match.match_over:
        for seat in range(players):
            if seat != match.to_move:
                continue
            know = read_view(seat_view(match, log))
            assert know.history_used
            others = [s for s in range(players) if s != seat]
            for other in others:
                assert rnd.hands[other] & ~know.possible(other) == 0, (variant, other)
                voids += know.voids(other).bit_count()
            sampler = Sampler(know, random.Random(seed))
            for _ in range(5):
                hands, _boneyard = sampler.hands()
                for other in others:
                    assert hands[other] & ~know.possible(other) == 0
            assert sampler.relaxed == 0
        log.record(match.apply(rng.choice(match.legal_actions())))
    return voids


def test_what_is_proven_is_true_and_sampled_worlds_respect_it() -> None:
    rng = random.Random(1)
    proven = 0
    for variant in sorted(PRESETS):
        p = PRESETS[variant]
        for seed in range(6):
            proven += _play_and_check(variant, p.min_players + seed % (p.max_players - p.min_players + 1),
                                      seed, rng)
    assert proven > 50


def test_draws_after_a_proof_allow_only_what_was_not_played() -> None:
    # Kozel: the ends show 3 and 5; the seat draws three times, the third tile fits and is played.
    three_five = (1 << 3) | (1 << 5)
    timeline = [("proof", three_five), ("draw", 0), ("proof", three_five), ("draw", 0),
                ("proof", three_five), ("draw", 0), ("play", parse_tile("3-5"))]
    unseen = ((1 << 28) - 1) & ~(1 << parse_tile("3-5"))
    deals = SeatDeals(timeline, 9, unseen, 0)
    assert not deals.possible & (NUMBER_MASK[3] | NUMBER_MASK[5])
    # Drawn without playing since: a 6 may have come in (at most one: the weights say how likely).
    deals = SeatDeals([("proof", 1 << 6), ("draw", 0)], 8, (1 << 28) - 1, 0)
    assert deals.possible == (1 << 28) - 1
    assert all(counts[0] == 8 or counts[1] == 1 for counts in deals.weights)


def test_a_pass_in_block_is_a_void_in_the_ends() -> None:
    # Block, 2 players, explicit deal: seat 1 holds no 6 and no 0 and must pass on 6-6 / 0-6.
    hands = [["6-6", "0-6", "0-1", "1-1", "1-2", "1-3", "2-2"],
             ["1-4", "1-5", "2-4", "2-5", "3-3", "3-4", "3-5"]]
    match, events = Match.new("block", 2, deal={"hands": hands, "boneyard": [
        t for t in _all_names() if t not in hands[0] + hands[1]]})
    log = SeatLog()
    log.record(events)
    log.record(match.apply("6-6"))
    log.record(match.apply("pass"))
    know = read_view(seat_view(match, log))
    assert know.voids(1) == 1 << 6
    log.record(match.apply("0-6@E"))
    log.record(match.apply("pass"))
    know = read_view(seat_view(match, log))
    assert know.voids(1) == (1 << 6) | (1 << 0)
    sampler = Sampler(know, random.Random(2))
    for _ in range(50):
        hands_now, _ = sampler.hands()
        assert not hands_now[1] & (NUMBER_MASK[6] | NUMBER_MASK[0])


def _all_names() -> list[str]:
    return [f"{a}-{b}" for b in range(7) for a in range(b + 1)]


def test_a_history_the_rules_do_not_replay_proves_nothing() -> None:
    """A history whose plays are no action, have none, or do not fit the layout is ignored (the counts
    are known, nothing is proven), and reading it raises nothing: the rules' refusal is the reason."""
    rng = random.Random(3)
    match, events = Match.new("kozel", 4, seed=3)
    log = SeatLog()
    log.record(events)
    for _ in range(6):
        log.record(match.apply(rng.choice(match.legal_actions())))
    view = seat_view(match, log)
    assert read_view(view).history_used
    played = [i for i, e in enumerate(view["history"]) if e.get("type") == "played"]
    assert played
    for bad in ({"action": "9-9"}, {"action": 17}, {"action": None}, {}, {"action": "6-6@Q"}):
        history = [dict(e) for e in view["history"]]
        entry = {k: v for k, v in history[played[-1]].items() if k != "action"}
        history[played[-1]] = {**entry, **bad}
        know = read_view({**view, "history": history})
        assert not know.history_used and not any(know.voids(s) for s in range(4))
    led_twice = list(view["history"])
    led_twice.insert(played[0] + 1, led_twice[played[0]])  # the lead again: the layout refuses it
    know = read_view({**view, "history": led_twice})
    assert not know.history_used and not any(know.voids(s) for s in range(4))
    assert all(know.possible(s) == know.unseen for s in range(4) if s != know.seat)


def test_a_forced_lead_tells_which_tiles_no_hand_held() -> None:
    """Kozel's first lead is the first of 1-1, 2-2, ... anyone holds: the doubles before the led one were
    in the boneyard at the deal, so a hand that has not drawn holds none of them (issue 42)."""
    shown = 0
    for seed in range(40):
        match, events = Match.new("kozel", 2, seed=seed)
        log = SeatLog()
        log.record(events)
        leader = match.to_move
        lead = match.legal_actions()[0]
        log.record(match.apply(lead))
        view = seat_view(match, log)
        know = read_view(view)
        before = {"1-1", "2-2", "3-3", "4-4", "5-5", "6-6", "0-0"}
        order = ["1-1", "2-2", "3-3", "4-4", "5-5", "6-6", "0-0"]
        expected = {t for t in order[:order.index(lead)] if t not in view["hand"]} if lead in before else set()
        assert {n for n in _all_names() if know.barred >> parse_tile(n) & 1} == expected
        if not expected:
            continue
        answer = hints(view, budget=10, seed=1)
        for name in expected:
            assert answer["whereabouts"][name]["hands"][leader] == 0
            assert answer["whereabouts"][name]["boneyard"] == 1
        shown += 1
    assert shown >= 5
