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
