"""Exact legality and scoring of Kingdomino against a brute force written here (RULES.md KD; issue 14).

The engine lists placements with bit masks (kingdomino_board). Here a kingdom is a
plain dict of squares, and the legal placements of a tile are found by trying
every square of a field wider than the kingdom can ever reach, in every
direction, against RULES.md KD "Placement" read literally; the score is an
independent flood fill. Random kingdoms of both sizes (5x5; 7x7, the mighty
duel) and random games of every option (mighty_duel, middle_kingdom, harmony,
dynasty) are compared position by position: several thousand positions a run.

Then regression tests for bugs other Kingdomino engines shipped: a kingdom
growing past its 5x5 (7x7) bounding box, a discard allowed while a placement
exists, and the middle-kingdom bonus computed from one axis only.
"""
from __future__ import annotations

import random
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_service.rules import IllegalActionError, Kingdomino
from engine_service.rules.kingdomino_board import DIRECTION_INDEX, Kingdom, geometry
from engine_service.rules.kingdomino_score import kingdom_score
from engine_service.rules.kingdomino_setup import config
from engine_service.rules.kingdomino_tiles import TILES

# Directions written here, not taken from the engine: N is +y, E is +x.
STEP = {"N": (0, 1), "E": (1, 0), "S": (0, -1), "W": (-1, 0)}
CASTLE = -1
Square = tuple[int, int]
Squares = dict[Square, tuple[int, int]]        # (x, y) -> (terrain, crowns); the castle is (CASTLE, 0)


class Reference:
    """A kingdom as a dict of squares, with the rules of RULES.md KD applied literally."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.squares: Squares = {(0, 0): (CASTLE, 0)}
        self.discards = 0

    def legal(self, tile: int) -> set[str]:
        """Every (square, direction) of a field wider than any kingdom, kept when the rules allow it."""
        t = TILES[tile - 1]
        xs = [x for x, _ in self.squares]
        ys = [y for _, y in self.squares]
        lo_x, hi_x, lo_y, hi_y = min(xs), max(xs), min(ys), max(ys)
        far = self.size + 1
        out: set[str] = set()
        for x in range(-far, far + 1):
            for y in range(-far, far + 1):
                for name, (dx, dy) in STEP.items():
                    a, b = (x, y), (x + dx, y + dy)
                    if a in self.squares or b in self.squares:
                        continue                                        # no overlap
                    if max(hi_x, a[0], b[0]) - min(lo_x, a[0], b[0]) + 1 > self.size:
                        continue                                        # the box, castle included
                    if max(hi_y, a[1], b[1]) - min(lo_y, a[1], b[1]) + 1 > self.size:
                        continue
                    if self._touches(a, t.terrain1) or self._touches(b, t.terrain2):
                        out.add(f"place {tile} {x},{y} {name}")
        return out

    def _touches(self, square: Square, terrain: int) -> bool:
        for dx, dy in STEP.values():
            other = self.squares.get((square[0] + dx, square[1] + dy))
            if other is not None and other[0] in (CASTLE, terrain):
                return True
        return False

    def play(self, action: str) -> None:
        words = action.split()
        t = TILES[int(words[1]) - 1]
        if words[0] == "discard":
            self.discards += 1
            return
        x, y = (int(v) for v in words[2].split(","))
        dx, dy = STEP[words[3]]
        self.squares[(x, y)] = (t.terrain1, t.crowns1)
        self.squares[(x + dx, y + dy)] = (t.terrain2, t.crowns2)

    def flood(self) -> tuple[int, int, int]:
        """(sum over regions of squares x crowns, largest region, crowns) by flood fill."""
        seen: set[Square] = set()
        total = largest = 0
        for start, (terrain, _) in self.squares.items():
            if terrain == CASTLE or start in seen:
                continue
            stack, size, crowns = [start], 0, 0
            seen.add(start)
            while stack:
                x, y = stack.pop()
                size += 1
                crowns += self.squares[(x, y)][1]
                for dx, dy in STEP.values():
                    q = (x + dx, y + dy)
                    if q not in seen and self.squares.get(q, (None, 0))[0] == terrain:
                        seen.add(q)
                        stack.append(q)
            total += size * crowns
            largest = max(largest, size)
        return total, largest, sum(c for _, c in self.squares.values())

    def centred(self) -> bool:
        """The castle is the middle of the box on both axes."""
        xs = [x for x, _ in self.squares]
        ys = [y for _, y in self.squares]
        return min(xs) + max(xs) == 0 and min(ys) + max(ys) == 0

    def final_score(self, options: dict[str, Any]) -> int:
        score = self.flood()[0]
        if options.get("middle_kingdom") and self.centred():
            score += 10
        if options.get("harmony") and self.discards == 0:
            score += 5
        return score


def engine_place(kingdom: Kingdom, action: str) -> None:
    words = action.split()
    x, y = (int(v) for v in words[2].split(","))
    kingdom.place(int(words[1]), x, y, DIRECTION_INDEX[words[3]])


def compare_position(kingdom: Kingdom, ref: Reference, tile: int, rng: random.Random) -> set[str]:
    """The engine's placements, fits, count and can_place against the brute force; its score too."""
    want = ref.legal(tile)
    got = kingdom.placements(tile)
    assert len(got) == len(set(got)) and set(got) == want, (tile, kingdom.log, set(got) ^ want)
    assert kingdom.fits(tile) == bool(want) and kingdom.count_placements(tile) == len(want)
    far = ref.size + 2
    for _ in range(8):                                    # single placements, legal or not, off the board too
        x, y, d = rng.randint(-far, far), rng.randint(-far, far), rng.choice("NESW")
        assert kingdom.can_place(tile, x, y, DIRECTION_INDEX[d]) == (f"place {tile} {x},{y} {d}" in want)
    score, largest, crowns = ref.flood()
    assert (kingdom.region_score(), kingdom.largest_region(), kingdom.crowns()) == (score, largest, crowns)
    assert kingdom.centred() == ref.centred()
    return want


# ---------------------------------------------------------------- random kingdoms

def build_random_kingdoms(size: int, seed: int, kingdoms: int) -> int:
    """Grow `kingdoms` kingdoms with random tiles (any of the 48, in any order); returns positions checked."""
    rng = random.Random(seed)
    positions = 0
    for _ in range(kingdoms):
        kingdom, ref = Kingdom(geometry(size)), Reference(size)
        tiles = list(range(1, 49))
        rng.shuffle(tiles)
        for tile in tiles:
            want = compare_position(kingdom, ref, tile, rng)
            positions += 1
            if want:
                action = rng.choice(sorted(want))
                engine_place(kingdom, action)
                ref.play(action)
            if len(ref.squares) == size * size:
                break
        # the kingdom never outgrows its box
        xs = [x for x, _ in ref.squares]
        ys = [y for _, y in ref.squares]
        assert max(xs) - min(xs) < size and max(ys) - min(ys) < size
    return positions


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_random_5x5_kingdoms_match_the_brute_force(seed: int) -> None:
    assert build_random_kingdoms(5, seed, 6) >= 6 * 12


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_random_7x7_kingdoms_match_the_brute_force(seed: int) -> None:
    assert build_random_kingdoms(7, seed, 3) >= 3 * 24


# ---------------------------------------------------------------- random games of every option

OPTION_SETS: list[tuple[int, dict[str, Any]]] = [
    (2, {}), (3, {}), (4, {}),
    (2, {"mighty_duel": True}),
    (2, {"middle_kingdom": True}), (3, {"harmony": True}),
    (4, {"middle_kingdom": True, "harmony": True}),
    (2, {"mighty_duel": True, "middle_kingdom": True, "harmony": True}),
    (2, {"dynasty": True, "harmony": True}),
]


def play_compared(players: int, options: dict[str, Any], seed: int) -> int:
    """A random game (a dynasty: three) with every placement list compared to the brute force;
    each game's final scores, bonuses included, to the reference. Returns positions checked."""
    rng = random.Random(seed)
    game, _ = Kingdomino.new(players, options=options, seed=seed)
    size = game.cfg.size
    refs = [Reference(size) for _ in range(players)]
    number = game.game_number
    positions = 0
    while not game.game_over:
        legal = game.legal_actions()
        logs = [k.log.copy() for k in game.kingdoms]
        if game.picker < 0:
            mover = game.to_move
            assert mover is not None
            tile = game.current_tiles[0]
            want = compare_position(game.kingdoms[mover], refs[mover], tile, rng)
            assert set(legal) == (want or {f"discard {tile}"})
            positions += 1
            if want:                                  # a discard while a placement exists is refused
                before = game.to_dict()
                with pytest.raises(IllegalActionError, match="must be placed"):
                    game.apply(f"discard {tile}")
                assert game.to_dict() == before
            action = rng.choice(legal)
            refs[mover].play(action)
            logs[mover].append(action)
        else:
            action = rng.choice(legal)
        game.apply(action)
        if game.game_number != number:                # a dynasty's game ended: check it, start afresh
            result = game.games[-1]
            assert result.kingdoms == logs
            assert result.scores == [r.final_score(options) for r in refs]
            assert result.largest_region == [r.flood()[1] for r in refs]
            refs = [Reference(size) for _ in range(players)]
            number = game.game_number
    assert game.scores() == [r.final_score(options) for r in refs]
    assert (game.largest_region(), game.crowns()) == ([r.flood()[1] for r in refs], [r.flood()[2] for r in refs])
    return positions


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**63 - 1), setup=st.sampled_from(OPTION_SETS))
def test_random_games_of_every_option_match_the_brute_force(seed: int, setup: tuple[int, dict[str, Any]]) -> None:
    players, options = setup
    assert play_compared(players, options, seed) > 0


@pytest.mark.parametrize("players,options", OPTION_SETS, ids=[f"{p}p-{'-'.join(o) or 'plain'}" for p, o in OPTION_SETS])
def test_every_option_set_is_compared_on_fixed_seeds(players: int, options: dict[str, Any]) -> None:
    positions = sum(play_compared(players, options, seed) for seed in range(3))
    assert positions >= 3 * 12 * (3 if options.get("dynasty") else 1)


# ---------------------------------------------------------------- regressions: the bounding box

def kingdom_of(*placements: str, size: int = 5) -> Kingdom:
    k = Kingdom(geometry(size))
    for p in placements:
        engine_place(k, "place " + p)
    return k


def test_a_kingdom_five_wide_cannot_grow_on_either_side() -> None:
    # wheat from -2,0 to 2,0 (tiles 1 and 2 are wheat|wheat): x spans -2..2, five squares
    k = kingdom_of("1 1,0 E", "2 -1,0 W")
    assert (k.minx, k.maxx) == (-2, 2)
    legal = set(k.placements(13))                       # 13: wheat|forest
    assert legal
    for action in legal:
        x, y = (int(v) for v in action.split()[2].split(","))
        dx = STEP[action.split()[3]][0]
        assert -2 <= x <= 2 and -2 <= x + dx <= 2, action
    assert not k.can_place(13, 3, 0, DIRECTION_INDEX["E"])     # both squares outside
    assert not k.can_place(13, 2, 1, DIRECTION_INDEX["E"])     # the second square outside
    assert not k.can_place(13, -2, 1, DIRECTION_INDEX["W"])
    assert "wider than 5x5" in k.why_not(13, 2, 1, DIRECTION_INDEX["E"])
    assert k.can_place(13, 2, 1, DIRECTION_INDEX["N"])         # along the edge: fine


def test_a_kingdom_off_centre_is_bounded_by_its_box_not_by_the_field() -> None:
    # x spans 0..4: the field reaches -4 but the box forbids x = -1 (an engine checking |x| <= 4 allows it)
    k = kingdom_of("1 1,0 E", "2 3,0 E")
    assert (k.minx, k.maxx) == (0, 4)
    assert not any(a.split()[2].startswith("-1,") for a in k.placements(3))
    assert not k.can_place(3, -1, 0, DIRECTION_INDEX["W"]) and not k.can_place(3, 0, 1, DIRECTION_INDEX["W"])
    assert "wider than 5x5" in k.why_not(3, -1, 0, DIRECTION_INDEX["N"])
    ref = Reference(5)
    for action in ("place 1 1,0 E", "place 2 3,0 E"):
        ref.play(action)
    assert set(k.placements(3)) == ref.legal(3)


def test_the_mighty_duel_box_is_seven_and_no_more() -> None:
    # wheat 1..6 on the east: x spans 0..6 (seven)
    k = kingdom_of("1 1,0 E", "2 3,0 E", "3 5,0 E", size=7)
    assert not k.can_place(4, 7, 0, DIRECTION_INDEX["N"]) and not k.can_place(4, -1, 0, DIRECTION_INDEX["N"])
    assert k.can_place(4, 6, 1, DIRECTION_INDEX["N"])
    # and vertically: y spans 0..6 after three more
    k = kingdom_of("1 0,1 N", "2 0,3 N", "3 0,5 N", size=7)
    assert not k.can_place(4, 0, 7, DIRECTION_INDEX["E"]) and not k.can_place(4, 1, -1, DIRECTION_INDEX["N"])
    assert k.can_place(4, 1, 6, DIRECTION_INDEX["S"])


def test_a_full_game_never_outgrows_the_box() -> None:
    for seed in range(20):
        game, _ = Kingdomino.new(2, options={"mighty_duel": seed % 2 == 1}, seed=seed)
        rng = random.Random(seed)
        while not game.game_over:
            game.apply(rng.choice(game.legal_actions()))
        for kingdom in game.kingdoms:
            assert kingdom.maxx - kingdom.minx < game.cfg.size and kingdom.maxy - kingdom.miny < game.cfg.size
            cells = kingdom.grid()
            xs = [cast(int, c["x"]) for c in cells] + [0]
            ys = [cast(int, c["y"]) for c in cells] + [0]
            assert max(xs) - min(xs) < game.cfg.size and max(ys) - min(ys) < game.cfg.size


# ---------------------------------------------------------------- regressions: discards

def test_with_the_castle_surrounded_a_tile_fits_only_by_its_terrains() -> None:
    # every side of the castle taken: the castle offers no contact, fits() must follow the terrains
    k = kingdom_of("17 1,0 E", "18 0,1 N", "19 -1,0 W", "20 0,-1 S")
    ref = Reference(5)
    for action in ("place 17 1,0 E", "place 18 0,1 N", "place 19 -1,0 W", "place 20 0,-1 S"):
        ref.play(action)
    for tile in range(1, 49):
        want = ref.legal(tile)
        assert set(k.placements(tile)) == want and k.fits(tile) == bool(want), tile


def first_position_with_one_placement() -> Kingdomino:
    """A real game position where the tile to place has exactly one legal placement."""
    for seed in range(500):
        game, _ = Kingdomino.new(2, seed=seed)
        rng = random.Random(seed)
        while not game.game_over:
            legal = game.legal_actions()
            if game.picker < 0 and len(legal) == 1 and legal[0].startswith("place"):
                return game
            game.apply(rng.choice(legal))
    raise AssertionError("no position with a single placement in 500 games")


def test_a_discard_is_refused_while_a_single_placement_exists() -> None:
    game = first_position_with_one_placement()
    (only,) = game.legal_actions()
    tile = game.current_tiles[0]
    before = game.to_dict()
    with pytest.raises(IllegalActionError, match=f"tile {tile} .*fits in the kingdom, so it must be placed"):
        game.apply(f"discard {tile}")
    assert game.to_dict() == before
    game.apply(only)


# ---------------------------------------------------------------- regressions: the middle kingdom

@pytest.mark.parametrize("placements,centred", [
    # x -2..2, y 0..1: centred on x only
    (("1 1,0 E", "2 -1,0 W", "3 0,1 E"), False),
    # y -2..2, x 0..1: centred on y only
    (("1 0,1 N", "2 0,-1 S", "3 1,0 N"), False),
    # x -2..2 and y -2..2: both
    (("1 1,0 E", "2 -1,0 W", "3 0,1 N", "4 0,-1 S"), True),
    # x -1..2 (not centred), y -2..1: neither; swapped axes would say the same of y -1..2 / x -2..1
    (("1 1,0 E", "2 0,1 N", "3 -1,0 S"), False),
    # a box 3 wide and 5 tall, centred on both axes: centred (RULES.md KD: the centre of the final grid)
    (("1 0,1 N", "2 0,-1 S", "3 1,0 N", "4 -1,0 S"), True),
])
def test_the_middle_kingdom_needs_the_castle_centred_on_both_axes(placements: tuple[str, ...],
                                                                   centred: bool) -> None:
    k = kingdom_of(*placements)
    ref = Reference(5)
    for p in placements:
        ref.play("place " + p)
    assert k.centred() is centred is ref.centred()
    cfg = config(2, {"middle_kingdom": True})
    base = ref.flood()[0]
    assert kingdom_score(cfg, k, True) == base + (10 if centred else 0)
    assert kingdom_score(cfg, k, False) == base                 # only once the game is over
