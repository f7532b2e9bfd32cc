"""Match state in, state out: to_dict/from_dict, hostile states, refusals that change nothing."""
from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable
from typing import Any

import pytest

from engine_service.rules import IllegalActionError, MalformedError, Match, RulesError, variants

# A 4-player Kozel deal (no boneyard): seat 0 holds 1-1 and leads it (K first lead).
HANDS = [["0-0", "0-1", "0-2", "0-3", "0-4", "1-1", "1-4"],
         ["0-5", "1-2", "1-3", "1-5", "1-6", "2-3", "2-4"],
         ["2-2", "2-6", "3-3", "3-4", "3-5", "3-6", "4-4"],
         ["0-6", "2-5", "4-5", "4-6", "5-5", "5-6", "6-6"]]
# The seed's fish (RULES.md K fish detection), ending with 4-2 on W.
FISH_LINE = ["1-1", "1-2@E", "2-6@E", "6-0@E", "0-2@E", "2-3@E", "3-5@E", "5-2@E", "1-4@W", "4-2@W"]


def _json(state: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(state))


def _states() -> list[tuple[str, Match]]:
    out: list[tuple[str, Match]] = []
    m, _ = Match.new("kozel", 4, no_deal=True)
    out.append(("no round yet", m))
    m, _ = Match.new("kozel", 4, setup={"written": [10, 20, 0, 0], "remembered": [0, 0, 5, 7], "pot": 3},
                     no_deal=True)
    out.append(("setup", m))
    m, _ = Match.new("kozel", 4, deal={"hands": HANDS})
    out.append(("dealt", m.copy()))
    for i, action in enumerate(FISH_LINE):
        m.apply(action)
        out.append((f"after {i + 1} actions", m.copy()))
    m.start_round({"hands": HANDS})
    out.append(("second round, not led", m.copy()))
    m, _ = Match.new("kozel", 2, seed=77)
    while not m.round.over:
        m.apply(m.legal_actions()[0])
        out.append((f"2 players seed 77, {len(out)}", m.copy()))
    m, _ = Match.new("kozel-classic", 3, options={"fish_scoring": "max_takes_all"}, seed=5)
    out.append(("classic 3 players", m.copy()))
    m, _ = Match.new("kozel", 3, setup={"written": [30, 32, 13]}, no_deal=True)
    m.timeout(1)
    out.append(("timed out", m))
    m, _ = Match.new("kozel", 4, setup={"written": [95, 99, 0, 0]}, no_deal=True)
    m.settle("out", [[], ["6-6"], ["0-1"], ["1-2"]])
    out.append(("match over", m))
    return out


STATES = _states()


@pytest.mark.parametrize("name,match", STATES, ids=[s[0] for s in STATES])
def test_to_dict_from_dict_round_trip_is_exact(name: str, match: Match) -> None:
    state = match.to_dict()
    assert _json(state) == state                        # plain JSON
    again = Match.from_dict(_json(state))
    assert again.to_dict() == state
    assert again.legal_actions() == match.legal_actions()
    assert Match.from_dict(copy.deepcopy(state)).to_dict() == state


def test_a_copy_is_independent() -> None:
    match, _ = Match.new("kozel", 4, deal={"hands": HANDS})
    other = match.copy()
    other.apply("1-1")
    assert match.to_dict()["round"]["layout"] == []
    assert other.to_dict()["round"]["layout"] == ["1-1"]


def _mid_round() -> dict[str, Any]:
    match, _ = Match.new("kozel", 4, deal={"hands": HANDS})
    for action in FISH_LINE[:4]:
        match.apply(action)
    return match.to_dict()


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    keys = path.split(".")

    def change(state: dict[str, Any]) -> None:
        target: Any = state
        for k in keys[:-1]:
            target = target[int(k)] if isinstance(target, list) else target[k]
        last = keys[-1]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
    return change


def _move_tile(src: str, dst: str) -> Callable[[dict[str, Any]], None]:
    def change(state: dict[str, Any]) -> None:
        r = state["round"]
        tile = r["hands"][int(src)][0]
        if dst == "layout":
            r["layout"].append(tile)
        else:
            r["hands"][int(dst)].append(tile)
    return change


HOSTILE: list[tuple[str, Callable[[dict[str, Any]], None]]] = [
    ("tile in two hands", _move_tile("0", "1")),
    ("tile twice in one hand", lambda s: s["round"]["hands"][2].append(s["round"]["hands"][2][0])),
    ("tile in a hand and on the table", lambda s: s["round"]["hands"][3].append("1-1")),
    ("tile in the layout twice", lambda s: s["round"]["layout"].append("1-1@W")),
    ("missing tile", lambda s: s["round"]["hands"][2].pop()),
    ("extra boneyard tile", lambda s: s["round"]["boneyard"].append("2-2")),
    ("not a tile", lambda s: s["round"]["hands"][0].append("7-7")),
    ("tile that does not fit", lambda s: s["round"]["layout"].__setitem__(1, "3-4@E")),
    ("arm N on a line", lambda s: s["round"]["layout"].__setitem__(1, "1-2@N")),
    ("layout not led by a bare tile", lambda s: s["round"]["layout"].__setitem__(0, "1-1@E")),
    ("second lead", lambda s: s["round"]["layout"].__setitem__(1, "1-2")),
    ("layout entry not a string", lambda s: s["round"]["layout"].__setitem__(1, 12)),
    ("layout not a list", _set("round.layout", "1-1")),
    ("to_move out of range", _set("round.to_move", 4)),
    ("to_move negative", _set("round.to_move", -1)),
    ("to_move a bool", _set("round.to_move", True)),
    ("to_move a string", _set("round.to_move", "0")),
    ("leader out of range", _set("round.leader", 9)),
    ("next_leader out of range", _set("next_leader", 4)),
    ("last_placer out of range", _set("round.last_placer", 17)),
    ("out names a seat with tiles", _set("round.out", [0])),
    ("losers out of range", _set("losers", [5])),
    ("timed_out out of range", _set("timed_out", -2)),
    ("three hands for four seats", lambda s: s["round"]["hands"].pop()),
    ("five hands for four seats", lambda s: s["round"]["hands"].append([])),
    ("written of three seats", _set("ledger.written", [0, 0, 0])),
    ("remembered of five seats", _set("ledger.remembered", [0, 0, 0, 0, 0])),
    ("written not integers", _set("ledger.written", ["1", 0, 0, 0])),
    ("negative pot", _set("ledger.pot", -1)),
    ("pot a string", _set("ledger.pot", "5")),
    ("rating of two seats", _set("rating", [1, 2])),
    ("round_points of three seats", _set("round.round_points", [1, 2, 3])),
    ("hand not a list", _set("round.hands.0", "0-0")),
    ("hands not a list", _set("round.hands", {"0": []})),
    ("boneyard not a list", _set("round.boneyard", "0-0")),
    ("round not an object", _set("round", ["hands"])),
    ("ledger not an object", _set("ledger", [0])),
    ("history not a list", _set("ledger.history", {"0": {}})),
    ("history entry not an object", _set("ledger.history", [3])),
    ("history entry with a bad ending", _set("ledger.history", [{"ending": "goat"}])),
    ("unknown variant", _set("variant", "chess")),
    ("no variant", lambda s: s.pop("variant")),
    ("players out of range", _set("players", 5)),
    ("players a string", _set("players", "4")),
    ("no players", lambda s: s.pop("players")),
    ("unknown option", _set("options", {"spinner": "none"})),
    ("bad option value", _set("options", {"fish_scoring": "own"})),
    ("negative seed", _set("seed", -1)),
    ("seed too large", _set("seed", 2**64)),
    ("seed a string", _set("seed", "42")),
    ("negative round number", _set("round_number", -1)),
    ("match_over a string", _set("match_over", "no")),
    ("over a string", _set("round.over", "false")),
    ("over without an ending", _set("round.over", True)),
    ("ending without over", _set("round.ending", "fish")),
    ("unknown ending", _set("round.ending", "goat")),
    ("huge integer", _set("round.passes", 10**30)),
    ("negative passes", _set("round.passes", -3)),
    ("log not a list", _set("log", "new")),
    ("log entry of two lines", lambda s: s["log"].append("pass\npass")),
    ("log entry empty", lambda s: s["log"].append("")),
    ("log entry not a string", lambda s: s["log"].append(3)),
]


@pytest.mark.parametrize("name,change", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_state_is_malformed(name: str, change: Callable[[dict[str, Any]], None]) -> None:
    state = _mid_round()
    Match.from_dict(copy.deepcopy(state))         # the untouched state is fine
    change(state)
    with pytest.raises(MalformedError):
        Match.from_dict(state)


@pytest.mark.parametrize("value", [None, [], "state", 42, 3.5, True, ["variant", "kozel"]])
def test_a_state_that_is_not_an_object_is_malformed(value: Any) -> None:
    with pytest.raises(MalformedError):
        Match.from_dict(value)


def test_a_round_not_led_whose_leader_breaks_the_lead_rule_is_malformed() -> None:
    match, _ = Match.new("kozel", 4, deal={"hands": HANDS})
    state = match.to_dict()
    state["round"]["leader"] = 2          # K: the holder of 1-1 (seat 0) leads the first round
    state["round"]["to_move"] = 2
    with pytest.raises(MalformedError):
        Match.from_dict(state)


def test_a_round_not_led_must_be_moved_by_its_leader() -> None:
    # Otherwise the seat to move would have no legal action at all: a dead state.
    match, _ = Match.new("kozel", 4, deal={"hands": HANDS})
    state = match.to_dict()
    state["round"]["to_move"] = 3
    with pytest.raises(MalformedError):
        Match.from_dict(state)


# ---------------------------------------------------------------- refusals change nothing

def _refusals() -> list[tuple[str, Callable[[Match], Any], type[RulesError]]]:
    return [
        ("malformed action", lambda m: m.apply("1-2@X"), MalformedError),
        ("non-string action", lambda m: m.apply(12), MalformedError),  # type: ignore[arg-type]
        ("tile not held", lambda m: m.apply("6-6@E"), IllegalActionError),
        ("tile that does not fit", lambda m: m.apply("4-5@E"), IllegalActionError),
        ("arm of another layout", lambda m: m.apply("0-5@N"), IllegalActionError),
        ("a second lead", lambda m: m.apply("1-2"), IllegalActionError),
        ("draw while able to play", lambda m: m.apply("draw"), IllegalActionError),
        ("pass while able to play", lambda m: m.apply("pass"), IllegalActionError),
        ("two tiles at once", lambda m: m.apply("1-2@E+1-5@W"), MalformedError),
        ("two doubles without double_pair", lambda m: m.apply("2-2@E+3-3@W"), IllegalActionError),
        ("the wrong seat", lambda m: m.apply("1-2@E", seat=2), IllegalActionError),
        ("a seat out of range", lambda m: m.apply("1-2@E", seat=9), IllegalActionError),
        ("a seat that is not an integer", lambda m: m.apply("1-2@E", seat="1"), MalformedError),
        ("a seat that is a boolean", lambda m: m.apply("1-2@E", seat=True), MalformedError),
        ("a deal during the round", lambda m: m.start_round({"hands": HANDS}), IllegalActionError),
        ("a settle during the round", lambda m: m.settle("out", [[], ["1-2"], ["2-2"], ["3-3"]]),
         IllegalActionError),
        ("a timeout of no seat", lambda m: m.timeout(4), MalformedError),
    ]


@pytest.mark.parametrize("name,call,error", _refusals(), ids=[r[0] for r in _refusals()])
def test_a_refused_call_leaves_the_match_unchanged(name: str, call: Callable[[Match], Any],
                                                   error: type[RulesError]) -> None:
    match, _ = Match.new("kozel", 4, deal={"hands": HANDS})
    match.apply("1-1")            # seat 1 to move, holding 0-5 1-2 1-3 1-5 1-6 2-3 2-4
    before = match.to_dict()
    with pytest.raises(error):
        call(match)
    assert match.to_dict() == before
    match.apply("1-2@E")          # and the match still plays on
    assert match.to_move == 2


def test_after_the_round_every_action_is_refused_and_the_state_is_unchanged() -> None:
    match, _ = Match.new("kozel", 4, deal={"hands": HANDS})
    for action in FISH_LINE:
        match.apply(action)
    assert match.round.over
    before = match.to_dict()
    for action in ("2-2@E", "2-2@W", "draw", "pass", "3-3"):
        with pytest.raises(IllegalActionError):
            match.apply(action)
    assert match.legal_actions() == []
    assert match.to_dict() == before


def test_no_action_before_a_deal() -> None:
    match, _ = Match.new("kozel", 4, no_deal=True)
    before = match.to_dict()
    with pytest.raises(IllegalActionError):
        match.apply("1-1")
    assert match.legal_actions() == []
    assert match.to_dict() == before


def test_a_match_without_a_seed_needs_explicit_deals() -> None:
    match, _ = Match.new("kozel", 4, deal={"hands": HANDS})
    for action in FISH_LINE:
        match.apply(action)
    with pytest.raises(IllegalActionError):
        match.start_round()
    match.start_round({"hands": HANDS})


@pytest.mark.parametrize("setup", [
    {"written": [0, 0, 0]}, {"remembered": "0"}, {"pot": -1}, {"goats": 1}, ["written"],
])
def test_bad_setup_is_malformed(setup: Any) -> None:
    with pytest.raises(MalformedError):
        Match.new("kozel", 4, setup=setup, no_deal=True)


@pytest.mark.parametrize("seed", [-1, 2**64, "1", 1.5, True])
def test_bad_seed_is_malformed(seed: Any) -> None:
    with pytest.raises(MalformedError):
        Match.new("kozel", 4, seed=seed)


@pytest.mark.parametrize("ending,hands", [
    ("fish", [[], ["1-2"], ["2-2"], ["3-3"]]),              # only out or blocked
    ("out", [["0-1"], ["1-2"], ["2-2"], ["3-3"]]),          # nobody went out
    ("out", [[], [], ["2-2"], ["3-3"]]),                    # two seats out in Kozel
    ("blocked", [[], ["1-2"], ["2-2"], ["3-3"]]),           # blocked with an empty hand
    ("out", [[], ["1-2"], ["1-2"], ["3-3"]]),               # a tile twice
    ("out", [[], ["1-2"], ["2-2"]]),                        # three hands for four seats
    ("out", [[], ["1-9"], ["2-2"], ["3-3"]]),               # not a tile
])
def test_bad_settle_is_malformed_and_changes_nothing(ending: str, hands: Any) -> None:
    match, _ = Match.new("kozel", 4, no_deal=True)
    before = match.to_dict()
    with pytest.raises(MalformedError):
        match.settle(ending, hands)
    assert match.to_dict() == before


# ---------------------------------------------------------------- hostile states the decoder accepts

def _empty_a_hand_mid_round(state: dict[str, Any]) -> None:
    hands = state["round"]["hands"]
    hands[2] += hands[3]
    hands[3] = []


@pytest.mark.parametrize("name,change", [
    pytest.param("history record with a seat out of range", _set("ledger.history", [
        {"number": 1, "ending": "out", "winner": 9, "last_placer": None, "round_points": [0, 1, 2, 3],
         "written": [0, 0, 0, 0], "remembered": [0, 1, 2, 3], "pot": 0, "scores": [0, 0, 0, 0],
         "places": [], "out": [9]}])),
    pytest.param("history record lists of the wrong length", _set("ledger.history", [
        {"number": 1, "ending": "out", "winner": 0, "last_placer": None, "round_points": [0, 1, 2],
         "written": [0, 0], "remembered": [0, 1, 2, 3, 4], "pot": 0, "scores": [], "places": [],
         "out": [0]}])),
    pytest.param("negative written points", _set("ledger.written", [-50, 0, 0, 0])),
    pytest.param("negative remembered points", _set("ledger.remembered", [0, -5, 0, 0])),
    pytest.param("a seat with an empty hand while the round is played", _empty_a_hand_mid_round),
])
def test_impossible_states_are_malformed(name: str, change: Callable[[dict[str, Any]], None]) -> None:
    state = _mid_round()
    change(state)
    with pytest.raises(MalformedError):
        Match.from_dict(state)


# ---------------------------------------------------------------- one place for the score (issue 16)

@pytest.mark.parametrize("variant,players", [(v["name"], p) for v in variants() for p in (2, 4)
                                             if v["min_players"] <= p <= v["max_players"] and v["family"] != "KD"])
def test_ledger_scores_is_the_score_in_every_variant(variant: str, players: int) -> None:
    """An app draws a score table from `ledger.scores` alone: in Kozel and Osel it is the written points."""
    rng = random.Random(5)
    match, _ = Match.new(variant, players, seed=11)
    for _ in range(4):
        while match.round is not None and not match.round.over:
            match.apply(rng.choice(match.legal_actions()))
        ledger = match.to_dict()["ledger"]
        if match.family.score_is_written:
            assert ledger["scores"] == ledger["written"]
        else:
            assert ledger["written"] == [0] * len(ledger["scores"])
        assert all(row["scores"] == (row["written"] if match.family.score_is_written else row["scores"])
                   for row in ledger["history"])
        assert match.view(0)["ledger"]["scores"] == ledger["scores"]
        if match.match_over:
            break
        match.start_round()


def test_kozel_scores_follow_the_written_points_through_setup_and_decoding() -> None:
    match, _ = Match.new("kozel", 4, seed=3, setup={"written": [12, 0, 30, 0], "remembered": [0, 5, 0, 0]})
    assert match.ledger.scores == [12, 0, 30, 0]
    data = match.to_dict()
    legacy = {**data, "ledger": {**data["ledger"], "scores": [0, 0, 0, 0]}}  # a state from before the mirror
    assert Match.from_dict(legacy).ledger.scores == [12, 0, 30, 0]
    with pytest.raises(MalformedError, match=r"state.ledger.scores must equal state.ledger.written"):
        Match.from_dict({**data, "ledger": {**data["ledger"], "scores": [1, 0, 30, 0]}})
    with pytest.raises(MalformedError, match="setup.scores: in kozel the score is the written points"):
        Match.new("kozel", 4, seed=3, setup={"scores": [5, 0, 0, 0]})


@pytest.mark.parametrize("path", [(), ("round",), ("ledger",), ("ledger", "history", 0)])
def test_an_unknown_key_anywhere_in_a_state_is_refused_naming_where(path: tuple[Any, ...]) -> None:
    """A misspelled key (`"sead"`) would otherwise be dropped without a word; the OpenAPI schema
    refuses it too (additionalProperties: false)."""
    match, _ = Match.new("kozel", 4, seed=3)
    while match.round is not None and not match.round.over:
        match.apply(match.legal_actions()[0])
    match.start_round()
    state = match.to_dict()
    part: Any = state
    for key in path:
        part = part[key]
    part["sead"] = 1
    where = ".".join(["state", *(f"{k}" for k in path)]).replace(".history.0", ".history[0]")
    with pytest.raises(MalformedError, match=re.escape(f"{where}: unknown keys ['sead']")):
        Match.from_dict(state)
