"""Turn clocks (`api_gateway.clocks`, issue 25): settings, their bounds, and a clock through a match.

Pure: every call is given the time, so each case is exact.
"""
from __future__ import annotations

import pytest

from api_gateway.clocks import Clocks, ClockSetting, ClockSettingError


def test_a_move_limit_starts_afresh_at_every_turn() -> None:
    setting = ClockSetting.from_json({"move": 30})
    clocks = Clocks.start(setting, 4, 0, now=1000.0)
    assert clocks.deadline == 1030.0 and clocks.remaining(1010.0) == [20.0, 30.0, 30.0, 30.0]
    clocks = clocks.moved(1, now=1012.5)  # seat 0 moved after 12.5 s: seat 1's 30 s run
    assert clocks.running == 1 and clocks.deadline == 1042.5
    assert clocks.remaining(1012.5)[1] == 30.0
    assert not clocks.expired(1042.4) and clocks.expired(1042.5)


def test_a_bank_is_charged_and_given_its_increment() -> None:
    setting = ClockSetting.from_json({"bank": 60, "increment": 2})
    clocks = Clocks.start(setting, 2, 0, now=0.0)
    clocks = clocks.moved(1, now=10.0)  # seat 0: 60 - 10 + 2
    assert clocks.left == (52.0, 60.0) and clocks.deadline == 70.0
    clocks = clocks.moved(0, now=40.0)  # seat 1: 60 - 30 + 2
    assert clocks.left == (52.0, 32.0) and clocks.deadline == 92.0
    assert clocks.remaining(100.0) == [0.0, 32.0] and clocks.expired(92.0)


def test_clocks_stop_between_rounds_and_at_the_end() -> None:
    clocks = Clocks.start(ClockSetting.from_json({"bank": 60}), 2, 0, now=0.0).moved(None, now=5.0)
    assert clocks.running is None and clocks.deadline is None and not clocks.expired(10_000.0)
    assert clocks.remaining(10_000.0) == [55.0, 60.0]
    assert clocks.moved(1, now=500.0).deadline == 560.0  # the next round: seat 1's clock from the deal


def test_a_person_back_from_autopilot_gets_time_again() -> None:
    setting = ClockSetting.from_json({"bank": 30, "on_timeout": "autopilot", "autopilot_level": "expert"})
    clocks = Clocks.start(setting, 2, 0, now=0.0).moved(1, now=30.0).on_autopilot(0)  # seat 0 ran out
    assert clocks.left[0] == 0.0 and clocks.autopilot == (0,)
    back = clocks.given_back(0, now=35.0)
    assert back.autopilot == () and Clocks.load(clocks.dump()) == clocks
    assert back.left[0] == 10.0 and back.remaining(35.0)[1] == 25.0 and back.deadline == 60.0
    assert setting.to_json() == {"bank": 30.0, "increment": 0.0, "on_timeout": "autopilot",
                                 "autopilot_level": "expert"}


def test_what_every_view_shows_and_the_stored_form() -> None:
    clocks = Clocks.start(ClockSetting.from_json({"move": 20}), 3, 2, now=100.0)
    assert clocks.to_json(105.04) == {"remaining": [20.0, 20.0, 15.0], "running": 2, "deadline": 120.0,
                                      "autopilot": [], "setting": {"move": 20.0, "on_timeout": "rule"}}
    assert Clocks.load(clocks.dump()) == clocks


@pytest.mark.parametrize(("value", "field", "says"), [
    ("fast", "clock", "an object"),
    ({}, "clock", "either move"),
    ({"move": 30, "bank": 300}, "clock", "either move"),
    ({"move": 2}, "clock.move", "seconds from 5 to 1209600, not 2"),
    ({"move": 14 * 86400 + 1}, "clock.move", "seconds from 5 to 1209600"),
    ({"move": True}, "clock.move", "not True"),
    ({"bank": 10}, "clock.bank", "seconds from 30 to 2592000"),
    ({"bank": 300, "increment": -1}, "clock.increment", "seconds from 0 to 86400"),
    ({"bank": 300, "increment": 86401}, "clock.increment", "seconds from 0 to 86400"),
    ({"move": 30, "increment": 5}, "clock.increment", "only with a bank"),
    ({"move": 30, "on_timeout": "forfeit"}, "clock.on_timeout", "one of rule, autopilot, not 'forfeit'"),
    ({"move": 30, "autopilot_level": "genius"}, "clock.autopilot_level", "not 'genius'"),
    ({"move": 30, "colour": 1}, "clock.colour", "unknown member"),
])
def test_a_setting_out_of_range_names_its_member(value: object, field: str, says: str) -> None:
    with pytest.raises(ClockSettingError) as info:
        ClockSetting.from_json(value)
    assert info.value.field == field and says in str(info.value), str(info.value)
