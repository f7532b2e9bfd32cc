"""A record's entries carry their typed move (issue 26): read once when the record is read, at the edge,
and replayed as a value; the record's two forms are unchanged by it."""
from __future__ import annotations

import random

import pytest

from engine_service import records
from engine_service.records import Entry
from engine_service.records.model import TABLE_VERBS
from engine_service.rules import Kingdomino, Match
from engine_service.rules.kingdomino_notation import KingdominoMove
from engine_service.rules.notation import Move


def _played_match(variant: str, players: int, seed: int) -> Match:
    match, _ = Match.new(variant, players, seed=seed)
    rng = random.Random(seed)
    for _ in range(2):
        while match.round is not None and not match.round.over:
            match.apply(rng.choice(match.legal_actions()))
        if match.match_over:
            break
        match.start_round()
    return match


def _played_kingdomino(seed: int) -> Kingdomino:
    game, _ = Kingdomino.new(3, {}, seed=seed)
    rng = random.Random(seed)
    while not game.game_over:
        game.apply(rng.choice(game.legal_actions()))
    return game


GAMES = [("osel", 4), ("all-fives", 2), ("kozel", 4), ("block", 2)]


@pytest.mark.parametrize("variant,players", GAMES)
def test_each_entry_carries_the_move_its_step_names(variant: str, players: int) -> None:
    record = records.export(_played_match(variant, players, 3))
    for read in (record, records.from_text(records.to_text(record)), records.from_json(records.to_json(record))):
        assert all(type(e) is Entry for e in read.moves)
        for entry in read.moves:
            if entry.step.split(" ", 1)[0] in TABLE_VERBS:
                assert entry.move is None
            else:
                assert type(entry.move) is Move and entry.move.text() == entry.step
        assert records.to_text(read) == records.to_text(record)


def test_a_kingdomino_entry_carries_a_kingdomino_move() -> None:
    record = records.from_text(records.to_text(records.export(_played_kingdomino(5))))
    moves = [e.move for e in record.moves[1:]]
    assert moves and all(type(m) is KingdominoMove for m in moves)
    assert [m.text() for m in moves if m is not None] == [e.step for e in record.moves[1:]]


@pytest.mark.parametrize("variant,players", GAMES)
def test_replay_reads_no_step_again(variant: str, players: int, monkeypatch: pytest.MonkeyPatch) -> None:
    match = _played_match(variant, players, 4)
    text = records.to_text(records.export(match))
    record = records.from_text(text)

    def no_parsing(cls: type, action: object) -> Move:
        raise AssertionError(f"{action!r} parsed again")

    monkeypatch.setattr(Move, "parse", classmethod(no_parsing))
    monkeypatch.setattr(KingdominoMove, "parse", classmethod(no_parsing))
    assert records.replay(record).to_dict() == match.to_dict()
    records.check(record)


def test_a_step_that_names_no_move_is_refused_at_its_line_as_before() -> None:
    record = records.export(_played_match("block", 2, 1))
    text = records.to_text(record).replace(f" {record.moves[3].step}\n", " 9-9@E\n", 1)
    read = records.from_text(text)
    assert read.moves[3].move is None
    with pytest.raises(records.RecordError, match="move 4") as caught:
        records.replay(read)
    assert caught.value.kind == "malformed"


def test_a_kingdomino_replay_reads_no_step_again(monkeypatch: pytest.MonkeyPatch) -> None:
    game = _played_kingdomino(6)
    record = records.from_text(records.to_text(records.export(game)))

    def no_parsing(cls: type, action: object) -> KingdominoMove:
        raise AssertionError(f"{action!r} parsed again")

    monkeypatch.setattr(KingdominoMove, "parse", classmethod(no_parsing))
    assert records.replay(record).to_dict() == game.to_dict()
