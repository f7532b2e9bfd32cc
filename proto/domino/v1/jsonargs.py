"""The JSON face's arguments: which keys each call takes, and how deep they may nest.

`domino.v1.JsonEngine` takes its arguments as JSON (engine.proto, "the JSON
face"), and the REST gateway forwards request bodies there. Both faces are one
contract: a JSON call takes the fields of the typed `Engine` request of the same
name, read here from the protobuf descriptors (`ARGUMENTS`), so that a field added
to a typed request is a JSON argument too, with no list to keep by hand. Where the
two encodings differ, `DIFFERENCES` says how and why (tests/test_contract.py holds
the faces and the gateway's request schemas to it).

No body of the API nests deeper than six levels (a transparent state); anything
far deeper is hostile input, refused by both sides before anything reads it (deep
nesting costs nothing to send and a stack to take apart). Part of the contract
package, so the engine and the gateway check the same limit with the same code.

>>> too_deep([[[]]], limit=3), too_deep([[[[]]]], limit=3)
(False, True)
>>> sorted(ARGUMENTS["Apply"])
['action', 'seat', 'seat_lines', 'state', 'view_as']
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from domino.v1 import engine_pb2 as pb

__all__ = ["ARGUMENTS", "DIFFERENCES", "MAX_BATCH", "MAX_DEPTH", "SEALED", "Difference", "too_deep"]

#: Deeper than any argument of the API, far below any stack limit.
MAX_DEPTH = 32

#: The most calls one `JsonEngine/Batch` carries (a gateway worker has a few dozen requests in flight at the most).
MAX_BATCH = 64

#: The sealed mode's envelope, JSON face only: who looks at the answer (`view_as`: a seat or "host") and
#: whether to answer every viewer's line (`seat_lines`). The typed face carries a state its caller may read
#: whole, so it has no viewer (its Apply's `view_as` only adds that seat's view to the answer).
SEALED = frozenset({"view_as", "seat_lines"})

#: The state types of the calls on a game, which the JSON face also takes sealed (with `SEALED`).
_GAME_STATES = frozenset({pb.MatchState.DESCRIPTOR.full_name, pb.GameState.DESCRIPTOR.full_name})


@dataclass(frozen=True)
class Difference:
    """Where a JSON call's arguments differ from its typed request's fields: `json_only` are taken by the
    JSON face alone, `typed_only` by the typed request alone, for `reason`."""

    json_only: frozenset[str]
    typed_only: frozenset[str]
    reason: str


_RECORD_FORMS = ("a record travels in its JSON form (`record`) or its text form (`text`) on the JSON face; the "
                 "typed face carries the text form only, which holds the same record (docs/records.md)")

#: Every listed difference between the two encodings (beyond the sealed envelope of every call on a game).
DIFFERENCES: dict[str, Difference] = {
    "NewMatch": Difference(
        SEALED | {"setup"}, frozenset({"written", "remembered", "pot", "scores"}),
        "the match before its first round is one JSON object, `setup` ({written, remembered, pot, scores}: "
        "the conformance scenarios' form), and flat fields of NewMatchRequest; a new match is sealed when "
        "its `view_as` is given"),
    "ImportRecord": Difference(frozenset({"record"}), frozenset(), _RECORD_FORMS),
    "ReplayRecord": Difference(frozenset({"record"}), frozenset(), _RECORD_FORMS),
}


def _arguments() -> dict[str, frozenset[str]]:
    """Each JSON call's argument keys: its typed request's field names, with the sealed envelope for a call
    on a game, and the listed differences."""
    typed = pb.DESCRIPTOR.services_by_name["Engine"].methods_by_name
    out: dict[str, frozenset[str]] = {}
    for method in pb.DESCRIPTOR.services_by_name["JsonEngine"].methods:
        if method.input_type.name != "JsonCall":  # Batch: calls of the others, not JSON arguments of its own
            continue
        request = typed[method.name].input_type
        keys = set(request.fields_by_name)
        state = request.fields_by_name.get("state")
        if state is not None and state.message_type is not None and state.message_type.full_name in _GAME_STATES:
            keys |= SEALED
        difference = DIFFERENCES.get(method.name)
        if difference is not None:
            keys = (keys - difference.typed_only) | difference.json_only
        out[method.name] = frozenset(keys)
    return out


#: JSON call name -> the argument keys it takes (any other key is refused, naming it).
ARGUMENTS: dict[str, frozenset[str]] = _arguments()


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether `value` (parsed JSON: dicts, lists, scalars) nests more than `limit` levels; no recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if type(item) is dict else item if type(item) is list else ()
        for child in children:
            if type(child) is dict or type(child) is list:
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False
