"""What each engine call does with the rules, whichever face it came through.

The typed servicer (`engine_service.servicer`) and the JSON face
(`engine_service.json_face`) each decode a request into the rules' values, call
one of these functions and encode what it returns. What a call counts in the
metrics (actions applied, illegal ones, rounds and matches finished) is decided
here, once for both faces.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engine_service import metrics
from engine_service.rules import IllegalActionError, Kingdomino, MalformedError, Match, RulesError
from engine_service.rules.kingdomino_setup import NAME as KINGDOMINO

Event = dict[str, Any]


class EncodingError(RuntimeError):
    """The rules produced something a face cannot encode: a bug, answered INTERNAL."""


def new_match(variant: object, players: object, *, options: object = None, seed: object = None,
              deal: object = None, setup: object = None, no_deal: bool = False) -> tuple[Match, list[Event]]:
    """A new match, its first round dealt from `deal`, else from `seed`, unless `no_deal`."""
    if deal is not None and no_deal:
        raise MalformedError("deal and no_deal: give one or the other")
    return Match.new(variant, players, options=options, seed=seed, deal=deal, setup=setup, no_deal=no_deal)


def start_round(match: Match, deal: object = None) -> list[Event]:
    """Deal the next round: explicitly, or from the match seed."""
    return match.start_round(deal)


def apply(match: Match, action: object, seat: object = None) -> list[Event]:
    """One action of the seat to move (`seat`, when given, must be that seat)."""
    try:
        events = match.apply(action, seat)
    except IllegalActionError:
        metrics.record_illegal(match.variant)
        raise
    metrics.record_actions(match.variant, (str(action),))
    metrics.record_events(match.variant, events)
    return events


@dataclass
class Replayed:
    """How far a replay got: the match is left after the last applied action."""

    events: list[Event] = field(default_factory=list)
    applied: int = 0
    refused: RulesError | None = None

    @property
    def ok(self) -> bool:
        return self.refused is None

    @property
    def reason(self) -> str:
        return "" if self.refused is None else str(self.refused)

    @property
    def error_kind(self) -> str:
        """Replay's word for the refusal: "malformed", "illegal" (a misdeal cannot happen in play), or ""."""
        if self.refused is None:
            return ""
        return "illegal" if isinstance(self.refused, IllegalActionError) else "malformed"


def replay(match: Match | Kingdomino, actions: Sequence[object], seat: object = None) -> Replayed:
    """Apply `actions` in order, stopping at the first refused one (a refusal is part of the result).

    `seat`, when given, must be the seat to move before each action (a sealed seat replays only
    its own moves).
    """
    done = Replayed()
    variant = match.variant if isinstance(match, Match) else KINGDOMINO
    for action in actions:
        try:
            done.events.extend(match.apply(action, seat))
        except RulesError as exc:  # the match is left as it was before this action
            done.refused = exc
            if isinstance(exc, IllegalActionError):
                metrics.record_illegal(variant)
            break
        done.applied += 1
    metrics.record_actions(variant, [str(a) for a in actions[:done.applied]])
    metrics.record_events(variant, done.events)
    return done


def settle(match: Match, ending: object, hands: object, last_placer: object = None) -> list[Event]:
    """Score a round played at a physical table from the hands left."""
    events = match.settle(ending, hands, last_placer)
    metrics.record_events(match.variant, events)
    return events


def timeout(match: Match, seat: object) -> list[Event]:
    """A seat timed out: the match ends by the variant's rule."""
    events = match.timeout(seat)
    metrics.record_events(match.variant, events)
    return events


# ---------------------------------------------------------------- Kingdomino (RULES.md KD)


def new_kingdomino(players: object, *, options: object = None, seed: object = None,
                   deal: object = None) -> tuple[Kingdomino, list[Event]]:
    """A new Kingdomino game (or dynasty): dealt from `deal`, else from `seed` (a random one if none)."""
    game, events = Kingdomino.new(players, options=options, seed=seed, deal=deal)
    return game, events


def kingdomino_apply(game: Kingdomino, action: object, player: object = None) -> list[Event]:
    """One action of the player to move (`player`, when given, must be that player)."""
    try:
        events = game.apply(action, player)
    except IllegalActionError:
        metrics.record_illegal(KINGDOMINO)
        raise
    metrics.record_actions(KINGDOMINO, (str(action),))
    metrics.record_events(KINGDOMINO, events)
    return events


def kingdomino_timeout(game: Kingdomino, player: object) -> list[Event]:
    """A player timed out: it forfeits and the game (a dynasty: all of it) ends."""
    events = game.timeout(player)
    metrics.record_events(KINGDOMINO, events)
    return events
