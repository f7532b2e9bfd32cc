"""A sealed game's bytes: a serialized `GameState`, whose `kind` says which game it holds.

The JSON face's sealed calls carry a game of either kind in the same bytes
(`JsonCall.state`, `JsonAnswer.state`): a `GameState` with one field set, ``match``
(16: a MatchState, `wire`) or ``kingdomino`` (17: a KingdominoState,
`kingdomino_codec`). Which field is set is the game's kind, said by the state
itself: nothing is told from the bytes of the state inside. `encode` writes the
canonical encoding (the one field, as protobuf's deterministic serializer writes
it); `decode` reads the field and hands what it holds to its kind's codec.

Earlier releases sealed the bare MatchState or KingdominoState. Neither message
uses field 16 or 17, so such bytes are a GameState with no kind: they are read by
their ``variant`` (field 1 of both messages) through the registry of games
(`rules.game_class`), as a JSON state is, so tokens written before still play.
Bytes that are neither go to the MatchState reader, which refuses them in its
own words (as every sealed state that was not a Kingdomino one did before).

>>> from engine_service.rules import Kingdomino, Match
>>> match, _ = Match.new("kozel", 4, seed=3)
>>> data = encode(match)
>>> pb.GameState.FromString(data).WhichOneof("kind"), decode(data).to_dict() == match.to_dict()
('match', True)
>>> game_class(encode(Kingdomino.new(2, seed=3)[0])).__name__
'Kingdomino'
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from domino.v1 import engine_pb2 as pb

from engine_service.edge import kingdomino_codec, wire
from engine_service.edge.wire import _Odd, _varint, _varint_at  # the one varint reader and writer
from engine_service.rules import Game, Kingdomino, MalformedError, Match
from engine_service.rules import game_class as class_of_variant

__all__ = ["decode", "encode", "game_class"]

GameClass = type[Match] | type[Kingdomino]


class _Kind:
    """One field of `GameState.kind`: its number, the class it holds and that class's codec."""

    __slots__ = ("number", "cls", "tag", "encode", "decode")

    def __init__(self, field: str, cls: GameClass, encode: Callable[[Any], bytes],
                 decode: Callable[[bytes], Game]) -> None:
        self.number: int = pb.GameState.DESCRIPTOR.fields_by_name[field].number
        self.cls = cls
        self.tag = _varint(self.number << 3 | 2)  # length-delimited
        self.encode = encode
        self.decode = decode


_KINDS = (_Kind("match", Match, wire.encode_state, wire.decode_state),
          _Kind("kingdomino", Kingdomino, kingdomino_codec.encode_state, kingdomino_codec.decode_state))
_BY_CLASS: dict[type, _Kind] = {k.cls: k for k in _KINDS}
_BY_NUMBER: dict[int, _Kind] = {k.number: k for k in _KINDS}
_VARIANT = 1  # field 1 of MatchState and KingdominoState: what a bare state of an earlier release is read by


def encode(game: Game) -> bytes:
    """The game's sealed bytes: a GameState holding its state in its kind's field."""
    kind = _BY_CLASS[type(game)]
    inner = kind.encode(game)
    return kind.tag + _varint(len(inner)) + inner


class _NotOne(Exception):
    """The bytes are not a well-formed protobuf message at the top level."""


def _split(data: bytes) -> tuple[_Kind, bytes]:
    """The kind the bytes hold and the bytes of its state: the GameState's `kind` field, or for a bare
    state of an earlier release (no `kind`) the class its `variant` names, and the bytes as they are."""
    variant: bytes | None = None
    try:
        i, n = 0, len(data)
        while i < n:
            start = i
            key, i = _varint_at(data, i)
            number, wire_type = key >> 3, key & 7
            if wire_type == 2:
                size, i = _varint_at(data, i)
                end = i + size
                if end > n:
                    raise _NotOne
                kind = _BY_NUMBER.get(number)
                if kind is not None:
                    if start != 0 or end != n:
                        raise MalformedError("state: not a sealed game (a GameState holds one game, alone)")
                    return kind, data[i:end]
                if number == _VARIANT and variant is None:
                    variant = data[i:end]
                i = end
            elif wire_type == 0:
                _, i = _varint_at(data, i)
            elif wire_type == 1 or wire_type == 5:
                i += 8 if wire_type == 1 else 4
            else:
                raise _NotOne
    except (_NotOne, _Odd):  # _Odd: a varint the MatchState reader would not take either
        variant = None  # not a message at all: the MatchState reader refuses it
    name = variant.decode("utf-8", "replace") if variant is not None else None
    return _BY_CLASS[class_of_variant(name)], data


def decode(data: bytes) -> Game:
    """The game of sealed bytes, read by its kind's codec (MalformedError naming the field if not one)."""
    kind, inner = _split(data)
    return kind.decode(inner)


def game_class(data: bytes) -> GameClass:
    """The class of the game sealed bytes hold, without reading its state (see `decode`)."""
    return _split(data)[0].cls
