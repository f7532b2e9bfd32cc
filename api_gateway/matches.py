"""What each /v1/matches call asks the engine, in either state mode; no Flask and no rules here.

A request carries its match in one of two ways (`CarrierSchema`):

- transparent: ``state``, the JSON state of a previous answer. The gateway hands
  the request's arguments to the engine's JSON face as they are (the state
  unread) and answers the engine's JSON as it comes: the new state and events.
- sealed: ``token`` and ``seat_key``. The token is opened (`api_gateway.tokens`),
  the key says who is acting (a seat, or the match's host), the version store
  (`api_gateway.store`) says whether the token is the match's latest (an old one is
  refused before anything else is done with it), and the engine gets
  the state's bytes with ``view_as`` naming that caller: it answers the caller's
  own view and the events as the caller may see them (another seat's drawn tile
  null), and the new state's bytes, which go into the new token. No other seat's
  hand, no boneyard order and no seed ever reach a sealed caller. A call that
  changed the match moves the store's version from the token's to the next
  (compare-and-set): of two calls made with the same token, one wins and the
  other is refused as stale, its answer never sent. The store keeps the winner's
  answer with a digest of its request (`store.Receipt`): when a 503 left the
  outcome unknown, the same request retried with the same token is answered
  what the winner was (200, the same body), not refused as stale.

Whether an action is legal, and every conversion of a state, is the engine's.
The only decisions taken here are about who may ask what in sealed mode: a seat
acts only as itself (the engine is told the acting seat and refuses when it is
not that seat's turn), and calls whose input a seat could forge (settling from
declared hands, an explicit deal) are transparent-mode only.

Answers are JSON bytes: the engine's answer itself, or for sealed mode the
token, match id and version put in front of it (`_sealed_answer`).
"""
from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import orjson

from api_gateway.clocks import Clocks
from api_gateway.engine import Engine
from api_gateway.http.problems import (
    HelpRefused,
    SealedForbidden,
    SealedModeDisabled,
    UnknownMatch,
    UnknownVariant,
)
from api_gateway.store import Hosted, LiveStore, MatchExpired, Receipt, StaleToken
from api_gateway.tokens import HOST, KeyRing, Principal, Sealed, host_key, new_sealed, principal_for, seat_key

Json = dict[str, Any]

VARIANTS_TTL = 60.0
#: A sealed match's id: 16 bytes, 32 hex digits in answers (`match_id`).
MATCH_ID_BYTES = 16
#: What a request body says about its carrier and mode: never forwarded to the engine.
_ENVELOPE = frozenset({"token", "seat_key", "mode"})


@dataclass(frozen=True, slots=True)
class Carried:
    """The match a request carries: for sealed requests the opened token and who is calling."""

    args: Json
    sealed: Sealed | None = None
    principal: Principal | None = None
    #: Sealed calls that change the match: the digest of the request (method and whole body).
    digest: bytes = b""
    #: The answer already sent for this very request (a retry after an unknown outcome).
    answered: bytes | None = None
    #: An online table hosts the match: its turn clocks as stored at the token's version (b"": none);
    #: a change also writes the version's event, every viewer's line (`store.Hosted`). None: not hosted.
    hosted: bytes | None = None

    @property
    def viewer(self) -> int | str:
        """`view_as` for the engine: the caller's seat, or "host"."""
        assert self.principal is not None
        return HOST if self.principal.seat is None else self.principal.seat


def _sealed_answer(keys: KeyRing, sealed: Sealed, answer: bytes, extra: Json | None = None,
                   token: str | None = None) -> bytes:
    """``{"token", "match_id", "seq", **extra}`` followed by the members of the engine's JSON answer."""
    head = orjson.dumps({"token": token or keys.seal(sealed), "match_id": sealed.match_id_hex, "seq": sealed.seq,
                         **(extra or {})})
    if answer == b"{}":
        return head
    return head[:-1] + b"," + answer[1:]


def match_bytes(match_id: str) -> bytes:
    """A sealed match's id as the store keys it; 404 unknown-match for text that is no match's id."""
    try:
        raw = bytes.fromhex(match_id)
    except ValueError:
        raw = b""
    if len(raw) != MATCH_ID_BYTES:
        raise UnknownMatch(match_id)
    return raw


def viewer_line(seq: int, line: bytes) -> bytes:
    """One viewer's line of a hosted match's version `seq` (docs/tables.md, the stream's `update`):
    ``{"seq": seq, "events", "view", "scores"}`` from the engine's line for that viewer (`seat_lines`)."""
    head = b'{"seq":%d' % seq
    return head + b"}" if line.strip() in (b"", b"{}") else head + b"," + line.lstrip()[1:]


def hosted_lines(seq: int, reply: Any) -> list[bytes]:
    """Every viewer's line of a sealed answer made with ``"seat_lines": true``: the seats', then the public's."""
    return [viewer_line(seq, line) for line in (*reply.seats, reply.watcher)]


#: What a change does to a hosted match's clocks besides moving them on (a seat put on autopilot, a
#: person back from it), given the clocks and the time.
ClockChange = Callable[[Clocks, float], Clocks]


@dataclass(frozen=True, slots=True)
class Change:
    """What a call that may change a match answered: the answer's JSON, and when it advanced a sealed
    match, its new state and whether the change ended a hosted match (to be handed to the archive)."""

    answer: bytes
    state: bytes | None = None
    ended: bool = False


def hosted_change(token: str, seq: int, reply: Any, stored_clocks: bytes, now: float,
                  change: ClockChange | None = None, archive_after: float = 0.0) -> Hosted:
    """What the store keeps of a hosted match's version `seq`: the token and every viewer's line, and with a
    turn clock its clocks moved on (the seat that acted charged, the seat now to act running; none between
    rounds and at the end), shown in every line. The change that ends the match is due for the archive
    hand-off `archive_after` seconds on (`ArchiveHandoff`), in case nobody hands it over before."""
    hosted = Hosted(token, hosted_lines(seq, reply))
    if stored_clocks:
        clocks = Clocks.load(orjson.loads(stored_clocks))
        turn = None if reply.over else orjson.loads(reply.watcher).get("turn")
        if change is not None:
            clocks = change(clocks, now)
        if change is None or turn != clocks.running:
            clocks = clocks.moved(turn, now)
        shown = b',"clocks":' + orjson.dumps(clocks.to_json(now)) + b"}"
        hosted = Hosted(token, [line[:-1] + shown for line in hosted.lines], orjson.dumps(clocks.dump()),
                        clocks.deadline)
    if reply.over:
        hosted = replace(hosted, deadline=now + archive_after)
    return hosted


def _digest(method: str, body: Mapping[str, Any]) -> bytes:
    """The identity of a request that changes a match: its method and whole body (token, seat key and
    arguments), canonical JSON hashed; a retry of the same request has the same digest."""
    return hashlib.sha256(method.encode() + b"\0" + orjson.dumps(dict(body), option=orjson.OPT_SORT_KEYS)).digest()


class Matches:
    """The gateway's calls; one instance per app, shared by the worker's threads."""

    def __init__(self, engine: Engine, keys: KeyRing | None, store: LiveStore | None = None,
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time) -> None:
        if keys is not None and store is None:
            raise ValueError("sealed mode needs a version store: tokens are never accepted unchecked")
        self.engine = engine
        self._keys = keys
        self._store = store
        self._clock = clock
        #: Unix seconds: the turn clocks' time.
        self.wall = wall
        self._variants: tuple[float, list[Json]] | None = None
        self._variants_lock = threading.Lock()

    # ------------------------------------------------------------ variants

    def variants(self) -> list[Json]:
        """The engine's presets (cached for a minute: they change only with an engine release)."""
        now = self._clock()
        cached = self._variants
        if cached is not None and now - cached[0] < VARIANTS_TTL:
            return cached[1]
        listing: list[Json] = orjson.loads(self.engine.call("ListVariants", {}).answer)["variants"]
        with self._variants_lock:
            self._variants = (now, listing)
        return listing

    def variant(self, name: str) -> Json:
        for v in self.variants():
            if v["name"] == name:
                return v
        raise UnknownVariant(name, [v["name"] for v in self.variants()])

    # ------------------------------------------------------------ carrying the match

    @property
    def sealed(self) -> bool:
        """Whether sealed mode is on (keys configured)."""
        return self._keys is not None

    @property
    def keys(self) -> KeyRing:
        if self._keys is None:
            raise SealedModeDisabled("set STATE_TOKEN_KEYS to use sealed mode")
        return self._keys

    @property
    def store(self) -> LiveStore:
        assert self._store is not None  # sealed mode always has one (`__init__`)
        return self._store

    def load(self, body: Mapping[str, Any], method: str = "") -> Carried:
        """The match of a validated request body (exactly one of state or token + seat_key).

        `method` names a call that changes the match: with a token one version old, the
        answer stored for this very request (its digest) is taken instead of a stale refusal."""
        args = {k: v for k, v in body.items() if k not in _ENVELOPE}
        if "token" not in body:
            return Carried(args)
        sealed = self.keys.open(body["token"])
        principal = principal_for(sealed, body["seat_key"])
        digest = _digest(method, body) if method else b""
        try:
            hosted = self.store.check(sealed.match_id, sealed.seq)  # an old token goes no further
        except StaleToken as stale:
            answered = (self.store.answered(sealed.match_id, sealed.seq, digest)
                        if digest and stale.latest == sealed.seq + 1 else None)
            if answered is None:
                raise
            return Carried(args, sealed, principal, digest, answered)
        return Carried(args, sealed, principal, digest, hosted=hosted)

    def _call(self, method: str, carried: Carried, args: Json | None = None) -> bytes:
        """`method` on the carried match: the answer's JSON, in sealed mode with the next token in front."""
        return self.change(method, carried, args).answer

    def change(self, method: str, carried: Carried, args: Json | None = None, clock_change: ClockChange | None = None,
               archive_after: float = 0.0) -> Change:
        """`method` on the carried match, and what it changed. A hosted match's change keeps the version's
        event and its clocks (`hosted_change`), in the same write as the advance; the store then wakes the
        streams watching the match. The change that ends a hosted match is due for the archive hand-off
        `archive_after` seconds on (0: at the hand-off's next pass; the hosting hands it over at once)."""
        if carried.sealed is None:
            return Change(self.engine.call(method, carried.args if args is None else args).answer)
        if carried.answered is not None:
            return Change(carried.answered)
        call_args = {**(carried.args if args is None else args), "view_as": carried.viewer}
        if carried.hosted is not None:
            call_args["seat_lines"] = True  # every viewer's line of the change, for the table's streams
        reply = self.engine.call(method, call_args, carried.sealed.state)
        sealed = carried.sealed
        if not reply.state:
            return Change(_sealed_answer(self.keys, sealed, reply.answer))
        # The match changed: this token's version must still be the latest. The answer is made first
        # and stored with the advance, for a retry of this request after an unknown outcome (a 503).
        after = sealed.advanced(reply.state)
        token = self.keys.seal(after)
        answer = _sealed_answer(self.keys, after, reply.answer, token=token)
        receipt = Receipt(carried.digest, answer) if carried.digest else None
        hosted = (None if carried.hosted is None else
                  hosted_change(token, after.seq, reply, carried.hosted, self.wall(), clock_change, archive_after))
        stored = self.store.advance(sealed.match_id, sealed.seq, reply.public, reply.over, receipt, hosted,
                                    record=reply.record_lines)
        if stored is not None:
            return Change(stored)
        return Change(answer, reply.state, hosted is not None and bool(reply.over))

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

    def new_match(self, body: Mapping[str, Any]) -> bytes:
        args = {k: v for k, v in body.items() if k not in _ENVELOPE}
        if body.get("mode") != "sealed":
            return self.engine.call("NewMatch", args).answer
        keys = self.keys  # 501 before the engine is asked, when sealed mode is off
        reply = self.engine.call("NewMatch", {**args, "view_as": HOST})
        sealed = new_sealed(reply.state)
        self.store.create(sealed.match_id, reply.public)
        return _sealed_answer(keys, sealed, reply.answer, {
            "seat_keys": [seat_key(sealed, s) for s in range(body["players"])],
            "host_key": host_key(sealed),
        })

    def legal(self, body: Mapping[str, Any]) -> bytes:
        return self.legal_actions(self.load(body))

    def legal_actions(self, carried: Carried) -> bytes:
        """The seat to move and, for that seat's own caller, its legal actions."""
        if carried.sealed is None:
            return self.engine.call("LegalActions", carried.args).answer
        # Sealed: the engine shows the actions only to the seat to move; the token is unchanged.
        return self.engine.call("LegalActions", {"view_as": carried.viewer}, carried.sealed.state).answer

    def suggest(self, body: Mapping[str, Any]) -> bytes:
        """A bot's move for the seat to move; sealed: only for the key's own seat (its view alone)."""
        carried = self.load(body)
        if carried.sealed is None:
            return self.engine.call("Suggest", carried.args).answer
        assert carried.principal is not None
        if carried.principal.is_host:
            raise SealedForbidden("the host key has no seat to suggest a move for: use a seat key", "seat_key")
        self._no_help_if_rated(carried, "a suggested move")
        return self.engine.call("Suggest", {**carried.args, "view_as": carried.viewer}, carried.sealed.state).answer

    def hints(self, body: Mapping[str, Any]) -> bytes:
        """The coach for one seat's view; sealed: the key's own seat only."""
        carried = self.load(body)
        if carried.sealed is None:
            return self.engine.call("Hints", carried.args).answer
        principal = carried.principal
        assert principal is not None
        if principal.is_host:
            raise SealedForbidden("the host key has no seat to coach: use a seat key", "seat_key")
        if body.get("seat") is not None and body["seat"] != principal.seat:
            raise SealedForbidden(f"{principal.label}'s key is coached on its own view only", "seat")
        self._no_help_if_rated(carried, "the coach")
        args = {k: v for k, v in carried.args.items() if k != "seat"}
        return self.engine.call("Hints", {**args, "view_as": carried.viewer}, carried.sealed.state).answer

    def _no_help_if_rated(self, carried: Carried, what: str) -> None:
        """A seat of a rated table's match gets no help from the engine (its table read: one more store trip,
        for hosted matches only)."""
        if carried.hosted is None or carried.sealed is None:
            return
        try:
            _, row = self.store.seated(carried.sealed.match_id)
        except MatchExpired:
            return
        if orjson.loads(row.record).get("rated", True):
            raise HelpRefused(f"{what} is not for a seat of a rated match (its table is rated: a casual table, "
                              "\"rated\": false, allows it)")

    def apply(self, body: Mapping[str, Any]) -> bytes:
        carried = self.load(body, "Apply")
        seat = self._acting_seat(carried, body.get("seat"), "act")
        args = dict(carried.args)
        if seat is not None:
            args["seat"] = seat
        return self._call("Apply", carried, args)


    def replay(self, body: Mapping[str, Any]) -> bytes:
        carried = self.load(body, "Replay")
        if carried.sealed is None:
            return self._call("Replay", carried)
        seat = self._acting_seat(carried, None, "replay actions")
        # Each action must be the key's seat's own (the engine checks the seat to move before each).
        return self._call("Replay", carried, {**carried.args, "seat": seat})

    def settle(self, body: Mapping[str, Any]) -> bytes:
        carried = self.load(body)
        if carried.sealed is not None:
            raise SealedForbidden("settle scores hands as declared by the caller: transparent mode only", "token")
        return self._call("Settle", carried)

    def next_round(self, body: Mapping[str, Any]) -> bytes:
        carried = self.load(body, "StartRound")
        if carried.sealed is not None and "deal" in body:
            raise SealedForbidden("a sealed match deals from its seed: an explicit deal would let the "
                                  "caller choose the hands", "deal")
        return self._call("StartRound", carried)

    def timeout(self, body: Mapping[str, Any]) -> bytes:
        carried = self.load(body, "Timeout")
        seat = body.get("seat")
        principal = carried.principal
        if principal is not None and not principal.is_host:
            seat = self._acting_seat(carried, seat, "time out")  # a seat may only concede its own clock
        if seat is None:  # transparent mode without a seat is refused by the schema (422)
            raise SealedForbidden("the host key must name the seat that timed out", "seat")
        if principal is not None and principal.is_host and carried.hosted is not None and carried.answered is None:
            self._check_ran_out(carried.hosted, seat)
        return self._call("Timeout", carried, {**carried.args, "seat": seat})

    def _check_ran_out(self, stored_clocks: bytes, seat: int) -> None:
        """An online table's host may not end the match for a seat at will (that won a rating alone, the
        second seat held as a guest): only a seat whose turn clock has run out, which the service's
        keepers time out by themselves anyway."""
        clocks = Clocks.load(orjson.loads(stored_clocks)) if stored_clocks else None
        if clocks is None or clocks.running != seat or not clocks.expired(self.wall()):
            raise SealedForbidden(f"a table's host key times out a seat only once its turn clock has run out, and "
                                  f"seat {seat}'s has not (a table's clocks run out by themselves)", "seat")

    # ------------------------------------------------------------ records (docs/records.md)

    def record(self, body: Mapping[str, Any]) -> bytes:
        """The match's record: transparent, in the view asked (full by default); sealed, the one the
        key may see (a seat's own, the host's spectator record, the full one once the match is over)."""
        carried = self.load(body)
        if carried.sealed is None:
            return self.engine.call("ExportRecord", carried.args).answer
        return self.engine.call("ExportRecord", {**carried.args, "view_as": carried.viewer,
                                                 "prior": self.prior_lines(carried.sealed.match_id)},
                                carried.sealed.state).answer

    def prior_lines(self, match_id: bytes) -> list[str]:
        """The log lines that left a sealed match's state as its rounds ended, kept by the store with the
        advances that ended them: what its record is exported with (`prior`, docs/records.md)."""
        return self.store.record_lines(match_id)

    def import_record(self, body: Mapping[str, Any]) -> bytes:
        return self.engine.call("ImportRecord", dict(body)).answer

    def replay_record(self, body: Mapping[str, Any]) -> bytes:
        return self.engine.call("ReplayRecord", dict(body)).answer

    def public_lines(self, match_id: str, start: int) -> tuple[list[bytes], bool]:
        """A live sealed match's public lines from the `start`-th, and whether it is over."""
        self.keys  # noqa: B018 - 501 when sealed mode is off
        raw = match_bytes(match_id)
        try:
            return self.store.public(raw, start)
        except MatchExpired:
            raise UnknownMatch(match_id) from None

    def view(self, body: Mapping[str, Any]) -> bytes:
        carried = self.load(body)
        seat = body.get("seat")
        principal = carried.principal
        if carried.sealed is None or principal is None:  # transparent: the schema made `seat` required
            return self.engine.call("View", carried.args).answer
        if seat is not None and seat != principal.seat:
            raise SealedForbidden(f"{principal.label}'s key sees only its own view", "seat")
        return self.engine.call("View", {"view_as": carried.viewer}, carried.sealed.state).answer
