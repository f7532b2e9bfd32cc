"""Property tests over thousands of random seeded Kozel rounds (RULES.md C, K).

Both presets, 2-4 players, random option overrides; the actions are chosen by a
seeded policy, so every failure is reproducible from the example hypothesis prints.
"""
from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kozel_reference import KozelModel

from engine_service.rules import IllegalActionError, Match

TILES = [f"{a}-{b}" for a in range(7) for b in range(a, 7)]
DOUBLES = [f"{v}-{v}" for v in range(7)]
#: Every canonical action string a Kozel seat could name: leads, tiles on N/E/S/W, closing
#: doubles, double pairs on E and W, draw and pass.
UNIVERSE: list[str] = (
    TILES
    + [f"{t}@{arm}" for t in TILES for arm in ("N", "E", "S", "W")]
    + [f"{d}@{arm}!" for d in DOUBLES for arm in ("N", "E", "S", "W")]
    + [f"{e}@E+{w}@W" for e in DOUBLES for w in DOUBLES if e != w]
    + ["draw", "pass"]
)

SETTINGS: dict[str, Any] = {
    "deadline": None, "suppress_health_check": [HealthCheck.too_slow], "derandomize": False,
}

variants = st.sampled_from(["kozel", "kozel-classic"])
players = st.integers(min_value=2, max_value=4)
seeds = st.integers(min_value=0, max_value=2**64 - 1)
options = st.fixed_dictionaries({}, optional={
    "fish_scoring": st.sampled_from(["each", "max_takes_all"]),
    "double_pair": st.booleans(),
    "fish_without_double": st.booleans(),
    "zero_double": st.sampled_from(["plain", "lone-ten", "twenty-five"]),
    "lead": st.sampled_from(["one-one-up", "highest-double"]),
    "misdeal": st.sampled_from(["none", "five-doubles", "five-doubles-or-six-of-a-number"]),
    "hand_size": st.sampled_from(["seven", "five", "by-players", "five-six-seven"]),
    "open_threshold": st.integers(min_value=0, max_value=30),
    "target": st.integers(min_value=20, max_value=150),
})


def _all_tiles(state: dict[str, Any]) -> list[str]:
    rnd = state["round"]
    placed = [p.split("@")[0] for p in rnd["layout"]]
    placed = [f"{min(p.split('-'))}-{max(p.split('-'))}" for p in placed]
    return [t for h in rnd["hands"] for t in h] + list(rnd["boneyard"]) + placed


def _check_state(match: Match) -> dict[str, Any]:
    state = match.to_dict()
    # The 28 tiles are conserved: every tile exactly once in hands, boneyard or layout.
    tiles = _all_tiles(state)
    assert sorted(tiles) == sorted(TILES), tiles
    # State out, state in: exact.
    assert Match.from_dict(state).to_dict() == state
    return state


def _play_round_checking_everything(match: Match, rng: random.Random) -> int:
    """Play the current round to its end; returns the number of actions."""
    n = match.players
    boneyard0 = len(match.to_dict()["round"]["boneyard"])
    bound = 28 + boneyard0 + (n - 1) * 29
    actions = passes_in_a_row = 0
    while not match.round.over:
        state = _check_state(match)
        legal = match.legal_actions()
        assert legal, "a round in play always offers an action"
        assert len(set(legal)) == len(legal)
        if "draw" in legal or "pass" in legal:
            assert len(legal) == 1, legal          # C "Must play": no draw or pass beside a play
        if legal == ["pass"]:
            assert state["round"]["boneyard"] == []
        # Every legal action applies (on a copy) and leaves a state that decodes exactly.
        for action in legal:
            trial = match.copy()
            trial.apply(action)
            _check_state(trial)
        # Every other action is refused as illegal and changes nothing.
        allowed = set(legal)
        for action in UNIVERSE:
            if action in allowed:
                continue
            try:
                match.apply(action)
            except IllegalActionError:
                continue
            raise AssertionError(f"{action!r} applied although not in {legal}")
        assert match.to_dict() == state
        seat = match.to_move
        action = rng.choice(legal)
        match.apply(action)
        actions += 1
        passes_in_a_row = passes_in_a_row + 1 if action == "pass" else 0
        assert passes_in_a_row < n, "everybody passed but the round did not end"
        if not match.round.over and action != "draw":
            assert match.to_move == (seat + 1) % n
        if action == "draw" and not match.round.over:
            assert match.to_move == seat
        assert actions <= bound
    _check_state(match)
    assert match.legal_actions() == []
    return actions


@settings(max_examples=400, **SETTINGS)
@given(variant=variants, n=players, seed=seeds, opts=options, policy=st.integers(0, 2**32))
def test_random_rounds_keep_every_invariant(variant: str, n: int, seed: int, opts: dict[str, Any],
                                            policy: int) -> None:
    match, _ = Match.new(variant, n, options=opts, seed=seed)
    _play_round_checking_everything(match, random.Random(policy))
    record = match.to_dict()["ledger"]["history"][-1]
    assert record["ending"] in ("out", "fish")
    if record["ending"] == "out":
        assert record["round_points"][record["winner"]] == 0
        assert record["out"] == [record["winner"]]


@settings(max_examples=1200, **SETTINGS)
@given(variant=variants, n=players, seed=seeds, opts=options, policy=st.integers(0, 2**32),
       max_takes_all=st.booleans())
def test_whole_matches_agree_with_an_independent_model(
        variant: str, n: int, seed: int, opts: dict[str, Any], policy: int,
        max_takes_all: bool) -> None:
    """Legal sets, endings, points, written/remembered/pot, next leader, goat and rating agree
    with `kozel_reference`, written from RULES.md alone, round after round up to the goat."""
    if max_takes_all:
        opts = {**opts, "fish_scoring": "max_takes_all"}
    rng = random.Random(policy)
    match, _ = Match.new(variant, n, options=opts, seed=seed)
    model = KozelModel.new(variant, n, opts)
    for _ in range(200):
        dealt = match.to_dict()["round"]
        model.deal(dealt["hands"], dealt["boneyard"])
        while not match.round.over:
            assert match.to_move == model.to_move
            legal = match.legal_actions()
            assert set(legal) == model.legal()
            action = rng.choice(sorted(legal))
            match.apply(action)
            model.apply(action)
            assert match.to_dict()["round"]["ends"] == model.ends
        assert model.over
        state = match.to_dict()
        record = state["ledger"]["history"][-1]
        assert (record["ending"], record["winner"], record["round_points"]) == \
            (model.ending, model.winner, model.round_points)
        assert (state["ledger"]["written"], state["ledger"]["remembered"], state["ledger"]["pot"]) == \
            (model.written, model.remembered, model.pot)
        assert state["match_over"] == model.match_over
        if match.match_over:
            assert state["losers"] == model.losers
            assert state["rating"] == model.rating
            return
        assert state["next_leader"] == model.next_leader
        match.start_round()
    raise AssertionError("the match did not end in 200 rounds")


@settings(max_examples=300, **SETTINGS)
@given(variant=variants, n=players, seed=seeds, opts=options, policy=st.integers(0, 2**32))
def test_same_seed_same_game(variant: str, n: int, seed: int, opts: dict[str, Any], policy: int) -> None:
    games = []
    for _ in range(2):
        rng = random.Random(policy)
        match, events = Match.new(variant, n, options=opts, seed=seed)
        log: list[Any] = [events, match.to_dict()]
        rounds = 0
        while not match.match_over and rounds < 3:
            while not match.round.over:
                log.append(match.apply(rng.choice(match.legal_actions())))
                log.append(match.to_dict())
            rounds += 1
            if not match.match_over:
                log.append(match.start_round())
                log.append(match.to_dict())
        games.append(log)
    assert games[0] == games[1]
    # A different seed deals differently (28!/... collisions are not a concern).
    other, _ = Match.new(variant, n, options=opts, seed=(seed + 1) % 2**64)
    first, _ = Match.new(variant, n, options=opts, seed=seed)
    assert (other.to_dict()["round"]["hands"], other.to_dict()["round"]["boneyard"]) != \
        (first.to_dict()["round"]["hands"], first.to_dict()["round"]["boneyard"])


@settings(max_examples=300, **SETTINGS)
@given(variant=variants, n=players, seed=seeds, opts=options)
def test_random_deals_follow_the_preset(variant: str, n: int, seed: int, opts: dict[str, Any]) -> None:
    """Hand sizes, no misdeal left in a random deal, and the first lead of K."""
    match, _ = Match.new(variant, n, options=opts, seed=seed)
    model = KozelModel.new(variant, n, opts)
    state = match.to_dict()["round"]
    size = model.hand_size()
    assert [len(h) for h in state["hands"]] == [size] * n
    assert len(state["boneyard"]) == 28 - size * n
    model.deal(state["hands"], state["boneyard"])        # asserts it is no misdeal
    assert match.to_move == model.to_move
    assert match.legal_actions() == sorted(model.legal())
    assert len(match.legal_actions()) == 1


@settings(max_examples=200, **SETTINGS)
@given(variant=variants, n=players, seed=seeds, opts=options, policy=st.integers(0, 2**32))
def test_a_match_continued_from_its_state_is_the_same_match(
        variant: str, n: int, seed: int, opts: dict[str, Any], policy: int) -> None:
    """Decoding the state before every action and every deal loses nothing: the match
    played through JSON states ends exactly like the one kept in memory."""
    import json

    rng_a, rng_b = random.Random(policy), random.Random(policy)
    kept, _ = Match.new(variant, n, options=opts, seed=seed)
    state = kept.to_dict()
    for _ in range(60):
        if kept.match_over:
            break
        if kept.round.over:
            kept.start_round()
            decoded = Match.from_dict(json.loads(json.dumps(state)))
            decoded.start_round()
        else:
            action = rng_a.choice(kept.legal_actions())
            kept.apply(action)
            decoded = Match.from_dict(json.loads(json.dumps(state)))
            assert rng_b.choice(decoded.legal_actions()) == action
            decoded.apply(action)
        state = decoded.to_dict()
        assert state == kept.to_dict()
