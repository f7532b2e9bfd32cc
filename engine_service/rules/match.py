"""A match: the public face of the rules library.

State in, state out: `Match.from_dict` decodes and validates a state,
`to_dict` encodes it (both in `match_form`, the dict form's codec: this module
holds what the calls change), and between them `apply`, `settle`, `start_round` and
`timeout` and `end` change it in place (python-chess style: `copy()` when you need the
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
from .checks import check_int_list, check_nonneg, check_seat, check_seed
from .deal import deal_with_redeals, derive_seed, explicit_deal
from .errors import IllegalActionError, MalformedError, MisdealError
from .events import Event
from .exits import ABORT, EVENT_TYPES, check_how, exit_step
from .family import Family, MatchEnd, RoundResult
from .history import DRAW_STEP, MAX_LOG, NO_STEP, PASS_STEP, entry, is_deal, play_step, unstep
from .match_form import decode, encode
from .match_state import AT_LIMIT, Left, MatchState, left_lines, near_limit
from .notation import MOVES, Move, format_placement
from .options import OptionValue
from .registry import Preset, check_players, make_family
from .round import Round
from .tiles import NAMES, names, parse_hands
from .views import legal_view, public_view, redact_events, shown_hands, table_view


class Match(MatchState):
    """A match of one preset: its state (`MatchState`: ledger, current round, outcome, log) and the
    calls that change it."""

    __slots__ = ("_shed_lines", "_left")

    def __init__(self, preset: Preset, family: Family, overrides: dict[str, OptionValue],
                 players: int, seed: int | None) -> None:
        super().__init__(preset, family, overrides, players, seed)
        #: The entries that left the log since this object was made (not part of the state), as text
        #: (`shed`), and those not written as text yet (`match_state.Left`).
        self._shed_lines: list[str] = []
        self._left: list[Left] = []

    @property
    def shed(self) -> list[str]:
        """The entries that left the log since this object was made (not part of the state): a call's
        answer's ``record_lines``; a match played here from its start holds them all. Written as text when
        first read (a match played in process, as the rules' benchmarks do, never pays)."""
        if self._left:
            self._shed_lines += left_lines(self._left)
            self._left = []
        return self._shed_lines

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
        checked = check_seed(seed, "seed")
        if checked is None and deal is None and not no_deal:
            checked = secrets.randbits(63)
        match = cls(p, family, effective, check_players(p, players), checked)
        match.bots = check_bots(bots, match.players, "bots")
        if setup is not None:
            match._setup(setup)
        match.log_text = [entry("new", None if setup is None else _setup_payload(setup))]
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
                setattr(self.ledger, key, check_int_list(setup[key], sides, f"setup.{key}"))
        if "pot" in setup:
            self.ledger.pot = check_nonneg(setup["pot"], "setup.pot")
        for key in ("written", "remembered"):
            if any(v < 0 for v in getattr(self.ledger, key)):
                raise MalformedError(f"setup.{key} must not be negative")  # as a decoded state's
        if self.family.score_is_written:
            if "scores" in setup and self.ledger.scores != self.ledger.written:
                raise MalformedError(f"setup.scores: in {self.preset.name} the score is the written points: "
                                     "give setup.written")
            self.ledger.scores = self.ledger.written.copy()
        self.at_limit = near_limit(self)

    def start_round(self, deal: object = None) -> list[Event]:
        """Deal the next round: explicitly, or from the match seed."""
        self._between_rounds("the current round is still being played")
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
                leader_hint = check_seat(deal["leader"], self.players, "deal.leader")
        else:
            if self.seed is None:
                raise IllegalActionError("this match has no seed: give the deal explicitly")
            hands, boneyard, redeals = deal_with_redeals(
                self.players, family.hand_size, derive_seed(self.seed, self.round_number + 1),
                family.is_misdeal)
        ctx = self.round_context()
        leader, lead_mask = family.lead(ctx, hands) if leader_hint is None else \
            family.lead_given(ctx, hands, leader_hint)
        self.round = Round(family, hands, boneyard, leader, lead_mask)
        self.round_number += 1
        self._log("deal" if deal is None else entry("deal", _deal_payload(self.round, leader_hint)))
        return [{"type": "round_dealt", "number": self.round_number, "leader": leader,
                 "redealt": redeals > 0}]

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

    def apply_move(self, move: object, text: str | None = None, seat: object = None) -> list[Event]:
        """`apply` for a move already parsed (`notation.Move`, as a record's entry carries it): the
        same checks and result; `text`, the action as its writer spelled it, is for the messages.
        Another game's move is refused (`IllegalActionError`)."""
        if type(move) is not Move:
            raise IllegalActionError(f"{text if text is not None else move!r}: not a move of this game")
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
        placements = rnd.layout.placements
        laid = len(placements)
        ended = rnd.apply_move(move, events, text)
        # The log: a play by its canonical action (its first event's), which laid ``placements[laid:]``;
        # else a draw or a pass.
        if len(placements) > laid:
            action: str = events[0]["action"]
            self._log(action, play_step(action, placements, laid))
        elif events[0]["type"] == "drew":
            self._log("draw", DRAW_STEP)
        else:
            self._log("pass", PASS_STEP)
        if rnd.last_score:
            self._credit_in_play(rnd, next(e for e in events if e["type"] == "points_scored"), events)
        if ended and not self.match_over:
            events.extend(self._finish(rnd))
        if rnd.over:
            self._shed()
        return events

    # ------------------------------------------------------------ the log (history.py)

    def _log(self, item: str, step: int = NO_STEP) -> None:
        """Add `item` to a known log (an unknown one stays unknown): as its `step` code while the round's
        moves are held so and it is one (`MatchState.log_steps`), else as text, the round's moves before it
        made text too; a deal starts its round's step codes. Past `MAX_LOG` entries in all the match keeps
        no history from then on."""
        steps = self.log_steps
        held = len(self.log_text) + (0 if steps is None else len(steps))
        if not held and not self.log_count:
            return
        if self.log_count + held >= MAX_LOG:
            self.log_text = []
            self.log_steps = None
            self.log_count = 0
            self._digest = b""
            self._unchained = []
            return
        if steps is not None:
            if step != NO_STEP:
                steps.append(step)
                return
            self.log_text.extend(unstep(steps, self._placements()))
            self.log_steps = None
        self.log_text.append(item)
        if is_deal(item):
            self.log_steps = []

    def _shed(self) -> None:
        """A round has ended: its entries (and any before it) leave the state for `shed`, chained into
        `log_digest`."""
        text, steps = self.log_text, self.log_steps
        if not text and not steps:
            return
        left = (text, steps, self._placements() if steps else [])
        self._unchained.append(left)
        self._left.append(left)
        self.log_count += len(text) + (len(steps) if steps else 0)
        self.log_text = []
        self.log_steps = None

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

    def _between_rounds(self, busy: str) -> None:
        """Refuse what only comes between rounds (a deal, a settled round): the match over, the
        log at its limit, or a round still being played (`busy` says what to do instead)."""
        if self.match_over:
            raise IllegalActionError("the match is over")
        if self.at_limit:
            raise IllegalActionError(AT_LIMIT)
        if self.round is not None and not self.round.over:
            raise IllegalActionError(busy)

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
        self._between_rounds("a round is being played here: finish it instead of settling")
        if ending not in ("out", "blocked"):
            raise MalformedError(f"settle: ending must be 'out' or 'blocked', not {ending!r}")
        if not isinstance(hands, (list, tuple)) or len(hands) != self.players:
            raise MalformedError(f"settle: hands must list {self.players} hands, seat 0 first")
        masks, _ = parse_hands(hands, "settle.hands", "settle: {} is in two hands")
        out = [s for s, m in enumerate(masks) if m == 0]
        if ending == "out" and not out:
            raise MalformedError("settle: ending 'out' needs a seat with an empty hand")
        if ending == "out" and len(out) > 1 and not self.family.many_out:
            raise MalformedError("settle: only one seat can go out in this variant")
        if ending == "blocked" and out:
            raise MalformedError("settle: ending 'blocked' but a seat has an empty hand")
        if last_placer is not None:
            last_placer = check_seat(last_placer, self.players, "settle.last_placer")
        # Scored on a copy of the ledger: a family that refuses (B blocked without its fisherman)
        # leaves the match exactly as it was.
        ledger = self.ledger.copy()
        result = self.family.finish_round(ledger, ending, masks, out, last_placer, None)
        self.ledger = ledger
        self.round_number += 1
        # logged while an ended round is still held: the moves its log keeps as step codes are written
        # out from its layout (`_log`)
        self._log(entry("settle", {"ending": ending, "hands": [names(m) for m in masks],
                                   "last_placer": last_placer}))
        self.round = None
        events = self._conclude(result)
        self._shed()
        return events

    def timeout(self, seat: object) -> list[Event]:
        """Seat `seat` timed out: the match ends by the variant's timeout rule."""
        if self.match_over:
            raise IllegalActionError("the match is over")
        seat = check_seat(seat, self.players, "seat")
        end = self.family.timeout(self.ledger, seat)
        if end is None:
            raise MalformedError(f"variant {self.variant} has no timeout rule")
        self.timed_out = seat
        self._log(f"timeout {seat}")
        return [self._end_match(end)]

    def end(self, how: object, seat: object) -> list[Event]:
        """An exit of the match (`exits`): seat `seat` resigns, was gone (both: scored as its timeout
        where the variant has a timeout rule, else its side loses and, of two sides, the other wins), or
        aborts (no result). The exit's event, then ``match_ended``."""
        how = check_how(how)
        seat = check_seat(seat, self.players, "seat")
        if self.match_over:
            raise IllegalActionError("the match is over")
        end = MatchEnd([], [], []) if how == ABORT else self.family.timeout(self.ledger, seat) or self._forfeit(seat)
        self._log(exit_step(how, seat))
        return [{"type": EVENT_TYPES[how], "seat": seat}, self._end_match(end)]

    def _forfeit(self, seat: int) -> MatchEnd:
        """Where the variant has no timeout rule: `seat`'s side loses, the other wins when there are two."""
        family = self.family
        side = family.side_of(seat)
        return MatchEnd([side], [1 - side] if family.sides == 2 else [], [])

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
        new.log_text = self.log_text.copy()
        new.log_steps = None if self.log_steps is None else self.log_steps.copy()
        new.log_count = self.log_count
        new._digest = self.log_digest
        new._shed_lines = self.shed.copy()
        return new

    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON state (`match_form.encode`: the REST transparent form, mirrors proto
        MatchState); kept here because the `Game` protocol names a state's dict form so."""
        return encode(self)

    def view(self, seat: object) -> dict[str, Any]:
        """What `seat` may see: its own hand, the others' sizes, never the boneyard order."""
        seat = check_seat(seat, self.players, "seat")
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
        """Decode and validate a JSON state (`match_form.decode`); MalformedError names the first thing wrong."""
        return decode(data, cls)


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

