"""Hosted tournaments (issue 41): the service seats every round's tables itself (docs/tournaments.md).

`install` is called once by the app factory (`api_gateway.app.create_app`) with the worker's hosting.

A tournament's state lives in the archive database (`api_gateway.archive.hosted`: one row, compare-and-set
of its version), so that every gateway sees the same one and a restart loses nothing. Each round is an
ordinary online table (`Tables`): opened private, its four seats taken at once for that round's players
(their names and player ids; fresh seat credentials, which each player reads with their tournament
credential) and dealt; from then on it is a table's match like any other (seat streams, clocks, presence,
the exits of a match).

`advance` moves a tournament on: seats its next round, records a round whose match is over (its points, or
a forfeit) in the engine's tournament state (RecordTournamentRound: eliminations, the next players, the
end) and archives the places once it is over (`Archive.finish_tournament`). Every step is idempotent and
is done under a lease of the live store, so that two gateways (a keeper's pass on each, or a player's read)
never seat one round twice: a keeper of every worker runs it twice a second for the tournaments being
played, and a participant's read of the tournament runs it too.
"""
from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from typing import Any

import orjson
from flask import Flask

from api_gateway.archive.database import ArchiveUnavailable
from api_gateway.archive.hosted import OPEN, OVER, PLAYING, FinalStandings, HostedRows, TournamentRow
from api_gateway.engine import EngineIllegal, EngineProblem
from api_gateway.hosting import records
from api_gateway.hosting import tournament_records as rules
from api_gateway.hosting import tournament_swiss as swiss_rules
from api_gateway.hosting.keepers import Keeper
from api_gateway.hosting.tables import Tables, clock_setting
from api_gateway.hosting.tournament_stream import TournamentStreams
from api_gateway.http.problems import SealedForbidden, TableRefused, UnknownMatch
from api_gateway.notify import notifier
from api_gateway.store import Deal, MatchExpired, StoreUnavailable
from api_gateway.tokens import new_sealed

log = logging.getLogger("api_gateway.hosting.tournaments")

Json = dict[str, Any]
#: The app extensions holding the worker's `HostedTournaments` and its `TournamentStreams`.
HOSTED = "domino_hosted_tournaments"
STREAMS = "domino_tournament_streams"
#: Seconds between a keeper's passes over the tournaments being played.
PERIOD = 0.5
#: Seconds between a keeper's looks while no tournament is being played. A start here wakes this worker's
#: keeper at once (`wake`); this look is for tournaments a worker that is gone was keeping (their participants'
#: reads advance them meanwhile). Every 5 s it was a tenth of an idle worker's CPU (docs/performance.md).
IDLE_PERIOD = 30.0
#: Seconds a worker holds a tournament's lease at most while it advances it.
LEASE_SECONDS = 30.0
_ATTEMPTS = 20
#: Steps of one `advance` at most (seat, record, seat the next round, archive...).
_STEPS = 6


class HostedTournaments:
    """The hosted tournaments (one instance per app)."""

    def __init__(self, tables: Tables, archive: Any, clock: Callable[[], float] = time.time) -> None:
        self.tables = tables
        self.archive = archive
        self.rows = HostedRows(archive.repository.engine)
        self._clock = clock
        self._holder = secrets.token_bytes(8)
        self._playing = True
        #: Whether the keeper's last look found the database down (what it logged last).
        self._archive_down = False
        #: Wakes this worker's keeper (`install`): a tournament started here is kept from now, not at its next look.
        self.wake: Callable[[], None] = lambda: None

    @property
    def engine(self) -> Any:
        return self.tables.matches.engine

    # ------------------------------------------------------------ rows

    def row(self, tournament_id: str) -> TournamentRow:
        """The tournament as it stands (404 unknown-tournament): what its stream reads."""
        return self._row(tournament_id)

    def _row(self, tournament_id: str) -> TournamentRow:
        row = self.rows.get(tournament_id) if 0 < len(tournament_id) <= 64 else None
        if row is None:
            raise TableRefused("unknown-tournament", f"no tournament {tournament_id[:64]!r} (never opened here)",
                               "tournament_id")
        return row

    def update(self, tournament_id: str, change: Callable[[Json], Any]) -> tuple[Any, TournamentRow]:
        """Apply `change` to the tournament's state and write it if nobody wrote meanwhile (else again, from
        the new state): what `change` answered, and the row written. `change` may raise to refuse."""
        for _ in range(_ATTEMPTS):
            row = self._row(tournament_id)
            state = orjson.loads(orjson.dumps(row.state))
            result = change(state)
            if state == row.state:
                return result, row
            if self.rows.put(row, state):
                return result, TournamentRow(tournament_id, row.version + 1, state)
        raise StoreUnavailable(f"tournament {tournament_id}: {_ATTEMPTS} writes in a row lost to others")

    # ------------------------------------------------------------ the calls

    def open(self, body: Json, base_url: str) -> Json:
        """A new tournament: its id, the host key (answered once) and one invite per place."""
        self.tables.store  # noqa: B018 - 501 when sealed mode is off: the rounds are hosted tables
        clock = clock_setting(body)
        tournament_id = secrets.token_hex(16)
        host = f"{tournament_id}.host.{secrets.token_urlsafe(24)}"
        state, codes = rules.new_state(tournament_id, {**body, "clock": clock}, host, self._clock())
        variant, seats = state["variant"], state["seats"]
        if clock is not None and not self.tables.matches.variant(variant).get("timeout_rule"):  # 404 unknown-variant
            records.check_clock_without_rule(variant, clock, seats)
        # the engine checks the variant, its player count and the options now (400), not at round 1
        dealt = self.engine.call("NewMatch", {"variant": variant, "players": seats, "options": state["options"],
                                              "seed": 0})
        if state["swiss"] is not None:  # a match's sides (a pair game of four: 2), for its points
            state["swiss"]["sides"] = len(orjson.loads(dealt.answer).get("scores") or ()) or seats
        self.rows.create(tournament_id, state)
        base = base_url.rstrip("/")
        return {"tournament_id": tournament_id, "host_key": host,
                "invites": [{"code": c, "link": f"{base}/play?tournament={tournament_id}&invite={c}"} for c in codes],
                "tournament": rules.view(state, 1)}

    def lobby(self, limit: int) -> Json:
        return {"tournaments": [rules.view(s, 0) | {"version": None}
                                for s in self.rows.lobby(limit)]}

    def join(self, tournament_id: str, body: Json) -> Json:
        self._row(tournament_id)  # 404 before an assertion is checked
        player = self.archive.player_for(body.get("player"))
        credential: list[str] = []

        def change(state: Json) -> int:
            credential.clear()
            if state["status"] != OPEN:
                raise TableRefused("tournament-started", f"this tournament is {state['status']}: nobody joins it "
                                                     "any more")
            rules.take_invite(state, body)
            credential.append(rules.add_person(state, body.get("name"), player, notifier.app_of(body.get("player"))))
            return len(state["people"]) - 1

        index, row = self.update(tournament_id, change)
        return {"tournament_id": tournament_id, "index": index, "credential": credential[0], "player_id": player,
                "tournament": rules.view(row.state, row.version)}

    def start(self, tournament_id: str, credential: str | None) -> Json:
        """The host starts it: the engine's tournament (the order of joining, the limit, who sits out round 1
        by lot), then round 1 is seated."""
        row = self._row(tournament_id)
        if rules.who(row.state, credential) is not None:
            raise SealedForbidden("only the host key starts the tournament", "Authorization")
        if row.state["status"] != OPEN:
            raise TableRefused("tournament-started", f"this tournament is {row.state['status']}: it was started "
                                                 "already")
        people = row.state["people"]
        swiss = row.state["swiss"]
        if swiss is not None:
            smallest = max(rules.SWISS_SMALLEST, swiss_rules.seats_of(swiss))
            if len(people) < smallest:
                raise TableRefused("too-few-participants", f"{len(people)} joined: this Swiss starts with "
                                                     f"{smallest} or more")
            begun = {"swiss": swiss_rules.started(swiss, len(people))}
        else:
            if not rules.SMALLEST <= len(people) <= rules.LARGEST:
                raise TableRefused("too-few-participants", f"{len(people)} joined: a Bykovo micro-tournament starts "
                                                     f"with {rules.SMALLEST} to {rules.LARGEST} people")
            begun = {"engine": orjson.loads(self.engine.call("CreateTournament", {
                "participants": [p["name"] for p in people], "seed": secrets.randbits(63)}).answer)["state"]}

        def change(state: Json) -> None:
            if state["status"] != OPEN:
                raise TableRefused("tournament-started", f"this tournament is {state['status']}: it was started "
                                                     "already")
            if [p["name"] for p in state["people"]] != [p["name"] for p in people]:
                raise TableRefused("illegal-action", "someone joined or left meanwhile: start again")
            state.update(status=PLAYING, started=self._clock(), **begun)

        self.update(tournament_id, change)
        self._playing = True
        self.wake()
        row = self._advance_now(tournament_id)
        return {"tournament": rules.view(row.state, row.version)}

    def leave(self, tournament_id: str, credential: str | None) -> Json:
        """A participant leaves: before the start their place is freed; after it they forfeit (their round's
        seat resigns now, or at their next round when they sit out); over: 409."""
        resign: list[Json] = []

        def change(state: Json) -> None:
            resign.clear()
            index = rules.who(state, credential)
            if index is None:
                raise TableRefused("not-seated", "the host key holds no place to leave", "Authorization")
            if state["status"] == OVER:
                raise TableRefused("illegal-action", "this tournament is over")
            if state["status"] == OPEN:
                del state["people"][index]
                return
            state["people"][index]["left"] = True
            for table in rules.round_tables(state["round"]) if state["round"] is not None else ():
                if table.get("match_id") and index in table["players"]:
                    resign.append({"match_id": table["match_id"], "seat": table["players"].index(index)})

        _, row = self.update(tournament_id, change)
        for seat in resign:
            self._resign(seat["match_id"], seat["seat"])
        if row.state["status"] == PLAYING:
            row = self._advance_now(tournament_id)
        return {"tournament": rules.view(row.state, row.version)}

    def get(self, tournament_id: str, credential: str | None) -> Json:
        """The tournament (anyone holding its id); with a participant's credential, their place now (`you`):
        the table, seat and seat credential of their round, or that they sit out. Advances it first when its
        round is over (idempotent), so a player's poll never waits for a keeper's pass."""
        row = self._row(tournament_id)
        index = rules.who(row.state, credential) if credential is not None else None
        if row.state["status"] == PLAYING:
            row = self._advance_now(tournament_id)
        answer = rules.view(row.state, row.version)
        if index is not None:
            answer["you"] = rules.you(row.state, index, self._open_seats)
        return answer

    # ------------------------------------------------------------ advancing

    def next_pass(self) -> float:
        """When the keeper looks next: soon while tournaments are played (a round nobody polls ends), seldom
        when the last look found none (a start, and every participant's read, advance their own)."""
        return self._clock() + (PERIOD if self._playing else IDLE_PERIOD)

    def advance_due(self) -> int:
        """A keeper's pass: every tournament being played (or over, its places not archived) advanced."""
        done = 0
        try:
            active = self.rows.active()
        except ArchiveUnavailable as exc:
            if not self._archive_down:  # once as it goes down, not at every pass while it stays down
                log.warning("tournaments: the archive database does not answer: %s", exc)
            self._archive_down = True
            self._playing = False  # nothing advances meanwhile: look seldom
            return 0
        if self._archive_down:
            log.warning("tournaments: the archive database answers again")
            self._archive_down = False
        self._playing = bool(active)
        for tournament_id in active:
            try:
                self.advance(tournament_id)
                done += 1
            except (EngineProblem, StoreUnavailable, ArchiveUnavailable) as exc:
                log.warning("tournament %s: not advanced this pass: %s", tournament_id, exc)
        return done

    def _advance_now(self, tournament_id: str) -> TournamentRow:
        """`advance` within a call that answers the tournament: when the engine, the store or the database fails
        it, the tournament as it stands (the keepers try again), not a failed answer."""
        try:
            return self.advance(tournament_id)
        except (EngineProblem, StoreUnavailable, ArchiveUnavailable) as exc:
            log.warning("tournament %s: not advanced now: %s", tournament_id, exc)
            return self._row(tournament_id)

    def advance(self, tournament_id: str) -> TournamentRow:
        """Move the tournament on as far as it goes now, under its lease (another worker holding it: as it
        is); the row as it then stands."""
        store = self.tables.store
        row = self._row(tournament_id)
        if not self._due(row):
            return row  # a player's poll while the round is played: reads only
        name = f"tournament:{tournament_id}"
        if not store.lease(name, self._holder, LEASE_SECONDS):
            return row
        try:
            row = self._row(tournament_id)
            for _ in range(_STEPS):
                stepped = self._step(row)
                if stepped is None:
                    break
                row = stepped
            return row
        finally:
            store.release(name, self._holder)

    def _due(self, row: TournamentRow) -> bool:
        """Whether `_step` has something to do (read only): a round to seat or deal, a table's match that ended
        (a Bykovo round's: its round ended, or an exit ended it), a participant who left still seated, places to
        archive."""
        state = row.state
        rnd = state["round"]
        if state["status"] != PLAYING or rnd is None:
            return (state["status"] == OVER and not state["archived"]) or state["status"] == PLAYING
        tables = rules.round_tables(rnd)
        if not all(t.get("match_id") for t in tables):
            return True
        ended = [self._ended(state, t) for t in tables]
        if all(e is not None for e in ended):
            return True
        return any(state["people"][p]["left"] for t, e in zip(tables, ended, strict=True) if e is None
                   for p in t["players"])

    def _ended(self, state: Json, table: Json) -> Any:
        """How a table's match ended (None: it is played): a Bykovo round's `Outcome`, a Swiss match's points
        by seat. A match the store forgot (idle beyond its time): as forfeited by its seat 0."""
        match_id = bytes.fromhex(table["match_id"])
        try:
            hosted = self.tables.store.hosted(match_id)
            if state["swiss"] is not None:  # a whole match: only its last change (the end and its exit) tells
                if not hosted.over:
                    return None
                lines, _ = self.tables.store.lines(match_id, hosted.viewers - 1, hosted.seq)
                return swiss_rules.match_result(lines, swiss_rules.seats_of(state["swiss"]),
                                                swiss_rules.sides_of(state["swiss"]))
            lines, _ = self.tables.store.lines(match_id, hosted.viewers - 1, 0)  # a Bykovo round ends mid-match
        except MatchExpired:
            return rules.Outcome(forfeit=0) if state["swiss"] is None else swiss_rules.forfeited(state["swiss"], 0)
        return rules.round_outcome(lines)

    def _step(self, row: TournamentRow) -> TournamentRow | None:
        """One step of the tournament from `row`, or None when nothing is to be done now."""
        state = row.state
        if state["status"] == OVER:
            return None if state["archived"] else self._archive(row)
        if state["status"] != PLAYING:
            return None
        rnd = state["round"]
        if rnd is None:
            return self._seat_round(row) if state["swiss"] is None else self._seat_swiss_round(row)
        if not all(t.get("match_id") for t in rules.round_tables(rnd)):
            return self._deal_round(row)
        return self._finish_round(row) if state["swiss"] is None else self._finish_swiss_round(row)

    def _open_table(self, state: Json, players: list[int], number: int) -> Json:
        """A round's table for `players` (seats in that order), opened private and not dealt; its seats'
        credentials made now and kept sealed (`seats`) until the deal takes the seats with them."""
        name = f"{state['name'] or 'Tournament'}: round {number}"
        opened = self.tables.create({"variant": state["variant"], "players": len(players),
                                     "options": state.get("options") or {},
                                     "seats": [{"kind": "open"}] * len(players), "public": False,
                                     "rated": state["rated"], "on_leave": "bot", "name": name[:60],
                                     "clock": state["clock"]}, "http://localhost")
        seats = [f"{opened['table_id']}.{s}.{secrets.token_urlsafe(24)}" for s in range(len(players))]
        return {"table_id": opened["table_id"], "match_id": None, "players": players,
                "seats": self.tables.matches.keys.seal(new_sealed(orjson.dumps(seats)))}

    def _seat_round(self, row: TournamentRow) -> TournamentRow:
        """Open the next Bykovo round's table (its seats for the engine's next players, in the tournament's
        order)."""
        state = row.state
        number = len(state["rounds"]) + 1
        table = self._open_table(state, list(state["engine"]["next_players"]), number)

        def change(s: Json) -> None:
            if s["round"] is None and s["status"] == PLAYING:
                s["round"] = {"number": number, **table}

        _, written = self.update(row.tournament_id, change)
        return written

    def _seat_swiss_round(self, row: TournamentRow) -> TournamentRow:
        """Seat the next Swiss round (`tournament_swiss.seat_round`: pairs, or tables of four by standing) and
        open each of its tables."""
        state = row.state
        number = len(state["rounds"]) + 1
        still = [i for i, p in enumerate(state["people"]) if not p["left"]]
        if len(still) < swiss_rules.seats_of(state["swiss"]):  # too few left to seat a table: it ends here

            def end(s: Json) -> None:
                if s["round"] is None and s["status"] == PLAYING:
                    s.update(status=OVER, finished=self._clock())

            return self.update(row.tournament_id, end)[1]
        seated, byes = swiss_rules.seat_round(state["swiss"], still)
        tables = [self._open_table(state, players, number) for players in seated]

        def change(s: Json) -> None:
            if s["round"] is None and s["status"] == PLAYING:
                s["round"] = {"number": number, "tables": tables, "bye": byes[0] if byes else None, "byes": byes}

        _, written = self.update(row.tournament_id, change)
        return written

    def _deal_round(self, row: TournamentRow) -> TournamentRow:
        """Take each of the round's tables' seats for its players (fresh credentials, their names and player ids)
        and deal its match, in one write of the table; a participant who left is resigned at once (a forfeit)."""
        state = row.state
        dealt: dict[str, str] = {}
        for table in rules.round_tables(state["round"]):
            if table.get("match_id"):
                continue
            seats = self._open_seats(table["seats"])
            people = [state["people"][p] for p in table["players"]]

            def seat_all(rec: Json, seats: list[str] = seats,
                         people: list[Json] = people) -> tuple[tuple[str, bool], Deal | None]:
                if rec["match_id"] is not None:
                    return (str(rec["match_id"]), False), None
                for s, person in enumerate(people):
                    rec["seats"][s].update(taken=True, name=person["name"], cred=records.secret_hash(seats[s]),
                                           invite=None, player=person["player"], bot=None)
                deal = self.tables.deal(rec)  # sets the record's match_id
                return (str(rec["match_id"]), True), deal

            (match_id, new), rec = self.tables.update(table["table_id"], seat_all)
            dealt[table["table_id"]] = match_id
            if new:
                self._tell_dealt(table["table_id"], people, rec)

        def change(s: Json) -> None:
            for t in rules.round_tables(s["round"]) if s["round"] is not None else ():
                if t["table_id"] in dealt:
                    t.update(match_id=dealt[t["table_id"]], dealt=self._clock())

        _, written = self.update(row.tournament_id, change)
        for table in rules.round_tables(state["round"]):
            if table["table_id"] in dealt:
                left = [s for s, p in enumerate(table["players"]) if state["people"][p]["left"]]
                if left:
                    self._resign(dealt[table["table_id"]], left[0])
        return written

    @staticmethod
    def _tell_dealt(table_id: str, people: list[Json], rec: Json) -> None:
        """Webhooks (docs/notifications.md): each seat a host app vouched for is its app's (`joined`, told its
        app's key id as a `p1.<kid>` assertion's: the participant's assertion was checked when they joined the
        tournament, and is not kept), then the deal is told to them (`dealt`), as at any table."""
        for seat, person in enumerate(people):
            if person.get("app"):
                notifier.joined(table_id, seat, f"p1.{person['app']}", person["player"], rec)
        notifier.dealt(table_id, rec)

    def _resign_leavers(self, state: Json) -> None:
        """Whoever left while seated at a table still played: their seat resigns (a forfeit, a lost match)."""
        for table in rules.round_tables(state["round"]):
            left = [s for s, p in enumerate(table["players"]) if state["people"][p]["left"]]
            if left and self._ended(state, table) is None:
                self._resign(table["match_id"], left[0])

    def _finish_round(self, row: TournamentRow) -> TournamentRow | None:
        """The Bykovo round's match ended its round (or an exit ended it): record it, close its table's match."""
        state = row.state
        rnd = state["round"]
        outcome = self._ended(state, rnd)
        if outcome is None:
            self._resign_leavers(state)
            return None
        forfeit = outcome.forfeit
        if outcome.points is not None and outcome.winner is not None:
            points, winner = outcome.points, outcome.winner
        else:
            forfeit = forfeit or 0
            points, winner = rules.forfeit_points(state["engine"], rnd["players"], forfeit)
        self._close(rnd["match_id"], winner)
        recorded = orjson.loads(self.engine.call("RecordTournamentRound", {
            "state": state["engine"], "points": points, "winner": winner}).answer)

        def change(s: Json) -> None:
            if s["round"] is None or s["round"]["table_id"] != rnd["table_id"]:
                return  # recorded meanwhile
            engine = recorded["state"]
            s["engine"] = engine
            s["rounds"].append({"number": rnd["number"], "table_id": rnd["table_id"], "match_id": rnd["match_id"],
                                "players": rnd["players"], "points": points, "winner": winner,
                                "places": engine["rounds"][-1]["places"],
                                "eliminated": engine["rounds"][-1]["eliminated"],
                                "forfeit": None if forfeit is None else rnd["players"][forfeit]})
            s["round"] = None
            if engine["over"]:
                s.update(status=OVER, finished=self._clock())

        _, written = self.update(row.tournament_id, change)
        return written

    def _finish_swiss_round(self, row: TournamentRow) -> TournamentRow | None:
        """Every match of the Swiss round is over: their results into the points; the last round ends it."""
        state = row.state
        rnd = state["round"]
        results = [self._ended(state, t) for t in rnd["tables"]]
        if any(r is None for r in results):
            self._resign_leavers(state)
            return None

        def change(s: Json) -> None:
            if s["round"] is None or s["round"]["number"] != rnd["number"]:
                return  # recorded meanwhile
            byes = rules.round_byes(rnd) or []
            swiss_rules.record(s["swiss"], [t["players"] for t in rnd["tables"]], results, byes)
            s["rounds"].append({"number": rnd["number"], "bye": rnd["bye"], "byes": byes, "tables": [
                {"table_id": t["table_id"], "match_id": t["match_id"], "players": t["players"], "result": r}
                for t, r in zip(rnd["tables"], results, strict=True)]})
            s["round"] = None
            if rnd["number"] >= s["swiss"]["rounds"]:
                s.update(status=OVER, finished=self._clock())

        _, written = self.update(row.tournament_id, change)
        return written

    def _archive(self, row: TournamentRow) -> TournamentRow:
        """The places into the archive, once: a Bykovo tournament's by `finish_tournament` (the players' Bykovo
        places), a Swiss's standings with the write that marks it archived (`HostedRows.finish`: the official
        places in the variant's family). A casual tournament's are nobody's."""
        state = row.state
        players = [p["player"] if state["rated"] else None for p in state["people"]]
        if state["swiss"] is not None:
            names = [p["name"] for p in state["people"]]
            final = FinalStandings(self.tables.matches.variant(state["variant"])["family"], players, names,
                                   swiss_rules.standings(state["swiss"], names, True))
            if self.rows.finish(row, {**state, "archived": True}, final):
                return TournamentRow(row.tournament_id, row.version + 1, {**state, "archived": True})
            return self._row(row.tournament_id)  # another write came first: the next step looks again
        self.archive.finish_tournament(row.tournament_id, players, state["engine"]["standings"])

        def change(s: Json) -> None:
            s["archived"] = True

        _, written = self.update(row.tournament_id, change)
        return written

    # ------------------------------------------------------------ helpers

    def _open_seats(self, sealed: str) -> list[str]:
        """A table's seat credentials, sealed in the state with the gateway's state keys."""
        found: list[str] = orjson.loads(self.tables.matches.keys.open(sealed).state)
        return found

    def _close(self, match_id: str, seat: int) -> None:
        """A recorded Bykovo round's table: its match ends (aborted, as `seat`: no rating; the next round is the
        tournament's, at a new table)."""
        try:
            self.tables.play.act(match_id, seat, "EndMatch", {"seat": seat, "how": "abort"})
        except (EngineIllegal, MatchExpired, UnknownMatch):
            pass  # over meanwhile, or forgotten

    def _resign(self, match_id: str, seat: int) -> None:
        """The seat of a participant who left resigns its round's match (their forfeit)."""
        try:
            self.tables.play.act(match_id, seat, "EndMatch", {"seat": seat, "how": "resign"})
        except (EngineIllegal, MatchExpired, UnknownMatch):
            pass  # over already: that round is recorded as it ended


def install(app: Flask, tables: Any, archive: Any, store: Any, watching: Any) -> None:
    """Wire the hosted tournaments into this worker's app: the service, and (where tables are hosted: a live
    store) the keeper that advances the tournaments being played."""
    hosted = app.extensions[HOSTED] = HostedTournaments(tables, archive)
    cfg = app.config.get("GATEWAY_CONFIG")
    app.extensions[STREAMS] = TournamentStreams() if cfg is None else TournamentStreams(
        idle=cfg.spectate_idle, keepalive=cfg.spectate_keepalive, longest=cfg.spectate_max)
    if store is not None:
        keeper = Keeper("tournaments", hosted.advance_due, hosted.next_pass, watching, PERIOD)
        hosted.wake = keeper.poke_all
        keeper.start()
