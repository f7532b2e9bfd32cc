"""`schemas.CheckedNested`'s fast lane loads a state exactly as `fields.Nested` does, and refuses alike.

States are taken at random decisions of seeded random matches of every preset
(so every field of the state schemas appears, ledger history included), then
some are altered at one random place: a value swapped for an odd one (another
type, a number past its bounds, null), a key removed, or an unknown key added.
"""
from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from marshmallow import ValidationError, fields

from api_gateway import schemas
from api_gateway.schemas import CheckedNested
from engine_service.rules import PRESETS, Match

ODD_VALUES: list[Any] = [None, True, False, 0, -1, 7, 2**31, 2**32, 2**64, -(2**31) - 1, 1.5, "", "3-6", "x" * 201,
                         "out", [], ["3-6"], [1, 2], {}, {"a": 1}]


def _states() -> list[dict[str, Any]]:
    out = []
    for name, preset in PRESETS.items():
        for players in {preset.min_players, preset.max_players}:
            rng = random.Random(f"{name}-{players}")
            match, _ = Match.new(name, players, seed=rng.randrange(2**32))
            for _ in range(3):  # three rounds: the ledger's history fills in
                actions = match.legal_actions()
                while actions:
                    if rng.random() < 0.15:
                        out.append(match.to_dict())
                    match.apply(rng.choice(actions))
                    actions = match.legal_actions()
                out.append(match.to_dict())
                if match.match_over:
                    break
                match.start_round()
    return out


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside a JSON document."""
    found = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            found += _places(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += _places(v, (*path, i))
    return found


def _altered(state: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    state = copy.deepcopy(state)
    path = rng.choice(_places(state)[1:])
    parent = state
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    choice = rng.randrange(4)
    if choice == 0 and isinstance(parent, dict):
        del parent[last]
    elif choice == 1 and isinstance(parent, dict):
        parent["unknown_key"] = 1
    else:
        parent[last] = copy.deepcopy(rng.choice(ODD_VALUES))
    return state


def _load(field: fields.Field[Any], value: Any) -> tuple[str, Any]:
    try:
        return ("ok", field.deserialize(value))
    except ValidationError as exc:
        return ("refused", exc.messages)


STATES = _states()


def test_the_states_cover_every_field() -> None:
    assert len(STATES) > 100
    assert any(s["ledger"]["history"] for s in STATES) and any(s["round"]["over"] for s in STATES)


@pytest.mark.parametrize("seed", range(4))
def test_the_fast_lane_loads_states_as_fields_nested_does(seed: int) -> None:
    fast = CheckedNested(schemas.MatchStateSchema)
    plain = fields.Nested(schemas.MatchStateSchema)
    rng = random.Random(seed)
    plain_states = 0
    for state in STATES:
        value = state if rng.random() < 0.3 else _altered(state, rng)
        a, b = _load(fast, value), _load(plain, value)
        assert a == b, value
        plain_states += a[0] == "ok"
        if a[0] == "ok":
            assert a[1] is not value  # a copy, never the caller's object
            if value.get("round") is not None:
                assert a[1]["round"] is not value["round"]
                if "hands" in value["round"]:
                    assert a[1]["round"]["hands"] is not value["round"]["hands"]
    assert plain_states > len(STATES) // 4  # the fast lane was taken (valid states) and refused states compared


def test_a_valid_state_takes_the_fast_lane() -> None:
    field = CheckedNested(schemas.MatchStateSchema)
    field.deserialize(STATES[0])
    assert callable(field._plain)  # the loaders were made: no field kind of the schemas is unknown to them
