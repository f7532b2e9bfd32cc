"""What the archive's tests share: a PostgreSQL server of their own, records of finished matches.

`PostgresServer` runs Debian's PostgreSQL (initdb + pg_ctl into a temporary
directory, a free loopback port, fsync off). As root (CI) it runs as the
`postgres` user, which initdb requires.
"""
from __future__ import annotations

import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

_counter = itertools.count()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}")) or ([shutil.which(name)] if shutil.which(name) else [])
    if not found:
        pytest.skip("PostgreSQL is not installed: run `bash scripts/ci-system-deps.sh` as root")
    return str(found[-1])


@dataclass
class PostgresServer:
    """One PostgreSQL server on loopback; `stop` and `start` for the fault tests."""

    root: Path
    port: int

    @property
    def data(self) -> Path:
        return self.root / "data"

    def _run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = list(argv)
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, capture_output=True, text=True, timeout=60, check=check)

    @classmethod
    def create(cls) -> PostgresServer:
        root = Path(tempfile.mkdtemp(prefix="domino-pg-"))
        if os.geteuid() == 0:
            shutil.chown(root, "postgres")
        server = cls(root, free_port())
        server._run(_bin("initdb"), "-D", str(server.data), "-A", "trust", "-U", "postgres", "-E", "UTF8",
                    "--no-sync", "--no-instructions")
        server.start()
        return server

    def start(self) -> None:
        options = f"-p {self.port} -h 127.0.0.1 -k {self.root} -c fsync=off -c full_page_writes=off"
        done = self._run(_bin("pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.root / "log"),
                         "-w", "-t", "30", "start", check=False)
        if done.returncode != 0:
            log = (self.root / "log").read_text()[-2000:] if (self.root / "log").exists() else ""
            raise RuntimeError(f"postgres did not start: {done.stdout}{done.stderr}{log}")

    def stop(self) -> None:
        self._run(_bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop", check=False)

    def url(self, name: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def new_database(self) -> str:
        """A fresh empty database's URL."""
        name = f"t{os.getpid()}_{next(_counter)}"
        self._run(_bin("psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-q",
                  "-c", f"CREATE DATABASE {name}")
        return self.url(name)

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'archive.sqlite3'}"


def families(variant: str) -> str:
    """A variant's family, as the engine lists it."""
    from engine_service.rules.registry import variants

    return {v["name"]: v["family"] for v in variants()}[variant]


def engine_record(game: Any, names: list[str] | None = None) -> dict[str, Any]:
    """What the engine's ExportRecord answers for a finished match (its full record, both forms)."""
    from engine_service import records

    record = records.export(game, "full", names)
    return {"record": records.to_json(record), "text": records.to_text(record)}


def played(variant: str, players: int, seed: int, options: dict[str, Any] | None = None,
           timeout_after: int | None = None) -> Any:
    """A whole match of random legal moves from `seed` (Kingdomino: a game), or one that a seat
    times out of after `timeout_after` moves."""
    import random

    from engine_service.rules import Kingdomino, Match

    rng = random.Random(seed)
    if variant == "kingdomino":
        game, _ = Kingdomino.new(players, seed=seed)
        moves = 0
        while not game.game_over:
            if timeout_after is not None and moves == timeout_after:
                game.timeout(game.to_move)
                break
            game.apply(rng.choice(game.legal_actions()))
            moves += 1
        return game
    match, _ = Match.new(variant, players, seed=seed, options=options or {})
    moves = 0
    while not match.match_over:
        if match.round is None or match.round.over:
            match.start_round()
            continue
        if timeout_after is not None and moves == timeout_after:
            match.timeout(match.to_move)
            break
        match.apply(rng.choice(match.legal_actions()))
        moves += 1
    return match
