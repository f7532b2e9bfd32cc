"""Match records (issue 18, docs/records.md): properties over random matches of every variant.

- export, both forms, import and replay give the state back exactly, after every move;
- a seat's record never holds a tile that seat could not have seen (its own hand and draws, the
  tiles on the table, and the hands shown when a round ends), a spectator's no hidden tile before a
  round ends, and neither shows the seed;
- every kind of corruption (a changed tile, a missing move, a swapped seat, a truncated file) is
  refused, naming the move.
"""
from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_service import records as R
from engine_service.records.model import RecordError
from engine_service.rules import PRESETS, Kingdomino, Match, RulesError
from tests.variants.test_properties import CONFIGS as MATCH_CONFIGS

CONFIGS: list[tuple[str, int, dict[str, Any]]] = (
    [(name, n, {}) for name, p in PRESETS.items() for n in (p.min_players, p.max_players)]
    + MATCH_CONFIGS[3::4]
    + [("kingdomino", n, {}) for n in (2, 3, 4)]
    + [("kingdomino", 2, {"mighty_duel": True, "harmony": True}), ("kingdomino", 4, {"middle_kingdom": True}),
       ("kingdomino", 3, {"dynasty": True}), ("kingdomino", 2, {"dynasty": True})]
)
IDS = [f"{v}-{n}-" + "-".join(sorted(o)) for v, n, o in CONFIGS]

Game = Match | Kingdomino


def play(variant: str, players: int, options: dict[str, Any], seed: int, rounds: int = 2,
         timeout: bool = False) -> Game:
    """A seeded random match: `rounds` rounds (a whole Kingdomino game), maybe ended by a timeout."""
    rng = random.Random(seed)
    if variant == "kingdomino":
        game, _ = Kingdomino.new(players, options, seed=seed)
        stop = rng.randrange(200) if timeout else None
        while not game.game_over:
            if stop is not None and stop == 0:
                game.timeout(rng.randrange(players))
                break
            stop = None if stop is None else stop - 1
            game.apply(rng.choice(game.legal_actions()))
        return game
    match, _ = Match.new(variant, players, options, seed=seed)
    for r in range(rounds):
        while match.legal_actions():
            match.apply(rng.choice(match.legal_actions()))
        if match.match_over or r == rounds - 1:
            break
        match.start_round()
    if timeout and not match.match_over:
        try:
            match.timeout(rng.randrange(players))
        except RulesError:
            pass  # no timeout rule in this variant
    return match


def _roundtrip(record: R.Record) -> R.Record:
    text = R.to_text(record)
    back = R.from_text(text)
    assert back == record and R.to_text(back) == text
    as_json = json.loads(json.dumps(R.to_json(record)))
    assert R.from_json(as_json) == record
    assert R.parse(json.dumps(as_json)) == record
    return back


@pytest.mark.parametrize(("variant", "players", "options"), CONFIGS, ids=IDS)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**63 - 1), timeout=st.booleans())
def test_export_import_and_replay_give_the_state_back(variant: str, players: int, options: dict[str, Any],
                                                       seed: int, timeout: bool) -> None:
    game = play(variant, players, options, seed, timeout=timeout)
    # The state keeps its current round's log; the finished rounds' lines left it (Match.shed, the
    # answers' record_lines) and are given back as `prior` (issue 27).
    record = _roundtrip(R.export(game.to_dict(), prior=game.shed))
    assert R.replay(record).to_dict() == game.to_dict()
    R.check(record)
    # replay to the state after any move: the same as the log's prefix played by the rules
    n = random.Random(seed).randrange(1, len(record.moves) + 1)
    after = R.replay(record, n)
    assert after.shed + after.log == (game.shed + game.log)[:n]
    assert R.export(after).moves == record.moves[:n]
    for view in ["spectator"] + [f"seat {s}" for s in range(players)]:
        partial = _roundtrip(R.export(game, view))
        R.check(partial)
        assert [m.step.split(" ")[0] for m in partial.moves] == [m.step.split(" ")[0] for m in record.moves]


TILE = re.compile(r'"([0-6]-[0-6])"')


def _tiles(value: Any) -> set[str]:
    return set(TILE.findall(json.dumps(value)))


@pytest.mark.parametrize(("variant", "players", "options"), [c for c in CONFIGS if c[0] != "kingdomino"],
                         ids=[i for c, i in zip(CONFIGS, IDS) if c[0] != "kingdomino"])
@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**63 - 1))
def test_no_partial_record_holds_a_tile_its_viewer_could_not_have_seen(
        variant: str, players: int, options: dict[str, Any], seed: int) -> None:
    game = play(variant, players, options, seed, rounds=3)
    full = R.export(game)
    for viewer in [None, *range(players)]:
        record = R.export(game, "spectator" if viewer is None else f"seat {viewer}")
        assert record.seed is None
        seen: set[str] = set()      # what the viewer has seen of this round so far
        for move, whole in zip(record.moves, full.moves):
            verb = whole.step.split(" ")[0]
            if verb in ("deal", "settle"):
                seen = set()
            if verb == "deal" and viewer is not None:
                dealt = next(e for e in whole.events if e["type"] == "dealt")
                seen |= set(dealt["hands"][viewer])
            if verb == "settle":
                seen |= _tiles(whole.step)                                # hands declared at the table
            seen |= _tiles(whole.step) if whole.seat is not None else set()   # tiles played
            for e in whole.events:
                if e["type"] == "drew" and e["seat"] == viewer:
                    seen.add(e["tile"])
                if e["type"] == "revealed":
                    seen |= _tiles(e["hands"])
            shown = _tiles(move.step) | _tiles(move.events)
            assert shown <= seen, (record.view, move, shown - seen)


@pytest.mark.parametrize("players", [2, 4])
def test_no_partial_kingdomino_record_shows_the_pile(players: int) -> None:
    game, _ = Kingdomino.new(players, deal=None, seed=11)
    rng = random.Random(1)
    while not game.game_over:
        game.apply(rng.choice(game.legal_actions()))
    for view in ["spectator", "seat 0"]:
        record = R.export(game, view)
        assert record.seed is None and record.moves[0].step == "new"
        assert all(e.get("seed") is None for m in record.moves for e in m.events)


# ---------------------------------------------------------------- corruption


def _refused(text: str) -> RecordError:
    with pytest.raises(RecordError) as caught:
        R.check(R.parse(text))
    assert caught.value.move is not None, str(caught.value)
    return caught.value


def _move_lines(text: str) -> list[int]:
    return [i for i, line in enumerate(text.split("\n")) if re.match(r"\d+\. ", line)]


@pytest.mark.parametrize(("variant", "players", "options"), CONFIGS[::2], ids=IDS[::2])
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**63 - 1), pick=st.integers(0, 10**6), view=st.sampled_from(["full", "seat 0"]))
def test_every_kind_of_corruption_is_refused_naming_the_move(variant: str, players: int, options: dict[str, Any],
                                                             seed: int, pick: int, view: str) -> None:
    game = play(variant, players, options, seed)
    record = R.export(game, view)
    text = R.to_text(record)
    lines = text.split("\n")
    moves = _move_lines(text)
    R.check(R.parse(text))
    # a missing move
    k = moves[1 + pick % (len(moves) - 1)]
    n = int(lines[k].split(".")[0])
    end = k + 1
    while end < len(lines) and lines[end].startswith("    "):
        end += 1
    error = _refused("\n".join(lines[:k] + lines[end:]))
    assert error.move == n and ("missing" in str(error) or "truncated" in str(error))
    # a truncated file, cut anywhere in its move text
    start, stop = text.index("\n1. "), text.rindex("\n*")   # anywhere before the end marker
    cut = stop - pick % (stop - start)
    error = _refused(text[:cut])
    # a swapped seat
    seated = [i for i in moves if re.match(r"\d+\. S\d", lines[i])]
    if seated:
        k = seated[pick % len(seated)]
        seat = int(re.match(r"\d+\. S(\d+)", lines[k]).group(1))  # type: ignore[union-attr]
        swapped = lines.copy()
        swapped[k] = re.sub(r"\. S\d+", f". S{(seat + 1) % players}", lines[k], count=1)
        error = _refused("\n".join(swapped))
        if view == "full":
            assert error.move == int(lines[k].split(".")[0])
    # a changed tile (full records: in a step or an event; the move named is that one or a later one
    # whose events the change contradicts)
    if view == "full" and variant != "kingdomino":
        spots = [(i, m.start()) for i, line in enumerate(lines) if i > moves[0] for m in TILE.finditer(line)]
        spots += [(i, m.start()) for i in moves for m in re.finditer(r" [0-6]-[0-6]", lines[i])]
        i, at = spots[pick % len(spots)]
        changed = lines.copy()
        old = changed[i][at + 1:at + 4]
        new = f"{old[0]}-{(int(old[2]) + 1 + pick % 6) % 7}" if old[0] != old[2] else f"{old[0]}-{(int(old[0]) + 1) % 7}"
        changed[i] = changed[i][:at + 1] + new + changed[i][at + 4:]
        owner = max(j for j in moves if j <= i)
        error = _refused("\n".join(changed))
        assert error.move is not None and error.move >= int(lines[owner].split(".")[0])


def test_a_state_changed_by_hand_exports_no_record() -> None:
    match = play("block", 2, {}, 3)
    state = match.to_dict()
    state["ledger"]["scores"] = [s + 1 for s in state["ledger"]["scores"]]
    with pytest.raises(RecordError, match="does not give this state back"):
        R.export(state, prior=match.shed)


def test_a_state_without_a_log_exports_no_record() -> None:
    state = play("block", 2, {}, 3).to_dict()
    state["log"] = []
    state.pop("log_count", None)
    state.pop("log_digest", None)
    with pytest.raises(RulesError, match="no log"):
        R.export(state)


def test_a_state_keeps_its_current_round_and_takes_back_only_the_lines_that_left_it() -> None:
    """Issue 27: once a round has ended, the state holds the current round's entries, the count and the
    digest of those that left; a record needs them back exactly (`prior`), and a state from before (its
    log whole) still exports without them."""
    match = play("kozel", 4, {}, 11)
    state = match.to_dict()
    assert state["log_count"] == len(match.shed) > 0 and not any(line.startswith("new") for line in state["log"])
    whole = R.export(state, prior=match.shed)
    with pytest.raises(RecordError, match="prior: required"):
        R.export(state)
    with pytest.raises(RecordError, match="lines, but"):
        R.export(state, prior=match.shed[:-1])
    swapped = match.shed.copy()
    swapped[-1], swapped[-2] = swapped[-2], swapped[-1]
    with pytest.raises(RecordError, match="digest differs"):
        R.export(state, prior=swapped)
    # a state from before: the whole log, no count (its last rows of the score table all there)
    before = {k: v for k, v in state.items() if k not in ("log_count", "log_digest")}
    before["log"] = match.shed + match.log
    assert R.export(before).moves == whole.moves
    with pytest.raises(RecordError, match="whole"):
        R.export(before, prior=match.shed)
    # a state's log that claims to be whole but does not start the match is refused as it is read
    with pytest.raises(RulesError, match="match's start"):
        Match.from_dict({**{k: v for k, v in state.items() if k not in ("log_count", "log_digest")}, "log": ["deal"]})


def test_a_partial_record_does_not_replay() -> None:
    with pytest.raises(RecordError, match="only a full record replays"):
        R.replay(R.export(play("kozel", 4, {}, 5), "seat 2"))


def test_a_hand_written_record_without_events_replays() -> None:
    text = ('[Record "domino-record 1"]\n[Variant "block"]\n[Players "2"]\n[Options "{}"]\n[View "full"]\n'
            '[Seed "-"]\n[Names "[\\"Ann\\", \\"Bob\\"]"]\n[Moves "4"]\n[Result "null"]\n\n'
            '; a deal by hand, then two moves\n'
            '1. - new\n'
            '2. - deal {"hands": [["0-0","0-1","0-2","0-3","0-4","0-5","0-6"], '
            '["1-1","1-2","1-3","1-4","1-5","1-6","2-2"]]}\n'
            '3. S0 0-1\n4. S1 1-1@E\n*\n')
    match = R.replay(R.parse(text))
    assert isinstance(match, Match) and [p for p in match.to_dict()["round"]["layout"]] == ["0-1", "1-1@E"]
    bad = text.replace("4. S1 1-1@E", "4. S1 2-2@E")
    error = _refused(bad)
    assert (error.move, error.line, error.kind) == (4, 15, "illegal")
