"""Option specifications and their validation (RULES.md "Options").

An option has a name, a type (bool, int or enum), the values it allows and a
default per preset. Option names and values are part of the API: a match may
override any option its family uses, and anything else is refused with an
error that names it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import MalformedError

OptionValue = bool | int | str


@dataclass(frozen=True, slots=True)
class OptionSpec:
    name: str
    type: str                      # "bool", "int" or "enum"
    description: str
    allowed: tuple[str, ...] = ()  # enum values
    minimum: int | None = None     # int bounds
    maximum: int | None = None

    def parse(self, value: object) -> OptionValue:
        """Validate a value of the option's own type: a boolean, an integer in bounds, or one of the
        enum's names. Nothing is coerced: "true" is not true, "13" is not 13, 0 is not "0"
        (the typed gRPC face turns its option text into these types first: `codec.options_from_proto`).
        """
        if self.type == "bool":
            if type(value) is bool:
                return value
            raise MalformedError(f"option {self.name}: expected true or false, got {_shown(value)}")
        if self.type == "int":
            if type(value) is not int:
                raise MalformedError(f"option {self.name}: expected an integer, got {_shown(value)}")
            if (self.minimum is not None and value < self.minimum) or (
                self.maximum is not None and value > self.maximum
            ):
                raise MalformedError(
                    f"option {self.name}: {value} is outside {self.minimum}..{self.maximum}"
                )
            return value
        if type(value) is not str or value not in self.allowed:
            raise MalformedError(
                f"option {self.name}: {_shown(value)} is not one of {', '.join(self.allowed)}"
            )
        return value

    def text(self, value: OptionValue) -> str:
        """The value as text (the gRPC contract carries options as strings)."""
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    def describe(self, default: OptionValue) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "allowed": list(self.allowed),
            "default": self.text(default),
            "description": self.description,
        }


def _shown(value: object) -> str:
    """A caller's value in a message: its repr, cut short (it may be anything a client sent)."""
    text = repr(value) if isinstance(value, (bool, int, float, str)) or value is None else type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def _enum(name: str, description: str, *allowed: str) -> OptionSpec:
    return OptionSpec(name, "enum", description, allowed)


def _bool(name: str, description: str) -> OptionSpec:
    return OptionSpec(name, "bool", description)


def _int(name: str, description: str, lo: int, hi: int) -> OptionSpec:
    return OptionSpec(name, "int", description, (), lo, hi)


# Every option of RULES.md; a family lists the ones it uses, possibly with a narrower enum.
HAND_SIZE = _enum(
    "hand_size", "tiles dealt to each seat: seven, five, by-players (7 for 2, 5 for 3-4), "
    "five-six-seven (7, 6, 5 for 2, 3, 4)", "seven", "five", "by-players", "five-six-seven")
MISDEAL = _enum(
    "misdeal", "which random deals are dealt again (and which explicit deals are refused)",
    "none", "five-doubles", "five-doubles-or-six-of-a-number")
DOUBLE_PAIR = _bool("double_pair", "K classic: two doubles at once when one fits each of the two ends")
ZERO_DOUBLE = _enum(
    "zero_double", "how 0-0 left in hand counts: plain 0, lone-ten (10 when it is the only tile), twenty-five",
    "plain", "lone-ten", "twenty-five")
FISH_WITHOUT_DOUBLE = _bool(
    "fish_without_double",
    "a fish also when every open end shows v and all six non-double v tiles are on the table")
OPEN_THRESHOLD = _int("open_threshold", "a round below this many points is remembered, not written", 0, 1000)
TARGET = _int("target", "the score that ends the match", 1, 100000)
EXACT_TARGET = _bool("exact_target", "the target must be hit exactly (a score that would pass it is not taken)")
BONEYARD_RESERVE = _enum(
    "boneyard_reserve", "boneyard tiles that may never be drawn (auto: 2 with 2 players, 1 with 3-4)",
    "0", "1", "2", "auto")
DRAW_WHEN_ABLE = _bool("draw_when_able", "a seat may draw even when it can play")
TEAMS = _bool("teams", "4 players in two teams, seats 0+2 against 1+3")
SPINNER = _enum("spinner", "which doubles spin (open four sides)", "first-double", "none", "all-doubles")
SPINNER_ENDS = _enum(
    "spinner_ends", "open-sides: a spinner's N/S are open at once and count its number; "
    "until-both-sides: it counts both halves until W and E carry tiles, then N/S open",
    "open-sides", "until-both-sides")
SPINNER_COUNTS = _bool("spinner_counts", "the spinner's own halves count in the open-end count")
SCORING = _enum("scoring", "in-play scoring: total (T itself) or multiples (one point per multiple)",
                "total", "multiples")
VOLUNTARY_PASS = _bool("voluntary_pass", "a seat may pass even when it can play")


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
            known = ", ".join(sorted(specs))
            raise MalformedError(f"unknown option {name!r} for this variant (its options: {known})")
        value = spec.parse(raw)
        resolved[name] = value
        if value != defaults[name]:
            effective[name] = value
    return resolved, effective
