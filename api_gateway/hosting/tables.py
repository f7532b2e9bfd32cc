"""Online tables and their seats (issue 24, docs/tables.md): people on different devices play one sealed
match through the gateway alone. No Flask here: `api_gateway.http.tables_routes` is the REST face.

- A table is a record in the live store (`records`): every change is a compare-and-set of the record's
  version (`Tables._update`): two people racing for the last seat, exactly one write wins and the
  other is read again and refused (`seat-taken`).
- The match is dealt (the engine's NewMatch, sealed, with ``"seat_lines": true``) when the last open
  seat is taken, and created in the store **in the same write** as the table's record (`store.Deal`).
- A credential alone reaches the match: the store answers the match and its table in one read
  (`store.seated`), and the change is made by `HostedPlay` (its token opened once).
- Stream tickets: 30 s, single use, kept hashed in the store, for a browser's EventSource which cannot
  send an Authorization header.
"""
from __future__ import annotations

import hashlib
import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from api_gateway.clocks import Clocks, ClockSetting, ClockSettingError
from api_gateway.engine import EngineIllegal, EngineMalformed
from api_gateway.hosting import records
from api_gateway.hosting.play import HostedPlay
from api_gateway.hosting.presence import Presence, seat_presence
from api_gateway.http.problems import SealedForbidden, TableRefused, UnknownMatch
from api_gateway.matches import hosted_change, match_bytes
from api_gateway.notify import notifier
from api_gateway.store import Deal, HostedMatch, MatchExpired, StoreUnavailable, TableRow
from api_gateway.tokens import HOST, host_key, new_sealed, seat_key

Json = dict[str, Any]
TICKET_TTL = 30
#: The level of the bot that plays a seat its person left, on a table with ``on_leave: "bot"``.
LEAVE_BOT = "greedy"
_ATTEMPTS = 20


@dataclass(frozen=True, slots=True)
class SeatContext:
    """Who is calling about a hosted match: its store record at its latest version, its table, and the
    seat (None: the host)."""

    match_id: str
    hosted: HostedMatch
    table: Json
    seat: int | None


class Tables:
    """The tables of the live store (one instance per app)."""

    def __init__(self, play: HostedPlay, archive: Any = None, clock: Callable[[], float] = time.time,
                 presence: Presence | None = None) -> None:
        self.play = play
        self.matches = play.matches
        self.archive = archive
        self._clock = clock
        self.presence = presence if presence is not None else Presence(lambda: self.matches.store, clock)

    @property
    def store(self) -> Any:
        self.matches.keys  # noqa: B018 - 501 when sealed mode is off: tables host sealed matches
        return self.matches.store

    # ------------------------------------------------------------ records

    def _row(self, table_id: str) -> tuple[TableRow, Json]:
        row = self.store.table(table_id) if len(table_id) <= 64 else None
        if row is None:
            raise TableRefused("unknown-table", f"no table {table_id[:64]!r} (never opened here, or expired)",
                               "table_id")
        return row, orjson.loads(row.record)

    def _over(self, rec: Json) -> bool:
        if rec["match_id"] is None:
            return False
        try:
            return bool(self.store.hosted(bytes.fromhex(rec["match_id"])).over)
        except MatchExpired:
            return True

    def update(self, table_id: str, change: Callable[[Json], tuple[Any, Deal | None]]) -> tuple[Any, Json]:
        """Apply `change` to the table's record and write it if nobody wrote meanwhile (else again, from
        the new record): what `change` answered, and the record written."""
        for _ in range(_ATTEMPTS):
            row, rec = self._row(table_id)
            result, deal = change(rec)
            if self.store.put_table(records.table_row(rec, row.version + 1), deal):
                return result, rec
        raise StoreUnavailable(f"table {table_id}: {_ATTEMPTS} writes in a row lost to others")

    def view(self, rec: Json, over: bool | None = None) -> Json:
        return records.view(rec, self._over(rec) if over is None else over)

    def _who(self, rec: Json, credential: str | None) -> int | None:
        """The seat a credential holds at this table, None for its host key; refusals as the spec says."""
        if not credential:
            raise TableRefused("invalid-credential", "send the seat's credential or the host key as "
                                                     "Authorization: Bearer <value>")
        table_id, _, rest = credential.partition(".")
        who, _, _ = rest.partition(".")
        if not credential.isascii():
            raise TableRefused("invalid-credential", "not a credential of this service")
        if table_id != rec["table_id"]:
            other = self.store.table(table_id) if 0 < len(table_id) <= 64 else None
            if other is not None and records.holds(orjson.loads(other.record), credential, who):
                raise TableRefused("wrong-table", "this credential is another table's", "Authorization")
            raise TableRefused("invalid-credential", "not a credential of this service (or it was given up "
                                                     "when its seat was left)")
        if not records.holds(rec, credential, who):
            raise TableRefused("invalid-credential", "not a credential of this table (or it was given up "
                                                     "when its seat was left)")
        return None if who == HOST else int(who)

    # ------------------------------------------------------------ tables

    def create(self, body: Json, base_url: str, seek: Json | None = None) -> Json:
        variant, players = body["variant"], body["players"]
        options = body.get("options") or {}
        specs = body.get("seats") or [{"kind": "open"}] * players
        if len(specs) != players:
            raise TableRefused("malformed", f"seats: one entry per seat ({players}), not {len(specs)}",
                               "seats")
        if not any(s["kind"] == "open" for s in specs):
            raise TableRefused("malformed", "seats: at least one seat must be open for a person", "seats")
        clock = clock_setting(body)
        found = self.matches.variant(variant)  # 404 unknown-variant
        if clock is not None and not found.get("timeout_rule"):
            records.check_clock_without_rule(variant, clock, sum(1 for s in specs if s["kind"] == "open"))
        # The engine checks players and options now (400), not when the last seat is taken.
        self.matches.engine.call("NewMatch", {"variant": variant, "players": players, "options": options,
                                              "seed": 0})
        table_id = secrets.token_hex(16)
        host = f"{table_id}.{HOST}.{secrets.token_urlsafe(24)}"
        invites: list[Json] = []
        seats = []
        for i, spec in enumerate(specs):
            seat: Json = {"seat": i, "kind": spec["kind"], "level": spec.get("level") or "greedy"
                          if spec["kind"] == "bot" else None, "taken": False, "name": None, "cred": None,
                          "invite": None, "player": None, "bot": None}
            if spec["kind"] == "open":
                code = records.new_invite()
                seat["invite"] = records.secret_hash(code)
                invites.append(records.invite_answer(table_id, i, code, base_url))
            seats.append(seat)
        name = records.display_name(body.get("name"), "") or None
        public = bool(body.get("public", False))
        watch = records.new_invite() if body.get("spectators") and not public else None
        rec: Json = {"table_id": table_id, "name": name, "variant": variant, "players": players,
                     "options": options, "public": public,
                     "rated": bool(body.get("rated", True)), "spectators": watch is not None,
                     "watch": None if watch is None else records.secret_hash(watch),
                     "claim_after": body.get("claim_after"),
                     "on_leave": body.get("on_leave") or "wait", "clock": clock, "seek": seek,
                     "created": self._clock(), "host": records.secret_hash(host),
                     "seats": seats, "match_id": None, "matches": 0}
        if not self.store.put_table(records.table_row(rec, 1)):
            raise StoreUnavailable("a new table's id was taken")  # 128 random bits: never
        link = None if watch is None else f"{base_url.rstrip('/')}/play?table={table_id}&watch={watch}"
        return {"table_id": table_id, "host_key": host, "invites": invites, "spectator_link": link,
                "table": self.view(rec, False)}

    def get(self, table_id: str, credential: str | None = None, invite: str | None = None,
            watch: str | None = None) -> Json:
        """A table as its seats, its host, its spectators (a public table's: anyone; a private one's: whoever
        holds its spectator link, if it has one) or whoever holds one of its unused invites see it; with
        whether each person's seat is here."""
        rec = self._row(table_id)[1]
        if credential is not None:
            self._who(rec, credential)
        elif invite is not None:
            records.seat_to_take(rec, {"invite": invite})  # 409 invalid-invite: used, or not this table's
        else:
            self.check_watcher(rec, watch)
        over = self._over(rec)
        presence = None
        if rec["match_id"] is not None and not over:
            presence = seat_presence(self.store.presence(bytes.fromhex(rec["match_id"])), records.persons(rec),
                                     float(rec.get("dealt") or rec["created"]), self._clock())
        return records.view(rec, over, presence)

    @staticmethod
    def check_watcher(rec: Json, watch: str | None) -> None:
        """Anyone may watch a public table; a private one, whoever holds its spectator link (403 spectators-off)."""
        if rec["public"]:
            return
        if rec.get("watch") is None:
            raise TableRefused("spectators-off", "this table is private and has no spectators: its seats and "
                                                 "host only (send a credential)", "watch")
        if watch is None or not records.holds_watch(rec, watch):
            raise TableRefused("spectators-off", "this private table is watched with its spectator link only "
                                                 "(watch=...)", "watch")

    def lobby(self, variant: str | None, limit: int, cursor: str | None) -> Json:
        before: tuple[float, str] | None = None
        if cursor:
            created, _, table_id = cursor.partition("_")
            try:
                before = (float(created), table_id)
            except ValueError:
                before = None
            if before is None or not math.isfinite(before[0]) or len(table_id) > 64:
                raise TableRefused("bad-cursor", "cursor: pass the next_cursor of the previous page as it came",
                                   "cursor")
        rows = self.store.lobby(variant, limit + 1, before)
        page = rows[:limit]
        tables = [self.view(orjson.loads(r.record)) for r in page]
        nxt = f"{page[-1].created!r}_{page[-1].table_id}" if len(rows) > limit else None
        return {"tables": tables, "next_cursor": nxt}

    def deal(self, rec: Json) -> Deal:
        """A new match for the table's seats: sealed, every viewer's first line, the store's `Deal`."""
        bots = [{"seat": s["seat"], "level": s["level"] if s["kind"] == "bot" else s["bot"]}
                for s in rec["seats"] if s["kind"] == "bot" or (not s["taken"] and s.get("bot"))]
        reply = self.matches.engine.call("NewMatch", {
            "variant": rec["variant"], "players": rec["players"], "options": rec["options"], "bots": bots,
            "view_as": HOST, "seat_lines": True})
        sealed = new_sealed(reply.state)
        token = self.matches.keys.seal(sealed)
        rec["match_id"] = sealed.match_id_hex
        rec["matches"] += 1
        rec["dealt"] = self._clock()
        clocks = b""
        if rec.get("clock") is not None:
            turn = orjson.loads(reply.watcher).get("turn")
            clocks = orjson.dumps(Clocks.start(ClockSetting.from_json(rec["clock"]), rec["players"], turn,
                                               self._clock()).dump())
        # the deal is version 0; its clocks start now (a deal leaves them as they start: no seat charged)
        return Deal(sealed.match_id, reply.public, hosted_change(token, 0, reply, clocks, self._clock(), _started))

    def join(self, table_id: str, body: Json) -> Json:
        self._row(table_id)  # 404 before an assertion is checked
        player = self.archive.player_for(body.get("player")) if self.archive is not None else None
        credential: list[str] = []
        was_bot: list[int] = []

        def change(rec: Json) -> tuple[int, Deal | None]:
            credential.clear()
            was_bot.clear()
            if rec["match_id"] is not None and self._over(rec):
                raise TableRefused("match-over", "this table's match is over (its host may deal another: "
                                                 "POST .../again)")
            seat = records.seat_to_take(rec, body)
            held = records.seat_of(rec, player)
            if held is not None:
                raise TableRefused("seat-held", f"{player} holds seat {held} of this table already (one person, "
                                                "one seat)", "player")
            s = rec["seats"][seat]
            if s.get("bot") and rec["match_id"] is not None:
                was_bot.append(seat)
            cred = f"{table_id}.{seat}.{secrets.token_urlsafe(24)}"
            credential.append(cred)
            s.update(taken=True, name=records.display_name(body.get("name"), f"Player {seat + 1}"),
                     cred=records.secret_hash(cred),
                     invite=None, player=player, bot=None)
            deal = self.deal(rec) if rec["match_id"] is None and records.all_seated(rec) else None
            return seat, deal

        seat, rec = self.update(table_id, change)
        notifier.joined(table_id, seat, body.get("player"), player, rec)  # webhooks: never raises
        if was_bot:
            self.play.seat_bot(rec["match_id"], seat, None)
        return {"table_id": table_id, "seat": seat, "credential": credential[0], "player_id": player,
                "match_id": rec["match_id"], "table": self.view(rec)}

    def leave(self, table_id: str, credential: str | None) -> Json:
        """Give up a seat. Leaving a rated match once every person has moved is a resign (the match ends,
        the leaver's side losing), so that leaving a lost match does not make it unrated."""
        _, before = self._row(table_id)
        seat = self._who(before, credential)
        if seat is not None and before["seats"][seat]["taken"] and before.get("rated", True) \
                and before["match_id"] is not None and seat in records.persons(before) and not self._over(before) \
                and not self._abortable(before):
            try:
                self.play.act(before["match_id"], seat, "EndMatch", {"seat": seat, "how": "resign"})
            except EngineIllegal:  # it ended meanwhile
                pass
        bot: list[str] = []

        def change(rec: Json) -> tuple[int, None]:
            bot.clear()
            seat = self._who(rec, credential)
            if seat is None:
                raise TableRefused("not-seated", "the host key holds no seat to leave", "Authorization")
            s = rec["seats"][seat]
            if not s["taken"]:
                raise TableRefused("not-seated", f"seat {seat} is not taken", "Authorization")
            live = rec["match_id"] is not None and not self._over(rec)
            s.update(taken=False, name=None, cred=None, player=None, invite=None,
                     bot=LEAVE_BOT if live and rec["on_leave"] == "bot" else None)
            if s["bot"]:
                bot.append(s["bot"])
            return seat, None

        seat, rec = self.update(table_id, change)
        if bot:
            try:
                self.play.seat_bot(rec["match_id"], seat, bot[0])
            except EngineMalformed:  # the last person's seat: the engine keeps it a person's, the match waits
                def undo(r: Json) -> tuple[None, None]:
                    r["seats"][seat]["bot"] = None
                    return None, None
                _, rec = self.update(table_id, undo)
        return {"table": self.view(rec)}

    def invites(self, table_id: str, credential: str | None, base_url: str) -> Json:
        def change(rec: Json) -> tuple[list[Json], None]:
            if self._who(rec, credential) is not None:
                raise TableRefused("sealed-forbidden", "only the host key hands out invites", "Authorization")
            made = []
            for s in rec["seats"]:
                if s["kind"] == "open" and not s["taken"]:
                    code = records.new_invite()
                    s["invite"] = records.secret_hash(code)
                    made.append(records.invite_answer(table_id, s["seat"], code, base_url))
            return made, None

        made, _ = self.update(table_id, change)
        return {"invites": made}

    def again(self, table_id: str, credential: str | None) -> Json:
        def change(rec: Json) -> tuple[None, Deal | None]:
            self._who(rec, credential)
            if rec["match_id"] is None or not self._over(rec):
                raise TableRefused("match-not-over", "this table's match is still being played (or not dealt yet)")
            rec["match_id"] = None
            return None, self.deal(rec) if records.all_seated(rec) else None

        _, rec = self.update(table_id, change)
        return {"table": self.view(rec)}

    # ------------------------------------------------------------ the seat's match by credentials

    def hosted(self, match_id: str) -> HostedMatch:
        """A live hosted match (404 unknown-match without one)."""
        return self.play.hosted(match_id)

    def _seated(self, match_id: str) -> tuple[HostedMatch, Json]:
        """A live hosted match at its latest version and its table's record, in one read (404 unknown-match)."""
        try:
            hosted, row = self.store.seated(match_bytes(match_id))
        except MatchExpired:
            raise UnknownMatch(match_id) from None
        found: HostedMatch = hosted
        return found, orjson.loads(row.record)

    def watchable(self, match_id: str, watch: str | None) -> HostedMatch:
        """A hosted match a spectator may watch (its table public, or private with spectators and `watch` its
        code): 403 spectators-off otherwise."""
        hosted, rec = self._seated(match_id)
        self.check_watcher(rec, watch)
        return hosted

    def check_spectate(self, match_id: str) -> None:
        """`GET /v1/matches/{id}/spectate` (by match id alone) watches no private table's match."""
        if not self.matches.sealed or len(match_id) != 2 * 16:
            return  # sealed mode off, or no match's id: the stream answers why
        try:
            _, row = self.store.seated(match_bytes(match_id))
        except MatchExpired:
            return  # not a table's match
        if not orjson.loads(row.record)["public"]:
            raise TableRefused("spectators-off", "a private table's match is watched through its table's stream "
                                                 "(GET /v1/matches/{id}/events) with its spectator link", "match_id")

    def context(self, match_id: str, credential: str | None) -> SeatContext:
        """Who a credential is at a hosted match, with the match's latest version and its table: one read
        of the store. A person whose seat a bot played on autopilot is back (any call with its credential):
        the seat is its own again, with time on its clock."""
        hosted, rec = self._seated(match_id)
        seat = self._who(rec, credential)
        if seat is not None and not hosted.over:
            self.presence.called(bytes.fromhex(match_id), seat)
        if seat is not None and hosted.clocks and not hosted.over \
                and seat in orjson.loads(hosted.clocks).get("autopilot", ()):
            self.play.seat_bot(match_id, seat, None, lambda c, now: c.given_back(seat, now))
            hosted = self.hosted(match_id)
        return SeatContext(match_id, hosted, rec, seat)

    def latest(self, ctx: SeatContext) -> Json:
        """`GET /v1/matches/{id}/seat`: the viewer's latest view and a token + key for the sealed calls."""
        viewer = ctx.seat if ctx.seat is not None else ctx.hosted.viewers - 1
        lines, over = self.store.lines(bytes.fromhex(ctx.match_id), viewer, ctx.hosted.seq)
        line = orjson.loads(lines[-1]) if lines else {}
        sealed = self.matches.keys.open(ctx.hosted.token)
        key = host_key(sealed) if ctx.seat is None else seat_key(sealed, ctx.seat)
        return {"match_id": ctx.match_id, "table_id": ctx.table["table_id"], "seat": ctx.seat, "seq": ctx.hosted.seq,
                "token": ctx.hosted.token, "seat_key": key, "view": line.get("view"), "scores": line.get("scores"),
                "turn": line.get("turn"), "clocks": line.get("clocks"), "over": over}

    def apply(self, ctx: SeatContext, action: Any) -> bytes:
        if ctx.seat is None:
            raise SealedForbidden("the host key cannot act: use the seat's credential", "Authorization")
        return self.play.act(ctx.match_id, ctx.seat, "Apply", {"action": action, "seat": ctx.seat}, ctx.hosted,
                             table=ctx.table)

    # ------------------------------------------------------------ the exits of a match

    def resign(self, ctx: SeatContext) -> bytes:
        """The seat resigns: its side loses (the variant's timeout rule scores it where there is one)."""
        seat = self._seat(ctx, "resign")
        return self.play.act(ctx.match_id, seat, "EndMatch", {"seat": seat, "how": "resign"}, ctx.hosted,
                             table=ctx.table)

    def abort(self, ctx: SeatContext) -> bytes:
        """The match ends with no result and no rating: only before every person at the table has moved."""
        seat = self._seat(ctx, "abort")
        if not self._abortable(ctx.table, ctx.hosted):
            raise TableRefused("abort-closed", "every person at this table has made a move: the match can no "
                                               "longer be aborted (resign instead)", "Authorization")
        return self.play.act(ctx.match_id, seat, "EndMatch", {"seat": seat, "how": "abort"}, ctx.hosted,
                             table=ctx.table)

    def claim(self, ctx: SeatContext) -> bytes:
        """Victory claimed against the person's seat gone longest (no open stream and no call for the table's
        claim time): scored as that seat's timeout where the variant has the rule, else its side placed last."""
        seat = self._seat(ctx, "claim victory")
        if ctx.hosted.over:
            raise TableRefused("claim-refused", "the match is over", "Authorization")
        now = self._clock()
        wait = records.claim_after(ctx.table)
        others = [s for s in records.persons(ctx.table) if s != seat]
        shown = seat_presence(self.store.presence(bytes.fromhex(ctx.match_id)), others,
                              float(ctx.table.get("dealt") or ctx.table["created"]), now)
        gone = sorted((p["away_since"], s) for s, p in shown.items()
                      if not p["here"] and now - p["away_since"] >= wait)
        if not gone:
            raise TableRefused("claim-refused", f"no other person's seat has been gone for {wait} s (the table's "
                                                "claim_after): see the table's seats' here and away_since",
                               "Authorization")
        return self.play.act(ctx.match_id, seat, "EndMatch", {"seat": gone[0][1], "how": "gone"}, ctx.hosted,
                             table=ctx.table)

    @staticmethod
    def _seat(ctx: SeatContext, what: str) -> int:
        if ctx.seat is None:
            raise SealedForbidden(f"the host key cannot {what}: use a seat's credential", "Authorization")
        return ctx.seat

    def _abortable(self, rec: Json, hosted: HostedMatch | None = None) -> bool:
        """Whether some person at the table has not moved yet in its match (the abort window)."""
        match_id = bytes.fromhex(rec["match_id"])
        if hosted is None:
            hosted = self.store.hosted(match_id)
        lines, _ = self.store.lines(match_id, hosted.viewers - 1, 0)
        return not set(records.persons(rec)) <= records.moved(lines)

    def legal(self, ctx: SeatContext) -> bytes:
        return self.matches.legal_actions(self.play.carried(ctx.hosted, ctx.seat, {}))

    def next_round(self, ctx: SeatContext) -> bytes:
        return self.play.act(ctx.match_id, ctx.seat, "StartRound", {}, ctx.hosted, table=ctx.table)

    # ------------------------------------------------------------ stream tickets

    def ticket(self, ctx: SeatContext) -> Json:
        ticket = secrets.token_urlsafe(24)
        payload = orjson.dumps({"match_id": ctx.match_id, "seat": ctx.seat})
        self.store.put_ticket(hashlib.sha256(ticket.encode()).digest(), payload, TICKET_TTL)
        return {"ticket": ticket, "expires_in": TICKET_TTL}

    def spend_ticket(self, match_id: str, ticket: str) -> int | None:
        """The seat (None: the host) a ticket was given for; `invalid-ticket` when bad, spent or expired."""
        payload = self.store.take_ticket(hashlib.sha256(ticket.encode()).digest()) if len(ticket) < 200 else None
        found = orjson.loads(payload) if payload is not None else None
        if found is None or found["match_id"] != match_id:
            raise TableRefused("invalid-ticket", "this stream ticket is unknown, spent or expired (they last "
                                                 f"{TICKET_TTL} s): ask for a new one", "ticket")
        seat: int | None = found["seat"]
        return seat


def _started(clocks: Clocks, now: float) -> Clocks:
    """A deal's clocks: as they start (no seat charged, the seat to move running)."""
    return clocks


def clock_setting(body: Json) -> Json | None:
    """A request's clock setting, checked (400 malformed naming the member), as the record keeps it."""
    try:
        return ClockSetting.from_json(body["clock"]).to_json() if body.get("clock") is not None else None
    except ClockSettingError as exc:
        raise TableRefused("malformed", str(exc), exc.field) from None
