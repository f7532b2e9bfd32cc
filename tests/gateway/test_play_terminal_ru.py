"""`domino play` in Russian: the terminal's language from its locale (LC_ALL, LC_MESSAGES, LANG), `--lang`
over it, the seeds' words for the game's terms (козёл, рыба, базар, стучит, записано, запомнено), seats
numbered from 1 as the page numbers them; through a pseudo-terminal against real services."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pexpect
import pytest

from clients import i18n
from clients.sdk import RestClient

from .conftest import REPO, Gateway

MOVE_RU = re.compile(r"Ваш ход \((?:1 — сыграть его|от 1 до \d+) или запись хода; \? — помощь, q — выход\): ")
MOVE_EN = re.compile(r"You, your move \((?:1 plays it|1 to \d+), or type a move")
#: The words of the English screen that must not be left on the Russian one.
ENGLISH = ("Your hand", "your move", "open ends", "tiles in hand", "round points", "Round points", "played",
           "knocked", "score ", "remember", "Seat ", "Traceback")


def spawn(url: str | None, *args: str, lang: str = "ru_RU.UTF-8", state: Path | None = None) -> pexpect.spawn:
    """`domino play` (with `--url url` unless None) in a terminal whose locale is `lang` (LANG; LC_ALL and
    LC_MESSAGES unset, so LANG decides), 120 columns wide; `state`: where it keeps the seats it takes."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "LC_ALL", "LC_MESSAGES", "LANGUAGE")}
    env["LANG"] = lang
    if state is not None:
        env["XDG_STATE_HOME"] = str(state)
    where = ["--url", url] if url else []
    child = pexpect.spawn(sys.executable, ["-m", "clients.cli", "play", *where, *args],
                          cwd=str(REPO), encoding="utf-8", timeout=60, dimensions=(50, 120), env=env)
    child.str_last_chars = 3000
    return child


@pytest.mark.service
def test_a_whole_kozel_round_against_bots_in_russian(gateway: Gateway) -> None:
    child = spawn(gateway.url, "--variant", "kozel", "--players", "4", "--bots", "expert,greedy,random")
    child.expect(MOVE_RU)
    screen = child.before
    assert "Козёл, раунд 1   ходит: Вы" in screen, screen[-2000:]
    assert re.search(r"открытые концы: .*   сумма \d+   базар \d+", screen), screen[-2000:]
    assert re.search(r"костей на руках: Место 2 \(эксперт\) \d+, Место 3 \(жадный\) \d+, "
                     r"Место 4 \(случайный\) \d+", screen), screen[-2000:]
    assert re.search(r"Ваши кости: (\d-\d ?){7}", screen), screen[-2000:]
    assert re.search(r"раунд\s+Вы\s+Место 2 \(эксперт\)", screen) and "записано" in screen and "запомнено" in screen
    child.sendline("99")
    child.expect("Хода 99 нет: выберите от 1 до")
    child.sendline("")
    child.expect("Введите номер хода или сам ход.")
    child.sendline("?")
    child.expect("draw — взять кость с базара, pass — стучу")
    child.sendline("6-6@Q")
    child.expect("Ход не принят: ход: \"6-6@Q\" — не ход \\(например: [^\r\n]*\\)\r?\n")
    child.sendline("1")
    for _ in range(100):
        index = child.expect([MOVE_RU, "Нажмите Enter, чтобы раздать следующий раунд"])
        screen += child.before
        if index:
            break
        child.sendline("1")
    else:
        raise AssertionError("the round did not end")
    child.expect(r"\(q — выход\): ")
    screen += child.before
    flat = re.sub(r"\s+", " ", screen)
    assert re.search(r"Место [234] \([а-я]+\): (ход \d-\d|стучит)", flat), screen[-3000:]
    assert re.search(r"Вы: (ход \d-\d|стучит)", flat), screen[-3000:]
    assert re.search(r"Раунд 1 окончен: (выход|рыба)\. Очки за раунд: Вы \d+, Место 2 \(эксперт\) \d+, "
                     r"Место 3 \(жадный\) \d+, Место 4 \(случайный\) \d+", flat), screen[-3000:]
    assert re.search(r"раунд 1 окончен: (игрок вышел|рыба); очки за раунд: Вы \d+", flat), screen[-3000:]
    assert "Вы, на руках:" in flat and "Место 2 (эксперт), на руках:" in flat
    assert "Место 0" not in flat and "Место 1 " not in flat     # the person is seat 1, the bots 2 to 4
    assert not [word for word in ENGLISH if word in screen], [word for word in ENGLISH if word in screen]
    child.sendline("q")
    child.expect("До свидания.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


@pytest.mark.service
def test_a_whole_kingdomino_game_against_a_bot_in_russian(gateway: Gateway) -> None:
    child = spawn(gateway.url, "--variant", "kingdomino", "--players", "2", "--bots", "greedy")
    screen = ""
    for _ in range(100):
        index = child.expect([MOVE_RU, r"Игра окончена\. Очки: .*\n"])
        screen += child.before + child.after
        if index:
            break
        child.sendline("1")
    else:
        raise AssertionError("the game did not end")
    child.expect(pexpect.EOF)
    screen += child.before
    flat = re.sub(r"\s+", " ", screen)
    assert "Лоскутное королевство ходит: Вы" in flat and "положить: " in flat and "следующий ряд: " in flat
    assert "местность: W пшеница, F лес" in flat and re.search(r"Вы: очки \d+, короны \d+", flat), screen[-3000:]
    assert re.search(r"Вы: выбрал плитку \d+", flat) and re.search(r"Место 2 \(жадный\): положил плитку", flat)
    assert re.search(r"Игра окончена\. Очки: Вы \d+, Место 2 \(жадный\) \d+\. Победитель: .+ \(решило: ", flat)
    assert not [word for word in ENGLISH if word in screen], [word for word in ENGLISH if word in screen]
    child.close()
    assert child.exitstatus == 0


@pytest.mark.service
def test_a_seat_of_a_table_joined_and_resumed_in_russian_to_the_matchs_end(gateway: Gateway, tmp_path: Path) -> None:
    """`--join` and `--resume` with `--lang ru` in a terminal whose locale is not Russian: the seat taken,
    its credential kept, the terminal closed and come back to, a short match (to 1 point) played to the goat."""
    api = RestClient(gateway.url)
    opened = api.create_table("kozel", 4, seats=["open", "greedy", "expert", "random"], name="Стол",
                              options={"target": 1})
    child = spawn(None, "--join", opened.invites[0].link, "--name", "Таня", "--lang", "ru", lang="C.UTF-8",
                  state=tmp_path)
    child.expect('Вы заняли место 1 за столом "Стол": Козёл, 4 игрока.')
    child.expect(r"Ключ вашего места: \S+ \(сохранён\s+в\s")
    child.expect(r"За столом: Вы, Место 2 \(бот, жадный\), Место 3 \(бот, эксперт\), Место 4 \(бот, случайный\)\.")
    child.expect(r"Рейтинг: Вы рейтинг: новый\.")
    child.expect(MOVE_RU)
    child.close(force=True)                    # the terminal window closed: the seat is kept
    child = spawn(None, "--resume", "--lang", "ru", lang="C.UTF-8", state=tmp_path)
    child.expect('Вы снова за столом "Стол", место 1: Козёл, 4 игрока.')
    screen = ""
    for _ in range(200):
        index = child.expect([MOVE_RU, "Нажмите Enter, чтобы раздать следующий раунд",
                              r"Партия окончена\. Итоговый счёт: .*\.", pexpect.EOF])
        screen += child.before + (child.after if isinstance(child.after, str) else "")
        if index >= 2:
            break
        child.sendline("1" if index == 0 else "")
    assert index == 2, screen[-3000:]
    child.expect(pexpect.EOF)
    screen += child.before
    child.close()
    assert child.exitstatus == 0, screen[-3000:]
    flat = re.sub(r"\s+", " ", screen)
    assert re.search(r"Козёл: (Вы|Место [234] \(бот, [а-я]+\))(, Место [234] \(бот, [а-я]+\))*\.", flat), screen[-3000:]
    assert re.search(r"Место [234] \(бот, [а-я]+\): (ход \d-\d|стучит)", flat), screen[-3000:]
    assert "Без рейтинга: меньше двух сторон-игроков." in flat or "Рейтинг после партии:" in flat, screen[-3000:]
    assert not [word for word in ENGLISH if word in screen], [word for word in ENGLISH if word in screen]


@pytest.mark.service
def test_lang_en_overrides_a_russian_terminal(gateway: Gateway) -> None:
    child = spawn(gateway.url, "--variant", "kozel", "--players", "4", "--bots", "expert", "--lang", "en")
    child.expect(MOVE_EN)
    assert "Your hand:" in child.before and "kozel, round 1" in child.before and "Seat 1 (expert)" in child.before
    assert not re.search("[а-яё]", child.before, re.IGNORECASE), child.before[-2000:]
    child.sendline("q")
    child.expect("Bye.")
    child.expect(pexpect.EOF)


def test_lang_ru_gives_the_help_in_russian_whatever_the_locale() -> None:
    child = spawn("http://127.0.0.1:9", "--lang", "ru", "--help", lang="C.UTF-8")
    child.expect(pexpect.EOF)
    assert "язык экрана: ru или en" in child.before and "уровни остальных мест" in child.before, child.before


@pytest.mark.parametrize(("env", "language"), [
    ({"LANG": "ru_RU.UTF-8"}, "ru"),
    ({"LANG": "ru"}, "ru"),
    ({"LANG": "en_US.UTF-8"}, "en"),
    ({}, "en"),
    ({"LC_ALL": "C.UTF-8", "LANG": "ru_RU.UTF-8"}, "en"),          # LC_ALL first, as the C library reads it
    ({"LC_MESSAGES": "ru_RU.UTF-8", "LANG": "en_GB.UTF-8"}, "ru"),
    ({"LC_ALL": "", "LC_MESSAGES": "", "LANG": "ru_UA.UTF-8"}, "ru"),  # an empty variable is not set
])
def test_the_terminals_language_from_its_locale(env: dict[str, str], language: str) -> None:
    assert i18n.language_of_environment(env) == language


def test_russian_says_every_text_of_the_catalogue() -> None:
    """No English text left in a Russian screen by a key Russian lacks (`t` would fall back to English)."""
    assert set(i18n.RU) == set(i18n.EN)


def test_russian_numbers_seats_from_1_english_keeps_0() -> None:
    try:
        i18n.use("ru")
        assert (i18n.t("seat", i18n.seat_number(0)), i18n.t("seat.level", i18n.seat_number(2), "greedy")) == (
            "Место 1", "Место 3 (жадный)")
        assert i18n.t("ev.scored", "Вы", 21) == "Вы: +21 очко" and i18n.t("players", 3) == "3 игрока"
        i18n.use("en")
        assert i18n.t("seat", i18n.seat_number(0)) == "Seat 0"
    finally:
        i18n.use("en")
