"""The archive's reading of a record ended by an exit (issue 37; api_gateway/archive/results.py, pure):

- a seat that resigned or was gone (``resign N``, ``gone N``) has its side placed last on its own, as a
  timed-out one (`FinishedMatch.timed_out` names it);
- an aborted record (``abort N``) is told (`FinishedMatch.aborted`, from the steps, kept nowhere else):
  no result, every side shares the place, and it rates nobody even with two people seated.
"""
from __future__ import annotations

from typing import Any

import pytest

from api_gateway.archive.results import FinishedMatch, aborted, finished_match
from archive.helpers import engine_record, families
from engine_service.rules import Game, Kingdomino, Match

ALICE, BOB, CAROL, DAN = "app:alice", "app:bob", "app:carol", "app:dan"


def _ended(variant: str, players: int, how: str, seat: int, options: dict[str, Any] | None = None) -> Game:
    """A few moves in (Kingdomino: far enough that the kingdoms score apart), then ended by `how`."""
    game: Game
    if variant == "kingdomino":
        game, _ = Kingdomino.new(players, seed=3)
    else:
        game, _ = Match.new(variant, players, options=options, seed=3)
    for _ in range(4 if isinstance(game, Match) else 20):
        game.apply(game.legal_actions()[0])
    game.end(how, seat)
    return game


def _finished(game: Game, people: list[str | None]) -> FinishedMatch:
    finished = finished_match("m-1", people, engine_record(game), families)
    assert FinishedMatch.from_json(finished.to_json()) == finished  # what waits in the outbox keeps it all
    return finished


@pytest.mark.parametrize("how", ["resign", "gone"])
def test_a_partnership_whose_seat_resigned_is_placed_last(how: str) -> None:
    """All Fives in partnerships, seat 1 resigns: side 1 (seats 1 and 3) is second, side 0 first."""
    finished = _finished(_ended("all-fives", 4, how, 1, {"teams": True}), [ALICE, BOB, CAROL, DAN])
    assert finished.timed_out == 1 and not finished.aborted and finished.rated
    assert [(s.side, s.place, s.points) for s in finished.seats] == [(0, 1, 0), (1, 2, 0), (0, 1, 0), (1, 2, 0)]


@pytest.mark.parametrize("how", ["resign", "gone"])
def test_a_kozel_resign_is_placed_and_rated_as_a_timeout(how: str) -> None:
    """Kozel for three: the resigning seat is last on its own, the others ranked by their rating points."""
    game = _ended("kozel", 3, how, 2)
    aborted_game = _ended("kozel", 3, "abort", 0)
    assert isinstance(game, Match)
    finished = _finished(game, [ALICE, BOB, CAROL])
    assert finished.timed_out == 2 and finished.seats[2].place == 3 and finished.seats[2].points == 0
    assert [s.points for s in finished.seats] == game.rating and all(p >= 1 for p in game.rating[:2])
    assert _finished(aborted_game, [ALICE, BOB, CAROL]).timed_out is None


def test_a_block_resign_of_three_places_the_seat_last_and_the_others_together() -> None:
    finished = _finished(_ended("block", 3, "resign", 0), [ALICE, BOB, None])
    assert [s.place for s in finished.seats] == [3, 1, 1]


@pytest.mark.parametrize(("variant", "players", "options"), [("kozel", 2, None), ("all-fives", 4, {"teams": True}),
                                                            ("kingdomino", 3, None)])
def test_an_aborted_record_is_told_and_rates_nobody(variant: str, players: int, options: dict[str, Any] | None) -> None:
    people: list[str | None] = [ALICE, BOB, CAROL, DAN][:players]
    game = _ended(variant, players, "abort", 0, options)
    if isinstance(game, Kingdomino):
        assert len(set(game.scores())) > 1  # scores that would rank the players, had the game a result
    finished = _finished(game, people)
    assert finished.aborted and not finished.rated and finished.timed_out is None
    assert {s.place for s in finished.seats} == {1} and all(s.points == 0 for s in finished.seats)


def test_only_a_record_that_ends_with_an_abort_is_aborted() -> None:
    assert aborted([{"step": "new"}, {"step": "abort 1"}])
    assert not aborted([{"step": "new"}, {"step": "resign 1"}])
    assert not aborted([{"step": "abort 1"}, {"step": "3-6"}])
    assert not aborted([{"step": "abort x"}]) and not aborted([]) and not aborted(None) and not aborted(["abort 1"])
    finished = _finished(_ended("all-fives", 2, "resign", 0), [ALICE, BOB])
    assert not finished.aborted and finished.rated and [s.place for s in finished.seats] == [2, 1]
