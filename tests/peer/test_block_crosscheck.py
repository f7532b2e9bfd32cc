"""RULES.md BL: our block game agrees move for move with OpenSpiel's python_block_dominoes.

Runs a few hundred seeded two-player games through clients/crosscheck.py and
asserts zero disagreements; also shows that the comparison notices a
difference, so a silent harness cannot pass this file.
"""
from __future__ import annotations

import io

import pytest

pyspiel = pytest.importorskip(
    "pyspiel", reason="OpenSpiel (PyPI open_spiel) is not installed: the peer cross-check needs it")
pytest.importorskip("open_spiel.python.games.block_dominoes",
                    reason="OpenSpiel's python_block_dominoes is not importable")

from clients import crosscheck  # noqa: E402 (after the importorskip guards)

GAMES = 400


def test_block_agrees_with_openspiel_move_by_move() -> None:
    out = io.StringIO()
    games, bad, _results = crosscheck.run(GAMES, seed=20261130, out=out, verbose=True)
    assert games == GAMES
    assert bad == 0, out.getvalue()
    assert out.getvalue().strip().endswith(f"{GAMES} games, 0 disagreements")
    assert "moves compared" in out.getvalue()


def test_games_exercise_passes_and_blocks() -> None:
    """The sample is not trivial: seats pass (OpenSpiel skips them) in some games."""
    peer = crosscheck.OpenSpielBlock()
    results = [crosscheck.play_one(peer, i, crosscheck.game_seed(3, i)) for i in range(100)]
    assert all(r.agreed for r in results), [r.problems for r in results if not r.agreed]
    assert sum(r.passes for r in results) > 0
    assert all(r.moves >= 1 for r in results)
    assert any(r.moves >= 7 for r in results)


def test_main_exit_status_and_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert crosscheck.main(["--games", "25", "--seed", "5"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "25 games, 0 disagreements"


def test_a_wrong_score_is_reported(monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Misreport our scoring (the winner takes the difference, not the other's pips): the
    cross-check must see it and exit non-zero. The scores are bent where the cross-check
    reads them, so this also holds when the rules are the mypyc-compiled build."""
    real = crosscheck.our_scores

    def wrong(match):  # type: ignore[no-untyped-def]
        scores = real(match)
        if max(scores) > 0:
            w = scores.index(max(scores))
            scores[w] -= min(match.ledger.history[-1]["round_points"])
            scores[w] += 1
        return scores

    monkeypatch.setattr(crosscheck, "our_scores", wrong)
    assert crosscheck.main(["--games", "30", "--seed", "5"]) == 1
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("30 games, ") and not last.endswith(" 0 disagreements")


def test_a_wrong_legal_set_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """Drop one of our legal moves: the per-decision set comparison must catch it."""
    real = crosscheck.our_pairs

    def fewer(match):  # type: ignore[no-untyped-def]
        pairs = real(match)
        if len(pairs) > 1:
            pairs.discard(max(pairs, key=lambda p: (p[0], p[1] or 0)))
        return pairs

    monkeypatch.setattr(crosscheck, "our_pairs", fewer)
    _, bad, results = crosscheck.run(20, seed=1, out=io.StringIO())
    assert bad > 0
    assert any("legal moves differ" in p for r in results for p in r.problems)


def test_missing_openspiel_is_a_clear_error(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pyspiel", None)   # makes `import pyspiel` raise ImportError
    assert crosscheck.main(["--games", "3"]) == 2
    assert "OpenSpiel is not installed" in capsys.readouterr().err


def test_command_line_rejects_zero_games() -> None:
    with pytest.raises(SystemExit):
        crosscheck.main(["--games", "0"])


def test_the_deck_order_is_read_from_the_game(monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenSpiel's chance outcomes index its own `_DECK`, whose order its main branch has changed:
    the cross-check reads that order from the game, so a reordered deck still agrees move by move."""
    from open_spiel.python.games import block_dominoes as bd

    monkeypatch.setattr(bd, "_DECK", list(reversed(bd._DECK)))
    out = io.StringIO()
    games, bad, _results = crosscheck.run(30, seed=7, out=out, verbose=True)
    assert (games, bad) == (30, 0), out.getvalue()
