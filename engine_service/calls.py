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

from engine_service import admission, bots, metrics, records
from engine_service.rules import IllegalActionError, Kingdomino, MalformedError, Match, RulesError
from engine_service.rules.errors import one_of
from engine_service.rules.kingdomino_setup import NAME as KINGDOMINO

Event = dict[str, Any]


class EncodingError(RuntimeError):
    """The rules produced something a face cannot encode: a bug, answered INTERNAL."""


def _bot_to_move(game: Match | Kingdomino) -> int | None:
    """The bot seat to move now, if any (None: a human's turn, or nothing to play)."""
    if isinstance(game, Kingdomino):
        seat = None if game.game_over else game.to_move
    else:
        rnd = game.round
        seat = None if game.match_over or rnd is None or rnd.over else rnd.to_move
    return seat if seat is not None and seat in game.bots else None


def seat_view(game: Match | Kingdomino, seat: int) -> dict[str, Any]:
    """`seat`'s view, and for a matching game the round's `history` as that seat saw it (its own
    draws shown, the others' hidden), rebuilt from the state's action log by the records: what the
    bots need to tell which numbers a pass or a draw proves missing (docs/bots.md). A state without
    a log, or one whose log does not give it back, has no history: the bots then know the counts."""
    view = game.view(seat)
    if isinstance(game, Match) and game.log:
        try:
            moves = records.export(game, f"seat {seat}").moves
        except RulesError:
            return view
        start = max((i for i, m in enumerate(moves) if m.step.split(" ", 1)[0] == "deal"), default=0)
        history: list[Event] = []
        for move in moves[start:]:
            if move.seat is not None and move.step == "pass":
                history.append({"type": "passed", "seat": move.seat})
            elif move.seat is not None and move.step != "draw":  # a record's play is its step
                history.append({"type": "played", "seat": move.seat, "action": move.step})
            history.extend(move.events)  # a draw's own event (the tile for this seat only), scores ...
        view["history"] = history
    return view


def play_bots(game: Match | Kingdomino) -> list[Event]:
    """The bot seats' turns, from the state as it stands, until a human seat is to move or the
    round (Kingdomino: the game) is over. Each bot decides from its seat's view alone
    (`engine_service.bots`), reproducibly: the match seed and the position seed its choice.
    Expert seats think in one of the engine's bot workers, ahead of clients' suggestions, and
    within the call's deadline (`engine_service.admission`)."""
    events: list[Event] = []
    variant = game.variant if isinstance(game, Match) else KINGDOMINO
    played: list[str] = []
    with admission.seat_turns() as turns:
        while (seat := _bot_to_move(game)) is not None:
            action = turns.suggest(seat_view(game, seat), game.bots[seat], seed=game.seed or 0)
            events.extend(game.apply(action, seat))
            played.append(action)
    if played:
        metrics.record_actions(variant, played)
        metrics.record_events(variant, events)
    return events


def new_match(variant: object, players: object, *, options: object = None, seed: object = None,
              deal: object = None, setup: object = None, no_deal: bool = False,
              bots: object = None) -> tuple[Match, list[Event]]:
    """A new match, its first round dealt from `deal`, else from `seed`, unless `no_deal`; then
    the bot seats' turns until a human one is to move."""
    if deal is not None and no_deal:
        raise MalformedError("deal and no_deal: give one or the other")
    match, events = Match.new(variant, players, options=options, seed=seed, deal=deal, setup=setup,
                              no_deal=no_deal, bots=bots)
    return match, events + play_bots(match)


def start_round(match: Match, deal: object = None) -> list[Event]:
    """Deal the next round: explicitly, or from the match seed; then the bots' turns."""
    events = match.start_round(deal)
    return events + play_bots(match)


def apply(match: Match, action: object, seat: object = None) -> list[Event]:
    """One action of the seat to move (`seat`, when given, must be that seat)."""
    try:
        events = match.apply(action, seat)
    except IllegalActionError:
        metrics.record_illegal(match.variant)
        raise
    metrics.record_actions(match.variant, (str(action),))
    metrics.record_events(match.variant, events)
    return events + play_bots(match)


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
        done.events.extend(play_bots(match))
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
                   deal: object = None, bots: object = None) -> tuple[Kingdomino, list[Event]]:
    """A new Kingdomino game (or dynasty): dealt from `deal`, else from `seed` (a random one if
    none); then the bots' turns until a human player is to move."""
    game, events = Kingdomino.new(players, options=options, seed=seed, deal=deal, bots=bots)
    return game, events + play_bots(game)


def kingdomino_apply(game: Kingdomino, action: object, player: object = None) -> list[Event]:
    """One action of the player to move (`player`, when given, must be that player)."""
    try:
        events = game.apply(action, player)
    except IllegalActionError:
        metrics.record_illegal(KINGDOMINO)
        raise
    metrics.record_actions(KINGDOMINO, (str(action),))
    metrics.record_events(KINGDOMINO, events)
    return events + play_bots(game)


def kingdomino_timeout(game: Kingdomino, player: object) -> list[Event]:
    """A player timed out: it forfeits and the game (a dynasty: all of it) ends."""
    events = game.timeout(player)
    metrics.record_events(KINGDOMINO, events)
    return events


# ---------------------------------------------------------------- computer opponents (issue 15)

#: The longest wall-clock cap a caller may put on one suggestion or hint.
MAX_BUDGET_MS = 10_000


def _budget(game: Match | Kingdomino, budget_ms: object) -> bots.Budget | None:
    """None (the level's default, reproducible), or the default iterations capped at `budget_ms`."""
    if budget_ms is None:
        return None
    if type(budget_ms) is not int or not 1 <= budget_ms <= MAX_BUDGET_MS:
        raise MalformedError(f"budget_ms: an integer 1..{MAX_BUDGET_MS}, not {budget_ms!r}")
    default = bots.kingdomino_default(game.players) if isinstance(game, Kingdomino) else bots.MATCHING_DEFAULT
    return bots.Budget(iterations=default.iterations, ms=float(budget_ms))


def _seed(game: Match | Kingdomino, seed: object) -> int:
    if seed is None:
        return game.seed or 0
    if type(seed) is not int or not 0 <= seed < 2**64:
        raise MalformedError(f"seed: an integer 0..2^64-1, not {seed!r}")
    return seed


def _to_move(game: Match | Kingdomino) -> int | None:
    if isinstance(game, Kingdomino):
        return None if game.game_over else game.to_move
    rnd = game.round
    return None if game.match_over or rnd is None or rnd.over else rnd.to_move


def suggest(game: Match | Kingdomino, level: object, budget_ms: object = None, seed: object = None,
            viewer: int | None = None) -> tuple[int, str]:
    """The seat to move and the action a bot of `level` plays there, from that seat's view only.
    `viewer` (sealed mode): the caller's seat, which must be the seat to move."""
    if level not in bots.LEVELS:
        raise MalformedError(f"level: {one_of(level, bots.LEVELS)}")
    budget, chosen_seed = _budget(game, budget_ms), _seed(game, seed)
    seat = _to_move(game)
    if seat is None:
        raise IllegalActionError("nobody is to move: the round is over" if isinstance(game, Match)
                                 else "nobody is to move: the game is over")
    if viewer is not None and viewer != seat:
        raise IllegalActionError(f"it is seat {seat}'s turn, not seat {viewer}'s: a suggestion is for the seat "
                                 "to move")
    assert isinstance(level, str)
    return seat, admission.for_client().suggest(seat_view(game, seat), level, budget, chosen_seed)


def hints(game: Match | Kingdomino, seat: object, budget_ms: object = None, seed: object = None) -> dict[str, Any]:
    """The coach's answer for `seat`'s view (`engine_service.bots.hints`)."""
    view = game.view(seat)  # refuses a seat that is not one (MalformedError)
    assert isinstance(seat, int)
    view = seat_view(game, seat)
    budget, chosen_seed = _budget(game, budget_ms), _seed(game, seed)
    if _to_move(game) is None:  # between rounds, or the match (the game) is over
        raise IllegalActionError("nothing to coach: no round is being played" if isinstance(game, Match)
                                 else "nothing to coach: the game is over")
    return admission.for_client().hints(view, budget, chosen_seed)
