"""Option specifications and their validation (RULES.md "Options").

An option has a name, a type (bool, int or enum), the values it allows and a
default per preset. Option names and values are part of the API: a match may
override any option its family uses, and anything else is refused with an
error that names it (``options.<name>: ...``, the field the gateway reports)
and quotes the values it takes as the JSON that would be accepted.

An option that names a count is an integer: `boneyard_reserve` is 0, 1 or 2
(RULES.md O, TF), and in TF also the word ``"auto"`` (an int option's
`allowed` lists such words beside its integers).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final

from .errors import MalformedError, did_you_mean, shown

OptionValue = bool | int | str

#: An int option whose whole range is at most this many values lists them in its messages.
_LISTED: Final = 10
_NAME: Final = re.compile(r"[A-Za-z_]\w{0,59}")


@dataclass(frozen=True, slots=True)
class OptionSpec:
    name: str
    type: str                      # "bool", "int" or "enum"
    description: str
    allowed: tuple[str, ...] = ()  # enum: its names; int: the words it takes beside its integers
    minimum: int | None = None     # int bounds
    maximum: int | None = None
    #: int: its integers written as decimal text are read too. Only for an option that an
    #: earlier release documented as an enum of digits (boneyard_reserve "0", "1", "2"), so
    #: that the states, records and requests of then keep working; states and answers
    #: always carry the integer.
    digits_read: bool = False

    def parse(self, value: object) -> OptionValue:
        """Validate a value of the option's own type: a boolean, an integer in bounds (or one of
        an int's words), or one of the enum's names. Nothing is coerced: "true" is not true,
        "13" is not 13, 0 is not "0" (the typed gRPC face turns its option text into these types
        first: `codec.options_from_proto`); `digits_read` is the one documented exception.
        """
        if self.type == "bool":
            if type(value) is bool:
                return value
        elif self.type == "int":
            if type(value) is int and self._in_range(value):
                return value
            if type(value) is str:
                if value in self.allowed:
                    return value
                if self.digits_read and value.isascii() and value.isdigit() and self._in_range(int(value)):
                    return int(value)
        elif type(value) is str and value in self.allowed:
            return value
        raise MalformedError(f"options.{self.name}: {self.expected(value)}")

    def _in_range(self, value: int) -> bool:
        return (self.minimum is None or value >= self.minimum) and (self.maximum is None or value <= self.maximum)

    def values(self) -> list[OptionValue] | None:
        """Every value an enum or an int takes, when they are few enough to list."""
        if self.type == "enum":
            return list(self.allowed)
        if self.minimum is not None and self.maximum is not None and self.maximum - self.minimum < _LISTED:
            return [*range(self.minimum, self.maximum + 1), *self.allowed]
        return None

    def expected(self, value: object) -> str:
        """Why `value` is refused, quoting what would be accepted as JSON."""
        if self.type == "bool":
            return f"expected true or false, got {shown(value)}"
        listed = self.values()
        if listed is None:
            bounds = f" {self.minimum}..{self.maximum}" if self.minimum is not None else ""
            words = "".join(f" or {json.dumps(w)}" for w in self.allowed)
            return f"expected an integer{bounds}{words}, got {shown(value)}"
        return f"{shown(value)} is not one of {', '.join(json.dumps(v) for v in listed)}"

    def text(self, value: OptionValue) -> str:
        """The value as text (the gRPC contract carries options as strings)."""
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    def describe(self, default: OptionValue) -> dict[str, Any]:
        """The option as `variants()` lists it; an int also gives its bounds."""
        described: dict[str, Any] = {
            "name": self.name,
            "type": self.type,
            "allowed": list(self.allowed),
            "default": self.text(default),
            "description": self.description,
        }
        if self.type == "int":
            described["minimum"] = self.minimum
            described["maximum"] = self.maximum
        return described


def _enum(name: str, description: str, *allowed: str) -> OptionSpec:
    return OptionSpec(name, "enum", description, allowed)


def _bool(name: str, description: str) -> OptionSpec:
    return OptionSpec(name, "bool", description)


def _int(name: str, description: str, lo: int, hi: int) -> OptionSpec:
    return OptionSpec(name, "int", description, (), lo, hi)


def boneyard_reserve_option(description: str, *words: str) -> OptionSpec:
    """Tiles of the boneyard that are never drawn: the integer 0, 1 or 2, and in TF also
    "auto" (RULES.md O, TF, "Options"); its digits as text are still read (`digits_read`)."""
    return OptionSpec("boneyard_reserve", "int", description, words, 0, 2, digits_read=True)


# Every option of RULES.md; a family lists the ones it uses, possibly with a narrower enum.
HAND_SIZE: Final = _enum(
    "hand_size", "tiles dealt to each seat: seven, five, by-players (7 for 2, 5 for 3-4), "
    "five-six-seven (7, 6, 5 for 2, 3, 4)", "seven", "five", "by-players", "five-six-seven")
MISDEAL: Final = _enum(
    "misdeal", "which random deals are dealt again (and which explicit deals are refused)",
    "none", "five-doubles", "five-doubles-or-six-of-a-number")
DOUBLE_PAIR: Final = _bool("double_pair", "K classic: two doubles at once when one fits each of the two ends")
ZERO_DOUBLE: Final = _enum(
    "zero_double", "how 0-0 left in hand counts: plain 0, lone-ten (10 when it is the only tile), twenty-five",
    "plain", "lone-ten", "twenty-five")
FISH_WITHOUT_DOUBLE: Final = _bool(
    "fish_without_double",
    "a fish also when every open end shows v and all six non-double v tiles are on the table")
OPEN_THRESHOLD: Final = _int("open_threshold", "a round below this many points is remembered, not written", 0, 1000)
TARGET: Final = _int("target", "the score that ends the match", 1, 100000)
EXACT_TARGET: Final = _bool("exact_target", "the target must be hit exactly (a score that would pass it is not taken)")
BONEYARD_RESERVE: Final = boneyard_reserve_option(
    "boneyard tiles that may never be drawn (auto: 2 with 2 players, 1 with 3-4)", "auto")
DRAW_WHEN_ABLE: Final = _bool("draw_when_able", "a seat may draw even when it can play")
TEAMS: Final = _bool("teams", "4 players in two teams, seats 0+2 against 1+3")
SPINNER: Final = _enum("spinner", "which doubles spin (open four sides)", "first-double", "none", "all-doubles")
SPINNER_ENDS: Final = _enum(
    "spinner_ends", "open-sides: a spinner's N/S are open at once and count its number; "
    "until-both-sides: it counts both halves until W and E carry tiles, then N/S open",
    "open-sides", "until-both-sides")
SPINNER_COUNTS: Final = _bool("spinner_counts", "the spinner's own halves count in the open-end count")
SCORING: Final = _enum("scoring", "in-play scoring: total (T itself) or multiples (one point per multiple)",
                "total", "multiples")
VOLUNTARY_PASS: Final = _bool("voluntary_pass", "a seat may pass even when it can play")


def lead_option(*allowed: str) -> OptionSpec:
    return _enum("lead", "who leads the first tile and with what", *allowed)


def fish_scoring_option(*allowed: str) -> OptionSpec:
    return _enum("fish_scoring", "how a fish (blocked round) is scored", *allowed)


def resolve(
    specs: dict[str, OptionSpec], defaults: dict[str, OptionValue], overrides: object
) -> tuple[dict[str, OptionValue], dict[str, OptionValue]]:
    """Defaults overlaid with validated overrides; returns (resolved, effective overrides).

    Overrides equal to the default are dropped, so a state carries only what differs.
    """
    if overrides is None:
        overrides = {}
    if not isinstance(overrides, dict):
        raise MalformedError("options must be an object of option names to values")
    resolved = dict(defaults)
    effective: dict[str, OptionValue] = {}
    for name, raw in overrides.items():
        spec = specs.get(name)
        if spec is None:
            where = f"options.{name}" if isinstance(name, str) and _NAME.fullmatch(name) else "options"
            raise MalformedError(f"{where}: no option {shown(name)} in this variant{did_you_mean(name, specs)} "
                                 f"(its options: {', '.join(sorted(specs))})")
        value = spec.parse(raw)
        resolved[name] = value
        if value != defaults[name]:
            effective[name] = value
    return resolved, effective
