"""Swiss at tables of four (issue 41, docs/tournaments.md "Swiss"), against real gunicorn gateways, a real
engine, one Redis and one database: nine people play a Swiss of Kozel for four (each match one round long:
target 1) to its end across two gateways, one of them leaving mid-tournament; every round's tables and byes are
checked against the test's own grouping by standing (`Sheet`: its own ranking from the points it gave each
table, not the code under test), every table's points against the test's reading of the match's archived
result; the final standings are read back from the archive (the players' pages). A Swiss of Osel in pairs
(seats 0+2 against 1+3): the winning pair's seats win."""
from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from bench.redis_server import RedisServer

from .conftest import PLAYER_KEYS, EngineProc, Gateway, gateway_env, launch_gateway, wait_for
from .test_hosted_tournament import HOSTED, Person, first_move, join_all, open_tournament
from .test_tables import call, ok

pytestmark = pytest.mark.service

Json = dict[str, Any]


@dataclass
class Sheet:
    """A Swiss at tables of four as docs/tournaments.md states it, kept by the test from what the matches say."""

    n: int
    sides: int
    points: list[float] = field(default_factory=list)
    met: list[list[int]] = field(default_factory=list)
    byes: list[int] = field(default_factory=list)
    rounds: int = 0

    def __post_init__(self) -> None:
        self.points, self.met = [0.0] * self.n, [[] for _ in range(self.n)]

    def key(self, p: int) -> tuple[float, float, int]:
        """Points, then Buchholz (the tablemates' points, every table sat at), then the order of joining."""
        return (-self.points[p], -sum(self.points[o] for o in self.met[p]), p)

    def ranking(self, players: list[int]) -> list[int]:
        return sorted(players, key=self.key)

    def seating(self, players: list[int]) -> tuple[list[list[int]], list[int]]:
        """The round's tables and byes: the leftover lowest ranked without a bye sit out; then table by table
        from the top, the best ranked left with the three that repeat the fewest pairs (ties: better ranked)."""
        ranked = self.ranking(players)
        byes = []
        for _ in range(len(ranked) % 4):
            without = [p for p in ranked if p not in self.byes]
            byes.append(without[-1] if without else ranked[-1])
            ranked.remove(byes[-1])
        tables = []
        while ranked:
            head, rest = ranked[0], ranked[1:]

            def cost(three: tuple[int, ...], head: int = head, rest: list[int] = rest) -> tuple[int, list[int]]:
                table = (head, *three)
                again = sum(1 for a in table for b in table if a < b and b in self.met[a])
                return again, [rest.index(p) for p in three]

            best = min(combinations(rest, 3), key=cost)
            tables.append([head, *best])
            ranked = [p for p in rest if p not in best]
        return tables, byes

    def table_points(self, result: Json, exited: int | None) -> list[float]:
        """Each seat's points: its side's place (winners, then neither, then losers; the rating points, more
        first; the side of a seat that left last), 1 for every side behind, 1/2 for every side level."""
        def rank(side: int) -> tuple[int, int]:
            rating = sum(r for s, r in enumerate(result.get("rating") or []) if s % self.sides == side)
            group = (3 if exited is not None and exited % self.sides == side else
                     0 if side in result["winners"] else 2 if side in result["losers"] else 1)
            return group, -rating

        side_points = [sum(1.0 if rank(o) > rank(side) else 0.5 if rank(o) == rank(side) else 0.0
                           for o in range(self.sides) if o != side) for side in range(self.sides)]
        return [side_points[s % self.sides] for s in range(4)]

    def record(self, tables: list[list[int]], results: list[list[float]], byes: list[int]) -> None:
        for table, points in zip(tables, results, strict=True):
            for p, got in zip(table, points, strict=True):
                self.points[p] += got
                self.met[p] += [o for o in table if o != p]
        for p in byes:
            self.points[p] += self.sides - 1  # a bye: a match won
            self.byes.append(p)
        self.rounds += 1


def archived_result(gw: Gateway, match_id: str) -> Json:
    """A table's match as the archive keeps it (written as it ended): its result."""
    def read() -> Json | None:
        reply = call(gw, "GET", f"/v1/matches/{match_id}/record")
        return reply.json["result"] if reply.status == 200 else None
    found: Json = wait_for(read, 30)
    return found


def play_swiss(gws: list[Gateway], tid: str, people: list[Person], sheet: Sheet,
               leave: tuple[int, int] | None = None, deadline: float = 180.0) -> Json:
    """Everyone plays their table's match (first legal move) to the Swiss's end. Each round, when seated: the
    standings before it and its tables and byes checked against `sheet`; when recorded: each table's points
    from its match's archived result. `leave`: (round, participant) who leaves the tournament in that round."""
    turn = [0]

    def gw() -> Gateway:
        turn[0] += 1
        return gws[turn[0] % len(gws)]

    left: set[int] = set()
    exits: dict[str, int] = {}  # match_id -> the seat whose person left the tournament during it
    yours: dict[tuple[int, int], Json] = {}  # (participant, round) -> their `you` while playing it
    seen = 0
    until = time.monotonic() + deadline
    while time.monotonic() < until:
        view = ok(call(gw(), "GET", f"{HOSTED}/{tid}"))
        for played in view["rounds"][sheet.rounds:]:
            tables = [t["players"] for t in played["tables"]]
            results = [sheet.table_points(archived_result(gw(), t["match_id"]), exits.get(t["match_id"]))
                       for t in played["tables"]]
            assert [t["result"] for t in played["tables"]] == results, (played, results)
            sheet.record(tables, results, played["byes"])
        if view["status"] == "over":
            return view
        rnd = view["round"]
        if rnd is None or not all(t["match_id"] for t in rnd["tables"]):
            time.sleep(0.05)
            continue
        if rnd["number"] > seen:
            still = [p for p in range(sheet.n) if p not in left]
            assert [s["index"] for s in view["standings"]] == sheet.ranking(list(range(sheet.n)))
            assert [s["score"] for s in view["standings"]] == [sheet.points[p] for p in sheet.ranking(
                list(range(sheet.n)))]
            tables, byes = sheet.seating(still)
            assert [t["players"] for t in rnd["tables"]] == tables, (rnd, sheet)
            assert rnd["byes"] == byes and rnd["bye"] == (byes[0] if byes else None)
            seen = rnd["number"]
        moved = False
        for person in people:
            if person.index in left:
                continue
            you = yours.get((person.index, rnd["number"])) or \
                ok(call(gw(), "GET", f"{HOSTED}/{tid}", credential=person.credential))["you"]
            if you["status"] == "playing" and you["round"] == rnd["number"]:
                yours[(person.index, rnd["number"])] = you  # their seat for the round: asked once
            if you["status"] != "playing":
                assert you["status"] in ("sitting-out", "waiting", "over"), you
                assert you["status"] != "sitting-out" or you["round"] != rnd["number"] or \
                    person.index in rnd["byes"], (you, rnd)
                continue
            if leave == (rnd["number"], person.index):
                ok(call(gw(), "POST", f"{HOSTED}/{tid}/leave", credential=person.credential))
                left.add(person.index)
                exits[you["match_id"]] = you["seat"]
                moved = True
                continue
            seat = ok(call(gw(), "GET", f"/v1/matches/{you['match_id']}/seat", credential=you["credential"]))
            if seat["over"]:
                continue
            if seat["turn"] is None:
                call(gw(), "POST", f"/v1/matches/{you['match_id']}/next-round", {}, credential=you["credential"])
                moved = True
                continue
            if seat["turn"] != you["seat"]:
                continue
            legal = ok(call(gw(), "GET", f"/v1/matches/{you['match_id']}/legal", credential=you["credential"]))
            if legal.get("actions"):
                answer = call(gw(), "POST", f"/v1/matches/{you['match_id']}/apply",
                              {"action": first_move(legal["actions"])}, credential=you["credential"])
                moved = moved or answer.status == 200
        if not moved:
            time.sleep(0.05)
    raise AssertionError(f"the Swiss did not end within {deadline} s")


def test_nine_people_play_a_swiss_of_kozel_for_four_across_two_gateways(engine_proc: EngineProc,
                                                                        tmp_path: Path) -> None:
    """Nine people, Kozel for four (free-for-all: 3, 2, 1, 0 by place), three rounds, two gateways on one Redis
    and one database, every call to the other gateway than the last: rounds 1 and 2 seat two tables of four
    and one bye; one person leaves during round 2 (their match ends, their seat last), so round 3 seats the
    eight left at two tables and nobody sits out. The final standings are archived: the first three's places
    in their Kozel ratings."""
    server = RedisServer(tmp_path)
    shared = {"GATEWAY_DATABASE": f"sqlite:///{tmp_path / 'archive.sqlite3'}", "GATEWAY_PLAYER_KEYS": PLAYER_KEYS}
    gws: list[Gateway] = []
    try:
        for name in ("a", "b"):
            gws.append(launch_gateway(engine_proc.address, "--workers", "1",
                                      env={**gateway_env(tmp_path / name, server.url), **shared}))
        opened = open_tournament(gws[0], 9, format="swiss", variant="kozel", players=4, rounds=3,
                                 options={"target": 1, "open_threshold": 0})
        tid = opened["tournament_id"]
        assert opened["tournament"]["players"] == 4
        names = ["Anna", "Boris", "Cyril", "Dasha", "Egor", "Fedya", "Gleb", "Hanna", "Ivan"]
        people = join_all(gws[1], opened, names)
        began = time.monotonic()
        ok(call(gws[0], "POST", f"{HOSTED}/{tid}/start", credential=opened["host_key"]))
        sheet = Sheet(9, sides=4)
        final = play_swiss(gws, tid, people, sheet, leave=(2, 4))
        assert [len(r["tables"]) for r in final["rounds"]] == [2, 2, 2]
        assert [len(r["byes"]) for r in final["rounds"]] == [1, 1, 0]
        assert all(4 not in t["players"] for t in final["rounds"][2]["tables"])
        assert final["participants"][4]["left"]
        assert sorted(sum(t["result"]) for r in final["rounds"] for t in r["tables"]) == [6.0] * 6
        order = sheet.ranking(list(range(9)))
        assert [s["index"] for s in final["standings"]] == order
        assert [s["place"] for s in final["standings"]] == list(range(1, 10))
        assert [s["official"] for s in final["standings"]] == [True] * 3 + [False] * 6
        # archived: the first three's places in their Kozel ratings (the players' pages, the leaderboard)
        wait_for(lambda: ok(call(gws[0], "GET", f"{HOSTED}/{tid}"))["archived"], 30)
        for place, p in enumerate(order[:3]):
            ratings = ok(call(gws[1], "GET", f"/v1/players/{people[p].player}"))["ratings"]
            kozel = next(r for r in ratings if r["family"] == "K")
            assert kozel["places"] == {k: int(i == place) for i, k in enumerate(("first", "second", "third"))}
        board = ok(call(gws[0], "GET", "/v1/leaderboard?variant=kozel&by=places&limit=10"))
        assert [e["player"] for e in board["items"] if e["player"] in {x.player for x in people}] == \
            [people[p].player for p in order[:3]]
        print(f"nine people, three rounds of Kozel for four in {time.monotonic() - began:.1f} s")
    finally:
        for gw in gws:
            gw.stop()
        server.stop()


@pytest.fixture(scope="module")
def swiss_gw(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    gw = launch_gateway(engine_proc.address, "--workers", "1", env=gateway_env(tmp_path_factory.mktemp("swiss4")))
    yield gw
    gw.stop()


def test_a_swiss_of_osel_in_pairs_scores_the_winning_pair(swiss_gw: Gateway) -> None:
    """Five people, Osel in pairs (seats 0+2 against 1+3), two rounds: one table of four and one bye a round
    (the bye worth a match won: 1); the winning pair's two seats score 1 each, the other two 0. Casual: the
    standings are archived as nobody's."""
    gw = swiss_gw
    opened = open_tournament(gw, 5, format="swiss", variant="osel", players=4, rounds=2, rated=False,
                             options={"teams": True, "target": 1, "open_threshold": 0})
    tid = opened["tournament_id"]
    people = join_all(gw, opened, ["Anna", "Boris", "Cyril", "Dasha", "Egor"], vouched=False)
    ok(call(gw, "POST", f"{HOSTED}/{tid}/start", credential=opened["host_key"]))
    sheet = Sheet(5, sides=2)
    final = play_swiss([gw], tid, people, sheet)
    assert [len(r["byes"]) for r in final["rounds"]] == [1, 1]
    assert len(set(p for r in final["rounds"] for p in r["byes"])) == 2  # a second bye goes to another
    for r in final["rounds"]:
        result = r["tables"][0]["result"]
        assert result[0] == result[2] and result[1] == result[3] and result[0] + result[1] == 1.0
    assert sum(sheet.points) == 6.0  # two matches, one point to each winning seat; two byes of one
    wait_for(lambda: ok(call(gw, "GET", f"{HOSTED}/{tid}"))["archived"], 30)
    winner = people[final["standings"][0]["index"]]
    ratings = ok(call(gw, "GET", f"/v1/players/{winner.player}"))["ratings"]
    assert [r["places"] for r in ratings if r["family"] == "O"] in ([], [{"first": 0, "second": 0, "third": 0}])


def test_a_seat_whose_time_runs_out_is_placed_last_and_the_tournament_ends(swiss_gw: Gateway) -> None:
    """Kozel for four with a 5 s move clock that ends the match by the rule (`on_timeout: rule`): nobody moves,
    the seat to move runs out of time, its match ends (timed out); that seat scores 0, the three others by the
    match's places, and the Swiss of one round is over."""
    opened = open_tournament(swiss_gw, 4, format="swiss", variant="kozel", players=4, rounds=1, rated=False,
                             options={"target": 1, "open_threshold": 0}, clock={"move": 5, "on_timeout": "rule"})
    tid = opened["tournament_id"]
    join_all(swiss_gw, opened, ["Anna", "Boris", "Cyril", "Dasha"], vouched=False)
    ok(call(swiss_gw, "POST", f"{HOSTED}/{tid}/start", credential=opened["host_key"]))
    final = wait_for(lambda: (v := ok(call(swiss_gw, "GET", f"{HOSTED}/{tid}")))["status"] == "over" and v, 60)
    table = final["rounds"][0]["tables"][0]
    record = wait_for(lambda: (r := call(swiss_gw, "GET", f"/v1/matches/{table['match_id']}/record")).status == 200
                      and r.json, 30)
    late = record["timed_out"]
    assert isinstance(late, int)
    assert table["result"] == Sheet(4, sides=4).table_points(record["result"], late)
    assert table["result"][late] == 0.0 and sum(table["result"]) == 6.0
    assert final["standings"][-1]["index"] == table["players"][late]


def test_a_swiss_ends_early_when_too_few_are_left_to_seat_a_table(swiss_gw: Gateway) -> None:
    """Four people, Kozel for four, three rounds; one leaves during round 1 (their match ends, their seat last):
    three are left, too few for a table of four, so the Swiss is over after round 1, its standings archived."""
    opened = open_tournament(swiss_gw, 4, format="swiss", variant="kozel", players=4, rounds=3, rated=False,
                             options={"target": 1, "open_threshold": 0})
    tid = opened["tournament_id"]
    people = join_all(swiss_gw, opened, ["Anna", "Boris", "Cyril", "Dasha"], vouched=False)
    ok(call(swiss_gw, "POST", f"{HOSTED}/{tid}/start", credential=opened["host_key"]))
    you = wait_for(lambda: (y := ok(call(swiss_gw, "GET", f"{HOSTED}/{tid}", credential=people[2].credential))[
        "you"])["status"] == "playing" and y)
    ok(call(swiss_gw, "POST", f"{HOSTED}/{tid}/leave", credential=people[2].credential))
    final = wait_for(lambda: (v := ok(call(swiss_gw, "GET", f"{HOSTED}/{tid}")))["archived"] and v, 30)
    assert final["status"] == "over" and len(final["rounds"]) == 1 and final["round"] is None
    result = final["rounds"][0]["tables"][0]["result"]
    others = [r for s, r in enumerate(result) if s != you["seat"]]
    assert result[you["seat"]] == 0.0 and min(others) >= 1.0 and sum(result) == 6.0
    assert final["standings"][-1]["index"] == 2
