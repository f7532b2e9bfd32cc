"""Deals (RULES.md C "Deal", "Boneyard"; K "misdeal")."""
from __future__ import annotations

import pytest

from engine_service.rules import IllegalActionError, MalformedError, Match, MisdealError
from engine_service.rules.deal import (
    deal_with_redeals,
    derive_seed,
    explicit_deal,
    random_deal,
    shuffled,
)
from engine_service.rules.family import misdeal_rule
from engine_service.rules.tiles import ALL_TILES, names, parse_hand

ALL = [f"{a}-{b}" for a in range(7) for b in range(a, 7)]


def _is_kozel_misdeal(hands: list[list[str]]) -> bool:
    """K: a hand with >= 5 doubles, or >= 6 tiles sharing one number (written from RULES.md)."""
    for hand in hands:
        halves = [tuple(int(x) for x in tile.split("-")) for tile in hand]
        if sum(a == b for a, b in halves) >= 5:
            return True
        for v in range(7):
            if sum(v in (a, b) for a, b in halves) >= 6:
                return True
    return False


def test_shuffle_is_a_permutation_fixed_by_the_seed() -> None:
    for seed in (0, 1, 42, 2**64 - 1):
        order = shuffled(28, seed)
        assert sorted(order) == list(range(28))
        assert shuffled(28, seed) == order
    assert shuffled(28, 1) != shuffled(28, 2)


@pytest.mark.parametrize("players,hand_size", [(2, 7), (3, 7), (4, 7), (3, 5), (4, 5)])
def test_random_deal_is_reproducible_and_conserves_the_set(players: int, hand_size: int) -> None:
    hands, boneyard = random_deal(players, hand_size, 1234)
    assert (hands, boneyard) == random_deal(players, hand_size, 1234)
    assert [h.bit_count() for h in hands] == [hand_size] * players
    assert len(boneyard) == 28 - players * hand_size
    union = 0
    for h in hands:
        assert union & h == 0
        union |= h
    for tile in boneyard:
        assert not union >> tile & 1
        union |= 1 << tile
    assert union == ALL_TILES


@pytest.mark.parametrize("variant,players", [("kozel", 2), ("kozel", 3), ("kozel", 4),
                                              ("kozel-classic", 2), ("kozel-classic", 4)])
def test_same_seed_same_deal_and_same_next_deal(variant: str, players: int) -> None:
    a, _ = Match.new(variant, players, seed=987654321)
    b, _ = Match.new(variant, players, seed=987654321)
    assert a.to_dict() == b.to_dict()
    c, _ = Match.new(variant, players, seed=987654322)
    assert c.to_dict()["round"]["hands"] != a.to_dict()["round"]["hands"]
    # Rounds after the first are dealt from the same match seed too, and differ from the first.
    first = a.to_dict()["round"]["hands"]
    for m in (a, b):
        while not m.round.over:
            m.apply(m.legal_actions()[-1])
        if not m.match_over:
            m.start_round()
    assert a.to_dict() == b.to_dict()
    assert a.to_dict()["round"]["hands"] != first


def test_explicit_deal_keeps_hands_and_boneyard_order() -> None:
    hands_in = [ALL[0:7], ALL[7:14]]
    boneyard_in = list(reversed(ALL[14:]))
    hands, boneyard = explicit_deal(2, 7, hands_in, boneyard_in, exact=True)
    assert [names(h) for h in hands] == hands_in
    assert [ALL[t] for t in boneyard] == boneyard_in


def test_explicit_deal_without_boneyard_takes_the_rest_ascending() -> None:
    # FORMAT "deal": omitted boneyard = the remaining tiles in ascending order.
    hands_in = [["6-6", "0-1", "2-3", "1-5", "0-6", "3-3", "2-4"],
                ["5-5", "4-6", "0-0", "1-2", "3-6", "0-4", "2-2"]]
    _, boneyard = explicit_deal(2, 7, hands_in, None, exact=True)
    dealt = set(hands_in[0] + hands_in[1])
    assert [ALL[t] for t in boneyard] == [x for x in ALL if x not in dealt]


def test_explicit_deal_reaches_the_match_in_draw_order() -> None:
    hands_in = [["1-1", "0-2", "1-4", "0-0", "0-1", "0-3", "0-4"],
                ["1-2", "2-3", "2-4", "0-5", "1-3", "1-5", "1-6"]]
    rest = [x for x in ALL if x not in hands_in[0] + hands_in[1]]
    order = rest[7:] + rest[:7]
    match, _ = Match.new("kozel", 2, deal={"hands": hands_in, "boneyard": order})
    state = match.to_dict()["round"]
    assert state["hands"] == [sorted(h, key=ALL.index) for h in hands_in]
    assert state["boneyard"] == order


@pytest.mark.parametrize("hands,boneyard,what", [
    ([ALL[0:7], ALL[6:13]], None, "twice"),                          # 0-6 in both hands
    ([ALL[0:7], ALL[7:14]], ALL[14:] + ["0-0"], "twice"),             # boneyard repeats a hand's tile
    ([ALL[0:7], ALL[7:14]], ALL[15:], "missing"),                     # one tile nowhere
    ([ALL[0:7], ALL[7:14]], ALL[14:] + ALL[14:15], "twice"),          # boneyard repeats itself
    ([ALL[0:7] + ["0-0"], ALL[7:14]], None, "twice"),                 # a hand repeats itself
    ([ALL[0:7]], None, "hands"),                                      # one hand for two seats
    ([ALL[0:7], ALL[7:14], ALL[14:21]], None, "hands"),               # three hands
    ([ALL[0:6], ALL[7:14]], None, "holds 6"),                         # short hand
    ([ALL[0:8], ALL[8:15]], None, "holds 8"),                         # long hand
    ([ALL[0:7], ALL[7:13] + ["7-7"]], None, "tile"),                  # not a tile
    ("0-0", None, "hands"),
    ([ALL[0:7], ALL[7:14]], "0-0", "boneyard"),
])
def test_explicit_deal_refuses_bad_deals_as_malformed(hands: object, boneyard: object, what: str) -> None:
    with pytest.raises(MalformedError, match=what):
        explicit_deal(2, 7, hands, boneyard, exact=True)
    with pytest.raises(MalformedError):
        Match.new("kozel", 2, deal={"hands": hands, "boneyard": boneyard} if boneyard is not None
                  else {"hands": hands})


def test_a_deal_with_unknown_keys_is_malformed() -> None:
    with pytest.raises(MalformedError):
        Match.new("kozel", 2, deal={"hands": [ALL[0:7], ALL[7:14]], "cards": []})
    with pytest.raises(MalformedError):
        Match.new("kozel", 2, deal=["not", "an", "object"])  # type: ignore[arg-type]


# ---------------------------------------------------------------- K misdeal

FIVE_DOUBLES = ["0-0", "1-1", "2-2", "3-3", "4-4", "0-1", "2-5"]
FOUR_DOUBLES = ["0-0", "1-1", "2-2", "3-3", "0-1", "2-5", "4-6"]
SIX_OF_A_NUMBER = ["0-3", "1-3", "2-3", "3-4", "3-5", "3-6", "1-2"]        # six 3s, no double
SIX_WITH_THE_DOUBLE = ["3-3", "1-3", "2-3", "3-4", "3-5", "3-6", "1-2"]    # the double counts
FIVE_OF_A_NUMBER = ["0-3", "1-3", "2-3", "3-4", "3-5", "1-2", "0-6"]


def _deal_with(hand: list[str], players: int = 2) -> dict:
    rest = [x for x in ALL if x not in hand]
    return {"hands": [hand] + [rest[7 * i:7 * (i + 1)] for i in range(players - 1)]}


@pytest.mark.parametrize("hand,misdeal", [
    (FIVE_DOUBLES, True), (FOUR_DOUBLES, False), (SIX_OF_A_NUMBER, True),
    (SIX_WITH_THE_DOUBLE, True), (FIVE_OF_A_NUMBER, False),
])
def test_kozel_misdeal_rule(hand: list[str], misdeal: bool) -> None:
    # K: a hand with >= 5 doubles, or >= 6 tiles sharing one number, is a misdeal.
    deal = _deal_with(hand)
    assert _is_kozel_misdeal(deal["hands"]) == misdeal
    masks = [parse_hand(h) for h in deal["hands"]]
    assert misdeal_rule("five-doubles-or-six-of-a-number", masks) == misdeal
    if misdeal:
        with pytest.raises(MisdealError):
            Match.new("kozel", 2, deal=deal)
    else:
        match, _ = Match.new("kozel", 2, deal=deal)
        assert names(match.round.hands[0]) == sorted(hand, key=ALL.index)


def test_misdeal_error_is_an_illegal_action_not_malformed() -> None:
    assert issubclass(MisdealError, IllegalActionError)
    assert not issubclass(MisdealError, MalformedError)


def test_misdeal_option_values() -> None:
    five = [parse_hand(h) for h in _deal_with(FIVE_DOUBLES)["hands"]]
    six = [parse_hand(h) for h in _deal_with(SIX_OF_A_NUMBER)["hands"]]
    assert misdeal_rule("none", five) is False
    assert misdeal_rule("five-doubles", five) is True
    assert misdeal_rule("five-doubles", six) is False
    assert misdeal_rule("five-doubles-or-six-of-a-number", six) is True
    # kozel-classic has no misdeal; kozel with misdeal=none accepts the same deal.
    Match.new("kozel-classic", 2, deal=_deal_with(FIVE_DOUBLES))
    Match.new("kozel", 2, options={"misdeal": "none"}, deal=_deal_with(SIX_OF_A_NUMBER))
    Match.new("kozel", 2, options={"misdeal": "five-doubles"}, deal=_deal_with(SIX_OF_A_NUMBER))
    with pytest.raises(MisdealError):
        Match.new("kozel", 2, options={"misdeal": "five-doubles"}, deal=_deal_with(FIVE_DOUBLES))


def test_a_refused_misdeal_of_a_later_round_leaves_the_match_unchanged() -> None:
    match, _ = Match.new("kozel", 2, no_deal=True)
    match.settle("out", [[], ["6-6", "5-5"]])
    before = match.to_dict()
    with pytest.raises(MisdealError):
        match.start_round(_deal_with(FIVE_DOUBLES))
    assert match.to_dict() == before
    match.start_round(_deal_with(FOUR_DOUBLES))
    assert match.round is not None


def _first_seed_with_a_random_misdeal(players: int) -> int:
    for seed in range(100000):
        round_seed = derive_seed(seed, 1)
        hands, _ = random_deal(players, 7, derive_seed(round_seed, 0))
        if _is_kozel_misdeal([names(h) for h in hands]):
            return seed
    raise AssertionError("no misdeal found")  # pragma: no cover


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_random_misdeal_is_dealt_again_deterministically(players: int) -> None:
    # C "Deal": a random deal that is a misdeal is dealt again, deterministically from the seed.
    seed = _first_seed_with_a_random_misdeal(players)
    match, events = Match.new("kozel", players, seed=seed)
    assert events[0]["redealt"] is True
    hands = match.to_dict()["round"]["hands"]
    assert not _is_kozel_misdeal(hands)
    again, _ = Match.new("kozel", players, seed=seed)
    assert again.to_dict() == match.to_dict()
    # The redeal is the first deal of the seed's sequence that is not a misdeal.
    round_seed = derive_seed(seed, 1)
    got, boneyard, attempts = deal_with_redeals(
        players, 7, round_seed, lambda hs: _is_kozel_misdeal([names(h) for h in hs]))
    assert attempts >= 1
    assert [names(h) for h in got] == hands
    assert [ALL[t] for t in boneyard] == match.to_dict()["round"]["boneyard"]
    # kozel-classic has no misdeal: the same seed keeps the first deal.
    _, events = Match.new("kozel-classic", 2, seed=seed)
    assert events[0]["redealt"] is False


def test_random_deals_of_many_seeds_are_never_misdeals() -> None:
    for seed in range(300):
        for players in (2, 3, 4):
            match, _ = Match.new("kozel", players, seed=seed)
            assert not _is_kozel_misdeal(match.to_dict()["round"]["hands"])
