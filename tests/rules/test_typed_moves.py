"""The typed move path the bots play through: `Round.legal_moves` and `Round.apply_move`.

They must be the string path's exact twins: the same moves in the same order
(`legal_moves` looks `legal_actions` up in `notation.MOVES`, and parses a move of
several doubles), and applying a move typed or as its string leaves identical
rounds and events.
"""
from __future__ import annotations

import random

import pytest

from engine_service.rules import Match
from engine_service.rules.notation import (
    CLOSE_MOVE,
    LEAD_MOVE,
    MOVE_TEXT,
    PLAY_MOVE,
    format_action,
    move_text,
    parse_action,
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
            assert [move_text(m) for m in moves] == texts
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
        assert LEAD_MOVE[t] == parse_action(MOVE_TEXT[LEAD_MOVE[t]])  # equal (the compiled build copies)
        for arm in range(4):
            assert PLAY_MOVE[t][arm] == parse_action(MOVE_TEXT[PLAY_MOVE[t][arm]])
            close = CLOSE_MOVE[t][arm]
            assert (close is not None) == IS_DOUBLE[t]
            if close is not None:
                assert close == parse_action(MOVE_TEXT[close]) and close[1][0][2]
    assert move_text(parse_action("6-3")) == "6-3"
    assert move_text(parse_action("5-5@W+2-2@E")) == format_action(parse_action("2-2@E+5-5@W"))
