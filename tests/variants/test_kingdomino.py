"""Kingdomino (RULES.md KD): tiles, placement, scoring, tie-breaks, options, deals, states, views.

Expected values are worked out by hand from RULES.md KD; the scenario files in
tests/scenarios_kingdomino/ play whole games, these check the pieces.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from engine_service.rules import IllegalActionError, Kingdomino, MalformedError, Match, variants
from engine_service.rules.kingdomino_board import DIRECTION_INDEX, Kingdom, geometry
from engine_service.rules.kingdomino_notation import KingdominoMove
from engine_service.rules.kingdomino_setup import seeded_deal
from engine_service.rules.kingdomino_tiles import TERRAINS, TILES, parse_tiles, read_data

#: sha256 of the tile list the project was given (shared/kingdomino-tiles.csv, the publisher's 48 tiles).
GIVEN_CSV_SHA256 = "cc61ce293ca4c669e58ac10d2568ad0d6f34d2f52240e607835b558bc5a2a7a9"


def kingdom(*placements: str, size: int = 5) -> Kingdom:
    """A kingdom with these ``T x,y D`` placements put down as given (no rule checked)."""
    k = Kingdom(geometry(size))
    for p in placements:
        tile, xy, d = p.split()
        x, y = (int(v) for v in xy.split(","))
        k.place(int(tile), x, y, DIRECTION_INDEX[d])
    return k


# ---------------------------------------------------------------- the tiles

def test_the_48_tiles_are_read_from_the_packaged_csv() -> None:
    assert len(TILES) == 48
    assert [t.number for t in TILES] == list(range(1, 49))
    assert sum(t.crowns1 + t.crowns2 for t in TILES) == 39
    squares = {name: 0 for name in TERRAINS}
    for t in TILES:
        squares[TERRAINS[t.terrain1]] += 1
        squares[TERRAINS[t.terrain2]] += 1
    assert squares == {"wheat": 26, "forest": 22, "lake": 18, "grassland": 14, "swamp": 10, "mine": 6}
    t48 = TILES[47]
    assert (TERRAINS[t48.terrain1], t48.crowns1, TERRAINS[t48.terrain2], t48.crowns2) == ("wheat", 0, "mine", 3)
    t17 = TILES[16]
    assert (TERRAINS[t17.terrain1], TERRAINS[t17.terrain2]) == ("forest", "lake")


def test_the_packaged_csv_is_the_given_one() -> None:
    assert hashlib.sha256(read_data().encode("utf-8")).hexdigest() == GIVEN_CSV_SHA256


@pytest.mark.parametrize("text,message", [
    ("n,a,b,c,d\n", "header"),
    ("number,terrain_1,crowns_1,terrain_2,crowns_2\n1,wheat,0,wheat,0\n", "1 tiles"),
    ("number,terrain_1,crowns_1,terrain_2,crowns_2\n2,wheat,0,wheat,0\n", "out of order"),
    ("number,terrain_1,crowns_1,terrain_2,crowns_2\n1,desert,0,wheat,0\n", "unknown terrain"),
    ("number,terrain_1,crowns_1,terrain_2,crowns_2\n1,wheat,x,wheat,0\n", "integers"),
    ("number,terrain_1,crowns_1,terrain_2,crowns_2\n1,wheat,4,wheat,0\n", "crowns"),
])
def test_a_broken_tiles_file_is_refused(text: str, message: str) -> None:
    with pytest.raises(MalformedError, match=message):
        parse_tiles(text)


# ---------------------------------------------------------------- placement

def test_a_first_tile_has_24_placements_around_the_castle_in_both_sizes() -> None:
    for size in (5, 7):
        for tile in (1, 17, 48):
            placements = Kingdom(geometry(size)).placements(tile)
            assert len(placements) == len(set(placements)) == 24
            assert f"place {tile} 1,0 E" in placements and f"place {tile} 2,0 W" in placements
            assert f"place {tile} 1,1 E" not in placements       # diagonal to the castle


def test_adjacency_needs_the_same_terrain_or_the_castle() -> None:
    k = kingdom("17 1,0 E")             # forest 1,0, lake 2,0
    assert k.can_place(7, 3, 0, DIRECTION_INDEX["E"])       # lake beside lake
    assert not k.can_place(10, 3, 0, DIRECTION_INDEX["E"])  # grass beside lake
    assert k.can_place(18, 1, 1, DIRECTION_INDEX["N"])      # forest 1,1 on forest 1,0
    assert not k.can_place(18, 2, 1, DIRECTION_INDEX["W"])  # grass 1,1 on forest, forest 2,1 on lake
    assert k.can_place(10, 0, 1, DIRECTION_INDEX["N"])      # the castle takes any terrain
    assert "neither square touches" in k.why_not(10, 3, 0, DIRECTION_INDEX["E"])


def test_either_square_may_make_the_contact() -> None:
    k = kingdom("17 1,0 E")                                  # lake at 2,0
    # 14 wheat|lake: wheat 3,1 touches nothing, its lake 3,0 (south) touches lake 2,0
    assert k.can_place(14, 3, 1, DIRECTION_INDEX["S"])
    # the same squares the other way round put wheat next to the lake: refused
    assert not k.can_place(14, 3, 0, DIRECTION_INDEX["N"])


def test_no_overlap_with_the_castle_or_a_placed_square() -> None:
    k = kingdom("3 1,0 E")
    N, E, W = DIRECTION_INDEX["N"], DIRECTION_INDEX["E"], DIRECTION_INDEX["W"]
    assert not k.can_place(4, 0, 0, E)
    assert not k.can_place(4, -1, 0, E)
    assert not k.can_place(4, 2, 0, N)
    assert not k.can_place(4, 2, 0, W)
    assert "overlaps" in k.why_not(4, 2, 0, N)
    assert k.can_place(4, 1, 1, E)


def test_the_5x5_box_includes_the_castle() -> None:
    k = kingdom("3 1,0 E", "4 3,0 E")    # forest x 1..4: with the castle x 0..4
    N, E, S, W = (DIRECTION_INDEX[d] for d in "NESW")
    assert not k.can_place(5, 5, 0, E)   # x 0..6
    assert not k.can_place(5, -1, 0, N)  # x -1..4
    assert not k.can_place(5, 9, 0, E)   # off the field altogether
    assert k.can_place(5, 4, 1, N)
    assert "wider than 5x5" in k.why_not(5, -1, 0, N)
    # forest x 1..4 on y 0, then x 4 on y 1..4: the box is x 0..4, y 0..4
    k = kingdom("6 1,0 E", "5 3,0 E", "3 4,1 N", "4 4,3 N")
    assert k.placements(10) == ["place 10 0,1 N", "place 10 0,1 E", "place 10 0,2 S", "place 10 1,1 W"]
    assert not k.can_place(10, 0, -1, S) and not k.can_place(10, -1, 0, W)


def test_the_7x7_box_of_the_mighty_duel() -> None:
    E, S, W = DIRECTION_INDEX["E"], DIRECTION_INDEX["S"], DIRECTION_INDEX["W"]
    k = kingdom("3 1,0 E", "4 3,0 E", size=7)
    assert k.can_place(5, 5, 0, E)       # x 0..6
    assert not k.can_place(5, 7, 0, E)   # x 0..8
    k = kingdom("3 1,0 E", "4 3,0 E", "5 5,0 E", size=7)
    assert not k.can_place(6, -1, 0, W)  # x -2..6
    assert "wider than 7x7" in k.why_not(6, -1, 0, W)
    k = kingdom("6 1,0 E", "5 3,0 E", "3 4,1 N", "4 4,3 N", size=7)
    assert k.can_place(10, 0, -1, S)     # y -2..4 is 7 tall


def test_fits_is_false_only_when_no_placement_exists() -> None:
    # castle surrounded by wheat N/S and forest E/W
    k = kingdom("1 0,1 N", "2 0,-1 S", "5 1,0 E", "6 -1,0 W")
    assert not k.fits(46) and k.placements(46) == [] and k.count_placements(46) == 0
    assert k.fits(13) and k.count_placements(13) == len(k.placements(13)) > 0


# ---------------------------------------------------------------- scoring

def test_seed_001_worked_example_scores_62() -> None:
    """Seed 001's review: "большой лес — 6*2=12 очков, море — 10*5=50 очков, поля и маленькие
    леса — 0 очков": 62. A kingdom with exactly those regions (7x7 room for the shape)."""
    k = kingdom("7 -2,2 E", "8 0,2 E", "14 3,2 W", "30 -2,3 N", "31 -1,3 N", "32 0,3 N", "33 1,3 N",
                "34 2,3 N", "24 3,4 S", "25 4,4 S", "17 5,4 S", "3 -2,-1 E", size=7)
    regions = sorted((TERRAINS[t], squares, crowns) for t, squares, crowns in k.regions())
    assert regions == [("forest", 2, 0), ("forest", 6, 2), ("lake", 1, 0), ("lake", 10, 5),
                       ("wheat", 2, 0), ("wheat", 3, 0)]
    assert k.region_score() == 62
    assert k.largest_region() == 10
    assert k.crowns() == 7


def test_regions_are_orthogonal_and_per_terrain() -> None:
    # wheat* 1,1 is north of wheat 1,0: one region of 3 squares with 1 crown
    k = kingdom("1 1,0 E", "19 1,1 E")
    assert k.region_score() == 3 * 1
    # a corner does not join two squares
    k = kingdom("20 1,1 E", "21 2,2 E")   # wheat* 1,1 and wheat* 2,2 touch only at a corner
    assert sorted(s for t, s, c in k.regions() if TERRAINS[t] == "wheat") == [1, 1]
    assert k.region_score() == 1 + 1
    # regions of different terrains never merge; the castle joins nothing
    k = kingdom("23 1,0 E", "45 -1,0 W")  # wheat*|mine at 1,0/2,0 and mine**|wheat at -1,0/-2,0
    assert sorted((TERRAINS[t], s, c) for t, s, c in k.regions()) == [
        ("mine", 1, 0), ("mine", 1, 2), ("wheat", 1, 0), ("wheat", 1, 1)]
    assert k.region_score() == 1 + 2


def test_an_empty_kingdom_scores_nothing() -> None:
    k = Kingdom(geometry(5))
    assert (k.region_score(), k.largest_region(), k.crowns(), k.centred()) == (0, 0, 0, True)


# ---------------------------------------------------------------- tie-breaks and bonuses

def finished(*kingdoms: Kingdom, options: dict[str, Any] | None = None) -> Kingdomino:
    """A game whose play is over, with these kingdoms (a white-box shortcut for the end rules)."""
    game, _ = Kingdomino.new(len(kingdoms), options=options, seed=1)
    game.pile, game.current_tiles, game.current_kings, game.next_tiles, game.next_kings = [], [], [], [], []
    game.picker = -1
    game.kingdoms = list(kingdoms)
    assert game.game_over and game.to_move is None and game.legal_actions() == []
    return game


FOUR_BY_ONE = ("1 1,0 E", "19 1,1 E", "13 1,-1 E")        # wheat 4 squares, 1 crown: 4
TWO_BY_TWO = ("20 1,0 E", "21 1,1 E")                     # wheat 2 squares, 2 crowns: 4
FOREST_FOUR = ("3 -1,0 W", "4 -1,1 W")                    # forest 4 squares, no crown


def test_tie_the_larger_single_region_wins() -> None:
    game = finished(kingdom(*FOUR_BY_ONE), kingdom(*TWO_BY_TWO))
    assert game.scores() == [4, 4]
    assert game.largest_region() == [4, 2]
    assert game.crowns() == [1, 2]               # more crowns, but the region comes first
    assert game.winners() == [0]


def test_tie_then_more_crowns_win() -> None:
    game = finished(kingdom(*FOUR_BY_ONE), kingdom(*TWO_BY_TWO, *FOREST_FOUR))
    assert (game.scores(), game.largest_region(), game.crowns()) == ([4, 4], [4, 4], [1, 2])
    assert game.winners() == [1]


def test_tie_on_everything_is_shared() -> None:
    game = finished(kingdom(*FOUR_BY_ONE), kingdom(*TWO_BY_TWO), kingdom(*FOUR_BY_ONE))
    assert game.winners() == [0, 2]


def test_the_best_score_wins_before_any_tie_break() -> None:
    game = finished(kingdom("48 1,0 E"), kingdom(*TWO_BY_TWO, *FOREST_FOUR))   # mine***: 3 vs 4
    assert game.scores() == [3, 4] and game.winners() == [1]


def test_middle_kingdom_and_harmony_count_at_the_end_only() -> None:
    centred = kingdom("3 -1,0 W", "4 1,0 E")     # forest x -2..2: the castle at the centre
    off = kingdom("48 1,0 E")                   # x 0..2: not centred, 3 points
    discarded = kingdom("3 -1,0 W", "4 1,0 E")
    discarded.discard(46)
    game = finished(centred, off, discarded, options={"middle_kingdom": True})
    assert game.scores() == [10, 3, 10]
    game = finished(centred, off, discarded, options={"harmony": True})
    assert game.scores() == [5, 8, 0]
    game = finished(centred, off, discarded, options={"harmony": True, "middle_kingdom": True})
    assert game.scores() == [15, 8, 10] and game.winners() == [0]
    assert finished(centred, off, discarded).scores() == [0, 3, 0]
    # before the end the bonuses are not counted
    live, _ = Kingdomino.new(3, options={"harmony": True, "middle_kingdom": True}, seed=5)
    assert live.scores() == [0, 0, 0] and live.winners() == []


def test_centred_means_the_box_is_symmetric_about_the_castle() -> None:
    assert kingdom("3 -1,0 W", "4 1,0 E", "7 0,1 N", "8 0,-1 S").centred()
    assert not kingdom("3 -1,0 W", "4 1,0 E", "7 0,1 N").centred()            # y 0..2
    assert not kingdom("3 1,0 E").centred()


# ---------------------------------------------------------------- the preset and its options

def test_variants_lists_kingdomino_with_its_options() -> None:
    (kd,) = [v for v in variants() if v["name"] == "kingdomino"]
    assert (kd["family"], kd["min_players"], kd["max_players"]) == ("KD", 2, 4)
    assert {o["name"]: (o["type"], o["default"]) for o in kd["options"]} == {
        "mighty_duel": ("bool", "false"), "middle_kingdom": ("bool", "false"),
        "harmony": ("bool", "false"), "dynasty": ("bool", "false")}
    assert all(o["description"] for o in kd["options"])
    kd["options"].clear()                       # a copy: the registry is not changed
    assert next(v for v in variants() if v["name"] == "kingdomino")["options"]


def test_match_refuses_kingdomino_naming_the_class_to_use() -> None:
    with pytest.raises(MalformedError, match="Kingdomino"):
        Match.new("kingdomino", 4, seed=1)


@pytest.mark.parametrize("players,options,name", [
    (3, {"mighty_duel": True}, "mighty_duel"),
    (4, {"mighty_duel": "true"}, "mighty_duel"),
    (4, {"dynasty": "true"}, "dynasty"),
    (4, {"harmony": "maybe"}, "harmony"),
    (4, {"middle_kingdom": 1}, "middle_kingdom"),
    (4, {"hand_size": "seven"}, "hand_size"),
    (4, {"teams": True}, "teams"),
])
def test_bad_options_are_refused_naming_them(players: int, options: dict[str, Any], name: str) -> None:
    with pytest.raises(MalformedError, match=name):
        Kingdomino.new(players, options=options, seed=1)


@pytest.mark.parametrize("players", [1, 5, 0, True, "4", None, 2.0])
def test_bad_player_counts_are_refused(players: Any) -> None:
    with pytest.raises(MalformedError, match="players|played by"):
        Kingdomino.new(players, seed=1)


def test_defaults_are_not_stored_and_text_is_not_a_boolean() -> None:
    with pytest.raises(MalformedError, match='options.mighty_duel: expected true or false, got "true"'):
        Kingdomino.new(2, options={"mighty_duel": "true"}, seed=3)
    game, _ = Kingdomino.new(2, options={"mighty_duel": True, "harmony": False, "dynasty": False}, seed=3)
    assert game.options == {"mighty_duel": True}
    assert game.to_dict()["options"] == {"mighty_duel": True}
    assert game.cfg.size == 7 and game.cfg.tiles == 48 and game.cfg.kings == 4


# ---------------------------------------------------------------- deals

@pytest.mark.parametrize("players,options,tiles,kings", [
    (2, {}, 24, [0, 0, 1, 1]), (3, {}, 36, [0, 1, 2]), (4, {}, 48, [0, 1, 2, 3]),
    (2, {"mighty_duel": True}, 48, [0, 0, 1, 1]),
])
def test_seeded_deals_use_the_right_tiles_and_kings(players: int, options: dict[str, Any], tiles: int,
                                                    kings: list[int]) -> None:
    kept: set[frozenset[int]] = set()
    for seed in range(20):
        game, events = Kingdomino.new(players, options=options, seed=seed)
        pile, owners = seeded_deal(game.cfg, seed)
        assert len(pile) == len(set(pile)) == tiles and set(pile) <= set(range(1, 49))
        assert sorted(owners) == kings and game.kings == owners
        assert game.next_tiles == sorted(pile[:len(kings)])
        assert game.pile == pile[len(kings):]
        assert events[0]["type"] == "game_started" and events[1] == {"type": "row_laid", "tiles": game.next_tiles}
        assert game.to_move == owners[0] and game.legal_actions() == [f"pick {t}" for t in game.next_tiles]
        kept.add(frozenset(pile))
    assert len(kept) == (1 if tiles == 48 else 20)      # with 2 or 3 players the removed tiles vary


def test_the_same_seed_gives_the_same_game_and_no_seed_draws_one() -> None:
    a, _ = Kingdomino.new(4, seed=99)
    b, _ = Kingdomino.new(4, seed=99)
    c, _ = Kingdomino.new(4, seed=100)
    assert a.to_dict() == b.to_dict() != c.to_dict()
    d, _ = Kingdomino.new(3)
    assert isinstance(d.seed, int)
    assert Kingdomino.new(3, seed=d.seed)[0].to_dict() == d.to_dict()


def test_an_explicit_deal_is_the_pile_in_order_and_the_kings_in_pick_order() -> None:
    pile = list(range(24, 0, -1))
    game, _ = Kingdomino.new(2, deal={"tiles": pile, "kings": [1, 0, 0, 1]})
    assert game.next_tiles == [21, 22, 23, 24] and game.pile == pile[4:] and game.seed is None
    assert game.to_move == 1


@pytest.mark.parametrize("deal,message", [
    ([], "deal must be an object"),
    ({"tiles": list(range(1, 25))}, "deal.kings"),
    ({"tiles": list(range(1, 24)), "kings": [0, 1, 0, 1]}, "deal.tiles lists 23"),
    ({"tiles": list(range(1, 26)), "kings": [0, 1, 0, 1]}, "deal.tiles lists 25"),
    ({"tiles": [1] + list(range(1, 24)), "kings": [0, 1, 0, 1]}, "twice"),
    ({"tiles": [0] + list(range(2, 25)), "kings": [0, 1, 0, 1]}, "not a tile"),
    ({"tiles": [49] + list(range(2, 25)), "kings": [0, 1, 0, 1]}, "not a tile"),
    ({"tiles": [True] + list(range(2, 25)), "kings": [0, 1, 0, 1]}, "not a tile"),
    ({"tiles": ["1"] + list(range(2, 25)), "kings": [0, 1, 0, 1]}, "not a tile"),
    ({"tiles": "1,2,3", "kings": [0, 1, 0, 1]}, "deal.tiles must be a list"),
    ({"tiles": list(range(1, 25)), "kings": [0, 1]}, "deal.kings"),
    ({"tiles": list(range(1, 25)), "kings": [0, 0, 0, 1]}, "player 0 must have 2"),
    ({"tiles": list(range(1, 25)), "kings": [0, 1, 0, 2]}, "not a player"),
    ({"tiles": list(range(1, 25)), "kings": [0, 1, 0, 1], "leader": 0}, "unknown keys"),
])
def test_bad_deals_are_refused_naming_the_field(deal: Any, message: str) -> None:
    with pytest.raises(MalformedError, match=message):
        Kingdomino.new(2, deal=deal)


@pytest.mark.parametrize("seed", [-1, 2**64, True, "7", 1.5])
def test_bad_seeds_are_refused(seed: Any) -> None:
    with pytest.raises(MalformedError, match="seed"):
        Kingdomino.new(4, seed=seed)


def test_a_seed_and_a_deal_together_are_refused() -> None:
    with pytest.raises(MalformedError, match="not both"):
        Kingdomino.new(3, seed=1, deal={"tiles": list(range(1, 37)), "kings": [0, 1, 2]})


# ---------------------------------------------------------------- turns and refusals

def two_player_game() -> Kingdomino:
    """Rows [1,3,9,48], [2,4,13,45], ...: the start of tests/scenarios_kingdomino/full-game-2p."""
    pile = [48, 3, 9, 1, 45, 2, 13, 4, 46, 40, 24, 19, 47, 23, 10, 7, 16, 11, 8, 5, 36, 32, 14, 12]
    return Kingdomino.new(2, deal={"tiles": pile, "kings": [0, 1, 1, 0]})[0]


def test_events_say_what_happened() -> None:
    game = two_player_game()
    assert game.apply("pick 1") == [{"type": "tile_picked", "player": 0, "king": 0, "tile": 1}]
    for action in ("pick 9", "pick 48"):
        game.apply(action)
    events = game.apply("pick 3")
    assert events == [{"type": "tile_picked", "player": 0, "king": 3, "tile": 3},
                      {"type": "row_laid", "tiles": [2, 4, 13, 45]}]
    assert game.apply("place 1 0,1 N") == [
        {"type": "tile_placed", "player": 0, "tile": 1, "square": [0, 1], "direction": "N"}]


def test_refusals_say_why_and_change_nothing() -> None:
    game = two_player_game()
    for action in ("pick 1", "pick 9", "pick 48", "pick 3"):
        game.apply(action)
    before = game.to_dict()
    cases: list[tuple[Any, type[Exception], str]] = [
        ("pick 2", IllegalActionError, "must be placed"),
        ("place 3 1,0 E", IllegalActionError, "tile 1 is the one"),
        ("discard 1", IllegalActionError, "fits"),
        ("place 1 2,0 E", IllegalActionError, "neither square touches"),
        ("place 1 0,0 E", IllegalActionError, "overlaps"),
        ("place 1 5,0 E", IllegalActionError, "wider than 5x5"),
        ("place 1 0,1 X", MalformedError, "direction"),
        ("place 1 0;1 N", MalformedError, "X,Y"),
        ("place 1 a,1 N", MalformedError, "integer"),
        ("place 1 0,1", MalformedError, "expected"),
        ("place  1 0,1 N", MalformedError, "expected"),
        ("pick 49", MalformedError, "not a tile"),
        ("pick -1", MalformedError, "not a tile"),
        ("pass", MalformedError, "expected pick, place or discard"),
        (17, MalformedError, "string"),
        (None, MalformedError, "string"),
        ("place 1 0,1 N" * 5, MalformedError, "too long"),
    ]
    for action, error, message in cases:
        with pytest.raises(error, match=message):
            game.apply(action)
        assert game.to_dict() == before, action
    with pytest.raises(IllegalActionError, match="player 0's turn"):
        game.apply("place 1 0,1 N", player=1)
    for player in (True, "0", 0.0):
        with pytest.raises(MalformedError, match="player must be an integer"):
            game.apply("place 1 0,1 N", player=player)
    assert game.to_dict() == before
    assert game.to_dict() == before
    game.apply("place 1 0,1 N", player=0)
    with pytest.raises(IllegalActionError, match="pick a tile of the next row first"):
        game.apply("place 3 1,0 E")
    with pytest.raises(IllegalActionError, match="not in the next row"):
        game.apply("pick 46")


def test_nothing_is_accepted_once_the_game_is_over() -> None:
    game, _ = Kingdomino.new(2, seed=11)
    while not game.game_over:
        events = game.apply(game.legal_actions()[0])
    assert events[-1] == {"type": "game_over", "scores": game.scores(), "largest_region": game.largest_region(),
                          "crowns": game.crowns(), "winners": game.winners(), "decided_by": "score"}
    before = game.to_dict()
    with pytest.raises(IllegalActionError, match="over"):
        game.apply("pick 1")
    assert game.to_dict() == before and game.legal_actions() == [] and game.to_move is None
    assert sum(len(k.log) for k in game.kingdoms) == 24


def test_kingdomino_move_parse_reads_the_three_forms() -> None:
    assert KingdominoMove.parse("pick 17") == ("pick", 17, 0, 0, -1)
    assert KingdominoMove.parse("discard 48") == ("discard", 48, 0, 0, -1)
    assert KingdominoMove.parse("place 9 -4,4 W") == ("place", 9, -4, 4, 3)
    for bad in ("place 9 --4,4 W", "place 9 4,4 w", "pick 017", "pick ١", "place 9 4,4, W", "Pick 3"):
        with pytest.raises(MalformedError):
            KingdominoMove.parse(bad)


# ---------------------------------------------------------------- states

def played(players: int = 4, steps: int = 30, seed: int = 3, **options: Any) -> Kingdomino:
    game, _ = Kingdomino.new(players, options=options, seed=seed)
    for i in range(steps):
        if game.game_over:
            break
        legal = game.legal_actions()
        game.apply(legal[(i * 7) % len(legal)])
    return game


@pytest.mark.parametrize("steps", [0, 1, 3, 4, 5, 6, 17, 40, 95, 200])
def test_states_round_trip_exactly_at_every_phase(steps: int) -> None:
    game = played(steps=steps)
    state = game.to_dict()
    again = Kingdomino.from_dict(state)
    assert again.to_dict() == state
    assert again.legal_actions() == game.legal_actions() and again.to_move == game.to_move
    assert again.scores() == game.scores() and again.winners() == game.winners()


def _mutations() -> list[tuple[str, Any, str]]:
    """(key path, new value, words the refusal must contain) on a 4-player game after 17 actions."""
    return [
        ("variant", "kozel", "state.variant"),
        ("players", 5, "players"),
        ("players", 3, "state.kings"),
        ("options", {"dynasty": True}, "dynasty"),
        ("options", [], "state.options"),
        ("seed", -3, "state.seed"),
        ("kings", [0, 1, 2, 2], "state.kings"),
        ("kings", [0, 1, 2], "state.kings"),
        ("pile", "none", "state.pile"),
        ("pile", [1, 1], "state.pile"),
        ("pile", [], "tiles in the state"),
        ("current", [{"tile": 5, "king": 0}] * 5, "state.current"),
        ("current", [{"tile": 5}], "state.current[0]"),
        ("current", [{"tile": 5, "king": None}], "state.current[0].king"),
        ("current", [{"tile": 50, "king": 0}], "state.current[0].tile"),
        ("next", [{"tile": 7, "king": None}], "state.next"),
        ("picker", 9, "state.picker"),
        ("picker", "0", "state.picker"),
        ("kingdoms", [[], [], []], "state.kingdoms"),
        ("kingdoms", "x", "state.kingdoms"),
        ("kingdoms.0", "place 1 0,1 N", "state.kingdoms[0]"),
        ("kingdoms.0.append", "pick 3", "state.kingdoms[0]"),
        ("kingdoms.0.append", "place 48 4,4 N", "state.kingdoms[0]"),
        ("kingdoms.0.append", "discard 48", "state.kingdoms[0]"),
        ("kingdoms.0.append", "nonsense", "state.kingdoms[0]"),
        ("extra", 1, "unknown keys"),
        ("-picker", None, "missing keys"),
    ]


@pytest.mark.parametrize("path,value,message", _mutations())
def test_hostile_states_are_refused_naming_the_field(path: str, value: Any, message: str) -> None:
    state = played(steps=17).to_dict()
    if path.startswith("-"):
        del state[path[1:]]
    elif path.endswith(".append"):
        state["kingdoms"][int(path.split(".")[1])].append(value)
    elif path.startswith("kingdoms."):
        state["kingdoms"][int(path.split(".")[1])] = value
    else:
        state[path] = value
    with pytest.raises(MalformedError, match=message.replace("[", r"\[").replace("]", r"\]")):
        Kingdomino.from_dict(state)


def test_states_whose_turn_order_does_not_add_up_are_refused() -> None:
    # first round, two kings have picked: the third in lot order (king 2) picks next
    state = played(steps=2).to_dict()
    assert state["picker"] == 2
    state["picker"] = 3
    with pytest.raises(MalformedError, match="lot order"):
        Kingdomino.from_dict(state)
    # round 2 before anyone placed: a king on the current row cannot also be picking
    state = played(steps=4).to_dict()
    assert state["picker"] is None and len(state["current"]) == 4
    state["picker"] = state["current"][0]["king"]
    with pytest.raises(MalformedError, match="already stands on a tile"):
        Kingdomino.from_dict(state)
    # the next row put back on the pile: a row must be laid while the pile lasts
    state = played(steps=4).to_dict()
    state["pile"] += [entry["tile"] for entry in state["next"]]
    state["next"] = []
    with pytest.raises(MalformedError, match="the next row must be laid"):
        Kingdomino.from_dict(state)
    # one placement moved to another player's (empty) kingdom: legal there, but not that player's turn
    state = played(steps=5).to_dict()
    placer = next(p for p, log in enumerate(state["kingdoms"]) if log)
    other = (placer + 1) % 4
    state["kingdoms"][other] = state["kingdoms"][placer]
    state["kingdoms"][placer] = []
    with pytest.raises(MalformedError, match="turn order gives player"):
        Kingdomino.from_dict(state)
    for junk in (None, "not a dict", 3):
        with pytest.raises(MalformedError, match="state must be an object"):
            Kingdomino.from_dict(junk)


def test_a_non_canonical_placement_in_a_log_is_refused() -> None:
    state = played(steps=17).to_dict()
    log = next(log for log in state["kingdoms"] if log)
    log[0] = log[0].replace(" ", "  ", 1)
    with pytest.raises(MalformedError, match="state.kingdoms"):
        Kingdomino.from_dict(state)


# ---------------------------------------------------------------- views

def test_a_view_hides_the_pile_and_the_seed_only() -> None:
    game = played(steps=9)
    mover = game.to_move
    assert mover is not None
    for player in range(4):
        view = game.view(player)
        assert "pile" not in view and "seed" not in view
        assert view["pile_size"] == len(game.pile) > 0
        assert view["kingdoms"] == [k.log for k in game.kingdoms]
        assert view["current"] == game.to_dict()["current"] and view["next"] == game.to_dict()["next"]
        assert view["legal"] == (game.legal_actions() if player == mover else [])
        assert view["scores"] == game.scores() and view["game_over"] is False
        assert len(view["grids"][player]) == 2 * len([a for a in game.kingdoms[player].log if a.startswith("place")])
    bad: Any
    for bad in (-1, 4, True, "0"):
        with pytest.raises(MalformedError, match="player"):
            game.view(bad)


def test_a_view_grid_lists_squares_north_first_with_terrain_and_crowns() -> None:
    game = two_player_game()
    for action in ("pick 1", "pick 9", "pick 48", "pick 3", "place 1 0,1 N", "pick 2", "place 3 1,0 E",
                   "pick 4", "place 9 0,-1 S", "pick 13", "place 48 1,0 E"):
        game.apply(action)
    assert game.view(0)["grids"][1] == [
        {"x": 1, "y": 0, "terrain": "wheat", "crowns": 0},
        {"x": 2, "y": 0, "terrain": "mine", "crowns": 3},
        {"x": 0, "y": -1, "terrain": "lake", "crowns": 0},
        {"x": 0, "y": -2, "terrain": "lake", "crowns": 0},
    ]


# ---------------------------------------------------------------- docs/variants.md

def test_the_documented_state_decodes_and_its_action_is_legal() -> None:
    import json
    import re

    text = (Path(__file__).resolve().parents[2] / "docs" / "variants.md").read_text(encoding="utf-8")
    section = text[text.index("\n## KD."):]
    (raw,) = re.findall(r"<!-- kingdomino example: state -->\s*```json\n(.*?)\n```", section, flags=re.DOTALL)
    state = json.loads(raw)
    game = Kingdomino.from_dict(state)
    assert game.to_dict() == state
    assert game.to_move == 0 and "place 3 1,0 E" in game.legal_actions() and len(game.legal_actions()) == 18
    for option in ("mighty_duel", "middle_kingdom", "harmony", "dynasty"):
        assert f"| `{option}` |" in section and f"| `{option}` | bool" in section
