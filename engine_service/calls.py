"""What each engine call does with the rules, whichever face it came through.

The typed servicer (`engine_service.servicer`) and the JSON face
(`engine_service.edge.json_face`) each decode a request into the rules' values, call
one of these functions and encode what it returns. What a call counts in the
metrics (actions applied, illegal ones, rounds and matches finished) is decided
here, once for both faces.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from engine_service import admission, bots, metrics, records
from engine_service.rules import (
    Game,
    IllegalActionError,
    Kingdomino,
    MalformedError,
    Match,
    RulesError,
    botseats,
    game_class,
)
from engine_service.rules.deal import deal_with_redeals, derive_seed, explicit_deal
from engine_service.rules.errors import one_of
from engine_service.rules.history import split
from engine_service.rules.kingdomino_setup import NAME as KINGDOMINO
from engine_service.rules.round import Round
from engine_service.rules.tiles import ALL_TILES
from engine_service.rules.views import redact_events

Event = dict[str, Any]
G = TypeVar("G", bound=Game)


class EncodingError(RuntimeError):
    """The rules produced something a face cannot encode: a bug, answered INTERNAL."""


def _bot_to_move(game: Game) -> int | None:
    """The bot seat to move now, if any (None: a human's turn, or nothing to play)."""
    seat = game.turn
    return seat if seat is not None and seat in game.bots else None


def seat_view(game: Game, seat: int) -> dict[str, Any]:
    """`seat`'s view, and for a matching game the round's `history` as that seat saw it (its own
    draws shown, the others' hidden), rebuilt from the state's log of the round (`round_history`):
    what the bots need to tell which numbers a pass or a draw proves missing (docs/bots.md). A state
    without a log, or one whose log does not give the round back, has no history: the bots then know
    the counts. (Kingdomino hides nothing a history would tell: its bots read the view alone.)"""
    view = game.view(seat)
    if isinstance(game, Match) and game.log:
        history = round_history(game, seat)
        if history is not None:
            view["history"] = history
    return view


def round_history(match: Match, seat: int) -> list[Event] | None:
    """The current round's events as `seat` saw them, from its deal (the log's last ``deal``: the state
    keeps the current round's entries, rules/history.py) replayed on the round alone, so that the cost
    is the round's, not the match's; None when the log does not give the round back."""
    rnd = match.round
    log = match.log
    at = next((i for i in range(len(log) - 1, -1, -1) if log[i] == "deal" or log[i].startswith("deal ")), None)
    if rnd is None or at is None:
        return None
    family = match.family
    try:
        _, payload = split(log[at])
        redealt = False
        if payload is None:
            if match.seed is None:
                return None
            hands, boneyard, redeals = deal_with_redeals(
                match.players, family.hand_size, derive_seed(match.seed, match.round_number), family.is_misdeal)
            redealt = redeals > 0
        elif isinstance(payload, dict):
            hands, boneyard = explicit_deal(match.players, family.hand_size, payload.get("hands"),
                                            payload.get("boneyard"), exact=True)
        else:
            return None
        replayed = Round(family, hands, boneyard, rnd.leader, ALL_TILES)
        history: list[Event] = [{"type": "round_dealt", "number": match.round_number, "leader": rnd.leader,
                                 "redealt": redealt}]
        for step in log[at + 1:]:
            events: list[Event] = []
            replayed.apply(step, events)
            history.extend(redact_events(events, seat))
    except RulesError:
        return None
    if replayed.layout.placements != rnd.layout.placements or replayed.hands != rnd.hands:
        return None
    return history


def play_bots(game: Game) -> list[Event]:
    """The bot seats' turns, from the state as it stands, until a human seat is to move or the
    round (Kingdomino: the game) is over. Each bot decides from its seat's view alone
    (`engine_service.bots`), reproducibly: the match seed and the position seed its choice.
    Expert seats think in one of the engine's bot workers, ahead of clients' suggestions, and
    within the call's deadline (`engine_service.admission`)."""
    if _bot_to_move(game) is None:  # a person's turn (most calls): no turns to play, nothing to promise
        return []
    events: list[Event] = []
    played: list[str] = []
    with admission.seat_turns() as turns:
        while (seat := _bot_to_move(game)) is not None:
            action = turns.suggest(seat_view(game, seat), game.bots[seat], seed=game.seed or 0)
            events.extend(game.apply(action, seat))
            played.append(action)
    if played:
        metrics.record_actions(game.variant, played)
        metrics.record_events(game.variant, events)
    return events


def begin(started: tuple[G, list[Event]]) -> tuple[G, list[Event]]:
    """A game just started (`start` of its class), then the bot seats' turns until a human one is to
    move."""
    game, events = started
    return game, events + play_bots(game)


def new_game(variant: object, players: object, *, options: object = None, seed: object = None,
             deal: object = None, setup: object = None, no_deal: bool = False,
             bots: object = None) -> tuple[Game, list[Event]]:
    """A new game of `variant`, by the class that plays it (`rules.game_class`): dealt from `deal`,
    else from `seed` (a matching game: unless `no_deal`); then the bots' turns."""
    return begin(game_class(variant).start(variant, players, options=options, seed=seed, deal=deal,
                                           setup=setup, no_deal=no_deal, bots=bots))


def new_match(variant: object, players: object, **args: Any) -> tuple[Match, list[Event]]:
    """`new_game` for a matching game, typed as one (the typed service's NewMatch: a MatchState)."""
    return begin(Match.start(variant, players, **args))


def new_kingdomino(players: object, **args: Any) -> tuple[Kingdomino, list[Event]]:
    """`new_game` for Kingdomino, typed as one (the typed service's NewKingdomino: a KingdominoState)."""
    return begin(Kingdomino.start(KINGDOMINO, players, **args))


def start_round(match: Match, deal: object = None) -> list[Event]:
    """Deal the next round: explicitly, or from the match seed; then the bots' turns."""
    events = match.start_round(deal)
    return events + play_bots(match)


def apply(game: Game, action: object, seat: object = None) -> list[Event]:
    """One action of the seat to move (`seat`, when given, must be that seat), then the bots' turns.

    The action is counted once the bots have played: an item of a batch whose bots need a worker stops
    there (`admission.Deferred`) and is sent again on its own, and is counted then, once."""
    try:
        events = game.apply(action, seat)
    except IllegalActionError:
        metrics.record_illegal(game.variant)
        raise
    played = play_bots(game)
    metrics.record_actions(game.variant, (str(action),))
    metrics.record_events(game.variant, events)
    return events + played


def seat_bot(game: Game, seat: object, level: object) -> list[Event]:
    """`seat` played by the computer at `level` from now on (None: by a person again), then the bots'
    turns if one is now to move: an online table's seat whose person left (issue 24)."""
    if game.finished:
        raise MalformedError("the match is over: no seat can change hands")
    game.bots = botseats.seat_bot(game.bots, game.players, seat, level)
    return play_bots(game)


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


def replay(game: Game, actions: Sequence[object], seat: object = None) -> Replayed:
    """Apply `actions` in order, stopping at the first refused one (a refusal is part of the result).

    `seat`, when given, must be the seat to move before each action (a sealed seat replays only
    its own moves).
    """
    done = Replayed()
    variant = game.variant
    for action in actions:
        try:
            done.events.extend(game.apply(action, seat))
        except RulesError as exc:  # the game is left as it was before this action
            done.refused = exc
            if isinstance(exc, IllegalActionError):
                metrics.record_illegal(variant)
            break
        done.applied += 1
        done.events.extend(play_bots(game))
    metrics.record_actions(variant, [str(a) for a in actions[:done.applied]])
    metrics.record_events(variant, done.events)
    return done


def settle(match: Match, ending: object, hands: object, last_placer: object = None) -> list[Event]:
    """Score a round played at a physical table from the hands left."""
    events = match.settle(ending, hands, last_placer)
    metrics.record_events(match.variant, events)
    return events


def timeout(game: Game, seat: object) -> list[Event]:
    """A seat timed out: the match (Kingdomino: the game, a dynasty all of it) ends by the variant's
    rule."""
    events = game.timeout(seat)
    metrics.record_events(game.variant, events)
    return events


def end_match(game: Game, seat: object, how: object) -> list[Event]:
    """An exit of the match (issue 37, `rules.exits`): `seat` resigns, was gone or aborts (`how`); the
    match (Kingdomino: the game, a dynasty all of it) ends at once."""
    events = game.end(how, seat)
    metrics.record_events(game.variant, events)
    return events


# ---------------------------------------------------------------- computer opponents (issue 15)

#: The longest wall-clock cap a caller may put on one suggestion or hint.
MAX_BUDGET_MS = 10_000


def _budget(game: Game, budget_ms: object) -> bots.Budget | None:
    """None (the level's default, reproducible), or the default iterations capped at `budget_ms`."""
    if budget_ms is None:
        return None
    if type(budget_ms) is not int or not 1 <= budget_ms <= MAX_BUDGET_MS:
        raise MalformedError(f"budget_ms: an integer 1..{MAX_BUDGET_MS}, not {budget_ms!r}")
    default = bots.default_budget(game.variant, game.players)
    return bots.Budget(iterations=default.iterations, ms=float(budget_ms))


def _seed(game: Game, seed: object) -> int:
    if seed is None:
        return game.seed or 0
    if type(seed) is not int or not 0 <= seed < 2**64:
        raise MalformedError(f"seed: an integer 0..2^64-1, not {seed!r}")
    return seed


#: Why there is nothing to coach when nobody is to move, by what is played out between deals (`Game.unit`).
_NOTHING_TO_COACH = {"round": "no round is being played", "game": "the game is over"}


def suggest(game: Game, level: object, budget_ms: object = None, seed: object = None,
            viewer: int | None = None) -> tuple[int, str]:
    """The seat to move and the action a bot of `level` plays there, from that seat's view only.
    `viewer` (sealed mode): the caller's seat, which must be the seat to move."""
    if level not in bots.LEVELS:
        raise MalformedError(f"level: {one_of(level, bots.LEVELS)}")
    budget, chosen_seed = _budget(game, budget_ms), _seed(game, seed)
    seat = game.turn
    if seat is None:
        raise IllegalActionError(f"nobody is to move: the {game.unit} is over")
    if viewer is not None and viewer != seat:
        raise IllegalActionError(f"it is seat {seat}'s turn, not seat {viewer}'s: a suggestion is for the seat "
                                 "to move")
    assert isinstance(level, str)
    return seat, admission.for_client().suggest(seat_view(game, seat), level, budget, chosen_seed)


def hints(game: Game, seat: object, budget_ms: object = None, seed: object = None) -> dict[str, Any]:
    """The coach's answer for `seat`'s view (`engine_service.bots.hints`)."""
    view = game.view(seat)  # refuses a seat that is not one (MalformedError)
    assert isinstance(seat, int)
    view = seat_view(game, seat)
    budget, chosen_seed = _budget(game, budget_ms), _seed(game, seed)
    if game.turn is None:  # between rounds, or the match (the game) is over
        raise IllegalActionError(f"nothing to coach: {_NOTHING_TO_COACH[game.unit]}")
    return admission.for_client().hints(view, budget, chosen_seed)


# ---------------------------------------------------------------- match records (docs/records.md)


def import_record(record: records.Record) -> Game | None:
    """Every move of `record` checked: the game at its end for a full record, None for a seat's or a
    spectator's (which lacks the hidden tiles a state holds, so only its moves are checked)."""
    if record.view == "full":
        return records.replay(record)
    records.check(record)
    return None
