"""Property tests for every non-Kozel preset (RULES.md O, B, TF, fives-and-threes, A3, A5, BL).

For each preset with 2-4 players (as it allows) and interesting options, seeded
random games check, at every decision of every round played:

- tiles are conserved: hands + boneyard + layout hold each of the 28 tiles once (C "Set");
- every legal action applies (on a copy, which leaves the original untouched);
- actions outside the legal set are refused with IllegalActionError and leave
  `to_dict()` unchanged;
- `to_dict` / `from_dict` round-trips exactly, and the decoded match offers the same actions;
- an unfinished round always offers an action, and every round ends;
- the same seed (and the same choices) gives the same game.
"""
from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_service.rules import IllegalActionError, Match
from engine_service.rules.notation import Move
from engine_service.rules.tiles import NAMES

# (variant, players, options): every preset at each player count it allows, plus options that
# change the layout, the draw or the scoring.
CONFIGS: list[tuple[str, int, dict[str, Any]]] = [
    ("osel", 2, {}),
    ("osel", 3, {}),
    ("osel", 4, {}),
    ("osel", 4, {"teams": True, "fish_scoring": "all_to_loser"}),
    ("osel", 2, {"boneyard_reserve": 2, "fish_without_double": True}),
    ("osel", 3, {"boneyard_reserve": 1, "fish_scoring": "own"}),
    ("bykovo", 4, {}),
    ("bykovo", 4, {"voluntary_pass": False}),
    ("threes-fives", 2, {}),
    ("threes-fives", 3, {"boneyard_reserve": "auto", "draw_when_able": True}),
    ("threes-fives", 4, {"teams": True}),
    ("threes-fives", 3, {"spinner": "none", "hand_size": "five-six-seven"}),
    ("threes-fives", 2, {"spinner_ends": "until-both-sides", "lead": "highest-double"}),
    ("fives-and-threes", 2, {}),
    ("fives-and-threes", 3, {}),
    ("fives-and-threes", 4, {"teams": True}),
    ("all-threes", 2, {}),
    ("all-threes", 3, {"spinner_ends": "until-both-sides"}),
    ("all-threes", 4, {"spinner": "none"}),
    ("all-fives", 2, {"spinner": "all-doubles"}),
    ("all-fives", 3, {"spinner_counts": False}),
    ("all-fives", 4, {"teams": True, "spinner": "all-doubles", "spinner_ends": "until-both-sides"}),
    ("all-fives", 2, {"spinner": "none", "target": 200}),
    ("block", 2, {}),
    ("block", 3, {}),
    ("block", 4, {}),
]

IDS = [f"{v}-{n}" + ("-" + "-".join(f"{k}={o[k]}" for k in sorted(o)) if o else "") for v, n, o in CONFIGS]

ARMS = ("N", "E", "S", "W", "N2", "S2")
DOUBLES = [t for t in NAMES if t[0] == t[2]]
#: Every single-tile action string of the notation, plus draw and pass.
SINGLE_ACTIONS: list[str] = (
    list(NAMES)
    + [f"{t}@{a}" for t in NAMES for a in ARMS]
    + [f"{t}@{a}!" for t in DOUBLES for a in ARMS]
)

#: Rounds played per match example (each later one dealt by `start_round`).
ROUNDS = 2
#: A round that takes more actions than this never ends (the longest possible is far shorter).
MAX_STEPS = 600

EXAMPLES = 50


def canonical(action: str) -> str:
    return Move.parse(action).text()


def tiles_everywhere(state: dict[str, Any]) -> list[str]:
    rnd = state["round"]
    placed = [p.split("@")[0] for p in rnd["layout"]]
    found = [t for hand in rnd["hands"] for t in hand] + list(rnd["boneyard"]) + placed
    return [NAMES[NAMES.index(t)] if t in NAMES else "-".join(sorted(t.split("-"))) for t in found]


def illegal_candidates(match: Match, rng: random.Random, k: int = 14) -> list[str]:
    """Actions outside the legal set: draw and pass when not legal, plus a random sample."""
    legal = {canonical(a) for a in match.legal_actions()}
    pool = [a for a in rng.sample(SINGLE_ACTIONS, k * 3) if canonical(a) not in legal][:k]
    for extra in ("draw", "pass"):
        if extra not in legal:
            pool.append(extra)
    if len(DOUBLES) >= 2:
        d1, d2 = rng.sample(DOUBLES, 2)
        a1, a2 = rng.sample(ARMS[:4], 2)
        combo = f"{d1}@{a1}+{d2}@{a2}"
        if canonical(combo) not in legal:
            pool.append(combo)
    return pool


def check_decision(match: Match, rng: random.Random) -> list[str]:
    """Every property that holds at one decision point; returns the legal actions."""
    state = match.to_dict()
    # Round trip, exactly, and the decoded match offers the same actions.
    decoded = Match.from_dict(state)
    assert decoded.to_dict() == state
    legal = match.legal_actions()
    assert decoded.legal_actions() == legal
    # Conservation of the 28 tiles.
    tiles = tiles_everywhere(state)
    assert len(tiles) == 28 and set(tiles) == set(NAMES), sorted(tiles)
    rnd = state["round"]
    if not rnd["over"] and not state["match_over"]:
        assert legal, "an unfinished round must offer the seat to move an action"
        assert len(set(legal)) == len(legal)
    # Every legal action applies; the original does not change.
    for action in legal:
        trial = match.copy()
        trial.apply(action)
    assert match.to_dict() == state
    # Anything else is refused as illegal, and leaves the state exactly as it was.
    for action in illegal_candidates(match, rng):
        try:
            match.apply(action)
        except IllegalActionError:
            pass
        else:
            raise AssertionError(f"{action!r} is not in the legal set {legal} but was applied")
        assert match.to_dict() == state, f"refused {action!r} changed the match"
    return legal


def play_match(variant: str, players: int, options: dict[str, Any], seed: int, choices: int,
               check: bool = True) -> list[dict[str, Any]]:
    """Play ROUNDS rounds with random legal choices; returns the states after every action."""
    rng = random.Random(choices)
    match, _ = Match.new(variant, players, options=options, seed=seed)
    trace = [match.to_dict()]
    for _ in range(ROUNDS):
        rnd = match.round
        assert rnd is not None
        for _step in range(MAX_STEPS):
            if rnd.over or match.match_over:   # a counting game ends at once at its target
                break
            legal = check_decision(match, rng) if check else match.legal_actions()
            match.apply(rng.choice(legal))
            trace.append(match.to_dict())
        else:
            pytest.fail(f"round {match.round_number} did not end in {MAX_STEPS} actions")
        if match.match_over and not rnd.over:
            # Reached the target in play (TF, A3, A5): the match is over, nothing more is legal.
            assert match.legal_actions() == []
            if check:
                check_decision(match, rng)
            break
        assert rnd.over
        if check:
            check_decision(match, rng)
            state = match.to_dict()
            record = state["ledger"]["history"][-1]
            assert record["ending"] in ("out", "fish", "blocked", "sortir")
            assert len(record["round_points"]) == players
        if match.match_over:
            break
        match.start_round()
        trace.append(match.to_dict())
    return trace


SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize(("variant", "players", "options"), CONFIGS, ids=IDS)
@SETTINGS
@given(seed=st.integers(0, 2**64 - 1), choices=st.integers(0, 2**32))
def test_random_games_keep_every_invariant(variant: str, players: int, options: dict[str, Any],
                                           seed: int, choices: int) -> None:
    play_match(variant, players, options, seed, choices)


@pytest.mark.parametrize(("variant", "players", "options"), CONFIGS, ids=IDS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_lead_offers_exactly_what_it_accepts(variant: str, players: int, options: dict[str, Any],
                                             seed: int) -> None:
    """Before the first tile, draw and pass are refused unless legal_actions() lists them."""
    match, _ = Match.new(variant, players, options=options, seed=seed)
    legal = match.legal_actions()
    state = match.to_dict()
    for action in ("draw", "pass"):
        if action in legal:
            continue
        try:
            match.apply(action)
        except IllegalActionError:
            pass
        else:
            raise AssertionError(f"{action!r} is not in the lead's legal set {legal} but was applied")
        assert match.to_dict() == state


@pytest.mark.parametrize(("variant", "players", "options"), CONFIGS, ids=IDS)
@settings(max_examples=4, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**64 - 1), choices=st.integers(0, 2**32))
def test_same_seed_same_game(variant: str, players: int, options: dict[str, Any],
                             seed: int, choices: int) -> None:
    first = play_match(variant, players, options, seed, choices, check=False)
    second = play_match(variant, players, options, seed, choices, check=False)
    assert first == second
    fresh, _ = Match.new(variant, players, options=options, seed=seed)
    assert fresh.to_dict() == first[0]


@pytest.mark.parametrize(("variant", "players", "options"), CONFIGS, ids=IDS)
def test_different_seeds_deal_differently(variant: str, players: int, options: dict[str, Any]) -> None:
    """The seed really drives the deal (a constant deal would pass the test above)."""
    hands = {tuple(map(tuple, Match.new(variant, players, options=options, seed=s)[0]
                       .to_dict()["round"]["hands"])) for s in range(6)}
    assert len(hands) > 1
