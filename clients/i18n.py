"""The terminal's words in English and Russian: one catalogue, every text `domino play` shows goes through `t`.

The language is chosen once, when the program starts (`use`): `--lang ru|en`, else the terminal's locale
(`language_of_environment`: the first of LC_ALL, LC_MESSAGES, LANG that is set, as the C library reads them;
one starting with `ru` is Russian), else English. The Russian game terms are the seeds' (../shared/seeds,
RULES.md) and the page's (api_gateway/play/i18n.js): «козёл», «осёл», «рыба», «яйца», «базар», «стучит»,
запомненные очки, «вышел», кость.

Seats are numbered from 1 in Russian, as the page numbers them; the English texts keep the terminal's
numbering from 0 (its tests and the people used to it read "You took seat 0"): `seat_number` says which.
A key missing from Russian falls back to English; a key missing from both is a bug (KeyError).
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Any

Entry = str | Callable[..., str]
LANGUAGES = ("en", "ru")


def ru_plural(n: int, one: str, few: str, many: str) -> str:
    """The Russian form for `n`: 1 кость, 2 кости, 5 костей (11-14 take the third)."""
    ten, hundred = n % 10, n % 100
    if ten == 1 and hundred != 11:
        return one
    if 2 <= ten <= 4 and not 12 <= hundred <= 14:
        return few
    return many


def _named(word: str, names: Mapping[str, str]) -> str:
    """`word` as `names` says it, else as it is (a name the catalogue does not know: a new variant, ending)."""
    return names.get(word, word)


EN: dict[str, Entry] = {
    # seats and names
    "you": "You",
    "seat": lambda n: f"Seat {n}",
    "seat.level": lambda n, level: f"Seat {n} ({level})",
    "seat.bot": lambda level: f"{level} bot",
    "seat.free": "free",
    "team": lambda n: f"team {n}",
    "level": lambda level: level,
    "variant": lambda name: name,
    "players": lambda n: f"{n} players",
    # the game against the computer
    "bye": "Bye.",
    "hot-seat": lambda who: f"\n== {who}: your turn (the others look away) ==",
    "next-round": "Press Enter to deal the next round (q to quit): ",
    "numbers.one": "1 plays it",
    "numbers.many": lambda n: f"1 to {n}",
    "your-move": lambda who, you, numbers: f"{who}, your move ({numbers}, or type a move; ? help, q quits): ",
    "not-played": lambda why: f"Not played: {why}",
    "help": ("Type the number of a move from the list, or its notation: a lead 3-6, a tile on an arm 3-6@E, "
             "several doubles 2-2@E+5-5@W, draw, pass; Kingdomino: pick 17, place 17 1,0 E, discard 17. q quits."),
    "no-such-move": lambda n, count: f"There is no move {n}: choose 1 to {count}.",
    "type-a-move": "Type a move number or a move.",
    "table.header": lambda variant, n, who: f"{variant}, round {n}   to move: {who}",
    "table.ends": lambda ends, count, boneyard: f"open ends: {ends}   count {count}   boneyard {boneyard}",
    "table.in-hand": lambda others: f"tiles in hand: {others}",
    "table.your-hand": "Your hand: ",
    "table.empty": "(the table is empty)",
    "table.from": "from",
    "table.arm-empty": "(empty)",
    "kd.header": lambda who, pile: f"kingdomino   to move: {who}   pile {pile} tiles",
    "kd.kingdom": lambda who, score, crowns: f"{who}: score {score}, crowns {crowns}",
    "kd.row-to-place": "row to place:",
    "kd.next-row": "next row:",
    "kd.terrains": "terrains: W wheat, F forest, L lake, G grassland, S swamp, M mine; digit = crowns; ## castle",
    "round.over": lambda n, ending, points: f"Round {n} over: {ending}. Round points: {points}",
    "round.held": lambda who, hand: f"{who} held: {hand}",
    "ending": lambda ending: ending,
    "kd.over": lambda scores, winners, by: f"Game over. Scores: {scores}. Winner: {winners} (decided by {by})",
    "match.over": lambda points: f"Match over. Final score: {points}.",
    "match.animal": lambda animal, losers: f" {'The goat' if animal == 'goat' else 'The donkey'}: {losers}.",
    "match.losing": lambda losers: f" Losing: {losers}.",
    "refusal": lambda detail: detail,
    # the score table
    "ledger.round": "round",
    "ledger.score": "score",
    "ledger.remember": "remember",
    "ledger.fish": "fish",
    "ledger.blocked": "blocked",
    "ledger.sortir": "sortir",
    "ledger.eggs": lambda n: f"eggs {n}",
    "ledger.pot": lambda n: f"eggs in the pot: {n}",
    # events
    "ev.played": lambda who, action: f"{who} played {action}",
    "ev.drew": lambda who, tile: f"{who} drew {tile}",
    "ev.drew-one": lambda who: f"{who} drew a tile",
    "ev.knocked": lambda who: f"{who} knocked (passed)",
    "ev.scored": lambda who, points: f"{who} scored {points}",
    "ev.how": lambda ending: _named(ending, {"fish": "fish (blocked)", "out": "a player went out"}),
    "ev.round-over": lambda n, how, points: f"round {n} over: {how}; round points: {points}",
    "ev.match-over": "match over",
    "ev.match-over-losing": lambda losers: f"match over; losing: {losers}",
    "ev.dealt": lambda n: f"round {n} dealt",
    "ev.dealt-leads": lambda n, who: f"round {n} dealt; {who} leads",
    "ev.picked": lambda who, tile: f"{who} picked tile {tile}",
    "ev.placed": lambda who, tile, where, direction: f"{who} placed tile {tile} at {where} {direction}",
    "ev.discarded": lambda who, tile: f"{who} discarded tile {tile}",
    "ev.row": lambda tiles: f"new row: {tiles}",
    "ev.game-over": lambda scores, winners: f"game over: scores {scores}; winners {winners}",
    "ev.dynasty-over": lambda scores, winners: f"dynasty over: totals {scores}; winners {winners}",
    "ev.timed-out": lambda who: f"{who} timed out",
    # clocks and ratings
    "clocks": lambda parts: f"clocks: {parts}",
    "clocks.running": " (running)",
    "clocks.autopilot": " (autopilot)",
    "clock.none": "no clock",
    "clock.move": lambda s: f"{s} s a move",
    "clock.bank": lambda bank, inc: f"{bank} a match + {inc} s a move",
    "clock.rule": "the variant's timeout rule",
    "clock.autopilot": lambda level: f"a {level} bot plays on",
    "clock.setting": lambda kind, rule: f"{kind}; when it runs out: {rule}",
    "clock.left": lambda left: f"[{left} left] ",
    "rating.new": "rating: new",
    "rating.of": lambda r: f"rating {r}",
    "rating.change": lambda who, before, after, delta, points, place:
        f"{who}: {before} -> {after} ({delta}){points}, place {place}",
    "rating.points": lambda p: f", +{p} rating points",
    "ratings": lambda shown: f"Ratings: {shown}.",
    "ratings.none": lambda err: f"(No ratings: {err}.)",
    "ratings.not-archived": "(The archive does not hold the match yet: no ratings to show.)",
    "ratings.not-rated": "Not rated: fewer than two sides held by players.",
    "ratings.after": "Ratings after the match:",
    # a seat of an online table
    "why.unreachable": "cannot be reached",
    "why.timeout": "no answer in time",
    "why.broke": "the connection broke",
    "retry.wait": lambda failed, why, address, wait: f"(No answer from {failed}: {why}. Trying {address} in {wait} s ...)",
    "retry.other": lambda failed, why, address: f"(The gateway {failed} {why}; going on with {address}.)",
    "lost.move": lambda why: f"(The move's answer was lost: {why}; it counted.)",
    "lost.deal": lambda why: f"(The deal's answer was lost: {why}; it counted.)",
    "resent.move": lambda why: f"(The move did not get through: {why}; sent again.)",
    "resent.deal": lambda why: f"(The deal did not get through: {why}; sent again.)",
    "no-match-dealt": lambda err: f"{err}.",
    "seat.given-up": "That seat was given up: its credential no longer works. Ask the table's host for an invite.",
    "no-gateway.all": lambda urls, err: f"No gateway answered ({urls}): {err}.",
    "seat.kept": lambda table: f"Your seat is kept: `domino play --resume {table}` comes back to it.",
    "left": lambda n: f"Bye. You left seat {n}; the table's host can invite someone else to it.",
    "back": lambda n, title, variant, players: f"Back at seat {n} of table{title}: {variant}, {players}.",
    "invite.spent": lambda n, table: (f"This invite is spent; you hold seat {n} of this table: "
                                      f"`domino play --resume {table}` comes back to it."),
    "took": lambda n, title, variant, players: f"You took seat {n} at table{title}: {variant}, {players}.",
    "credential": lambda credential, path, table: (f"Your seat's credential: {credential} (kept in {path}; "
                                                   f"`domino play --resume {table}` comes back to this seat)."),
    "waiting.seats": "Waiting for the other seats to be taken ...",
    "at-table": lambda names: f"At the table: {names}.",
    "clock": lambda setting: f"Clock: {setting}.",
    "time-out.seat": lambda who: f"{who}'s time ran out",
    "time-out.a-clock": "a clock ran out",
    "time-out.yours": "your time ran out",
    "time-out.over": lambda who, points: (f"Match over: {who} (the variant's timeout rule). "
                                          f"Final score: {points}."),
    "too-late": "Too late: the match is over.",
    "waiting.move": lambda who: f"Waiting for {who} to move ...",
    # the exits of a match: resign, abort, claim victory (docs/tables.md)
    "ev.resigned": lambda who: f"{who} resigned",
    "ev.aborted": lambda who: f"{who} aborted the match",
    "ev.gone": lambda who: f"{who} was gone: victory claimed",
    "exits.help": ("At your move you may also type resign (you lose the match), abort (before everyone has moved: "
                   "no result, no rating) or claim (victory over a person gone long enough)."),
    "exit.confirm-resign": "Resign the match? You lose it. Type yes to resign: ",
    "exit.confirm-abort": "Abort the match? It ends for everyone, no result, no rating. Type yes to abort: ",
    "exit.abort-closed": "The match can no longer be aborted: everyone has made a move. Type resign to resign.",
    "exit.claim-refused": "No victory to claim: nobody has been gone long enough.",
    "exit.not-done": "Not done.",
    "exit.failed": lambda why: f"Not done: {why}",
    "exit.over": lambda how, points: f"Match over: {how}. Final score: {points}.",
    "exit.you-resigned": "you resigned",
    "exit.resigned": lambda who: f"{who} resigned",
    "exit.aborted": lambda who: f"aborted by {who}, no result, no rating",
    "exit.gone": lambda who: f"{who} was gone, victory claimed",
    "exit.you": "you",
    "presence.away": lambda who, away: f"({who} is away: {away}.)",
    "presence.back": lambda who: f"({who} is back.)",
    "claim.ask": lambda who, away: (f"{who} has been gone {away}: type claim to claim victory "
                                    f"(Enter: keep waiting): "),
    "left.rated": "(A rated match left once everyone has moved counts as resigned.)",
    # the command
    "cli.no-gateway": lambda err: f"domino play: no gateway answered ({err}); start one with `make run`",
    "cli.no-gateway-seat": lambda err: f"domino play: no gateway answered ({err})",
    "cli.problem": lambda detail: f"domino play: {detail}",
    "cli.no-seat-kept": lambda which, path: f"domino play: no seat kept {which} in {path}; take one with --join LINK",
    "cli.for-table": lambda table: f"for table {table}",
    "cli.at-all": "at all",
    "cli.bug": lambda err, where: f"domino play: stopped by an error of this program ({err}){where}",
    "cli.bug-log": lambda path: f"; the details are in {path}",
    "cli.join-and-resume": "--join takes a new seat, --resume comes back to one: not both",
    "cli.credential-alone": "--credential goes with --resume TABLE_ID",
    "cli.credential-needs": "--credential needs --resume TABLE_ID and the gateway's --url",
    "cli.bots-count": lambda need, got: f"--bots needs {need} levels (one per other seat), got {got}",
    "cli.bots-level": lambda level, levels: f"unknown level {level!r}: {levels}",
    "cli.description": "`domino play`: a person against computer opponents in the terminal, through the REST API, "
                       "sealed mode.",
    "cli.variant": "a preset name (GET /v1/variants), e.g. kozel, all-fives, kingdomino",
    "cli.players": "how many seats, the person's included",
    "cli.bots": "the other seats' levels, comma separated, in seat order: random, greedy, expert, or human (hot-seat)",
    "cli.url": ("a REST gateway (`make run` starts one; default http://127.0.0.1:8080); repeated: other gateways "
                "of the same store, tried in turn when one cannot be reached"),
    "cli.option": "a variant option (JSON value), e.g. --option dynasty=true",
    "cli.join": ("play the seat of an online table an invite link is for (http://host:port/play?table=...&invite=...; "
                 "the gateway is the link's, then each --url)"),
    "cli.name": "with --join: the name the other players see",
    "cli.resume": ("come back to a seat taken earlier with --join (the latest, or that table's): its credential is "
                   "kept in the user's state directory"),
    "cli.credential": ("with --resume TABLE_ID and --url: the seat's credential (as --join showed it), for a seat "
                       "taken on another device"),
    "cli.lang": "the language of the screen: ru or en (default: the terminal's, from LC_ALL, LC_MESSAGES or LANG)",
    # the inbox (`domino play --inbox`, clients/play_inbox.py)
    "inbox.none": "No live games (the seats this terminal keeps, and DOMINO_PLAYER's, have none).",
    "inbox.title": lambda n: f"Your live games ({n}):",
    "inbox.line": lambda i, name, variant, players, seat: f"{i}. {name}: {variant}, {players} players; seat {seat}",
    "inbox.your-turn": "your turn",
    "inbox.turn-of": lambda who: f"{who} to move",
    "inbox.waiting": "waiting for people",
    "inbox.unread": lambda n, more: f"{n}{'+' if more else ''} new move{'' if n == 1 else 's'}",
    "inbox.left": lambda clock: f"{clock} left",
    "inbox.elsewhere": "joined on another device",
    "inbox.pick": "Resume which game? Its number, or Enter to leave: ",
    "inbox.not-here": "That game's seat was taken on another device: resume it there.",
    "inbox.no-such": lambda n: f"No game {n}.",
    "inbox.forgot": lambda n: f"Forgot {n} kept seat{'' if n == 1 else 's'}: no longer held (the table expired, or the "
                       "seat was given up).",
    "inbox.failed": lambda where, why: f"The inbox at {where} did not answer: {why}",
    "inbox.seat": lambda n: f"Seat {n}",
    "inbox.cli": "list your live games (the seats kept here, and DOMINO_PLAYER's) and resume one",
    "inbox.told": lambda n: f"While you were away ({n} new):",
    "inbox.told-item": lambda kind, table: f"  {kind}: {table}",
    # hosted tournaments (`domino play --join TOURNAMENT_LINK`, `--tournaments`: clients/play_tournament.py)
    "tour.cli": "list the public tournaments still open (the lobby), join one and play its rounds",
    "tour.joined": lambda name, place, size, joined: (f"You joined the tournament \"{name}\": place {place} of {size} "
                                                      f"({joined} joined). Waiting for the host to start it ..."),
    "tour.back": lambda name, place, size: (f"You are back in the tournament \"{name}\": place {place} of {size}."),
    "tour.sit-out": lambda n, playing: f"Round {n}: you sit out this round (playing: {playing}).",
    "tour.play": lambda n, seat, names: f"Round {n}: you play at seat {seat} (at the table: {names}).",
    "tour.round-result": lambda n, points: f"Round {n} recorded: {points}.",
    "tour.forfeit": lambda who: f"{who} forfeited it.",
    "tour.eliminated": lambda who: f"Out: {who}.",
    "tour.standings": lambda n, limit: f"Standings after round {n} (out at {limit}):",
    "tour.line": lambda place, who, total, out, official: (f"{place}. {who} {total}" + (" (out)" if out else "")
                                                           + (" *" if official else "")),
    "tour.you": " (you)",
    "tour.out": lambda total, limit: (f"You are out: your total {total} reached {limit}. The final places come when "
                                      "it ends (Ctrl-C stops waiting) ..."),
    "tour.over": lambda name: f"The tournament \"{name}\" is over. Final places (* official):",
    "tour.your-place": lambda place, n: f"Your place: {place} of {n}.",
    # a Swiss (docs/tournaments.md): points and Buchholz, byes
    "tour.bye": lambda n, points: (f"Round {n}: you have a bye this round (a bye is worth a match won: {points} "
                                   f"point{'' if points == 1 else 's'})."),
    "tour.byes": lambda who: f"Bye: {who}.",
    "tour.standings-swiss": lambda n, rounds: f"Standings after round {n} of {rounds} (points, Buchholz):",
    "tour.line-swiss": lambda place, who, score, buchholz, left, official: (
        f"{place}. {who} {score} (Buchholz {buchholz})" + (" (left)" if left else "") + (" *" if official else "")),
    "tour.left-swiss": lambda score: (f"You left the tournament: your {score} points stay in the standings. The "
                                      "final places come when it is over."),
    "tour.no-news": "Nothing new in the tournament for a long while: stopped waiting.",
    "tour.gone": "This tournament place no longer holds (you left it).",
    "tour.confirm-leave": "Leave the tournament? You forfeit (out), and it goes on without you. Type yes to leave: ",
    "tour.left": "You left the tournament.",
    "tour.lobby-none": "No public tournament is open for joining.",
    "tour.lobby-title": lambda n: f"Public tournaments open for joining ({n}):",
    "tour.lobby-line": lambda i, name, variant, joined, size: f"{i}. {name}: {variant}, {joined} of {size} joined",
    "tour.lobby-pick": "Join which tournament? Its number, or Enter to leave: ",
}

_LEVELS_RU = {"expert": "эксперт", "greedy": "жадный", "random": "случайный", "human": "человек"}
#: The variants' names in Russian, as the page names them (the seeds' names of the games).
_VARIANTS_RU = {"kozel": "Козёл", "kozel-classic": "Козёл (классический)", "osel": "Осёл",
                "bykovo": "Быковское домино", "threes-fives": "Тройки и пятёрки", "kingdomino": "Лоскутное королевство"}
_ENDINGS_RU = {"out": "выход", "fish": "рыба", "blocked": "рыба", "sortir": "сортир", "timeout": "время вышло"}


def _level_ru(level: str) -> str:
    return _named(level, _LEVELS_RU)


def _refusal_ru(detail: str) -> str:
    """The engine's usual refusals in Russian (its other details as it says them)."""
    detail = re.sub(r"you do not hold (\S+)", r"у вас нет кости \1", detail)
    detail = re.sub(r"(\S+) fits no open end", r"\1 не подходит ни к одному открытому концу", detail)
    return re.sub(r"^action: (.+) is not an action \(expected e\.g\. (.*)\)$", r"ход: \1 — не ход (например: \2)",
                  detail)


#: The notification feed's types, in Russian (English shows them as the API names them): the inbox's.
_KINDS_RU: dict[str, str] = {
    "your-turn": "ваш ход", "match-over": "партия окончена", "table-dealt": "партия началась",
    "invite-taken": "место занято по приглашению", "resigned": "сдался", "aborted": "партия отменена",
    "gone": "победа за уходом соперника"}

RU: dict[str, Entry] = {
    "you": "Вы",
    "seat": lambda n: f"Место {n}",
    "seat.level": lambda n, level: f"Место {n} ({_level_ru(level)})",
    "seat.bot": lambda level: f"бот, {_level_ru(level)}",
    "seat.free": "свободно",
    "team": lambda n: f"команда {n}",
    "level": _level_ru,
    "variant": lambda name: _named(name, _VARIANTS_RU),
    "players": lambda n: f"{n} {ru_plural(n, 'игрок', 'игрока', 'игроков')}",
    "bye": "До свидания.",
    "hot-seat": lambda who: f"\n== {who}: ваш ход (остальные не смотрят) ==",
    "next-round": "Нажмите Enter, чтобы раздать следующий раунд (q — выход): ",
    "numbers.one": "1 — сыграть его",
    "numbers.many": lambda n: f"от 1 до {n}",
    "your-move": lambda who, you, numbers: ("Ваш ход" if you else f"{who}, ваш ход")
        + f" ({numbers} или запись хода; ? — помощь, q — выход): ",
    "not-played": lambda why: f"Ход не принят: {why}",
    "help": ("Введите номер хода из списка или его запись: первый ход 3-6, кость на направление 3-6@E, "
             "несколько дублей 2-2@E+5-5@W, draw — взять кость с базара, pass — стучу (пас); "
             "Лоскутное королевство: pick 17, place 17 1,0 E, discard 17. q — выход."),
    "no-such-move": lambda n, count: f"Хода {n} нет: выберите от 1 до {count}.",
    "type-a-move": "Введите номер хода или сам ход.",
    "table.header": lambda variant, n, who: f"{variant}, раунд {n}   ходит: {who}",
    "table.ends": lambda ends, count, boneyard: f"открытые концы: {ends}   сумма {count}   базар {boneyard}",
    "table.in-hand": lambda others: f"костей на руках: {others}",
    "table.your-hand": "Ваши кости: ",
    "table.empty": "(на столе пусто)",
    "table.from": "от",
    "table.arm-empty": "(пусто)",
    "kd.header": lambda who, pile: (f"Лоскутное королевство   ходит: {who}   в стопке {pile} "
                                    f"{ru_plural(pile, 'плитка', 'плитки', 'плиток')}"),
    "kd.kingdom": lambda who, score, crowns: f"{who}: очки {score}, короны {crowns}",
    "kd.row-to-place": "положить:",
    "kd.next-row": "следующий ряд:",
    "kd.terrains": ("местность: W пшеница, F лес, L озеро, G луг, S болото, M шахта; цифра — короны; "
                    "## замок"),
    "round.over": lambda n, ending, points: f"Раунд {n} окончен: {ending}. Очки за раунд: {points}",
    "round.held": lambda who, hand: f"{who}, на руках: {hand}",
    "ending": lambda ending: _named(ending, _ENDINGS_RU),
    "kd.over": lambda scores, winners, by: f"Игра окончена. Очки: {scores}. Победитель: {winners} (решило: {by})",
    "match.over": lambda points: f"Партия окончена. Итоговый счёт: {points}.",
    "match.animal": lambda animal, losers: f" {'Козёл' if animal == 'goat' else 'Осёл'}: {losers}.",
    "match.losing": lambda losers: f" Проиграл: {losers}.",
    "refusal": _refusal_ru,
    "ledger.round": "раунд",
    "ledger.score": "записано",
    "ledger.remember": "запомнено",
    "ledger.fish": "рыба",
    "ledger.blocked": "рыба",
    "ledger.sortir": "сортир",
    "ledger.eggs": lambda n: f"яйца {n}",
    "ledger.pot": lambda n: f"яйца в банке: {n}",
    "ev.played": lambda who, action: f"{who}: ход {action}",
    "ev.drew": lambda who, tile: f"{who}: взял с базара {tile}",
    "ev.drew-one": lambda who: f"{who}: взял кость с базара",
    "ev.knocked": lambda who: f"{who}: стучит",
    "ev.scored": lambda who, points: f"{who}: +{points} {ru_plural(points, 'очко', 'очка', 'очков')}",
    "ev.how": lambda ending: _named(ending, {**_ENDINGS_RU, "out": "игрок вышел"}),
    "ev.round-over": lambda n, how, points: f"раунд {n} окончен: {how}; очки за раунд: {points}",
    "ev.match-over": "партия окончена",
    "ev.match-over-losing": lambda losers: f"партия окончена; проиграл: {losers}",
    "ev.dealt": lambda n: f"раунд {n}: кости розданы",
    "ev.dealt-leads": lambda n, who: f"раунд {n}: кости розданы; первый ход: {who}",
    "ev.picked": lambda who, tile: f"{who}: выбрал плитку {tile}",
    "ev.placed": lambda who, tile, where, direction: f"{who}: положил плитку {tile} на {where} {direction}",
    "ev.discarded": lambda who, tile: f"{who}: сбросил плитку {tile}",
    "ev.row": lambda tiles: f"новый ряд: {tiles}",
    "ev.game-over": lambda scores, winners: f"игра окончена: очки {scores}; победители: {winners}",
    "ev.dynasty-over": lambda scores, winners: f"династия окончена: итог {scores}; победители: {winners}",
    "ev.timed-out": lambda who: f"{who}: время вышло",
    "clocks": lambda parts: f"часы: {parts}",
    "clocks.running": " (идут)",
    "clocks.autopilot": " (автопилот)",
    "clock.none": "без часов",
    "clock.move": lambda s: f"{s} с на ход",
    "clock.bank": lambda bank, inc: f"{bank} на партию + {inc} с за ход",
    "clock.rule": "по правилу игры",
    "clock.autopilot": lambda level: f"дальше играет бот ({_level_ru(level)})",
    "clock.setting": lambda kind, rule: f"{kind}; когда время вышло: {rule}",
    "clock.left": lambda left: f"[осталось {left}] ",
    "rating.new": "рейтинг: новый",
    "rating.of": lambda r: f"рейтинг {r}",
    "rating.change": lambda who, before, after, delta, points, place:
        f"{who}: {before} -> {after} ({delta}){points}, место {place}",
    "rating.points": lambda p: f", +{p} очк. рейтинга",
    "ratings": lambda shown: f"Рейтинг: {shown}.",
    "ratings.none": lambda err: f"(Рейтинга нет: {err}.)",
    "ratings.not-archived": "(Этой партии в архиве ещё нет: рейтинг не показать.)",
    "ratings.not-rated": "Без рейтинга: меньше двух сторон-игроков.",
    "ratings.after": "Рейтинг после партии:",
    "why.unreachable": "недоступен",
    "why.timeout": "не ответил вовремя",
    "why.broke": "связь прервалась",
    "retry.wait": lambda failed, why, address, wait: (f"(Нет ответа от {failed}: {why}. Пробую {address} "
                                                      f"через {wait} с ...)"),
    "retry.other": lambda failed, why, address: f"(Сервер {failed}: {why}; продолжаю через {address}.)",
    "lost.move": lambda why: f"(Ответ на ход потерян: {why}; ход засчитан.)",
    "lost.deal": lambda why: f"(Ответ на раздачу потерян: {why}; раздача засчитана.)",
    "resent.move": lambda why: f"(Ход не дошёл: {why}; отправлен снова.)",
    "resent.deal": lambda why: f"(Раздача не дошла: {why}; отправлена снова.)",
    "no-match-dealt": lambda err: f"Остальные места так и не заняли ({err}).",
    "seat.given-up": "Это место больше не ваше: его ключ не действует. Попросите у хозяина стола приглашение.",
    "no-gateway.all": lambda urls, err: f"Ни один сервер не ответил ({urls}): {err}.",
    "seat.kept": lambda table: f"Ваше место сохранено: `domino play --resume {table}` вернёт вас к нему.",
    "left": lambda n: f"До свидания. Вы ушли с места {n}; хозяин стола может пригласить на него другого.",
    "back": lambda n, title, variant, players: f"Вы снова за столом{title}, место {n}: {variant}, {players}.",
    "invite.spent": lambda n, table: (f"Это приглашение уже использовано; ваше место за этим столом — {n}: "
                                      f"`domino play --resume {table}` вернёт вас к нему."),
    "took": lambda n, title, variant, players: f"Вы заняли место {n} за столом{title}: {variant}, {players}.",
    "credential": lambda credential, path, table: (f"Ключ вашего места: {credential} (сохранён в {path}; "
                                                   f"`domino play --resume {table}` вернёт вас к этому месту)."),
    "waiting.seats": "Ждём, когда займут остальные места ...",
    "at-table": lambda names: f"За столом: {names}.",
    "clock": lambda setting: f"Часы: {setting}.",
    "time-out.seat": lambda who: f"{who}: время вышло",
    "time-out.a-clock": "чьё-то время вышло",
    "time-out.yours": "ваше время вышло",
    "time-out.over": lambda who, points: f"Партия окончена: {who} (по правилу игры). Итоговый счёт: {points}.",
    "too-late": "Поздно: партия окончена.",
    "waiting.move": lambda who: f"Ждём хода: {who} ...",
    "ev.resigned": lambda who: f"{who}: сдался",
    "ev.aborted": lambda who: f"{who}: партия отменена",
    "ev.gone": lambda who: f"{who}: ушёл, победа засчитана",
    "exits.help": ("В свой ход можно также ввести resign (сдаться: партия проиграна), abort (пока не все сделали "
                   "ход: отменить партию без результата и рейтинга) или claim (засчитать победу, если другой "
                   "игрок ушёл надолго)."),
    "exit.confirm-resign": "Сдаться? Партия будет проиграна. Введите да, чтобы сдаться: ",
    "exit.confirm-abort": "Отменить партию? Она закончится для всех без результата и рейтинга. Введите да: ",
    "exit.abort-closed": "Партию уже нельзя отменить: все сделали ход. Можно сдаться: resign.",
    "exit.claim-refused": "Победу засчитать нельзя: никто не отсутствует достаточно долго.",
    "exit.not-done": "Не сделано.",
    "exit.failed": lambda why: f"Не получилось: {why}",
    "exit.over": lambda how, points: f"Партия окончена: {how}. Итоговый счёт: {points}.",
    "exit.you-resigned": "вы сдались",
    "exit.resigned": lambda who: f"{who}: сдался",
    "exit.aborted": lambda who: f"отменена ({who}), без результата и рейтинга",
    "exit.gone": lambda who: f"{who}: ушёл, победа засчитана",
    "exit.you": "вы",
    "presence.away": lambda who, away: f"({who}: нет уже {away}.)",
    "presence.back": lambda who: f"({who}: снова за столом.)",
    "claim.ask": lambda who, away: (f"{who}: нет уже {away}. Введите claim, чтобы засчитать победу "
                                    f"(Enter — ждать дальше): "),
    "left.rated": "(Уход из рейтинговой партии, когда все уже сделали ход, засчитывается как сдача.)",
    "cli.no-gateway": lambda err: f"domino play: ни один сервер не ответил ({err}); запустите его: `make run`",
    "cli.no-gateway-seat": lambda err: f"domino play: ни один сервер не ответил ({err})",
    "cli.problem": lambda detail: f"domino play: {detail}",
    "cli.no-seat-kept": lambda which, path: (f"domino play: не сохранено ни одного места {which} в {path}; "
                                             f"займите место: --join LINK"),
    "cli.for-table": lambda table: f"за столом {table}",
    "cli.at-all": "вообще",
    "cli.bug": lambda err, where: f"domino play: остановлено ошибкой этой программы ({err}){where}",
    "cli.bug-log": lambda path: f"; подробности в {path}",
    "cli.join-and-resume": "--join занимает новое место, --resume возвращает к прежнему: не оба сразу",
    "cli.credential-alone": "--credential идёт вместе с --resume TABLE_ID",
    "cli.credential-needs": "--credential нужны --resume TABLE_ID и --url сервера",
    "cli.bots-count": lambda need, got: (f"--bots: нужно уровней {need} (по одному на каждое другое место), "
                                         f"а дано {got}"),
    "cli.bots-level": lambda level, levels: f"неизвестный уровень {level!r}: {levels}",
    "cli.description": "`domino play`: игра с компьютером в терминале через REST API, закрытый режим.",
    "cli.variant": "игра (GET /v1/variants), например kozel, all-fives, kingdomino",
    "cli.players": "сколько мест, считая ваше",
    "cli.bots": ("уровни остальных мест через запятую, по порядку мест: random, greedy, expert или human "
                 "(по очереди за одной клавиатурой)"),
    "cli.url": ("REST-сервер (`make run` запускает его; по умолчанию http://127.0.0.1:8080); можно несколько: "
                "другие серверы того же хранилища, по очереди, когда один недоступен"),
    "cli.option": "настройка игры (значение JSON), например --option dynasty=true",
    "cli.join": ("занять место за столом по ссылке-приглашению (http://host:port/play?table=...&invite=...; "
                 "сервер — из ссылки, затем каждый --url)"),
    "cli.name": "с --join: имя, которое видят другие игроки",
    "cli.resume": ("вернуться к месту, занятому раньше с --join (последнему или за этим столом): его ключ "
                   "хранится в папке состояния пользователя"),
    "cli.credential": ("с --resume TABLE_ID и --url: ключ места (как его показал --join), для места, занятого "
                       "на другом устройстве"),
    "cli.lang": "язык экрана: ru или en (по умолчанию — язык терминала из LC_ALL, LC_MESSAGES или LANG)",
    # the inbox
    "inbox.none": "Идущих партий нет (ни у мест, сохранённых в этом терминале, ни у DOMINO_PLAYER).",
    "inbox.title": lambda n: f"Ваши партии ({n}):",
    "inbox.line": lambda i, name, variant, players, seat: f"{i}. {name}: {variant}, игроков: {players}; место {seat}",
    "inbox.your-turn": "ваш ход",
    "inbox.turn-of": lambda who: f"ходит {who}",
    "inbox.waiting": "ждём игроков",
    "inbox.unread": lambda n, more: f"новых ходов: {n}{'+' if more else ''}",
    "inbox.left": lambda clock: f"осталось {clock}",
    "inbox.elsewhere": "место занято на другом устройстве",
    "inbox.pick": "К какой партии вернуться? Номер, или Enter, чтобы выйти: ",
    "inbox.not-here": "Место в этой партии занято на другом устройстве: вернитесь к ней там.",
    "inbox.no-such": lambda n: f"Партии {n} нет.",
    "inbox.forgot": lambda n: f"Забыто сохранённых мест, которые больше не действуют: {n}.",
    "inbox.failed": lambda where, why: f"Входящие на {where} не ответили: {why}",
    "inbox.seat": lambda n: f"Место {n}",
    "inbox.cli": "ваши идущие партии (места, сохранённые здесь, и DOMINO_PLAYER) и возврат к одной из них",
    "inbox.told": lambda n: f"Пока вас не было (новых: {n}):",
    "inbox.told-item": lambda kind, table: f"  {_KINDS_RU.get(kind, kind)}: {table}",
    # турниры (`domino play --join ССЫЛКА_ТУРНИРА`, `--tournaments`)
    "tour.cli": "открытые турниры (лобби): вступить в один и сыграть его раунды",
    "tour.joined": lambda name, place, size, joined: (f"Вы вступили в турнир «{name}»: место {place} из {size} "
                                                      f"(вступили: {joined}). Ждём, когда хозяин его начнёт ..."),
    "tour.back": lambda name, place, size: f"Вы снова в турнире «{name}»: место {place} из {size}.",
    "tour.sit-out": lambda n, playing: f"Раунд {n}: вы пропускаете этот раунд (играют: {playing}).",
    "tour.play": lambda n, seat, names: f"Раунд {n}: вы играете, место {seat} (за столом: {names}).",
    "tour.round-result": lambda n, points: f"Раунд {n} записан: {points}.",
    "tour.forfeit": lambda who: f"{who}: техническое поражение.",
    "tour.eliminated": lambda who: f"Выбыли: {who}.",
    "tour.standings": lambda n, limit: f"Положение после раунда {n} (выбывает на {limit}):",
    "tour.line": lambda place, who, total, out, official: (f"{place}. {who} {total}" + (" (выбыл)" if out else "")
                                                           + (" *" if official else "")),
    "tour.you": " (вы)",
    "tour.out": lambda total, limit: (f"Вы выбыли: ваша сумма {total} достигла {limit}. Итоговые места будут, когда "
                                      "турнир закончится (Ctrl-C — не ждать) ..."),
    "tour.over": lambda name: f"Турнир «{name}» окончен. Итоговые места (* официальные):",
    "tour.your-place": lambda place, n: f"Ваше место: {place} из {n}.",
    "tour.bye": lambda n, points: (f"Раунд {n}: в этом раунде у вас свободный тур (он засчитывается как выигранная "
                                   f"партия: очков {points})."),
    "tour.byes": lambda who: f"Свободный тур: {who}.",
    "tour.standings-swiss": lambda n, rounds: f"Положение после раунда {n} из {rounds} (очки, Бухгольц):",
    "tour.line-swiss": lambda place, who, score, buchholz, left, official: (
        f"{place}. {who} {score} (Бухгольц {buchholz})" + (" (вышел)" if left else "") + (" *" if official else "")),
    "tour.left-swiss": lambda score: (f"Вы вышли из турнира: ваши очки ({score}) остаются в таблице. Итоговые места "
                                      "будут, когда он закончится."),
    "tour.no-news": "В турнире долго ничего не происходит: больше не ждём.",
    "tour.gone": "Это место в турнире больше не действует (вы из него вышли).",
    "tour.confirm-leave": "Выйти из турнира? Вам засчитают поражение (выбываете), турнир продолжится без вас. "
                          "Напишите да, чтобы выйти: ",
    "tour.left": "Вы вышли из турнира.",
    "tour.lobby-none": "Открытых для вступления турниров нет.",
    "tour.lobby-title": lambda n: f"Открытые турниры ({n}):",
    "tour.lobby-line": lambda i, name, variant, joined, size: f"{i}. {name}: {variant}, вступили {joined} из {size}",
    "tour.lobby-pick": "В какой турнир вступить? Номер, или Enter, чтобы выйти: ",
}

_CATALOGUES: dict[str, Mapping[str, Entry]] = {"en": EN, "ru": RU}
_language = "en"


def language_of_environment(env: Mapping[str, str] | None = None) -> str:
    """The terminal's language: the first of LC_ALL, LC_MESSAGES, LANG that is set and not empty (the C
    library's order); `ru...` (ru_RU.UTF-8, ru) is Russian, anything else English."""
    env = os.environ if env is None else env
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name, "")
        if value:
            return "ru" if value.lower().startswith("ru") else "en"
    return "en"


def use(language: str | None) -> str:
    """Speak `language` (`ru`, `en`; None: the environment's) from now on; the language chosen."""
    global _language
    chosen = language or language_of_environment()
    if chosen not in _CATALOGUES:
        raise ValueError(f"no such language: {chosen} (ru or en)")
    _language = chosen
    return chosen


def language() -> str:
    """The language spoken now."""
    return _language


def t(key: str, *args: Any) -> str:
    """The text of `key` in the language spoken now (English if Russian lacks it), given `args`."""
    entry = _CATALOGUES[_language].get(key) or EN[key]
    return entry(*args) if callable(entry) else entry


def seat_number(seat: int) -> int:
    """A seat's number on screen: from 1 in Russian (as the page), from 0 in English (as the terminal always
    has)."""
    return seat + 1 if _language == "ru" else seat
