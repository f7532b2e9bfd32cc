"""What each /v1 call does with the engine, in either state mode; no Flask and no rules here.

A request carries its match in one of two ways (`CarrierSchema`):

- transparent: ``state``, the rules' JSON state, converted to protobuf by
  `engine_service.codec`; the answer carries the new state.
- sealed: ``token`` and ``seat_key``. The token is opened (`api_gateway.tokens`),
  the key says who is acting (a seat, or the match's host), and the answer
  carries a new token plus the caller's own view from the engine (its View call,
  or for an action the view Apply returns with ``view_as``), never the state:
  no other seat's hand, no boneyard order, no seed. Events are redacted the
  same way (another seat's drawn tile becomes null).

Whether an action is legal is always the engine's answer. The only decisions
taken here are about who may ask what in sealed mode: a seat acts only as
itself (the engine is told the acting seat and refuses when it is not that
seat's turn), and calls whose input a seat could forge (settling from declared
hands, an explicit deal) are transparent-mode only.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from domino.v1 import engine_pb2 as pb
from google.protobuf.message import DecodeError

from api_gateway.engine import Engine, EngineIllegal, EngineMalformed
from api_gateway.problems import Problem, SealedForbidden, SealedModeDisabled, UnknownVariant
from api_gateway.tokens import (
    KeyRing,
    Principal,
    Sealed,
    TokenError,
    host_key,
    new_sealed,
    principal_for,
    seat_key,
)
from engine_service import codec

Json = dict[str, Any]

#: In sealed mode a replay is a series of Apply calls (each for the key's seat): keep it short.
MAX_SEALED_REPLAY = 32
VARIANTS_TTL = 60.0


@dataclass(frozen=True, slots=True)
class Carried:
    """The match a request carries: the state, and for sealed requests the token and the caller."""

    state: pb.MatchState
    sealed: Sealed | None = None
    principal: Principal | None = None

    @property
    def is_sealed(self) -> bool:
        return self.sealed is not None


def _typed_default(option: Json) -> Json:
    """The variant listing's option default as a JSON value of the option's type."""
    text, kind = option.get("default"), option.get("type")
    if kind == "bool" and text in ("true", "false"):
        return {**option, "default": text == "true"}
    if kind == "int" and isinstance(text, str) and text.lstrip("-").isdigit():
        return {**option, "default": int(text)}
    return option


def redact_events(events: Iterable[Json], viewer: int | None) -> list[Json]:
    """Events as `viewer` may see them: another seat's drawn tile is hidden (None: the host)."""
    out = []
    for event in events:
        if event.get("type") == "drew" and event.get("seat") != viewer:
            event = {**event, "tile": None}
        out.append(event)
    return out


class Matches:
    """The gateway's calls; one instance per app, shared by the worker's threads."""

    def __init__(self, engine: Engine, keys: KeyRing | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.engine = engine
        self._keys = keys
        self._clock = clock
        self._variants: tuple[float, list[Json]] | None = None
        self._variants_lock = threading.Lock()

    # ------------------------------------------------------------ variants

    def variants(self) -> list[Json]:
        """The engine's presets (cached for a minute: they change only with an engine release)."""
        now = self._clock()
        cached = self._variants
        if cached is not None and now - cached[0] < VARIANTS_TTL:
            return cached[1]
        reply = self.engine.call("ListVariants", pb.ListVariantsRequest())
        listing = [{**v, "options": [_typed_default(o) for o in v["options"]]}
                   for v in codec.variants_from_proto(reply)]
        with self._variants_lock:
            self._variants = (now, listing)
        return listing

    def variant(self, name: str) -> Json:
        for v in self.variants():
            if v["name"] == name:
                return v
        raise UnknownVariant(name)

    # ------------------------------------------------------------ carrying the match

    @property
    def keys(self) -> KeyRing:
        if self._keys is None:
            raise SealedModeDisabled("set STATE_TOKEN_KEYS to use sealed mode")
        return self._keys

    def load(self, body: Mapping[str, Any]) -> Carried:
        """The match of a validated request body (exactly one of state or token + seat_key)."""
        if "state" in body:
            return Carried(codec.state_to_proto(body["state"]))
        sealed = self.keys.open(body["token"])
        try:
            state = pb.MatchState.FromString(sealed.state)
        except DecodeError:  # authentic yet unreadable: sealed by an incompatible gateway version
            raise TokenError("token: its state cannot be read by this gateway version") from None
        return Carried(state, sealed, principal_for(sealed, body["seat_key"], state.players))

    def _view(self, state: pb.MatchState, principal: Principal, given: pb.SeatView | None = None) -> Json:
        """The caller's view: its seat's, or for the host the public part of seat 0's.

        `given`: that seat's view of `state`, already answered by the engine (Apply's `view_as`).
        """
        seat = 0 if principal.seat is None else principal.seat
        if given is None:
            given = self.engine.call("View", pb.ViewRequest(state=state, seat=seat))
        view = codec.view_from_proto(given)
        if principal.seat is None:
            view.update(seat=None, hand=[], legal=[])
        return view

    def _answer(self, carried: Carried, state: pb.MatchState, events: Iterable[pb.Event],
                changed: bool = True, view: pb.SeatView | None = None) -> Json:
        """The answer of a call that produced `state`: the state itself, or a new token and a view.

        `view`: the caller's view of `state` when the engine already answered it (else a View call).
        """
        if carried.sealed is None or carried.principal is None:
            return {"state": codec.state_from_proto(state), "events": codec.events_from_proto(events)}
        sealed = carried.sealed.advanced(state.SerializeToString()) if changed else carried.sealed
        return {
            "token": self.keys.seal(sealed),
            "match_id": sealed.match_id_hex,
            "seq": sealed.seq,
            "view": self._view(state, carried.principal, view),
            "events": redact_events(codec.events_from_proto(events), carried.principal.seat),
        }

    @staticmethod
    def _acting_seat(carried: Carried, requested: int | None, what: str) -> int | None:
        """The seat a call acts for: as requested (transparent), or the key's own seat (sealed)."""
        principal = carried.principal
        if principal is None:
            return requested
        if principal.seat is None:
            raise SealedForbidden(f"the host key cannot {what}: use the seat key of the seat acting", "seat_key")
        if requested is not None and requested != principal.seat:
            raise SealedForbidden(f"{principal.label}'s key cannot {what} as seat {requested}", "seat")
        return principal.seat

    # ------------------------------------------------------------ calls

    def new_match(self, body: Mapping[str, Any]) -> Json:
        sealed_mode = body.get("mode") == "sealed"
        if sealed_mode:
            self.keys  # noqa: B018 - 501 before the engine is asked, when sealed mode is off
        request = pb.NewMatchRequest(variant=body["variant"], players=codec.uint32(body["players"], "players"),
                                     options=codec.options_to_proto(body.get("options")),
                                     no_deal=bool(body.get("no_deal", False)))
        if body.get("seed") is not None:
            request.seed = codec.uint64(body["seed"], "seed")
        if body.get("deal") is not None:
            request.deal.CopyFrom(codec.deal_to_proto(body["deal"]))
        codec.setup_to_proto(body.get("setup"), request)
        reply = self.engine.call("NewMatch", request)
        if not sealed_mode:
            return self._answer(Carried(reply.state), reply.state, reply.events)
        sealed = new_sealed(reply.state.SerializeToString())
        host = Principal(None)
        answer = self._answer(Carried(reply.state, sealed, host), reply.state, reply.events, changed=False)
        answer["seat_keys"] = [seat_key(sealed, s) for s in range(reply.state.players)]
        answer["host_key"] = host_key(sealed)
        return answer

    def legal(self, body: Mapping[str, Any]) -> Json:
        carried = self.load(body)
        if carried.principal is None:
            reply = self.engine.call("LegalActions", pb.StateRequest(state=carried.state))
            return {"seat": reply.seat, "actions": list(reply.actions)}
        # Another seat's legal actions would reveal its tiles: ask for the caller's view instead.
        view = self._view(carried.state, carried.principal)
        return {"seat": view["to_move"], "actions": view["legal"]}

    def apply(self, body: Mapping[str, Any]) -> Json:
        carried = self.load(body)
        seat = self._acting_seat(carried, body.get("seat"), "act")
        request = pb.ApplyRequest(state=carried.state, action=body["action"])
        if seat is not None:
            request.seat = codec.uint32(seat, "seat")
        if carried.principal is None:
            reply = self.engine.call("Apply", request)
            return self._answer(carried, reply.state, reply.events)
        # Sealed: the acting seat's view of the new state comes back with the same call (one engine call).
        # An engine older than `view_as` answers without a view: then a View call, as before.
        request.view_as = request.seat
        reply = self.engine.call("Apply", request)
        view = reply.view if reply.HasField("view") else None
        return self._answer(carried, reply.state, reply.events, view=view)

    def replay(self, body: Mapping[str, Any]) -> Json:
        carried = self.load(body)
        actions: list[str] = list(body["actions"])
        if carried.principal is None:
            reply = self.engine.call("Replay", pb.ReplayRequest(state=carried.state, actions=actions))
            return {**self._answer(carried, reply.state, reply.events),
                    "applied": reply.applied, "ok": reply.ok, "failed_index": reply.failed_index,
                    "reason": reply.reason, "error_kind": reply.error_kind}
        return self._sealed_replay(carried, actions)

    def _sealed_replay(self, carried: Carried, actions: list[str]) -> Json:
        """A seat's own actions one Apply at a time (Replay has no acting seat to check)."""
        seat = self._acting_seat(carried, None, "replay actions")
        if len(actions) > MAX_SEALED_REPLAY:
            raise Problem.of("validation-error", f"actions: at most {MAX_SEALED_REPLAY} in sealed mode",
                             field="actions", errors={"actions": [f"at most {MAX_SEALED_REPLAY} in sealed mode"]})
        state = carried.state
        events: list[pb.Event] = []
        applied, reason, kind = 0, "", ""
        for action in actions:
            try:
                reply = self.engine.call("Apply", pb.ApplyRequest(state=state, action=action, seat=seat))
            except (EngineIllegal, EngineMalformed) as refused:
                reason = refused.details
                kind = "illegal" if isinstance(refused, EngineIllegal) else "malformed"
                break
            state = reply.state
            events.extend(reply.events)
            applied += 1
        ok = applied == len(actions)
        return {**self._answer(carried, state, events, changed=applied > 0),
                "applied": applied, "ok": ok, "failed_index": -1 if ok else applied,
                "reason": reason, "error_kind": kind}

    def settle(self, body: Mapping[str, Any]) -> Json:
        carried = self.load(body)
        if carried.is_sealed:
            raise SealedForbidden("settle scores hands as declared by the caller: transparent mode only",
                                  "token")
        request = pb.SettleRequest(state=carried.state, ending=codec.ending_to_proto(body["ending"], "ending"),
                                   hands=codec.hands_to_proto(body["hands"], "hands"))
        if body.get("last_placer") is not None:
            request.last_placer = codec.uint32(body["last_placer"], "last_placer")
        reply = self.engine.call("Settle", request)
        return self._answer(carried, reply.state, reply.events)

    def next_round(self, body: Mapping[str, Any]) -> Json:
        carried = self.load(body)
        request = pb.StartRoundRequest(state=carried.state)
        if body.get("deal") is not None:
            if carried.is_sealed:
                raise SealedForbidden("a sealed match deals from its seed: an explicit deal would let the "
                                      "caller choose the hands", "deal")
            request.deal.CopyFrom(codec.deal_to_proto(body["deal"]))
        reply = self.engine.call("StartRound", request)
        return self._answer(carried, reply.state, reply.events)

    def timeout(self, body: Mapping[str, Any]) -> Json:
        carried = self.load(body)
        seat = body.get("seat")
        principal = carried.principal
        if principal is not None and not principal.is_host:
            seat = self._acting_seat(carried, seat, "time out")  # a seat may only concede its own clock
        if seat is None:
            raise Problem.of("validation-error", "seat: required", field="seat",
                             errors={"seat": ["Missing data for required field."]})
        reply = self.engine.call("Timeout", pb.TimeoutRequest(state=carried.state, seat=codec.uint32(seat, "seat")))
        return self._answer(carried, reply.state, reply.events)

    def view(self, body: Mapping[str, Any]) -> Json:
        carried = self.load(body)
        seat = body.get("seat")
        principal = carried.principal
        if principal is None:
            if seat is None:
                raise Problem.of("validation-error", "seat: required in transparent mode", field="seat",
                                 errors={"seat": ["Missing data for required field."]})
            return codec.view_from_proto(
                self.engine.call("View", pb.ViewRequest(state=carried.state, seat=codec.uint32(seat, "seat"))))
        if seat is not None and seat != principal.seat:
            raise SealedForbidden(f"{principal.label}'s key sees only its own view", "seat")
        return self._view(carried.state, principal)
