"""A state whose numbers are near what a state may hold plays no further, however it was decoded.

`Match.at_limit` is derived, not carried: the dict form (`match_form.decode`) and the
gRPC codec (`wire.decode_state`, through `match_form.decode_tiles`) both compute it, so
that no answer ever holds a number the decoder would refuse (`match_state.HEADROOM`).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from engine_service.edge import wire
from engine_service.rules import IllegalActionError, Match
from engine_service.rules.checks import INT_LIMIT
from engine_service.rules.match_state import HEADROOM


def _block_at(score: int) -> dict[str, Any]:
    """A dealt 2-player block state whose seat 0 has `score` points (block's score is its written points):
    a match set up that high deals no round, so the points are written into a dealt state."""
    match, _ = Match.new("block", 2, seed=4)
    state = match.to_dict()
    state["ledger"]["written"] = state["ledger"]["scores"] = [score, 0]
    return state


def _through_wire(state: dict[str, Any]) -> Match:
    """The state as the gRPC codec reads it (`decode_tiles`), from the bytes it writes."""
    checked = Match.from_dict(state)
    checked.at_limit = False  # what wire writes does not carry it: decoding must find it again
    return wire.decode_state(wire.encode_state(checked))


DECODERS: dict[str, Callable[[dict[str, Any]], Match]] = {"dict": Match.from_dict, "wire": _through_wire}


@pytest.mark.parametrize("decode", DECODERS.values(), ids=DECODERS.keys())
def test_a_decoded_state_at_the_limit_refuses_to_play_and_stays_as_it_was(decode: Callable[[dict[str, Any]], Match]) -> None:
    match = decode(_block_at(INT_LIMIT - HEADROOM + 1))
    assert match.at_limit
    before = match.to_dict()
    action = match.legal_actions()[0]
    with pytest.raises(IllegalActionError, match="at the limit"):
        match.apply(action)
    assert match.to_dict() == before


@pytest.mark.parametrize("decode", DECODERS.values(), ids=DECODERS.keys())
def test_a_decoded_state_just_below_the_limit_plays(decode: Callable[[dict[str, Any]], Match]) -> None:
    match = decode(_block_at(INT_LIMIT - HEADROOM))
    assert not match.at_limit
    match.apply(match.legal_actions()[0])
    assert match.round is not None and match.round.layout.placements
