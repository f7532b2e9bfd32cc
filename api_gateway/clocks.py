"""Turn clocks of an online table (issue 25): what a clock setting means and where a clock stands.

Pure: no store, no engine, no wall clock of its own (every function is given `now`,
unix seconds). The table keeps a `Clocks` beside its match, moves it on with each
change of the match (`Clocks.moved`), and whichever gateway finds a deadline
passed applies the timeout with the store's compare-and-set, so exactly once
(`api_gateway.hosting.timeouts`).

Two kinds of clock, as chess sites have them:

- ``{"move": 30}``: each move within 30 seconds; the clock starts again at every turn.
- ``{"bank": 300, "increment": 5}``: each seat has 300 seconds for the whole match,
  and gets 5 more after each of its moves (a Fischer increment).

and what happens when a seat's time runs out (``"on_timeout"``):

- ``"rule"`` (the default): the variant's timeout rule, as the engine applies it
  (Kozel's timeout formula, Kingdomino's forfeit): the match ends.
- ``"autopilot"``: a bot (``"autopilot_level"``, greedy by default) plays the seat
  on until its person is back; its clock is then given its time again (a move's
  limit, or a bank at least one move's increment, 10 s with none).

and, for a seat whose person is away, a reminder (a webhook, `api_gateway.notify`) when a share of
its time is left (``"remind"``: 0 < share < 1; by default a quarter for a correspondence clock, one
of an hour or more a seat, and none for a real-time one; ``null``: none).

A clock runs only while a seat is to move: it stops between rounds (the round's
end waits for a deal) and once the match is over.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

Json = dict[str, Any]

#: Bounds of a setting, seconds: a move's limit (5 s up to 14 days: real-time play and correspondence
#: alike), a bank (up to 30 days), an increment (up to a day).
MOVE_LIMITS = (5.0, 14 * 86400.0)
BANK_LIMITS = (30.0, 30 * 86400.0)
INCREMENT_LIMITS = (0.0, 86400.0)
ON_TIMEOUT = ("rule", "autopilot")
AUTOPILOT_LEVELS = ("random", "greedy", "expert")
#: A clock giving a seat at least this many seconds (a move's limit or a bank) is a correspondence clock:
#: a reminder by default (`DEFAULT_REMIND`).
CORRESPONDENCE = 3600.0
#: The share of a seat's time left at which an away seat of a correspondence clock is reminded by default.
DEFAULT_REMIND = 0.25
#: The least a bank is given back when a person returns from autopilot with no increment.
RETURN_GRACE = 10.0


class ClockSettingError(ValueError):
    """A clock setting out of range or malformed: `field` names the member (``clock.move``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


def _seconds(value: object, field: str, bounds: tuple[float, float]) -> float:
    low, high = bounds
    if type(value) not in (int, float) or not low <= float(value) <= high:  # type: ignore[arg-type]
        raise ClockSettingError(field, f"seconds from {low:.0f} to {high:.0f}, not {value!r}")
    return float(value)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class ClockSetting:
    """A table's clock, as the host set it."""

    move: float | None = None
    bank: float | None = None
    increment: float = 0.0
    on_timeout: str = "rule"
    autopilot_level: str = "greedy"
    #: The share of a seat's time (a move's limit, or the bank) left when an away seat is reminded; None: never.
    remind: float | None = None

    @classmethod
    def from_json(cls, value: object, where: str = "clock") -> ClockSetting:
        """A setting from its JSON form; `ClockSettingError` naming the member at fault."""
        if not isinstance(value, dict):
            raise ClockSettingError(where, 'an object: {"move": seconds} or {"bank": seconds, "increment": seconds}')
        known = {"move", "bank", "increment", "on_timeout", "autopilot_level", "remind"}
        for key in value:
            if key not in known:
                raise ClockSettingError(f"{where}.{key}", f"unknown member (expected {', '.join(sorted(known))})")
        if ("move" in value) == ("bank" in value):
            raise ClockSettingError(where, "give either move (seconds per move) or bank (seconds per match)")
        move = _seconds(value["move"], f"{where}.move", MOVE_LIMITS) if "move" in value else None
        bank = _seconds(value["bank"], f"{where}.bank", BANK_LIMITS) if "bank" in value else None
        increment = 0.0
        if "increment" in value:
            if move is not None:
                raise ClockSettingError(f"{where}.increment", "only with a bank (a move's limit starts afresh)")
            increment = _seconds(value["increment"], f"{where}.increment", INCREMENT_LIMITS)
        on_timeout = value.get("on_timeout", "rule")
        if on_timeout not in ON_TIMEOUT:
            raise ClockSettingError(f"{where}.on_timeout", f"one of {', '.join(ON_TIMEOUT)}, not {on_timeout!r}")
        level = value.get("autopilot_level", "greedy")
        if level not in AUTOPILOT_LEVELS:
            raise ClockSettingError(f"{where}.autopilot_level",
                                    f"one of {', '.join(AUTOPILOT_LEVELS)}, not {level!r}")
        full = move if move is not None else float(bank or 0.0)
        remind: float | None = DEFAULT_REMIND if full >= CORRESPONDENCE else None
        if "remind" in value:
            remind = value["remind"]
            if remind is not None and (type(remind) not in (int, float) or not 0 < remind < 1):
                raise ClockSettingError(f"{where}.remind", f"the share of a seat's time left when it is reminded: "
                                                           f"more than 0 and less than 1 (or null: never), not {remind!r}")
            remind = None if remind is None else float(remind)
        return cls(move=move, bank=bank, increment=increment, on_timeout=on_timeout, autopilot_level=level,
                   remind=remind)

    def to_json(self) -> Json:
        out: Json = {"move": self.move} if self.move is not None else {"bank": self.bank, "increment": self.increment}
        out["on_timeout"] = self.on_timeout
        if self.on_timeout == "autopilot":
            out["autopilot_level"] = self.autopilot_level
        if self.remind is not None or self.full >= CORRESPONDENCE:  # a correspondence clock says it has none
            out["remind"] = self.remind
        return out

    @property
    def full(self) -> float:
        """A seat's time at the start of a match (or of each move, with a move's limit)."""
        return self.move if self.move is not None else float(self.bank or 0.0)


@dataclass(frozen=True, slots=True)
class Clocks:
    """Where every seat's clock stands: the time each had left when its clock last stopped, and the
    seat whose clock runs (None: nobody's, between rounds or at the end) since when."""

    setting: ClockSetting
    left: tuple[float, ...]
    running: int | None = None
    since: float = 0.0
    #: Seats a bot plays on since their time ran out (``on_timeout: "autopilot"``), until their person is back.
    autopilot: tuple[int, ...] = ()

    @classmethod
    def start(cls, setting: ClockSetting, players: int, turn: int | None, now: float) -> Clocks:
        """A new match's clocks: every seat's full time; `turn`'s running from `now`."""
        return cls(setting, (setting.full,) * players, turn, now)

    def remaining(self, now: float) -> list[float]:
        """Each seat's time left at `now` (never below 0)."""
        out = list(self.left)
        if self.running is not None:
            out[self.running] = max(0.0, out[self.running] - max(0.0, now - self.since))
        return out

    @property
    def deadline(self) -> float | None:
        """When the running clock runs out (unix seconds), or None when none runs."""
        if self.running is None:
            return None
        return self.since + self.left[self.running]

    def reminder(self) -> float | None:
        """When the running seat is to be reminded (unix seconds): once its share `setting.remind` of its
        time is left. None: no reminder set, none runs, the seat on autopilot, or that share already gone
        when its turn began (its "your turn" said how little was left)."""
        seat = self.running
        share = self.setting.remind
        if seat is None or share is None or seat in self.autopilot:
            return None
        left = self.left[seat] - share * self.setting.full
        return self.since + left if left > 0 else None

    def expired(self, now: float) -> bool:
        deadline = self.deadline
        return deadline is not None and now >= deadline

    def moved(self, turn: int | None, now: float) -> Clocks:
        """The match changed (a move, the bots' replies, a deal, a timeout): the seat whose clock ran
        is charged its time and, with a bank, given its increment; `turn`'s clock runs from `now`
        (None: no clock runs: the round or the match is over)."""
        left = list(self.remaining(now))
        if self.running is not None and self.setting.move is None:
            left[self.running] += self.setting.increment
        if turn is not None and self.setting.move is not None:
            left[turn] = self.setting.move
        return replace(self, left=tuple(left), running=turn, since=now)

    def on_autopilot(self, seat: int) -> Clocks:
        """`seat`'s time ran out and a bot plays it on."""
        return replace(self, autopilot=tuple(sorted({*self.autopilot, seat})))

    def given_back(self, seat: int, now: float) -> Clocks:
        """A person back from autopilot: its clock gets time again (a move's limit, or a bank of at
        least one increment, `RETURN_GRACE` with none)."""
        self = replace(self, autopilot=tuple(s for s in self.autopilot if s != seat))
        left = list(self.remaining(now))
        floor = self.setting.move if self.setting.move is not None else max(self.setting.increment, RETURN_GRACE)
        left[seat] = max(left[seat], floor)
        if self.running is None:
            return replace(self, left=tuple(left))
        return replace(self, left=tuple(left), since=now)  # `remaining` charged the running seat up to now

    def to_json(self, now: float) -> Json:
        """What every view and event shows: each seat's time left (seconds, one decimal), the seat
        whose clock runs and when it runs out (unix seconds; a client counts down to it)."""
        return {"remaining": [round(x, 1) for x in self.remaining(now)], "running": self.running,
                "deadline": None if self.deadline is None else round(self.deadline, 3),
                "autopilot": list(self.autopilot), "setting": self.setting.to_json()}

    def dump(self) -> Json:
        """The stored form (`load` reads it back)."""
        return {"setting": self.setting.to_json(), "left": list(self.left), "running": self.running,
                "since": self.since, "autopilot": list(self.autopilot)}

    @classmethod
    def load(cls, data: Json) -> Clocks:
        return cls(ClockSetting.from_json(data["setting"]), tuple(float(x) for x in data["left"]), data["running"],
                   float(data["since"]), tuple(data.get("autopilot", ())))
