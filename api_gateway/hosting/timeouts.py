"""Turn clocks that ran out with nobody calling (issue 25, `api_gateway.clocks`): the variant's timeout
rule, or a bot on autopilot until the person is back. Exactly once across gateways: the timeout is a
change of the match from the version whose clock ran out (compare-and-set), so of two gateways applying
it one wins and the other is refused as stale."""
from __future__ import annotations

import logging
import time
from collections.abc import Callable

import orjson

from api_gateway import metrics
from api_gateway.clocks import Clocks
from api_gateway.engine import EngineMalformed, EngineProblem
from api_gateway.hosting.play import HostedPlay
from api_gateway.store import HostedMatch, MatchExpired, StaleToken, StoreUnavailable
from api_gateway.tokens import TokenError

log = logging.getLogger("api_gateway.hosting.timeouts")

#: The outcomes of a clock that ran out, as the metric counts them.
OUTCOMES = ("timeout", "autopilot", "lost", "failed")


class Timeouts:
    """Applies the turn clocks that ran out (one instance per app)."""

    def __init__(self, play: HostedPlay, clock: Callable[[], float] = time.time) -> None:
        self.play = play
        self._clock = clock

    def expire_due(self) -> int:
        """Apply every turn clock that ran out: a keeper's pass, a few times a second. The number applied here."""
        store = self.play.matches.store
        applied = 0
        for match_id in store.due(self._clock(), 50):
            try:
                hosted = store.hosted(match_id)
            except MatchExpired:
                store.forget_due(match_id)
                continue
            if hosted.over or not hosted.clocks:
                continue
            clocks = Clocks.load(orjson.loads(hosted.clocks))
            seat = clocks.running
            if seat is None or not clocks.expired(self._clock()):
                continue
            try:
                outcome = self._expire(match_id.hex(), hosted, clocks, seat)
            except StaleToken:
                outcome = "lost"  # another gateway applied it, or the seat moved at the last moment
            except (EngineProblem, StoreUnavailable) as exc:
                log.warning("match %s: seat %d's clock ran out, not applied yet: %s", match_id.hex(), seat, exc)
                outcome = "failed"
            except TokenError as exc:  # no key of this gateway opens it: the other clocks still run out
                log.error("match %s: seat %d's clock ran out, not applied: its token cannot be opened "
                          "(sealed with a key not in STATE_TOKEN_KEYS?): %s", match_id.hex(), seat, exc)
                outcome = "failed"
            except Exception:  # a bug in one match's clock must not stop the clocks due after it
                log.exception("match %s: seat %d's clock ran out, not applied", match_id.hex(), seat)
                outcome = "failed"
            metrics.CLOCK_TIMEOUTS.labels(outcome).inc()
            applied += outcome in ("timeout", "autopilot")
        return applied

    def _expire(self, match_id: str, hosted: HostedMatch, clocks: Clocks, seat: int) -> str:
        if clocks.setting.on_timeout == "autopilot":
            level = clocks.setting.autopilot_level
            try:
                self.play.seat_bot(match_id, seat, level, lambda c, _now: c.on_autopilot(seat), hosted)
                return "autopilot"
            except EngineMalformed:  # the last seat a person plays: no bot may take it
                away = [s for s in clocks.autopilot if s != seat]
                if away:
                    # Every other person is away too (a bot plays their seats). The seat away longest is
                    # given back (its clock runs again) and the bot takes this one: the match goes on, a
                    # move per clock at the worst, instead of waiting for ever with a clock that ran out.
                    back = away[0]
                    self.play.seat_bot(match_id, back, None, lambda c, now: c.given_back(back, now))
                    self.play.seat_bot(match_id, seat, level, lambda c, _now: c.on_autopilot(seat))
                    return "autopilot"
        self.play.act(match_id, None, "Timeout", {"seat": seat}, hosted)  # the variant's rule
        return "timeout"
