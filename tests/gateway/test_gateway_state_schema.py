"""The OpenAPI description of states, views and events is what the engine writes, for every preset.

The gateway forwards states unread, so its schemas (`MatchStateSchema` and the
rest) are only the documentation, and the one source for these tests: a schema
that lacks a key the rules write, names one they don't, or types one wrongly
fails here. States come from seeded random matches of every preset and player
count, taken before the deal, at every decision, at the end of each round and
at the end of the match, with the default options and with others; Kingdomino's
states, views (every player's and the public one) and events come from seeded
random games of every player count and option, Dynasty and timeouts included.
"""
from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from api_gateway.http.schemas import (
    EventSchema,
    KingdominoEventSchema,
    KingdominoStateSchema,
    KingdominoViewSchema,
    LedgerSchema,
    MatchAnswerSchema,
    MatchStateSchema,
    RoundRecordSchema,
    RoundSchema,
    SeatViewSchema,
    TournamentStateSchema,
    ViewAnswerSchema,
)
from engine_service.rules import PRESETS, Kingdomino, Match, RulesError, Tournament
from engine_service.rules.views import public_view, view_for

CASES = [(name, n) for name, p in PRESETS.items() for n in range(p.min_players, p.max_players + 1)]


def _played(variant: str, players: int, seed: int, options: dict[str, Any] | None = None
            ) -> Iterator[tuple[Match, list[dict[str, Any]]]]:
    """(match, the events that led to it) along a seeded random match: up to three rounds."""
    rng = random.Random(seed)
    match, events = Match.new(variant, players, seed=seed, options=options)
    yield Match.new(variant, players, seed=seed, options=options, no_deal=True)[0], []
    yield match.copy(), events
    for _ in range(3):
        while match.legal_actions():
            events = match.apply(rng.choice(match.legal_actions()))
            yield match.copy(), events
        if match.match_over:
            return
        yield match.copy(), match.start_round()
    if not match.match_over:
        try:
            yield match.copy(), match.timeout(0)  # a timeout ends the match (K): timed_out, rating
        except RulesError:
            pass  # this variant has no timeout rule


#: Keys a state or view has only when they say something (bot seats).
OPTIONAL = {"bots", "log_count", "log_digest"}  # written when present (log_count: once a round has ended)


def _keys_match(present: dict[str, Any], fields: dict[str, Any]) -> None:
    assert set(present) <= set(fields) and set(fields) - set(present) <= OPTIONAL


def _check_state(state: dict[str, Any]) -> None:
    _keys_match(state, MatchStateSchema().fields)
    assert set(state["ledger"]) == set(LedgerSchema().fields)
    for record in state["ledger"]["history"]:
        assert set(record) == set(RoundRecordSchema().fields)
    if state["round"] is not None:
        assert set(state["round"]) == set(RoundSchema().fields)
    # Loading checks every value against its documented type and bounds (no coercion).
    assert MatchStateSchema().load(state) == state
    assert MatchStateSchema().dump(state) == state


def _check_event(event: dict[str, Any]) -> None:
    schema = EventSchema()
    assert event["type"] in schema.fields["type"].metadata["enum"]
    assert set(event) <= set(schema.fields)
    assert schema.dump(event) == event


@pytest.mark.parametrize(("variant", "players"), CASES)
def test_states_views_and_events_are_what_the_schemas_describe(variant: str, players: int) -> None:
    seen = 0
    for match, events in _played(variant, players, seed=players * 31 + len(variant)):
        _check_state(match.to_dict())
        for event in events:
            _check_event(event)
        for seat in range(players):
            view = match.view(seat)
            _keys_match(view, SeatViewSchema().fields)
            assert SeatViewSchema().dump(view) == view
        _keys_match(public_view(match), SeatViewSchema().fields)
        seen += 1
    assert seen > 5


def _other_options(variant: str) -> Iterator[dict[str, Any]]:
    """Each option of the preset set to another value than its default, one at a time."""
    preset = PRESETS[variant]
    for name, spec in preset.family.specs.items():
        default = preset.defaults[name]
        if spec.type == "bool":
            yield {name: not default}
        elif spec.type == "enum":
            for value in spec.allowed:
                if value != default:
                    yield {name: value}
                    break


@pytest.mark.parametrize("variant", list(PRESETS))
def test_states_with_options_are_what_the_schema_describes(variant: str) -> None:
    players = PRESETS[variant].max_players
    checked = 0
    for options in _other_options(variant):
        try:
            states = [m.to_dict() for m, _ in _played(variant, players, seed=5, options=options)]
        except RulesError:
            continue  # an option that needs another player count (teams, ...)
        for state in states[::7]:
            _check_state(state)
        checked += 1
    assert checked


def test_tournament_states_are_what_the_schema_describes() -> None:
    tournament = Tournament.create(["Ann", "Bob", "Cid", "Dan", "Eve"], seed=3)
    rng = random.Random(3)
    while not tournament.over:
        state = tournament.to_dict()
        assert set(state) == set(TournamentStateSchema().fields)
        assert TournamentStateSchema().load(state) == state
        winner = rng.randrange(4)
        tournament.record_round([0 if s == winner else rng.randint(1, 40) for s in range(4)], winner)
    assert TournamentStateSchema().load(tournament.to_dict()) == tournament.to_dict()


# ---------------------------------------------------------------- Kingdomino (KD)

KD_CASES = [(2, {}), (3, {"harmony": True}), (4, {"middle_kingdom": True}), (2, {"mighty_duel": True}),
            (2, {"dynasty": True}), (3, {"dynasty": True, "harmony": True})]


def _kd_played(players: int, options: dict[str, Any], seed: int) -> Iterator[tuple[Kingdomino, list[dict[str, Any]]]]:
    """(game, the events that led to it) along a seeded random game, then a timed-out copy."""
    rng = random.Random(seed)
    game, events = Kingdomino.new(players, options=options, seed=seed)
    yield game.copy(), events
    while not game.game_over:
        events = game.apply(rng.choice(game.legal_actions()))
        yield game.copy(), events
        if len(game.kingdoms[0].log) == 5 and not game.timed_out >= 0:
            timed = game.copy()
            yield timed, timed.timeout(players - 1)


@pytest.mark.parametrize(("players", "options"), KD_CASES)
def test_kingdomino_states_views_and_events_are_what_the_schemas_describe(players: int,
                                                                          options: dict[str, Any]) -> None:
    kinds: set[str] = set()
    for game, events in _kd_played(players, options, seed=players * 7 + len(options)):
        state = game.to_dict()
        assert set(state) <= set(KingdominoStateSchema().fields)
        assert set(KingdominoStateSchema().fields) - set(state) <= {"dynasty", "timed_out", "exit", "bots"}
        assert KingdominoStateSchema().load(state) == state
        assert MatchAnswerSchema().dump({"state": state}) == {"state": state}  # through the `Either` field
        for event in events:
            assert event["type"] in KingdominoEventSchema().fields["type"].metadata["enum"]
            assert set(event) <= set(KingdominoEventSchema().fields)
            assert KingdominoEventSchema().dump(event) == event
            kinds.add(event["type"])
        for viewer in [*range(players), None]:
            view = view_for(game, viewer)
            assert set(view) == set(KingdominoViewSchema().fields) - ({"dynasty"} if "dynasty" not in view else set()) \
                - ({"bots"} if "bots" not in view else set())
            assert ViewAnswerSchema().dump({"view": view, "scores": [0]}) == {"view": view, "scores": [0]}
    assert {"game_started", "row_laid", "tile_picked", "tile_placed", "game_over", "timed_out"} <= kinds


def test_a_state_and_view_with_bot_seats_are_what_the_schemas_describe() -> None:
    from engine_service.calls import new_kingdomino, new_match

    match, _ = new_match("kozel", 4, seed=3, bots=[{"seat": 2, "level": "greedy"}])
    state = match.to_dict()
    assert set(state) == set(MatchStateSchema().fields) - {"log_count", "log_digest"}  # no round has ended yet
    _check_state(state)
    assert set(match.view(0)) == set(SeatViewSchema().fields)
    game, _ = new_kingdomino(2, seed=3, bots=[{"seat": 1, "level": "random"}])
    assert KingdominoStateSchema().load(game.to_dict())["bots"] == [{"seat": 1, "level": "random"}]
    assert KingdominoViewSchema().dump(game.view(0))["bots"] == [{"seat": 1, "level": "random"}]
