"""A test-only oracle: the rules' JSON values <-> `domino.v1` messages, through protobuf's own classes.

The engine converts states with `engine_service.edge.wire` (bytes written and read by
hand) and everything else with `engine_service.edge.codec`. The tests check those
against this module, which is written independently of both, from the contract
(engine.proto's comments and docs/rest.md): tile names become ids through the
rules' tile table (`NAME_TO_ID`), placements are read from their notation
("3-6@E", "6-3", "4-4@E!"), endings and arms go through the generated enums by
name, and protobuf's generated classes do every byte. Nothing here imports
`wire` or `codec`.

The builders (`state_msg`, `deal_msg` ...) take any dict, including damaged
ones (missing keys take the proto defaults), so that tests can send a state the
rules must refuse; the readers (`state_dict`, `view_dict` ...) turn a message
back into the dict the rules' `to_dict` / `view` write, so that a message can be
compared with the library's answer.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from domino.v1 import engine_pb2 as pb

from engine_service.rules import variants
from engine_service.rules.notation import parse_placement
from engine_service.rules.registry import make_family
from engine_service.rules.tiles import NAME_TO_ID, NAMES
from engine_service.rules.views import legal_view, table_view

Json = dict[str, Any]

ENDING_NAMES = ("out", "fish", "blocked", "sortir")
#: The rules' ending words <-> the Ending enum, by the enum's names (ENDING_OUT ...).
ENDING_PB: dict[str | None, int] = {None: pb.ENDING_NONE,
                                    **{e: pb.Ending.Value(f"ENDING_{e.upper()}") for e in ENDING_NAMES}}
ENDING_WORD: dict[int, str | None] = {v: k for k, v in ENDING_PB.items()}


def ending_word(value: int) -> str | None:
    """An Ending value -> the rules' word; a value the enum does not name becomes text the rules refuse."""
    return ENDING_WORD.get(value, f"#{value}")


def arm_pb(name: str) -> int:
    """An arm's name ("N", "E", "N2" ...) -> the Arm enum value (ARM_N ...)."""
    return pb.Arm.Value(f"ARM_{name}")


def arm_name(value: int) -> str:
    """An Arm value -> the arm's name; a value the enum does not name becomes text the rules refuse ("#99")."""
    try:
        return pb.Arm.Name(value).removeprefix("ARM_")  # type: ignore[arg-type]
    except ValueError:
        return f"#{value}"


def tile_id(name: str) -> int:
    return NAME_TO_ID[name]


def tile_ids(names: Iterable[str]) -> list[int]:
    return [NAME_TO_ID[n] for n in names]


def tile_name(t: int) -> str:
    """A tile id's name; an id that is not a tile becomes text the rules refuse ("#31")."""
    return NAMES[t] if 0 <= t < len(NAMES) else f"#{t}"


def tile_names(ids: Iterable[int]) -> list[str]:
    return [tile_name(t) for t in ids]


# ---------------------------------------------------------------- placements and options


def placement_msg(text: str) -> pb.Placement:
    """A layout entry in notation -> Placement: "6-3" (lead, high number W: flipped), "3-6@E", "4-4@E!"."""
    closes = text.endswith("!")
    tile_text, _, arm = text.removesuffix("!").partition("@")
    if not arm:
        low, high = (int(x) for x in tile_text.split("-"))
        return pb.Placement(tile=tile_id(tile_text), arm=pb.ARM_CENTER, flipped=low > high)
    return pb.Placement(tile=tile_id(tile_text), arm=arm_pb(arm), closes=closes)  # type: ignore[arg-type]


def layout_code(text: str) -> int:
    """A layout entry in notation -> its `Round.layout_codes` value (engine.proto):
    tile | flag << 5 | arm << 6, the flag the lead's `flipped` or a later tile's `closes`."""
    p = placement_msg(text)
    return p.tile | int(p.flipped or p.closes) << 5 | p.arm << 6


def code_placement(code: int) -> pb.Placement:
    """A `Round.layout_codes` value -> Placement (the inverse of `layout_code`)."""
    tile, flag, arm = code & 31, bool(code >> 5 & 1), code >> 6
    if arm == pb.ARM_CENTER:
        return pb.Placement(tile=tile, flipped=flag)
    return pb.Placement(tile=tile, arm=arm, closes=flag)  # type: ignore[arg-type]


def round_layout(r: pb.Round) -> list[pb.Placement]:
    """A state's round's layout: from its codes, or as a state written before them gives it."""
    return [code_placement(c) for c in r.layout_codes] if r.layout_codes else list(r.layout)


def placement_text(msg: pb.Placement) -> str:
    """Placement -> notation, low number first except a flipped lead."""
    name = tile_name(msg.tile)
    if msg.arm == pb.ARM_CENTER:
        low, _, high = name.partition("-")
        return f"{high}-{low}" if msg.flipped else name
    return f"{name}@{arm_name(msg.arm)}" + ("!" if msg.closes else "")


def option_text(value: object) -> str:
    """An option value as the wire's text: true/false, a decimal, or the enum's name."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@cache
def option_types(variant: str) -> dict[str, str]:
    """Option name -> "bool" / "int" / "enum" for a preset (nothing for a name the rules do not know)."""
    spec = next((v for v in variants() if v["name"] == variant), {"options": []})
    return {o["name"]: o["type"] for o in spec["options"]}


def typed_options(variant: str, texts: Mapping[str, str]) -> Json:
    """The wire's option text -> values of the option's type (bool, int, else text)."""
    types = option_types(variant)
    out: Json = {}
    for name, text in texts.items():
        kind = types.get(name)
        out[name] = text == "true" if kind == "bool" else int(text) if kind == "int" else text
    return out


# ---------------------------------------------------------------- score table and ledger


def record_msg(r: Mapping[str, Any]) -> pb.RoundRecord:
    msg = pb.RoundRecord(
        number=r.get("number", 0), ending=ENDING_PB[r.get("ending")],  # type: ignore[arg-type]
        round_points=r.get("round_points") or [], written=r.get("written") or [],
        remembered=r.get("remembered") or [], pot=r.get("pot", 0), scores=r.get("scores") or [],
        places=r.get("places") or [], out=r.get("out") or [])
    if r.get("winner") is not None:
        msg.winner = r["winner"]
    if r.get("last_placer") is not None:
        msg.last_placer = r["last_placer"]
    return msg


def record_dict(msg: pb.RoundRecord) -> Json:
    return {
        "number": msg.number,
        "ending": ending_word(msg.ending),
        "winner": msg.winner if msg.HasField("winner") else None,
        "last_placer": msg.last_placer if msg.HasField("last_placer") else None,
        "round_points": list(msg.round_points),
        "written": list(msg.written),
        "remembered": list(msg.remembered),
        "pot": msg.pot,
        "scores": list(msg.scores),
        "places": list(msg.places),
        "out": list(msg.out),
    }


def ledger_msg(d: Mapping[str, Any]) -> pb.Ledger:
    return pb.Ledger(written=d.get("written") or [], remembered=d.get("remembered") or [], pot=d.get("pot", 0),
                     scores=d.get("scores") or [], history=[record_msg(r) for r in d.get("history") or []])


def ledger_dict(msg: pb.Ledger) -> Json:
    return {"written": list(msg.written), "remembered": list(msg.remembered), "pot": msg.pot,
            "scores": list(msg.scores), "history": [record_dict(r) for r in msg.history]}


# ---------------------------------------------------------------- the match state


def hand_msgs(hands: Iterable[Iterable[str]]) -> list[pb.Hand]:
    """Hands of tile names -> Hand messages (ids in the order given)."""
    return [pb.Hand(tiles=tile_ids(h)) for h in hands]


def round_msg(r: Mapping[str, Any]) -> pb.Round:
    msg = pb.Round(
        leader=r.get("leader", 0), hands=hand_msgs(r.get("hands") or []),
        boneyard=tile_ids(r.get("boneyard") or []), reserve=r.get("reserve", 0),
        layout_codes=[layout_code(p) for p in r.get("layout") or []], to_move=r.get("to_move", 0),
        passes=r.get("passes", 0), out=r.get("out") or [], last_score=r.get("last_score", 0),
        over=r.get("over", False), ending=ENDING_PB[r.get("ending")],  # type: ignore[arg-type]
        round_points=r.get("round_points") or [], places=r.get("places") or [])
    for key in ("last_placer", "winner"):
        if r.get(key) is not None:
            setattr(msg, key, r[key])
    return msg


def state_msg(d: Mapping[str, Any]) -> pb.MatchState:
    """A state dict (`Match.to_dict`'s shape, or a damaged one) -> MatchState, field for field."""
    msg = pb.MatchState(
        variant=d.get("variant", ""), players=d.get("players", 0),
        options={k: option_text(v) for k, v in (d.get("options") or {}).items()},
        round_number=d.get("round_number", 0), ledger=ledger_msg(d.get("ledger") or {}),
        match_over=d.get("match_over", False), losers=d.get("losers") or [], winners=d.get("winners") or [],
        rating=d.get("rating") or [], log="\n".join(d.get("log") or []),
        log_count=d.get("log_count", 0), log_digest=bytes.fromhex(d.get("log_digest", "")))
    steps = log_steps(d)
    if steps is not None:
        msg.log = "\n".join(steps[0])
        msg.log_steps = steps[1]
    if d.get("round") is not None:
        msg.round.CopyFrom(round_msg(d["round"]))
    for key in ("seed", "next_leader", "timed_out"):
        if d.get(key) is not None:
            setattr(msg, key, d[key])
    return msg


def log_steps(d: Mapping[str, Any]) -> tuple[list[str], bytes] | None:
    """The log as MatchState writes it when it can (issue 27): its entries to the round's deal, and a byte a
    move after it (0 pass, 1 draw, k + 1 a play of the layout's next k tiles), read from the state's
    layout strings."""
    log, rnd = list(d.get("log") or []), d.get("round")
    if not log or not isinstance(rnd, dict):
        return None
    deals = [i for i, line in enumerate(log) if line == "deal" or line.startswith("deal ")]
    if not deals and not d.get("log_count"):
        return None
    at = deals[-1] if deals else -1
    layout, codes, k = list(rnd.get("layout") or []), bytearray(), 0
    for line in log[at + 1:]:
        if line in ("pass", "draw"):
            codes.append(0 if line == "pass" else 1)
            continue
        n = len(line.split("+"))
        if "+".join(layout[k:k + n]) != line:
            return None
        codes.append(n + 1)
        k += n
    return (log[:at + 1], bytes(codes)) if k == len(layout) else None


def state_bytes(d: Mapping[str, Any]) -> bytes:
    """The canonical bytes of a state dict: protobuf's deterministic serialization of `state_msg`."""
    return state_msg(d).SerializeToString(deterministic=True)


def _optional(msg: Any, key: str) -> int | None:
    return getattr(msg, key) if msg.HasField(key) else None


def state_dict(msg: pb.MatchState) -> Json:
    """MatchState -> the state dict as `Match.to_dict` writes it (the round's ends and count as sent)."""
    d: Json = {
        "variant": msg.variant,
        "players": msg.players,
        "options": typed_options(msg.variant, msg.options),
        "seed": _optional(msg, "seed"),
        "round_number": msg.round_number,
        "ledger": ledger_dict(msg.ledger),
        "round": None,
        "next_leader": _optional(msg, "next_leader"),
        "match_over": msg.match_over,
        "losers": list(msg.losers),
        "winners": list(msg.winners),
        "rating": list(msg.rating),
        "timed_out": _optional(msg, "timed_out"),
        "log": msg.log.split("\n") if msg.log else [],
    }
    if msg.log_steps:
        placed = [placement_text(p) for p in round_layout(msg.round)]
        for code in msg.log_steps:
            if code < 2:
                d["log"].append("pass" if code == 0 else "draw")
            else:
                d["log"].append("+".join(placed[:code - 1]))
                placed = placed[code - 1:]
    if msg.log_count:
        d["log_count"] = msg.log_count
        d["log_digest"] = msg.log_digest.hex()
    if msg.HasField("round"):
        r = msg.round
        d["round"] = {
            "leader": r.leader,
            "hands": [tile_names(h.tiles) for h in r.hands],
            "boneyard": tile_names(r.boneyard),
            "reserve": r.reserve,
            "layout": [placement_text(p) for p in round_layout(r)],
            "to_move": r.to_move,
            "passes": r.passes,
            "out": list(r.out),
            "last_placer": _optional(r, "last_placer"),
            "last_score": r.last_score,
            "over": r.over,
            "ending": ending_word(r.ending),
            "winner": _optional(r, "winner"),
            "round_points": list(r.round_points) or None,
            "places": list(r.places) or None,
        }
        d["round"].update(_open_ends(msg))
    return d


def _open_ends(msg: pb.MatchState) -> Json:
    """A state's open ends and their count, which the state does not carry (engine.proto: derived),
    as the JSON form writes them: from its layout laid on the variant's."""
    layout = _laid(msg.variant, msg.players, msg.options, round_layout(msg.round))
    return {"ends": layout.ends(), "count": layout.count()}


def _laid(variant: str, players: int, options: Mapping[str, str], placements: Iterable[pb.Placement]) -> Any:
    """`placements`, typed, laid in order on the variant's layout (the rules' `Layout`)."""
    _, family, _ = make_family(variant, players, typed_options(variant, options))
    layout = family.new_layout()
    layout.replay([parse_placement(placement_text(p), i == 0) for i, p in enumerate(placements)])
    return layout


# ---------------------------------------------------------------- requests, views, events


def deal_msg(deal: Mapping[str, Any]) -> pb.Deal:
    """An explicit deal ({"hands", "boneyard"?, "leader"?}) -> Deal, recording whether a boneyard was given."""
    msg = pb.Deal(hands=hand_msgs(deal["hands"]))
    if "boneyard" in deal:
        msg.boneyard.extend(tile_ids(deal["boneyard"]))
        msg.has_boneyard = True
    if deal.get("leader") is not None:
        msg.leader = deal["leader"]
    return msg


def view_dict(msg: pb.SeatView) -> Json:
    """SeatView -> the view dict as `Match.view(seat)` writes it."""
    return {
        "variant": msg.variant,
        "players": msg.players,
        "options": typed_options(msg.variant, msg.options),
        "seat": msg.seat,
        "round_number": msg.round_number,
        "ledger": ledger_dict(msg.ledger),
        "dealt": msg.dealt,
        "hand": tile_names(msg.hand.tiles),
        "hand_sizes": list(msg.hand_sizes),
        "boneyard_size": msg.boneyard_size,
        "layout": [placement_text(p) for p in msg.layout],
        "ends": {arm_name(e.arm): e.value for e in msg.ends},
        "count": msg.count,
        "to_move": msg.to_move,
        "round_over": msg.round_over,
        "ending": ending_word(msg.ending),
        "winner": _optional(msg, "winner"),
        "round_points": list(msg.round_points),
        "revealed_hands": [tile_names(h.tiles) for h in msg.revealed_hands],
        "match_over": msg.match_over,
        "losers": list(msg.losers),
        "rating": list(msg.rating),
        "legal": list(msg.legal),
        "last_score": msg.last_score,
        "table": table_of(msg),
        "legal_moves": legal_view(list(msg.legal)),
    }


def table_of(msg: pb.SeatView) -> Json:
    """The JSON view's ``table``, from what the typed view carries: its placements, typed, laid on the
    variant's layout (the typed view gives the tiles as values; the table is derived from them)."""
    if not msg.dealt:
        return table_view(None)
    return table_view(_laid(msg.variant, msg.players, msg.options, msg.layout))


def event_dict(msg: pb.Event) -> Json:
    """Event -> the rules' event dict."""
    kind = msg.WhichOneof("kind")
    e = getattr(msg, kind)  # type: ignore[arg-type]
    if kind == "played":
        return {"type": kind, "seat": e.seat, "action": e.action}
    if kind == "drew":
        return {"type": kind, "seat": e.seat, "tile": tile_name(e.tile)}
    if kind == "passed":
        return {"type": kind, "seat": e.seat}
    if kind == "points_scored":
        return {"type": kind, "seat": e.seat, "points": e.points, "count": e.count}
    if kind == "round_ended":
        return {"type": kind, "record": record_dict(e.record)}
    if kind == "match_ended":
        return {"type": kind, "losers": list(e.losers), "winners": list(e.winners), "rating": list(e.rating)}
    if kind in ("next_leader", "resigned", "gone", "aborted"):
        return {"type": kind, "seat": e.seat}
    assert kind == "round_dealt", kind
    return {"type": kind, "number": e.number, "leader": e.leader, "redealt": e.redealt}


def event_dicts(msgs: Iterable[pb.Event]) -> list[Json]:
    return [event_dict(m) for m in msgs]


def variants_list(msg: pb.ListVariantsResponse) -> list[Json]:
    """ListVariantsResponse -> the rules' `variants()` entries (option defaults and allowed values as text)."""
    return [{"name": v.name, "family": v.family, "description": v.description, "min_players": v.min_players,
             "max_players": v.max_players, "timeout_rule": v.timeout_rule,
             "options": [{"name": o.name, "type": o.type, "allowed": list(o.allowed), "default": o.default,
                          "description": o.description,
                          **({"minimum": o.minimum, "maximum": o.maximum} if o.type == "int" else {})}
                         for o in v.options]}
            for v in msg.variants]


# ---------------------------------------------------------------- the Bykovo micro-tournament


def standings_list(entries: Iterable[pb.StandingEntry]) -> list[Json]:
    return [{"participant": e.participant, "index": e.index, "place": e.place, "total": e.total, "out": e.out,
             "official": e.official} for e in entries]


def tournament_msg(d: Mapping[str, Any]) -> pb.TournamentState:
    """A tournament dict (`Tournament.to_dict`'s shape, derived keys optional) -> TournamentState."""
    return pb.TournamentState(
        participants=d.get("participants") or [], seed=d.get("seed") or 0, limit=d.get("limit") or 0,
        first_sitters=d.get("first_sitters") or [],
        rounds=[pb.TournamentRound(players=r.get("players") or [], places=r.get("places") or [],
                                   totals=r.get("totals") or [], eliminated=r.get("eliminated") or [])
                for r in d.get("rounds") or []],
        totals=d.get("totals") or [], over=d.get("over", False), next_players=d.get("next_players") or [],
        standings=[pb.StandingEntry(**e) for e in d.get("standings") or []])


def tournament_dict(msg: pb.TournamentState) -> Json:
    """TournamentState -> `Tournament.to_dict`'s dict."""
    return {
        "participants": list(msg.participants),
        "seed": msg.seed,
        "limit": msg.limit,
        "first_sitters": list(msg.first_sitters),
        "rounds": [{"players": list(r.players), "places": list(r.places), "totals": list(r.totals),
                    "eliminated": list(r.eliminated)} for r in msg.rounds],
        "totals": list(msg.totals),
        "over": msg.over,
        "next_players": list(msg.next_players),
        "standings": standings_list(msg.standings),
    }


def tournament_event_dict(msg: pb.TournamentEvent) -> Json:
    kind = msg.WhichOneof("kind")
    if kind == "tournament_round":
        r = msg.tournament_round
        return {"type": kind, "number": r.number, "players": list(r.players), "places": list(r.places)}
    if kind == "eliminated":
        return {"type": kind, "participants": list(msg.eliminated.participants)}
    assert kind == "tournament_over", kind
    return {"type": kind, "standings": standings_list(msg.tournament_over.standings)}
