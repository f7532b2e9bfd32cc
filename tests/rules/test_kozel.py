"""Kozel, the goat (RULES.md K, seeds 001 and 003): every expected value worked out by hand."""
from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from engine_service.rules import IllegalActionError, MalformedError, Match

ALL = [f"{a}-{b}" for a in range(7) for b in range(a, 7)]


def ledger(match: Match) -> tuple[list[int], list[int], int]:
    state = match.to_dict()["ledger"]
    return state["written"], state["remembered"], state["pot"]


def last_record(match: Match) -> dict[str, Any]:
    return match.to_dict()["ledger"]["history"][-1]


def play(match: Match, actions: list[str]) -> None:
    for action in actions:
        match.apply(action)


# ---------------------------------------------------------------- worked examples (seed 001)

def test_worked_example_remembered_points_when_masha_goes_out() -> None:
    # K worked example: Masha out with 19 remembered -> 0; Alex 0 -> +3 remembered;
    # Olya +7 remembered scores 13 -> 20 written; Serg +4 remembered scores 5 -> +9.
    match, _ = Match.new("kozel", 4, setup={"remembered": [19, 0, 7, 4]}, no_deal=True)
    match.settle("out", [[], ["1-2"], ["6-6", "0-1"], ["2-3"]])
    record = last_record(match)
    assert record["round_points"] == [0, 3, 13, 5]
    assert record["ending"] == "out" and record["winner"] == 0
    assert ledger(match) == ([0, 0, 20, 0], [0, 3, 0, 9], 0)
    assert not match.match_over


def test_worked_example_fish_on_one() -> None:
    # K max_takes_all: 2, 3, 13 (Olya, +7 remembered), 5 -> Olya writes 23 + 7 = 30,
    # the others' remembered points are cleared.
    match, _ = Match.new("kozel", 4, options={"fish_scoring": "max_takes_all"},
                         setup={"remembered": [0, 4, 7, 0]}, no_deal=True)
    match.settle("blocked", [["0-2"], ["0-3"], ["6-6", "0-1"], ["1-4"]])
    assert last_record(match)["round_points"] == [2, 3, 13, 5]
    assert last_record(match)["ending"] == "fish"
    assert ledger(match) == ([0, 0, 30, 0], [0, 0, 0, 0], 0)


def test_worked_example_tie_feeds_the_pot_then_the_next_highest_takes_it() -> None:
    # K: a tie 14 / 14 in a fish totalling 35 -> nobody scores, pot +35; the next round's
    # highest seat adds it "however that round ends" (here: an out round, 20 + 35 = 55).
    match, _ = Match.new("kozel", 4, options={"fish_scoring": "max_takes_all"}, no_deal=True)
    match.settle("blocked", [["0-3"], ["6-6", "0-2"], ["5-6", "1-2"], ["0-4"]])
    assert last_record(match)["round_points"] == [3, 14, 14, 4]
    assert ledger(match) == ([0, 0, 0, 0], [0, 0, 0, 0], 35)
    match.settle("out", [[], ["1-2"], ["5-6", "4-5"], ["0-5"]])
    assert last_record(match)["round_points"] == [0, 3, 20, 5]
    assert ledger(match) == ([0, 0, 55, 0], [0, 3, 0, 5], 0)


def test_worked_example_rating_25_gives_8() -> None:
    # K Rating: (100 - 25) / 10 = 7.5 -> 8.
    match, _ = Match.new("kozel", 2, setup={"written": [25, 100]}, no_deal=True)
    match.settle("out", [[], ["0-1"]])
    assert match.match_over and match.losers == [1]
    assert match.rating == [8, 0]


def test_worked_example_timeout_at_32() -> None:
    # K Rating: Alex times out at 32 and gains 0; Masha at 30: 0.2 -> 1; Olya at 13: 1.9 -> 2.
    match, _ = Match.new("kozel", 3, setup={"written": [30, 32, 13]}, no_deal=True)
    match.timeout(1)
    assert match.match_over
    assert match.rating == [1, 0, 2]


# ---------------------------------------------------------------- rating

def _half_up(x: Fraction) -> int:
    return int((x + Fraction(1, 2)).__floor__())


@pytest.mark.parametrize("score", [0, 1, 4, 5, 14, 15, 25, 44, 45, 46, 55, 85, 94, 95, 96, 99, 100])
def test_rating_of_a_seat_that_did_not_lose(score: int) -> None:
    # K Rating: max(1, round_half_up((100 - score) / 10)), written points only.
    expected = max(1, _half_up(Fraction(100 - score, 10)))
    match, _ = Match.new("kozel", 3, setup={"written": [score, 100, 0], "remembered": [0, 0, 12]},
                         no_deal=True)
    match.settle("out", [[], ["0-2"], ["1-1"]])
    assert match.losers == [1]
    assert match.rating == [expected, 0, 10]


@pytest.mark.parametrize("timed_out,own,expected", [
    (32, 30, 1), (32, 13, 2), (32, 32, 1), (32, 60, 1), (50, 5, 5), (50, 0, 5), (55, 0, 6),
    (35, 10, 3), (35, 20, 2), (100, 0, 10), (0, 0, 1),
])
def test_rating_after_a_timeout(timed_out: int, own: int, expected: int) -> None:
    # K Rating: the seat that timed out gains 0; the others max(1, round((its score - own) / 10)).
    match, _ = Match.new("kozel", 2, setup={"written": [own, timed_out]}, no_deal=True)
    before_losers = match.losers
    match.timeout(1)
    assert before_losers == []
    assert match.match_over
    assert match.rating == [expected, 0]


def test_a_timeout_needs_a_seat_and_a_match_still_running() -> None:
    match, _ = Match.new("kozel", 3, no_deal=True)
    for bad in (3, -1, "1", None):
        with pytest.raises(MalformedError):
            match.timeout(bad)  # type: ignore[arg-type]
    match.timeout(0)
    before = match.to_dict()
    with pytest.raises(IllegalActionError):
        match.timeout(1)
    assert match.to_dict() == before


def test_rating_formula_with_another_target() -> None:
    # K Rating is max(1, round((100 - score) / 10)) as the source writes it, whatever the target:
    # with target=50 a seat at 40 gains (100 - 40) / 10 = 6 (not (49 - 40) / 10 -> 1).
    match, _ = Match.new("kozel", 2, options={"target": 50}, setup={"written": [40, 45]},
                         no_deal=True)
    match.settle("out", [[], ["0-5"]])
    assert match.losers == [1]
    assert match.rating == [6, 0]


# ---------------------------------------------------------------- the goat

def test_several_seats_crossing_101_all_lose() -> None:
    # K Decision: several seats crossing in one round all lose.
    match, _ = Match.new("kozel", 4, setup={"written": [95, 99, 50, 0]}, no_deal=True)
    match.settle("out", [["6-6"], ["1-2"], ["0-1"], []])
    assert ledger(match)[0] == [107, 102, 51, 0]
    assert match.match_over
    assert match.losers == [0, 1]
    assert match.rating == [0, 0, 5, 10]


def test_an_unopened_seat_with_many_remembered_points_is_no_goat() -> None:
    # K: the match ends on *written* points reaching 101.
    match, _ = Match.new("kozel", 2, setup={"remembered": [0, 100]}, no_deal=True)
    match.settle("out", [[], ["0-6"]])
    assert ledger(match) == ([0, 0], [0, 106], 0)
    assert not match.match_over


def test_match_over_stops_play() -> None:
    # K: a played fish on one (116 to seat 3) ends the match; nothing can be played after it.
    match, _ = Match.new("kozel", 4, options={"fish_scoring": "max_takes_all"}, deal={"hands": A})
    play(match, A_LINE)
    assert match.match_over and match.losers == [3]
    before = match.to_dict()
    assert match.legal_actions() == []
    for call in (lambda: match.apply("2-2@E"), lambda: match.apply("pass"),
                 lambda: match.start_round({"hands": A}), lambda: match.start_round(),
                 lambda: match.settle("out", [[], ["0-1"], ["0-2"], ["0-3"]]),
                 lambda: match.timeout(1)):
        with pytest.raises(IllegalActionError):
            call()
    assert match.to_dict() == before


def test_match_over_by_goat_stops_play() -> None:
    match, _ = Match.new("kozel", 2, setup={"written": [100, 0]}, seed=11, no_deal=True)
    match.settle("out", [["0-1"], []])
    assert match.match_over and match.losers == [0]
    before = match.to_dict()
    for call in (lambda: match.start_round(), lambda: match.apply("0-1"),
                 lambda: match.settle("out", [[], ["0-1"]]), lambda: match.timeout(0)):
        with pytest.raises(IllegalActionError):
            call()
    assert match.to_dict() == before


# ---------------------------------------------------------------- first lead

# K: 1-1, then 2-2 ... 6-6, then 0-0; with no double, 5-6, 4-6, 3-6, 2-6, 1-6, 0-6, 4-5, 3-5, ...
KOZEL_ORDER = ["1-1", "2-2", "3-3", "4-4", "5-5", "6-6", "0-0",
               "5-6", "4-6", "3-6", "2-6", "1-6", "0-6", "4-5", "3-5", "2-5", "1-5", "0-5",
               "3-4", "2-4", "1-4", "0-4", "2-3", "1-3", "0-3", "1-2", "0-2", "0-1"]
# K classic: the highest double 6-6 ... 0-0, then the same descending non-doubles.
CLASSIC_ORDER = ["6-6", "5-5", "4-4", "3-3", "2-2", "1-1", "0-0"] + KOZEL_ORDER[7:]


def _deal_led_by(order: list[str], k: int, leader: int) -> dict[str, Any]:
    """Two hands holding only tiles after order[k] plus order[k] itself (at `leader`)."""
    later = order[k + 1:]
    others = later[:13]
    hands: list[list[str]] = [[], []]
    hands[leader].append(order[k])
    for i, t in enumerate(others):               # alternate, so no hand collects 5 doubles
        hands[(leader + 1 + i) % 2].append(t)
    boneyard = [t for t in ALL if t not in hands[0] + hands[1]]
    return {"hands": hands, "boneyard": boneyard}


@pytest.mark.parametrize("variant,order", [("kozel", KOZEL_ORDER), ("kozel-classic", CLASSIC_ORDER)])
@pytest.mark.parametrize("k", range(15))
def test_first_lead_follows_the_order(variant: str, order: list[str], k: int) -> None:
    leader = k % 2
    deal = _deal_led_by(order, k, leader)
    options = {"misdeal": "none"} if variant == "kozel" else {}
    match, _ = Match.new(variant, 2, options=options, deal=deal)
    assert match.to_move == leader
    assert match.legal_actions() == [order[k]]
    for other in deal["hands"][leader]:
        if other != order[k]:
            with pytest.raises(IllegalActionError):
                match.apply(other)


def test_four_players_always_lead_1_1_in_kozel_and_6_6_in_classic() -> None:
    for seed in range(40):
        match, _ = Match.new("kozel", 4, seed=seed)
        hands = match.to_dict()["round"]["hands"]
        assert "1-1" in hands[match.to_move]
        assert match.legal_actions() == ["1-1"]
        classic, _ = Match.new("kozel-classic", 4, options={"hand_size": "seven"}, seed=seed)
        hands = classic.to_dict()["round"]["hands"]
        assert classic.legal_actions() == ["6-6"] and "6-6" in hands[classic.to_move]


# ---------------------------------------------------------------- a 4-player deal and the seed's fish

A = [["1-1", "0-2", "1-4", "0-0", "0-1", "0-3", "0-4"],
     ["1-2", "2-3", "2-4", "0-5", "1-3", "1-5", "1-6"],
     ["2-6", "3-5", "2-2", "3-3", "3-4", "3-6", "4-4"],
     ["0-6", "2-5", "4-5", "4-6", "5-5", "5-6", "6-6"]]
A_LINE = ["1-1", "1-2@E", "2-6@E", "6-0@E", "0-2@E", "2-3@E", "3-5@E", "5-2@E", "1-4@W", "4-2@W"]


def test_seed_fish_example_with_the_double_in_a_hand() -> None:
    # K fish detection (seed 001): 1-2, 2-6, 0-2, 2-3 on the table, the line ending with 2-4
    # on one side and 5-2 on the other is a fish "even if 2-2 ... were in someone's hand".
    match, _ = Match.new("kozel", 4, deal={"hands": A})
    play(match, A_LINE[:-1])
    assert not match.round.over
    match.apply("4-2@W")
    assert match.round.over
    state = match.to_dict()
    assert state["round"]["ends"] == {"W": 2, "E": 2}
    assert "2-2" in state["round"]["hands"][2]
    record = last_record(match)
    assert record["ending"] == "fish" and record["winner"] is None
    assert record["last_placer"] == 1
    assert record["round_points"] == [8, 22, 34, 52]
    assert ledger(match) == ([0, 22, 34, 52], [8, 0, 0, 0], 0)


# 3 players, 2-2 in the boneyard this time (the seed: "on the bazaar or in a hand").
B3 = [["1-1", "0-6", "3-5", "2-4", "0-0", "0-1", "0-3"],
      ["1-2", "0-2", "2-5", "1-3", "1-5", "1-6", "0-4"],
      ["2-6", "2-3", "1-4", "3-3", "3-4", "3-6", "4-4"]]
B3_BONE = ["2-2", "0-5", "4-5", "4-6", "5-5", "5-6", "6-6"]
B3_LINE = ["1-1", "1-2@E", "2-6@E", "6-0@E", "0-2@E", "2-3@E", "3-5@E", "5-2@E", "1-4@W", "4-2@W"]


def test_seed_fish_example_with_the_double_in_the_boneyard() -> None:
    match, _ = Match.new("kozel", 3, deal={"hands": B3, "boneyard": B3_BONE})
    play(match, B3_LINE)
    assert match.round.over
    assert match.to_dict()["round"]["boneyard"] == B3_BONE      # nobody drew
    record = last_record(match)
    assert record["ending"] == "fish" and record["last_placer"] == 0
    assert record["round_points"] == [4, 21, 30]
    assert ledger(match) == ([0, 21, 30], [4, 0, 0], 0)
    # K: the fisherman leads the next round, with any tile.
    match.start_round({"hands": B3, "boneyard": B3_BONE})
    assert match.to_move == 0
    assert sorted(match.legal_actions()) == sorted(B3[0])


def test_without_the_option_the_double_is_drawn_and_played() -> None:
    # fish_without_double=false: not a fish; seat 1 cannot play, draws 2-2 first and must play it.
    match, _ = Match.new("kozel", 3, options={"fish_without_double": False},
                         deal={"hands": B3, "boneyard": B3_BONE})
    play(match, B3_LINE)
    assert not match.round.over
    assert match.to_move == 1 and match.legal_actions() == ["draw"]
    match.apply("draw")
    assert sorted(match.legal_actions()) == ["2-2@E", "2-2@W"]
    with pytest.raises(IllegalActionError):
        match.apply("draw")
    match.apply("2-2@W")
    # All seven 2s are out but five tiles are still to draw: seat 2 draws them all, the
    # round ends blocked after the last draw (C "Blocked"), seat 1 is the fisherman.
    for left in (6, 5, 4, 3, 2):
        assert match.to_move == 2 and match.legal_actions() == ["draw"]
        assert len(match.to_dict()["round"]["boneyard"]) == left
        match.apply("draw")
    assert not match.round.over
    assert match.legal_actions() == ["draw"]
    match.apply("draw")
    assert match.round.over
    record = last_record(match)
    assert record["ending"] == "fish" and record["last_placer"] == 1
    # seat 2 keeps 3-3 3-4 3-6 4-4 (30) plus 0-5 4-5 4-6 5-5 5-6 6-6 (57)
    assert record["round_points"] == [4, 21, 87]


def test_kozel_classic_has_no_exhausted_number_fish() -> None:
    # K table: kozel-classic's fish is "blocked" only (here with kozel's lead and hand size).
    match, _ = Match.new("kozel-classic", 3, options={"hand_size": "seven", "lead": "one-one-up"},
                         deal={"hands": B3, "boneyard": B3_BONE})
    play(match, B3_LINE)
    assert not match.round.over
    assert match.to_move == 1 and match.legal_actions() == ["draw"]


def test_kozel_classic_leads_its_highest_double_with_this_deal() -> None:
    match, _ = Match.new("kozel-classic", 3, options={"hand_size": "seven"},
                         deal={"hands": B3, "boneyard": B3_BONE})
    # 6-6 and 5-5 are in the boneyard, so 4-4 (seat 2)
    assert match.to_move == 2 and match.legal_actions() == ["4-4"]


def test_fish_needs_both_ends_equal() -> None:
    # All six non-double 2s on the table is not enough while the ends differ.
    match, _ = Match.new("kozel", 4, deal={"hands": A})
    line = ["1-1", "1-2@E", "2-6@E", "6-0@E", "0-2@E", "2-3@E", "3-5@E", "5-2@E", "1-4@W"]
    play(match, line)
    assert match.to_dict()["round"]["ends"] == {"W": 4, "E": 2}
    assert not match.round.over


# ---------------------------------------------------------------- later rounds

def test_the_seat_that_went_out_leads_any_tile() -> None:
    match, _ = Match.new("kozel", 4, no_deal=True)
    match.settle("out", [["0-1"], ["1-2"], [], ["2-3"]])
    match.start_round({"hands": A})
    assert match.to_move == 2
    assert sorted(match.legal_actions()) == sorted(A[2])
    with pytest.raises(IllegalActionError):
        match.apply("1-1")
    match.apply("6-2")                        # high first: 6 faces W
    assert match.to_dict()["round"]["ends"] == {"W": 6, "E": 2}
    assert match.to_move == 3


def test_a_played_out_round_gives_the_lead_to_the_winner() -> None:
    for seed in range(60):
        match, _ = Match.new("kozel", 3, seed=seed)
        while not match.round.over:
            match.apply(match.legal_actions()[-1])
        record = last_record(match)
        if match.match_over:
            continue
        expected = record["winner"] if record["ending"] == "out" else record["last_placer"]
        match.start_round()
        assert match.to_move == expected
        hand = match.to_dict()["round"]["hands"][expected]
        assert sorted(match.legal_actions()) == sorted(hand)


# ---------------------------------------------------------------- 0-0

@pytest.mark.parametrize("variant,options,hand,points", [
    ("kozel", {}, ["0-0"], 10),
    ("kozel", {}, ["0-0", "0-1"], 1),
    ("kozel", {}, ["0-0", "6-6"], 12),
    ("kozel-classic", {}, ["0-0"], 25),
    ("kozel-classic", {}, ["0-0", "1-2"], 28),
    ("kozel", {"zero_double": "plain"}, ["0-0"], 0),
    ("kozel", {"zero_double": "twenty-five"}, ["0-0", "0-1"], 26),
    ("kozel-classic", {"zero_double": "lone-ten"}, ["0-0"], 10),
    ("kozel-classic", {"zero_double": "lone-ten"}, ["0-0", "1-2"], 3),
])
def test_zero_zero_in_hand(variant: str, options: dict, hand: list[str], points: int) -> None:
    # K table: kozel 0-0 counts 10 when it is the only tile left, otherwise 0; classic 25.
    match, _ = Match.new(variant, 2, options=options, no_deal=True)
    match.settle("out", [[], hand])
    assert last_record(match)["round_points"] == [0, points]


# ---------------------------------------------------------------- draws and passes

C = [["1-1", "0-1", "1-2", "1-3", "1-4", "5-5", "6-6"],
     ["0-0", "2-2", "3-3", "4-4", "0-2", "0-3", "5-6"]]
C_BONE = ["0-4", "0-5", "0-6", "2-3", "2-4", "2-5", "2-6", "3-4", "3-5", "3-6", "4-5", "4-6", "1-5", "1-6"]


def test_draw_one_tile_at_a_time_until_one_fits() -> None:
    # C "Must play": a seat that holds no playable tile draws one at a time until it holds one.
    match, _ = Match.new("kozel", 2, deal={"hands": C, "boneyard": C_BONE})
    match.apply("1-1")
    for drawn in range(13):
        assert match.to_move == 1
        assert match.legal_actions() == ["draw"]
        with pytest.raises(IllegalActionError):
            match.apply("pass")
        events = match.apply("draw")
        assert events == [{"type": "drew", "seat": 1, "tile": C_BONE[drawn]}]
    assert sorted(match.legal_actions()) == ["1-5@E", "1-5@W"]
    with pytest.raises(IllegalActionError):
        match.apply("draw")
    assert match.to_dict()["round"]["boneyard"] == ["1-6"]


def test_with_nothing_to_draw_a_seat_that_cannot_play_passes() -> None:
    match, _ = Match.new("kozel", 2, deal={"hands": C, "boneyard": C_BONE})
    play(match, ["1-1"] + ["draw"] * 13 + [
        "1-5@E", "5-5@E", "5-6@E", "6-6@E", "6-0@E", "1-2@W", "2-2@W", "0-1@E", "2-4@W", "1-3@E",
        "4-5@W"])
    assert match.to_move == 0 and match.legal_actions() == ["draw"]
    match.apply("draw")                       # 1-6, which fits neither 5 nor 3
    assert match.legal_actions() == ["pass"]
    with pytest.raises(IllegalActionError):
        match.apply("draw")
    match.apply("pass")
    assert match.to_move == 1 and not match.round.over
    play(match, ["3-4@E", "1-4@E", "2-5@W", "1-6@E"])
    record = last_record(match)
    assert record["ending"] == "out" and record["winner"] == 0
    assert record["round_points"] == [0, 68]


# ---------------------------------------------------------------- double pair (kozel-classic)

D = [["6-6", "2-6", "0-5", "2-4", "1-3", "0-0", "3-4"],
     ["5-6", "2-2", "5-5", "0-1", "3-5", "4-5", "3-6"]]


def test_classic_two_doubles_at_once_one_on_each_end() -> None:
    # K table, kozel-classic: "one, or two doubles at once when one fits each of the two ends".
    match, _ = Match.new("kozel-classic", 2, deal={"hands": D})
    play(match, ["6-6", "6-5@E", "6-2@W"])
    assert match.to_dict()["round"]["ends"] == {"W": 2, "E": 5}
    assert "5-5@E+2-2@W" in match.legal_actions()
    before = match.to_dict()
    for bad in ("2-2@E+5-5@W", "2-2@W+3-5@E", "2-2@W+5-5@W", "5-5@E+2-2@W+1-1@N"):
        with pytest.raises((IllegalActionError, MalformedError)):
            match.apply(bad)
    assert match.to_dict() == before
    events = match.apply("2-2@W+5-5@E")        # any order of the parts
    assert events[0] == {"type": "played", "seat": 1, "action": "5-5@E+2-2@W"}
    state = match.to_dict()["round"]
    assert state["ends"] == {"W": 2, "E": 5}
    assert [len(h) for h in state["hands"]] == [5, 4]
    assert state["layout"][-2:] in (["5-5@E", "2-2@W"], ["2-2@W", "5-5@E"])
    assert match.to_move == 0


def _points_classic(hand: list[str]) -> int:
    return sum(int(t[0]) + int(t[2]) for t in hand) + (25 if "0-0" in hand else 0)


def test_two_doubles_at_once_can_go_out() -> None:
    # Find played kozel-classic rounds where a seat empties its hand with a double pair.
    found = 0
    for seed in range(3000):
        match, _ = Match.new("kozel-classic", 2, seed=seed)
        while not match.round.over:
            legal = match.legal_actions()
            pairs = [a for a in legal if "+" in a]
            action = pairs[0] if pairs else legal[-1]
            seat = match.to_move
            hand = match.to_dict()["round"]["hands"][seat]
            match.apply(action)
            if pairs and len(hand) == 2:
                found += 1
                assert match.round.over
                record = last_record(match)
                assert (record["ending"], record["winner"]) == ("out", seat)
                other = match.to_dict()["round"]["hands"][1 - seat]
                assert record["round_points"][1 - seat] == _points_classic(other)
                assert record["round_points"][seat] == 0
        if found >= 3:
            break
    assert found >= 3


def test_kozel_refuses_two_doubles_at_once() -> None:
    match, _ = Match.new("kozel", 2, options={"lead": "highest-double"}, deal={"hands": D})
    play(match, ["6-6", "6-5@E", "6-2@W"])
    assert sorted(match.legal_actions()) == ["2-2@W", "3-5@E", "4-5@E", "5-5@E"]
    with pytest.raises(IllegalActionError):
        match.apply("5-5@E+2-2@W")


# ---------------------------------------------------------------- scoring details

def test_going_out_after_opening_keeps_the_written_score() -> None:
    match, _ = Match.new("kozel", 3, setup={"written": [30, 0, 0], "remembered": [0, 9, 0]},
                         no_deal=True)
    match.settle("out", [[], ["0-1"], ["0-2"]])
    assert ledger(match) == ([30, 0, 0], [0, 10, 2], 0)
    match.settle("out", [["0-3"], [], ["1-1"]])
    assert ledger(match) == ([33, 0, 0], [0, 0, 4], 0)


def test_the_score_table_records_every_round() -> None:
    # C "Score table": how each round ended, who went out or fished, points, written,
    # remembered, pot after it.
    match, _ = Match.new("kozel", 4, options={"fish_scoring": "max_takes_all"}, deal={"hands": A})
    play(match, A_LINE)
    table = match.to_dict()["ledger"]["history"]
    assert len(table) == 1
    first = table[0]
    assert first["number"] == 1
    assert (first["ending"], first["winner"], first["last_placer"]) == ("fish", None, 1)
    assert first["round_points"] == [8, 22, 34, 52]
    assert first["written"] == [0, 0, 0, 116]
    assert first["remembered"] == [0, 0, 0, 0]
    assert first["pot"] == 0
    assert match.match_over is True and match.losers == [3]


def test_a_settled_fish_with_its_fisherman_gives_him_the_lead() -> None:
    # K later rounds: the fisherman leads with any tile (settle names him as last_placer).
    match, _ = Match.new("kozel", 4, no_deal=True)
    match.settle("blocked", [["0-1"], ["1-2"], ["2-3"], ["3-4"]], last_placer=2)
    assert last_record(match)["last_placer"] == 2
    match.start_round({"hands": A})
    assert match.to_move == 2
    assert sorted(match.legal_actions()) == sorted(A[2])


def test_a_deal_cannot_choose_the_kozel_leader() -> None:
    # FORMAT "deal": `leader` only where the rules decide the lead by lot; K decides by 1-1.
    match, _ = Match.new("kozel", 4, deal={"hands": A, "leader": 3})
    assert match.to_move == 0 and match.legal_actions() == ["1-1"]


def test_a_bare_tile_after_the_lead_is_told_where_it_goes_or_that_it_fits_no_end() -> None:
    """Issue 28: "2-6" once got "name an arm" even when 2-6 fitted no end at all."""
    match, _ = Match.new("kozel", 4, seed=42)
    match.apply("1-1")
    assert match.to_move == 0 and sorted(match.view(0)["hand"]) == ["0-4", "1-4", "1-5", "2-3", "2-4", "3-4", "4-4"]
    before = match.to_dict()
    for action, said in (("2-3", "'2-3': 2-3 fits no open end (they show E 1, W 1)"),
                         ("1-4", "'1-4': the round is already led; name the arm: '1-4@E' or '1-4@W'"),
                         ("4-1", "'4-1': the round is already led; name the arm: '1-4@E' or '1-4@W'"),
                         ("6-6", "'6-6': seat 0 does not hold 6-6")):
        with pytest.raises(IllegalActionError) as refused:
            match.apply(action)
        assert str(refused.value) == said
    assert match.to_dict() == before
