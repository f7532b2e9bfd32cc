"""The exits of a match (issue 37) in its record: ``resign N``, ``gone N`` and ``abort N`` are the table's
steps, written by ExportRecord, read back in both forms, replayed (ImportRecord, ReplayRecord) and
checked in a seat's or a spectator's record; a step that does not fit is refused naming its move."""
from __future__ import annotations

import random

import pytest

from engine_service import records
from engine_service.records import RecordError
from engine_service.records.model import TABLE_VERBS
from engine_service.rules import Game, Kingdomino, Match

HOWS = ["resign", "gone", "abort"]


def _ended(variant: str, players: int, how: str, seat: int, moves: int = 30) -> Game:
    """A game `moves` random moves in (a round ended on the way is dealt again), then ended by `how`."""
    rng = random.Random(moves)
    game: Game
    if variant == "kingdomino":
        game, _ = Kingdomino.new(players, seed=5)
    else:
        game, _ = Match.new(variant, players, options={"teams": True} if players == 4 else None, seed=5)
    for _ in range(moves):
        if isinstance(game, Match) and game.round is not None and game.round.over:
            game.start_round()
        if game.finished or game.turn is None:
            break
        game.apply(rng.choice(game.legal_actions()))
    game.end(how, seat)
    return game


CASES = [("kozel", 2), ("all-fives", 2), ("all-fives", 4), ("kingdomino", 3)]


def test_the_exits_are_the_tables_steps() -> None:
    assert {"resign", "gone", "abort", "timeout"} <= set(TABLE_VERBS)


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize(("variant", "players"), CASES)
def test_a_full_record_holds_the_exit_and_replays_to_the_same_end(variant: str, players: int, how: str) -> None:
    game = _ended(variant, players, how, players - 1)
    record = records.export(game)
    last = record.moves[-1]
    assert (last.seat, last.step, last.move) == (None, f"{how} {players - 1}", None)
    assert last.events[0]["type"] == {"resign": "resigned", "gone": "gone", "abort": "aborted"}[how]
    assert record.result == game.result()
    for read in (records.from_text(records.to_text(record)), records.from_json(records.to_json(record))):
        assert read == record
        assert records.replay(read).to_dict() == game.to_dict()
        assert records.replay(read, len(read.moves) - 1).finished is False


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize(("variant", "players"), CASES)
def test_a_seats_and_a_spectators_record_with_an_exit_check(variant: str, players: int, how: str) -> None:
    game = _ended(variant, players, how, 0)
    for view in ("spectator", "seat 1"):
        record = records.export(game, view)
        assert record.moves[-1].step == f"{how} 0"
        records.check(records.from_text(records.to_text(record)))


@pytest.mark.parametrize("step", ["resign x", "gone", "abort -1", "resign ٣"])
def test_an_exit_step_without_a_seat_is_refused_naming_its_move(step: str) -> None:
    record = records.export(_ended("kozel", 2, "resign", 1))
    text = records.to_text(record).replace("- resign 1", f"- {step}")
    with pytest.raises(RecordError) as refused:
        records.replay(records.from_text(text))
    assert refused.value.move == len(record.moves)


def test_an_exit_of_a_seat_out_of_range_or_after_the_end_is_refused() -> None:
    record = records.export(_ended("all-fives", 2, "abort", 1))
    text = records.to_text(record)
    with pytest.raises(RecordError, match="seat must be a seat 0..1, not 5"):
        records.replay(records.from_text(text.replace("- abort 1", "- abort 5")))
    moves = records.to_json(record)
    moves["moves"].append({**moves["moves"][-1], "n": len(record.moves) + 1})  # a second exit, once over
    moves["result"] = None
    with pytest.raises(RecordError, match="the match is over"):
        records.replay(records.from_json(moves))


def test_an_exit_recorded_as_a_seats_move_is_refused() -> None:
    record = records.export(_ended("kingdomino", 2, "gone", 0))
    text = records.to_text(record).replace("- gone 0", "S1 gone 0")
    with pytest.raises(RecordError, match="the table"):
        records.replay(records.from_text(text))
