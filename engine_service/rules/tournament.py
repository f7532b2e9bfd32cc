"""The Bykovo micro-tournament "вприсядку" (RULES.md B, option `tournament`): 4-7 participants.

Four play each round; the order of participants is fixed and seats follow it.
Whoever sat out the previous round plays next; the remaining seats go to the
worst places of the previous round. A participant whose total reaches the limit
(100, 75, 60, 50 for 4, 5, 6, 7 at the start) is out; when three or fewer
remain the tournament ends. Ties are broken by *dynamics*: walking back through
the totals after each earlier round to the last point where two participants
differed, the one who was then behind ranks higher. What is still tied after
that is decided by lot from the tournament seed.

Like `Match`, a `Tournament` is state in, state out (`to_dict`/`from_dict`).

>>> t = Tournament.create(["Ann", "Bob", "Cid", "Dan", "Eve"], seed=1, rating=["Eve"])
>>> t.next_players()
[0, 1, 2, 3]
>>> t.limit
75
"""
from __future__ import annotations

from functools import cmp_to_key
from typing import Any, Final

from .bykovo import LIMITS, sports_places
from .deal import MAX_SEED, derive_seed, shuffled
from .errors import IllegalActionError, MalformedError

SEATS: Final = 4


class Tournament:
    """Participants, their totals after every round, who sat out and who is out."""

    __slots__ = ("participants", "seed", "limit", "history", "played", "eliminated", "over", "first_sitters")

    def __init__(self, participants: list[str], seed: int, limit: int) -> None:
        self.participants = participants
        self.seed = seed
        self.limit = limit
        # history[r][p]: total of participant p after round r (history[0]: all zero).
        self.history: list[list[int]] = [[0] * len(participants)]
        # played[r]: {participant: place} of round r+1, in seat order of the participants who played.
        self.played: list[dict[int, int]] = []
        # eliminated[r]: participants that reached the limit in round r+1 (list per round, maybe empty).
        self.eliminated: list[list[int]] = []
        self.over = False
        self.first_sitters: list[int] = []

    # ------------------------------------------------------------ creation

    @classmethod
    def create(cls, participants: object, seed: object, rating: object = None) -> Tournament:
        """A new tournament; `rating` names the best-rated first (they sit out round 1)."""
        if not isinstance(participants, list) or not all(isinstance(p, str) and p for p in participants):
            raise MalformedError("participants must be a list of non-empty names")
        if len(set(participants)) != len(participants):
            raise MalformedError("participants: a name appears twice")
        if not 4 <= len(participants) <= 7:
            raise MalformedError(f"participants: a micro-tournament has 4 to 7, not {len(participants)}")
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
            raise MalformedError("seed must be an integer in 0..2^64-1")
        t = cls(list(participants), seed, LIMITS[len(participants)])
        sitting = len(participants) - SEATS
        if sitting:
            if rating:
                if not isinstance(rating, list) or any(r not in participants for r in rating):
                    raise MalformedError("rating must list participant names, best first")
                ranked = [participants.index(r) for r in rating]
                if len(set(ranked)) != len(ranked):
                    raise MalformedError("rating: a name appears twice")
                if len(ranked) < sitting:
                    raise MalformedError(f"rating must name at least the {sitting} best participants")
                t.first_sitters = sorted(ranked[:sitting])
            else:
                order = shuffled(len(participants), derive_seed(seed, 0, 0x517))
                t.first_sitters = sorted(order[:sitting])
        return t

    # ------------------------------------------------------------ queries

    @property
    def round_number(self) -> int:
        """Rounds recorded so far."""
        return len(self.played)

    @property
    def totals(self) -> list[int]:
        return self.history[-1].copy()

    def remaining(self) -> list[int]:
        out = {p for r in self.eliminated for p in r}
        return [p for p in range(len(self.participants)) if p not in out]

    def next_players(self) -> list[int]:
        """The four participants of the next round, in seat order (tournament order)."""
        if self.over:
            raise IllegalActionError("the tournament is over")
        remaining = self.remaining()
        if len(remaining) <= SEATS:
            return remaining
        if not self.played:
            return [p for p in remaining if p not in self.first_sitters]
        last = self.played[-1]
        chosen = [p for p in remaining if p not in last]
        totals = self.history[-1]
        lot = self._lot(len(self.played))
        # The worst places of the previous round first; tie: the higher total; then lot.
        candidates = sorted((p for p in remaining if p in last),
                            key=lambda p: (-last[p], -totals[p], lot[p]))
        chosen.extend(candidates[: SEATS - len(chosen)])
        return sorted(chosen)

    def _lot(self, salt: int) -> list[int]:
        order = shuffled(len(self.participants), derive_seed(self.seed, salt + 1, 0x107))
        rank = [0] * len(order)
        for i, p in enumerate(order):
            rank[p] = i
        return rank

    def _compare(self, a: int, b: int) -> int:
        """Negative when a ranks above b: lower total, then better dynamics, then lot."""
        ta, tb = self.history[-1][a], self.history[-1][b]
        if ta != tb:
            return -1 if ta < tb else 1
        for totals in reversed(self.history[:-1]):
            if totals[a] != totals[b]:
                # The one who was behind then (higher total) has the better dynamics.
                return -1 if totals[a] > totals[b] else 1
        lot = self._lot(10_000)
        return -1 if lot[a] < lot[b] else 1

    def standings(self) -> list[dict[str, Any]]:
        """Everyone ranked: those still in by total and dynamics, then the eliminated, latest first."""
        ranked = sorted(self.remaining(), key=cmp_to_key(self._compare))
        for group in reversed(self.eliminated):
            ranked.extend(sorted(group, key=cmp_to_key(self._compare)))
        totals = self.history[-1]
        gone = {p for r in self.eliminated for p in r}
        return [
            {"participant": self.participants[p], "index": p, "place": i + 1, "total": totals[p],
             "out": p in gone, "official": self.over and i < 3}
            for i, p in enumerate(ranked)
        ]

    # ------------------------------------------------------------ recording

    def record_round(self, points: object, winner: object) -> list[dict[str, Any]]:
        """Record a round of the next four: points per seat (winner 0) and the winning seat."""
        players = self.next_players()
        if not isinstance(points, list) or len(points) != SEATS or not all(
                isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= 200 for x in points):
            raise MalformedError("points must list 4 round points (0..200), seat 0 first")
        if not isinstance(winner, int) or isinstance(winner, bool) or not 0 <= winner < SEATS:
            raise MalformedError("winner must be a seat 0..3")
        if points[winner] != 0:
            raise MalformedError("points: the winner of a Bykovo round scores 0")
        places = sports_places(points, winner)
        totals = self.history[-1].copy()
        for seat, p in enumerate(players):
            totals[p] += points[seat]
        self.history.append(totals)
        self.played.append({p: places[seat] for seat, p in enumerate(players)})
        newly_out = [p for p in self.remaining() if totals[p] >= self.limit]
        self.eliminated.append(newly_out)
        events: list[dict[str, Any]] = [{"type": "tournament_round", "number": self.round_number,
                                         "players": players, "places": places}]
        if newly_out:
            events.append({"type": "eliminated", "participants": [self.participants[p] for p in newly_out]})
        if len(self.remaining()) <= 3:
            self.over = True
            events.append({"type": "tournament_over", "standings": self.standings()[:3]})
        return events

    # ------------------------------------------------------------ state

    def to_dict(self) -> dict[str, Any]:
        return {
            "participants": self.participants.copy(),
            "seed": self.seed,
            "limit": self.limit,
            "first_sitters": self.first_sitters.copy(),
            "rounds": [
                {"players": sorted(played), "places": [played[p] for p in sorted(played)],
                 "totals": totals.copy(), "eliminated": out.copy()}
                for played, totals, out in zip(self.played, self.history[1:], self.eliminated)
            ],
            "totals": self.history[-1].copy(),
            "over": self.over,
            "next_players": [] if self.over else self.next_players(),
            "standings": self.standings(),
        }

    @classmethod
    def from_dict(cls, data: object) -> Tournament:
        if not isinstance(data, dict):
            raise MalformedError("tournament state must be an object")
        participants = data.get("participants")
        seed = data.get("seed")
        t = cls.create(participants if isinstance(participants, list) else [], seed if isinstance(seed, int) else -1)
        first = data.get("first_sitters") or []
        n = len(t.participants)
        if (not isinstance(first, list) or len(first) != n - SEATS
                or not all(isinstance(p, int) and not isinstance(p, bool) and 0 <= p < n for p in first)
                or len(set(first)) != len(first)):
            raise MalformedError(f"first_sitters must list {n - SEATS} different participant indexes")
        t.first_sitters = sorted(first)
        rounds = data.get("rounds") or []
        if not isinstance(rounds, list):
            raise MalformedError("rounds must be a list")
        for i, r in enumerate(rounds):
            if not isinstance(r, dict):
                raise MalformedError(f"rounds[{i}] must be an object")
            if t.over:
                raise MalformedError(f"rounds[{i}]: recorded after the tournament ended")
            expected = t.next_players()
            if r.get("players") != expected:
                raise MalformedError(f"rounds[{i}].players must be {expected}")
            places, totals = r.get("places"), r.get("totals")
            if not isinstance(totals, list) or len(totals) != n:
                raise MalformedError(f"rounds[{i}].totals must list {n} totals")
            before = t.history[-1]
            points = [totals[p] - before[p] if isinstance(totals[p], int) else -1 for p in expected]
            if not isinstance(places, list) or len(places) != SEATS or 1 not in places:
                raise MalformedError(f"rounds[{i}].places must give the {SEATS} seats' places")
            winner = places.index(1)
            t.record_round(points, winner)
            if t.played[-1] != dict(zip(expected, places)) or t.history[-1] != totals:
                raise MalformedError(f"rounds[{i}]: places or totals disagree with the points")
        return t


__all__ = ["Tournament"]
