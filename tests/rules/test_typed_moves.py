"""The typed move path the bots play through: `Round.legal_moves` and `Round.apply_move`.

They must be the string path's exact twins: the same moves in the same order
(`legal_moves` looks `legal_actions` up in `notation.MOVES`, and parses a move of
several doubles), and applying a move typed or as its string leaves identical
rounds and events.
"""
from __future__ import annotations

import random

import pytest

from engine_service.rules import Kingdomino, Match
from engine_service.rules.kingdomino_notation import KingdominoMove
from engine_service.rules.notation import (
    CLOSE_MOVE,
    LEAD_MOVE,
    MOVE_TEXT,
    PLAY_MOVE,
    Move,
)
from engine_service.rules.registry import PRESETS
from engine_service.rules.tiles import IS_DOUBLE


@pytest.mark.parametrize("variant", sorted(PRESETS))
def test_typed_path_matches_the_string_path(variant: str) -> None:
    rng = random.Random(variant)
    p = PRESETS[variant]
    for seed in range(40):
        players = rng.randint(p.min_players, p.max_players)
        a, _ = Match.new(variant, players, seed=seed)
        b, _ = Match.new(variant, players, seed=seed)
        while a.round is not None and not a.round.over and not a.match_over:
            ra, rb = a.round, b.round
            assert rb is not None
            texts = ra.legal_actions()
            moves = rb.legal_moves()
            assert [m.text() for m in moves] == texts
            i = rng.randrange(len(texts))
            ev_a: list[dict[str, object]] = []
            ev_b: list[dict[str, object]] = []
            ended_a = ra.apply(texts[i], ev_a)
            ended_b = rb.apply_move(moves[i], ev_b)
            assert (ended_a, ev_a) == (ended_b, ev_b)
            assert a.to_dict() == b.to_dict()
            if ended_a:
                break


def test_move_tables_are_the_parsed_values() -> None:
    for t in range(28):
        assert LEAD_MOVE[t] == Move.parse(MOVE_TEXT[LEAD_MOVE[t]])  # equal (the compiled build copies)
        for arm in range(4):
            assert PLAY_MOVE[t][arm] == Move.parse(MOVE_TEXT[PLAY_MOVE[t][arm]])
            close = CLOSE_MOVE[t][arm]
            assert (close is not None) == IS_DOUBLE[t]
            if close is not None:
                assert close == Move.parse(MOVE_TEXT[close]) and close[1][0][2]
    assert Move.parse("6-3").text() == "6-3"
    assert Move.parse("5-5@W+2-2@E").text() == Move.parse("2-2@E+5-5@W").text()


@pytest.mark.parametrize("variant", sorted(PRESETS))
def test_every_legal_move_is_a_value_whose_text_reads_back(variant: str) -> None:
    # issue 26: a move is a value (python-chess's Move.uci / from_uci): every legal move of random rounds
    # is a `Move`, its text is the legal action string and parses back to the same value.
    rng = random.Random(f"values {variant}")
    p = PRESETS[variant]
    for seed in range(25):
        match, _ = Match.new(variant, rng.randint(p.min_players, p.max_players), seed=seed)
        rnd = match.round
        while rnd is not None and not rnd.over:
            texts, moves = rnd.legal_actions(), rnd.legal_moves()
            for text, move in zip(texts, moves, strict=True):
                assert type(move) is Move and move.text() == text and Move.parse(text) == move
                assert Move.parse(move.text()) is not None and Move(*move) == move
            match.apply(texts[rng.randrange(len(texts))])


@pytest.mark.parametrize("options", [{}, {"dynasty": True}, {"mighty_duel": True}])
def test_every_legal_kingdomino_move_is_a_value_whose_text_reads_back(options: dict[str, object]) -> None:
    rng = random.Random(f"kingdomino {options}")
    for seed in range(4):
        players = 2 if options.get("mighty_duel") else rng.randint(2, 4)
        game, _ = Kingdomino.new(players, options, seed=seed)
        while not game.game_over:
            texts = game.legal_actions()
            for text in texts:
                move = KingdominoMove.parse(text)
                assert move.text() == text and KingdominoMove.parse(move.text()) == move
            text = texts[rng.randrange(len(texts))]
            game.apply_move(KingdominoMove.parse(text))
            assert game.log[-1] == text
