"""Peer cross-check of the block game (RULES.md BL) against OpenSpiel's `python_block_dominoes`.

For each of N seeded two-player games:

1. our engine deals the hands (`Match.new("block", 2, seed=...)`), and OpenSpiel's
   chance nodes are driven to give the same hands (seat 0 = OpenSpiel player 0;
   OpenSpiel deals its first 7 chance outcomes to player 0, the next 7 to
   player 1). A chance outcome is the tile's index in OpenSpiel's own deck,
   read from the game (`_DECK`) and matched to our tiles by name, never assumed
   to be our tile id: OpenSpiel's main branch has reordered that deck before;
2. the game is played move by move, a seeded RNG choosing among OUR legal
   actions; each is mapped to OpenSpiel's action (tile, covered pip value);
3. at every decision the SETS of (tile, covered value) are compared. Ours may
   list one tile on two arms showing the same value (`3-5@W` and `3-5@E` when
   both ends show 3), OpenSpiel lists that as one move: RULES.md BL says to
   compare sets. Where OpenSpiel skips a seat that cannot play, ours has an
   explicit `pass`: OpenSpiel must then already be at the other seat;
4. the open ends are compared after each move, the end of the game must come
   at the same move, and the returns must agree: ours gives the winner the
   other seat's pips and the other 0 (`scores`), OpenSpiel gives +x / -x.

Usage: ``domino crosscheck --games N --seed S [--progress K] [--verbose]``.
Prints progress for long runs and ends with ``N games, M disagreements``;
exits 1 on any disagreement, 2 when OpenSpiel cannot be imported.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engine_service.rules import Match
from engine_service.rules.notation import CENTER, DRAW, PASS, Move
from engine_service.rules.tiles import NAMES, parse_tile

MAX_SEED = (1 << 64) - 1
Pair = tuple[str, int | None]  # (tile name "a-b", covered value or None for the lead)


@dataclass
class GameResult:
    index: int
    seed: int
    moves: int = 0
    passes: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def agreed(self) -> bool:
        return not self.problems


class OpenSpielBlock:
    """A thin handle on OpenSpiel's python_block_dominoes: deal, legal pairs, apply, returns."""

    def __init__(self) -> None:
        import pyspiel  # type: ignore[import-not-found,import-untyped,unused-ignore]
        from open_spiel.python.games import block_dominoes as bd  # type: ignore[import-not-found,import-untyped,unused-ignore]

        self.bd = bd
        self.game = pyspiel.load_game("python_block_dominoes")
        # OpenSpiel's tile tuples (floats, low first) -> our tile names.
        self.tile_name = {tile: f"{int(tile[0])}-{int(tile[1])}" for tile in bd._DECK}
        self.deck_index = {name: i for i, (tile, name) in enumerate(
            (t, f"{int(t[0])}-{int(t[1])}") for t in bd._DECK)}
        self.deck_tile = {name: tile for tile, name in self.tile_name.items()}
        self.action_index = {s: i for i, s in enumerate(bd._ACTIONS_STR)}
        if sorted(self.deck_index) != sorted(NAMES):
            raise AssertionError(f"OpenSpiel's deck is not the double-six set: {sorted(self.deck_index)}")

    def deal(self, hands: list[list[str]]) -> Any:
        state = self.game.new_initial_state()
        for hand in hands:
            for name in hand:
                assert state.is_chance_node()
                outcome = self.deck_index[name]
                if outcome not in {o for o, _ in state.chance_outcomes()}:
                    raise AssertionError(f"OpenSpiel cannot deal {name} now")
                state.apply_action(outcome)
        return state

    def pairs(self, state: Any) -> set[Pair]:
        result: set[Pair] = set()
        for a in state.legal_actions():
            act = self.bd._ACTIONS[a]
            result.add((self.tile_name[act.tile], None if act.edge is None else int(act.edge)))
        return result

    def action_for(self, state: Any, player: int, pair: Pair) -> int:
        name, edge = pair
        tile = self.deck_tile[NAMES[parse_tile(name)]]
        text = str(self.bd.Action(player, tile, None if edge is None else float(edge)))
        return self.action_index[text]

    @staticmethod
    def open_edges(state: Any) -> list[int]:
        return sorted(int(v) for v in state.open_edges)


def our_pairs(match: Match) -> set[Pair]:
    """Our legal actions as (tile, covered value); `pass` is handled by the caller."""
    rnd = match.round
    assert rnd is not None
    result: set[Pair] = set()
    for move in rnd.legal_moves():
        if move.kind in (DRAW, PASS):
            continue
        result.add(_pair(rnd.layout.end, move))
    return result


def _pair(end: list[int], move: Move) -> Pair:
    """A play as (tile, the value it covers: None for a lead), from the typed move and the open ends."""
    tile, arm, _ = move.placements[0]
    return NAMES[tile], None if arm == CENTER else end[arm]


def our_scores(match: Match) -> list[int]:
    """Our running scores after the round, seat 0 first."""
    return match.ledger.scores.copy()


def pair_of(match: Match, action: str) -> Pair:
    assert match.round is not None
    return _pair(match.round.layout.end, Move.parse(action))


def _fmt(pairs: set[Pair]) -> str:
    return "{" + ", ".join(f"{t}/{'-' if v is None else v}" for t, v in sorted(
        pairs, key=lambda p: (p[0], -1 if p[1] is None else p[1]))) + "}"


def play_one(peer: OpenSpielBlock, index: int, seed: int) -> GameResult:
    """Play one seeded game in both engines; record every disagreement."""
    result = GameResult(index, seed)
    problems = result.problems
    match, _ = Match.new("block", 2, seed=seed)
    rnd = match.round
    assert rnd is not None
    hands = [list(h) for h in match.to_dict()["round"]["hands"]]
    state = peer.deal(hands)
    chooser = random.Random(seed ^ 0x5EED)
    for step in range(200):  # a block game has at most 14 plays and a few passes
        ours_over = rnd.over
        theirs_over = state.is_terminal()
        if ours_over or theirs_over:
            if ours_over != theirs_over:
                problems.append(f"step {step}: game over: ours {ours_over}, OpenSpiel {theirs_over}")
            break
        seat = rnd.to_move
        legal = match.legal_actions()
        if legal == ["pass"]:
            result.passes += 1
            if state.current_player() != 1 - seat:
                problems.append(f"step {step}: seat {seat} passes here, OpenSpiel has player "
                                f"{state.current_player()} to move")
                break
            match.apply("pass")
            continue
        if "pass" in legal or "draw" in legal:
            problems.append(f"step {step}: seat {seat} may pass or draw while able to play: {legal}")
            break
        if state.current_player() != seat:
            problems.append(f"step {step}: seat {seat} to move, OpenSpiel has player {state.current_player()}")
            break
        ours = our_pairs(match)
        theirs = peer.pairs(state)
        if ours != theirs:
            problems.append(f"step {step}: seat {seat} legal moves differ: ours {_fmt(ours)}, "
                            f"OpenSpiel {_fmt(theirs)}")
            break
        action = chooser.choice(legal)
        pair = pair_of(match, action)
        match.apply(action)
        state.apply_action(peer.action_for(state, seat, pair))
        result.moves += 1
        if not rnd.over:
            mine = sorted(rnd.layout.ends().values())
            if mine != peer.open_edges(state):
                problems.append(f"step {step}: after {action} ends differ: ours {mine}, "
                                f"OpenSpiel {peer.open_edges(state)}")
                break
    else:  # pragma: no cover - a runaway game is itself a disagreement
        problems.append("the game did not end within 200 steps")
    if not problems:
        scores = our_scores(match)
        ours_returns = [scores[0] - scores[1], scores[1] - scores[0]]
        theirs_returns = [round(r) for r in state.returns()]
        if ours_returns != theirs_returns:
            problems.append(f"returns differ: ours scores {scores} (as +/- {ours_returns}), "
                            f"OpenSpiel {theirs_returns}")
        left = [sum(int(a) + int(b) for a, b in h) for h in state.hands]
        if rnd.round_points != left:
            problems.append(f"pips left differ: ours {rnd.round_points}, OpenSpiel {left}")
    return result


def game_seed(seed: int, index: int) -> int:
    """The engine seed of game `index` of a run seeded `seed` (stable across Python versions)."""
    return random.Random(f"crosscheck:{seed}:{index}").randrange(MAX_SEED + 1)


def run(games: int, seed: int, out: Any = None, progress: int = 0,
        verbose: bool = False, show: int = 10) -> tuple[int, int, list[GameResult]]:
    """Play `games` games; returns (games, disagreements, the disagreeing results)."""
    if out is None:
        out = sys.stdout
    peer = OpenSpielBlock()
    bad: list[GameResult] = []
    started = time.monotonic()
    moves = passes = 0
    for i in range(games):
        result = play_one(peer, i, game_seed(seed, i))
        moves += result.moves
        passes += result.passes
        if not result.agreed:
            bad.append(result)
            if len(bad) <= show or verbose:
                for line in result.problems:
                    print(f"game {i} (engine seed {result.seed}): {line}", file=out)
        if progress and (i + 1) % progress == 0 and i + 1 < games:
            print(f"... {i + 1}/{games} games, {len(bad)} disagreements, "
                  f"{time.monotonic() - started:.1f}s", file=out, flush=True)
    if verbose:
        print(f"{moves} moves compared, {passes} passes", file=out)
    print(f"{games} games, {len(bad)} disagreements", file=out)
    return games, len(bad), bad


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="domino crosscheck",
        description="Play seeded 2-player block games in our engine and OpenSpiel's "
                    "python_block_dominoes and compare them move by move (RULES.md BL).")
    parser.add_argument("--games", type=int, default=100, help="how many games (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the run (default 0)")
    parser.add_argument("--progress", type=int, default=None,
                        help="print a progress line every K games (default: every 1000 when N > 1000)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every disagreement")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.games < 1:
        parser.error("--games must be at least 1")
    progress = args.progress if args.progress is not None else (1000 if args.games > 1000 else 0)
    try:
        import pyspiel  # type: ignore[import-not-found,import-untyped,unused-ignore]  # noqa: F401
        from open_spiel.python.games import (  # type: ignore[import-not-found,import-untyped,unused-ignore]  # noqa: F401
            block_dominoes,
        )
    except ImportError as exc:
        print(f"OpenSpiel is not installed ({exc}): pip install open_spiel", file=sys.stderr)
        return 2
    _, bad, _ = run(args.games, args.seed, progress=progress, verbose=args.verbose)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
