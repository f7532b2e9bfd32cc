"""A match: the public face of the rules library.

State in, state out: `Match.from_dict` decodes and validates a state,
`to_dict` encodes it, and between them `apply`, `settle`, `start_round` and
`timeout` change it in place (python-chess style: `copy()` when you need the
old one). A refused call raises `MalformedError` or `IllegalActionError` and
leaves the match exactly as it was.

>>> match, _ = Match.new("kozel", 4, seed=7)
>>> action = match.legal_actions()[0]
>>> _ = match.apply(action)
>>> Match.from_dict(match.to_dict()).to_dict() == match.to_dict()
True
"""
from __future__ import annotations

import secrets
from collections.abc import Iterable
from typing import Any, NoReturn

from .botseats import bots_to_list, check_bots
from .deal import MAX_SEED, deal_with_redeals, derive_seed, explicit_deal
from .errors import IllegalActionError, MalformedError, MisdealError, one_of
from .events import Event
from .family import Family, MatchEnd, RoundContext, RoundResult
from .history import DIGEST_SIZE, MAX_LOG, chain, check_log, entry
from .ledger import Ledger
from .notation import MOVES, Move, Placement, format_placement, parse_placement
from .options import OptionValue
from .registry import Preset, check_players, make_family
from .round import Round
from .tiles import ALL_TILES, NAMES, TILE_COUNT, bits, names, parse_hand, parse_tile
from .views import legal_view, public_view, redact_events, shown_hands, table_view

ENDINGS = ("out", "fish", "blocked", "sortir")


class Match:
    """A match of one preset: ledger, current round, and the match outcome."""

    __slots__ = (
        "preset", "family", "overrides", "players", "seed", "round_number", "ledger", "round",
        "next_leader", "match_over", "losers", "winners", "rating", "timed_out", "at_limit", "bots", "log",
        "log_count", "_digest", "_unchained", "shed",
    )

    def __init__(self, preset: Preset, family: Family, overrides: dict[str, OptionValue],
                 players: int, seed: int | None) -> None:
        self.preset = preset
        self.family = family
        self.overrides = overrides
        self.players = players
        self.seed = seed
        self.round_number = 0
        self.ledger = Ledger.empty(family.sides)
        self.round: Round | None = None
        self.next_leader: int | None = None
        self.match_over = False
        self.losers: list[int] = []
        self.winners: list[int] = []
        self.rating: list[int] = []
        self.timed_out: int | None = None
        #: Seats the computer plays, and at what level (`botseats`; the engine plays them).
        self.bots: dict[int, str] = {}
        #: A number of the state (round count, points) is within `HEADROOM` of what a state may hold:
        #: calls that add to them are refused, so that no answer holds a state the decoder refuses.
        self.at_limit = False
        #: What happened in the current round (`history`; since the match began while no round has
        #: ended): empty with `log_count` 0 when that is not known.
        self.log: list[str] = []
        #: How many entries left the log as rounds ended, and the digest chaining them (`history.chain`).
        self.log_count = 0
        self._digest = b""
        #: Lines that left the log and are not chained into `_digest` yet (`log_digest` chains them when
        #: read: a match played in process, as the rules' benchmarks and the bots' playouts do, never pays).
        self._unchained: list[str] = []
        #: The entries that left the log since this object was made (not part of the state): a call's
        #: answer's ``record_lines``; a match played here from its start holds them all.
        self.shed: list[str] = []

    # ------------------------------------------------------------ creation

    @classmethod
    def new(
        cls,
        variant: object,
        players: object,
        options: object = None,
        seed: object = None,
        deal: object = None,
        setup: object = None,
        no_deal: bool = False,
        bots: object = None,
    ) -> tuple[Match, list[Event]]:
        """A new match; deals the first round from `deal`, else from `seed`, unless `no_deal`.

        Arguments are typed `object` because they are caller input: anything
        else than the documented shapes is refused with MalformedError.
        """
        p, family, effective = make_family(variant, players, options)
        checked = _seed(seed, "seed")
        if checked is None and deal is None and not no_deal:
            checked = secrets.randbits(63)
        match = cls(p, family, effective, check_players(p, players), checked)
        match.bots = check_bots(bots, match.players, "bots")
        if setup is not None:
            match._setup(setup)
        match.log = [entry("new", None if setup is None else _setup_payload(setup))]
        if no_deal:
            return match, []
        return match, match.start_round(deal)

    @classmethod
    def start(cls, variant: object, players: object, *, options: object = None, seed: object = None,
              deal: object = None, setup: object = None, no_deal: bool = False,
              bots: object = None) -> tuple[Match, list[Event]]:
        """`new` with the arguments every kind of game starts from (`games.new_game`): a deal and
        `no_deal` together are refused."""
        if deal is not None and no_deal:
            raise MalformedError("deal and no_deal: give one or the other")
        return cls.new(variant, players, options=options, seed=seed, deal=deal, setup=setup, no_deal=no_deal,
                       bots=bots)

    @classmethod
    def from_log_start(cls, variant: str, players: int, options: dict[str, Any], seed: int | None,
                       payload: object) -> tuple[Match, list[Event]]:
        """The match as its log's first step (``new``, with the setup it carries) starts it: no round
        dealt yet (the log's ``deal`` steps deal them)."""
        return cls.new(variant, players, options, seed=seed, setup=payload, no_deal=True)

    def _setup(self, setup: object) -> None:
        if not isinstance(setup, dict):
            raise MalformedError("setup must be an object")
        unknown = set(setup) - {"written", "remembered", "pot", "scores"}
        if unknown:
            raise MalformedError(f"setup: unknown keys {sorted(unknown)}")
        sides = self.family.sides
        for key in ("written", "remembered", "scores"):
            if key in setup:
                setattr(self.ledger, key, _int_list(setup[key], sides, f"setup.{key}"))
        if "pot" in setup:
            self.ledger.pot = _nonneg(setup["pot"], "setup.pot")
        for key in ("written", "remembered"):
            if any(v < 0 for v in getattr(self.ledger, key)):
                raise MalformedError(f"setup.{key} must not be negative")  # as a decoded state's
        if self.family.score_is_written:
            if "scores" in setup and self.ledger.scores != self.ledger.written:
                raise MalformedError(f"setup.scores: in {self.preset.name} the score is the written points: "
                                     "give setup.written")
            self.ledger.scores = self.ledger.written.copy()
        self.at_limit = _near_limit(self)

    def start_round(self, deal: object = None) -> list[Event]:
        """Deal the next round: explicitly, or from the match seed."""
        if self.match_over:
            raise IllegalActionError("the match is over")
        if self.at_limit:
            raise IllegalActionError(AT_LIMIT)
        if self.round is not None and not self.round.over:
            raise IllegalActionError("the current round is still being played")
        family = self.family
        redeals = 0
        leader_hint: int | None = None
        if deal is not None:
            if not isinstance(deal, dict):
                raise MalformedError("deal must be an object with hands (and boneyard, leader)")
            unknown = set(deal) - {"hands", "boneyard", "leader"}
            if unknown:
                raise MalformedError(f"deal: unknown keys {sorted(unknown)}")
            hands, boneyard = explicit_deal(
                self.players, family.hand_size, deal.get("hands"), deal.get("boneyard"), exact=True)
            if family.is_misdeal(hands):
                raise MisdealError("misdeal: the deal must be dealt again")
            if deal.get("leader") is not None:
                leader_hint = _seat(deal["leader"], self.players, "deal.leader")
        else:
            if self.seed is None:
                raise IllegalActionError("this match has no seed: give the deal explicitly")
            hands, boneyard, redeals = deal_with_redeals(
                self.players, family.hand_size, derive_seed(self.seed, self.round_number + 1),
                family.is_misdeal)
        ctx = self._context()
        leader, lead_mask = family.lead(ctx, hands) if leader_hint is None else \
            family.lead_given(ctx, hands, leader_hint)
        self.round = Round(family, hands, boneyard, leader, lead_mask)
        self.round_number += 1
        self._log("deal" if deal is None else entry("deal", _deal_payload(self.round, leader_hint)))
        return [{"type": "round_dealt", "number": self.round_number, "leader": leader,
                 "redealt": redeals > 0}]

    def _context(self) -> RoundContext:
        """What the family may know of this match to name a round's lead."""
        return RoundContext(self.seed, self.round_number, self.next_leader, bool(self.ledger.history))

    # ------------------------------------------------------------ play

    @property
    def variant(self) -> str:
        return self.preset.name

    @property
    def to_move(self) -> int:
        return self.round.to_move if self.round is not None else 0

    def legal_actions(self) -> list[str]:
        """The legal action strings of the seat to move (empty when nothing can be played)."""
        if self.match_over or self.round is None:
            return []
        return self.round.legal_actions()

    # ------------------------------------------------------------ the Game protocol (game.py)

    @property
    def options(self) -> dict[str, OptionValue]:
        """The options that differ from the preset's defaults (`overrides`)."""
        return self.overrides

    @property
    def turn(self) -> int | None:
        """The seat to act now; None between rounds, before the first and once the match is over."""
        rnd = self.round
        return None if self.match_over or rnd is None or rnd.over else rnd.to_move

    @property
    def finished(self) -> bool:
        """The match is over (`match_over`); a round over while it goes on is not."""
        return self.match_over

    @property
    def unit(self) -> str:
        return "round"

    @property
    def seat_name(self) -> str:
        return "seat"

    def view_for(self, viewer: int | None) -> dict[str, Any]:
        """`viewer`'s view: a seat's own (`view`), or the public one for None (`views.public_view`)."""
        return public_view(self) if viewer is None else self.view(viewer)

    def redact(self, events: Iterable[Event], viewer: int | None) -> list[Event]:
        """Events as `viewer` may see them: a tile drawn by another seat hidden (`views.redact_events`)."""
        return redact_events(events, viewer)

    def spectated(self, events: list[Event]) -> list[Event]:
        """The public's events, the hands shown once the round is over (`views.shown_hands`)."""
        return self.seen_by(events, None)

    def seen_by(self, events: list[Event], viewer: int | None) -> list[Event]:
        """`viewer`'s events (another seat's draw hidden), the hands shown once the round is over."""
        seen = redact_events(events, viewer)
        rnd = self.round
        if rnd is None or not rnd.over:
            return seen
        return shown_hands(seen, [names(h) for h in rnd.hands])

    def match_scores(self) -> list[int]:
        """`ledger.scores` (in Kozel and Osel the written points, which it mirrors; the remembered
        points and the eggs pot stay in the ledger beside it)."""
        return self.ledger.scores.copy()

    def result(self) -> dict[str, Any] | None:
        """Once the match is over: its winners, losers, rating and scores (None before)."""
        if not self.match_over:
            return None
        return {"winners": self.winners, "losers": self.losers, "rating": self.rating,
                "scores": self.ledger.scores}

    # ------------------------------------------------------------ play (continued)

    def apply(self, action: object, seat: object = None) -> list[Event]:
        """Apply one action of the seat to move (`seat`, when given, must be that seat); returns what happened."""
        rnd = self.round
        if (rnd is None or rnd.over or self.match_over or not isinstance(action, str) or self.at_limit
                or (seat is not None and (type(seat) is not int or seat != rnd.to_move))):
            self._refuse(action, seat)
        return self._play(rnd, MOVES.get(action) or Move.parse(action), action)

    def apply_move(self, move: Move, text: str | None = None, seat: object = None) -> list[Event]:
        """`apply` for a move already parsed (`notation.Move`, as a record's entry carries it): the
        same checks and result; `text`, the action as its writer spelled it, is for the messages."""
        rnd = self.round
        if (rnd is None or rnd.over or self.match_over or self.at_limit
                or (seat is not None and (type(seat) is not int or seat != rnd.to_move))):
            self._refuse(move.text() if text is None else text, seat)
        return self._play(rnd, move, text)

    def _play(self, rnd: Round, move: Move, text: str | None) -> list[Event]:
        """A seat's move in the round once `apply` or `apply_move` found it may be tried: the round's
        checks and transitions (`Round.apply_move`), then the log, the points scored in play and the
        round's end."""
        events: list[Event] = []
        ended = rnd.apply_move(move, events, text)
        self._log(_logged(events[0]))
        if rnd.last_score:
            self._credit_in_play(rnd, next(e for e in events if e["type"] == "points_scored"), events)
        if ended and not self.match_over:
            events.extend(self._finish(rnd))
        if rnd.over:
            self._shed()
        return events

    # ------------------------------------------------------------ the log (history.py)

    def _log(self, item: str) -> None:
        """Add `item` to a known log (an unknown one stays unknown); past `MAX_LOG` entries in all the
        match keeps no history from then on."""
        if not self.log and not self.log_count:
            return
        if self.log_count + len(self.log) >= MAX_LOG:
            self.log = []
            self.log_count = 0
            self._digest = b""
            self._unchained = []
            return
        self.log.append(item)

    @property
    def log_digest(self) -> bytes:
        """The digest chaining every entry that left the log (`history.chain`), b"" when none has."""
        if self._unchained:
            self._digest = chain(self._digest, self._unchained)
            self._unchained = []
        return self._digest

    def _shed(self) -> None:
        """A round has ended: its entries (and any before it) leave the state for `shed`, chained into
        `log_digest`."""
        if not self.log:
            return
        self._unchained.extend(self.log)
        self.log_count += len(self.log)
        self.shed.extend(self.log)
        self.log = []

    def _refuse(self, action: object, seat: object) -> NoReturn:
        """Raise the precise reason why `action` cannot even be tried now."""
        if not isinstance(action, str):
            raise MalformedError(f"action: expected a string, not {type(action).__name__}")
        if seat is not None and type(seat) is not int:
            raise MalformedError(f"seat must be an integer, not {type(seat).__name__}")
        rnd = self._playing_round()
        if self.at_limit:
            raise IllegalActionError(AT_LIMIT)
        raise IllegalActionError(f"it is seat {rnd.to_move}'s turn, not seat {seat}'s")

    def _credit_in_play(self, rnd: Round, event: Event, events: list[Event]) -> None:
        """Points scored in play go to the ledger (the family may refuse some: exact target),
        and may end the match at once (TF, A3, A5)."""
        taken, end = self.family.after_play(self.ledger, event["seat"], event["points"])
        if taken != event["points"]:
            event["points"] = taken
            rnd.last_score = taken
        if end is not None:
            events.append(self._end_match(end))

    def _playing_round(self) -> Round:
        if self.match_over:
            raise IllegalActionError("the match is over")
        if self.round is None:
            raise IllegalActionError("no round has been dealt")
        if self.round.over:
            raise IllegalActionError("the round is over: deal the next one")
        return self.round

    def _finish(self, rnd: Round) -> list[Event]:
        """Have the family score the round that just ended; record it and mark the round with it."""
        result = self.family.finish_round(
            self.ledger, rnd.ending or "blocked", rnd.hands, rnd.out, rnd.last_placer, rnd.layout)
        events = self._conclude(result)
        rnd.ending = result.ending
        rnd.winner = result.winner
        rnd.round_points = list(result.round_points)
        rnd.places = list(result.places) if result.places else None
        return events

    def settle(self, ending: object, hands: object, last_placer: object = None) -> list[Event]:
        """Score a round played at a physical table from the hands left."""
        if self.match_over:
            raise IllegalActionError("the match is over")
        if self.at_limit:
            raise IllegalActionError(AT_LIMIT)
        if self.round is not None and not self.round.over:
            raise IllegalActionError("a round is being played here: finish it instead of settling")
        if ending not in ("out", "blocked"):
            raise MalformedError(f"settle: ending must be 'out' or 'blocked', not {ending!r}")
        if not isinstance(hands, (list, tuple)) or len(hands) != self.players:
            raise MalformedError(f"settle: hands must list {self.players} hands, seat 0 first")
        seen = 0
        masks: list[int] = []
        for seat, items in enumerate(hands):
            m = parse_hand(items, f"settle.hands[{seat}]")
            if m & seen:
                raise MalformedError(f"settle: {NAMES[next(bits(m & seen))]} is in two hands")
            seen |= m
            masks.append(m)
        out = [s for s, m in enumerate(masks) if m == 0]
        if ending == "out" and not out:
            raise MalformedError("settle: ending 'out' needs a seat with an empty hand")
        if ending == "out" and len(out) > 1 and not self.family.many_out:
            raise MalformedError("settle: only one seat can go out in this variant")
        if ending == "blocked" and out:
            raise MalformedError("settle: ending 'blocked' but a seat has an empty hand")
        if last_placer is not None:
            last_placer = _seat(last_placer, self.players, "settle.last_placer")
        # Scored on a copy of the ledger: a family that refuses (B blocked without its fisherman)
        # leaves the match exactly as it was.
        ledger = self.ledger.copy()
        result = self.family.finish_round(ledger, ending, masks, out, last_placer, None)
        self.ledger = ledger
        self.round = None
        self.round_number += 1
        self._log(entry("settle", {"ending": ending, "hands": [names(m) for m in masks],
                                   "last_placer": last_placer}))
        events = self._conclude(result)
        self._shed()
        return events

    def timeout(self, seat: object) -> list[Event]:
        """Seat `seat` timed out: the match ends by the variant's timeout rule."""
        if self.match_over:
            raise IllegalActionError("the match is over")
        seat = _seat(seat, self.players, "seat")
        end = self.family.timeout(self.ledger, seat)
        if end is None:
            raise MalformedError(f"variant {self.variant} has no timeout rule")
        self.timed_out = seat
        self._log(f"timeout {seat}")
        return [self._end_match(end)]

    # ------------------------------------------------------------ what the families decided

    def _conclude(self, result: RoundResult) -> list[Event]:
        """Record a round its family scored and report it: the round, the next leader (K), the match's end."""
        events: list[Event] = [{"type": "round_ended", "record": self._record_round(result)}]
        if self.family.names_next_leader:
            self.next_leader = result.next_leader
            if result.next_leader is not None:
                events.append({"type": "next_leader", "seat": result.next_leader})
        if result.match_end is not None:
            events.append(self._end_match(result.match_end))
        return events

    def _record_round(self, result: RoundResult) -> dict[str, Any]:
        """Append the finished round to the score table (C "Score table") and return its row."""
        ledger = self.ledger
        record = {
            "number": self.round_number,
            "ending": result.ending,
            "winner": result.winner,
            "last_placer": result.last_placer,
            "round_points": list(result.round_points),
            "written": ledger.written.copy(),
            "remembered": ledger.remembered.copy(),
            "pot": ledger.pot,
            "scores": ledger.scores.copy(),
            "places": list(result.places or []),
            "out": list(result.out),
        }
        # The state keeps the last row only (issue 27: a state does not grow with the match); the whole
        # score table is in the round_ended events and the record.
        ledger.history[:] = [record]
        return record

    def _end_match(self, end: MatchEnd) -> Event:
        """End the match as the family decided; returns the match_ended event."""
        self.match_over = True
        self.losers = sorted(end.losers)
        self.winners = sorted(end.winners)
        self.rating = list(end.rating)
        return {"type": "match_ended", "losers": self.losers, "winners": self.winners, "rating": self.rating}

    # ------------------------------------------------------------ views and copies

    def copy(self) -> Match:
        # Through the constructor, not `Match.__new__`: compiled by mypyc, `__new__` runs `__init__`.
        new = Match(self.preset, self.family, self.overrides, self.players, self.seed)
        new.round_number = self.round_number
        new.ledger = self.ledger.copy()
        new.round = self.round.copy() if self.round is not None else None
        new.next_leader = self.next_leader
        new.match_over = self.match_over
        new.losers = self.losers.copy()
        new.winners = self.winners.copy()
        new.rating = self.rating.copy()
        new.timed_out = self.timed_out
        new.at_limit = self.at_limit
        new.bots = dict(self.bots)
        new.log = self.log.copy()
        new.log_count = self.log_count
        new._digest = self.log_digest
        new.shed = self.shed.copy()
        return new

    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON state (the REST transparent form; mirrors proto MatchState).
        `bots` is there only when some seat is a bot."""
        state = {
            "variant": self.preset.name,
            "players": self.players,
            "options": {k: v for k, v in self.overrides.items()},
            "seed": self.seed,
            "round_number": self.round_number,
            "ledger": self.ledger.to_dict(),
            "round": None if self.round is None else _round_to_dict(self.round),
            "next_leader": self.next_leader,
            "match_over": self.match_over,
            "losers": self.losers.copy(),
            "winners": self.winners.copy(),
            "rating": self.rating.copy(),
            "timed_out": self.timed_out,
            "log": self.log.copy(),
        }
        if self.log_count:
            state["log_count"] = self.log_count
            state["log_digest"] = self.log_digest.hex()
        if self.bots:
            state["bots"] = bots_to_list(self.bots)
        return state

    def view(self, seat: object) -> dict[str, Any]:
        """What `seat` may see: its own hand, the others' sizes, never the boneyard order."""
        seat = _seat(seat, self.players, "seat")
        rnd = self.round
        view: dict[str, Any] = {
            "variant": self.preset.name,
            "players": self.players,
            "options": dict(self.overrides),
            "seat": seat,
            "round_number": self.round_number,
            "ledger": self.ledger.to_dict(),
            "dealt": rnd is not None,
            "hand": [],
            "hand_sizes": [],
            "boneyard_size": 0,
            "layout": [],
            "ends": {},
            "count": 0,
            "to_move": 0,
            "round_over": False,
            "ending": None,
            "winner": None,
            "round_points": [],
            "revealed_hands": [],
            "match_over": self.match_over,
            "losers": self.losers.copy(),
            "rating": self.rating.copy(),
            "legal": [],
            "last_score": 0,
            "table": table_view(None),
            "legal_moves": [],
        }
        if rnd is not None:
            legal = self.legal_actions() if rnd.to_move == seat else []
            view.update({
                "hand": names(rnd.hands[seat]),
                "hand_sizes": [h.bit_count() for h in rnd.hands],
                "boneyard_size": len(rnd.boneyard),
                "layout": [format_placement(p) for p in rnd.layout.placements],
                "ends": rnd.layout.ends(),
                "count": rnd.layout.count(),
                "to_move": rnd.to_move,
                "round_over": rnd.over,
                "ending": rnd.ending,
                "winner": rnd.winner,
                "round_points": list(rnd.round_points or []),
                "revealed_hands": [names(h) for h in rnd.hands] if rnd.over else [],
                "last_score": rnd.last_score,
                "legal": legal,
                "table": table_view(rnd.layout),
                "legal_moves": legal_view(legal),
            })
        if self.bots:
            view["bots"] = bots_to_list(self.bots)
        return view

    @classmethod
    def from_dict(cls, data: object) -> Match:
        """Decode and validate a state; MalformedError names the first thing wrong."""
        return cls._decode(data, None)

    @classmethod
    def from_tiles(cls, data: object, hands: list[int], boneyard: list[int],
                   placements: list[Placement]) -> Match:
        """`from_dict` for a codec that carries tiles as ids (the gRPC one): no tile strings.

        `data` is a state as `from_dict` reads it, except that the round's
        "hands", "boneyard" and "layout" are ignored: they are given as bit sets
        (seat 0 first), tile ids in draw order and ``(tile, arm, flag)``
        placements (`notation.Placement`, the lead's arm `CENTER`). Everything is
        validated as `from_dict` does; the first message may differ when a state
        is wrong in several ways.
        """
        for t in boneyard:
            if not 0 <= t < TILE_COUNT:
                raise MalformedError(f"state.round.boneyard: tile id {t} is not a tile")
        for i, (t, _arm, _flag) in enumerate(placements):
            if not 0 <= t < TILE_COUNT:
                raise MalformedError(f"state.round.layout[{i}]: tile id {t} is not a tile")
        return cls._decode(data, (hands, boneyard, placements))

    @classmethod
    def _decode(cls, data: object, tiles: _Tiles | None) -> Match:
        if not isinstance(data, dict):
            raise MalformedError("state must be an object")
        _known_keys(data, STATE_KEYS, "state")
        _no_nulls(data, _STATE_NULLABLE, "state")
        try:
            p, family, effective = make_family(data.get("variant"), data.get("players"), data.get("options", {}))
        except MalformedError as exc:  # its messages start with the field (variant, players, options.x)
            raise MalformedError(f"state.{exc}") from None
        players = int(data["players"])
        match = cls(p, family, effective, players, _seed(data.get("seed"), "state.seed"))
        match.round_number = _nonneg(data.get("round_number", 0), "state.round_number")
        match.ledger = _ledger_from_dict(data.get("ledger", {}), players, family.sides, family.score_is_written)
        nl = data.get("next_leader")
        match.next_leader = None if nl is None else _seat(nl, players, "state.next_leader")
        match.match_over = _bool(data.get("match_over", False), "state.match_over")
        match.losers = _seat_list(data.get("losers", []), family.sides, "state.losers")
        match.winners = _seat_list(data.get("winners", []), family.sides, "state.winners")
        rating = data.get("rating", [])
        match.rating = _int_list(rating, players, "state.rating") if rating != [] else []
        to = data.get("timed_out")
        match.timed_out = None if to is None else _seat(to, players, "state.timed_out")
        match.bots = check_bots(data.get("bots"), players, "state.bots")
        rnd = data.get("round")
        if rnd is not None:
            match.round = _round_from_dict(match, rnd) if tiles is None else _round_from_tiles(match, rnd, tiles)
        _log_from_dict(match, data)
        match.at_limit = _near_limit(match)
        return match


def _log_from_dict(match: Match, data: dict[str, Any]) -> None:
    """The state's log: the current round's entries, and the count and digest of those that left it
    (both or neither; a state from before states shed their rounds has a whole log and neither)."""
    count = data.get("log_count", 0)
    if type(count) is not int or not 0 <= count <= MAX_LOG:
        raise MalformedError(f"state.log_count must be an integer 0..{MAX_LOG}")
    digest = data.get("log_digest", "")
    if type(digest) is bytes:
        raw = digest
    elif type(digest) is str and len(digest) == 2 * DIGEST_SIZE:
        try:
            raw = bytes.fromhex(digest)
        except ValueError:
            raw = b""
    else:
        raw = b"" if digest == "" else b"?"
    if (count == 0) != (raw == b"") or (count and len(raw) != DIGEST_SIZE):
        raise MalformedError(f"state.log_digest must be {DIGEST_SIZE} bytes ({2 * DIGEST_SIZE} hex digits) when "
                             "state.log_count is above 0, and absent when it is 0")
    match.log = check_log(data.get("log", []), whole=count == 0)
    if count + len(match.log) > MAX_LOG:
        raise MalformedError(f"state.log: more than {MAX_LOG} entries in all")
    match.log_count = count
    match._digest = raw


def _setup_payload(setup: object) -> dict[str, Any]:
    """A checked setup as the log keeps it (its keys in order)."""
    assert isinstance(setup, dict)
    return {k: setup[k] for k in sorted(setup)}


def _deal_payload(rnd: Round, leader: int | None) -> dict[str, Any]:
    """An explicit deal as the log keeps it: the hands and the whole boneyard in draw order."""
    payload: dict[str, Any] = {"hands": [names(h) for h in rnd.hands],
                               "boneyard": [NAMES[t] for t in reversed(rnd.boneyard)]}
    if leader is not None:
        payload["leader"] = leader
    return payload


def _logged(event: Event) -> str:
    """The canonical action of an `apply`, from its first event (played, drew or passed)."""
    kind = event["type"]
    if kind == "played":
        action: str = event["action"]
        return action
    return "draw" if kind == "drew" else "pass"


# ---------------------------------------------------------------- encoding helpers

def _round_to_dict(rnd: Round) -> dict[str, Any]:
    return {
        "leader": rnd.leader,
        "hands": [names(h) for h in rnd.hands],
        "boneyard": [NAMES[t] for t in reversed(rnd.boneyard)],
        "reserve": rnd.reserve,
        "layout": [format_placement(p) for p in rnd.layout.placements],
        "to_move": rnd.to_move,
        "passes": rnd.passes,
        "out": rnd.out.copy(),
        "last_placer": rnd.last_placer,
        "last_score": rnd.last_score,
        "over": rnd.over,
        "ending": rnd.ending,
        "winner": rnd.winner,
        "round_points": None if rnd.round_points is None else rnd.round_points.copy(),
        "places": None if rnd.places is None else rnd.places.copy(),
        "ends": rnd.layout.ends(),
        "count": rnd.layout.count(),
    }


#: The keys of a state and its parts, as `to_dict` writes them: any other key is refused (a
#: misspelled key would otherwise be dropped silently; the OpenAPI schema says the same).
STATE_KEYS = frozenset({"variant", "players", "options", "seed", "round_number", "ledger", "round", "next_leader",
                        "match_over", "losers", "winners", "rating", "timed_out", "bots", "log",
                        "log_count", "log_digest"})
ROUND_KEYS = frozenset({"leader", "hands", "boneyard", "reserve", "layout", "to_move", "passes", "out",
                        "last_placer", "last_score", "over", "ending", "winner", "round_points", "places", "ends",
                        "count"})
LEDGER_KEYS = frozenset({"written", "remembered", "pot", "scores", "history"})
RECORD_KEYS = frozenset({"number", "ending", "winner", "last_placer", "round_points", "written", "remembered", "pot",
                         "scores", "places", "out"})


#: The keys that may be null (the documented schema's `nullable` ones); any other given as null is refused.
_STATE_NULLABLE = frozenset({"seed", "round", "next_leader", "timed_out"})
_ROUND_NULLABLE = frozenset({"last_placer", "ending", "winner", "round_points", "places"})


def _no_nulls(data: dict[Any, Any], nullable: frozenset[str], where: str) -> None:
    for key, value in data.items():
        if value is None and key not in nullable:
            raise MalformedError(f"{where}.{key} must not be null")


def _known_keys(data: dict[Any, Any], allowed: frozenset[str], where: str) -> None:
    unknown = sorted(str(k) for k in data if k not in allowed)
    if unknown:
        raise MalformedError(f"{where}: unknown keys {unknown}")


def _round_from_dict(match: Match, data: object) -> Round:
    if not isinstance(data, dict):
        raise MalformedError("state.round must be an object or null")
    _known_keys(data, ROUND_KEYS, "state.round")
    _no_nulls(data, _ROUND_NULLABLE, "state.round")
    players = match.players
    hands_in = data.get("hands")
    if not isinstance(hands_in, list) or len(hands_in) != players:
        raise MalformedError(f"state.round.hands must list {players} hands")
    hands: list[int] = []
    seen = 0
    for seat, items in enumerate(hands_in):
        m = parse_hand(items, f"state.round.hands[{seat}]")
        if m & seen:
            raise MalformedError(f"state: {NAMES[next(bits(m & seen))]} appears twice")
        seen |= m
        hands.append(m)
    boneyard_in = data.get("boneyard", [])
    if not isinstance(boneyard_in, list):
        raise MalformedError("state.round.boneyard must be a list of tiles")
    boneyard = []
    for i, item in enumerate(boneyard_in):
        t = parse_tile(item, f"state.round.boneyard[{i}]")
        if seen >> t & 1:
            raise MalformedError(f"state: {NAMES[t]} appears twice")
        seen |= 1 << t
        boneyard.append(t)
    layout_in = data.get("layout", [])
    if not isinstance(layout_in, list):
        raise MalformedError("state.round.layout must be a list of placements")
    placements = []
    for i, item in enumerate(layout_in):
        try:
            placements.append(parse_placement(item, i == 0))
        except MalformedError as exc:
            raise MalformedError(f"state.round.layout[{i}]: {exc}") from None
    return _round_from_parts(match, data, hands, seen, boneyard, placements)


_Tiles = tuple[list[int], list[int], list[Placement]]


def _round_from_tiles(match: Match, data: object, tiles: _Tiles) -> Round:
    """`_round_from_dict` with the tiles given as bit sets and ids (see `Match.from_tiles`)."""
    if not isinstance(data, dict):
        raise MalformedError("state.round must be an object or null")
    hands_in, boneyard_in, placements = tiles
    players = match.players
    if len(hands_in) != players:
        raise MalformedError(f"state.round.hands must list {players} hands")
    hands: list[int] = []
    seen = 0
    for m in hands_in:
        if m & seen:
            raise MalformedError(f"state: {NAMES[next(bits(m & seen))]} appears twice")
        if not 0 <= m <= ALL_TILES:
            raise MalformedError("state.round.hands: not a set of tiles")
        seen |= m
        hands.append(m)
    boneyard: list[int] = []
    for t in boneyard_in:
        if seen >> t & 1:
            raise MalformedError(f"state: {NAMES[t]} appears twice")
        seen |= 1 << t
        boneyard.append(t)
    return _round_from_parts(match, data, hands, seen, boneyard, list(placements))


def _round_from_parts(match: Match, data: dict[str, Any], hands: list[int], seen: int,
                      boneyard: list[int], placements: list[Placement]) -> Round:
    """The rest of a round's decoding, once its tiles are read: layout, consistency, scalars."""
    family = match.family
    players = match.players
    layout = family.new_layout()
    try:
        layout.replay(placements)
    except MalformedError as exc:  # "entry 3 is a second lead", "impossible layout at entry 2: ..."
        raise MalformedError(f"state.round.layout: {exc}") from None
    if layout.on_table & seen:
        raise MalformedError(f"state: {NAMES[next(bits(layout.on_table & seen))]} is both on the table and elsewhere")
    seen |= layout.on_table
    if seen != ALL_TILES:
        missing = ", ".join(NAMES[t] for t in bits(ALL_TILES & ~seen))
        raise MalformedError(f"state: tiles missing (every one of the {TILE_COUNT} must be somewhere): {missing}")
    leader = _seat(data.get("leader", 0), players, "state.round.leader")
    over = _bool(data.get("over", False), "state.round.over")
    lead_mask = ALL_TILES
    if not placements and not over:
        lead_mask = family.lead_mask(match._context(), hands, leader)
    rnd = Round(family, hands, boneyard, leader, lead_mask, layout)
    reserve = _nonneg(data.get("reserve", 0), "state.round.reserve")
    if reserve != min(family.reserve, rnd.reserve + len(boneyard)) and reserve != rnd.reserve:
        raise MalformedError(f"state.round.reserve: {reserve}, but the variant keeps {family.reserve}")
    rnd.reserve = min(reserve, len(boneyard))
    rnd.to_move = _seat(data.get("to_move", leader), players, "state.round.to_move")
    if not placements and rnd.to_move != leader:
        raise MalformedError("state.round: before the lead, the seat to move must be the leader")
    rnd.passes = _nonneg(data.get("passes", 0), "state.round.passes")
    rnd.out = _seat_list(data.get("out", []), players, "state.round.out")
    for s in rnd.out:
        if hands[s]:
            raise MalformedError(f"state.round.out: seat {s}'s hand is not empty")
    lp = data.get("last_placer")
    rnd.last_placer = None if lp is None else _seat(lp, players, "state.round.last_placer")
    rnd.last_score = _int(data.get("last_score", 0), "state.round.last_score")
    if rnd.last_score and not family.counts:
        raise MalformedError(f"state.round.last_score: {match.variant} scores nothing in play, so it is 0")
    rnd.over = over
    ending = data.get("ending")
    if ending is not None and ending not in ENDINGS:
        raise MalformedError(f"state.round.ending: {one_of(ending, [*ENDINGS, None])}")
    if over != (ending is not None):
        raise MalformedError("state.round: over and ending disagree")
    rnd.ending = ending
    w = data.get("winner")
    rnd.winner = None if w is None else _seat(w, max(players, family.sides), "state.round.winner")
    rp = data.get("round_points")
    rnd.round_points = None if rp is None else _int_list(rp, players, "state.round.round_points")
    pl = data.get("places")
    rnd.places = None if pl is None else _int_list(pl, players, "state.round.places")
    if not over:
        empty = [s for s, h in enumerate(hands) if h == 0]
        if empty and not family.many_out:
            raise MalformedError(f"state.round: seat {empty[0]} has no tiles, so the round is over")
        if sorted(empty) != sorted(rnd.out):
            raise MalformedError("state.round.out must list exactly the seats with no tiles")
        if placements and rnd.to_move in rnd.out:
            raise MalformedError("state.round: the seat to move has gone out")
    return rnd


def _ledger_from_dict(data: object, players: int, sides: int, score_is_written: bool) -> Ledger:
    if not isinstance(data, dict):
        raise MalformedError("state.ledger must be an object")
    _known_keys(data, LEDGER_KEYS, "state.ledger")
    _no_nulls(data, frozenset(), "state.ledger")
    ledger = Ledger.empty(sides)
    for key in ("written", "remembered", "scores"):
        if data.get(key, []) != []:
            setattr(ledger, key, _int_list(data[key], sides, f"state.ledger.{key}"))
    for key in ("written", "remembered"):
        if any(v < 0 for v in getattr(ledger, key)):
            raise MalformedError(f"state.ledger.{key} must not be negative")
    if score_is_written and ledger.scores != ledger.written:
        # K, O: scores mirror the written points; a state written before they did has zeros there.
        if any(ledger.scores):
            raise MalformedError("state.ledger.scores must equal state.ledger.written in this variant "
                                 "(the score is the written points)")
        ledger.scores = ledger.written.copy()
    ledger.pot = _nonneg(data.get("pot", 0), "state.ledger.pot")
    history = data.get("history", [])
    if not isinstance(history, list):
        raise MalformedError("state.ledger.history must be a list")
    for i, record in enumerate(history):
        if not isinstance(record, dict):
            raise MalformedError(f"state.ledger.history[{i}] must be an object")
        ledger.history.append(_record_from_dict(record, i, players, sides))
    return ledger


def _record_from_dict(r: dict[str, Any], i: int, players: int, sides: int) -> dict[str, Any]:
    """One row of the score table, checked against the match's seats and sides."""
    where = f"state.ledger.history[{i}]"
    _known_keys(r, RECORD_KEYS, where)
    ending = r.get("ending")
    if ending not in ENDINGS:
        raise MalformedError(f"{where}.ending: {one_of(ending, ENDINGS)}")
    def ints(key: str) -> list[int]:
        v = r.get(key, [])
        if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            raise MalformedError(f"{where}.{key} must be a list of integers")
        if any(not -_INT_LIMIT <= x <= _INT_LIMIT for x in v):
            raise MalformedError(f"{where}.{key}: an integer is out of range")
        return list(v)
    def opt_int(key: str) -> int | None:
        v = r.get(key)
        if v is None:
            return None
        return _int(v, f"{where}.{key}")
    record = {
        "number": _nonneg(r.get("number", i + 1), f"{where}.number"),
        "ending": ending,
        "winner": opt_int("winner"),
        "last_placer": opt_int("last_placer"),
        "round_points": ints("round_points"),
        "written": ints("written"),
        "remembered": ints("remembered"),
        "pot": _nonneg(r.get("pot", 0), f"{where}.pot"),
        "scores": ints("scores"),
        "places": ints("places"),
        "out": ints("out"),
    }
    if record["winner"] is not None:
        _seat(record["winner"], max(players, sides), f"{where}.winner")
    if record["last_placer"] is not None:
        _seat(record["last_placer"], players, f"{where}.last_placer")
    _seat_list(record["out"], players, f"{where}.out")
    for key, n in (("round_points", players), ("places", players), ("written", sides),
                   ("remembered", sides), ("scores", sides)):
        if record[key] and len(record[key]) != n:
            raise MalformedError(f"{where}.{key} must list {n} integers")
    return record


def _seed(v: object, what: str) -> int | None:
    if v is not None and (not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= MAX_SEED):
        raise MalformedError(f"{what} must be an integer in 0..2^64-1 or null")
    return v


def _int(v: object, what: str) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise MalformedError(f"{what} must be an integer, not {v!r}")
    if abs(v) > 10**9:
        raise MalformedError(f"{what} is out of range")
    return v


def _nonneg(v: object, what: str) -> int:
    v = _int(v, what)
    if v < 0:
        raise MalformedError(f"{what} must not be negative")
    return v


def _bool(v: object, what: str) -> bool:
    if not isinstance(v, bool):
        raise MalformedError(f"{what} must be true or false")
    return v


def _seat(v: object, players: int, what: str) -> int:
    v = _int(v, what)
    if not 0 <= v < players:
        raise MalformedError(f"{what} must be a seat 0..{players - 1}, not {v}")
    return v


def _seat_list(v: object, n: int, what: str) -> list[int]:
    if not isinstance(v, list):
        raise MalformedError(f"{what} must be a list")
    if not v:
        return []
    result = [_seat(x, n, what) for x in v]
    if len(set(result)) != len(result):
        raise MalformedError(f"{what} names a seat twice")
    return result


def _int_list(v: object, n: int, what: str) -> list[int]:
    if not isinstance(v, list) or len(v) != n:
        raise MalformedError(f"{what} must list {n} integers")
    for x in v:
        if type(x) is not int or not -_INT_LIMIT <= x <= _INT_LIMIT:
            return [_int(x, what) for x in v]  # names the bad item (or takes an int subclass)
    return v.copy()


_INT_LIMIT = 10**9
#: One call adds far less than this to any number (a round, a hand's points): a state within it of
#: `_INT_LIMIT` plays no further (`Match.at_limit`), so every answer decodes again.
HEADROOM = 10**6
AT_LIMIT = ("this match's numbers (rounds played, points) are at the limit a state can hold "
            f"({_INT_LIMIT - HEADROOM:,}): start a new match")


def _near_limit(match: Match) -> bool:
    ledger = match.ledger
    numbers = [match.round_number, ledger.pot, *ledger.written, *ledger.remembered, *ledger.scores]
    return max(abs(v) for v in numbers) > _INT_LIMIT - HEADROOM
