"""`Archive`: what the rest of the gateway calls when a match ends, and what the archive's routes read.

One instance per gateway worker (`app.extensions[ARCHIVE]`, made by
`Archive.from_config` in the app factory). It writes through `Repository` and, when the
database does not answer, queues in the `Outbox`; a drainer thread (a greenlet
under the gevent worker) writes what waits once the database is back.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from api_gateway.archive import database, metrics, results
from api_gateway.archive.database import ArchiveUnavailable
from api_gateway.archive.outbox import Outbox, OutboxUnavailable, open_outbox
from api_gateway.archive.players import PlayerIdError, PlayerKeys, guest_id
from api_gateway.archive.repository import Page, Repository
from api_gateway.archive.results import FinishedMatch, FinishedTournament
from api_gateway.config import GatewayConfig
from api_gateway.store import default_url as default_store

log = logging.getLogger("api_gateway.archive")

Json = dict[str, Any]
#: Outbox keys: a match's and a tournament's, so that one queue holds both.
MATCH, TOURNAMENT = "m:", "t:"
DRAIN_BATCH = 100
#: Seconds between two looks at an outbox found empty. What this process queues wakes its drainer at once;
#: this look is for what a process that is gone (a worker recycled, a gateway stopped) left queued. Looking
#: every `retry` seconds instead cost an idle worker more than all else it did (docs/performance.md).
EMPTY_LOOK = 60.0


class Archive:
    """The durable half of a finished match: archive row, rating updates, outbox, reads."""

    def __init__(self, repository: Repository, outbox: Outbox, families: Callable[[str], str],
                 retry: float = 2.0, player_keys: PlayerKeys | None = None) -> None:
        self.repository = repository
        self.outbox = outbox
        self._families = families
        self._retry = retry
        self._player_keys = player_keys
        self._schema_ok = False
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._drainer: threading.Thread | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, cfg: GatewayConfig, families: Callable[[str], str]) -> Archive:
        """The archive a gateway's settings name: GATEWAY_DATABASE, its outbox in the live store
        (GATEWAY_TOKEN_STORE), the host apps' keys (GATEWAY_PLAYER_KEYS; none: every player is a guest).
        `families` names a variant's family (the engine's variant list)."""
        return cls(Repository(database.create(cfg.database or database.default_url(), cfg.database_timeout)),
                   open_outbox(cfg.token_store or default_store()), families, cfg.archive_retry,
                   PlayerKeys.parse(cfg.player_keys) if cfg.player_keys else None)

    def player_for(self, assertion: str | None) -> str:
        """The player id of a seat being taken: the one a host app's assertion vouches for
        (`api_gateway.archive.players`), or a new guest id without one. PlayerIdError (400) for an
        assertion that does not check, or when no host app key is configured."""
        if assertion is None:
            return guest_id()
        if self._player_keys is None:
            raise PlayerIdError("player: this service holds no host app key (GATEWAY_PLAYER_KEYS): "
                                "join without an assertion to play as a guest")
        return self._player_keys.verify(assertion)

    # ------------------------------------------------------------ the entry points

    def finish(self, match_id: str, players: Sequence[str | None], record: bytes | Mapping[str, Any],
               finished_at: datetime | None = None) -> str:
        """Archive a finished match and update its players' ratings, exactly once; answers what became of it.

        - `match_id`: the match's id (a sealed match's `match_id`, or the table's): the
          archive's unique key, so a second call for the same match (another gateway
          finishing it at the same moment, a retry) writes nothing and answers
          ``"duplicate"``.
        - `players`: one entry per seat, seat 0 first: the player id holding it
          (``app:...`` vouched for by the host app, ``guest:...`` made by the service:
          `api_gateway.archive.players`), or None for a seat no player holds (a bot).
        - `record`: the engine's ExportRecord answer for the finished match, as it
          came (``{"record": {...domino-record 1...}, "text": "..."}``, bytes or
          parsed): the archive stores it as given and reads the variant, the result
          and a timeout from it (`results`). The full view, which a sealed host gets
          once the match is over, is what `GET /v1/matches/{id}/record` then serves.
        - `finished_at`: when it ended (default: now).

        Answers ``"recorded"`` (written with every rating update, in one transaction),
        ``"duplicate"``, or ``"queued"``: the database did not answer, the match waits
        in the outbox and is written when the database is back. Raises `InvalidFinish`
        (a ValueError) for a record that is not a finished match or seats that do not
        fit it, `ArchiveUnavailable` only when the outbox's store did not answer either.
        Needs the variant list to find the variant's family (the engine's, cached).
        """
        finished = results.finished_match(match_id, players, record, self._families, finished_at)
        return self._hand_in("match", MATCH + finished.match_id, finished.to_json(),
                             lambda: self.repository.record_match(finished))

    def finish_tournament(self, tournament_id: str, players: Sequence[str | None],
                          standings: Sequence[Mapping[str, Any]], finished_at: datetime | None = None) -> str:
        """Archive a finished Bykovo tournament: its official places (the first three, as the source counts
        them) go to the players' Bykovo ratings. `players`: one per participant, in the tournament's order;
        `standings`: the engine's (`POST /v1/tournaments/standings` or the state's), the tournament over.
        Answers as `finish` does."""
        finished = results.finished_tournament(tournament_id, players, standings, finished_at)
        return self._hand_in("tournament", TOURNAMENT + finished.tournament_id, finished.to_json(),
                             lambda: self.repository.record_tournament(finished))

    def _hand_in(self, kind: str, key: str, payload: bytes, write: Callable[[], bool]) -> str:
        try:
            self._check()
            outcome = "recorded" if write() else "duplicate"
        except ArchiveUnavailable as error:
            metrics.ERRORS.labels("write", "unavailable").inc()
            try:
                self.outbox.push(key, payload)
            except OutboxUnavailable as lost:
                metrics.ERRORS.labels("write", "outbox-unavailable").inc()
                log.error("%s %s not archived: %s; and %s", kind, key, error, lost)
                raise ArchiveUnavailable(f"{error}; {lost}") from None
            log.warning("%s %s queued in the archive outbox: %s", kind, key, error)
            outcome = "queued"
            self._wake.set()
        metrics.WRITES.labels(kind, outcome).inc()
        return outcome

    # ------------------------------------------------------------ the outbox

    def drain(self, limit: int = DRAIN_BATCH) -> int:
        """Write up to `limit` queued entries, oldest first, removing each once committed; how many.
        Stops at the first the database does not take (it is still down)."""
        done = 0
        with self._lock:  # one drain at a time per process (the others' are harmless: duplicates)
            try:
                self._check()
                for key, payload in self.outbox.oldest(limit):
                    if key.startswith(MATCH):
                        recorded = self.repository.record_match(FinishedMatch.from_json(payload))
                    else:
                        recorded = self.repository.record_tournament(FinishedTournament.from_json(payload))
                    self.outbox.remove(key)
                    metrics.WRITES.labels("match" if key.startswith(MATCH) else "tournament",
                                          "recorded" if recorded else "duplicate").inc()
                    done += 1
            except ArchiveUnavailable as error:
                metrics.ERRORS.labels("drain", "unavailable").inc()
                log.debug("archive outbox: still waiting (%s)", error)
            except OutboxUnavailable as error:
                metrics.ERRORS.labels("drain", "outbox-unavailable").inc()
                log.debug("archive outbox: %s", error)
        try:
            metrics.OUTBOX_DEPTH.set(self.outbox.depth())
        except OutboxUnavailable:
            pass
        if done:
            log.info("archive outbox: %d written", done)
        return done

    def start(self) -> None:
        """Start the drainer: at once after a match was queued, then every `retry` seconds while anything waits,
        it drains the outbox (`_drain_forever`)."""
        if self._drainer is None:
            self._drainer = threading.Thread(target=self._drain_forever, name="archive-drainer", daemon=True)
            self._drainer.start()

    def _drain_forever(self) -> None:
        """Drain while something waits, every `retry` seconds; an outbox found empty is looked at again when
        this process queues (its wake-up) or after `EMPTY_LOOK` (what a process that is gone left queued)."""
        pause = self._retry
        while not self._stop.is_set():
            self._wake.wait(pause)
            self._wake.clear()
            if self._stop.is_set():
                return
            pause = self._retry
            try:
                if self.outbox.depth():
                    while self.drain() == DRAIN_BATCH:
                        pass
                else:
                    metrics.OUTBOX_DEPTH.set(0)
                    pause = EMPTY_LOOK
            except OutboxUnavailable:
                pass
            except Exception:  # the drainer must outlive a bug in one entry; the entry stays queued
                log.exception("archive outbox: drain failed")

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._drainer is not None:
            self._drainer.join(5)
        self.outbox.close()
        self.repository.engine.dispose()

    # ------------------------------------------------------------ reads

    def _check(self) -> None:
        """ArchiveUnavailable unless the database answers at the schema this code expects (once per process)."""
        if not self._schema_ok:
            database.check_schema(self.repository.engine)
            self._schema_ok = True

    def _read(self, work: Callable[[], Any]) -> Any:
        try:
            self._check()
            return work()
        except ArchiveUnavailable:
            metrics.ERRORS.labels("read", "unavailable").inc()
            raise

    def player(self, player_id: str) -> Json:
        found: Json = self._read(lambda: self.repository.player(player_id))
        return found

    def player_matches(self, player_id: str, after: int | None, limit: int) -> Page:
        found: Page = self._read(lambda: self.repository.player_matches(player_id, after, limit))
        return found

    def leaderboard(self, family: str, by: str, after: tuple[Any, ...] | None, rank: int, limit: int,
                    provisional: bool = False) -> Page:
        found: Page = self._read(lambda: self.repository.leaderboard(family, by, after, rank, limit, provisional))
        return found

    def archived(self, match_id: str) -> Json:
        found: Json = self._read(lambda: self.repository.archived(match_id))
        return found

    def family(self, variant: str) -> str:
        return self._families(variant)
