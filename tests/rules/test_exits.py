"""The exits of a match (issue 37, `rules.exits`): resign, gone, abort, on both kinds of game.

- resign: scored exactly as the seat's timeout where the variant has a timeout rule (Kozel, Kingdomino's
  forfeit); elsewhere the seat's side loses and, of two sides, the other wins, with no rating;
- gone: exactly as resign, only the words differ;
- abort: over with no result (no winners, no losers, no rating);
- each is a log step (``resign N`` ...) and reports its event first; the state's forms keep the end;
- refusals: a bad ``how`` or seat is MalformedError, a match already over IllegalActionError, and a
  refused call changes nothing.
"""
from __future__ import annotations

from typing import Any

import pytest

from engine_service.rules import IllegalActionError, Kingdomino, MalformedError, Match
from engine_service.rules.exits import EVENT_TYPES, HOWS

Json = dict[str, Any]

#: (variant, players, options): Kozel 2p and 4p (a timeout rule), All Fives 2p (none), All Fives and
#: Osel in partnerships (two sides of two seats, no timeout rule), Block 3p (three sides, none).
MATCHES = [("kozel", 2, None), ("kozel", 4, None), ("all-fives", 2, None), ("all-fives", 4, {"teams": True}),
           ("osel", 4, {"teams": True}), ("block", 3, None)]


def _started(variant: str, players: int, options: Json | None, moves: int = 3) -> Match:
    """A match a few moves into its first round."""
    match, _ = Match.new(variant, players, options=options, seed=11)
    for _ in range(moves):
        match.apply(match.legal_actions()[0])
    return match


def _kingdomino(dynasty: bool = False, moves: int = 5) -> Kingdomino:
    game, _ = Kingdomino.new(3, options={"dynasty": True} if dynasty else None, seed=7)
    for _ in range(moves):
        game.apply(game.legal_actions()[0])
    return game


def _forms_keep_it(game: Match | Kingdomino) -> None:
    """The dict form and a copy give the same game back, still over with the same result (the sealed
    bytes: tests/engine/test_end_match.py)."""
    for again in (type(game).from_dict(game.to_dict()), game.copy()):
        assert again.to_dict() == game.to_dict() and again.finished and again.result() == game.result()


# ---------------------------------------------------------------- a matching game


@pytest.mark.parametrize("how", ["resign", "gone"])
@pytest.mark.parametrize("seat", [0, 1])
def test_kozel_resign_and_gone_are_scored_exactly_as_that_seats_timeout(how: str, seat: int) -> None:
    match = _started("kozel", 2, None)
    timed = match.copy()
    ended = timed.timeout(seat)
    events = match.end(how, seat)
    assert events == [{"type": EVENT_TYPES[how], "seat": seat}, *ended]
    assert (match.winners, match.losers, match.rating) == (timed.winners, timed.losers, timed.rating)
    assert match.losers == [seat] and match.rating[seat] == 0 and all(r >= 1 for s, r in enumerate(match.rating)
                                                                     if s != seat)
    assert match.finished and match.turn is None and match.legal_actions() == []
    assert match.timed_out is None  # the state says nobody timed out: the log says who resigned
    assert match.log[-1] == f"{how} {seat}"
    _forms_keep_it(match)


@pytest.mark.parametrize(("variant", "players", "options"), MATCHES[2:])
@pytest.mark.parametrize("how", ["resign", "gone"])
def test_without_a_timeout_rule_the_seats_side_loses(variant: str, players: int, options: Json | None,
                                                     how: str) -> None:
    """The seat's side (seat s on side s % sides) loses; with two sides the other wins; no rating."""
    for seat in range(players):
        match = _started(variant, players, options)
        sides = match.family.sides
        assert not match.family.has_timeout_rule()
        events = match.end(how, seat)
        side = seat % sides
        winners = [1 - side] if sides == 2 else []
        assert events == [{"type": EVENT_TYPES[how], "seat": seat},
                          {"type": "match_ended", "losers": [side], "winners": winners, "rating": []}]
        assert match.result() == {"winners": winners, "losers": [side], "rating": [],
                                  "scores": match.ledger.scores}
        _forms_keep_it(match)


def test_a_partnership_resign_names_sides_not_seats() -> None:
    """All Fives in partnerships: seats 1 and 3 are side 1; either resigning makes side 0 the winner."""
    for variant in ("all-fives", "osel"):
        for seat in (1, 3):
            match = _started(variant, 4, {"teams": True})
            match.end("resign", seat)
            assert (match.losers, match.winners) == ([1], [0])


@pytest.mark.parametrize(("variant", "players", "options"), MATCHES)
def test_abort_ends_the_match_with_no_result(variant: str, players: int, options: Json | None) -> None:
    match = _started(variant, players, options)
    events = match.end("abort", players - 1)
    assert events == [{"type": "aborted", "seat": players - 1},
                      {"type": "match_ended", "losers": [], "winners": [], "rating": []}]
    assert match.finished and match.turn is None
    assert match.result() == {"winners": [], "losers": [], "rating": [], "scores": match.ledger.scores}
    assert match.log[-1] == f"abort {players - 1}"
    _forms_keep_it(match)


def test_an_exit_before_the_first_deal_and_between_rounds() -> None:
    """Any time before the end: before any round is dealt, and once a round is over."""
    match, _ = Match.new("all-fives", 2, seed=3, no_deal=True)
    assert match.end("abort", 0)[-1]["type"] == "match_ended" and match.finished
    match, _ = Match.new("all-fives", 2, seed=3)
    while match.round is not None and not match.round.over:
        match.apply(match.legal_actions()[0])
    assert not match.finished
    match.end("gone", 1)
    assert (match.losers, match.winners) == ([1], [0])


@pytest.mark.parametrize(("how", "seat", "error", "message"), [
    ("quit", 0, MalformedError, 'how: "quit" is not one of "resign", "gone", "abort"'),
    (None, 0, MalformedError, "how: null is not one of"),
    ("resign", 2, MalformedError, "seat must be a seat 0..1, not 2"),
    ("abort", "1", MalformedError, "seat"),
    ("gone", True, MalformedError, "seat"),
])
def test_a_bad_how_or_seat_is_malformed_and_changes_nothing(how: object, seat: object, error: type[Exception],
                                                            message: str) -> None:
    match = _started("kozel", 2, None)
    before = match.to_dict()
    with pytest.raises(error, match=message.replace("(", r"\(")):
        match.end(how, seat)
    assert match.to_dict() == before


@pytest.mark.parametrize("first", ["timeout", *HOWS])
@pytest.mark.parametrize("then", HOWS)
def test_an_exit_of_a_match_that_is_over_is_illegal(first: str, then: str) -> None:
    match = _started("kozel", 2, None)
    match.timeout(0) if first == "timeout" else match.end(first, 0)
    before = match.to_dict()
    with pytest.raises(IllegalActionError, match="the match is over"):
        match.end(then, 1)
    assert match.to_dict() == before


def test_the_exit_events_pass_every_view() -> None:
    """redact, seen_by and spectated leave the exit's event and the end as they are, for every viewer."""
    match = _started("block", 2, None)
    events = match.end("resign", 0)
    assert match.spectated(events) == events
    for viewer in (None, 0, 1):
        assert match.redact(events, viewer) == events and match.seen_by(events, viewer) == events
        assert match.view_for(viewer)["match_over"] is True


# ---------------------------------------------------------------- Kingdomino


@pytest.mark.parametrize("dynasty", [False, True])
@pytest.mark.parametrize("how", ["resign", "gone"])
def test_kingdomino_resign_and_gone_are_its_forfeit(dynasty: bool, how: str) -> None:
    """The player forfeits as on a timeout: the same winners and scores, decided_by the exit's word."""
    game = _kingdomino(dynasty)
    timed = game.copy()
    ended = timed.timeout(1)
    events = game.end(how, 1)
    assert events[0] == {"type": EVENT_TYPES[how], "player": 1}
    assert events[1:] == [{**e, "decided_by": how} for e in ended[1:]]
    assert [e["type"] for e in events[1:]] == (["game_over", "dynasty_over"] if dynasty else ["game_over"])
    assert game.result() == {**(timed.result() or {}), "decided_by": how}
    assert game.winners() == timed.winners() and 1 not in game.winners()
    assert game.timed_out == 1 and game.exit == how and game.log[-1] == f"{how} 1"
    assert game.finished and game.turn is None and game.to_move is None and game.legal_actions() == []
    view = game.view(0)
    assert (view["decided_by"], view["timed_out"], view["exit"], view["game_over"]) == (how, 1, how, True)
    _forms_keep_it(game)


@pytest.mark.parametrize("dynasty", [False, True])
def test_kingdomino_abort_ends_with_no_winners(dynasty: bool) -> None:
    game = _kingdomino(dynasty)
    events = game.end("abort", 2)
    assert events[0] == {"type": "aborted", "player": 2}
    assert [(e["type"], e["winners"], e["decided_by"]) for e in events[1:]] == (
        [("game_over", [], "aborted"), ("dynasty_over", [], "aborted")] if dynasty else [("game_over", [], "aborted")])
    assert game.result() == {"winners": [], "decided_by": "aborted", "scores": game.totals()["scores"]}
    assert game.timed_out == -1 and game.exit == "abort" and game.finished and game.legal_actions() == []
    assert game.to_dict()["exit"] == "abort" and "timed_out" not in game.to_dict()
    assert game.redact(events, None) == events and game.spectated(events) == events
    _forms_keep_it(game)


def test_kingdomino_refusals() -> None:
    game = _kingdomino()
    before = game.to_dict()
    for how, player, error in (("leave", 0, MalformedError), ("resign", 3, MalformedError),
                               ("abort", None, MalformedError)):
        with pytest.raises(error):
            game.end(how, player)
        assert game.to_dict() == before
    game.end("abort", 0)
    with pytest.raises(IllegalActionError, match="the game is over"):
        game.end("resign", 1)
    with pytest.raises(IllegalActionError, match="the game is over"):
        game.timeout(1)


@pytest.mark.parametrize(("change", "message"), [
    ({"exit": "quit"}, 'state.exit: "quit" is not one of'),
    ({"exit": "resign"}, "state.exit: 'resign' names the player who forfeited in state.timed_out"),
    ({"exit": "abort", "timed_out": 1}, "state.exit: 'abort' ends the game for no player"),
])
def test_a_kingdomino_state_with_an_exit_that_does_not_fit_is_refused(change: Json, message: str) -> None:
    state = {**_kingdomino().to_dict(), **change}
    with pytest.raises(MalformedError, match=message.replace("(", r"\(")):
        Kingdomino.from_dict(state)


def test_a_kingdomino_state_played_to_its_end_has_no_exit() -> None:
    game, _ = Kingdomino.new(2, seed=3)
    while not game.finished:
        game.apply(game.legal_actions()[0])
    with pytest.raises(MalformedError, match="state.exit: the game was played to its end"):
        Kingdomino.from_dict({**game.to_dict(), "exit": "abort"})
