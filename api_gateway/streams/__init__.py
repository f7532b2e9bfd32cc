"""Spectator streams of one gateway worker: cheap to hold, bounded, and ended on purpose.

`GET /v1/matches/{id}/spectate` (issue 29: 2,100 streams opened and dropped in 4 s held a
gateway, health checks included, for minutes). What this module does about it:

- one feed per watched match per worker (`Feed`), shared by all the match's streams,
  which reads the live store only when the match advanced: the worker watches the
  match's wake-ups (`api_gateway.store.watching`, the store's `Wakeups`), an advance made by any worker of
  any gateway wakes the workers watching that match and no other, and with nothing
  happening no query runs. Each stream sleeps until its feed has news;
- a client that leaves is noticed at once: the stream watches its socket for the end of
  the input (the client's FIN) while it waits; one that vanishes without a FIN (its
  network gone) is found by the failed write of a `{"type":"keepalive"}` line written
  after `keepalive` seconds without another line. One greenlet of the worker writes those lines
  to the quiet streams' sockets itself (`Keepalives`), framed as the server frames the body: a
  stream woken to yield its own keepalive through the WSGI body cost ~40 us of a worker (its
  wake-up and timer, Flask's and werkzeug's iterators, gunicorn's chunk write, gevent's
  `sendall`), most of the CPU of 10,000 idle streams (docs/performance.md);
- caps per worker (`Limits`): streams in all (so that ordinary calls keep the rest of the
  worker's connections), per match and per client address; a stream over one is refused
  before it starts (`StreamRefused`: 429 too-many-streams with Retry-After);
- `stop_all()` (the worker's SIGTERM) ends every stream with
  `{"type":"closed","reason":"shutdown"}`, so the worker exits at once and each client
  knows the stream ended on purpose.

Everything here runs in one worker process under gevent: the streams are greenlets, their
counts plain dictionaries.
"""
from __future__ import annotations

import logging
import socket
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import gevent
from gevent import monkey
from gevent.event import AsyncResult, Event

from api_gateway.http.problems import StreamRefused, UnknownMatch
from api_gateway.metrics import SPECTATOR_STREAMS
from api_gateway.store import StoreUnavailable
from api_gateway.store.watching import Watching

log = logging.getLogger("api_gateway.streams")

#: Seconds between two reads of a match's lines by a stream of the threaded development server
#: (`Stream._polled`; gunicorn's gevent workers are woken instead).
SPECTATE_POLL = 0.25
KEEPALIVE = b'{"type":"keepalive"}\n'
Public = Callable[[str, int], tuple[list[bytes], bool]]


def closed_line(reason: str) -> bytes:
    """The last line of a stream that stops before its match ends."""
    return b'{"type":"closed","reason":"' + reason.encode() + b'"}\n'


@dataclass(frozen=True, slots=True)
class Format:
    """How a stream writes what it has: its lines (from the `first`-th of its feed), its keepalive, its
    closing line, and what ends it with the match. Spectator streams are NDJSON (`NDJSON`); seat
    streams are Server-Sent Events (`api_gateway.streams.seats`)."""

    lines: Callable[[list[bytes], int], bytes]
    keepalive: bytes
    closed: Callable[[str], bytes]
    end: bytes = b""


NDJSON = Format(lambda lines, first: b"".join(line + b"\n" for line in lines), KEEPALIVE, closed_line)


def _closing_line(lim: Limits, now: float, start: float, last_line: float, fmt: Format) -> bytes | None:
    """A stream's closing line once it has been idle or open too long (the stream then ends), else None."""
    if now - last_line >= lim.idle or now - start >= lim.longest:
        return fmt.closed("idle" if now - last_line >= lim.idle else "max-duration")
    return None


def _quiet_line(lim: Limits, now: float, start: float, last_line: float, last_write: float,
                fmt: Format = NDJSON) -> bytes | None:
    """What a stream of the development server (`Stream._polled`) with no new line writes now: its closing
    line (`_closing_line`), a keepalive line after `keepalive` seconds without a write, else nothing. (A
    gevent worker's streams are kept alive by `Keepalives`.)"""
    closing = _closing_line(lim, now, start, last_line, fmt)
    if closing is None and now - last_write >= lim.keepalive:
        return fmt.keepalive
    return closing


def _tail(fmt: Format, over: bool, closed: str | None, quiet: bytes | None) -> tuple[bytes, bool]:
    """What a stream writes after its news, and whether it then ends: its end with the match's (NDJSON's
    end mark is the last line already), its closing line when its feed stopped (`closed`: why), else its
    quiet line (`_quiet_line`: a keepalive, or the close of an idle or too long stream)."""
    if over:
        return fmt.end, True
    if closed is not None:
        return fmt.closed(closed), True
    if quiet is not None:
        return quiet, quiet is not fmt.keepalive
    return b"", False


@dataclass(frozen=True, slots=True)
class Limits:
    """A worker's bounds on its spectator streams (`api_gateway.config`: GATEWAY_SPECTATE_*, GATEWAY_STREAMS*)."""

    idle: float = 300.0        # seconds without a new line before the stream ends ("idle")
    longest: float = 3600.0    # seconds a stream lasts at most ("max-duration")
    keepalive: float = 5.0     # seconds without a line before a keepalive line
    streams: int = 500         # streams in all
    per_match: int = 200
    per_address: int = 20


@dataclass(eq=False)
class Feed:
    """One watched match's public lines in this worker: read from the store by one greenlet while
    anyone watches, kept here (every line from the first) for each of its streams to take from."""

    match_id: str
    lines: list[bytes]
    over: bool
    closed: str | None = None                     # why the feed stopped before the match's end
    wakes: set[Event] = field(default_factory=set)  # one per stream waiting for news
    poke: Event = field(default_factory=Event)       # set: the match advanced (or its last stream left)
    sent: dict[Event, int] = field(default_factory=dict)  # how far each stream has written (`Streams.trim`)
    trimmed: int = 0                                 # lines before this one are dropped (b""): read from the store
    #: The match's latest note (an event outside its versions: a seat stream's `presence`), written once to
    #: each stream after it changed (`noted` counts the changes), never resumed by Last-Event-ID.
    note: bytes = b""
    noted: int = 0


@dataclass(eq=False)
class Counts:
    """A worker's streams in all and per client address: shared by every kind of stream it holds (the
    spectators', and an online table's seat and public streams), so that the caps bound them together."""

    open: int = 0
    per_address: dict[str, int] = field(default_factory=dict)


class Streams:
    """This worker's spectator streams (one instance per app; module docstring)."""

    def __init__(self, public: Public, limits: Limits, watching: Watching, poll: float = SPECTATE_POLL,
                 fmt: Format = NDJSON, what: str = "spectator", counts: Counts | None = None,
                 trim: bool = False) -> None:
        self._public = public
        self._watching = watching
        watching.add(self)
        self.format = fmt
        #: Drop a feed's lines once every stream has written them (all but the last): a seat stream's lines
        #: hold the whole view, and a match's history per viewer would grow with every move. A stream that
        #: needs a dropped line (one joining late) reads it from the store.
        self.trim = trim
        self.what = what
        self.limits = limits
        self._poll = poll
        self._feeds: dict[str, Feed] = {}
        #: The feed keys of one match's viewers (`<match>:<viewer>`, the seat streams'), by match id.
        self._viewers: dict[str, set[str]] = {}
        #: The latest note of each match streamed here (`note`).
        self._notes: dict[str, bytes] = {}
        self._loading: dict[str, AsyncResult] = {}
        self._per_match: dict[str, int] = {}
        self.counts = counts if counts is not None else Counts()
        self._waiting: set[Event] = set()  # every stream's wake-up, for `stop`
        self.keepalives = Keepalives(limits.keepalive, fmt.keepalive)
        self.stopping = False
        # Shared feeds need every stream in one gevent hub (gunicorn's gevent worker). Flask's threaded
        # development server (`--dev`) runs each stream in a thread of its own, with a hub each: a feed
        # polled from one thread's hub would stop when that thread's stream ends. There each stream
        # reads the store itself, as all did before.
        self.shared = monkey.is_module_patched("threading")
        _ALL.add(self)

    # ------------------------------------------------------------------ opening and closing

    def open(self, match_id: str, address: str, sock: Any,
             intro: Callable[[list[bytes], bool], bytes] | None = None, chunked: bool | None = None) -> Stream:
        """A stream of `match_id` for a client at `address` (its socket `sock`, watched for its end).
        `intro` writes its start from the lines so far (default: all of them). `chunked`: how the server
        frames the body on this connection (`body_framing`), for the keepalive lines `Keepalives` writes.

        Raises before anything is written: StreamRefused over a cap (or while the worker
        stops), UnknownMatch (404), SealedModeDisabled (501), StoreUnavailable (503).
        """
        lim = self.limits
        refused: StreamRefused | None = None
        if self.stopping:
            refused = StreamRefused("worker", "this gateway worker is stopping; open the stream again")
        elif self.counts.open >= lim.streams:
            refused = StreamRefused("worker", f"this gateway worker holds {lim.streams} {self.what} streams, its most")
        elif self._per_match.get(match_id, 0) >= lim.per_match:
            refused = StreamRefused("match" if self.what == "spectator" else self.what,
                                    f"this gateway worker holds {lim.per_match} streams of this "
                                    f"{'match' if self.what == 'spectator' else self.what}, its most")
        elif self.counts.per_address.get(address, 0) >= lim.per_address:
            refused = StreamRefused("address", f"this gateway worker holds {lim.per_address} streams of your "
                                               "address, its most")
        if refused is not None:
            # The connection ends after the 429: kept alive, a refused client would still hold one of the
            # worker's connections, the very thing the caps protect. Its read side shut, the server finds
            # the end of input where it would wait for the next request.
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RD)
                except OSError:
                    pass
            raise refused
        # Counted before the store is read: the opens that wait for it meanwhile see this one.
        SPECTATOR_STREAMS.inc()
        self.counts.open += 1
        self._per_match[match_id] = self._per_match.get(match_id, 0) + 1
        self.counts.per_address[address] = self.counts.per_address.get(address, 0) + 1
        try:
            first, over = self._first_lines(match_id)  # 404 / 501 / 503 before the stream starts
        except BaseException:
            self._release(match_id, address)
            raise
        return Stream(self, match_id, address, sock, first, over, intro, chunked)

    def _first_lines(self, match_id: str) -> tuple[list[bytes], bool]:
        """The match's lines so far: from its feed when this worker watches it already (no store read),
        else from the store, once for all the streams of the match that open meanwhile (a burst of
        opens makes one read, not one each), and the feed starts with them."""
        if not self.shared or not _is_match_id(_match_of(match_id)):
            return self._public(match_id, 0)  # (an id that is no match's: its 404)
        feed = self._feeds.get(match_id)
        if feed is not None and feed.closed is None:
            return list(feed.lines), feed.over
        loading = self._loading.get(match_id)
        if loading is not None:
            lines, over = loading.get()  # the other opener's answer, or its exception
            return list(lines), over
        loading = self._loading[match_id] = AsyncResult()
        try:
            self._watching.watch(_match_of(match_id))  # first: an advance after the read below wakes the feed
            try:
                lines, over = self._public(match_id, 0)
            except BaseException:
                self._watching.unwatch(_match_of(match_id))
                raise
        except BaseException as exc:
            loading.set_exception(exc)
            raise
        finally:
            del self._loading[match_id]
        if over:
            self._watching.unwatch(_match_of(match_id))
        else:
            self._start_feed(match_id, lines, over, True)
        loading.set((lines, over))
        return list(lines), over

    def _release(self, match_id: str, address: str) -> None:
        SPECTATOR_STREAMS.dec()
        self.counts.open -= 1
        for counts, key in ((self._per_match, match_id), (self.counts.per_address, address)):
            left = counts[key] - 1
            if left:
                counts[key] = left
            else:
                del counts[key]

    def _trim(self, feed: Feed) -> None:
        if not self.trim or not feed.sent:
            return
        low = min(min(feed.sent.values()), len(feed.lines) - 1)
        for i in range(feed.trimmed, low):
            feed.lines[i] = b""
        feed.trimmed = max(feed.trimmed, low)

    def poke(self, match_id: str) -> None:
        """`match_id` advanced: its feeds (`match_id`, or `match_id:<viewer>`) read the store now."""
        feed = self._feeds.get(match_id)
        if feed is not None:
            feed.poke.set()
        for key in self._viewers.get(match_id, ()):
            found = self._feeds.get(key)
            if found is not None:
                found.poke.set()

    def note(self, match_id: str, line: bytes) -> None:
        """Write `line` once to every stream of `match_id` in this worker (and to each one opened later while
        this worker streams the match), outside the match's versions."""
        self._notes[match_id] = line
        for key in (match_id, *self._viewers.get(match_id, ())):
            feed = self._feeds.get(key)
            if feed is not None and feed.note != line:
                feed.note = line
                feed.noted += 1
                for wake in list(feed.wakes):
                    wake.set()

    def watched(self) -> set[str]:
        """The matches this worker streams now."""
        return {_match_of(key) for key in self._feeds}

    def poke_all(self) -> None:
        """Wake-ups may have been missed (the store's connection came back): every feed reads the store."""
        for feed in list(self._feeds.values()):
            feed.poke.set()

    @property
    def open_count(self) -> int:
        return self.counts.open

    def stop(self) -> None:
        """End every stream with a `shutdown` line (the worker stops); refuse new ones."""
        self.stopping = True
        self.keepalives.stop()
        for wake in list(self._waiting):
            wake.set()
        for feed in list(self._feeds.values()):
            feed.poke.set()

    # ------------------------------------------------------------------ the shared poll

    def _watch(self, match_id: str, first: list[bytes], over: bool, wake: Event) -> Feed:
        """The match's feed (started now if it has none), with `wake` set on its news."""
        feed = self._feeds.get(match_id)
        if feed is None or feed.closed is not None:
            feed = self._start_feed(match_id, first, over, False)
        feed.wakes.add(wake)
        return feed

    def _start_feed(self, key: str, lines: list[bytes], over: bool, watched: bool) -> Feed:
        match = _match_of(key)
        note = self._notes.get(match, b"")
        feed = self._feeds[key] = Feed(key, list(lines), over, note=note, noted=1 if note else 0)
        if match != key:
            self._viewers.setdefault(match, set()).add(key)
        gevent.spawn(self._poll_feed, feed, watched)
        return feed

    def _poll_feed(self, feed: Feed, watched: bool) -> None:
        """Read the match's new lines each time it advances, while anyone watches it; wake its streams on
        news. `watched`: the match's wake-ups are already on (its first read came after them)."""
        match = _match_of(feed.match_id)
        try:
            if not watched:
                try:
                    self._watching.watch(match)
                except StoreUnavailable:
                    feed.closed = "store-unavailable"
                    for wake in list(feed.wakes):
                        wake.set()
                    return
                watched = True
                feed.poke.set()  # read once now: an advance may have come before the wake-ups were on
            while not feed.over and not self.stopping:
                # first: the streams that made the feed join it meanwhile; then each time the match advances
                feed.poke.wait()
                feed.poke.clear()
                if not feed.wakes or self.stopping:
                    break
                try:
                    lines, over = self._public(feed.match_id, len(feed.lines))
                except UnknownMatch:
                    feed.closed = "expired"
                except StoreUnavailable:
                    feed.closed = "store-unavailable"
                except Exception:  # a bug: its streams end rather than hang
                    log.exception("spectator feed of %s", feed.match_id)
                    feed.closed = "error"
                else:
                    if lines:
                        feed.lines.extend(lines)
                        self._trim(feed)
                    feed.over = over
                if feed.closed is not None or lines or over:
                    for wake in list(feed.wakes):
                        wake.set()
                if feed.closed is not None:
                    break
        finally:
            if self._feeds.get(feed.match_id) is feed:
                del self._feeds[feed.match_id]
                keys = self._viewers.get(match)
                if keys is not None:
                    keys.discard(feed.match_id)
                    if not keys:
                        del self._viewers[match]
                if match not in self._viewers and match not in self._feeds:
                    self._notes.pop(match, None)
            if watched:
                self._watching.unwatch(match)
            if feed.closed is None and not feed.over:
                feed.closed = "shutdown" if self.stopping else "unwatched"


_ALL: weakref.WeakSet[Streams] = weakref.WeakSet()


def _is_match_id(text: str) -> bool:
    """32 hex digits: the id of some sealed match (which the store may or may not know)."""
    return len(text) == 32 and all(c in "0123456789abcdefABCDEF" for c in text)


def _match_of(key: str) -> str:
    """The match id of a feed's key (`<match>` or `<match>:<viewer>`)."""
    return key.partition(":")[0]


#: Other kinds of stream of this process to end with these (a hosted tournament's: `also_stop`).
_OTHERS: list[Callable[[], None]] = []


def also_stop(stop: Callable[[], None]) -> None:
    """`stop` ends another kind of stream of this process: `stop_all` calls it too."""
    if stop not in _OTHERS:
        _OTHERS.append(stop)


def stop_all() -> None:
    """End every stream of this process with its `shutdown` line (the worker's SIGTERM)."""
    for streams in list(_ALL):
        streams.stop()
    for stop in list(_OTHERS):
        stop()


class Stream:
    """One open spectator stream: a WSGI body iterable whose `close()` gives its place back.

    It is counted from `Streams.open` until `close()` (which the WSGI server calls whether the
    body was iterated or not: a generator never started would never run its `finally`).
    """

    def __init__(self, owner: Streams, match_id: str, address: str, sock: Any, first: list[bytes],
                 over: bool, intro: Callable[[list[bytes], bool], bytes] | None = None,
                 chunked: bool | None = None) -> None:
        self._owner = owner
        self._chunked = chunked
        self._intro = intro
        self._match_id, self._address, self._sock = match_id, address, sock
        self._first, self._over = first, over
        self._released = False
        self._closed: list[Callable[[], None]] = []
        self._body = self._lines()

    def __iter__(self) -> Iterator[bytes]:
        return self._body

    def on_close(self, call: Callable[[], None]) -> None:
        """`call` once when the stream closes (a seat stream's presence: `hosting.presence`)."""
        self._closed.append(call)

    def close(self) -> None:
        self._body.close()
        if not self._released:
            self._released = True
            self._owner._release(self._match_id, self._address)
            for call in self._closed:
                call()

    def _lines(self) -> Generator[bytes, None, None]:
        """The lines as they come: ends with the match, when the client leaves, after `idle` seconds
        without a line, after `longest`, or when the worker stops."""
        owner, lim, fmt = self._owner, self._owner.limits, self._owner.format
        start = last_line = time.monotonic()
        yield fmt.lines(self._first, 0) if self._intro is None else self._intro(self._first, self._over)
        if self._over:
            return
        if not owner.shared:
            yield from self._polled(start)
            return
        wake = Event()
        owner._waiting.add(wake)
        feed = owner._watch(self._match_id, self._first, self._over, wake)
        sent = feed.sent[wake] = len(self._first)
        noted = 0
        if len(feed.lines) > sent or feed.closed is not None or owner.stopping or feed.noted:
            wake.set()  # news (or the stop, or a note) before this stream joined its feed
        gone = _SocketWatch(self._sock, wake)
        quiet = owner.keepalives.add(self._sock, self._chunked, wake)
        try:
            while True:
                quiet.parked = True  # nothing else writes to the socket now: its keepalive may
                wake.wait(max(0.0, min(last_line + lim.idle, start + lim.longest) - time.monotonic()))
                quiet.parked = False
                wake.clear()
                if quiet.failed or gone.left():
                    return                      # nobody to write to
                if quiet.pending:  # the rest of a keepalive line the socket did not take at once
                    pending, quiet.pending = quiet.pending, b""
                    self._sock.sendall(pending)  # within the socket's timeout, as the server's own write
                if owner.stopping:
                    yield fmt.closed("shutdown")
                    return
                now = time.monotonic()
                if len(feed.lines) > sent:
                    news = feed.lines[sent:]
                    if sent < feed.trimmed:  # dropped before this stream wrote them: the store has them
                        try:
                            news = owner._public(self._match_id, sent)[0][:len(news)]
                        except (UnknownMatch, StoreUnavailable) as exc:
                            yield fmt.closed("expired" if isinstance(exc, UnknownMatch) else "store-unavailable")
                            return
                    yield fmt.lines(news, sent)
                    owner.keepalives.wrote(quiet)
                    sent = feed.sent[wake] = sent + len(news)
                    last_line = now
                if feed.noted != noted and feed.note:
                    noted = feed.noted
                    yield feed.note
                    owner.keepalives.wrote(quiet)
                closed = None if feed.closed is None else feed.closed if feed.closed != "unwatched" else "error"
                tail, ends = _tail(fmt, feed.over, closed, _closing_line(lim, now, start, last_line, fmt))
                if tail:
                    yield tail
                    owner.keepalives.wrote(quiet)
                if ends:
                    return
        finally:
            owner.keepalives.remove(quiet)
            gone.stop()
            feed.wakes.discard(wake)
            if not feed.wakes:
                feed.poke.set()  # its last stream left: the feed ends (and unwatches the match)
            feed.sent.pop(wake, None)
            owner._waiting.discard(wake)

    def _polled(self, start: float) -> Generator[bytes, None, None]:
        """`_lines` outside a gevent worker (the threaded development server): this stream reads the
        store itself every `SPECTATE_POLL` seconds; a gone client is found by a failed write."""
        owner, lim, fmt = self._owner, self._owner.limits, self._owner.format
        last_line = last_write = start
        sent = len(self._first)
        while True:
            time.sleep(owner._poll)
            if owner.stopping:
                yield fmt.closed("shutdown")
                return
            try:
                lines, over = owner._public(self._match_id, sent)
            except UnknownMatch:
                yield fmt.closed("expired")
                return
            except StoreUnavailable:
                yield fmt.closed("store-unavailable")
                return
            now = time.monotonic()
            if lines:
                yield fmt.lines(lines, sent)
                sent += len(lines)
                last_line = last_write = now
            tail, ends = _tail(fmt, over, None, _quiet_line(lim, now, start, last_line, last_write, fmt))
            if tail:
                yield tail
                last_write = now
            if ends:
                return


def body_framing(environ: Mapping[str, Any]) -> bool | None:
    """How gunicorn frames a streamed body (no Content-Length) on this request's connection: True in chunks
    (HTTP/1.1), False as it is (HTTP/1.0: the connection closes at its end), None when it writes no body
    (HEAD)."""
    if environ.get("REQUEST_METHOD") == "HEAD":
        return None
    return str(environ.get("SERVER_PROTOCOL", "HTTP/1.0")).upper() >= "HTTP/1.1"


@dataclass(eq=False, slots=True)
class Quiet:
    """A stream as its worker's keepalive writer (`Keepalives`) knows it."""

    sock: Any
    line: bytes                 # its keepalive line, framed as the server frames the body
    wake: Event                 # the stream's wake-up
    parked: bool = False        # the stream waits for news: nothing else writes to its socket meanwhile
    pending: bytes = b""        # what the socket did not take of a keepalive line: the stream writes it
    failed: bool = False        # the socket refused a keepalive line: the client is gone


class Keepalives:
    """The keepalive lines of one kind of stream of a worker, written by one greenlet to each stream that has
    written nothing for `every` seconds, straight to its socket and framed as the server frames the body
    (`body_framing`), while the stream waits for news (nothing else writes to the socket then).

    A stream woken to yield its own keepalive line through the WSGI body cost its worker ~40 us (its timer and
    wake-up, Flask's and werkzeug's iterators, gunicorn's chunk write, gevent's `sendall`); here a line is one
    non-blocking send, which takes these few bytes whole unless the client's window is full. What it did not
    take, the stream writes with the socket's `sendall`, which waits within the socket's timeout as the
    server's own write would (a reader that stopped is dropped so: `tables_routes`); a socket that refuses
    the write (the client gone) ends the stream. The streams are kept in the order their lines are due (each
    due `every` seconds after its last write): the writer looks at those due only."""

    #: Lines written before the writer lets the worker's other greenlets run.
    BATCH = 256

    def __init__(self, every: float, line: bytes, clock: Callable[[], float] = time.monotonic) -> None:
        self.every = every
        self._clock = clock
        self._framed = {True: b"%X\r\n%s\r\n" % (len(line), line), False: line}
        # In the order the lines are due. An OrderedDict, not a dict: a dict's first item is found by scanning
        # past the slots its deleted items left, up to thousands here (~4 us a line for 5,000 streams against
        # ~1 us: a tenth of what a keepalive line costs its worker); an OrderedDict's is its list's head.
        self._due: OrderedDict[Quiet, float] = OrderedDict()
        self._writer: Any = None
        self._stopping = False

    def add(self, sock: Any, chunked: bool | None, wake: Event, start: bool = True) -> Quiet:
        """A stream of `sock` (its body framed in chunks or not: `body_framing`) to keep alive from now on; a
        stream with no socket or no body (HEAD: `chunked` None) is given a `Quiet` that is never written.
        The writer starts with the first stream (`start`: a test calls `write_due` itself)."""
        quiet = Quiet(sock, self._framed[bool(chunked)], wake)
        if sock is not None and chunked is not None:
            self._due[quiet] = self._clock() + self.every
            if start and self._writer is None and not self._stopping:
                self._writer = gevent.spawn(self._run)
        return quiet

    def wrote(self, quiet: Quiet) -> None:
        """`quiet`'s stream wrote a line: its keepalive line is due `every` seconds from now."""
        if quiet in self._due:
            self._due[quiet] = self._clock() + self.every
            self._due.move_to_end(quiet)

    def remove(self, quiet: Quiet) -> None:
        self._due.pop(quiet, None)

    def stop(self) -> None:
        self._stopping = True

    def write_due(self) -> float:
        """Writes the lines due now (at most `BATCH`, each to a stream that waits: one that does not is writing
        a line of its own); the seconds until the next is due (0: more are due now)."""
        now, written, due_at = self._clock(), 0, self._due
        later = now + self.every
        while due_at:
            quiet, due = next(iter(due_at.items()))
            if due > now:
                return due - now
            if written == self.BATCH:
                return 0.0
            due_at[quiet] = later
            due_at.move_to_end(quiet)
            if quiet.parked:
                self._write(quiet)
                written += 1
        return self.every

    def _run(self) -> None:
        while not self._stopping:
            gevent.sleep(self.write_due())

    @staticmethod
    def _write(quiet: Quiet) -> None:
        raw = getattr(quiet.sock, "_sock", quiet.sock)  # gevent's socket would wait on EAGAIN
        try:
            sent = raw.send(quiet.line)
        except BlockingIOError:
            sent = 0
        except OSError:
            quiet.failed = True
            quiet.wake.set()
            return
        if sent < len(quiet.line):
            quiet.pending = quiet.line[sent:]
            quiet.wake.set()


class _SocketWatch:
    """Wakes a stream when its client's socket becomes readable; `left()` says whether the client has
    closed its side (end of input, or a reset). A client that sends anything while it watches
    (nothing is expected) is no longer watched: the keepalive writes find it gone."""

    def __init__(self, sock: Any, wake: Event) -> None:
        self._sock = sock
        self._wake = wake
        self._readable = False
        self._io: Any = None
        fileno = sock.fileno() if sock is not None else -1
        if fileno >= 0:
            self._io = gevent.get_hub().loop.io(fileno, 1)
            self._io.start(self._on_readable)

    def _on_readable(self) -> None:
        self._readable = True
        if self._io is not None:
            self._io.stop()  # once: `left()` decides whether to watch again
        self._wake.set()

    def left(self) -> bool:
        """Whether the client has gone (called after a wake-up)."""
        if not self._readable:
            return False
        self._readable = False
        try:
            raw = getattr(self._sock, "_sock", self._sock)  # gevent's socket would wait on EAGAIN
            peeked = raw.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:  # woken with nothing to read after all: watch again
            if self._io is not None:
                self._io.start(self._on_readable)
            return False
        except OSError:
            return True
        return bool(peeked == b"")  # data: a client talking on a stream; no longer watched

    def stop(self) -> None:
        if self._io is not None:
            self._io.stop()
            self._io.close()
            self._io = None
