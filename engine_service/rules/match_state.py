"""What a match's state holds, with no rules in it: the fields `Match` plays on (issue 26).

`Match` (match.py) is these fields and the calls that change them, the
transitions. The dict form (`match_form`) reads and writes the same fields, and
the gRPC codec (`edge/wire.py`) through it; holding them in a class of their own
lets both sit below match.py (the rules' imports form a tree) and read every
field as a slot once compiled (mypyc reads a native class's attribute directly;
through a Protocol each read would be a lookup by name, which made `to_dict`
~12% slower).

It also says when a state's numbers are too near what a state may hold to play
on (`at_limit`, `near_limit`): both a decoded state and a set-up match need it.
"""
from __future__ import annotations

from .checks import INT_LIMIT
from .family import Family, RoundContext
from .history import chain
from .ledger import Ledger
from .options import OptionValue
from .registry import Preset
from .round import Round

#: One call adds far less than this to any number (a round, a hand's points): a state within it of
#: `INT_LIMIT` plays no further (`MatchState.at_limit`), so every answer decodes again.
HEADROOM = 10**6
AT_LIMIT = ("this match's numbers (rounds played, points) are at the limit a state can hold "
            f"({INT_LIMIT - HEADROOM:,}): start a new match")


class MatchState:
    """A match's state: its preset, ledger, current round, outcome and log (see `Match` for play)."""

    __slots__ = (
        "preset", "family", "overrides", "players", "seed", "round_number", "ledger", "round",
        "next_leader", "match_over", "losers", "winners", "rating", "timed_out", "at_limit", "bots", "log",
        "log_count", "_digest", "_unchained",
    )

    def __init__(self, preset: Preset, family: Family, overrides: dict[str, OptionValue],
                 players: int, seed: int | None) -> None:
        self.preset = preset
        self.family = family
        self.overrides = overrides
        self.players = players
        self.seed = seed
        self.round_number = 0
        self.ledger = Ledger.empty(family.sides)
        self.round: Round | None = None
        self.next_leader: int | None = None
        self.match_over = False
        self.losers: list[int] = []
        self.winners: list[int] = []
        self.rating: list[int] = []
        self.timed_out: int | None = None
        #: Seats the computer plays, and at what level (`botseats`; the engine plays them).
        self.bots: dict[int, str] = {}
        #: A number of the state (round count, points) is within `HEADROOM` of what a state may hold:
        #: calls that add to them are refused, so that no answer holds a state the decoder refuses.
        self.at_limit = False
        #: What happened in the current round (`history`; since the match began while no round has
        #: ended): empty with `log_count` 0 when that is not known.
        self.log: list[str] = []
        #: How many entries left the log as rounds ended, and the digest chaining them (`history.chain`).
        self.log_count = 0
        self._digest = b""
        #: Lines that left the log and are not chained into `_digest` yet (`log_digest` chains them when
        #: read: a match played in process, as the rules' benchmarks and the bots' playouts do, never pays).
        self._unchained: list[str] = []

    @property
    def log_digest(self) -> bytes:
        """The digest chaining every entry that left the log (`history.chain`), b"" when none has."""
        if self._unchained:
            self._digest = chain(self._digest, self._unchained)
            self._unchained = []
        return self._digest

    def round_context(self) -> RoundContext:
        """What the family may know of this match to name a round's lead."""
        return RoundContext(self.seed, self.round_number, self.next_leader, bool(self.ledger.history))

    def restore_log(self, log: list[str], count: int, digest: bytes) -> None:
        """Take a decoded log: the current entries, how many left before, and their digest."""
        self.log = log
        self.log_count = count
        self._digest = digest
        self._unchained = []


def near_limit(state: MatchState) -> bool:
    """Whether a number of `state` is within `HEADROOM` of `INT_LIMIT` (`MatchState.at_limit`)."""
    ledger = state.ledger
    numbers = [state.round_number, ledger.pot, *ledger.written, *ledger.remembered, *ledger.scores]
    return max(abs(v) for v in numbers) > INT_LIMIT - HEADROOM
