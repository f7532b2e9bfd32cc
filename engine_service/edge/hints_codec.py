"""The coach's answer (`engine_service.bots.hints`) as the typed face's `HintsResponse`.

The coach answers a plain dict, one shape per game kind (docs/bots.md "The coach"):
a matching game's (`bots/matching/coach.py`) and Kingdomino's
(`bots/kingdomino/coach.py`). The JSON face sends that dict as it is; the typed face
writes it into the message of its kind, field for field, so both faces answer the
same numbers (a test holds them equal).
"""
from __future__ import annotations

from typing import Any

from domino.v1 import engine_pb2 as pb

__all__ = ["hints_to_proto"]


def _match_hints(hints: dict[str, Any]) -> pb.MatchHints:
    return pb.MatchHints(
        seat=hints["seat"], worlds=hints["worlds"], history_used=hints["history_used"],
        proven_missing=[pb.Numbers(numbers=numbers) for numbers in hints["proven_missing"]],
        whereabouts={tile: pb.TileWhereabouts(hands=where["hands"], boneyard=where["boneyard"])
                     for tile, where in hints["whereabouts"].items()},
        values=hints["values"], relaxed=hints["relaxed"])


def _kingdomino_hints(hints: dict[str, Any]) -> pb.KingdominoHints:
    return pb.KingdominoHints(player=hints["player"], pile={int(t): p for t, p in hints["pile"].items()},
                              values=hints["values"])


def hints_to_proto(kind: str, hints: dict[str, Any]) -> pb.HintsResponse:
    """`hints` in the field of `HintsResponse.kind` named `kind` (``match`` or ``kingdomino``)."""
    if kind == "kingdomino":
        return pb.HintsResponse(kingdomino=_kingdomino_hints(hints))
    return pb.HintsResponse(match=_match_hints(hints))
