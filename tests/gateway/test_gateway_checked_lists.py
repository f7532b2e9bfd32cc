"""`schemas.CheckedList`'s fast lane loads exactly what `fields.List` loads, and refuses alike.

Every list field of the state schemas is a `CheckedList`; each is compared here
with the plain `fields.List` it replaces (same inner field, same validators) on
generated values: lists of one kind (tiles, placements, integers, hands), some
with one item swapped for an odd one (a near-tile, an integer past a bound, a
boolean, null, a nested list), and values that are not lists at all.
"""
from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import ValidationError, fields

from api_gateway import schemas
from api_gateway.schemas import CheckedList


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


def _load(field: fields.Field[Any], value: Any) -> tuple[str, Any]:
    try:
        return ("ok", field.deserialize(value))
    except ValidationError as exc:
        return ("refused", exc.messages)


def test_every_state_list_has_the_fast_lane() -> None:
    paths = {path for path, _ in LISTS}
    assert {"RoundSchema.hands", "RoundSchema.hands[]", "RoundSchema.boneyard", "RoundSchema.layout",
            "LedgerSchema.written", "MatchStateSchema.rating", "RoundRecordSchema.out"} <= paths


@settings(max_examples=1500, deadline=None)
@given(index=st.integers(min_value=0, max_value=len(LISTS) - 1), value=_values())
def test_the_fast_lane_loads_and_refuses_as_fields_list_does(index: int, value: Any) -> None:
    path, field = LISTS[index]
    fast, plain = _load(field, value), _load(_plain(field), value)
    assert fast == plain, path
    if fast[0] == "ok" and isinstance(value, list):
        assert fast[1] is not value  # a copy: the caller's list is never shared
