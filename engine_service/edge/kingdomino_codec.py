"""Kingdomino's typed messages (RULES.md KD): the one codec between `Kingdomino` and its proto form.

`KingdominoState` mirrors the JSON state (`Kingdomino.to_dict`) key for key, so
a state goes from the game to the message through `to_dict`, and from the
message to the game through `Kingdomino.from_dict`, which checks every field
and names it in its refusals (``state.kingdoms[1][3]: ...``): the message is
read into that JSON and nothing here judges it. The view and the events are
written from the rules' own dicts (`Kingdomino.view`, the events of `apply`).

Both faces use this module: the typed one (`domino.v1.Engine`'s Kingdomino
calls) for every message, the JSON face for a sealed game's state
(`encode_state` / `decode_state`, inside a GameState whose `kind` says it is
Kingdomino: `engine_service.edge.game_state`).

>>> from engine_service.rules import Kingdomino
>>> game, _ = Kingdomino.new(2, seed=3)
>>> decode_state(encode_state(game)).to_dict() == game.to_dict()
True
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from domino.v1 import engine_pb2 as pb
from google.protobuf.message import DecodeError

from engine_service.edge.codec import options_from_proto, options_to_proto
from engine_service.rules import Kingdomino, MalformedError
from engine_service.rules.exits import EVENT_TYPES
from engine_service.rules.kingdomino_setup import NAME

__all__ = [
    "NAME",
    "decode_state",
    "deal_from_proto",
    "encode_state",
    "events_to_proto",
    "state_from_proto",
    "state_to_proto",
    "view_to_proto",
]

Json = dict[str, Any]


# ---------------------------------------------------------------- the state


def _row_to_proto(row: Iterable[Json]) -> list[pb.KingdominoRowTile]:
    out = []
    for item in row:
        tile = pb.KingdominoRowTile(tile=item["tile"])
        if item["king"] is not None:
            tile.king = item["king"]
        out.append(tile)
    return out


def _row_from_proto(row: Iterable[pb.KingdominoRowTile]) -> list[Json]:
    return [{"tile": t.tile, "king": t.king if t.HasField("king") else None} for t in row]


def _result_to_proto(r: Json) -> pb.KingdominoResult:
    return pb.KingdominoResult(kingdoms=[pb.KingdominoKingdom(actions=k) for k in r["kingdoms"]],
                               scores=r["scores"], largest_region=r["largest_region"], crowns=r["crowns"],
                               winners=r["winners"], decided_by=r["decided_by"])


def _result_from_proto(r: pb.KingdominoResult) -> Json:
    return {"kingdoms": [list(k.actions) for k in r.kingdoms], "scores": list(r.scores),
            "largest_region": list(r.largest_region), "crowns": list(r.crowns), "winners": list(r.winners),
            "decided_by": r.decided_by}


def _deal_to_proto(d: Json) -> pb.KingdominoDeal:
    return pb.KingdominoDeal(tiles=d["tiles"], kings=d["kings"])


def _deal_from_proto(d: pb.KingdominoDeal) -> Json:
    return {"tiles": list(d.tiles), "kings": list(d.kings)}


def state_to_proto(game: Kingdomino) -> pb.KingdominoState:
    """The game's state as a message (from `to_dict`, key for key)."""
    state = game.to_dict()
    msg = pb.KingdominoState(
        variant=state["variant"], players=state["players"], options=options_to_proto(state["options"]),
        kings=state["kings"], pile=state["pile"], current=_row_to_proto(state["current"]),
        next=_row_to_proto(state["next"]), kingdoms=[pb.KingdominoKingdom(actions=k) for k in state["kingdoms"]],
        log="\n".join(state["log"]))
    if state["seed"] is not None:
        msg.seed = state["seed"]
    if state["picker"] is not None:
        msg.picker = state["picker"]
    if "timed_out" in state:
        msg.timed_out = state["timed_out"]
    if "exit" in state:
        msg.exit = state["exit"]
    for bot in state.get("bots", ()):
        msg.bots.add(seat=bot["seat"], level=bot["level"])
    if "dynasty" in state:
        dynasty = state["dynasty"]
        msg.dynasty.SetInParent()
        msg.dynasty.games.extend(_result_to_proto(r) for r in dynasty["games"])
        msg.dynasty.deals.extend(_deal_to_proto(d) for d in dynasty["deals"])
    return msg


def state_to_dict(msg: pb.KingdominoState) -> Json:
    """A message as the JSON state `Kingdomino.from_dict` reads (nothing checked here)."""
    state: Json = {
        "variant": msg.variant,
        "players": msg.players,
        "options": options_from_proto(NAME, msg.options),
        "seed": msg.seed if msg.HasField("seed") else None,
        "kings": list(msg.kings),
        "pile": list(msg.pile),
        "current": _row_from_proto(msg.current),
        "next": _row_from_proto(msg.next),
        "picker": msg.picker if msg.HasField("picker") else None,
        "kingdoms": [list(k.actions) for k in msg.kingdoms],
        "log": msg.log.split("\n") if msg.log else [],
    }
    if msg.HasField("timed_out"):
        state["timed_out"] = msg.timed_out
    if msg.exit:
        state["exit"] = msg.exit
    if msg.bots:
        state["bots"] = [{"seat": b.seat, "level": b.level} for b in msg.bots]
    if msg.HasField("dynasty"):
        state["dynasty"] = {"games": [_result_from_proto(r) for r in msg.dynasty.games],
                            "deals": [_deal_from_proto(d) for d in msg.dynasty.deals]}
    return state


def state_from_proto(msg: pb.KingdominoState) -> Kingdomino:
    """The game a message holds, checked by the rules (`MalformedError` naming the field)."""
    return Kingdomino.from_dict(state_to_dict(msg))


def encode_state(game: Kingdomino) -> bytes:
    """The state's bytes (a serialized KingdominoState, deterministic): what a sealed token carries."""
    return state_to_proto(game).SerializeToString(deterministic=True)


def decode_state(data: bytes) -> Kingdomino:
    """The game of a serialized KingdominoState."""
    msg = pb.KingdominoState()
    try:
        msg.ParseFromString(data)
    except DecodeError:
        raise MalformedError("state: not a serialized KingdominoState") from None
    return state_from_proto(msg)


# ---------------------------------------------------------------- requests


def deal_from_proto(deals: Iterable[pb.KingdominoDeal]) -> Json | None:
    """The deal the rules take: none, one ``{tiles, kings}``, or a dynasty's ``{"games": [...]}``."""
    given = [_deal_from_proto(d) for d in deals]
    if not given:
        return None
    return given[0] if len(given) == 1 else {"games": given}


def options_from_request(options: Mapping[str, str]) -> Json:
    return options_from_proto(NAME, options)


# ---------------------------------------------------------------- the view


def _totals_to_proto(t: Json) -> pb.KingdominoTotals:
    return pb.KingdominoTotals(scores=t["scores"], largest_region=t["largest_region"], crowns=t["crowns"])


def view_to_proto(view: Json) -> pb.KingdominoView:
    """A view (`Kingdomino.view`, or the public one) as a message."""
    msg = pb.KingdominoView(
        players=view["players"], options=options_to_proto(view["options"]), kings=view["kings"],
        current=_row_to_proto(view["current"]), next=_row_to_proto(view["next"]),
        kingdoms=[pb.KingdominoKingdom(actions=k) for k in view["kingdoms"]], pile_size=view["pile_size"],
        grids=[pb.KingdominoGrid(squares=[pb.KingdominoSquare(**sq) for sq in grid]) for grid in view["grids"]],
        discarded=view["discarded"], legal=view["legal"], scores=view["scores"],
        largest_region=view["largest_region"], crowns=view["crowns"], game_over=view["game_over"],
        winners=view["winners"], decided_by=view["decided_by"] or "")
    for key in ("player", "picker", "to_move", "timed_out"):
        if view.get(key) is not None:
            setattr(msg, key, view[key])
    if "dynasty" in view:
        d = view["dynasty"]
        msg.dynasty.SetInParent()
        msg.dynasty.games.extend(_result_to_proto(r) for r in d["games"])
        msg.dynasty.game = d["game"]
        msg.dynasty.of = d["of"]
        msg.dynasty.game_scores.extend(pb.KingdominoScores(scores=s) for s in d["game_scores"])
        msg.dynasty.totals.CopyFrom(_totals_to_proto(d["totals"]))
    return msg


# ---------------------------------------------------------------- events


#: The exits' events (`rules.exits`), each a KingdominoExit in the field of its name.
_EXITS: Final = frozenset(EVENT_TYPES.values())


def _event_to_proto(e: Json) -> pb.KingdominoEvent:
    kind = e["type"]
    msg = pb.KingdominoEvent()
    if kind == "game_started":
        m = msg.game_started
        m.players = e["players"]
        m.kings.extend(e["kings"])
        if e["seed"] is not None:
            m.seed = e["seed"]
        m.game = e.get("game", 0)
    elif kind == "row_laid":
        msg.row_laid.tiles.extend(e["tiles"])
    elif kind == "tile_picked":
        msg.tile_picked.CopyFrom(pb.KingdominoTilePicked(player=e["player"], king=e["king"], tile=e["tile"]))
    elif kind == "tile_placed":
        x, y = e["square"]
        msg.tile_placed.CopyFrom(pb.KingdominoTilePlaced(player=e["player"], tile=e["tile"], x=x, y=y,
                                                         direction=e["direction"]))
    elif kind == "tile_discarded":
        msg.tile_discarded.CopyFrom(pb.KingdominoTileDiscarded(player=e["player"], tile=e["tile"]))
    elif kind == "game_over":
        msg.game_over.CopyFrom(pb.KingdominoGameOver(
            scores=e["scores"], largest_region=e["largest_region"], crowns=e["crowns"], winners=e["winners"],
            decided_by=e["decided_by"], game=e.get("game", 0)))
    elif kind == "dynasty_over":
        msg.dynasty_over.CopyFrom(pb.KingdominoDynastyOver(
            games=[pb.KingdominoScores(scores=s) for s in e["games"]], scores=e["scores"],
            largest_region=e["largest_region"], crowns=e["crowns"], winners=e["winners"],
            decided_by=e["decided_by"]))
    elif kind == "timed_out":
        msg.timed_out.player = e["player"]
    elif kind in _EXITS:  # resigned, gone, aborted: one message, the oneof's field says which
        getattr(msg, kind).player = e["player"]
    else:
        raise KeyError(f"unknown Kingdomino event type {kind!r}")
    return msg


def events_to_proto(events: Iterable[Json]) -> list[pb.KingdominoEvent]:
    """The rules' Kingdomino events -> messages; an unknown type is a bug (KeyError)."""
    return [_event_to_proto(e) for e in events]
