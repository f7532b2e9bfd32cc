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

from typing import Final

from .checks import INT_LIMIT
from .family import Family, RoundContext
from .history import chain, is_deal, steps_of, unstep
from .ledger import Ledger
from .notation import Placement
from .options import OptionValue
from .registry import Preset
from .round import Round

#: One call adds far less than this to any number (a round, a hand's points): a state within it of
#: `INT_LIMIT` plays no further (`MatchState.at_limit`), so every answer decodes again.
HEADROOM: Final = 10**6
AT_LIMIT: Final = ("this match's numbers (rounds played, points) are at the limit a state can hold "
            f"({INT_LIMIT - HEADROOM:,}): start a new match")


#: Entries that left the log as a round ended, as they were held: `log_text`, `log_steps` and the layout
#: the steps' plays lie in (no longer played on). Their text is written only when it is read (`left_lines`).
Left = tuple[list[str], list[int] | None, list[Placement]]


def left_lines(left: list[Left]) -> list[str]:
    """The text of the entries that left the log, in order."""
    lines: list[str] = []
    for text, steps, placements in left:
        lines += text
        if steps:
            lines += unstep(steps, placements)
    return lines


class MatchState:
    """A match's state: its preset, ledger, current round, outcome and log (see `Match` for play)."""

    __slots__ = (
        "preset", "family", "overrides", "players", "seed", "round_number", "ledger", "round",
        "next_leader", "match_over", "losers", "winners", "rating", "timed_out", "at_limit", "bots",
        "log_text", "log_steps", "log_count", "_digest", "_unchained",
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
        #: ended), as the state travels (issue 27): the entries as text up to the round's deal, and its
        #: moves after it as step codes in `log_steps` while each is one (a pass, a draw, a play of the
        #: layout's next tiles); every entry as text when `log_steps` is None. Both empty with
        #: `log_count` 0 when the log is not known. `log` reads it as text.
        self.log_text: list[str] = []
        self.log_steps: list[int] | None = None
        #: How many entries left the log as rounds ended, and the digest chaining them (`history.chain`).
        self.log_count = 0
        self._digest = b""
        #: Entries that left the log and are not chained into `_digest` yet (`log_digest` chains them when
        #: read: a match played in process, as the rules' benchmarks and the bots' playouts do, never pays).
        self._unchained: list[Left] = []

    @property
    def log_digest(self) -> bytes:
        """The digest chaining every entry that left the log (`history.chain`), b"" when none has."""
        if self._unchained:
            self._digest = chain(self._digest, left_lines(self._unchained))
            self._unchained = []
        return self._digest

    def round_context(self) -> RoundContext:
        """What the family may know of this match to name a round's lead."""
        return RoundContext(self.seed, self.round_number, self.next_leader, bool(self.ledger.history))

    @property
    def log(self) -> list[str]:
        """The log's entries as text (a new list): the moves held as step codes written from the layout
        (`history.unstep`), as a record, a view or a round's end reads them."""
        steps = self.log_steps
        if steps is None:
            return self.log_text.copy()
        return self.log_text + unstep(steps, self._placements())

    def _placements(self) -> list[Placement]:
        """The current round's layout, which the moves held as step codes laid (a round is dealt then)."""
        rnd = self.round
        assert rnd is not None, "a log held as steps belongs to a dealt round"
        return rnd.layout.placements

    def restore_log(self, text: list[str], count: int, digest: bytes, steps: bytes | None = None) -> None:
        """Take a decoded log (checked: `history.check_log`): the current entries as text and the moves
        after them as step codes when the state carried them so (the round's layout holding their plays,
        every tile), how many entries left before, and their digest. It is held as a match holds it: the
        moves after the round's deal as step codes when they are steps (`history.steps_of`)."""
        if steps is not None and not ((text and is_deal(text[-1])) or (not text and count)):
            text, steps = text + unstep(list(steps), self._placements()), None  # not after a deal: as text
        if steps is None:
            rnd = self.round
            form = steps_of(text, count, None if rnd is None else rnd.layout.placements)
            self.log_text, self.log_steps = (text, None) if form is None else form
        else:
            self.log_text, self.log_steps = text, list(steps)
        self.log_count = count
        self._digest = digest
        self._unchained = []


def near_limit(state: MatchState) -> bool:
    """Whether a number of `state` is within `HEADROOM` of `INT_LIMIT` (`MatchState.at_limit`)."""
    ledger = state.ledger
    limit = INT_LIMIT - HEADROOM
    if state.round_number > limit or abs(ledger.pot) > limit:
        return True
    for values in (ledger.written, ledger.remembered, ledger.scores):  # a loop, not a generator: every decode
        for v in values:
            if v > limit or v < -limit:
                return True
    return False
