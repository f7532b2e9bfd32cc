"""A hosted match's changes made for its table: a seat's move by credential, the next round, a seat
handed to a bot or back, a turn clock's timeout. Each reads the match's latest version once, opens its
token once, and advances it once (two store round trips: `seated` or `hosted`, then `advance`); a
change that ended the match is handed to the archive (`Handoff`)."""
from __future__ import annotations

from typing import Any

from api_gateway.hosting.handoff import Handoff
from api_gateway.http.problems import UnknownMatch
from api_gateway.matches import Carried, ClockChange, Matches, match_bytes
from api_gateway.notify import notifier
from api_gateway.store import HostedMatch, MatchExpired, StaleToken
from api_gateway.tokens import Principal

Json = dict[str, Any]
#: Tries of a change whose version another change overtook (read the newer one, try again).
ATTEMPTS = 3


class HostedPlay:
    """The changes of hosted matches (one instance per app)."""

    def __init__(self, matches: Matches, handoff: Handoff) -> None:
        self.matches = matches
        self.handoff = handoff

    def hosted(self, match_id: str) -> HostedMatch:
        """A live hosted match (404 unknown-match without one)."""
        try:
            found: HostedMatch = self.matches.store.hosted(match_bytes(match_id))
        except MatchExpired:
            raise UnknownMatch(match_id) from None
        return found

    def carried(self, hosted: HostedMatch, seat: int | None, args: Json) -> Carried:
        """The hosted match at its latest version, as `seat` (None: the host): its token opened once."""
        return Carried(args, self.matches.keys.open(hosted.token), Principal(seat), hosted=hosted.clocks)

    def act(self, match_id: str, seat: int | None, method: str, args: Json, latest: HostedMatch | None = None,
            clock_change: ClockChange | None = None, table: Json | None = None) -> bytes:
        """`method` on the hosted match's latest version (`latest`, when the caller has read it) as `seat`;
        again from the newer version when another change came first (the store refused it as stale).
        `table`: the match's table record, when the caller read it with the match (`Tables.context`): the
        notifier then needs no read of its own to know that nobody at a table of guests is told."""
        for attempt in range(ATTEMPTS):
            hosted = latest if latest is not None and attempt == 0 else self.hosted(match_id)
            try:
                change = self.matches.change(method, self.carried(hosted, seat, args), args, clock_change,
                                             self.handoff.archive_after)
            except StaleToken:
                if attempt == ATTEMPTS - 1:
                    raise
                continue
            if change.ended and change.state is not None:
                self.handoff.archive_match(bytes.fromhex(match_id), change.state)
            notifier.changed(match_id, seat, change.answer, table)  # webhooks: never raises, sends off this path
            return change.answer
        raise AssertionError("unreachable")

    def seat_bot(self, match_id: str, seat: int, level: str | None, clock_change: ClockChange | None = None,
                 latest: HostedMatch | None = None) -> bytes:
        """The seat played by a bot of `level` from now on, or by a person again (None); then the bots
        move if one is to (the engine's SeatBot, as the host)."""
        return self.act(match_id, None, "SeatBot", {"seat": seat, "level": level}, latest, clock_change)
