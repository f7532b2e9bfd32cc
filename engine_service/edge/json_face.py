"""The `domino.v1.JsonEngine` servicer: the engine's calls in the JSON of docs/rest.md.

The REST gateway forwards a request's body here without reading the state it
carries, so that the engine is the only place where a state changes form:

- transparent: ``args.state`` is the rules' JSON state, read by `Match.from_dict`
  (whose refusals name the field: ``state.round.hands[2]: ...``); the answer
  carries ``state`` (`Match.to_dict`) and every event;
- sealed: the state comes as the bytes of a GameState (`JsonCall.state`, read
  by `engine_service.edge.game_state`) and ``args.view_as`` names the viewer (a seat, or
  ``"host"``); the answer's JSON shows that viewer's ``view`` and the events as
  it may see them (`rules.views`), and the new state goes back as bytes.

Arguments are checked for their keys here (each call's keys are its typed
request's fields, `domino.v1.jsonargs.ARGUMENTS`, read from the contract) and for
their values by the rules, as the typed servicer does; what a call does is
`engine_service.calls`.

Kingdomino (RULES.md KD) goes through the same calls and the same code: every
call reads its game through the rules' `Game` protocol. ``NewMatch`` finds the
class by the variant (`rules.game_class`), the others by the kind the carried
state says: its ``variant`` (``args.state.variant``, by the same registry), or
the field a sealed GameState holds it in (`game_state`). Its JSON is
`Kingdomino.to_dict` / `view`, its sealed bytes a GameState's ``kingdomino``,
``seat`` names the player, and a sealed answer's events hide the seed
(`Game.redact`).
``StartRound`` and ``Settle`` are a matching game's (its rounds) and refuse it.
"""
from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from typing import Any, cast

import grpc
import orjson
from domino.v1 import engine_pb2 as pb
from domino.v1 import engine_pb2_grpc as pb_grpc
from domino.v1.channel import JSON_ENGINE
from domino.v1.jsonargs import ARGUMENTS, MAX_BATCH, MAX_DEPTH, too_deep

from engine_service import admission, calls, records
from engine_service.calls import EncodingError
from engine_service.edge import game_state
from engine_service.metrics import Observed
from engine_service.rules import (
    PRESETS,
    Game,
    MalformedError,
    Match,
    Tournament,
    game_class,
    game_from_dict,
    variants,
)
from engine_service.rules.game import Viewer
from engine_service.rules.games import GAMES
from engine_service.status import status_for

Json = dict[str, Any]
Event = dict[str, Any]
HOST = "host"

log = logging.getLogger(__name__)


def _args(call: pb.JsonCall, allowed: frozenset[str]) -> Json:
    """The call's arguments: a JSON object with no key outside `allowed`."""
    try:
        args = orjson.loads(call.args) if call.args else {}
    except orjson.JSONDecodeError as exc:
        raise MalformedError(f"args: not JSON ({exc})") from None
    if type(args) is not dict:
        raise MalformedError("args: expected a JSON object")
    if too_deep(args):
        raise MalformedError(f"args: nested deeper than {MAX_DEPTH} levels")
    unknown = [k for k in args if k not in allowed]
    if unknown:
        raise MalformedError(f"{unknown[0]}: unknown argument (expected {', '.join(sorted(allowed))})")
    return args


def _viewer(args: Json) -> Viewer:
    """``args.view_as``: a seat, or None for the host (its seat range is the rules' to check)."""
    who = args["view_as"]
    if who == HOST:
        return None
    if type(who) is not int:
        raise MalformedError(f"view_as: a seat or {HOST!r}, not {who!r}")
    return who


def _seat_of(viewer: Viewer, game: Game) -> Viewer:
    """`viewer`, checked to be one of the game's seats (Kingdomino: players), or the host."""
    if viewer is not None and not 0 <= viewer < game.players:
        raise MalformedError(f"view_as: a {game.seat_name} 0..{game.players - 1} or {HOST!r}, not {viewer}")
    return viewer


def _sealed(call: pb.JsonCall, args: Json) -> bool:
    """Whether the call carries its game sealed (as bytes, with `view_as`) or as a JSON `state`; refuses
    a call that mixes the two or gives neither. Both kinds of game carry the same way."""
    if call.state:
        if "state" in args:
            raise MalformedError("state: give the state in args or as bytes, not both")
        if "view_as" not in args:
            raise MalformedError("view_as: required with a sealed state (a seat or 'host')")
        return True
    if "view_as" in args:
        raise MalformedError("view_as: only with a sealed state")
    if "state" not in args:
        raise MalformedError("state: required (pass back the state of the previous answer)")
    return False


def _game_class(call: pb.JsonCall, args: Json) -> game_state.GameClass:
    """The class of the game a call carries, as its state says, before the state is read: the kind
    of a sealed GameState, or the class its JSON state's ``variant`` names (`rules.game_class`)."""
    if call.state:
        return game_state.game_class(call.state)
    state = args.get("state")
    return game_class(state.get("variant") if type(state) is dict else None)


class _Carried:
    """The game a call carries, how it came (sealed or not), and who looks at the answer."""

    __slots__ = ("game", "lines", "sealed", "viewer")

    def __init__(self, call: pb.JsonCall, args: Json) -> None:
        self.sealed = _sealed(call, args)
        self.lines = _seat_lines(args)
        self.game: Game
        if self.sealed:
            self.game = game_state.decode(call.state)
            self.viewer: Viewer = _seat_of(_viewer(args), self.game)
        else:
            self.viewer = None
            self.game = game_from_dict(args["state"])

    def answer(self, events: list[Event], changed: bool = True, **extra: Any) -> pb.JsonAnswer:
        """The answer once the call has changed the game (see `_answer`)."""
        return _answer(self.game, events, self.sealed, self.viewer, changed, self.lines, **extra)


def _match(call: pb.JsonCall, args: Json, verb: str) -> tuple[_Carried, Match]:
    """The call's game, for a call only a matching game has (its rounds): Kingdomino is refused
    before its state is read."""
    if _game_class(call, args) is not Match:
        raise MalformedError(_NO_ROUNDS.format(verb))
    carried = _Carried(call, args)
    return carried, cast(Match, carried.game)


def _lines(items: list[Json]) -> bytes:
    """NDJSON: one compact JSON object a line."""
    return b"".join(orjson.dumps(item) + b"\n" for item in items)


def _description(variant: str, players: int, options: Json) -> Json:
    """The first line a spectator gets: what is being played (docs/records.md "Spectator stream")."""
    return {"type": "description", "record": records.FORMAT, "version": records.VERSION, "variant": variant,
            "players": players, "options": options, "view": "spectator"}


_NO_ROUNDS = "kingdomino has no rounds to {}: its rows are laid by the game itself"


def _dumps(body: Json) -> bytes:
    try:
        return orjson.dumps(body)
    except (TypeError, orjson.JSONEncodeError) as exc:
        raise EncodingError(f"cannot encode the answer: {exc}") from exc


def _seat_lines(args: Json) -> bool:
    """``args.seat_lines``: whether a sealed call that changes the match answers every viewer's line."""
    lines = args.get("seat_lines", False)
    if type(lines) is not bool:
        raise MalformedError(f"seat_lines: expected true or false, not {lines!r}")
    if lines and "view_as" not in args:
        raise MalformedError("seat_lines: only with a sealed state")
    return lines


def _line(game: Game, events: list[Event], viewer: Viewer, view: Json) -> bytes:
    """What one viewer's event stream gets of a call (`JsonAnswer.seats`): its events, its `view`, the scores,
    and the seat to act now (`Game.turn`: None between rounds and once over), by which the gateway runs
    the table's turn clocks without reading a view."""
    return _dumps({"events": game.seen_by(events, viewer), "view": view, "scores": game.match_scores(),
                   "turn": game.turn})


def _answer(game: Game, events: list[Event], sealed: bool, viewer: Viewer, changed: bool = True,
            lines: bool = False, **extra: Any) -> pb.JsonAnswer:
    """A changed game's answer: the state and every event (transparent), or the viewer's view,
    the events as it may see them, the new state's bytes, the spectators' lines and whether the
    match is over (sealed; no state when `changed` is false), and with `lines` each seat's and the
    public's line for their event streams (an online table's match)."""
    if not sealed:
        body = {"state": game.to_dict(), "scores": game.match_scores(), "events": events, **extra}
        if game.shed:  # a round ended: its log entries left the state (docs/records.md)
            body["record_lines"] = game.shed
        return pb.JsonAnswer(answer=_dumps(body))
    # With every viewer's line, each view is made once: the caller's answer shows the view its own line has.
    views: dict[Viewer, Json] = {v: game.view_for(v) for v in (*range(game.players), None)} if lines and changed else {}
    body = {"view": views[viewer] if viewer in views else game.view_for(viewer), "scores": game.match_scores(),
            "events": game.redact(events, viewer), **extra}
    if not changed:
        return pb.JsonAnswer(answer=_dumps(body))
    answer = pb.JsonAnswer(answer=_dumps(body), state=game_state.encode(game), public=_lines(game.spectated(events)),
                           over=game.finished)
    if game.shed:  # for the gateway's store, never for a seat (docs/records.md)
        answer.record_lines = "\n".join(game.shed).encode()
    if lines:
        answer.seats.extend(_line(game, events, seat, views[seat]) for seat in range(game.players))
        answer.watcher = _line(game, events, None, views[None])
    return answer


def _described(answer: pb.JsonAnswer, sealed: bool, variant: str, players: int, options: Json) -> pb.JsonAnswer:
    """A new sealed match's public lines start with its description."""
    if sealed:
        answer.public = orjson.dumps(_description(variant, players, dict(options))) + b"\n" + answer.public
    return answer


def _typed_default(option: Json) -> Json:
    """A listed option's default as a JSON value of the option's type (the rules describe it as text)."""
    text, kind = option.get("default"), option.get("type")
    if kind == "bool" and text in ("true", "false"):
        return {**option, "default": text == "true"}
    if kind == "int" and isinstance(text, str) and text.lstrip("-").isdigit():
        return {**option, "default": int(text)}
    return option


def _record(args: Json) -> records.Record:
    """The record a call carries: ``record`` (the JSON form) or ``text`` (the text form), one of them."""
    if ("record" in args) == ("text" in args):
        raise MalformedError("record or text: give the record in one form (JSON `record` or `text`)")
    if "text" in args:
        text = args["text"]
        if not isinstance(text, str):
            raise MalformedError("text: the record's text form, a string")
        return records.from_text(text)
    return records.from_json(args["record"])


def _tournament(args: Json) -> Tournament:
    try:
        return Tournament.from_dict(args.get("state"))
    except MalformedError as exc:  # the rules' message, e.g. "rounds[1].players must be [0, 1, 2, 4]"
        raise MalformedError(f"state: {exc}") from None


def _tournament_answer(tournament: Tournament, events: list[Event]) -> pb.JsonAnswer:
    return pb.JsonAnswer(answer=_dumps({"state": tournament.to_dict(), "events": events}))


Handler = Callable[[pb.JsonCall, grpc.ServicerContext], pb.JsonAnswer]


def _item_status(code: grpc.StatusCode, details: str) -> pb.JsonItemAnswer:
    """A batch item's answer that is a status other than OK."""
    return pb.JsonItemAnswer(code=code.value[0], details=details)


class JsonEngineServicer(pb_grpc.JsonEngineServicer):
    """Stateless: one instance serves every call on every thread. `log_calls`: a JSON line for each call
    of a batch, as `engine_service.metrics.ObservingInterceptor` writes one for each call."""

    def __init__(self, log_calls: bool = True) -> None:
        listing = [{**v, "options": [_typed_default(o) for o in v["options"]]}
                   for v in variants() if v["name"] in PRESETS or v["name"] in GAMES]
        self._variants = pb.JsonAnswer(answer=_dumps({"variants": listing}))
        # The calls a batch may carry (every call of this service that takes JSON arguments) and their records.
        self._calls: dict[str, tuple[Handler, Observed]] = {
            name: (getattr(self, name), Observed(JSON_ENGINE, name, log_calls)) for name in ARGUMENTS}

    def Batch(self, batch: pb.JsonBatch, context: grpc.ServicerContext) -> pb.JsonBatchAnswer:
        """Each item answered as its own call would be, in order (docs/grpc.md "Batches")."""
        if len(batch.items) > MAX_BATCH:
            raise MalformedError(f"items: at most {MAX_BATCH} calls in a batch, not {len(batch.items)}")
        return pb.JsonBatchAnswer(answers=[self._item(item, context) for item in batch.items])

    def _item(self, item: pb.JsonBatchItem, context: grpc.ServicerContext) -> pb.JsonItemAnswer:
        """One call of a batch: its answer, or the status its own call would end with (counted, timed and
        logged as that call), or deferred when it needs a bot worker (not counted: it is sent again)."""
        found = self._calls.get(item.method)
        if found is None:
            return _item_status(*status_for(MalformedError(
                f"method: one of {', '.join(sorted(self._calls))}, not {item.method[:64]!r}")))
        handler, observed = found
        start = time.perf_counter()
        try:
            with admission.batched():
                answer = handler(item.call, context)
        except admission.Deferred:
            return pb.JsonItemAnswer(deferred=True)
        except Exception as exc:
            code, details = status_for(exc)
            if code == grpc.StatusCode.INTERNAL:
                log.exception("unexpected error in %s (a call of a batch)", item.method)
            observed.record(code.name, time.perf_counter() - start, context.peer())
            return _item_status(code, details)
        observed.record("OK", time.perf_counter() - start, context.peer())
        return pb.JsonItemAnswer(answer=answer)

    def ListVariants(self, call: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        _args(call, ARGUMENTS["ListVariants"])
        return self._variants

    def NewMatch(self, call: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        args = _args(call, ARGUMENTS["NewMatch"])
        no_deal = args.get("no_deal", False)
        if type(no_deal) is not bool:
            raise MalformedError(f"no_deal: expected true or false, not {no_deal!r}")
        game, events = calls.new_game(args.get("variant"), args.get("players"), options=args.get("options"),
                                      seed=args.get("seed"), deal=args.get("deal"), setup=args.get("setup"),
                                      no_deal=no_deal, bots=args.get("bots"))
        sealed = "view_as" in args
        viewer = _seat_of(_viewer(args), game) if sealed else None
        return _described(_answer(game, events, sealed, viewer, lines=_seat_lines(args)), sealed, game.variant,
                          game.players, game.options)

    def StartRound(self, call: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        args = _args(call, ARGUMENTS["StartRound"])
        carried, match = _match(call, args, "deal")
        return carried.answer(calls.start_round(match, args.get("deal")))

    def LegalActions(self, call: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        args = _args(call, ARGUMENTS["LegalActions"])
        carried = _Carried(call, args)
        game = carried.game
        to_move = game.to_move
        # Sealed: another seat's legal actions would reveal its tiles.
        shown = not carried.sealed or (to_move is not None and carried.viewer == to_move)
        return pb.JsonAnswer(answer=_dumps({"seat": to_move, "actions": game.legal_actions() if shown else []}))

    def Apply(self, call: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        args = _args(call, ARGUMENTS["Apply"])
        if "action" not in args:
            raise MalformedError("action: required")
        carried = _Carried(call, args)
        return carried.answer(calls.apply(carried.game, args["action"], args.get("seat")))

    def Replay(self, call: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        args = _args(call, ARGUMENTS["Replay"])
        actions = args.get("actions")
        if type(actions) is not list:
            raise MalformedError("actions: required, a list of actions")
        carried = _Carried(call, args)
        done = calls.replay(carried.game, actions, args.get("seat"))
        return carried.answer(done.events, changed=done.applied > 0, applied=done.applied, ok=done.ok,
                              failed_index=-1 if done.ok else done.applied, reason=done.reason,
                              error_kind=done.error_kind)

    def Settle(self, call: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        args = _args(call, ARGUMENTS["Settle"])
        carried, match = _match(call, args, "settle")
        events = calls.settle(match, args.get("ending"), args.get("hands"), args.get("last_placer"))
        return carried.answer(events)

    def View(self, call: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        args = _args(call, ARGUMENTS["View"])
        carried = _Carried(call, args)
        game = carried.game
        # {"view": ...}: the same member as in every other answer that carries a view
        if carried.sealed:
            return pb.JsonAnswer(answer=_dumps({"view": game.view_for(carried.viewer),
                                                "scores": game.match_scores()}))
        if "seat" not in args:
            raise MalformedError("seat: required (whose view)")
        return pb.JsonAnswer(answer=_dumps({"view": game.view(args["seat"]), "scores": game.match_scores()}))

    def Suggest(self, call: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        """A bot's move for the seat to move (sealed: only when the caller is that seat)."""
        args = _args(call, ARGUMENTS["Suggest"])
        if "level" not in args:
            raise MalformedError("level: required (random, greedy or expert)")
        carried = _Carried(call, args)
        if carried.sealed and carried.viewer is None:
            raise MalformedError("view_as: a suggestion is for a seat, not the host")
        seat, action = calls.suggest(carried.game, args["level"], args.get("budget_ms"), args.get("seed"),
                                     carried.viewer if carried.sealed else None)
        return pb.JsonAnswer(answer=_dumps({"seat": seat, "action": action}))

    def Hints(self, call: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        """The coach for one seat's view (sealed: the caller's own seat)."""
        args = _args(call, ARGUMENTS["Hints"])
        carried = _Carried(call, args)
        if carried.sealed:
            if carried.viewer is None:
                raise MalformedError("view_as: hints are for a seat, not the host")
            seat: object = carried.viewer
        elif "seat" not in args:
            raise MalformedError("seat: required (whose view)")
        else:
            seat = args["seat"]
        return pb.JsonAnswer(answer=_dumps({"hints": calls.hints(carried.game, seat, args.get("budget_ms"),
                                                                 args.get("seed"))}))

    def Timeout(self, call: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        args = _args(call, ARGUMENTS["Timeout"])
        if "seat" not in args:
            raise MalformedError("seat: required (the seat that timed out)")
        carried = _Carried(call, args)
        return carried.answer(calls.timeout(carried.game, args["seat"]))

    def EndMatch(self, call: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        """An exit of the match (issue 37): `seat` resigns, was gone or aborts (`how`); answered as Timeout."""
        args = _args(call, ARGUMENTS["EndMatch"])
        if "seat" not in args or "how" not in args:
            raise MalformedError("seat and how: required (how: resign, gone or abort)")
        carried = _Carried(call, args)
        return carried.answer(calls.end_match(carried.game, args["seat"], args["how"]))

    def SeatBot(self, call: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        """An online table's seat played by the computer from now on, or by a person again (sealed)."""
        args = _args(call, ARGUMENTS["SeatBot"])
        if "seat" not in args or "level" not in args:
            raise MalformedError("seat and level: required (level null: a person plays the seat again)")
        carried = _Carried(call, args)
        return carried.answer(calls.seat_bot(carried.game, args["seat"], args["level"]))

    # ------------------------------------------------------------ match records (docs/records.md)

    def ExportRecord(self, call: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        args = _args(call, ARGUMENTS["ExportRecord"])
        names = args.get("names")
        if names is not None and type(names) is not list:
            raise MalformedError("names: a list of names, seat 0 first")
        carried = _Carried(call, args)
        game, sealed, viewer = carried.game, carried.sealed, carried.viewer
        if sealed:
            if "view" in args:
                raise MalformedError("view: a sealed match's record is the one its key may see")
            view = "full" if game.finished else "spectator" if viewer is None else f"seat {viewer}"
        else:
            view = args.get("view", "full")
            if not isinstance(view, str):
                raise MalformedError("view: 'full', 'spectator' or 'seat N'")
        record = records.export(game, view, names, args.get("prior"))
        return pb.JsonAnswer(answer=_dumps({"record": records.to_json(record), "text": records.to_text(record)}))

    def ImportRecord(self, call: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        record = _record(_args(call, ARGUMENTS["ImportRecord"]))
        game = calls.import_record(record)
        state, shed = (None, []) if game is None else (game.to_dict(), game.shed)
        body = {"record": records.to_json(record), "text": records.to_text(record), "moves": len(record.moves),
                "state": state}
        if shed:  # the lines that left the state as its rounds ended: a record is exported with them
            body["record_lines"] = shed
        return pb.JsonAnswer(answer=_dumps(body))

    def ReplayRecord(self, call: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        args = _args(call, ARGUMENTS["ReplayRecord"])
        record = _record(args)
        upto = args.get("upto")
        if upto is not None and type(upto) is not int:
            raise MalformedError("upto: a move number")
        game = records.replay(record, upto)
        body = {"state": game.to_dict(), "move": upto or len(record.moves), "moves": len(record.moves)}
        if game.shed:  # as ImportRecord's
            body["record_lines"] = game.shed
        return pb.JsonAnswer(answer=_dumps(body))

    # ------------------------------------------------------------ Bykovo micro-tournament (B)

    def CreateTournament(self, call: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        args = _args(call, ARGUMENTS["CreateTournament"])
        seed = args.get("seed")
        tournament = Tournament.create(args.get("participants"), secrets.randbits(63) if seed is None else seed,
                                       args.get("rating"))
        return _tournament_answer(tournament, [])

    def RecordTournamentRound(self, call: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        args = _args(call, ARGUMENTS["RecordTournamentRound"])
        tournament = _tournament(args)
        if "winner" not in args:
            raise MalformedError("winner: required (the seat 0..3 that won the round)")
        events = tournament.record_round(args.get("points"), args["winner"])
        return _tournament_answer(tournament, events)

    def TournamentStandings(self, call: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        tournament = _tournament(_args(call, ARGUMENTS["TournamentStandings"]))
        return pb.JsonAnswer(answer=_dumps({
            "standings": tournament.standings(),
            "next_players": [] if tournament.over else tournament.next_players(),
            "over": tournament.over}))

