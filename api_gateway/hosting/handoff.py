"""The hand-off of a hosted match that ended to the archive (what must last: the record, the result,
the ratings). The live store's `ArchiveHandoff` is its outbox: the advance that ends a hosted match
puts it there (due `archive_after` seconds on), the hosting hands it over at once, and `archive_due`
(a keeper's pass, any gateway's) hands over what was not confirmed by then. Exactly once across
gateways: the archive keys a match by its id."""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import orjson

from api_gateway.archive.database import ArchiveUnavailable
from api_gateway.engine import EngineProblem
from api_gateway.matches import Matches
from api_gateway.store import MatchExpired, StoreUnavailable
from api_gateway.tokens import HOST, TokenError

log = logging.getLogger("api_gateway.hosting.handoff")

#: Seconds after a hosted match ends before any gateway hands it to the archive, when the one that made the
#: last move has not confirmed it: more than that move's engine and database calls may take.
ARCHIVE_AFTER = 30.0


class Handoff:
    """Hands the hosted matches that ended to the archive (one instance per app)."""

    def __init__(self, matches: Matches, archive: Any, clock: Callable[[], float] = time.time,
                 archive_after: float = ARCHIVE_AFTER) -> None:
        self.matches = matches
        self.archive = archive
        self._clock = clock
        self.archive_after = archive_after

    def archive_match(self, match_id: bytes, state: bytes | None) -> bool:
        """A hosted match is over: archive it with each seat's player (None for a bot's seat) and the
        names the seats were taken under (the record's names: the leaderboard's and a player's name),
        then take it out of the store's `unarchived`. `state`: the final state, or None to open it from
        the stored token. Never raises: the move that ended it is made and answered. True when done;
        False when the engine or a store did not answer, the match left in `unarchived` for
        `archive_due` (the archive's own outbox covers its database)."""
        store = self.matches.store
        try:
            if self.archive is not None:
                hosted, row = store.seated(match_id)
                if state is None:
                    state = self.matches.keys.open(hosted.token).state
                rec = orjson.loads(row.record)
                players = _one_seat_each(match_id, [s.get("player") if s["kind"] == "open" and s["taken"]
                                                    and not s.get("bot") else None for s in rec["seats"]])
                if not rec.get("rated", True):  # casual: archived as played, nobody's rating changed
                    players = [None] * len(players)
                names = [s["name"] if s["taken"] and s.get("name") else None for s in rec["seats"]]
                record = self.matches.engine.call("ExportRecord", {"view_as": HOST, "names": names,
                                                                   "prior": self.matches.prior_lines(match_id)},
                                                  state).answer
                self.archive.finish(match_id.hex(), players, record)  # a second time: "duplicate", no write
        except (EngineProblem, StoreUnavailable, ArchiveUnavailable) as exc:
            log.warning("hosted match %s: not archived yet, tried again later: %s", match_id.hex(), exc)
            return False
        except MatchExpired:  # the store forgot it: nothing left to archive
            pass
        except TokenError as exc:  # sealed with a key no longer in STATE_TOKEN_KEYS: nobody can open it
            log.error("hosted match %s: not archived, its token cannot be opened: %s", match_id.hex(), exc)
        except Exception:  # a bug (the record refused, say): trying again would only fail again
            log.exception("hosted match %s: not archived", match_id.hex())
        try:
            store.archived(match_id)
        except StoreUnavailable:  # left in `unarchived`: archived again later, which the archive answers as a duplicate
            pass
        return True

    def archive_due(self) -> int:
        """Archive the hosted matches whose end nobody confirmed archived by their deadline (the gateway that
        made the last move failed to: its engine or store did not answer, or it stopped in between; or the
        match ended through its token, `POST /v1/matches/apply`): a keeper's pass. The number archived."""
        return sum(self.archive_match(match_id, None) for match_id in self.matches.store.unarchived(self._clock(), 20))


def _one_seat_each(match_id: bytes, players: list[str | None]) -> list[str | None]:
    """Each player at one seat: a seat of a player seen at an earlier seat is kept as nobody's (a table
    refuses a second seat to a player; one taken before that rule is not lost from the archive for it)."""
    seen: set[str] = set()
    kept: list[str | None] = []
    for player in players:
        if player is not None and player in seen:
            log.warning("hosted match %s: %s held two seats; the later one is archived as nobody's",
                        match_id.hex(), player)
            player = None
        if player is not None:
            seen.add(player)
        kept.append(player)
    return kept
