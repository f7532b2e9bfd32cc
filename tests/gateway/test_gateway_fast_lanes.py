"""The gateway's fast lanes load exactly what marshmallow loads, and refuse alike.

`schemas.CheckedList` against the plain `fields.List` it replaces (same inner
field, same validators), on generated values: lists of one kind (tiles,
placements, integers, hands), some with one item swapped for an odd one (a
near-tile, an integer past a bound, a boolean, null, a nested list), and values
that are not lists at all.

`schemas.CheckedNested` against `fields.Nested`, on states taken at random
decisions of seeded random matches of every preset (so every field of the state
schemas appears, ledger history included), some altered at one random place: a
value swapped for an odd one (another type, a number past its bounds, null), a
key removed, or an unknown key added.
"""
from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import ValidationError, fields

from api_gateway import schemas
from api_gateway.schemas import CheckedList, CheckedNested
from engine_service.rules import PRESETS, Match


def _load(field: fields.Field[Any], value: Any) -> tuple[str, Any]:
    try:
        return ("ok", field.deserialize(value))
    except ValidationError as exc:
        return ("refused", exc.messages)


# ---------------------------------------------------------------- lists


def _list_fields() -> list[tuple[str, CheckedList]]:
    """Every CheckedList of the state schemas (and the CheckedLists inside them), by path."""
    found: list[tuple[str, CheckedList]] = []

    def visit(path: str, field: Any) -> None:
        if isinstance(field, CheckedList):
            found.append((path, field))
            visit(path + "[]", field.inner)

    for schema in (schemas.MatchStateSchema, schemas.RoundSchema, schemas.LedgerSchema,
                   schemas.RoundRecordSchema, schemas.SettleSchema, schemas.DealSchema):
        for name, field in schema().fields.items():
            visit(f"{schema.__name__}.{name}", field)
    return found


def _plain(field: fields.Field[Any]) -> fields.Field[Any]:
    """The same field without the fast lane: CheckedList -> fields.List, all the way down."""
    if isinstance(field, CheckedList):
        return fields.List(_plain(field.inner), validate=field.validators, allow_none=field.allow_none)
    return field


LISTS = _list_fields()

_TILES = [f"{a}-{b}" for a in range(7) for b in range(7)]
_odd = st.one_of(  # items a state list should not hold, or only at its edges
    st.sampled_from(["7-1", "3-6\n", "36", "", "x" * 200, "x" * 201, "3-6@E", "4-4@E!"]),
    st.text(max_size=5),
    st.sampled_from([2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**32 - 1, 2**32, 2**64, -1, 0]),
    st.integers(),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False),
    st.lists(st.sampled_from(_TILES), max_size=29),
    st.sampled_from([["0-0"] * 28, ["0-0"] * 29]),  # a hand at and past its length
)
_tile_lists = st.lists(st.sampled_from(_TILES), max_size=29)
# Lists of one kind (as a state holds them), then at most one item swapped for an odd one.
_lists = st.one_of(
    _tile_lists,
    st.lists(st.sampled_from(["3-6", "3-6@E", "4-4@E!", "x" * 200]), max_size=29),
    st.lists(st.integers(min_value=-(2**31) - 2, max_value=2**32 + 1), max_size=65),
    st.lists(st.integers(min_value=-3, max_value=7), max_size=65),
    st.lists(_tile_lists, max_size=17),
)


@st.composite
def _values(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.one_of(_odd, st.dictionaries(st.text(max_size=2), _odd, max_size=2)))
    value = draw(_lists)
    if value and draw(st.booleans()):
        value[draw(st.integers(0, len(value) - 1))] = draw(_odd)
    return value


def test_every_state_list_has_the_fast_lane() -> None:
    paths = {path for path, _ in LISTS}
    assert {"RoundSchema.hands", "RoundSchema.hands[]", "RoundSchema.boneyard", "RoundSchema.layout",
            "LedgerSchema.written", "MatchStateSchema.rating", "RoundRecordSchema.out"} <= paths
    for path, field in LISTS:
        field.deserialize([])
        assert callable(field._item), path  # its items' loader was made from the inner field


@settings(max_examples=1500, deadline=None)
@given(index=st.integers(min_value=0, max_value=len(LISTS) - 1), value=_values())
def test_the_fast_lane_loads_and_refuses_as_fields_list_does(index: int, value: Any) -> None:
    path, field = LISTS[index]
    fast, plain = _load(field, value), _load(_plain(field), value)
    assert fast == plain, path
    if fast[0] == "ok" and isinstance(value, list):
        assert fast[1] is not value  # a copy: the caller's list is never shared


# ---------------------------------------------------------------- whole states


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
