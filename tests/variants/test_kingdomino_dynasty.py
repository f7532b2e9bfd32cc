"""Kingdomino's Dynasty (option `dynasty`; the rule's source is issue 14, RULES.md KD names the option).

A series of three games by the same players, served as one match: scores summed,
the winner by the total; ties broken by the largest regions, then the crowns,
both summed over the three games, else shared. The state carries the finished
games; each next game starts from a deterministic deal (from the seed, or the
given deals).
"""
from __future__ import annotations

import copy
import functools
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine_service.rules import IllegalActionError, Kingdomino, MalformedError
from engine_service.rules.kingdomino_score import GameResult, rank
from engine_service.rules.kingdomino_setup import config, game_seed, seeded_deal

DYNASTY = {"dynasty": True}


def play(game: Kingdomino, rng: random.Random, check: bool = True) -> list[dict[str, Any]]:
    """Play random legal actions to the end; every state round-trips exactly through JSON."""
    events: list[dict[str, Any]] = []
    while not game.game_over:
        if check:
            state = game.to_dict()
            assert Kingdomino.from_dict(json.loads(json.dumps(state))).to_dict() == state
        events += game.apply(rng.choice(game.legal_actions()), player=game.to_move)
    final = game.to_dict()
    assert Kingdomino.from_dict(json.loads(json.dumps(final))).to_dict() == final
    return events


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def explicit_deals(players: int, seed: int) -> dict[str, Any]:
    cfg = config(players, {})
    games = []
    for g in range(3):
        pile, kings = seeded_deal(cfg, seed + g)
        games.append({"tiles": pile, "kings": kings})
    return {"games": games}


# ---------------------------------------------------------------- a whole dynasty

@pytest.mark.parametrize("players,options", [(2, {}), (3, {}), (4, {}), (2, {"mighty_duel": True}),
                                             (4, {"middle_kingdom": True, "harmony": True})])
def test_a_seeded_dynasty_plays_three_games_to_a_total(players: int, options: dict[str, Any]) -> None:
    game, started = Kingdomino.new(players, options={**options, **DYNASTY}, seed=2024)
    assert started[0]["type"] == "game_started" and started[0]["game"] == 1
    assert game.game_number == 1 and game.to_dict()["dynasty"] == {"games": [], "deals": []}
    events = play(game, random.Random(players))
    overs = of_type(events, "game_over")
    assert [e["game"] for e in overs] == [1, 2, 3]
    assert [e["game"] for e in of_type(events, "game_started")] == [2, 3]
    (end,) = of_type(events, "dynasty_over")
    assert events[-1] is end and events[-2] is overs[-1]
    # Each finished game's result is in the state, the last game in the fields.
    state = game.to_dict()
    results = state["dynasty"]["games"]
    assert len(results) == 2 and game.game_number == 3
    per_game = [r["scores"] for r in results] + [game.scores()]
    assert per_game == [e["scores"] for e in overs] == end["games"] == game.game_scores()
    assert end["scores"] == [sum(g[p] for g in per_game) for p in range(players)] == game.totals()["scores"]
    for key in ("largest_region", "crowns"):
        summed = [sum(e[key][p] for e in overs) for p in range(players)]
        assert end[key] == summed == game.totals()[key]
    for r, e in zip(results, overs):
        assert {k: r[k] for k in ("scores", "largest_region", "crowns", "winners", "decided_by")} == {
            k: e[k] for k in ("scores", "largest_region", "crowns", "winners", "decided_by")}
        assert all(len(log) == game.cfg.tiles // players for log in r["kingdoms"])
    winners, decided_by = rank(end["scores"], end["largest_region"], end["crowns"])
    assert end["winners"] == game.winners() == winners and end["decided_by"] == decided_by
    # Over: nothing more is accepted and nothing changes.
    with pytest.raises(IllegalActionError, match="over"):
        game.apply("pick 1")
    assert game.to_dict() == state and game.legal_actions() == [] and game.to_move is None


def test_the_first_game_is_the_single_game_of_the_same_seed_and_the_next_derive_from_it() -> None:
    single, _ = Kingdomino.new(4, seed=77)
    dynasty, _ = Kingdomino.new(4, options=DYNASTY, seed=77)
    a, b = single.to_dict(), dynasty.to_dict()
    del b["dynasty"]
    assert a == dict(b, options={})
    rng = random.Random(3)
    events: list[dict[str, Any]] = []
    while dynasty.game_number == 1:
        events = dynasty.apply(rng.choice(dynasty.legal_actions()))
    cfg = config(4, {})
    pile, kings = seeded_deal(cfg, game_seed(77, 1))
    row = sorted(pile[:4])
    assert events[-2:] == [{"type": "game_started", "players": 4, "kings": kings, "seed": 77, "game": 2},
                           {"type": "row_laid", "tiles": row}]
    assert dynasty.pile == pile[4:] and dynasty.kings == kings and dynasty.to_move == kings[0]
    assert all(k.log == [] for k in dynasty.kingdoms) and dynasty.scores() == [0, 0, 0, 0]
    assert game_seed(77, 0) == 77 and len({game_seed(77, g) for g in range(3)}) == 3


def test_the_same_seed_plays_the_same_dynasty() -> None:
    def run() -> list[Any]:
        game, events = Kingdomino.new(3, options=DYNASTY, seed=5)
        return events + play(game, random.Random(9), check=False) + [game.to_dict()]

    assert run() == run()


def test_explicit_deals_give_every_game_and_the_state_keeps_those_to_come() -> None:
    deal = explicit_deals(2, 40)
    game, events = Kingdomino.new(2, options=DYNASTY, deal=deal)
    assert game.seed is None and events[0]["kings"] == deal["games"][0]["kings"]
    assert game.to_dict()["dynasty"]["deals"] == deal["games"][1:]
    rng = random.Random(4)
    seen = [game.pile + sorted(game.next_tiles)]
    while not game.game_over:
        before = game.game_number
        game.apply(rng.choice(game.legal_actions()))
        if game.game_number != before:
            g = game.game_number - 1
            assert game.kings == deal["games"][g]["kings"]
            assert sorted(game.next_tiles) == sorted(deal["games"][g]["tiles"][:4])
            assert game.pile == deal["games"][g]["tiles"][4:]
            assert game.to_dict()["dynasty"]["deals"] == deal["games"][g + 1:]
            state = game.to_dict()
            assert Kingdomino.from_dict(state).to_dict() == state
            seen.append(game.pile)
    assert len(seen) == 3


@pytest.mark.parametrize("deal,message", [
    ({"tiles": list(range(1, 25)), "kings": [0, 0, 1, 1]}, "games"),
    ({"games": []}, "deal.games must list 3"),
    ({"games": "x"}, "deal.games must list 3"),
    ({"games": [{"tiles": list(range(1, 25)), "kings": [0, 0, 1, 1]}] * 2}, "deal.games must list 3"),
    ({"games": [{"tiles": list(range(1, 25)), "kings": [0, 0, 1, 1]},
                {"tiles": list(range(1, 24)), "kings": [0, 0, 1, 1]},
                {"tiles": list(range(1, 25)), "kings": [0, 0, 1, 1]}]}, r"deal.games\[1\].tiles"),
    ({"games": [{"tiles": list(range(1, 25)), "kings": [0, 0, 1, 1]}] * 2
      + [{"tiles": list(range(1, 25)), "kings": [0, 1, 1, 1]}]}, r"deal.games\[2\].kings"),
])
def test_bad_dynasty_deals_are_refused_naming_the_field(deal: Any, message: str) -> None:
    with pytest.raises(MalformedError, match=message):
        Kingdomino.new(2, options=DYNASTY, deal=deal)


def test_a_dynasty_may_be_played_with_the_same_deal_thrice() -> None:
    one = {"tiles": list(range(1, 25)), "kings": [0, 1, 0, 1]}
    game, _ = Kingdomino.new(2, options=DYNASTY, deal={"games": [one, one, one]})
    events = play(game, random.Random(1), check=False)
    assert len(of_type(events, "game_over")) == 3


# ---------------------------------------------------------------- the winner by the totals

def finished_dynasty(players: int = 2, seed: int = 8) -> Kingdomino:
    game, _ = Kingdomino.new(players, options=DYNASTY, seed=seed)
    play(game, random.Random(seed), check=False)
    return game


def fake(scores: list[int], largest: list[int], crowns: list[int]) -> GameResult:
    return GameResult([[] for _ in scores], scores, largest, crowns)


def test_the_total_decides_not_the_games_won() -> None:
    # A dynasty whose last game player 1 wins by 3 or more; player 0 "wins" the two before by 1.
    game = next(g for g in (finished_dynasty(2, seed) for seed in range(100)) if g.scores()[1] - g.scores()[0] >= 3)
    game.games = [fake([1, 0], [1, 1], [1, 1]), fake([1, 0], [1, 1], [1, 1])]
    assert game.totals()["scores"] == [game.scores()[0] + 2, game.scores()[1]]
    assert game.winners() == [1] and game.ranking()[1] == "score"


def test_a_tied_total_is_broken_by_the_summed_largest_regions_then_the_summed_crowns() -> None:
    game = finished_dynasty()
    s, lr, cr = game.scores(), game.largest_region(), game.crowns()
    # Totals equal; the last game favours player 1 on largest region, the sum favours player 0.
    game.games = [fake([s[1] + 5, s[0] + 5], [lr[1] + 3, lr[0]], [0, 0]), fake([0, 0], [0, 0], [0, 0])]
    assert game.totals()["scores"][0] == game.totals()["scores"][1]
    assert game.winners() == [0] and game.ranking()[1] == "largest_region"
    # Largest regions tied too: the summed crowns.
    game.games = [fake([s[1] + 5, s[0] + 5], [lr[1], lr[0]], [cr[1], cr[0] + 1]), fake([0, 0], [0, 0], [0, 0])]
    assert game.winners() == [1] and game.ranking()[1] == "crowns"
    # Equal on all three: shared.
    game.games = [fake([s[1], s[0]], [lr[1], lr[0]], [cr[1], cr[0]]), fake([0, 0], [0, 0], [0, 0])]
    assert game.winners() == [0, 1] and game.ranking()[1] == "shared"


def test_rank_names_the_deciding_key() -> None:
    assert rank([5, 9, 7], [0, 0, 0], [0, 0, 0]) == ([1], "score")
    assert rank([9, 9, 7], [3, 4, 9], [9, 0, 9]) == ([1], "largest_region")
    assert rank([9, 9, 7], [4, 4, 9], [1, 2, 9]) == ([1], "crowns")
    assert rank([9, 9, 9, 1], [4, 4, 4, 1], [2, 2, 1, 0]) == ([0, 1], "shared")


def test_the_winners_are_not_known_before_the_last_game_ends() -> None:
    game, _ = Kingdomino.new(2, options=DYNASTY, seed=3)
    rng = random.Random(3)
    while game.game_number < 3:
        game.apply(rng.choice(game.legal_actions()))
    assert not game.game_over and game.winners() == [] and game.ranking() == ([], None)


# ---------------------------------------------------------------- views

def test_the_view_shows_per_game_and_total_scores_and_hides_the_deals_to_come() -> None:
    game, _ = Kingdomino.new(2, options=DYNASTY, deal=explicit_deals(2, 12))
    rng = random.Random(2)
    while game.game_number == 1 or game.picker < 0:
        game.apply(rng.choice(game.legal_actions()))
    for _ in range(10):
        game.apply(rng.choice(game.legal_actions()))
    view = game.view(0)
    assert "pile" not in view and "seed" not in view
    d = view["dynasty"]
    assert set(d) == {"games", "game", "of", "game_scores", "totals"} and "deals" not in json.dumps(d)
    assert d["game"] == 2 and d["of"] == 3
    assert d["games"] == game.to_dict()["dynasty"]["games"]
    assert d["game_scores"] == [d["games"][0]["scores"], game.scores()] == game.game_scores()
    assert d["totals"]["scores"] == [d["games"][0]["scores"][p] + game.scores()[p] for p in range(2)]
    assert view["game_over"] is False and view["winners"] == [] and view["decided_by"] is None
    # the deals to come are nowhere in the view
    for future in game.to_dict()["dynasty"]["deals"]:
        assert json.dumps(future["tiles"]) not in json.dumps(view)
    end = finished_dynasty(3, 4).view(1)
    assert end["game_over"] is True and end["dynasty"]["game"] == 3 and end["winners"]
    assert end["decided_by"] in ("score", "largest_region", "crowns", "shared")
    assert len(end["dynasty"]["game_scores"]) == 3


def test_a_game_without_dynasty_keeps_its_state_shape() -> None:
    game, _ = Kingdomino.new(2, seed=1)
    assert "dynasty" not in game.to_dict() and "dynasty" not in game.view(0)
    assert game.game_number == 1 and game.totals()["scores"] == game.scores()


# ---------------------------------------------------------------- refusals and hostile states

def test_refusals_across_a_game_boundary_change_nothing() -> None:
    game, _ = Kingdomino.new(2, options=DYNASTY, seed=21)
    rng = random.Random(21)
    while game.game_number == 1:
        game.apply(rng.choice(game.legal_actions()))
    before = game.to_dict()
    old_tile = int(game.games[0].kingdoms[0][0].split()[1])
    for action in (f"pick {old_tile}" if old_tile not in game.next_tiles else "pick 49", "place 1 0,1 N",
                   "discard 2", "bogus"):
        with pytest.raises((IllegalActionError, MalformedError)):
            game.apply(action)
        assert game.to_dict() == before, action
    with pytest.raises(IllegalActionError, match="turn"):
        game.apply(game.legal_actions()[0], player=1 - game.kings[0])
    assert game.to_dict() == before


def dynasty_state(game_number: int, seed: int | None = 6) -> dict[str, Any]:
    if seed is None:
        game, _ = Kingdomino.new(2, options=DYNASTY, deal=explicit_deals(2, 30))
    else:
        game, _ = Kingdomino.new(2, options=DYNASTY, seed=seed)
    rng = random.Random(6)
    while game.game_number < game_number:
        game.apply(rng.choice(game.legal_actions()))
    for _ in range(7):
        game.apply(rng.choice(game.legal_actions()))
    state: dict[str, Any] = json.loads(json.dumps(game.to_dict()))
    return state


def _set(state: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    node: Any = state
    keys = [int(k) if k.isdigit() else k for k in path.split(".")]
    for k in keys[:-1]:
        node = node[k]
    if value is _DELETE:
        del node[keys[-1]]
    else:
        node[keys[-1]] = value
    return state


_DELETE = object()


@pytest.mark.parametrize("path,value,message", [
    ("dynasty", _DELETE, "missing keys"),
    ("dynasty", [], "state.dynasty must be an object"),
    ("dynasty.games", [{}] * 3, "state.dynasty.games must list"),
    ("dynasty.games.0.scores", [0, 0], r"state.dynasty.games\[0\].scores must be what the kingdoms scored"),
    ("dynasty.games.0.winners", [0, 1], r"state.dynasty.games\[0\].winners"),
    ("dynasty.games.0.decided_by", "coin", r"state.dynasty.games\[0\].decided_by"),
    ("dynasty.games.0.kingdoms.0", [], r"state.dynasty.games\[0\].kingdoms\[0\]: a finished game has 12"),
    ("dynasty.games.0.kingdoms.1.0", "place 99 0,1 N", r"state.dynasty.games\[0\].kingdoms\[1\]\[0\]"),
    ("dynasty.games.0.extra", 1, r"state.dynasty.games\[0\] must be an object"),
    ("dynasty.deals", [{"tiles": list(range(1, 25)), "kings": [0, 0, 1, 1]}], "none with a seed"),
])
def test_hostile_dynasty_states_are_refused_naming_the_field(path: str, value: Any, message: str) -> None:
    state = _set(dynasty_state(2), path, value)
    with pytest.raises(MalformedError, match=message):
        Kingdomino.from_dict(state)


def test_a_result_written_as_true_is_not_the_number_one() -> None:
    state = dynasty_state(2)
    winner = state["dynasty"]["games"][0]["winners"]
    if winner == [1]:
        state["dynasty"]["games"][0]["winners"] = [True]
        with pytest.raises(MalformedError, match="winners"):
            Kingdomino.from_dict(state)
    scores = state["dynasty"]["games"][0]["scores"]
    state["dynasty"]["games"][0]["scores"] = [float(s) for s in scores]
    with pytest.raises(MalformedError, match="scores"):
        Kingdomino.from_dict(state)


def test_a_finished_game_cannot_share_a_tile_between_kingdoms() -> None:
    state = dynasty_state(2)
    logs = state["dynasty"]["games"][0]["kingdoms"]
    logs[1] = logs[0]
    with pytest.raises(MalformedError, match="in two kingdoms"):
        Kingdomino.from_dict(state)


def test_explicit_dealt_dynasty_states_carry_exactly_the_deals_to_come() -> None:
    state = dynasty_state(2, seed=None)
    assert len(state["dynasty"]["deals"]) == 1 and Kingdomino.from_dict(state).to_dict() == state
    state["dynasty"]["deals"] = []
    with pytest.raises(MalformedError, match="state.dynasty.deals must list 1 deals"):
        Kingdomino.from_dict(state)
    state = dynasty_state(1, seed=None)
    state["dynasty"]["deals"][1]["kings"] = [0, 0, 0, 1]
    with pytest.raises(MalformedError, match=r"state.dynasty.deals\[1\].kings"):
        Kingdomino.from_dict(state)


def test_a_dynasty_cannot_rest_between_two_games() -> None:
    # The end of game 1 in the fields with no game 2 started: refused.
    game, _ = Kingdomino.new(2, seed=6)
    play(game, random.Random(6), check=False)
    state = game.to_dict()
    state["options"] = dict(DYNASTY)
    state["dynasty"] = {"games": [], "deals": []}
    with pytest.raises(MalformedError, match="next one must have been started"):
        Kingdomino.from_dict(state)


def test_a_dynasty_key_without_the_option_is_refused() -> None:
    state = Kingdomino.new(2, seed=1)[0].to_dict()
    state["dynasty"] = {"games": [], "deals": []}
    with pytest.raises(MalformedError, match="only a dynasty"):
        Kingdomino.from_dict(state)


@functools.cache
def _base_state(game_number: int, explicit: bool) -> dict[str, Any]:
    return dynasty_state(game_number, seed=None if explicit else 6)


def _junk() -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), st.booleans(), st.integers(-3, 60), st.floats(allow_nan=False), st.text(max_size=12),
                     st.lists(st.integers(-1, 50), max_size=6),
                     st.dictionaries(st.sampled_from(["tiles", "kings", "scores", "x"]), st.integers(-1, 50),
                                     max_size=3))


@settings(max_examples=200, deadline=None)
@given(game_number=st.integers(1, 3), explicit=st.booleans(), junk=_junk(), choice=st.integers(0, 10**6))
def test_hostile_dynasty_parts_only_ever_raise_malformed(game_number: int, explicit: bool, junk: Any,
                                                          choice: int) -> None:
    state = copy.deepcopy(_base_state(game_number, explicit))
    # every place inside state["dynasty"], one of them replaced by junk
    places: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
        for key, child in items:
            places.append((node, key))
            walk(child)

    walk(state["dynasty"])
    if places:
        node, key = places[choice % len(places)]
        node[key] = junk
    else:
        state["dynasty"] = junk
    try:
        decoded = Kingdomino.from_dict(state)
    except MalformedError:
        return
    assert Kingdomino.from_dict(decoded.to_dict()).to_dict() == decoded.to_dict()
