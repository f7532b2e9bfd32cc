"""The Bykovo micro-tournament (RULES.md B, option `tournament`) worked by hand at the library level.

Every expected value below is worked out from the rules text, not read off the
code: the limit by the starting count, who sits out round 1 (rating, else lot),
who plays next (those who sat out, then the worst places; tie: the higher
total, then lot), several leaving at once, the dynamics tie-break, the end at
3 or fewer, and the state round trip. Participants are indexes into the list.
"""
from __future__ import annotations

import copy
from typing import Any

import pytest

from engine_service.rules import IllegalActionError, MalformedError, Tournament

ABCD = ["Ann", "Bob", "Cid", "Dan"]
SEVEN = ["Ann", "Bob", "Cid", "Dan", "Eve", "Fay", "Gus"]


def play(t: Tournament, *rounds: tuple[list[int], int]) -> list[dict[str, Any]]:
    """Record rounds; returns the events of the last one."""
    events: list[dict[str, Any]] = []
    for points, winner in rounds:
        events = t.record_round(points, winner)
    return events


def order(t: Tournament) -> list[str]:
    return [s["participant"] for s in t.standings()]


# ---------------------------------------------------------------- creation


@pytest.mark.parametrize(("n", "limit"), [(4, 100), (5, 75), (6, 60), (7, 50)])
def test_limit_by_the_number_at_the_start(n: int, limit: int) -> None:
    t = Tournament.create(SEVEN[:n], seed=1)
    assert t.limit == limit
    assert len(t.first_sitters) == n - 4
    assert len(t.next_players()) == 4


def test_the_best_rated_sit_out_round_1() -> None:
    t = Tournament.create(SEVEN[:6], seed=1, rating=["Fay", "Cid", "Ann"])
    assert t.first_sitters == [2, 5]               # the top two of six: Cid and Fay
    assert t.next_players() == [0, 1, 3, 4]        # seats follow the tournament order


def test_without_a_rating_sitting_out_is_by_lot_from_the_seed() -> None:
    draws = {tuple(Tournament.create(SEVEN, seed=s).first_sitters) for s in range(40)}
    assert len(draws) > 1                          # the lot depends on the seed ...
    again = Tournament.create(SEVEN, seed=7)
    assert again.first_sitters == Tournament.create(SEVEN, seed=7).first_sitters  # ... reproducibly
    assert len(again.first_sitters) == 3 and sorted(again.first_sitters + again.next_players()) == list(range(7))


@pytest.mark.parametrize(("participants", "rating"), [
    (["Ann", "Bob", "Cid"], None),                 # too few
    (SEVEN + ["Hal"], None),                       # too many
    (["Ann", "Bob", "Ann", "Dan"], None),          # a name twice
    (["Ann", "", "Cid", "Dan"], None),             # an empty name
    (SEVEN[:5], ["Zed"]),                          # a rating naming a stranger
    (SEVEN[:6], ["Ann"]),                          # a rating too short for the two who sit out
    (SEVEN[:5], ["Ann", "Ann"]),                   # a rating naming someone twice
])
def test_bad_creations_are_malformed(participants: list[str], rating: list[str] | None) -> None:
    with pytest.raises(MalformedError):
        Tournament.create(participants, seed=1, rating=rating)


# ---------------------------------------------------------------- who plays next


def test_who_plays_next_sat_out_first_then_the_worst_places_ties_by_the_higher_total() -> None:
    t = Tournament.create(SEVEN, seed=3, rating=["Eve", "Fay", "Gus"])
    assert t.limit == 50 and t.first_sitters == [4, 5, 6]
    assert t.next_players() == [0, 1, 2, 3]
    # Round 1, seats Ann Bob Cid Dan: Ann wins; Bob 30, Cid 10, Dan 10 -> places 1, 4, 2, 2.
    events = t.record_round([0, 30, 10, 10], 0)
    assert events == [{"type": "tournament_round", "number": 1, "players": [0, 1, 2, 3], "places": [1, 4, 2, 2]}]
    # Eve, Fay, Gus sat out and play; the one seat left goes to the worst place: Bob (4th).
    assert t.next_players() == [1, 4, 5, 6]
    # Round 2, seats Bob Eve Fay Gus: Bob wins; Eve 5, Fay 5, Gus 20 -> 1, 2, 2, 4.
    assert t.record_round([0, 5, 5, 20], 0)[0]["places"] == [1, 2, 2, 4]
    assert t.totals == [0, 30, 10, 10, 5, 5, 20]
    # Ann, Cid, Dan sat out; the worst place of round 2 is Gus.
    assert t.next_players() == [0, 2, 3, 6]
    # Round 3, seats Ann Cid Dan Gus: Cid wins; Ann 10, Dan 10, Gus 5 -> Gus 2nd, Ann and Dan share 3rd.
    assert t.record_round([10, 0, 10, 5], 1)[0]["places"] == [3, 1, 3, 2]
    assert t.totals == [10, 30, 10, 20, 5, 5, 25]
    # Bob, Eve, Fay sat out; Ann and Dan tie for the worst place: the higher total (Dan, 20 > 10) plays.
    assert t.next_players() == [1, 3, 4, 5]


def test_a_tie_on_place_and_total_is_decided_by_lot_the_same_way_every_time() -> None:
    chosen = set()
    for seed in range(30):
        t = Tournament.create(SEVEN, seed=seed, rating=["Eve", "Fay", "Gus"])
        t.record_round([0, 10, 10, 5], 0)          # Bob and Cid: both 3rd, both 10
        nxt = t.next_players()
        assert nxt in ([1, 4, 5, 6], [2, 4, 5, 6])  # Eve, Fay, Gus and one of Bob or Cid
        assert Tournament.from_dict(t.to_dict()).next_players() == nxt
        chosen |= set(nxt) & {1, 2}
    assert chosen == {1, 2}                        # the lot goes both ways over the seeds


def test_once_four_remain_everyone_plays() -> None:
    t = Tournament.create(SEVEN[:5], seed=1, rating=["Eve"])
    t.record_round([0, 80, 10, 10], 0)             # Bob reaches 75 and is out
    assert t.remaining() == [0, 2, 3, 4] and t.next_players() == [0, 2, 3, 4]


# ---------------------------------------------------------------- leaving, the end, standings


def test_later_out_ranks_above_earlier_out_and_the_end_at_three() -> None:
    t = Tournament.create(SEVEN[:5], seed=1, rating=["Eve"])
    events = t.record_round([0, 76, 10, 10], 0)    # seats Ann Bob Cid Dan: Bob 76 >= 75
    assert events[1] == {"type": "eliminated", "participants": ["Bob"]}
    assert not t.over
    events = t.record_round([0, 80, 10, 10], 0)    # seats Ann Cid Dan Eve: Cid 90, out; 3 remain
    assert [e["type"] for e in events] == ["tournament_round", "eliminated", "tournament_over"]
    assert t.over and t.totals == [0, 76, 90, 20, 10]
    # Those still in by total (Ann 0, Eve 10, Dan 20), then Cid (out in round 2), then Bob (round 1),
    # although Bob's total is lower: leaving later ranks higher.
    assert order(t) == ["Ann", "Eve", "Dan", "Cid", "Bob"]
    assert [s["official"] for s in t.standings()] == [True, True, True, False, False]
    assert [s["out"] for s in t.standings()] == [False, False, False, True, True]
    assert events[2]["standings"] == t.standings()[:3]


def test_recording_after_the_end_is_illegal_and_changes_nothing() -> None:
    t = Tournament.create(ABCD, seed=1)
    play(t, ([0, 100, 10, 10], 0))                 # Bob out: 3 remain, over
    before = t.to_dict()
    assert t.over and before["next_players"] == []
    with pytest.raises(IllegalActionError):
        t.record_round([0, 1, 2, 3], 0)
    with pytest.raises(IllegalActionError):
        t.next_players()
    assert t.to_dict() == before


def test_several_leaving_at_once_the_lower_total_ranks_higher() -> None:
    t = Tournament.create(ABCD, seed=1)
    play(t, ([0, 40, 30, 10], 0), ([0, 65, 70, 10], 0))   # Bob 105 and Cid 100 leave together
    assert t.over and t.totals == [0, 105, 100, 20]
    assert order(t) == ["Ann", "Dan", "Cid", "Bob"]


def test_several_leaving_at_once_on_equal_totals_the_better_dynamics_ranks_higher() -> None:
    t = Tournament.create(ABCD, seed=1)
    play(t, ([0, 40, 30, 10], 0), ([0, 60, 70, 10], 0))   # Bob and Cid both reach exactly 100
    assert t.totals == [0, 100, 100, 20]
    # Walking back: after round 1 Bob had 40, Cid 30. Bob was behind then: better dynamics.
    assert order(t) == ["Ann", "Dan", "Bob", "Cid"]


def test_dynamics_walks_back_to_the_last_round_where_the_totals_differed() -> None:
    t = Tournament.create(ABCD, seed=1)
    play(t, ([0, 10, 20, 30], 0))                  # Ann 0, Bob 10, Cid 20, Dan 30
    play(t, ([20, 10, 0, 0], 2))                   # Cid wins (Dan went out too): Ann, Bob, Cid all 20
    assert t.totals == [20, 20, 20, 30]
    # Equal now; after round 1 Cid 20 > Bob 10 > Ann 0: the one behind then ranks higher.
    assert order(t) == ["Cid", "Bob", "Ann", "Dan"]
    play(t, ([5, 5, 0, 0], 2))                     # Ann 25, Bob 25, Cid 20
    # Ann and Bob were equal after round 2 too: the walk goes on back to round 1 (Bob 10 > Ann 0).
    assert order(t) == ["Cid", "Bob", "Ann", "Dan"]
    assert [s["place"] for s in t.standings()] == [1, 2, 3, 4]  # strict places, nothing official yet
    assert not any(s["official"] for s in t.standings())


# ---------------------------------------------------------------- recording and the state


@pytest.mark.parametrize(("points", "winner"), [
    ([0, 1, 2], 0),                                # not four points
    ([0, 1, 2, 3, 4], 0),
    ([0, -1, 2, 3], 0),                            # negative
    ([0, 1, 2, 201], 0),                           # over 200
    ([5, 0, 2, 3], 0),                             # the winner scores 0
    ([0, 1, 2, 3], 4),                             # a seat 0..3
    ([0, 1, 2, 3], True),                          # true is not a seat
])
def test_bad_rounds_are_malformed_and_change_nothing(points: list[int], winner: int) -> None:
    t = Tournament.create(ABCD, seed=1)
    before = t.to_dict()
    with pytest.raises(MalformedError):
        t.record_round(points, winner)
    assert t.to_dict() == before


def test_the_state_round_trips_and_replays_every_round() -> None:
    t = Tournament.create(SEVEN, seed=11)
    play(t, ([0, 30, 10, 10], 0), ([0, 5, 5, 20], 0), ([10, 0, 10, 5], 1))
    state = t.to_dict()
    again = Tournament.from_dict(copy.deepcopy(state))
    assert again.to_dict() == state
    assert again.record_round([0, 1, 2, 3], 0) == t.record_round([0, 1, 2, 3], 0)


@pytest.mark.parametrize("damage", [
    lambda s: s["rounds"][0]["totals"].__setitem__(0, 7),      # totals that do not add up
    lambda s: s["rounds"][0].__setitem__("players", [0, 1, 2, 4]),  # not who had to play
    lambda s: s["rounds"][0].__setitem__("places", [2, 2, 3, 4]),   # no winner
    lambda s: s["rounds"][1]["places"].reverse(),              # places that disagree with the points
    lambda s: s.__setitem__("first_sitters", [0]),             # 7 participants: 3 sat out
    lambda s: s.__setitem__("participants", s["participants"][:3]),
])
def test_a_tampered_state_is_malformed(damage: Any) -> None:
    t = Tournament.create(SEVEN, seed=11)
    play(t, ([0, 30, 10, 10], 0), ([0, 5, 5, 20], 0))
    state = t.to_dict()
    damage(state)
    with pytest.raises(MalformedError):
        Tournament.from_dict(state)


def test_repeated_first_sitters_are_malformed() -> None:
    state = Tournament.create(SEVEN[:6], seed=1).to_dict()
    state["first_sitters"] = [0, 0]
    with pytest.raises(MalformedError):
        Tournament.from_dict(state)


def test_a_round_after_the_end_is_a_malformed_state() -> None:
    t = Tournament.create(ABCD, seed=1)
    play(t, ([0, 100, 10, 10], 0))
    state = t.to_dict()
    state["rounds"].append(copy.deepcopy(state["rounds"][-1]))
    with pytest.raises(MalformedError):
        Tournament.from_dict(state)
