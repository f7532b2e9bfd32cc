"""A match record and its two forms, JSON and text (docs/records.md); no rules here.

A `Record` is plain data: the header (format version, variant, players,
options, view, seed, names, result, number of moves) and the moves, each an
`Entry`: a number, the seat that made it (None for what the table does: the start, a deal,
a settled round, a timeout), the step as the state's log writes it
(rules/history.py) and the events it gave, as the record's viewer may see them;
a seat's step is also read, once, as the typed move it names (`Entry.move`).

`to_json` / `from_json` and `to_text` / `from_text` convert exactly: a record
read from either form and written in the other reads back equal, and text this
module writes reads back to the same text. Reading checks the shape only (and
names the line or the JSON member that is wrong); whether the moves are legal
is `engine_service.records.play`'s.

>>> r = from_text('[Record "domino-record 1"]\\n[Variant "block"]\\n[Players "2"]\\n[Options "{}"]\\n'
...               '[View "full"]\\n[Seed "7"]\\n[Names "[]"]\\n[Moves "2"]\\n[Result "null"]\\n\\n'
...               '1. - new\\n2. - deal\\n*\\n')
>>> [m.step for m in r.moves], from_json(to_json(r)) == r, from_text(to_text(r)) == r
(['new', 'deal'], True, True)
"""
from __future__ import annotations

import json
import re
from typing import Any

from engine_service.rules.errors import IllegalActionError, MalformedError
from engine_service.rules.exits import HOWS
from engine_service.rules.kingdomino_notation import KingdominoMove
from engine_service.rules.kingdomino_setup import NAME as KINGDOMINO
from engine_service.rules.notation import Move

FORMAT = "domino-record"
VERSION = 1
VIEWS = ("full", "spectator")  # and "seat N"
MAX_MOVES = 4000
MAX_TEXT = 4_000_000
_TAGS = ("Record", "Variant", "Players", "Options", "View", "Seed", "Names", "Moves", "Result")
_TAG = re.compile(r'\[([A-Za-z]+) "((?:[^"\\]|\\.)*)"\]\s*$')
_MOVE = re.compile(r"(\d+)\.\s+(-|S\d+)\s+(.*)$")
_TABLE_VERBS = ("new", "deal", "settle")

Json = dict[str, Any]
#: A move of either game kind, as a record's entry carries it.
AnyMove = Move | KingdominoMove


class RecordError(MalformedError):
    """A record that cannot be read, or whose moves the rules refuse: names the move and the line."""

    def __init__(self, message: str, move: int | None = None, line: int | None = None,
                 kind: str = "malformed") -> None:
        where = []
        if move is not None:
            where.append(f"move {move}")
        if line is not None:
            where.append(f"line {line}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)
        self.move = move
        self.line = line
        self.kind = kind  # "malformed" (cannot be read) or "illegal" (the rules refuse a move)


class IllegalRecordError(RecordError, IllegalActionError):
    """A readable record whose move the rules refuse (or whose events or result they contradict)."""


def refusal(message: str, move: int | None, line: int | None, kind: str) -> RecordError:
    """The error of its kind: `IllegalRecordError` for "illegal", else `RecordError`."""
    cls = IllegalRecordError if kind == "illegal" else RecordError
    return cls(message, move, line, kind)


class Entry:
    """One entry of a record (a "move" of its text form): its number, the seat that made it (None for
    the table), the step as the state's log writes it, and the events it gave.

    `move` is the step read as a move of the record's game (`notation.Move`, `KingdominoMove`), once,
    when the record is read or written: None for the table's steps (new, deal, settle, timeout, the exits) and
    for a step that names no move (the replay or the check refuses it, naming its line). It is
    derived from `step`, so it is not compared.
    """

    __slots__ = ("n", "seat", "step", "events", "line", "move")

    def __init__(self, n: int, seat: int | None, step: str, events: list[Json], line: int | None = None,
                 move: AnyMove | None = None) -> None:
        self.n = n
        self.seat = seat
        self.step = step
        self.events = events
        self.line = line  # where the entry starts in the text it was read from (not compared)
        self.move = move

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Entry) and (self.n, self.seat, self.step, self.events) == (
            other.n, other.seat, other.step, other.events)

    def __repr__(self) -> str:
        return f"Entry({self.n}, {self.seat}, {self.step!r}, {len(self.events)} events)"


#: The table's steps: what no seat does in turn (the start, a deal, a settled round, a timeout, an exit of
#: the match: ``resign N``, ``gone N``, ``abort N``, which any seat may make at any time, issue 37).
TABLE_VERBS = ("new", "deal", "settle", "timeout", *HOWS)


def step_move(variant: str, step: str) -> AnyMove | None:
    """`step` read as a move of `variant`'s game, or None (a table's step, or no move at all)."""
    verb = step.split(" ", 1)[0]
    if verb in TABLE_VERBS:
        return None
    try:
        return KingdominoMove.parse(step) if variant == KINGDOMINO else Move.parse(step)
    except MalformedError:
        return None


def _read_moves(record: Record) -> None:
    """Each entry's move, read once from its step at the edge (`Entry.move`)."""
    for entry in record.moves:
        entry.move = step_move(record.variant, entry.step)


class Record:
    __slots__ = ("variant", "players", "options", "view", "seed", "names", "result", "moves", "declared")

    def __init__(self, variant: str, players: int, options: Json, view: str, seed: int | None,
                 names: list[str | None], result: Json | None, moves: list[Entry],
                 declared: int | None = None) -> None:
        self.variant = variant
        self.players = players
        self.options = options
        self.view = view
        self.seed = seed
        self.names = names
        self.result = result
        self.moves = moves
        #: The number of moves the header says (`Moves`): more than `moves` holds = a truncated record.
        self.declared = len(moves) if declared is None else declared

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    @property
    def viewer(self) -> int | None:
        """The seat of a seat's record, else None."""
        return int(self.view[5:]) if self.view.startswith("seat ") else None


# ---------------------------------------------------------------- JSON


def to_json(record: Record) -> Json:
    """The JSON form (docs/records.md)."""
    return {
        "record": FORMAT,
        "version": VERSION,
        "variant": record.variant,
        "players": record.players,
        "options": record.options,
        "view": record.view,
        "seed": record.seed,
        "names": record.names,
        "result": record.result,
        "moves": [{"n": m.n, "seat": m.seat, "step": m.step, "events": m.events} for m in record.moves],
    }


_JSON_KEYS = ("record", "version", "variant", "players", "options", "view", "seed", "names", "result", "moves")


def from_json(data: object) -> Record:
    """A record from its JSON form (a parsed object); RecordError names the member that is wrong."""
    if not isinstance(data, dict):
        raise RecordError("a record must be a JSON object")
    unknown = sorted(str(k) for k in data if k not in _JSON_KEYS)
    if unknown:
        raise RecordError(f"record: unknown members {unknown}")
    missing = [k for k in _JSON_KEYS if k not in data]
    if missing:
        raise RecordError(f"record: missing members {missing}")
    _header(data["record"], data["version"])
    moves_in = data["moves"]
    if not isinstance(moves_in, list) or len(moves_in) > MAX_MOVES:
        raise RecordError(f"moves must be a list of at most {MAX_MOVES} moves")
    moves = []
    for i, m in enumerate(moves_in):
        if not isinstance(m, dict) or set(m) != {"n", "seat", "step", "events"}:
            raise RecordError(f"moves[{i}] must be an object with n, seat, step and events", i + 1)
        n = m["n"]
        if type(n) is not int:
            raise RecordError(f"moves[{i}].n must be an integer", i + 1)
        seat = m["seat"]
        if seat is not None and (type(seat) is not int or not 0 <= seat < 16):
            raise RecordError(f"moves[{i}].seat must be a seat or null", n)
        step = m["step"]
        if not isinstance(step, str) or not step or "\n" in step:
            raise RecordError(f"moves[{i}].step must be a one-line string", n)
        events = m["events"]
        if not isinstance(events, list) or not all(isinstance(e, dict) and isinstance(e.get("type"), str)
                                                   for e in events):
            raise RecordError(f"moves[{i}].events must be a list of events (objects with a type)", n)
        moves.append(Entry(n, seat, step, events))
    record = Record(_variant(data["variant"]), _players(data["players"]), _options(data["options"]),
                    _view(data["view"]), _seed(data["seed"]), _names(data["names"]), _result(data["result"]),
                    moves)
    _numbering(record)
    _read_moves(record)
    return record


def _header(name: object, version: object) -> None:
    if name != FORMAT:
        raise RecordError(f"not a {FORMAT}: the format is {name!r}")
    if version != VERSION:
        raise RecordError(f"{FORMAT} version {version!r}: this engine reads version {VERSION}")


def _variant(v: object) -> str:
    if not isinstance(v, str) or not 0 < len(v) <= 40:
        raise RecordError("variant must be a preset name")
    return v


def _players(v: object) -> int:
    if type(v) is not int or not 1 <= v <= 16:
        raise RecordError("players must be an integer 1..16")
    return v


def _options(v: object) -> Json:
    if not isinstance(v, dict):
        raise RecordError("options must be an object")
    return v


def _view(v: object) -> str:
    if isinstance(v, str) and (v in VIEWS or re.fullmatch(r"seat (0|[1-9]\d?)", v)):
        return v
    raise RecordError(f"view must be 'full', 'spectator' or 'seat N', not {v!r}")


def _seed(v: object) -> int | None:
    if v is None or (type(v) is int and 0 <= v < 2**64):
        return v
    raise RecordError("seed must be an integer 0..2^64-1 or null")


def _names(v: object) -> list[str | None]:
    if not isinstance(v, list) or not all(x is None or (isinstance(x, str) and len(x) <= 80) for x in v):
        raise RecordError("names must be a list of names (strings of at most 80 characters, or null)")
    return list(v)


def _result(v: object) -> Json | None:
    if v is not None and not isinstance(v, dict):
        raise RecordError("result must be an object or null")
    return v


def _numbering(record: Record) -> None:
    """Moves numbered 1, 2, 3 ... in order, and as many as the header declares."""
    for i, m in enumerate(record.moves):
        if m.n != i + 1:
            what = f"move {i + 1} is missing" if m.n > i + 1 else f"move {m.n} is out of order"
            raise RecordError(f"{what} (found move {m.n} where move {i + 1} belongs)", i + 1, m.line)
    if record.declared != len(record.moves):
        last = record.moves[-1] if record.moves else None
        raise RecordError(f"the record says it holds {record.declared} moves but ends after move "
                          f"{len(record.moves)}: truncated", len(record.moves) + 1, last.line if last else None)


# ---------------------------------------------------------------- text


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def to_text(record: Record) -> str:
    """The text form: tag pairs, a blank line, one line per move (its events on the lines below it,
    indented), and ``*`` at the end."""
    tags = [
        ("Record", f"{FORMAT} {VERSION}"),
        ("Variant", record.variant),
        ("Players", str(record.players)),
        ("Options", _compact(record.options)),
        ("View", record.view),
        ("Seed", "-" if record.seed is None else str(record.seed)),
        ("Names", _compact(record.names)),
        ("Moves", str(len(record.moves))),
        ("Result", _compact(record.result)),
    ]
    lines = [f'[{k} "{_quote(v)}"]' for k, v in tags]
    lines.append("")
    for m in record.moves:
        lines.append(f"{m.n}. {'-' if m.seat is None else f'S{m.seat}'} {m.step}")
        for e in m.events:
            lines.append("    " + event_text(e))
    lines.append("*")
    return "\n".join(lines) + "\n"


def event_text(event: Json) -> str:
    """``{type key=value ...}``, each value compact JSON."""
    parts = [str(event["type"])] + [f"{k}={_compact(v)}" for k, v in event.items() if k != "type"]
    return "{" + " ".join(parts) + "}"


_DECODER = json.JSONDecoder()


def _events(text: str, n: int, line: int) -> list[Json]:
    """The ``{type k=v ...}`` events of `text` (a line or its rest)."""
    events: list[Json] = []
    i = 0
    size = len(text)
    while True:
        while i < size and text[i] in " \t":
            i += 1
        if i >= size:
            return events
        if text[i] != "{":
            raise RecordError(f"expected an event '{{type key=value ...}}' at {text[i:i + 20]!r}", n, line)
        m = re.compile(r"\{([a-z_]+)").match(text, i)
        if m is None:
            raise RecordError(f"an event starts with its type: {text[i:i + 20]!r}", n, line)
        event: Json = {"type": m.group(1)}
        i = m.end()
        while True:
            while i < size and text[i] == " ":
                i += 1
            if i < size and text[i] == "}":
                i += 1
                break
            k = re.compile(r"([a-z_]+)=").match(text, i)
            if k is None:
                raise RecordError(f"event {event['type']}: expected key=value or '}}' at {text[i:i + 20]!r}",
                                  n, line)
            try:
                value, i = _DECODER.raw_decode(text, k.end())
            except ValueError:
                raise RecordError(f"event {event['type']}: the value of {k.group(1)} is not JSON", n, line) \
                    from None
            event[k.group(1)] = value
        events.append(event)


def _step(rest: str, n: int, line: int) -> tuple[str, str]:
    """A move line's step and what follows it (its events)."""
    verb = rest.split(" ", 1)[0]
    if verb in _TABLE_VERBS and rest[len(verb):len(verb) + 2] == " {":
        try:
            payload, end = _DECODER.raw_decode(rest, len(verb) + 1)
        except ValueError:
            raise RecordError(f"{verb}: its payload is not JSON", n, line) from None
        return f"{verb} {_compact_sorted(payload)}", rest[end:]
    cut = rest.find(" {")
    step = (rest if cut < 0 else rest[:cut]).strip()
    if not step:
        raise RecordError("a move needs a step (an action, or new, deal, settle, timeout, resign, gone, abort)", n, line)
    return step, "" if cut < 0 else rest[cut:]


def _compact_sorted(payload: Any) -> str:
    return json.dumps(payload, separators=(",", ":"), sort_keys=True)


def _unquote(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def from_text(text: str) -> Record:
    """A record from its text form; RecordError names the line (and the move) that is wrong."""
    if len(text) > MAX_TEXT:
        raise RecordError(f"a record is at most {MAX_TEXT} characters")
    tags: dict[str, str] = {}
    moves: list[Entry] = []
    ended = False
    lines = text.splitlines()
    i = 0
    while i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith(";")):
        i += 1
    while i < len(lines) and lines[i].startswith("["):
        m = _TAG.match(lines[i])
        if m is None:
            raise RecordError(f"not a tag pair: {lines[i][:60]!r}", None, i + 1)
        if m.group(1) in tags:
            raise RecordError(f"tag {m.group(1)} given twice", None, i + 1)
        tags[m.group(1)] = _unquote(m.group(2))
        i += 1
    missing = [t for t in _TAGS if t not in tags]
    if missing:
        raise RecordError(f"missing tags {missing} (a record starts with its tag pairs: docs/records.md)",
                          None, i + 1)
    unknown = [t for t in tags if t not in _TAGS]
    if unknown:
        raise RecordError(f"unknown tags {unknown}")
    name, _, version = tags["Record"].partition(" ")
    _header(name, int(version) if version.isdigit() else version)
    first = i
    for i in range(first, len(lines)):
        raw = lines[i]
        stripped = raw.strip()
        n = len(moves)
        if not stripped or stripped.startswith(";"):
            continue
        if ended:
            raise RecordError("text after the end marker '*'", None, i + 1)
        if stripped == "*":
            ended = True
            continue
        if raw[0] in " \t":
            if not moves:
                raise RecordError("an indented line (events) before the first move", None, i + 1)
            moves[-1].events.extend(_events(stripped, n, i + 1))
            continue
        m = _MOVE.match(stripped)
        if m is None:
            raise RecordError(f"expected a move 'N. SEAT STEP' (SEAT S0, S1 ... or -), not {stripped[:60]!r}",
                              n + 1, i + 1)
        number = int(m.group(1))
        step, rest = _step(m.group(3), number, i + 1)
        seat = None if m.group(2) == "-" else int(m.group(2)[1:])
        moves.append(Entry(number, seat, step, _events(rest, number, i + 1), i + 1))
        if len(moves) > MAX_MOVES:
            raise RecordError(f"more than {MAX_MOVES} moves", number, i + 1)
    def tag_json(key: str) -> Any:
        try:
            return json.loads(tags[key])
        except ValueError:
            raise RecordError(f"tag {key}: not JSON") from None
    players = tags["Players"]
    seed = tags["Seed"]
    declared = tags["Moves"]
    if not declared.isdigit():
        raise RecordError("tag Moves must be a number")
    record = Record(_variant(tags["Variant"]), _players(int(players) if players.isdigit() else players),
                    _options(tag_json("Options")), _view(tags["View"]),
                    _seed(None if seed == "-" else int(seed) if seed.isdigit() else seed),
                    _names(tag_json("Names")), _result(tag_json("Result")), moves, int(declared))
    if not ended and record.declared == len(moves):
        last = moves[-1] if moves else None
        raise RecordError("the record has no end marker '*' after its last move: truncated",
                          len(moves) or None, last.line if last else None)
    _numbering(record)
    _read_moves(record)
    return record


def parse(text: str) -> Record:
    """A record in either form: JSON when it starts with ``{``, else text."""
    body = text.lstrip()
    if body.startswith("{"):
        try:
            data = json.loads(body)
        except ValueError as exc:
            last = re.findall(r'"n":\s*(\d+)', body[:getattr(exc, "pos", len(body))])
            after = f" (after move {last[-1]})" if last else ""
            raise RecordError(f"not JSON{after}: {exc}", int(last[-1]) + 1 if last else None,
                              getattr(exc, "lineno", None)) from None
        return from_json(data)
    return from_text(text)


__all__ = ["FORMAT", "TABLE_VERBS", "VERSION", "Entry", "IllegalRecordError", "Record", "RecordError", "event_text", "from_json", "from_text",
           "parse", "refusal", "step_move", "to_json", "to_text"]
