"""Seats kept between runs: each seat's table, number, credential and gateway addresses, in a file of the user's
state directory that only the user may read (0600), so that a person whose terminal closed, or whose gateways
all went away for a while, comes back to the same seat (`domino play --resume`, docs/play.md).

The file is `$XDG_STATE_HOME/domino/seats.json` (`~/.local/state/domino/seats.json` when that is not set),
written whole to a private temporary file and renamed over the old one, so it is never seen half written and
never readable by others even for a moment. One seat is kept per table: joining it again replaces it.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["SavedSeat", "SeatBook", "state_dir"]


def state_dir() -> Path:
    """The user's state directory for this program (XDG Base Directory: `$XDG_STATE_HOME/domino`)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "domino"


@dataclass(frozen=True, slots=True)
class SavedSeat:
    """A seat taken at a table: what comes back to it (the credential is left out of `repr`)."""

    table_id: str
    seat: int
    credential: str = field(repr=False)
    gateways: list[str]
    name: str = ""
    variant: str = ""
    saved: float = 0.0

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SavedSeat:
        return cls(str(data["table_id"]), int(data["seat"]), str(data["credential"]),
                   [str(g) for g in data.get("gateways", [])], str(data.get("name", "")),
                   str(data.get("variant", "")), float(data.get("saved", 0.0)))


class SeatBook:
    """The file of saved seats (`path`: the state directory's `seats.json` unless given)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or state_dir() / "seats.json"

    def all(self) -> list[SavedSeat]:
        """Every saved seat, the latest saved last (a missing or unreadable file: none)."""
        try:
            data = json.loads(self.path.read_text())
            seats = [SavedSeat.from_json(s) for s in data.get("seats", [])]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return []
        return sorted(seats, key=lambda s: s.saved)

    def find(self, table_id: str | None = None) -> SavedSeat | None:
        """The seat saved for `table_id` (None: the latest saved seat of any table)."""
        seats = [s for s in self.all() if table_id is None or s.table_id == table_id]
        return seats[-1] if seats else None

    def save(self, seat: SavedSeat) -> SavedSeat:
        """Keep `seat` (replacing one saved for the same table); the seat as saved, with its time."""
        kept = SavedSeat(seat.table_id, seat.seat, seat.credential, list(seat.gateways), seat.name, seat.variant,
                         time.time())
        self._write([s for s in self.all() if s.table_id != seat.table_id] + [kept])
        return kept

    def forget(self, table_id: str) -> None:
        """Drop the seat saved for `table_id` (given up: its credential no longer works)."""
        seats = self.all()
        if any(s.table_id == table_id for s in seats):
            self._write([s for s in seats if s.table_id != table_id])

    def _write(self, seats: list[SavedSeat]) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.fchmod(fd, 0o600)      # whatever the umask, and an old file left by a crash
            with os.fdopen(fd, "w") as out:
                json.dump({"seats": [asdict(s) for s in seats]}, out, indent=1)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        os.replace(temporary, self.path)
