"""Writing a record from a state, and reading one back through the rules (docs/records.md).

- `export(state, view)`: the state's log (rules/history.py) replayed from the
  start, move by move, with the events each move gave, as `view` may see them:
  ``full`` (everything), ``seat N`` (its own hand and draws; the others' tiles
  only once a round ends and the hands are shown), ``spectator`` (no hidden tile
  before a round ends). Refused when the log does not give the state back.
- `replay(record, upto)`: the state after move `upto` (a full record: the others
  lack the hidden tiles a state holds). Each move is checked: the seat recorded
  must be the seat to move, the step must be legal, the events recorded (when
  given) must be those the move gives, the result the one reached. The first
  that is not names its move and line (`RecordError`).
- `check(record)`: `replay` for a full record; for a seat's or a spectator's, what
  can be checked without the hidden tiles: the shape, the numbering, the steps'
  notation, each round's layout tile by tile, and that no tile shows twice.

Everything is pure: no I/O, no clock.
"""
from __future__ import annotations

import re
from typing import Any

from engine_service.rules import Game, Kingdomino, Match, game_class, game_from_dict
from engine_service.rules.errors import IllegalActionError, RulesError
from engine_service.rules.exits import HOWS
from engine_service.rules.games import GAME_CLASSES
from engine_service.rules.history import check_prior, split
from engine_service.rules.kingdomino_setup import NAME as KINGDOMINO
from engine_service.rules.kingdomino_setup import config
from engine_service.rules.layout import Layout
from engine_service.rules.notation import DRAW, Move
from engine_service.rules.registry import make_family
from engine_service.rules.round import Round
from engine_service.rules.tiles import NAMES, names

from .model import TABLE_VERBS, AnyMove, Entry, Record, RecordError, refusal, step_move

Json = dict[str, Any]

#: Events a record adds to the rules' own: a round's deal, and the hands shown when it ends.
DEALT = "dealt"
REVEALED = "revealed"


def _game_of(state: object) -> Game:
    """A game as given, or decoded from its JSON state by the class its variant names."""
    if isinstance(state, GAME_CLASSES):
        return state
    return game_from_dict(state)


def _viewer(view: str, players: int) -> int | None:
    if view in ("full", "spectator"):
        return None
    m = re.fullmatch(r"seat (\d+)", view)
    if m is None or not int(m.group(1)) < players:
        raise RecordError(f"view must be 'full', 'spectator' or 'seat 0..{players - 1}', not {view!r}")
    return int(m.group(1))


# ---------------------------------------------------------------- one step


def _start(variant: str, players: int, options: Json, seed: int | None, step: str) -> tuple[Game, list[Json]]:
    verb, payload = split(step)
    if verb != "new":
        raise RecordError(f"the first move must be the start ('new'), not {step!r}")
    return game_class(variant).from_log_start(variant, players, options, seed, payload)


def _apply(game: Game, step: str, move: AnyMove | None = None) -> tuple[int | None, list[Json]]:
    """Apply one logged step, through its typed `move` when it is a seat's move read already (a
    record's `Entry.move`); (the seat that moved, or None for the table; the events, the record's own
    included)."""
    if move is not None:
        return _apply_move(game, step, move)
    verb, payload = split(step)
    word, _, seat = verb.partition(" ")
    if word == "timeout" or word in HOWS:  # a timeout, an exit of the match (issue 37): the table's
        if not seat.isdigit() or not seat.isascii():
            raise RecordError(f"{word}: expected '{word} N', not {step!r}")
        return None, game.timeout(int(seat)) if word == "timeout" else game.end(word, int(seat))
    if not isinstance(game, Match):  # a round's steps are a matching game's
        if verb in ("new", "deal", "settle"):
            raise IllegalActionError(f"{verb}: not a Kingdomino move")
        player = game.to_move
        return player, game.apply(step)
    if verb == "deal":
        events = game.start_round(payload)
        rnd = game.round
        assert rnd is not None
        events.append({"type": DEALT, "hands": [_names(h) for h in rnd.hands], "boneyard": _boneyard(rnd)})
        return None, events
    if verb == "settle":
        if not isinstance(payload, dict):
            raise RecordError("settle: expected 'settle {\"ending\": ..., \"hands\": [...]}'")
        return None, game.settle(payload.get("ending"), payload.get("hands"), payload.get("last_placer"))
    if verb == "new":
        raise IllegalActionError("the match has already started")
    mover = game.to_move  # a step that names no move: the rules refuse it as they refuse any action
    return mover, _revealed(game, game.apply(step))


def _apply_move(game: Game, step: str, move: AnyMove) -> tuple[int | None, list[Json]]:
    """A seat's move (`step` as written, for the messages; the game refuses another kind's move); a
    matching round's end shows the hands."""
    mover = game.to_move
    events = game.apply_move(move, step)
    return mover, _revealed(game, events) if isinstance(game, Match) else events


def _revealed(game: Match, events: list[Json]) -> list[Json]:
    """`events`, the hands shown after them when the round ended with them."""
    rnd = game.round
    if rnd is not None and rnd.over:
        at = next((i for i, e in enumerate(events) if e["type"] == "round_ended"), len(events))
        events.insert(at + 1, {"type": REVEALED, "hands": [_names(h) for h in rnd.hands]})
    return events


def _names(mask: int) -> list[str]:
    return names(mask)


def _boneyard(rnd: Round) -> list[str]:
    return [NAMES[t] for t in reversed(rnd.boneyard)]


#: Events that only restate their move (its seat and step): the record leaves them out.
IMPLIED = frozenset({"played", "passed", "tile_picked", "tile_placed", "tile_discarded"})


def _seen_by(game: Game, events: list[Json], viewer: int | None, full: bool) -> list[Json]:
    """`events` as the record's viewer may see them (`Game.redact`; a matching deal's hands but the
    viewer's own hidden), without those that restate the move."""
    events = [e for e in events if e["type"] not in IMPLIED]
    if full:
        return events
    out = []
    for e in game.redact(events, viewer):
        if e["type"] == DEALT:
            if viewer is None:
                continue
            e = {"type": DEALT, "hands": [h if s == viewer else None for s, h in enumerate(e["hands"])]}
        out.append(e)
    return out


def _shown_step(step: str, full: bool) -> str:
    """The step as a partial view shows it: a deal's or a Kingdomino start's hidden tiles left out."""
    if full:
        return step
    verb, payload = split(step)
    if payload is not None and (verb == "deal" or (verb == "new" and ("tiles" in payload or "games" in payload))):
        return verb
    return step


# ---------------------------------------------------------------- export


def export(state: object, view: str = "full", names: list[str | None] | None = None,
           prior: object = None) -> Record:
    """The record of a state's match (a `Match`, a `Kingdomino` or a JSON state) as `view` sees it.

    A matching game's state keeps only its current round's log once a round has ended (rules/history.py):
    `prior` is then the entries that left it (the ``record_lines`` of the answers that ended the rounds,
    in order), checked exactly against the count and digest the state keeps before anything is replayed.
    A `Match` played in this process from its start needs none: it still holds them (`Match.shed`).
    """
    game = _game_of(state)
    count, digest = game.log_count, game.log_digest
    if prior is None and count and len(game.shed) == count:
        prior = game.shed  # a match played here from its start still holds what left its state
    try:
        earlier = check_prior(prior, count, digest)
    except RulesError as exc:
        raise RecordError(str(exc)) from None
    log = earlier + game.log
    if not log:
        raise IllegalActionError("this state carries no log of its match (a state written before states "
                                 "kept one, or a match longer than the log holds): no record can be written")
    viewer = _viewer(view, game.players)
    full = view == "full"
    variant = game.variant
    options = dict(game.options)
    try:
        replayed, events = _start(variant, game.players, options, game.seed, log[0])
        moves = [Entry(1, None, _shown_step(log[0], full), _seen_by(game, events, viewer, full))]
        for i, step in enumerate(log[1:], 2):
            move = step_move(variant, step)
            seat, events = _apply(replayed, step, move)
            moves.append(Entry(i, seat, _shown_step(step, full), _seen_by(game, events, viewer, full),
                               move=move))
    except RulesError as exc:
        raise RecordError(f"state.log does not replay: {exc}") from None
    replayed.bots = dict(game.bots)  # which seats the computer plays is the table's, not a move
    if _comparable(replayed.to_dict()) != _comparable(game.to_dict()):
        raise RecordError("state.log does not give this state back: the state was changed by hand")
    if names is not None and (len(names) != game.players
                              or not all(n is None or (isinstance(n, str) and len(n) <= 80) for n in names)):
        raise RecordError(f"names must list {game.players} names (strings of at most 80 characters, or null)")
    return Record(variant, game.players, options, view, game.seed if full else None, list(names or []),
                  game.result(), moves)


def _comparable(state: Json) -> Json:
    """A state without what only says how much of its log it keeps: the log (checked apart: it is what was
    replayed), and the score table's earlier rows (a state from before states kept the last row only
    holds them all)."""
    state = {k: v for k, v in state.items() if k not in ("log", "log_count", "log_digest")}
    ledger = state.get("ledger")
    if isinstance(ledger, dict) and "history" in ledger:
        state["ledger"] = {**ledger, "history": ledger["history"][-1:]}
    return state


# ---------------------------------------------------------------- replay


def replay(record: Record, upto: int | None = None) -> Game:
    """The match after move `upto` (all of them when None), every move checked on the way."""
    if record.view != "full":
        raise RecordError(f"a {record.view.split(' ')[0]}'s record lacks the hidden tiles a state holds: only a "
                          "full record replays (check reads the others)")
    if not record.moves:
        raise RecordError("a record holds at least its start (move 1: new)", 1)
    last = len(record.moves) if upto is None else upto
    if type(last) is not int or not 1 <= last <= len(record.moves):
        raise RecordError(f"upto must be a move 1..{len(record.moves)}")
    first = record.moves[0]
    try:
        game, events = _start(record.variant, record.players, record.options, record.seed, first.step)
    except RecordError as exc:
        raise RecordError(str(exc), 1, first.line) from None
    except RulesError as exc:
        raise refusal(str(exc), 1, first.line, _kind(exc)) from None
    _same_events(first, events)
    for move in record.moves[1:last]:
        _same_events(move, _replay_move(game, move))
    if upto is None and record.result != game.result():
        raise refusal(f"the result recorded, {record.result}, is not the one the moves reach, {game.result()}",
                          len(record.moves), None, "illegal")
    return game


def _replay_move(game: Game, move: Entry) -> list[Json]:
    """Play one recorded move after the start on `game` and return its events; a move made by
    another seat than the one recorded, or one the rules refuse, is refused naming its move and line."""
    expected = game.to_move if not _table_step(move.step) else None
    if move.seat != expected:
        raise refusal(f"{move.step}: recorded as {_who(move.seat)}'s, but it is {_who(expected)}'s move",
                      move.n, move.line, "illegal")
    try:
        _, events = _apply(game, move.step, move.move)
    except RecordError as exc:
        raise RecordError(str(exc), move.n, move.line) from None
    except RulesError as exc:
        raise refusal(f"{move.step}: {exc}", move.n, move.line, _kind(exc)) from None
    return events


def _table_step(step: str) -> bool:
    return step.split(" ", 1)[0] in TABLE_VERBS


def _who(seat: int | None) -> str:
    return "the table" if seat is None else f"S{seat}"


def _kind(exc: RulesError) -> str:
    return "illegal" if isinstance(exc, IllegalActionError) else "malformed"


def _same_events(move: Entry, events: list[Json]) -> None:
    """The events recorded (when the record gives any) must be those the move gave."""
    events = [e for e in events if e["type"] not in IMPLIED]
    if move.events and move.events != events:
        for i, (a, b) in enumerate(zip(move.events, events)):
            if a != b:
                raise refusal(f"{move.step}: event {i + 1} recorded as {a}, but the move gives {b}",
                                  move.n, move.line, "illegal")
        raise refusal(f"{move.step}: {len(move.events)} events recorded, the move gives {len(events)}",
                          move.n, move.line, "illegal")


# ---------------------------------------------------------------- check


def check(record: Record) -> None:
    """Refuse a record that is not valid (RecordError naming the first move that is not)."""
    if record.view == "full":
        replay(record)
        return
    _viewer(record.view, record.players)
    if record.seed is not None:
        raise RecordError(f"a {record.view}'s record shows no seed (it would give every hidden tile away)")
    if record.variant == KINGDOMINO:
        _check_partial_kingdomino(record)
    else:
        _check_partial_match(record)


def _check_partial_kingdomino(record: Record) -> None:
    """Kingdomino hides only the pile's order: a seat's or spectator's record replays on a deal made of
    the rows the record shows laid, in order (the rows still in the pile are never reached); a
    dynasty's games each on their own."""
    games: list[tuple[list[int], list[int]]] = []   # per game: kings, tiles of the rows laid in order
    for move in record.moves:
        for e in move.events:
            if e.get("seed") is not None:
                raise RecordError("a partial record shows no seed", move.n, move.line)
            if e.get("type") == "game_started" and isinstance(e.get("kings"), list):
                games.append((list(e["kings"]), []))
            if e.get("type") == "row_laid" and isinstance(e.get("tiles"), list) and games:
                games[-1][1].extend(e["tiles"])
    if not games:
        raise RecordError("a Kingdomino record starts with its game_started event", 1)
    try:
        cfg = config(record.players, record.options)
        deals = [_fit_deal(cfg.tiles, tiles, kings) for kings, tiles in games]
        if cfg.dynasty:
            deals += [deals[-1]] * (3 - len(deals))
            game, _ = Kingdomino.new(record.players, record.options, deal={"games": deals})
        else:
            game, _ = Kingdomino.new(record.players, record.options, deal=deals[0])
    except RulesError as exc:
        raise RecordError(f"the rows and kings shown are not a deal: {exc}", 1) from None
    for move in record.moves[1:]:
        _same_events(move, game.redact(_replay_move(game, move), None))


def _fit_deal(count: int, shown: list[int], kings: list[int]) -> Json:
    """The rows shown, completed with the other tiles of the set to the count this game plays with."""
    pool = [t for t in range(1, 49) if t not in shown]
    return {"tiles": (shown + pool)[:count], "kings": kings}


def _check_partial_match(record: Record) -> None:
    """A matching game's seat or spectator record: every step readable, each round's layout possible
    tile by tile, no tile placed twice, seats in range and the table's steps unseated."""
    try:
        _, family, _ = make_family(record.variant, record.players, record.options)
    except RulesError as exc:
        raise RecordError(str(exc)) from None
    if not record.moves or record.moves[0].step.split(" ", 1)[0] != "new":
        raise RecordError("the first move must be the start ('new')", 1)
    layout = None
    n = record.players
    held = [0] * n
    to_move: int | None = None
    for move in record.moves[1:]:
        if move.seat is not None and not 0 <= move.seat < record.players:
            raise RecordError(f"seat {move.seat}: the match has seats 0..{record.players - 1}", move.n, move.line)
        if _table_step(move.step):
            if move.seat is not None:
                raise RecordError(f"{move.step} is the table's, not a seat's", move.n, move.line)
            verb = move.step.split(" ", 1)[0]
            if verb == "deal":
                layout = family.new_layout()
                held = [family.hand_size] * n
                to_move = next((e.get("leader") for e in move.events if e["type"] == "round_dealt"), None)
            elif verb == "settle":
                layout = None
            continue
        if move.seat is None:
            raise RecordError(f"{move.step}: a seat's move needs its seat", move.n, move.line)
        if to_move is not None and move.seat != to_move:
            raise refusal(f"{move.step}: recorded as S{move.seat}'s, but it is S{to_move}'s move",
                              move.n, move.line, "illegal")
        if not isinstance(move.move, Move):  # a step that names no move: say why, as the notation does
            try:
                Move.parse(move.step)
            except RulesError as exc:
                raise RecordError(str(exc), move.n, move.line) from None
        assert isinstance(move.move, Move)
        kind, placements = move.move
        seat = move.seat
        held[seat] += len(placements) and -len(placements) or (1 if kind == DRAW else 0)
        if any(e["type"] == "round_ended" for e in move.events):
            to_move = None
        elif kind != DRAW and to_move is not None:
            nxt = (seat + 1) % n
            while held[nxt] <= 0 and nxt != seat:
                nxt = (nxt + 1) % n
            to_move = nxt
        if not placements:
            continue
        if layout is None:
            raise refusal(f"{move.step}: no round is being played", move.n, move.line, "illegal")
        try:
            for placed in placements:
                _place(layout, placed)
        except RulesError as exc:
            raise refusal(f"{move.step}: {exc}", move.n, move.line, "illegal") from None


def _place(layout: Layout, placed: tuple[int, int, bool]) -> None:
    tile, arm, flag = placed
    if layout.on_table >> tile & 1:
        raise IllegalActionError(f"{NAMES[tile]} is already on the table")
    if not layout.placements:
        layout.lead(tile, flag)
    else:
        layout.attach(tile, arm, flag)


__all__ = ["DEALT", "IMPLIED", "REVEALED", "check", "export", "replay"]
