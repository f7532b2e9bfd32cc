"""Kingdomino: the game, with the same shape as `Match` (RULES.md KD).

State in, state out: `Kingdomino.new` deals, `apply` changes the game in place,
`to_dict` / `from_dict` encode and decode (`kingdomino_state`, validating every field), `view`
hides what a player may not see (the undrawn pile's order). A refused action
raises `MalformedError` (cannot be read) or `IllegalActionError` (not allowed
now) and leaves the game exactly as it was: everything is checked before
anything changes.

Turn order (RULES.md KD): the first row is laid and the kings pick from it in
lot order (`kings`, the deal's first-pick order). Then each round the kings act
in the order of their tiles in the current row, lowest number first: the owner
places that tile (or discards it when it fits nowhere), then moves the king to
a free tile of the next row. A new row is laid when the current one is used up;
the last round has no next row and so no picks. With 2 players each has two
kings.

Kings are numbered by first-pick order: king k belongs to player ``kings[k]``.

>>> game, _ = Kingdomino.new(4, seed=7)
>>> game.to_move == game.kings[0] and game.legal_actions()[0].startswith("pick ")
True
>>> while not game.game_over:
...     _ = game.apply(game.legal_actions()[0])
>>> Kingdomino.from_dict(game.to_dict()).to_dict() == game.to_dict()
True
"""
from __future__ import annotations

import secrets
from collections.abc import Iterable
from typing import Any

from .botseats import check_bots
from .errors import IllegalActionError, MalformedError
from .events import Event
from .exits import ABORT, DECIDED_BY, EVENT_TYPES, check_how, exit_step
from .history import append, entry
from .kingdomino_board import DIRECTIONS, Kingdom, geometry
from .kingdomino_notation import KingdominoMove
from .kingdomino_score import (
    HARMONY_BONUS,
    MIDDLE_KINGDOM_BONUS,
    game_result,
    kingdom_score,
    rank,
)
from .kingdomino_setup import (
    DYNASTY_GAMES,
    NAME,
    KDConfig,
    check_seed,
    config,
    dynasty_deals,
    explicit_deal,
    game_seed,
    seeded_deal,
)
from .kingdomino_state import KingdominoState, decode, encode
from .kingdomino_tiles import describe
from .kingdomino_turns import lay_row, pick, placed
from .views import kingdomino_legal_view, kingdomino_public_view, redact_kingdomino_events


class Kingdomino(KingdominoState):
    """A game of Kingdomino: the rows, the kings, the pile and every player's kingdom.

    `current` holds the tiles of the current row still to be placed (ascending,
    with the king standing on each); `next` the next row (a king or -1 per
    tile). `picker` is the king that must pick now (-1: none): in the first
    round the next king in lot order, later the king that has just placed.

    Dynasty (option `dynasty`, issue 14): one match of `DYNASTY_GAMES` games by
    the same players. The fields above hold the game being played (or the last
    one, once the dynasty is over); `games` the results of the games finished
    before it; `deals` the explicit deals of the games not yet started (empty
    with a seed: each game's deal derives from it, `game_seed`). When a game
    ends the next one is dealt and started at once, in the same `apply`.
    """

    __slots__ = ("shed",)

    def __init__(self, cfg: KDConfig, seed: int | None, kings: list[int], pile: list[int]) -> None:
        geo = geometry(cfg.size)
        super().__init__(cfg, seed, kings, pile, [], [], [], [], -1, [Kingdom(geo) for _ in range(cfg.players)],
                         [], [])
        #: Entries that left the log (`Match.shed`): none, a game's log is bounded and stays whole.
        self.shed: list[str] = []

    @property
    def log_count(self) -> int:
        """Entries that left the log as rounds ended (`Match.log_count`): none, the log stays whole."""
        return 0

    @property
    def log_digest(self) -> bytes:
        """The digest chaining the entries that left the log (`Match.log_digest`): none left it."""
        return b""

    # ------------------------------------------------------------ creation

    @classmethod
    def new(
        cls,
        players: object,
        options: object = None,
        seed: object = None,
        deal: object = None,
        bots: object = None,
    ) -> tuple[Kingdomino, list[Event]]:
        """A new game: from an explicit `deal` ({"tiles": pile, "kings": first-pick order}) or a seed.

        With neither, a random seed is drawn (and recorded, so the game can be replayed).
        A dynasty's explicit deal gives every game's: ``{"games": [deal, deal, deal]}``.
        """
        cfg = config(players, options)
        checked = check_seed(seed)
        if deal is not None and checked is not None:
            raise MalformedError("give a seed or a deal, not both")
        deals: list[tuple[list[int], list[int]]] = []
        if deal is not None and cfg.dynasty:
            deals = dynasty_deals(cfg, deal)
            pile, kings = deals.pop(0)
        elif deal is not None:
            pile, kings = explicit_deal(cfg, deal)
        else:
            if checked is None:
                checked = secrets.randbits(63)
            pile, kings = seeded_deal(cfg, checked)
        game = cls(cfg, checked, kings, pile)
        game.bots = check_bots(bots, cfg.players, "bots")
        game.deals = deals
        game.log = [entry("new", None if deal is None else _deal_payload(cfg.dynasty, pile, kings, deals))]
        events: list[Event] = []
        game._begin(events)
        return game, events

    @classmethod
    def start(cls, variant: object, players: object, *, options: object = None, seed: object = None,
              deal: object = None, setup: object = None, no_deal: bool = False,
              bots: object = None) -> tuple[Kingdomino, list[Event]]:
        """`new` with the arguments every kind of game starts from (`games.new_game`): a game starts
        dealt, so a `setup` or `no_deal` is refused. `variant` is Kingdomino's (the registry's choice)."""
        if setup is not None:
            raise MalformedError("setup: kingdomino has no setup (a game starts dealt)")
        if no_deal:
            raise MalformedError("no_deal: kingdomino has no no deal (a game starts dealt)")
        return cls.new(players, options=options, seed=seed, deal=deal, bots=bots)

    @classmethod
    def from_log_start(cls, variant: str, players: int, options: dict[str, Any], seed: int | None,
                       payload: object) -> tuple[Kingdomino, list[Event]]:
        """The game as its log's first step (``new``, with its explicit deal if it had one) starts it."""
        return cls.new(players, options, seed=None if payload is not None else seed, deal=payload)

    def _begin(self, events: list[Event]) -> None:
        """Announce the game dealt in the fields, lay its first row and let the first king pick."""
        started: Event = {"type": "game_started", "players": self.cfg.players, "kings": list(self.kings),
                          "seed": self.seed}
        if self.cfg.dynasty:
            started["game"] = self.game_number
        events.append(started)
        self._lay_row(events)
        self.picker = 0

    def _next_game(self, events: list[Event]) -> None:
        """Dynasty: deal the next game (from the seed, or the next explicit deal) and start it."""
        if self.seed is not None:
            pile, kings = seeded_deal(self.cfg, game_seed(self.seed, len(self.games)))
        else:
            pile, kings = self.deals.pop(0)
        self.pile = pile
        self.kings = kings
        self.current_tiles = []
        self.current_kings = []
        geo = geometry(self.cfg.size)
        self.kingdoms = [Kingdom(geo) for _ in range(self.cfg.players)]
        self._begin(events)

    def _lay_row(self, events: list[Event]) -> None:
        """Lay the next row from the pile, in ascending number order (empty when the pile is)."""
        lay_row(self, self.cfg.kings)
        self._row_laid(events)

    def _row_laid(self, events: list[Event]) -> None:
        """Announce the next row just laid (none once the pile is empty)."""
        if self.next_tiles:
            events.append({"type": "row_laid", "tiles": list(self.next_tiles)})

    # ------------------------------------------------------------ queries

    @property
    def players(self) -> int:
        return self.cfg.players

    @property
    def options(self) -> dict[str, Any]:
        """The options that differ from the preset's defaults."""
        return self.cfg.options

    @property
    def game_over(self) -> bool:
        """The game (a dynasty: its last game) is over: nothing more can be played (played to
        its end, or ended by a player's timeout or an exit)."""
        return self._stopped or self._played_out

    @property
    def _stopped(self) -> bool:
        """A player's timeout or an exit (`exits`) ended the game before its end."""
        return self.timed_out >= 0 or self.exit != ""

    # ------------------------------------------------------------ the Game protocol (game.py)

    @property
    def variant(self) -> str:
        return NAME

    @property
    def turn(self) -> int | None:
        """The player to act now; None once the game (a dynasty: its last) is over."""
        return None if self.game_over else self.to_move

    @property
    def finished(self) -> bool:
        """The game (a dynasty: all of it) is over (`game_over`)."""
        return self.game_over

    @property
    def unit(self) -> str:
        return "game"

    @property
    def seat_name(self) -> str:
        return "player"

    def view_for(self, viewer: int | None) -> dict[str, Any]:
        """`viewer`'s view: a player's own (`view`), or the public one for None (`views`)."""
        return kingdomino_public_view(self) if viewer is None else self.view(viewer)

    def redact(self, events: Iterable[Event], viewer: int | None) -> list[Event]:
        """Events as any player sees them (`viewer` does not matter): the seed hidden."""
        return redact_kingdomino_events(events)

    def spectated(self, events: list[Event]) -> list[Event]:
        """A spectator sees what a player does: the events without the seed."""
        return redact_kingdomino_events(events)

    def seen_by(self, events: list[Event], viewer: int | None) -> list[Event]:
        """Every viewer sees what a player does: the events without the seed."""
        return redact_kingdomino_events(events)

    def match_scores(self) -> list[int]:
        """Each player's score so far, summed over a dynasty's games (`totals`)."""
        return self.totals()["scores"]

    def result(self) -> dict[str, Any] | None:
        """Once the game (a dynasty: all of it) is over: winners, how decided, the totals' scores."""
        if not self.game_over:
            return None
        winners, decided_by = self.ranking()
        return {"winners": winners, "decided_by": decided_by, "scores": self.totals()["scores"]}

    @property
    def _played_out(self) -> bool:
        """The last row is placed (the game ended by its rules, not by a timeout)."""
        return self.picker < 0 and not self.current_tiles

    @property
    def game_number(self) -> int:
        """The game in the fields, 1-based: 1..3 in a dynasty, always 1 otherwise."""
        return len(self.games) + 1

    @property
    def to_move(self) -> int | None:
        """The player whose king acts now (None once the game is over)."""
        if self._stopped:
            return None
        if self.picker >= 0:
            return self.kings[self.picker]
        if self.current_tiles:
            return self.kings[self.current_kings[0]]
        return None

    def legal_actions(self) -> list[str]:
        """Every legal action of the player to move (FORMAT.md): picks in ascending tile order;
        placements by direction N, E, S, W, then square; ``discard N`` only when nothing fits."""
        if self._stopped:
            return []
        if self.picker >= 0:
            return [f"pick {t}" for t, k in zip(self.next_tiles, self.next_kings) if k < 0]
        if not self.current_tiles:
            return []
        tile = self.current_tiles[0]
        placements = self.kingdoms[self.kings[self.current_kings[0]]].placements(tile)
        return placements if placements else [f"discard {tile}"]

    def scores(self) -> list[int]:
        """Per player, in the game being played (a dynasty: see `totals`): regions' squares x
        crowns; the option bonuses once the game is over (played out: a timeout earns none)."""
        over = self._played_out
        return [kingdom_score(self.cfg, kingdom, over) for kingdom in self.kingdoms]

    def largest_region(self) -> list[int]:
        return [k.largest_region() for k in self.kingdoms]

    def crowns(self) -> list[int]:
        return [k.crowns() for k in self.kingdoms]

    def totals(self) -> dict[str, list[int]]:
        """Per player, summed over the games so far, the one being played included (its bonuses
        once over): ``scores``, ``largest_region`` and ``crowns``. Without dynasty: this game's."""
        scores, largest, crowns = self.scores(), self.largest_region(), self.crowns()
        for result in self.games:
            for p in range(self.cfg.players):
                scores[p] += result.scores[p]
                largest[p] += result.largest_region[p]
                crowns[p] += result.crowns[p]
        return {"scores": scores, "largest_region": largest, "crowns": crowns}

    def ranking(self) -> tuple[list[int], str | None]:
        """(winners, decided_by) once over, else ([], None). The best score; tie: the larger single
        region, then more crowns, else shared (RULES.md KD). A dynasty ranks by its totals: scores,
        then largest regions and crowns, both summed over the games (issue 14). `decided_by` names
        the key that decided: ``score``, ``largest_region``, ``crowns`` or ``shared``; after a timeout
        ``timeout``, after an exit its word (`exits.DECIDED_BY`: ``resign``, ``gone``, ``aborted``, the
        last with no winners)."""
        if not self.game_over:
            return [], None
        if self.exit == ABORT:
            return [], DECIDED_BY[ABORT]
        t = self.totals()
        if self.timed_out >= 0:
            return self._forfeit_winners(t), DECIDED_BY[self.exit] if self.exit else "timeout"
        return rank(t["scores"], t["largest_region"], t["crowns"])

    def _forfeit_winners(self, t: dict[str, list[int]]) -> list[int]:
        """After a timeout: the best of the other players by the usual keys (ties shared)."""
        others = [p for p in range(self.cfg.players) if p != self.timed_out]
        winners, _ = rank([t["scores"][p] for p in others], [t["largest_region"][p] for p in others],
                          [t["crowns"][p] for p in others])
        return [others[i] for i in winners]

    def winners(self) -> list[int]:
        """Once over: the best score; tie: the larger single region, then more crowns, else shared.
        A dynasty: the same by the totals of its games."""
        return self.ranking()[0]

    def game_scores(self) -> list[list[int]]:
        """Per game so far (the one being played last, running), each player's score."""
        return [r.scores.copy() for r in self.games] + [self.scores()]

    # ------------------------------------------------------------ play

    def apply(self, action: object, player: object = None) -> list[Event]:
        """Apply one action of the player to move; returns what happened.

        `player`, when given, must be the player to move. Refusals change nothing.
        """
        return self.apply_move(KingdominoMove.parse(action), None, player)

    def apply_move(self, action: object, text: str | None = None, player: object = None) -> list[Event]:
        """`apply` for a move already parsed (a `KingdominoMove`, as a record's entry carries it; bots'
        playouts build these values and never format or parse a string): the same checks, the same
        result; `text`, the action as its writer spelled it, is for the messages. Another game's move
        is refused (`IllegalActionError`)."""
        if type(action) is not KingdominoMove:
            raise IllegalActionError(f"{text if text is not None else action!r}: not a Kingdomino move")
        verb, tile, x, y, d = action
        if self.game_over:
            raise IllegalActionError("the game is over")
        mover = self.to_move
        if player is not None and type(player) is not int:
            raise MalformedError(f"player must be an integer, not {type(player).__name__}")
        if player is not None and player != mover:
            raise IllegalActionError(f"it is player {mover}'s turn, not player {player}'s")
        events: list[Event] = []
        if verb == "pick":
            self._pick(tile, events)
        else:
            self._place(verb, tile, x, y, d, events)
        append(self.log, action.text())
        if self.game_over:
            self._game_ended(events)
        return events

    def _game_ended(self, events: list[Event]) -> None:
        """Announce the end of the game with its tie-breaks; a dynasty then starts its next game,
        or, after its last, announces its own end by the totals."""
        result = game_result(self.cfg, self.kingdoms)
        ended: Event = {"type": "game_over", "scores": result.scores.copy(),
                        "largest_region": result.largest_region.copy(), "crowns": result.crowns.copy(),
                        "winners": result.winners.copy(), "decided_by": result.decided_by}
        if not self.cfg.dynasty:
            events.append(ended)
            return
        ended["game"] = self.game_number
        events.append(ended)
        if self.game_number < DYNASTY_GAMES:
            self.games.append(result)
            self._next_game(events)
            return
        totals = self.totals()
        winners, decided_by = self.ranking()
        events.append({"type": "dynasty_over", "games": self.game_scores(), "scores": totals["scores"],
                       "largest_region": totals["largest_region"], "crowns": totals["crowns"],
                       "winners": winners, "decided_by": decided_by})

    def _pick(self, tile: int, events: list[Event]) -> None:
        king = self.picker
        if king < 0:
            raise IllegalActionError(
                f"tile {self.current_tiles[0]} must be placed (or discarded) before the next pick")
        if tile not in self.next_tiles:
            raise IllegalActionError(f"tile {tile} is not in the next row ({self._row_text()})")
        i = self.next_tiles.index(tile)
        taken = self.next_kings[i]
        if taken >= 0:
            raise IllegalActionError(f"tile {tile} is already taken by player {self.kings[taken]}")
        events.append({"type": "tile_picked", "player": self.kings[king], "king": king, "tile": tile})
        if pick(self, i, self.cfg.kings):  # the current row was used up: the next is, and a new one is laid
            self._row_laid(events)

    def _place(self, verb: str, tile: int, x: int, y: int, d: int, events: list[Event]) -> None:
        if self.picker >= 0:
            raise IllegalActionError(f"player {self.kings[self.picker]} must pick a tile of the next row first")
        head = self.current_tiles[0]
        if tile != head:
            raise IllegalActionError(f"tile {head} is the one to {verb} now, not tile {tile}")
        king = self.current_kings[0]
        player = self.kings[king]
        kingdom = self.kingdoms[player]
        if verb == "place":
            if not kingdom.can_place(tile, x, y, d):
                raise IllegalActionError(
                    f"place {tile} {x},{y} {DIRECTIONS[d]}: {kingdom.why_not(tile, x, y, d)}")
            kingdom.place(tile, x, y, d)
            events.append({"type": "tile_placed", "player": player, "tile": tile,
                           "square": [x, y], "direction": DIRECTIONS[d]})
        else:
            if kingdom.fits(tile):
                raise IllegalActionError(f"tile {describe(tile)} fits in the kingdom, so it must be placed")
            kingdom.discard(tile)
            events.append({"type": "tile_discarded", "player": player, "tile": tile})
        placed(self)

    def timeout(self, player: object) -> list[Event]:
        """`player` timed out (ran out of time, or left): it forfeits. The game (a dynasty: the
        whole match) ends at once; the winners are the best of the other players by the usual
        keys (score, largest region, crowns; else shared), ``decided_by`` is ``"timeout"``, and no
        end-of-game bonus is counted. Any player may time out, not only the one to move."""
        if not isinstance(player, int) or isinstance(player, bool) or not 0 <= player < self.players:
            raise MalformedError(f"player must be 0..{self.players - 1}, not {player!r}")
        if self.game_over:
            raise IllegalActionError("the game is over")
        self.timed_out = player
        append(self.log, f"timeout {player}")
        return self._stopped_here([{"type": "timed_out", "player": player}])

    def end(self, how: object, player: object) -> list[Event]:
        """An exit of the game (`exits`): `player` resigns or was gone (both scored exactly as its
        timeout: it forfeits, ``decided_by`` ``resign`` or ``gone``), or aborts (the game, a dynasty all
        of it, ends with no winners, ``decided_by`` ``aborted``). The exit's event (``resigned``,
        ``gone``, ``aborted``, with the ``player``), then ``game_over`` (and a dynasty's ``dynasty_over``)."""
        how = check_how(how)
        if not isinstance(player, int) or isinstance(player, bool) or not 0 <= player < self.players:
            raise MalformedError(f"player must be 0..{self.players - 1}, not {player!r}")
        if self.game_over:
            raise IllegalActionError("the game is over")
        if how != ABORT:
            self.timed_out = player
        self.exit = how
        append(self.log, exit_step(how, player))
        return self._stopped_here([{"type": EVENT_TYPES[how], "player": player}])

    def _stopped_here(self, events: list[Event]) -> list[Event]:
        """`events` (a timeout's or an exit's) and the end of the game they stopped, as `ranking` decides
        it: no end-of-game bonus is counted."""
        t = self.totals()
        winners, decided_by = self.ranking()
        scores, largest, crowns = self.scores(), self.largest_region(), self.crowns()
        ended: Event = {"type": "game_over", "scores": scores, "largest_region": largest, "crowns": crowns,
                        "winners": winners, "decided_by": decided_by}
        if self.cfg.dynasty:
            ended["game"] = self.game_number
            events.append(ended)
            events.append({"type": "dynasty_over", "games": self.game_scores(), "scores": t["scores"],
                           "largest_region": t["largest_region"], "crowns": t["crowns"],
                           "winners": winners, "decided_by": decided_by})
        else:
            events.append(ended)
        return events

    def _row_text(self) -> str:
        return ", ".join(str(t) for t in self.next_tiles) or "none: this is the last round"

    # ------------------------------------------------------------ copies, states and views

    def copy(self) -> Kingdomino:
        # Through the constructor, not `Kingdomino.__new__`: compiled by mypyc, `__new__` runs `__init__`.
        new = Kingdomino(self.cfg, self.seed, self.kings.copy(), self.pile.copy())
        new.current_tiles = self.current_tiles.copy()
        new.current_kings = self.current_kings.copy()
        new.next_tiles = self.next_tiles.copy()
        new.next_kings = self.next_kings.copy()
        new.picker = self.picker
        new.timed_out = self.timed_out
        new.exit = self.exit
        new.bots = dict(self.bots)
        new.kingdoms = [k.copy() for k in self.kingdoms]
        new.games = self.games.copy()           # results are never changed once made
        new.deals = [(pile.copy(), kings.copy()) for pile, kings in self.deals]
        new.log = self.log.copy()
        return new

    def to_dict(self) -> dict[str, Any]:
        """The whole state as JSON (`kingdomino_state.encode`; the pile's order included: see `view`
        for players); kept here because the `Game` protocol names a state's dict form so."""
        return encode(self)

    @classmethod
    def from_dict(cls, data: object) -> Kingdomino:
        """Decode and validate a state (`kingdomino_state.decode`); MalformedError names the first
        field that is wrong."""
        parts = decode(data)
        game = cls(parts.cfg, parts.seed, parts.kings, parts.pile)
        game.current_tiles = parts.current_tiles
        game.current_kings = parts.current_kings
        game.next_tiles = parts.next_tiles
        game.next_kings = parts.next_kings
        game.picker = parts.picker
        game.timed_out = parts.timed_out
        game.exit = parts.exit
        game.kingdoms = parts.kingdoms
        game.games = parts.games
        game.deals = parts.deals
        game.bots = parts.bots
        game.log = parts.log
        return game

    def view(self, player: object) -> dict[str, Any]:
        """What `player` may see: everything but the undrawn pile's order (and the seed that
        fixes it); only the pile's size is shown, not even which tiles are in it.

        A dynasty's ``dynasty`` keeps the finished games and hides the deals of the games to
        come, adding ``game`` (1..3, the one being played), ``of`` (3), ``game_scores`` (per
        game, the one being played last) and ``totals`` (scores, largest_region, crowns summed
        over the games so far); ``winners``, ``decided_by`` and ``game_over`` are then the dynasty's."""
        if not isinstance(player, int) or isinstance(player, bool) or not 0 <= player < self.players:
            raise MalformedError(f"player must be 0..{self.players - 1}, not {player!r}")
        state = self.to_dict()
        del state["pile"], state["seed"], state["log"]
        state["timed_out"] = None if self.timed_out < 0 else self.timed_out
        to_move = self.to_move
        legal = self.legal_actions() if to_move == player else []
        state.update({
            "player": player,
            "pile_size": len(self.pile),
            "grids": [k.grid() for k in self.kingdoms],
            "discarded": [k.discards for k in self.kingdoms],
            "to_move": to_move,
            "legal": legal,
            "legal_moves": kingdomino_legal_view(legal),
            "scores": self.scores(),
            "largest_region": self.largest_region(),
            "crowns": self.crowns(),
            "game_over": self.game_over,
            "winners": self.winners(),
            "decided_by": self.ranking()[1],
        })
        if self.cfg.dynasty:
            state["dynasty"] = {
                "games": state["dynasty"]["games"],
                "game": self.game_number,
                "of": DYNASTY_GAMES,
                "game_scores": self.game_scores(),
                "totals": self.totals(),
            }
        return state


def _deal_payload(dynasty: bool, pile: list[int], kings: list[int],
                  later: list[tuple[list[int], list[int]]]) -> dict[str, Any]:
    """An explicit deal as the log keeps it (a dynasty's: every game's)."""
    first = {"tiles": pile.copy(), "kings": kings.copy()}
    if not dynasty:
        return first
    return {"games": [first] + [{"tiles": p.copy(), "kings": k.copy()} for p, k in later]}


__all__ = ["HARMONY_BONUS", "MIDDLE_KINGDOM_BONUS", "Event", "Kingdomino"]
