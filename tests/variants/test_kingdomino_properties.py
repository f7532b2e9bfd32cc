"""Kingdomino properties over random seeded games (RULES.md KD), with hypothesis.

Every legal action applies; illegal ones are refused and change nothing; games
end with every tile placed or discarded; to_dict/from_dict is exact at every
step; the same seed gives the same game. The legal placements and the scores are
checked against a plain reference written from RULES.md KD with coordinate sets
(no bit masks), and hostile states never raise anything but MalformedError.
"""
from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_service.rules import IllegalActionError, Kingdomino, MalformedError
from engine_service.rules.kingdomino_board import DIRECTIONS, DX, DY
from engine_service.rules.kingdomino_tiles import TILES

SETUPS = [(2, {}), (3, {}), (4, {}), (2, {"mighty_duel": True})]
SEEDS = st.integers(min_value=0, max_value=2**64 - 1)
COMMON = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

Squares = dict[tuple[int, int], tuple[int, int]]   # (x, y) -> (terrain, crowns); the castle is (-1, 0)


def reference_squares(log: list[str]) -> Squares:
    squares: Squares = {(0, 0): (-1, 0)}
    for action in log:
        words = action.split()
        if words[0] != "place":
            continue
        t = TILES[int(words[1]) - 1]
        x, y = (int(v) for v in words[2].split(","))
        d = DIRECTIONS.index(words[3])
        squares[(x, y)] = (t.terrain1, t.crowns1)
        squares[(x + DX[d], y + DY[d])] = (t.terrain2, t.crowns2)
    return squares


def reference_placements(squares: Squares, tile: int, size: int) -> set[str]:
    """RULES.md KD "Placement", literally: free squares, box within size x size, a matching neighbour."""
    t = TILES[tile - 1]
    reach = size - 1
    out: set[str] = set()
    for x in range(-reach, reach + 1):
        for y in range(-reach, reach + 1):
            for d, name in enumerate(DIRECTIONS):
                a, b = (x, y), (x + DX[d], y + DY[d])
                if a in squares or b in squares:
                    continue
                xs = [p[0] for p in squares] + [a[0], b[0]]
                ys = [p[1] for p in squares] + [a[1], b[1]]
                if max(xs) - min(xs) >= size or max(ys) - min(ys) >= size:
                    continue

                def touches(square: tuple[int, int], terrain: int) -> bool:
                    for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                        other = squares.get((square[0] + dx, square[1] + dy))
                        if other is not None and other[0] in (-1, terrain):
                            return True
                    return False

                if touches(a, t.terrain1) or touches(b, t.terrain2):
                    out.add(f"place {tile} {x},{y} {name}")
    return out


def reference_score(squares: Squares) -> tuple[int, int, int]:
    """(squares x crowns summed over regions, largest region, crowns) by breadth-first search."""
    seen: set[tuple[int, int]] = set()
    score = largest = 0
    for start, (terrain, _c) in squares.items():
        if terrain < 0 or start in seen:
            continue
        region, todo = [], [start]
        seen.add(start)
        while todo:
            p = todo.pop()
            region.append(p)
            for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                q = (p[0] + dx, p[1] + dy)
                if q not in seen and q in squares and squares[q][0] == terrain:
                    seen.add(q)
                    todo.append(q)
        score += len(region) * sum(squares[p][1] for p in region)
        largest = max(largest, len(region))
    return score, largest, sum(c for _t, c in squares.values())


def illegal_candidates(game: Kingdomino, rng: random.Random) -> list[str]:
    legal = set(game.legal_actions())
    tries = [f"pick {rng.randint(1, 48)}", f"discard {rng.randint(1, 48)}",
             f"place {rng.randint(1, 48)} {rng.randint(-7, 7)},{rng.randint(-7, 7)} {rng.choice('NESW')}"]
    if game.current_tiles:
        head = game.current_tiles[0]
        tries += [f"discard {head}",
                  f"place {head} {rng.randint(-7, 7)},{rng.randint(-7, 7)} {rng.choice('NESW')}"]
    return [a for a in tries if a not in legal]


def play_checked(players: int, options: dict[str, Any], seed: int) -> Kingdomino:
    rng = random.Random(seed)
    game, _ = Kingdomino.new(players, options=options, seed=seed)
    steps = 0
    while not game.game_over:
        state = game.to_dict()
        assert Kingdomino.from_dict(state).to_dict() == state
        legal = game.legal_actions()
        assert legal and len(legal) == len(set(legal))
        mover = game.to_move
        assert mover is not None
        if game.picker < 0:
            kingdom = game.kingdoms[mover]
            expected = reference_placements(reference_squares(kingdom.log), game.current_tiles[0], game.cfg.size)
            assert set(legal) == (expected or {f"discard {game.current_tiles[0]}"})
        for bad in illegal_candidates(game, rng):
            try:
                game.apply(bad)
            except (IllegalActionError, MalformedError):
                pass
            else:
                raise AssertionError(f"{bad!r} was applied but is not in the legal list")
            assert game.to_dict() == state, bad
        game.apply(rng.choice(legal), player=mover)
        steps += 1
        assert steps <= 200
    final = game.to_dict()
    assert Kingdomino.from_dict(final).to_dict() == final
    assert all(len(log) == game.cfg.tiles // players for log in final["kingdoms"])
    assert final["pile"] == [] and final["next"] == [] and final["current"] == []
    for p, kingdom in enumerate(game.kingdoms):
        score, largest, crowns = reference_score(reference_squares(kingdom.log))
        bonus = 0
        if options.get("middle_kingdom") and kingdom.centred():
            bonus += 10
        assert (game.scores()[p] - bonus, game.largest_region()[p], game.crowns()[p]) == (score, largest, crowns)
        assert kingdom.squares() <= game.cfg.size ** 2 - 1
    best = max(zip(game.scores(), game.largest_region(), game.crowns()))
    assert game.winners() and all(
        (game.scores()[w], game.largest_region()[w], game.crowns()[w]) == best for w in game.winners())
    return game


@COMMON
@given(seed=SEEDS)
def test_random_two_player_games(seed: int) -> None:
    play_checked(2, {}, seed)


@COMMON
@given(seed=SEEDS)
def test_random_three_player_games(seed: int) -> None:
    play_checked(3, {}, seed)


@COMMON
@given(seed=SEEDS)
def test_random_four_player_games(seed: int) -> None:
    play_checked(4, {"middle_kingdom": True}, seed)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=SEEDS)
def test_random_mighty_duels(seed: int) -> None:
    play_checked(2, {"mighty_duel": True}, seed)


@settings(max_examples=20, deadline=None)
@given(seed=SEEDS, setup=st.sampled_from(SETUPS))
def test_the_same_seed_plays_the_same_game(seed: int, setup: tuple[int, dict[str, Any]]) -> None:
    players, options = setup

    def run() -> list[Any]:
        rng = random.Random(seed)
        game, events = Kingdomino.new(players, options=options, seed=seed)
        trace: list[Any] = [events]
        while not game.game_over:
            trace.append(game.apply(rng.choice(game.legal_actions())))
        trace.append(game.to_dict())
        return trace

    assert run() == run()


def _junk() -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), st.booleans(), st.integers(-3, 60), st.text(max_size=12),
                     st.lists(st.integers(-1, 50), max_size=6),
                     st.dictionaries(st.sampled_from(["tile", "king", "x"]), st.integers(-1, 50), max_size=3))


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 50), steps=st.integers(0, 60), key=st.sampled_from(
    ["players", "options", "seed", "kings", "pile", "current", "next", "picker", "kingdoms", "variant"]),
    junk=_junk(), index=st.integers(0, 5))
def test_hostile_states_only_ever_raise_malformed(seed: int, steps: int, key: str, junk: Any, index: int) -> None:
    rng = random.Random(seed)
    game, _ = Kingdomino.new(4, seed=seed)
    for _ in range(steps):
        game.apply(rng.choice(game.legal_actions()))
    state = json.loads(json.dumps(game.to_dict()))
    value = state[key]
    if isinstance(value, list) and value and index % 2:
        value[index % len(value)] = junk      # one element replaced
    else:
        state[key] = junk
    try:
        decoded = Kingdomino.from_dict(state)
    except MalformedError:
        return
    # accepted: then it is a consistent state that plays on and round-trips
    assert Kingdomino.from_dict(decoded.to_dict()).to_dict() == decoded.to_dict()
    if not decoded.game_over:
        decoded.apply(decoded.legal_actions()[0])
