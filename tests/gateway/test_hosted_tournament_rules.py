"""The hosted tournaments' pure rules (docs/tournaments.md), without a gateway: Swiss pairing (no repeats,
searching back, repeats only when nothing else is left, the bye), a Swiss match's result from its last events,
a Bykovo round's outcome and a forfeit's points, invites and names."""
from __future__ import annotations

from typing import Any

import orjson
import pytest

from api_gateway.hosting import tournament_records as records
from api_gateway.hosting import tournament_swiss as swiss
from api_gateway.http.problems import TableRefused

Json = dict[str, Any]


def sheet(points: list[float], met: list[list[int]] | None = None, byes: list[int] | None = None) -> Json:
    return {"rounds": 5, "points": points, "met": met or [[] for _ in points], "byes": byes or []}


def line(*events: Json) -> bytes:
    return orjson.dumps({"seq": 1, "events": list(events)})


def test_round_one_pairs_the_order_top_down() -> None:
    assert swiss.pair(sheet([0.0] * 6), list(range(6))) == ([[0, 1], [2, 3], [4, 5]], None)


def test_pairs_follow_points_then_buchholz_and_never_repeat_while_they_can() -> None:
    # after round 1 (0-1, 2-3, 4-5; 0, 2, 4 won): the winners meet first, each not its first opponent
    s = sheet([1.0, 0.0, 1.0, 0.0, 1.0, 0.0], [[1], [0], [3], [2], [5], [4]])
    assert swiss.pair(s, list(range(6))) == ([[0, 2], [4, 1], [3, 5]], None)


def test_pairing_searches_back_when_the_greedy_choice_strands_two_who_met() -> None:
    # greedy 0-1 would leave 2 and 3, who met: 0-2 and 1-3 instead... unless 1 and 3 met too: then 0-3, 1-2
    s = sheet([3.0, 2.0, 1.0, 0.0], [[], [3], [3], [1, 2]])
    assert swiss.pair(s, [0, 1, 2, 3]) == ([[0, 3], [1, 2]], None)


def test_when_every_pairing_repeats_the_rest_are_paired_in_ranking_order() -> None:
    s = sheet([1.0, 1.0], [[1], [0]])
    assert swiss.pair(s, [0, 1]) == ([[0, 1]], None)


def test_the_bye_goes_to_the_lowest_ranked_without_one() -> None:
    s = sheet([2.0, 1.0, 1.0, 0.0, 0.0], byes=[4])
    pairs, bye = swiss.pair(s, list(range(5)))
    assert bye == 3 and sorted(p for pair in pairs for p in pair) == [0, 1, 2, 4]
    everyone_had_one = sheet([0.0, 0.0, 0.0], byes=[0, 1, 2])
    assert swiss.pair(everyone_had_one, [0, 1, 2])[1] == 2  # then the lowest ranked


def test_a_match_result_from_its_last_events() -> None:
    assert swiss.match_result([line({"type": "played", "seat": 0})]) is None
    assert swiss.match_result([line({"type": "match_ended", "losers": [1], "winners": [], "rating": []})]) == [1, 0]
    assert swiss.match_result([line({"type": "match_ended", "losers": [], "winners": [1]})]) == [0, 1]
    assert swiss.match_result([line({"type": "match_ended", "losers": [], "winners": []})]) == [0.5, 0.5]
    assert swiss.match_result([line({"type": "match_ended", "losers": [0, 1], "winners": []})]) == [0.5, 0.5]
    resigned = line({"type": "resigned", "seat": 1}, {"type": "match_ended", "losers": [1], "winners": []})
    assert swiss.match_result([resigned]) == [1, 0]
    assert swiss.match_result([line({"type": "aborted", "seat": 0},
                                    {"type": "match_ended", "losers": [], "winners": []})]) == [0, 1]


def test_standings_rank_by_points_then_buchholz_then_order() -> None:
    s = sheet([1.0, 1.0, 0.0, 2.0], [[2], [3], [0], [1]])
    ranked = swiss.standings(s, ["A", "B", "C", "D"], over=True)
    assert [e["index"] for e in ranked] == [3, 1, 0, 2]  # B met D (2 points), A met C (0)
    assert [e["buchholz"] for e in ranked] == [1.0, 2.0, 0.0, 1.0]
    assert [e["official"] for e in ranked] == [True, True, True, False]


def test_a_bykovo_rounds_outcome_is_its_first_round_or_the_exit_that_came_first() -> None:
    ended = {"type": "round_ended", "record": {"round_points": [4, 0, 12, 9], "winner": 1}}
    assert records.round_outcome([line({"type": "played", "seat": 0}), line(ended)]) == \
        records.Outcome(points=[4, 0, 12, 9], winner=1)
    later = line({"type": "aborted", "seat": 1})  # the tournament closing the recorded round's table
    assert records.round_outcome([line(ended), later]) == records.Outcome(points=[4, 0, 12, 9], winner=1)
    assert records.round_outcome([line({"type": "gone", "seat": 3})]) == records.Outcome(forfeit=3)
    assert records.round_outcome([line({"type": "played", "seat": 0})]) is None


def test_a_forfeit_takes_the_leaver_to_the_limit_and_the_lowest_total_wins() -> None:
    engine = {"totals": [10, 30, 30, 5, 50], "limit": 75}
    # players 0, 1, 2, 4 at seats 0-3; seat 1 (participant 1) forfeits
    assert records.forfeit_points(engine, [0, 1, 2, 4], 1) == ([0, 45, 0, 0], 0)
    # equal totals: the earlier in the order
    assert records.forfeit_points({"totals": [20, 20, 20, 20], "limit": 100}, [0, 1, 2, 3], 0) == \
        ([80, 0, 0, 0], 1)


def state(size: int = 4, public: bool = False) -> tuple[Json, list[str]]:
    return records.new_state("t" * 32, {"size": size, "public": public}, "t" * 32 + ".host.x", 0.0)


def test_invites_are_single_use_and_names_are_told_apart() -> None:
    s, codes = state()
    records.take_invite(s, {"invite": codes[0].lower()})  # as typed
    with pytest.raises(TableRefused) as spent:
        records.take_invite(s, {"invite": codes[0]})
    assert spent.value.name == "invalid-invite"
    with pytest.raises(TableRefused) as private:
        records.take_invite(s, {})
    assert private.value.name == "invite-required"
    names = [records.add_person(s, "Anna", f"guest:{i}") and s["people"][-1]["name"] for i in range(3)]
    assert names == ["Anna", "Anna (2)", "Anna (3)"]
    with pytest.raises(TableRefused) as twice:
        records.add_person(s, "Boris", "guest:0")
    assert twice.value.name == "seat-held"


@pytest.mark.parametrize(("body", "field"), [
    ({"size": 3}, "size"), ({"size": 8}, "size"), ({"size": 5, "variant": "kozel"}, "variant"),
    ({"size": 5, "rounds": 2}, "rounds"), ({"size": 8, "format": "swiss", "variant": "kozel"}, "rounds"),
    ({"size": 8, "format": "swiss", "rounds": 2}, "variant"), ({"size": 65, "format": "swiss", "variant": "kozel",
                                                               "rounds": 2}, "size"),
    ({"size": 5, "format": "arena"}, "format"),
])
def test_a_tournament_that_cannot_be_hosted_names_its_field(body: Json, field: str) -> None:
    with pytest.raises(TableRefused) as refused:
        records.new_state("t" * 32, body, "h", 0.0)
    assert (refused.value.name, refused.value.field) == ("malformed", field)


def test_a_tournament_stream_sends_each_version_once_keeps_alive_and_stops_at_a_shutdown() -> None:
    """`TournamentStreams` over a scripted row: the first view, nothing while the version stands (keepalives),
    the next version, and `closed` {shutdown} once stopped; over its cap a stream is refused."""
    from api_gateway.archive.hosted import TournamentRow
    from api_gateway.hosting.tournament_stream import TournamentStreams
    from api_gateway.http.problems import StreamRefused

    base, _ = state()
    rows = [TournamentRow("t" * 32, 1, base), TournamentRow("t" * 32, 1, base),
            TournamentRow("t" * 32, 2, {**base, "name": "later"})]
    streams = TournamentStreams(cap=1, poll=0.001, keepalive=0.0)
    lines = streams.open(lambda: rows.pop(0) if len(rows) > 1 else rows[0], None)
    with pytest.raises(StreamRefused):
        streams.open(lambda: rows[0], None)
    first = next(lines)
    assert first.startswith(b"event: tournament\nid: 1\n") and b'"version":1' in first
    assert next(lines) == b": keepalive\n\n"
    assert next(lines).startswith(b"event: tournament\nid: 2\n")
    streams.stop()
    rest = list(lines)
    assert rest[-1] == b'event: closed\ndata: {"reason":"shutdown"}\n\n'
    assert streams._open == 0  # its place given back


# ---------------------------------------------------------------- Swiss at tables of four


def four(points: list[float], met: list[list[int]] | None = None, byes: list[int] | None = None,
         sides: int = 4) -> Json:
    return {**sheet(points, met, byes), "seats": 4, "sides": sides}


def test_tables_of_four_group_by_standing_top_four_first() -> None:
    s = four([0.0, 3.0, 1.0, 2.0, 0.0, 3.0, 2.0, 1.0])
    # ranked: 1, 5 (3 points), 3, 6 (2), 2, 7 (1), 0, 4 (0)
    assert swiss.seat_round(s, list(range(8))) == ([[1, 5, 3, 6], [2, 7, 0, 4]], [])


def test_tables_of_four_avoid_repeat_tablemates_where_they_can() -> None:
    # sixteen after round 1 (0-3, 4-7, 8-11, 12-15 together; each table 3, 2, 1, 0): each round-2 table takes one
    # from every round-1 table, by standing
    met = [[o for o in range(16) if o // 4 == p // 4 and o != p] for p in range(16)]
    s = four([3.0, 2.0, 1.0, 0.0] * 4, met)
    assert swiss.seat_round(s, list(range(16))) == \
        ([[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]], [])
    # the top four, but 0 and 1 sat together: the best ranked who did not joins 0 instead of 1
    met = [[1], [0]] + [[] for _ in range(6)]
    s = four([7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 0.0], met)
    assert swiss.seat_round(s, list(range(8))) == ([[0, 2, 3, 4], [1, 5, 6, 7]], [])


def test_when_repeats_cannot_be_avoided_the_fewest_then_the_best_ranked() -> None:
    # eight people after round 1 (0-3 and 4-7 together): any table of four repeats at least two pairs
    met = [[o for o in range(4) if o != p] for p in range(4)] + [[o for o in range(4, 8) if o != p]
                                                                 for p in range(4, 8)]
    s = four([3.0, 2.0, 1.0, 0.0, 3.0, 2.0, 1.0, 0.0], met)
    # ranked: 0, 4 (3 points; Buchholz equal), 1, 5, 2, 6, 3, 7: two of each first table
    assert swiss.seat_round(s, list(range(8))) == ([[0, 4, 1, 5], [2, 6, 3, 7]], [])


def test_tables_of_four_are_the_stated_rule_tried_combination_by_combination() -> None:
    """The seating's cut walk answers what trying every three for every table in turn answers (random
    histories, a fixed seed)."""
    import random
    from itertools import combinations

    rng = random.Random(41)
    for _ in range(300):
        n = rng.choice([8, 12, 13, 16])
        met: list[list[int]] = [[] for _ in range(n)]
        for _ in range(rng.randint(0, 3 * n)):
            a, b = rng.sample(range(n), 2)
            met[a].append(b)
            met[b].append(a)
        s = four([float(rng.randint(0, 6)) for _ in range(n)], met)
        ranked = swiss.ranking(s, list(range(n)))[:n - n % 4]
        expected = []
        while ranked:
            head, rest = ranked[0], ranked[1:]
            three = min(combinations(rest, 3), key=lambda c: (
                sum(1 for a, b in combinations((head, *c), 2) if b in met[a]), [rest.index(p) for p in c]))
            expected.append([head, *three])
            ranked = [p for p in rest if p not in three]
        s["byes"] = list(range(n))  # everyone had one: the byes are the lowest ranked
        assert swiss.seat_round(s, list(range(n)))[0] == expected


def test_the_leftover_lowest_ranked_without_a_bye_sit_out() -> None:
    s = four([5.0, 4.0, 3.0, 2.0, 1.0, 0.0, 0.5], byes=[5])
    tables, byes = swiss.seat_round(s, list(range(7)))
    assert byes == [6, 4, 3]  # the lowest ranked first (6 has 0.5, 5 had a bye), then up
    assert tables == [[0, 1, 2, 5]]


def test_a_tables_points_by_place_free_for_all_and_pairs() -> None:
    # four alone (Kozel): the goat last, the others by rating points
    ffa = swiss.table_points(4, 4, [], [2], [5, 9, -3, 9])
    assert ffa == [1.0, 2.5, 0.0, 2.5]
    assert swiss.table_points(4, 4, [3], [], []) == [1.0, 1.0, 1.0, 3.0]
    # a pair game: the winning pair's seats 1 each
    assert swiss.table_points(4, 2, [1], [0], []) == [0.0, 1.0, 0.0, 1.0]
    assert swiss.table_points(4, 2, [], [], []) == [0.5] * 4
    # an exit places the leaver's side last, whatever the match says
    assert swiss.table_points(4, 4, [0], [], [], exited=0) == [0.0, 2.0, 2.0, 2.0]
    assert swiss.table_points(4, 2, [], [], [], exited=3) == [1.0, 0.0, 1.0, 0.0]
    timed_out = line({"type": "timed_out", "seat": 2}, {"type": "match_ended", "losers": [2], "winners": [],
                                                        "rating": [0, 0, 0, 0]})
    assert swiss.match_result([timed_out], 4, 4) == [2.0, 2.0, 0.0, 2.0]
    assert swiss.forfeited(four([0.0] * 4), 0) == [0.0, 2.0, 2.0, 2.0]


def test_a_round_at_tables_of_four_and_its_byes_into_the_points() -> None:
    s = swiss.started({"rounds": 3, "seats": 4, "sides": 4}, 5)
    swiss.record(s, [[0, 1, 2, 3]], [[3.0, 2.0, 1.0, 0.0]], [4])
    assert s["points"] == [3.0, 2.0, 1.0, 0.0, 3.0]  # a bye: a match won, 3 at four alone
    assert s["met"][0] == [1, 2, 3] and s["met"][4] == [] and s["byes"] == [4]
    assert swiss.buchholz(s, 3) == 6.0
    ranked = swiss.standings(s, list("ABCDE"), over=False)
    assert [e["index"] for e in ranked] == [0, 4, 1, 2, 3]  # 0 and 4 level: 0's Buchholz 3, 4's none
    assert swiss.bye_points({"seats": 4, "sides": 2}) == 1.0


@pytest.mark.parametrize(("body", "field"), [
    ({"size": 8, "format": "swiss", "variant": "kozel", "rounds": 2, "players": 3}, "players"),
    ({"size": 3, "format": "swiss", "variant": "kozel", "rounds": 2, "players": 4}, "size"),
    ({"size": 5, "players": 2}, "players"),
])
def test_a_swiss_at_tables_of_four_that_cannot_be_hosted_names_its_field(body: Json, field: str) -> None:
    with pytest.raises(TableRefused) as refused:
        records.new_state("t" * 32, body, "h", 0.0)
    assert (refused.value.name, refused.value.field) == ("malformed", field)


# ---------------------------------------------------------------- the keeper's log


def test_the_keeper_logs_the_archive_going_down_and_coming_back_once_each(
        caplog: pytest.LogCaptureFixture) -> None:
    """A database that does not answer (or is at an older schema) is said once, not at every pass; its return
    once; and a new fall once again."""
    from types import SimpleNamespace

    from api_gateway.archive.database import ArchiveUnavailable
    from api_gateway.hosting.tournament_host import IDLE_PERIOD, HostedTournaments

    answers: list[Any] = [ArchiveUnavailable("revision none"), ArchiveUnavailable("revision none"),
                          ArchiveUnavailable("revision none"), [], [], ArchiveUnavailable("gone"), []]

    class Rows:
        def active(self) -> list[str]:
            answer = answers.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return list(answer)

    archive = SimpleNamespace(repository=SimpleNamespace(engine=None))
    hosted = HostedTournaments(SimpleNamespace(), archive, clock=lambda: 100.0)  # type: ignore[arg-type]
    hosted.rows = Rows()  # type: ignore[assignment]
    with caplog.at_level("DEBUG", logger="api_gateway.hosting.tournaments"):
        for _ in range(7):
            hosted.advance_due()
    said = [r.getMessage() for r in caplog.records]
    assert said == ["tournaments: the archive database does not answer: revision none",
                    "tournaments: the archive database answers again",
                    "tournaments: the archive database does not answer: gone",
                    "tournaments: the archive database answers again"]
    assert hosted.next_pass() == 100.0 + IDLE_PERIOD  # no tournament played: the keeper looks seldom


def test_a_start_wakes_the_keeper_that_looks_seldom_while_nothing_is_played(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no tournament played the worker's keeper looks every `IDLE_PERIOD` (30 s); a start in this worker
    (`wake`, as `start` calls it) has it pass within its playing period instead."""
    import threading
    import time
    from types import SimpleNamespace

    from flask import Flask

    from api_gateway.hosting import tournament_host as host

    passes: list[float] = []
    passed = threading.Event()

    def advance_due(self: host.HostedTournaments) -> int:
        passes.append(time.monotonic())
        self._playing = False   # the look found nothing played
        passed.set()
        return 0

    class Watching:
        usable = True

        def add(self, listener: object) -> None:
            pass

        def watch(self, key: str) -> None:
            pass

    monkeypatch.setattr(host.HostedTournaments, "advance_due", advance_due)
    app = Flask(__name__)
    archive = SimpleNamespace(repository=SimpleNamespace(engine=None))
    host.install(app, SimpleNamespace(), archive, object(), Watching())
    hosted: host.HostedTournaments = app.extensions[host.HOSTED]
    keeper = hosted.wake.__self__  # type: ignore[attr-defined]  # the keeper's poke_all
    try:
        assert passed.wait(5)                     # the first look, at once after the start of the worker
        passed.clear()
        assert not passed.wait(1.0)               # then nothing played: no look for IDLE_PERIOD
        woken = time.monotonic()
        hosted._playing = True
        hosted.wake()
        assert passed.wait(host.PERIOD + 2.0)
        assert len(passes) == 2 and passes[1] - woken < host.PERIOD + 1.0
    finally:
        keeper.stop()
